// SPDX-License-Identifier: Apache-2.0
//! The cuTile Rust entry ABI and its mapping onto the bundle manifest's parameter kinds
//! (docs/bundle-manifest.md, `params[]`).
//!
//! cutile-compiler 0.5.0 (`kernel_entry_generator.rs`) turns each kernel parameter into
//! entry parameters, in declaration order:
//!
//! | kernel parameter      | entry parameters                                                        |
//! |-----------------------|-------------------------------------------------------------------------|
//! | `&Tensor<T, S>`       | `<n>_ptr`, `<n>_dim_i` (i32) x rank, `<n>_stride_i` (i32) x rank        |
//! | `&mut Tensor<T, S>`   | the same, then `<n>_partition_dim_i` x rank, `<n>_partition_stride_i` x rank (i32) |
//! | scalar (`f32`, ...)   | one parameter of that type                                              |
//!
//! Every dim and stride is passed even when the specialisation makes it static. The host
//! launcher (`cutile::tensor`, `push_kernel_args`) passes the tensor's shape and strides,
//! then for an output partition the tile shape and the tensor's strides again; the
//! exporter writes those last two groups as literals of the configuration.

use anyhow::{ensure, Result};
use serde_json::{json, Value};

/// C type of a scalar parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    I32,
    I64,
    U32,
    U64,
    F32,
    F64,
}

impl ScalarType {
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }
    pub fn size(self) -> u32 {
        match self {
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }
    /// The Tile IR spelling in an entry signature (`tile<i32>`, `tile<f32>`, ...).
    pub fn tile_ir(self) -> &'static str {
        match self {
            ScalarType::I32 | ScalarType::U32 => "i32",
            ScalarType::I64 | ScalarType::U64 => "i64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }
}

/// A literal's value; integers stay exact in JSON.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LitValue {
    Int(i64),
    Float(f64),
}

/// One kernel parameter as the manifest describes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    Ptr { tensor: String },
    /// The device address of `tensor` plus `offset` elements (a view starting inside it).
    PtrAt { tensor: String, offset: i64 },
    Extent { tensor: String, dim: usize, ty: ScalarType },
    Stride { tensor: String, dim: usize, ty: ScalarType },
    Literal { ty: ScalarType, value: LitValue },
    Scratch { name: String },
    Null,
    /// The device address of an array of 64-bit device addresses, one per named tensor (the
    /// start of each one's view), in order, which the harness builds (manifest kind `ptr_table`).
    PtrTable { tensors: Vec<String> },
}

impl Param {
    pub fn size(&self) -> u32 {
        match self {
            Param::Ptr { .. } | Param::PtrAt { .. } | Param::Scratch { .. } | Param::Null | Param::PtrTable { .. } => 8,
            Param::Extent { ty, .. } | Param::Stride { ty, .. } | Param::Literal { ty, .. } => ty.size(),
        }
    }

    /// Natural alignment, which is the size for every kind.
    pub fn align(&self) -> u32 {
        self.size()
    }

    pub fn to_json(&self) -> Value {
        match self {
            Param::Ptr { tensor } => json!({"kind": "ptr", "tensor": tensor}),
            Param::PtrAt { tensor, offset } => json!({"kind": "ptr", "tensor": tensor, "offset": offset}),
            Param::Extent { tensor, dim, ty } => {
                json!({"kind": "extent", "tensor": tensor, "dim": dim, "type": ty.name()})
            }
            Param::Stride { tensor, dim, ty } => {
                json!({"kind": "stride", "tensor": tensor, "dim": dim, "type": ty.name()})
            }
            Param::Literal { ty, value } => match value {
                LitValue::Int(v) => json!({"kind": "literal", "type": ty.name(), "value": v}),
                LitValue::Float(v) => json!({"kind": "literal", "type": ty.name(), "value": v}),
            },
            Param::Scratch { name } => json!({"kind": "scratch", "name": name}),
            Param::Null => json!({"kind": "null"}),
            Param::PtrTable { tensors } => json!({"kind": "ptr_table", "tensors": tensors}),
        }
    }
}

/// Offsets of the parameters packed in order at natural alignment, and the total size.
pub fn layout(params: &[Param]) -> (Vec<u32>, u32) {
    let mut offsets = Vec::with_capacity(params.len());
    let mut at = 0u32;
    for p in params {
        at = at.next_multiple_of(p.align());
        offsets.push(at);
        at += p.size();
    }
    (offsets, at)
}

/// One parameter of a cuTile Rust kernel, with the values of this configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelArg {
    /// A tensor parameter. `partition` is `Some(tile shape)` for the `&mut` output
    /// (its launch partition); `strides` are the tensor's strides in elements
    /// (contiguous row-major in portbench), needed for the partition-stride literals.
    Tensor { name: String, strides: Vec<i64>, partition: Option<Vec<i64>> },
    /// A tensor parameter that sees the operator's tensor `name` reshaped (e.g. `x[b, s, 2h]`
    /// as `[b*s, 2, h]`): the pointer binds to the tensor (plus `offset` elements: a view that
    /// starts inside it), the view's extents and strides are `literal`s of the configuration.
    /// `partition` as for [`KernelArg::Tensor`].
    View { name: String, offset: i64, shape: Vec<i64>, strides: Vec<i64>, partition: Option<Vec<i64>> },
    /// A scalar parameter and the value this configuration passes.
    Scalar { name: String, ty: ScalarType, value: LitValue },
    /// A tensor parameter that sees the plan's scratch buffer `name` (manifest kind `scratch`)
    /// as `shape` with `strides`, both `literal`s; for the buffers the launches of a
    /// multi-kernel plan share (split-KV partials). `partition` as for [`KernelArg::Tensor`].
    Scratch { name: String, shape: Vec<i64>, strides: Vec<i64>, partition: Option<Vec<i64>> },
    /// A raw pointer parameter (`*mut i64`) bound to a table of the named tensors' addresses
    /// ([`Param::PtrTable`]): the kernel reaches tensors that are separate allocations.
    PtrTable { name: String, tensors: Vec<String> },
    /// A tensor parameter of rank `rank` for an optional tensor this configuration does not
    /// have (e.g. the gated delta rule's `initial_state` without `use_init`): a `null`
    /// pointer, extents and strides literal 1s. The kernel never touches it (a const generic
    /// removes the access).
    Absent { name: String, rank: usize },
    /// A raw pointer parameter (`*mut T`) bound to the operator's tensor `tensor` (manifest
    /// `ptr`): the kernel addresses it through pointer tiles (scatter).
    RawPtr { name: String, tensor: String },
    /// [`KernelArg::View`] for a kernel parameter named `name` that sees the operator's tensor
    /// `tensor` (one kernel bound to different tensors in two launches: moe's GEMMs, `w1` and
    /// `w2`).
    ViewOf { name: String, tensor: String, shape: Vec<i64>, strides: Vec<i64>, partition: Option<Vec<i64>> },
    /// [`KernelArg::Scratch`] for a kernel parameter named `name` that sees the plan's scratch
    /// buffer `scratch`.
    ScratchAs { name: String, scratch: String, shape: Vec<i64>, strides: Vec<i64>, partition: Option<Vec<i64>> },
    /// A raw pointer parameter (`*mut T`) bound to the plan's scratch buffer `scratch`
    /// (manifest kind `scratch`): a multi-kernel plan's intermediate, gathered or scattered.
    RawScratch { name: String, scratch: String },
}

/// An entry parameter: the name cutile-compiler gives it, its Tile IR type, and what the
/// manifest binds to it.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryParam {
    pub ir_name: String,
    /// `ptr` for pointers, else the scalar's Tile IR type (`i32`, `f32`, ...).
    pub ir_type: String,
    pub param: Param,
}

/// Entry parameters of one tensor argument; `view_shape` makes extents and strides literals.
fn push_tensor(
    out: &mut Vec<EntryParam>,
    name: &str,
    ptr: Param,
    view_shape: Option<&[i64]>,
    strides: &[i64],
    partition: Option<&[i64]>,
) {
    let i32t = ScalarType::I32;
    let lit = |v: i64| Param::Literal { ty: i32t, value: LitValue::Int(v) };
    let rank = strides.len();
    out.push(EntryParam { ir_name: format!("{name}_ptr"), ir_type: "ptr".into(), param: ptr });
    for d in 0..rank {
        let param = match view_shape {
            Some(shape) => lit(shape[d]),
            None => Param::Extent { tensor: name.into(), dim: d, ty: i32t },
        };
        out.push(EntryParam { ir_name: format!("{name}_dim_{d}"), ir_type: "i32".into(), param });
    }
    for (d, &s) in strides.iter().enumerate() {
        let param = match view_shape {
            Some(_) => lit(s),
            None => Param::Stride { tensor: name.into(), dim: d, ty: i32t },
        };
        out.push(EntryParam { ir_name: format!("{name}_stride_{d}"), ir_type: "i32".into(), param });
    }
    if let Some(tile) = partition {
        for (d, &t) in tile.iter().enumerate() {
            out.push(EntryParam { ir_name: format!("{name}_partition_dim_{d}"), ir_type: "i32".into(), param: lit(t) });
        }
        for (d, &s) in strides.iter().enumerate() {
            out.push(EntryParam {
                ir_name: format!("{name}_partition_stride_{d}"),
                ir_type: "i32".into(),
                param: lit(s),
            });
        }
    }
}

/// Expands a kernel's parameters into its entry parameters (the table in the module docs).
pub fn entry_params(args: &[KernelArg]) -> Vec<EntryParam> {
    let mut out = Vec::new();
    for arg in args {
        match arg {
            KernelArg::Tensor { name, strides, partition } => {
                push_tensor(&mut out, name, Param::Ptr { tensor: name.clone() }, None, strides, partition.as_deref());
            }
            KernelArg::View { name, offset, shape, strides, partition } => {
                let ptr = if *offset == 0 {
                    Param::Ptr { tensor: name.clone() }
                } else {
                    Param::PtrAt { tensor: name.clone(), offset: *offset }
                };
                push_tensor(&mut out, name, ptr, Some(shape), strides, partition.as_deref());
            }
            KernelArg::Scratch { name, shape, strides, partition } => {
                let ptr = Param::Scratch { name: name.clone() };
                push_tensor(&mut out, name, ptr, Some(shape), strides, partition.as_deref());
            }
            KernelArg::Scalar { name, ty, value } => out.push(EntryParam {
                ir_name: name.clone(),
                ir_type: ty.tile_ir().into(),
                param: Param::Literal { ty: *ty, value: *value },
            }),
            KernelArg::Absent { name, rank } => {
                out.push(EntryParam { ir_name: format!("{name}_ptr"), ir_type: "ptr".into(), param: Param::Null });
                for what in ["dim", "stride"] {
                    for d in 0..*rank {
                        out.push(EntryParam {
                            ir_name: format!("{name}_{what}_{d}"),
                            ir_type: "i32".into(),
                            param: Param::Literal { ty: ScalarType::I32, value: LitValue::Int(1) },
                        });
                    }
                }
            }
            KernelArg::RawPtr { name, tensor } => out.push(EntryParam {
                ir_name: name.clone(),
                ir_type: "ptr".into(),
                param: Param::Ptr { tensor: tensor.clone() },
            }),
            KernelArg::ViewOf { name, tensor, shape, strides, partition } => {
                push_tensor(&mut out, name, Param::Ptr { tensor: tensor.clone() }, Some(shape), strides, partition.as_deref());
            }
            KernelArg::ScratchAs { name, scratch, shape, strides, partition } => {
                push_tensor(&mut out, name, Param::Scratch { name: scratch.clone() }, Some(shape), strides, partition.as_deref());
            }
            KernelArg::RawScratch { name, scratch } => out.push(EntryParam {
                ir_name: name.clone(),
                ir_type: "ptr".into(),
                param: Param::Scratch { name: scratch.clone() },
            }),
            KernelArg::PtrTable { name, tensors } => out.push(EntryParam {
                ir_name: name.clone(),
                ir_type: "ptr".into(),
                param: Param::PtrTable { tensors: tensors.clone() },
            }),
        }
    }
    out
}

/// The parameters of `entry` in a Tile IR text dump: `(name, type)` pairs with the type
/// reduced to `ptr` or its element type. cutile-ir prints an entry as
/// `entry @<name>(%a: tile<ptr<f32>>, %b: tile<i32>, ...)`.
pub fn ir_entry_params(ir_text: &str, entry: &str) -> Option<Vec<(String, String)>> {
    let key = format!("entry @{entry}(");
    let start = ir_text.find(&key)? + key.len();
    // The parameter list ends at the matching parenthesis.
    let mut depth = 1usize;
    let mut end = start;
    for (i, c) in ir_text[start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = start + i;
                    break;
                }
            }
            _ => {}
        }
    }
    let list = &ir_text[start..end];
    let mut params = Vec::new();
    // Split on commas outside angle brackets.
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut items = Vec::new();
    for c in list.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        items.push(cur);
    }
    for item in items {
        let (name, ty) = item.split_once(':')?;
        let name = name.trim().trim_start_matches('%').to_string();
        let ty = ty.trim();
        let ty = if ty.contains("ptr<") {
            "ptr".to_string()
        } else {
            ty.trim_start_matches("tile<").trim_end_matches('>').to_string()
        };
        params.push((name, ty));
    }
    Some(params)
}

/// Checks the expected entry parameters against the Tile IR entry signature.
pub fn check_against_ir(expected: &[EntryParam], ir: &[(String, String)]) -> Result<()> {
    ensure!(
        expected.len() == ir.len(),
        "the Tile IR entry has {} parameters, the ABI model expects {}: IR {:?}",
        ir.len(),
        expected.len(),
        ir
    );
    for (i, (e, (name, ty))) in expected.iter().zip(ir).enumerate() {
        ensure!(
            e.ir_type == *ty,
            "parameter {i} ({}) has Tile IR type {ty}, the ABI model expects {}",
            e.ir_name,
            e.ir_type
        );
        // The IR printer may rename values; compare names only when it kept them.
        ensure!(
            name.chars().all(|c| c.is_ascii_digit()) || *name == e.ir_name,
            "parameter {i} is %{name} in the Tile IR, the ABI model expects %{}",
            e.ir_name
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vadd_args() -> Vec<KernelArg> {
        vec![
            KernelArg::Tensor { name: "x".into(), strides: vec![1], partition: None },
            KernelArg::Tensor { name: "y".into(), strides: vec![1], partition: None },
            KernelArg::Tensor { name: "out".into(), strides: vec![1], partition: Some(vec![1024]) },
        ]
    }

    #[test]
    fn vector_add_abi() {
        let p = entry_params(&vadd_args());
        let names: Vec<_> = p.iter().map(|e| e.ir_name.as_str()).collect();
        assert_eq!(
            names,
            [
                "x_ptr",
                "x_dim_0",
                "x_stride_0",
                "y_ptr",
                "y_dim_0",
                "y_stride_0",
                "out_ptr",
                "out_dim_0",
                "out_stride_0",
                "out_partition_dim_0",
                "out_partition_stride_0"
            ]
        );
        assert_eq!(p[9].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(1024) });
        assert_eq!(p[10].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(1) });
        let params: Vec<_> = p.into_iter().map(|e| e.param).collect();
        let (offsets, total) = layout(&params);
        assert_eq!(offsets, [0, 8, 12, 16, 24, 28, 32, 40, 44, 48, 52]);
        assert_eq!(total, 56);
    }

    #[test]
    fn rms_norm_abi_and_layout() {
        let args = vec![
            KernelArg::Tensor { name: "x".into(), strides: vec![768, 1], partition: None },
            KernelArg::Tensor { name: "w".into(), strides: vec![1], partition: None },
            KernelArg::Tensor { name: "y".into(), strides: vec![768, 1], partition: Some(vec![1, 1024]) },
            KernelArg::Scalar { name: "eps".into(), ty: ScalarType::F32, value: LitValue::Float(1e-5) },
        ];
        let p = entry_params(&args);
        assert_eq!(p.len(), 5 + 3 + 9 + 1);
        assert_eq!(p[0].param, Param::Ptr { tensor: "x".into() });
        assert_eq!(p[2].param, Param::Extent { tensor: "x".into(), dim: 1, ty: ScalarType::I32 });
        assert_eq!(p[3].param, Param::Stride { tensor: "x".into(), dim: 0, ty: ScalarType::I32 });
        assert_eq!(p[13].ir_name, "y_partition_dim_0");
        assert_eq!(p[14].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(1024) });
        assert_eq!(p[15].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(768) });
        assert_eq!(p[17].ir_type, "f32");
        let params: Vec<_> = p.into_iter().map(|e| e.param).collect();
        let (offsets, total) = layout(&params);
        // x: ptr@0, dims@8,12, strides@16,20; w: ptr@24 (aligned), dim@32, stride@36;
        // y: ptr@40, dims@48,52, strides@56,60, pdims@64,68, pstrides@72,76; eps@80.
        assert_eq!(offsets[5], 24);
        assert_eq!(offsets[8], 40);
        assert_eq!(*offsets.last().unwrap(), 80);
        assert_eq!(total, 84);
    }

    #[test]
    fn layout_pads_pointers_to_eight() {
        let params = vec![
            Param::Literal { ty: ScalarType::I32, value: LitValue::Int(3) },
            Param::Null,
            Param::Literal { ty: ScalarType::F64, value: LitValue::Float(0.5) },
        ];
        assert_eq!(layout(&params), (vec![0, 8, 16], 24));
    }

    #[test]
    fn param_json_kinds() {
        assert_eq!(Param::Ptr { tensor: "x".into() }.to_json(), json!({"kind": "ptr", "tensor": "x"}));
        assert_eq!(
            Param::Extent { tensor: "x".into(), dim: 1, ty: ScalarType::I32 }.to_json(),
            json!({"kind": "extent", "tensor": "x", "dim": 1, "type": "i32"})
        );
        assert_eq!(
            Param::Stride { tensor: "y".into(), dim: 0, ty: ScalarType::I64 }.to_json(),
            json!({"kind": "stride", "tensor": "y", "dim": 0, "type": "i64"})
        );
        assert_eq!(
            Param::Literal { ty: ScalarType::I32, value: LitValue::Int(1024) }.to_json(),
            json!({"kind": "literal", "type": "i32", "value": 1024})
        );
        let eps = Param::Literal { ty: ScalarType::F32, value: LitValue::Float(1e-5) }.to_json();
        assert_eq!(eps["type"], "f32");
        assert_eq!(eps["value"].as_f64(), Some(1e-5));
        assert_eq!(Param::Null.to_json(), json!({"kind": "null"}));
        assert_eq!(Param::Scratch { name: "ws".into() }.to_json(), json!({"kind": "scratch", "name": "ws"}));
        assert_eq!(
            Param::PtrTable { tensors: vec!["a0".into(), "a1".into()] }.to_json(),
            json!({"kind": "ptr_table", "tensors": ["a0", "a1"]})
        );
    }

    #[test]
    fn pointer_table_args_are_one_pointer_each() {
        // group_gemm's tables then its i32 scalars: 8-byte pointers, then 4-byte values.
        let table = |n: &str, p: &str| KernelArg::PtrTable { name: n.into(), tensors: (0..3).map(|g| format!("{p}{g}")).collect() };
        let mut args = vec![table("a_table", "a"), table("b_table", "b"), table("c_table", "c")];
        args.push(KernelArg::Scalar { name: "groups".into(), ty: ScalarType::I32, value: LitValue::Int(3) });
        let p = entry_params(&args);
        assert_eq!(p.len(), 4);
        assert_eq!((p[1].ir_name.as_str(), p[1].ir_type.as_str()), ("b_table", "ptr"));
        assert_eq!(p[2].param, Param::PtrTable { tensors: vec!["c0".into(), "c1".into(), "c2".into()] });
        let params: Vec<Param> = p.into_iter().map(|e| e.param).collect();
        assert_eq!(layout(&params), (vec![0, 8, 16, 24], 28));
    }

    #[test]
    fn parses_ir_entry_signature() {
        let ir = "cuda_tile.module @m {\n  entry @k_entry(%x_ptr: tile<ptr<f32>>, %x_dim_0: tile<i32>, %eps: tile<f32>) {\n  }\n}";
        let got = ir_entry_params(ir, "k_entry").unwrap();
        assert_eq!(
            got,
            vec![("x_ptr".into(), "ptr".into()), ("x_dim_0".into(), "i32".into()), ("eps".into(), "f32".into())]
        );
        assert!(ir_entry_params(ir, "other").is_none());
        let expected = vec![
            EntryParam { ir_name: "x_ptr".into(), ir_type: "ptr".into(), param: Param::Ptr { tensor: "x".into() } },
            EntryParam {
                ir_name: "x_dim_0".into(),
                ir_type: "i32".into(),
                param: Param::Extent { tensor: "x".into(), dim: 0, ty: ScalarType::I32 },
            },
            EntryParam {
                ir_name: "eps".into(),
                ir_type: "f32".into(),
                param: Param::Literal { ty: ScalarType::F32, value: LitValue::Float(1e-5) },
            },
        ];
        check_against_ir(&expected, &got).unwrap();
        assert!(check_against_ir(&expected[..2], &got).is_err());
        let mut wrong = expected.clone();
        wrong[2].ir_type = "i32".into();
        assert!(check_against_ir(&wrong, &got).is_err());
    }
    #[test]
    fn view_args_pass_literal_extents() {
        let args = vec![
            KernelArg::View { name: "x".into(), offset: 0, shape: vec![6, 2, 4], strides: vec![8, 4, 1], partition: None },
            KernelArg::View { name: "y".into(), offset: 48, shape: vec![6, 4], strides: vec![4, 1], partition: Some(vec![2, 4]) },
        ];
        let p = entry_params(&args);
        assert_eq!(p.len(), 7 + 9);
        assert_eq!(p[0].param, Param::Ptr { tensor: "x".into() });
        let lit = |v| Param::Literal { ty: ScalarType::I32, value: LitValue::Int(v) };
        assert_eq!(p[1..7].iter().map(|e| e.param.clone()).collect::<Vec<_>>(), [6, 2, 4, 8, 4, 1].map(lit));
        assert_eq!(p[7].param, Param::PtrAt { tensor: "y".into(), offset: 48 });
        assert_eq!(p[7].param.to_json(), json!({"kind": "ptr", "tensor": "y", "offset": 48}));
        assert_eq!(p[7].param.size(), 8);
        assert_eq!(p[12].ir_name, "y_partition_dim_0");
        assert_eq!(p[15].param, lit(1));
    }
}
