// SPDX-License-Identifier: Apache-2.0
// A small, bounds-checked ELF64 reader for CUDA cubins. Every read goes through `reader`, so a
// truncated or corrupt file is reported with the field that ran past the end, never a crash.
#include "portbench/bundle/cubin.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <string_view>

#include "portbench/bundle/error.hpp"

namespace portbench::bundle {
namespace {

constexpr std::uint16_t k_em_cuda = 190;
constexpr std::uint32_t k_sht_symtab = 2;
constexpr std::uint32_t k_sht_nobits = 8;
constexpr std::uint8_t k_stt_func = 2;
constexpr std::uint8_t k_sto_cuda_entry = 0x10;

// .nv.info record formats and the attributes portbench reads.
constexpr std::uint8_t k_eifmt_sval = 0x04;
constexpr std::uint8_t k_eiattr_param_cbank_size = 0x19;
constexpr std::uint8_t k_eiattr_kparam_info = 0x17;
constexpr std::uint8_t k_eiattr_kparam_info_v2 = 0x45;   // newer ptxas: size in its own field
constexpr std::uint8_t k_eiattr_language = 0x66;
constexpr std::uint32_t k_language_tile_ir = 7;
constexpr std::uint8_t k_eiattr_regcount = 0x2f;
constexpr std::uint8_t k_eiattr_frame_size = 0x11;
constexpr std::uint8_t k_eiattr_min_stack_size = 0x12;
constexpr std::uint8_t k_eiattr_maxreg_count = 0x1b;
constexpr std::uint8_t k_eiattr_num_barriers = 0x4c;
constexpr std::uint8_t k_eiattr_num_mbarriers = 0x38;
constexpr std::uint8_t k_eiattr_reqntid = 0x10;
constexpr std::uint8_t k_eiattr_max_threads = 0x05;
// Cluster shape fixed at compile time (3 x u32), and the value-less flag that the launch grid
// counts clusters, not CTAs (tileiras sets both for num_ctas > 1: `.reqnctapercluster` and
// `.blocksareclusters` in its PTX).
constexpr std::uint8_t k_eiattr_cta_per_cluster = 0x3d;
constexpr std::uint8_t k_eiattr_blocks_are_clusters = 0x5b;
constexpr std::uint8_t k_eicompat_accelerator_target = 0x09;

class reader {
 public:
  reader(std::span<const std::byte> data, const std::string& origin) : m_data(data), m_origin(origin) {}

  template <typename T>
  [[nodiscard]] T get(std::uint64_t offset, const char* field) const {
    if (offset > m_data.size() || sizeof(T) > m_data.size() - offset) {
      throw bundle_error(m_origin, std::string("truncated cubin: ") + field + " at byte " +
                                       std::to_string(offset) + " lies past the end (" +
                                       std::to_string(m_data.size()) + " bytes)");
    }
    T value;
    std::memcpy(&value, m_data.data() + offset, sizeof(T));
    return value;
  }

  [[nodiscard]] std::span<const std::byte> slice(std::uint64_t offset, std::uint64_t size,
                                                 const std::string& what) const {
    if (offset > m_data.size() || size > m_data.size() - offset) {
      throw bundle_error(m_origin, "truncated cubin: " + what + " (" + std::to_string(size) +
                                       " bytes at " + std::to_string(offset) + ") lies past the end (" +
                                       std::to_string(m_data.size()) + " bytes)");
    }
    return m_data.subspan(offset, size);
  }

  [[nodiscard]] const std::string& origin() const noexcept { return m_origin; }

 private:
  std::span<const std::byte> m_data;
  const std::string& m_origin;
};

struct section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0, size = 0, entsize = 0;
  std::uint32_t link = 0, info = 0;
};

struct symbol {
  std::string name;
  std::uint8_t info = 0, other = 0;
  std::uint16_t shndx = 0;
};

std::string c_string(std::span<const std::byte> table, std::uint64_t offset, const reader& r) {
  if (offset >= table.size()) {
    throw bundle_error(r.origin(), "corrupt cubin: string offset " + std::to_string(offset) +
                                       " outside its string table");
  }
  const char* begin = reinterpret_cast<const char*>(table.data()) + offset;
  std::size_t n = strnlen(begin, table.size() - offset);
  return std::string(begin, n);
}

std::vector<section> read_sections(const reader& r) {
  auto shoff = r.get<std::uint64_t>(0x28, "e_shoff");
  auto shentsize = r.get<std::uint16_t>(0x3a, "e_shentsize");
  auto shnum = r.get<std::uint16_t>(0x3c, "e_shnum");
  auto shstrndx = r.get<std::uint16_t>(0x3e, "e_shstrndx");
  if (shentsize != 64) throw bundle_error(r.origin(), "corrupt cubin: e_shentsize is not 64");
  if (shstrndx >= shnum) throw bundle_error(r.origin(), "corrupt cubin: e_shstrndx out of range");
  (void)r.slice(shoff, std::uint64_t{shnum} * shentsize, "section header table");

  std::vector<section> sections(shnum);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    std::uint64_t h = shoff + std::uint64_t{i} * shentsize;
    section& s = sections[i];
    s.type = r.get<std::uint32_t>(h + 4, "sh_type");
    s.offset = r.get<std::uint64_t>(h + 24, "sh_offset");
    s.size = r.get<std::uint64_t>(h + 32, "sh_size");
    s.link = r.get<std::uint32_t>(h + 40, "sh_link");
    s.info = r.get<std::uint32_t>(h + 44, "sh_info");
    s.entsize = r.get<std::uint64_t>(h + 56, "sh_entsize");
    if (s.type != k_sht_nobits && i != 0) (void)r.slice(s.offset, s.size, "section " + std::to_string(i));
  }
  auto names = r.slice(sections[shstrndx].offset, sections[shstrndx].size, "section name table");
  for (std::uint16_t i = 0; i < shnum; ++i) {
    auto name_off = r.get<std::uint32_t>(shoff + std::uint64_t{i} * shentsize, "sh_name");
    sections[i].name = c_string(names, name_off, r);
  }
  return sections;
}

// Program headers describe what the loader maps; each segment must lie inside the file.
void check_segments(const reader& r) {
  auto phoff = r.get<std::uint64_t>(0x20, "e_phoff");
  auto phentsize = r.get<std::uint16_t>(0x36, "e_phentsize");
  auto phnum = r.get<std::uint16_t>(0x38, "e_phnum");
  if (phnum == 0) return;
  if (phentsize != 56) throw bundle_error(r.origin(), "corrupt cubin: e_phentsize is not 56");
  (void)r.slice(phoff, std::uint64_t{phnum} * phentsize, "program header table");
  for (std::uint16_t i = 0; i < phnum; ++i) {
    std::uint64_t h = phoff + std::uint64_t{i} * phentsize;
    auto offset = r.get<std::uint64_t>(h + 8, "p_offset");
    auto filesz = r.get<std::uint64_t>(h + 32, "p_filesz");
    (void)r.slice(offset, filesz, "segment " + std::to_string(i));
  }
}

std::vector<symbol> read_symbols(const reader& r, const std::vector<section>& sections) {
  std::vector<symbol> symbols;
  for (const section& s : sections) {
    if (s.type != k_sht_symtab) continue;
    if (s.entsize != 24 || s.link >= sections.size()) {
      throw bundle_error(r.origin(), "corrupt cubin: malformed symbol table " + s.name);
    }
    auto strtab = r.slice(sections[s.link].offset, sections[s.link].size, "symbol string table");
    for (std::uint64_t off = s.offset; off + 24 <= s.offset + s.size; off += 24) {
      symbol sym;
      sym.name = c_string(strtab, r.get<std::uint32_t>(off, "st_name"), r);
      sym.info = r.get<std::uint8_t>(off + 4, "st_info");
      sym.other = r.get<std::uint8_t>(off + 5, "st_other");
      sym.shndx = r.get<std::uint16_t>(off + 6, "st_shndx");
      symbols.push_back(std::move(sym));
    }
  }
  return symbols;
}

// One .nv.info record: format, attribute and its payload (the 2-byte inline value for the
// non-SVAL formats, the sized blob for EIFMT_SVAL).
struct info_record {
  std::uint8_t format = 0, attribute = 0;
  std::span<const std::byte> payload;
  std::uint16_t inline_value = 0;
};

std::vector<info_record> read_info(const reader& r, const section& s) {
  std::vector<info_record> records;
  std::uint64_t off = s.offset, end = s.offset + s.size;
  while (off + 4 <= end) {
    info_record rec;
    rec.format = r.get<std::uint8_t>(off, "nv.info format");
    rec.attribute = r.get<std::uint8_t>(off + 1, "nv.info attribute");
    if (rec.format == k_eifmt_sval) {
      auto size = r.get<std::uint16_t>(off + 2, "nv.info size");
      if (off + 4 + size > end) {
        throw bundle_error(r.origin(), "corrupt cubin: " + s.name + " record at byte " +
                                           std::to_string(off) + " runs past its section");
      }
      rec.payload = r.slice(off + 4, size, s.name + " record");
      off += 4 + size;
    } else {
      rec.inline_value = r.get<std::uint16_t>(off + 2, "nv.info value");
      off += 4;
    }
    records.push_back(rec);
  }
  return records;
}

template <typename T>
T payload_at(const info_record& rec, std::size_t offset, const reader& r, const char* what) {
  if (offset + sizeof(T) > rec.payload.size()) {
    throw bundle_error(r.origin(), std::string("corrupt cubin: short ") + what + " record");
  }
  T v;
  std::memcpy(&v, rec.payload.data() + offset, sizeof(T));
  return v;
}

void read_entry_info(const reader& r, const section& s, cubin_entry& e) {
  for (const info_record& rec : read_info(r, s)) {
    switch (rec.attribute) {
      case k_eiattr_kparam_info: {
        cubin_param p;
        p.ordinal = payload_at<std::uint16_t>(rec, 4, r, "KPARAM_INFO");
        p.offset = payload_at<std::uint16_t>(rec, 6, r, "KPARAM_INFO");
        auto flags = payload_at<std::uint32_t>(rec, 8, r, "KPARAM_INFO");
        p.size = static_cast<int>((flags >> 18) & 0x3fff);
        e.params.push_back(p);
        break;
      }
      case k_eiattr_kparam_info_v2: {
        cubin_param p;
        p.ordinal = payload_at<std::uint16_t>(rec, 4, r, "KPARAM_INFO_V2");
        p.offset = payload_at<std::uint16_t>(rec, 6, r, "KPARAM_INFO_V2");
        p.size = payload_at<std::uint16_t>(rec, 8, r, "KPARAM_INFO_V2");
        e.params.push_back(p);
        break;
      }
      case k_eiattr_language:
        if (rec.format == k_eifmt_sval && rec.payload.size() >= 4) {
          e.tile_ir = payload_at<std::uint32_t>(rec, 0, r, "LANGUAGE") == k_language_tile_ir;
        }
        break;
      case k_eiattr_param_cbank_size:
        e.param_bytes = rec.inline_value;
        break;
      case k_eiattr_maxreg_count:
        e.max_registers = rec.inline_value;
        break;
      case k_eiattr_num_barriers:
        e.barriers = rec.inline_value & 0xff;   // EIFMT_BVAL: one byte
        break;
      case k_eiattr_num_mbarriers:
        e.mbarriers = rec.inline_value;
        break;
      case k_eiattr_reqntid:
        for (int d = 0; d < 3 && rec.format == k_eifmt_sval; ++d) {
          if (rec.payload.size() >= std::size_t(4 * (d + 1))) {
            e.required_block[d] = static_cast<int>(payload_at<std::uint32_t>(rec, 4 * d, r, "REQNTID"));
          }
        }
        break;
      case k_eiattr_cta_per_cluster:
        for (int d = 0; d < 3 && rec.format == k_eifmt_sval; ++d) {
          if (rec.payload.size() >= std::size_t(4 * (d + 1))) {
            e.cluster[d] = static_cast<int>(payload_at<std::uint32_t>(rec, 4 * d, r, "CTA_PER_CLUSTER"));
          }
        }
        break;
      case k_eiattr_blocks_are_clusters:
        e.blocks_are_clusters = true;
        break;
      case k_eiattr_max_threads:
        if (rec.format == k_eifmt_sval && rec.payload.size() >= 4) {
          e.max_threads = static_cast<int>(payload_at<std::uint32_t>(rec, 0, r, "MAX_THREADS"));
        }
        break;
      default:
        break;
    }
  }
  std::sort(e.params.begin(), e.params.end(),
            [](const cubin_param& a, const cubin_param& b) { return a.ordinal < b.ordinal; });
}

std::string toolkit_from_note(std::span<const std::byte> note) {
  std::string_view text(reinterpret_cast<const char*>(note.data()), note.size());
  constexpr std::string_view marker = "Cuda compilation tools, release ";
  auto pos = text.find(marker);
  if (pos == std::string_view::npos) return {};
  auto end = text.find('\0', pos);
  return std::string(text.substr(pos, end == std::string_view::npos ? text.npos : end - pos));
}

}  // namespace

std::string cubin_info::arch() const { return "sm_" + std::to_string(sm) + (arch_specific ? "a" : ""); }

const cubin_entry* cubin_info::find(const std::string& entry) const noexcept {
  for (const auto& e : entries) {
    if (e.name == entry) return &e;
  }
  return nullptr;
}

cubin_info inspect_cubin(std::span<const std::byte> image, const std::string& origin) {
  reader r(image, origin);
  if (image.size() < 64) {
    throw bundle_error(origin, "not a cubin: " + std::to_string(image.size()) +
                                   " bytes is shorter than an ELF header");
  }
  static constexpr unsigned char k_magic[4] = {0x7f, 'E', 'L', 'F'};
  if (std::memcmp(image.data(), k_magic, 4) != 0) throw bundle_error(origin, "not a cubin: no ELF magic");
  if (r.get<std::uint8_t>(4, "EI_CLASS") != 2 || r.get<std::uint8_t>(5, "EI_DATA") != 1) {
    throw bundle_error(origin, "not a cubin: not a little-endian ELF64 file");
  }
  if (r.get<std::uint16_t>(18, "e_machine") != k_em_cuda) {
    throw bundle_error(origin, "not a cubin: e_machine is not EM_CUDA (190)");
  }
  cubin_info info;
  info.elf_abi_version = r.get<std::uint8_t>(8, "EI_ABIVERSION");
  auto flags = r.get<std::uint32_t>(0x30, "e_flags");
  // The CUDA ELF ABI moved the SM field: ABI <= 7 keeps it in the low byte (with 0x800 for the
  // "a" targets); ABI 8 keeps it in bits 8..15 and states "a" in .nv.compat.
  if (info.elf_abi_version >= 8) {
    info.sm = static_cast<int>((flags >> 8) & 0xff);
  } else {
    info.sm = static_cast<int>(flags & 0xff);
    info.arch_specific = (flags & 0x800) != 0;
  }

  check_segments(r);
  auto sections = read_sections(r);
  auto symbols = read_symbols(r, sections);
  std::map<std::string, const section*> by_name;
  for (const auto& s : sections) by_name[s.name] = &s;

  if (auto it = by_name.find(".nv.compat"); it != by_name.end()) {
    for (const auto& rec : read_info(r, *it->second)) {
      if (rec.attribute == k_eicompat_accelerator_target) info.arch_specific = (rec.inline_value & 0xff) != 0;
    }
  }
  if (auto it = by_name.find(".note.nv.tkinfo"); it != by_name.end()) {
    info.toolkit = toolkit_from_note(r.slice(it->second->offset, it->second->size, ".note.nv.tkinfo"));
  }

  for (const symbol& sym : symbols) {
    for (const char* marker : {"cudaCDP2LaunchDevice", "cudaLaunchDevice", "cudaCDP2GetParameterBuffer",
                               "cudaGetParameterBuffer"}) {
      if (sym.name.find(marker) != std::string::npos) {
        info.device_launch_symbols.push_back(sym.name);
        break;
      }
    }
  }
  std::map<std::uint32_t, std::string> symbol_by_index;
  for (std::size_t i = 0; i < symbols.size(); ++i) symbol_by_index[static_cast<std::uint32_t>(i)] = symbols[i].name;

  for (const symbol& sym : symbols) {
    bool is_func = (sym.info & 0xf) == k_stt_func;
    if (!is_func || (sym.other & k_sto_cuda_entry) == 0) continue;
    cubin_entry e;
    e.name = sym.name;
    if (auto it = by_name.find(".nv.info." + sym.name); it != by_name.end()) read_entry_info(r, *it->second, e);
    if (auto it = by_name.find(".nv.shared." + sym.name); it != by_name.end()) {
      e.static_shared_bytes = static_cast<std::int64_t>(it->second->size);
    }
    info.entries.push_back(std::move(e));
  }
  // Per-function attributes in the global .nv.info name their function by symbol index.
  if (auto it = by_name.find(".nv.info"); it != by_name.end()) {
    for (const auto& rec : read_info(r, *it->second)) {
      if (rec.attribute != k_eiattr_regcount && rec.attribute != k_eiattr_frame_size &&
          rec.attribute != k_eiattr_min_stack_size) {
        continue;
      }
      auto sym_index = payload_at<std::uint32_t>(rec, 0, r, "nv.info function attribute");
      auto value = payload_at<std::uint32_t>(rec, 4, r, "nv.info function attribute");
      auto name = symbol_by_index.find(sym_index);
      if (name == symbol_by_index.end()) continue;
      for (auto& e : info.entries) {
        if (e.name != name->second) continue;
        if (rec.attribute == k_eiattr_regcount) e.registers = static_cast<int>(value);
        else if (rec.attribute == k_eiattr_frame_size) e.frame_bytes = static_cast<int>(value);
        else e.min_stack_bytes = static_cast<int>(value);
      }
    }
  }
  if (info.entries.empty()) throw bundle_error(origin, "cubin has no kernel entry points");
  return info;
}

}  // namespace portbench::bundle
