//! CUDA C source for the non-elementwise device kernels: reductions,
//! cumulative ops, `iota` and `threefry2x32`. Same contract as the fused
//! kernels ([`super::codegen`]): a grid-stride loop over `n` work items,
//! parameters `in0.., out0.., n`, a name hashed from the text.
//!
//! Determinism: a reduction or scan runs one thread per output element (or
//! per scanned line) and combines the elements in row-major order of the
//! reduced axes, one after the other, so the order never depends on the
//! launch configuration.

use super::codegen::{binary_expr, c_literal, c_type, finish, half_fns, is_half, KernelSource};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::compiled::fusion::Access;
use crate::ir::{Scalar, Var};
use crate::prims::{ArgOp, BinaryOp, CumOp, ReduceOp};
use std::fmt::Write;

pub(super) fn unsupported(what: String) -> Error {
    Error::Unsupported(format!("cuda codegen: {what}"))
}

/// The C type of `d` (complex dtypes as [`super::complex`]'s structs), an
/// `Unsupported` error for dtypes without one.
pub(super) fn c_ty(d: DType) -> Result<&'static str> {
    c_type(d)
        .or_else(|| super::complex::c_type(d))
        .ok_or_else(|| unsupported(format!("elements of {}", d.name())))
}

/// How a reduction or scan kernel reads and writes elements of `d`: the
/// dtype it computes in (f16/bf16 in f32, as the CPU kernels accumulate),
/// the stored C type, and the load and store wrappers.
struct Elements {
    compute: DType,
    storage: &'static str,
    load: &'static str,
    store: &'static str,
}

fn elements(d: DType) -> Result<Elements> {
    if is_half(d) {
        let (load, store) = half_fns(d);
        return Ok(Elements {
            compute: DType::F32,
            storage: "unsigned short",
            load,
            store,
        });
    }
    Ok(Elements {
        compute: d,
        storage: c_ty(d)?,
        load: "",
        store: "",
    })
}

impl Elements {
    /// `e` read from memory (converted to the compute type).
    fn loaded(&self, e: &str) -> String {
        wrap(self.load, e)
    }

    /// `e` as stored.
    fn stored(&self, e: &str) -> String {
        wrap(self.store, e)
    }
}

fn wrap(f: &str, e: &str) -> String {
    if f.is_empty() {
        e.to_string()
    } else {
        format!("{f}({e})")
    }
}

/// Whether reductions and scans of `d` have device kernels (complex
/// elements only for the ops [`reduce_lowers`] and [`cumulative_lowers`]
/// name).
pub fn accumulates_on_device(d: DType) -> bool {
    is_half(d) || c_type(d).is_some()
}

/// Whether `reduce_<op>` of `d` has a device kernel: every op of the real
/// dtypes; `sum` and `prod` of complex ones (their `max`/`min` order
/// lexicographically, as JAX does, and run on the host).
pub fn reduce_lowers(op: ReduceOp, d: DType) -> bool {
    accumulates_on_device(d) || (d.is_complex() && matches!(op, ReduceOp::Sum | ReduceOp::Prod))
}

/// Row-major strides of `shape`.
pub(super) fn strides(shape: &[usize]) -> Result<Vec<usize>> {
    let mut out = vec![0usize; shape.len()];
    let mut acc = 1usize;
    for (s, &d) in out.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc
            .checked_mul(d)
            .ok_or_else(|| unsupported("size overflow".into()))?;
    }
    Ok(out)
}

/// The extent of `axis` and the elements after it (the stride of `axis`).
fn axis_layout(shape: &[usize], axis: usize) -> Result<(usize, usize)> {
    let n = *shape
        .get(axis)
        .ok_or_else(|| unsupported(format!("axis {axis} of shape {shape:?}")))?;
    Ok((n, inner_size(shape, axis)?))
}

/// The number of elements after `axis` (its row-major stride).
fn inner_size(shape: &[usize], axis: usize) -> Result<usize> {
    shape
        .get(axis.saturating_add(1)..)
        .unwrap_or_default()
        .iter()
        .try_fold(1usize, |acc, &s| acc.checked_mul(s))
        .ok_or_else(|| unsupported("size overflow".into()))
}

/// The C expression of the input offset of element `idx` of a row-major walk
/// over `axes` (each `(size, input stride)`): `sum ((idx / div) % size) *
/// stride`.
fn offset_expr(idx: &str, axes: &[(usize, usize)]) -> Result<String> {
    let mut terms = Vec::new();
    let mut div = 1usize;
    for &(size, stride) in axes.iter().rev() {
        if size != 1 {
            let q = if div == 1 {
                idx.to_string()
            } else {
                format!("({idx} / {div}LL)")
            };
            terms.push(format!("({q} % {size}LL) * {stride}LL"));
        }
        div = div
            .checked_mul(size)
            .ok_or_else(|| unsupported("size overflow".into()))?;
    }
    if terms.is_empty() {
        return Ok("0LL".to_string());
    }
    terms.reverse();
    Ok(terms.join(" + "))
}

/// The identity of a reduction (its value over no elements).
fn reduce_init(op: ReduceOp, d: DType) -> Result<String> {
    let ty = c_ty(d)?;
    Ok(match op {
        ReduceOp::Sum => c_literal(Scalar::Int(0), d)?,
        ReduceOp::Prod => c_literal(Scalar::Int(1), d)?,
        ReduceOp::Max => extreme(d, false)?,
        ReduceOp::Min => extreme(d, true)?,
        ReduceOp::And if d == DType::Bool => "true".to_string(),
        ReduceOp::And => format!("(({ty})~0ULL)"),
        ReduceOp::Or | ReduceOp::Xor if d == DType::Bool => "false".to_string(),
        ReduceOp::Or | ReduceOp::Xor => format!("(({ty})0)"),
    })
}

/// The largest (`max`) or smallest value of `d`: infinities for floats.
fn extreme(d: DType, max: bool) -> Result<String> {
    let ty = c_ty(d)?;
    Ok(match (d, max) {
        (DType::F32 | DType::F64, true) => c_literal(Scalar::Float(f64::INFINITY), d)?,
        (DType::F32 | DType::F64, false) => c_literal(Scalar::Float(f64::NEG_INFINITY), d)?,
        (DType::Bool, m) => m.to_string(),
        (DType::U8 | DType::U16 | DType::U32 | DType::U64, true) => format!("(({ty})~0ULL)"),
        (DType::U8 | DType::U16 | DType::U32 | DType::U64, false) => format!("(({ty})0)"),
        (_, m) => {
            // Two's complement: the max has every bit but the sign set.
            let bits = d.itemsize().saturating_mul(8).saturating_sub(1);
            let max_v = u32::try_from(bits)
                .ok()
                .filter(|&b| b < 63)
                .and_then(|b| 1i64.checked_shl(b))
                .map_or(i64::MAX, |p| p.saturating_sub(1));
            if m {
                format!("(({ty}){max_v}LL)")
            } else {
                format!("(({ty})(-{max_v}LL - 1))")
            }
        }
    })
}

/// `acc op x` for a reduction.
fn reduce_combine(op: ReduceOp, d: DType, acc: &str, x: &str) -> String {
    let bin = |b: BinaryOp| binary_expr(b, d, acc, x);
    match (op, d) {
        (ReduceOp::Sum, _) => bin(BinaryOp::Add),
        (ReduceOp::Prod, _) => bin(BinaryOp::Mul),
        (ReduceOp::Max | ReduceOp::Or, DType::Bool) => format!("({acc} || {x})"),
        (ReduceOp::Min | ReduceOp::And, DType::Bool) => format!("({acc} && {x})"),
        (ReduceOp::Xor, DType::Bool) => format!("({acc} != {x})"),
        (ReduceOp::Max, _) => bin(BinaryOp::Max),
        (ReduceOp::Min, _) => bin(BinaryOp::Min),
        (ReduceOp::And, _) => bin(BinaryOp::And),
        (ReduceOp::Or, _) => bin(BinaryOp::Or),
        (ReduceOp::Xor, _) => bin(BinaryOp::Xor),
    }
}

/// `reduce_<op>(x, axes)` of an input `x` of `shape` and dtype `d`: one
/// thread per output element, the reduced elements combined in row-major
/// order.
pub fn reduce_kernel(
    op: ReduceOp, d: DType, shape: &[usize], axes: &[usize], x: Var, out: Var,
) -> Result<KernelSource> {
    if !reduce_lowers(op, d) {
        return Err(unsupported(format!("reduce_{op:?} of {}", d.name())));
    }
    let el = elements(d)?;
    let (d, ty, stored) = (el.compute, c_ty(el.compute)?, el.storage);
    let st = strides(shape)?;
    let mut kept = Vec::new();
    let mut reduced = Vec::new();
    for (a, (&size, &stride)) in shape.iter().zip(&st).enumerate() {
        if axes.contains(&a) {
            reduced.push((size, stride));
        } else {
            kept.push((size, stride));
        }
    }
    let len = kept
        .iter()
        .try_fold(1usize, |acc, &(s, _)| acc.checked_mul(s))
        .ok_or_else(|| unsupported("size overflow".into()))?;
    let count = reduced
        .iter()
        .try_fold(1usize, |acc, &(s, _)| acc.checked_mul(s))
        .ok_or_else(|| unsupported("size overflow".into()))?;
    let mut body = String::new();
    let _ = writeln!(
        body,
        "    const long long base = {};",
        offset_expr("i", &kept)?
    );
    let _ = writeln!(body, "    {ty} acc = {};", reduce_init(op, d)?);
    let _ = writeln!(body, "    for (long long r = 0; r < {count}LL; ++r) {{");
    let _ = writeln!(
        body,
        "      const {ty} x = {};",
        el.loaded(&format!("in0[base + {}]", offset_expr("r", &reduced)?))
    );
    let _ = writeln!(
        body,
        "      acc = r == 0 ? x : ({ty}){};",
        reduce_combine(op, d, "acc", "x")
    );
    body.push_str("    }\n");
    let _ = writeln!(body, "    out0[i] = {};", el.stored("acc"));
    let params = vec![
        format!("const {stored}* __restrict__ in0"),
        format!("{stored}* __restrict__ out0"),
    ];
    let access = Access {
        inner: 1,
        size: crate::array::checked_size(shape)?,
    };
    Ok(finish(params, &body, vec![(x, access)], vec![out], len))
}

/// Whether a cumulative op has a device kernel (`cumlogsumexp` runs on the
/// host; of complex elements only `cumsum` and `cumprod` run here).
pub fn cumulative_lowers(op: CumOp, d: DType) -> bool {
    let real = accumulates_on_device(d) && d != DType::Bool && op != CumOp::Logsumexp;
    real || (d.is_complex() && matches!(op, CumOp::Sum | CumOp::Prod))
}

/// `cum<op>(x, axis, reverse)`: one thread per line along `axis`, the
/// running value updated element by element.
pub fn cumulative_kernel(
    op: CumOp, d: DType, shape: &[usize], axis: usize, reverse: bool, x: Var, out: Var,
) -> Result<KernelSource> {
    if !cumulative_lowers(op, d) {
        return Err(unsupported(format!("cumulative {op:?} of {}", d.name())));
    }
    let el = elements(d)?;
    let (d, ty, stored) = (el.compute, c_ty(el.compute)?, el.storage);
    let bin = match op {
        CumOp::Sum => BinaryOp::Add,
        CumOp::Prod => BinaryOp::Mul,
        CumOp::Max => BinaryOp::Max,
        CumOp::Min => BinaryOp::Min,
        CumOp::Logsumexp => return Err(unsupported("cumlogsumexp".into())),
    };
    let size = crate::array::checked_size(shape)?;
    let (n_axis, inner) = axis_layout(shape, axis)?;
    let lines = size.checked_div(n_axis).unwrap_or(0);
    let line_len = n_axis
        .checked_mul(inner)
        .ok_or_else(|| unsupported("size overflow".into()))?;
    let mut body = String::new();
    let _ = writeln!(
        body,
        "    const long long base = (i / {inner}LL) * {line_len}LL + i % {inner}LL;"
    );
    // The golden text of the real kernels keeps `(T)0`; a complex zero is
    // a struct literal.
    let zero = if d.is_complex() {
        c_literal(Scalar::Int(0), d)?
    } else {
        format!("({ty})0")
    };
    let _ = writeln!(body, "    {ty} acc = {zero};");
    let _ = writeln!(body, "    for (long long j = 0; j < {n_axis}LL; ++j) {{");
    let pos = if reverse {
        format!("({}LL - 1 - j)", n_axis)
    } else {
        "j".to_string()
    };
    let _ = writeln!(body, "      const long long k = base + {pos} * {inner}LL;");
    let _ = writeln!(body, "      const {ty} x = {};", el.loaded("in0[k]"));
    let _ = writeln!(
        body,
        "      acc = j == 0 ? x : ({ty}){};",
        binary_expr(bin, d, "acc", "x")
    );
    let _ = writeln!(body, "      out0[k] = {};\n    }}", el.stored("acc"));
    let params = vec![
        format!("const {stored}* __restrict__ in0"),
        format!("{stored}* __restrict__ out0"),
    ];
    let access = Access { inner: 1, size };
    Ok(finish(params, &body, vec![(x, access)], vec![out], lines))
}

/// `argmax`/`argmin(x, axis)` into `index` integers: one thread per line,
/// the first extreme element wins and the first NaN beats everything, as
/// on the CPU.
pub fn arg_kernel(
    op: ArgOp, d: DType, shape: &[usize], axis: usize, index: DType, vars: (Var, Var),
) -> Result<KernelSource> {
    if !accumulates_on_device(d) {
        return Err(unsupported(format!("argmax/argmin of {}", d.name())));
    }
    let el = elements(d)?;
    let ty = c_ty(el.compute)?;
    let ity = c_ty(index)?;
    if !index.is_int() {
        return Err(unsupported(format!("argmax indices of {}", index.name())));
    }
    let size = crate::array::checked_size(shape)?;
    let (n, inner) = axis_layout(shape, axis)?;
    let line = n
        .checked_mul(inner)
        .ok_or_else(|| unsupported("size overflow".into()))?;
    let outer = size.checked_div(line).unwrap_or(0);
    let len = if n == 0 {
        // No elements along the axis: every index is 0.
        shape
            .iter()
            .enumerate()
            .filter(|(a, _)| *a != axis)
            .try_fold(1usize, |acc, (_, &s)| acc.checked_mul(s))
            .ok_or_else(|| unsupported("size overflow".into()))?
    } else {
        outer
            .checked_mul(inner)
            .ok_or_else(|| unsupported("size overflow".into()))?
    };
    let better = if op == ArgOp::Argmax { ">" } else { "<" };
    let mut body = String::new();
    if n == 0 {
        let _ = writeln!(body, "    out0[i] = ({ity})0;");
    } else {
        let at = |k: &str| el.loaded(&format!("in0[base + {k} * {inner}LL]"));
        let _ = writeln!(
            body,
            "    const long long base = (i / {inner}LL) * {line}LL + i % {inner}LL;"
        );
        let _ = writeln!(body, "    {ty} best = {};", at("0LL"));
        let _ = writeln!(body, "    long long bi = 0;");
        let _ = writeln!(body, "    if (best == best) {{");
        let _ = writeln!(body, "      for (long long k = 1; k < {n}LL; ++k) {{");
        let _ = writeln!(body, "        const {ty} v = {};", at("k"));
        let _ = writeln!(body, "        if (v != v) {{ bi = k; break; }}");
        let _ = writeln!(body, "        if (v {better} best) {{ best = v; bi = k; }}");
        let _ = writeln!(body, "      }}");
        let _ = writeln!(body, "    }}");
        let _ = writeln!(body, "    out0[i] = ({ity})bi;");
    }
    let params = vec![
        format!("const {}* __restrict__ in0", el.storage),
        format!("{ity}* __restrict__ out0"),
    ];
    let (x, out) = vars;
    Ok(finish(
        params,
        &body,
        vec![(x, Access { inner: 1, size })],
        vec![out],
        len,
    ))
}

/// `iota(dtype, shape, dimension)`: element `i` is its coordinate along
/// `dimension`.
pub fn iota_kernel(d: DType, shape: &[usize], dimension: usize, out: Var) -> Result<KernelSource> {
    let ty = c_ty(d)?;
    let len = crate::array::checked_size(shape)?;
    let size = *shape
        .get(dimension)
        .ok_or_else(|| unsupported(format!("iota dimension {dimension} of {shape:?}")))?;
    let inner = inner_size(shape, dimension)?;
    let coord = format!("((i / {inner}LL) % {size}LL)");
    let value = if d.is_complex() {
        // The coordinate as the real part, a zero imaginary part.
        let t = super::complex::part_c(d);
        format!("mj_cmake<{t}>(({t}){coord}, ({t})0)")
    } else {
        format!("({ty}){coord}")
    };
    let mut body = String::new();
    let _ = writeln!(body, "    out0[i] = {value};");
    let params = vec![format!("{ty}* __restrict__ out0")];
    Ok(finish(params, &body, Vec::new(), vec![out], len))
}

/// Threefry-2x32 rotation constants, alternating every four rounds
/// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];

/// `threefry2x32(k0, k1, x0, x1)`: four uint32 inputs (each `len` elements
/// or one), two outputs, twenty rounds unrolled at generation time.
pub fn threefry_kernel(inputs: [(Var, usize); 4], outs: [Var; 2], len: usize) -> KernelSource {
    let mut body = String::new();
    let mut params = Vec::new();
    let mut ins = Vec::new();
    for (k, (v, size)) in inputs.iter().enumerate() {
        params.push(format!("const unsigned int* __restrict__ in{k}"));
        let index = if *size == 1 { "0" } else { "i" };
        let _ = writeln!(body, "    const unsigned int a{k} = in{k}[{index}];");
        ins.push((
            *v,
            Access {
                inner: 1,
                size: *size,
            },
        ));
    }
    params.push("unsigned int* __restrict__ out0".to_string());
    params.push("unsigned int* __restrict__ out1".to_string());
    body.push_str("    const unsigned int ks[3] = {a0, a1, a0 ^ a1 ^ 0x1BD11BDAu};\n");
    body.push_str("    unsigned int x0 = a2 + ks[0];\n    unsigned int x1 = a3 + ks[1];\n");
    for group in 1u32..=5 {
        let rot = ROTATIONS
            .get(usize::from(group % 2 == 0))
            .copied()
            .unwrap_or_default();
        for r in rot {
            let back = 32u32.saturating_sub(r);
            let _ = writeln!(
                body,
                "    x0 += x1; x1 = ((x1 << {r}) | (x1 >> {back})) ^ x0;"
            );
        }
        let a = group % 3;
        let b = group.wrapping_add(1) % 3;
        let _ = writeln!(body, "    x0 += ks[{a}]; x1 += ks[{b}] + {group}u;");
    }
    body.push_str("    out0[i] = x0;\n    out1[i] = x1;\n");
    finish(params, &body, ins, outs.to_vec(), len)
}
