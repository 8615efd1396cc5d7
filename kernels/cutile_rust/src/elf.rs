// SPDX-License-Identifier: Apache-2.0
//! Minimal reader for CUDA cubins (ELF64, little endian): the target SM, the kernel
//! symbols, and each kernel's parameter table from its `.nv.info.<kernel>` section
//! (`EIATTR_KPARAM_INFO` or `EIATTR_KPARAM_INFO_V2`, `EIATTR_CBANK_PARAM_SIZE`). The exporter checks every manifest
//! it writes against this, the same check the harness repeats before a launch.

use anyhow::{bail, ensure, Context, Result};

/// `EM_CUDA`.
pub const EM_CUDA: u16 = 190;
const SHT_SYMTAB: u32 = 2;
const STT_FUNC: u8 = 2;

/// `.nv.info` record formats.
const EIFMT_NVAL: u8 = 0x01;
const EIFMT_BVAL: u8 = 0x02;
const EIFMT_HVAL: u8 = 0x03;
const EIFMT_SVAL: u8 = 0x04;
/// `.nv.info` attributes used here.
pub const EIATTR_KPARAM_INFO: u8 = 0x17;
/// tileiras 13.4 writes this variant for some kernels (cuobjdump names it
/// `EIATTR_KPARAM_INFO_V2`): same index/ordinal/offset words, but the last word keeps the
/// size in bits 0..16 and the space in bits 24..28 instead of size << 18.
pub const EIATTR_KPARAM_INFO_V2: u8 = 0x45;
pub const EIATTR_CBANK_PARAM_SIZE: u8 = 0x19;
/// The cluster shape a kernel is compiled for (three u32; Tile IR kernels with num_ctas > 1).
pub const EIATTR_CTA_PER_CLUSTER: u8 = 0x3d;
/// Value-less: the launch grid counts clusters, not CTAs (`.blocksareclusters`).
pub const EIATTR_BLOCKS_ARE_CLUSTERS: u8 = 0x5b;

/// One `EIATTR_KPARAM_INFO` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KParam {
    pub ordinal: u16,
    pub offset: u16,
    pub size: u32,
}

/// What the cubin says about one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    /// Sorted by ordinal.
    pub params: Vec<KParam>,
    /// `EIATTR_CBANK_PARAM_SIZE`, when present.
    pub param_bytes: Option<u32>,
    /// `EIATTR_CTA_PER_CLUSTER`, when present.
    pub cluster: Option<[u32; 3]>,
    /// `EIATTR_BLOCKS_ARE_CLUSTERS` is present.
    pub blocks_are_clusters: bool,
}

#[derive(Debug, Clone)]
pub struct Cubin {
    pub e_flags: u32,
    /// ELF header byte 8 (`EI_ABIVERSION`); it decides where `e_flags` keeps the SM.
    pub abi_version: u8,
    pub kernels: Vec<KernelInfo>,
}

struct Section {
    name: String,
    kind: u32,
    offset: usize,
    size: usize,
    link: u32,
}

fn u16_at(b: &[u8], o: usize) -> Result<u16> {
    let s = b.get(o..o + 2).context("truncated ELF")?;
    Ok(u16::from_le_bytes([s[0], s[1]]))
}
fn u32_at(b: &[u8], o: usize) -> Result<u32> {
    let s = b.get(o..o + 4).context("truncated ELF")?;
    Ok(u32::from_le_bytes(s.try_into().unwrap()))
}
fn u64_at(b: &[u8], o: usize) -> Result<u64> {
    let s = b.get(o..o + 8).context("truncated ELF")?;
    Ok(u64::from_le_bytes(s.try_into().unwrap()))
}
fn cstr_at(b: &[u8], o: usize) -> Result<String> {
    let tail = b.get(o..).context("string offset out of range")?;
    let end = tail.iter().position(|&c| c == 0).context("unterminated string")?;
    Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
}

impl Cubin {
    pub fn parse(bytes: &[u8]) -> Result<Cubin> {
        ensure!(bytes.len() >= 64 && &bytes[..4] == b"\x7fELF", "not an ELF file");
        ensure!(bytes[4] == 2, "not ELF64");
        ensure!(bytes[5] == 1, "not little endian");
        let machine = u16_at(bytes, 0x12)?;
        ensure!(machine == EM_CUDA, "e_machine is {machine}, not EM_CUDA ({EM_CUDA})");
        let e_flags = u32_at(bytes, 0x30)?;
        let shoff = u64_at(bytes, 0x28)? as usize;
        let shentsize = u16_at(bytes, 0x3a)? as usize;
        let shnum = u16_at(bytes, 0x3c)? as usize;
        let shstrndx = u16_at(bytes, 0x3e)? as usize;
        ensure!(shentsize == 64, "unexpected section header size {shentsize}");

        let mut raw = Vec::with_capacity(shnum);
        for i in 0..shnum {
            let h = shoff + i * shentsize;
            raw.push((
                u32_at(bytes, h)?,
                u32_at(bytes, h + 4)?,
                u64_at(bytes, h + 24)? as usize,
                u64_at(bytes, h + 32)? as usize,
                u32_at(bytes, h + 40)?,
            ));
        }
        let (_, _, stroff, _, _) = *raw.get(shstrndx).context("bad e_shstrndx")?;
        let sections = raw
            .iter()
            .map(|&(name, kind, offset, size, link)| {
                Ok(Section { name: cstr_at(bytes, stroff + name as usize)?, kind, offset, size, link })
            })
            .collect::<Result<Vec<_>>>()?;

        // Kernel symbols: STT_FUNC symbols that own a `.text.<name>` section.
        let mut names = Vec::new();
        for sec in sections.iter().filter(|s| s.kind == SHT_SYMTAB) {
            let strtab = sections.get(sec.link as usize).context("bad symtab link")?;
            let data = bytes.get(sec.offset..sec.offset + sec.size).context("truncated symtab")?;
            for sym in data.chunks_exact(24) {
                let name_off = u32::from_le_bytes(sym[0..4].try_into().unwrap()) as usize;
                let info = sym[4];
                if info & 0xf != STT_FUNC {
                    continue;
                }
                let name = cstr_at(bytes, strtab.offset + name_off)?;
                if sections.iter().any(|s| s.name == format!(".text.{name}")) {
                    names.push(name);
                }
            }
        }
        names.sort();
        names.dedup();

        let mut kernels = Vec::new();
        for name in names {
            let mut info =
                KernelInfo { name: name.clone(), params: Vec::new(), param_bytes: None, cluster: None, blocks_are_clusters: false };
            if let Some(sec) = sections.iter().find(|s| s.name == format!(".nv.info.{name}")) {
                let data = bytes.get(sec.offset..sec.offset + sec.size).context("truncated .nv.info")?;
                parse_nv_info(data, &mut info)?;
            }
            info.params.sort_by_key(|p| p.ordinal);
            kernels.push(info);
        }
        Ok(Cubin { e_flags, abi_version: bytes[8], kernels })
    }

    /// The SM number from `e_flags` (90 for sm_90). CUDA ELF ABI version 8 and later
    /// keep it in bits 8..16, older ones in bits 0..8.
    pub fn sm(&self) -> u32 {
        if self.abi_version >= 8 {
            (self.e_flags >> 8) & 0xff
        } else {
            self.e_flags & 0xff
        }
    }

    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

fn parse_nv_info(data: &[u8], info: &mut KernelInfo) -> Result<()> {
    let mut i = 0;
    while i + 2 <= data.len() {
        let (fmt, attr) = (data[i], data[i + 1]);
        i += 2;
        match fmt {
            // Records other than SVAL are four bytes: format, attribute, 16-bit value
            // (unused by NVAL, a byte by BVAL).
            EIFMT_NVAL | EIFMT_BVAL => {
                if fmt == EIFMT_NVAL && attr == EIATTR_BLOCKS_ARE_CLUSTERS {
                    info.blocks_are_clusters = true;
                }
                i += 2
            }
            EIFMT_HVAL => {
                let v = u16_at(data, i)?;
                if attr == EIATTR_CBANK_PARAM_SIZE {
                    info.param_bytes = Some(v as u32);
                }
                i += 2;
            }
            EIFMT_SVAL => {
                let len = u16_at(data, i)? as usize;
                i += 2;
                let payload = data.get(i..i + len).context("truncated .nv.info record")?;
                if attr == EIATTR_KPARAM_INFO || attr == EIATTR_KPARAM_INFO_V2 {
                    ensure!(len >= 12, "short KPARAM_INFO record");
                    let flags = u32::from_le_bytes(payload[8..12].try_into().unwrap());
                    info.params.push(KParam {
                        ordinal: u16::from_le_bytes([payload[4], payload[5]]),
                        offset: u16::from_le_bytes([payload[6], payload[7]]),
                        size: if attr == EIATTR_KPARAM_INFO { (flags >> 18) & 0x3fff } else { flags & 0xffff },
                    });
                }
                if attr == EIATTR_CTA_PER_CLUSTER {
                    ensure!(len == 12, "CTA_PER_CLUSTER record of {len} bytes, expected 12");
                    let dim = |k: usize| u32::from_le_bytes(payload[4 * k..4 * k + 4].try_into().unwrap());
                    info.cluster = Some([dim(0), dim(1), dim(2)]);
                }
                i += len;
            }
            other => bail!("unknown .nv.info record format {other:#x}"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nv_info_records() {
        // Bytes as tileiras 13.4 writes them: KPARAM_INFO (ordinal 1, offset 8, size 4),
        // CBANK_PARAM_SIZE 12, an NVAL and a BVAL record to skip, KPARAM_INFO (ordinal 0,
        // offset 0, pointer of size 8).
        let mut d = vec![];
        d.extend([EIFMT_SVAL, EIATTR_KPARAM_INFO, 12, 0, 0, 0, 0, 0, 1, 0, 8, 0]);
        d.extend(0x0011_f000u32.to_le_bytes());
        d.extend([EIFMT_HVAL, EIATTR_CBANK_PARAM_SIZE, 12, 0]);
        d.extend([EIFMT_NVAL, 0x54, 0, 0, EIFMT_BVAL, 0x4c, 2, 0]);
        d.extend([EIFMT_SVAL, EIATTR_KPARAM_INFO, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        d.extend(0x0021_f400u32.to_le_bytes());
        let mut k = KernelInfo { name: "k".into(), params: vec![], param_bytes: None, cluster: None, blocks_are_clusters: false };
        parse_nv_info(&d, &mut k).unwrap();
        k.params.sort_by_key(|p| p.ordinal);
        assert_eq!(
            k.params,
            vec![KParam { ordinal: 0, offset: 0, size: 8 }, KParam { ordinal: 1, offset: 8, size: 4 }]
        );
        assert_eq!(k.param_bytes, Some(12));
    }

    #[test]
    fn nv_info_v2_records() {
        // EIATTR_KPARAM_INFO_V2: a pointer (space 4, size 8) at 0x28 as ordinal 8, and an
        // i32 at 0x50 as ordinal 17.
        let mut d = vec![EIFMT_SVAL, EIATTR_KPARAM_INFO_V2, 12, 0, 0, 0, 0, 0, 8, 0, 0x28, 0];
        d.extend(0x0400_0008u32.to_le_bytes());
        d.extend([EIFMT_SVAL, EIATTR_KPARAM_INFO_V2, 12, 0, 0, 0, 0, 0, 17, 0, 0x50, 0]);
        d.extend(4u32.to_le_bytes());
        let mut k = KernelInfo { name: "k".into(), params: vec![], param_bytes: None, cluster: None, blocks_are_clusters: false };
        parse_nv_info(&d, &mut k).unwrap();
        assert_eq!(
            k.params,
            vec![KParam { ordinal: 8, offset: 0x28, size: 8 }, KParam { ordinal: 17, offset: 0x50, size: 4 }]
        );
    }

    #[test]
    fn cluster_records() {
        // What tileiras 13.4 writes for num_cta_in_cga = 2: BLOCKS_ARE_CLUSTERS (NVAL) and
        // CTA_PER_CLUSTER 2 x 1 x 1 (SVAL of three u32).
        let mut d = vec![EIFMT_NVAL, EIATTR_BLOCKS_ARE_CLUSTERS, 0, 0, EIFMT_SVAL, EIATTR_CTA_PER_CLUSTER, 12, 0];
        for v in [2u32, 1, 1] {
            d.extend(v.to_le_bytes());
        }
        let mut k = KernelInfo { name: "k".into(), params: vec![], param_bytes: None, cluster: None, blocks_are_clusters: false };
        parse_nv_info(&d, &mut k).unwrap();
        assert_eq!((k.cluster, k.blocks_are_clusters), (Some([2, 1, 1]), true));
        let bad = [EIFMT_SVAL, EIATTR_CTA_PER_CLUSTER, 8, 0, 2, 0, 0, 0, 1, 0, 0, 0];
        assert!(parse_nv_info(&bad, &mut k).is_err());
    }

    #[test]
    fn rejects_non_elf() {
        assert!(Cubin::parse(b"not an elf file at all, just some bytes, long enough to pass the length check").is_err());
    }
}
