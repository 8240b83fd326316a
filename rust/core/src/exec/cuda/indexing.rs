//! CUDA C for `gather` and the scatters: the index walk of the CPU kernels
//! (`prims/kernels/gather.rs`) unrolled into generated code, every shape,
//! stride and axis map a constant of the text.
//!
//! * `gather`: one thread per output element. Its position splits into an
//!   indices-batch position `g` (the non-offset output axes) and a window
//!   position (the offset axes); the window start comes from the index
//!   vector `indices[g, :]` (clamped, or the element filled when the window
//!   is out of bounds, as the mode says) plus the operand-batching axes.
//! * scatters: the output starts as a copy of the operand (a device copy
//!   before the launch); then one thread per update-window element walks
//!   every batch position `g` in row-major order and combines its update
//!   into the output. Only lowered when every indexed operand axis has a
//!   window extent of 1: then two updates can only land on the same element
//!   from the same window element, i.e. in the same thread, in the CPU's
//!   order — deterministic, no atomics. Other scatters run on the host.

use super::codegen::{c_literal, c_type, finish, KernelSource};
use super::kernels::{c_ty, strides, unsupported};
use crate::array::checked_size;
use crate::dtype::DType;
use crate::error::Result;
use crate::exec::compiled::fusion::Access;
use crate::ir::{Aval, Var};
use crate::prims::gather::{GatherParams, ScatterOp, ScatterParams};
use std::fmt::Write;

/// Operand axes a window moves along: not removed (collapsed / inserted)
/// and not batching axes, in order.
fn window_axes(rank: usize, removed: &[usize], batching: &[usize]) -> Vec<usize> {
    (0..rank)
        .filter(|d| !removed.contains(d) && !batching.contains(d))
        .collect()
}

/// The index walk shared by both kernels.
struct Walk<'a> {
    operand: &'a [usize],
    /// Window extent per operand axis.
    extent: Vec<usize>,
    /// Indices shape without the index-vector axis, and that axis's length.
    batch_shape: &'a [usize],
    k: usize,
    index_ty: DType,
    index_map: &'a [usize],
    operand_batching: &'a [usize],
    indices_batching: &'a [usize],
    clamp: bool,
}

impl Walk<'_> {
    /// Lines computing `off` (the operand offset of the window start of
    /// batch position `g`, coordinates `b0..` given by `batch_coord`) and
    /// `ok` (whether the window is in bounds, always true when clamping).
    fn start_lines(
        &self, body: &mut String, pad: &str, batch_coord: &dyn Fn(usize) -> String,
    ) -> Result<()> {
        let ostrides = strides(self.operand)?;
        let _ = writeln!(body, "{pad}long long off = 0;");
        let _ = writeln!(body, "{pad}bool ok = true;");
        for (j, &axis) in self.index_map.iter().enumerate() {
            let n = *self
                .operand
                .get(axis)
                .ok_or_else(|| unsupported(format!("index map axis {axis}")))?;
            let hi = n.saturating_sub(self.extent.get(axis).copied().unwrap_or(0));
            let raw = format!("in_idx[g * {}LL + {j}LL]", self.k);
            // Unsigned 64-bit indices above i64::MAX read as i64::MAX, as
            // on the CPU.
            let value = if self.index_ty == DType::U64 {
                format!(
                    "({raw} > 9223372036854775807ULL ? 9223372036854775807LL : (long long){raw})"
                )
            } else {
                format!("(long long){raw}")
            };
            let _ = writeln!(body, "{pad}{{");
            let _ = writeln!(body, "{pad}  long long s = {value};");
            if self.clamp {
                let _ = writeln!(body, "{pad}  s = s < 0 ? 0 : (s > {hi}LL ? {hi}LL : s);");
            } else {
                let _ = writeln!(body, "{pad}  ok = ok && s >= 0 && s <= {hi}LL;");
            }
            let stride = ostrides.get(axis).copied().unwrap_or(0);
            let _ = writeln!(body, "{pad}  off += s * {stride}LL;");
            let _ = writeln!(body, "{pad}}}");
        }
        for (&axis, &ib) in self.operand_batching.iter().zip(self.indices_batching) {
            let stride = ostrides.get(axis).copied().unwrap_or(0);
            let _ = writeln!(body, "{pad}off += {} * {stride}LL;", batch_coord(ib));
        }
        Ok(())
    }

    fn operand_stride(&self, axis: usize) -> Result<usize> {
        strides(self.operand)?
            .get(axis)
            .copied()
            .ok_or_else(|| unsupported(format!("operand axis {axis}")))
    }
}

/// The index vector's length and the indices' batch shape.
fn split_indices(idx: &[usize]) -> (usize, &[usize]) {
    match idx.split_last() {
        Some((&k, batch)) => (k, batch),
        None => (0, &[]),
    }
}

/// `coord_p = (pos / stride_p) % size_p` for every axis of `shape`.
fn coords(body: &mut String, pad: &str, name: &str, pos: &str, shape: &[usize]) -> Result<()> {
    for (p, (&size, &stride)) in shape.iter().zip(&strides(shape)?).enumerate() {
        let _ = writeln!(
            body,
            "{pad}const long long {name}{p} = ({pos} / {stride}LL) % {}LL;",
            size.max(1)
        );
    }
    Ok(())
}

/// Shapes and dtypes of a gather or scatter equation.
pub struct IndexedShapes<'a> {
    pub operand: &'a [usize],
    pub dtype: DType,
    pub indices: &'a [usize],
    pub index_dtype: DType,
    /// The gather's output, or the scatter's updates.
    pub other: &'a [usize],
}

impl<'a> IndexedShapes<'a> {
    /// The shapes of an equation over `operand` and `indices`, `None` when
    /// the device cannot run it (f16/bf16/key elements, non-integer
    /// indices).
    pub fn of(operand: &'a Aval, indices: &'a Aval, other: &'a [usize]) -> Option<Self> {
        let lowers = c_ty(operand.dtype).is_ok()
            && indices.dtype.is_int()
            && c_type(indices.dtype).is_some();
        lowers.then_some(IndexedShapes {
            operand: &operand.shape,
            dtype: operand.dtype,
            indices: &indices.shape,
            index_dtype: indices.dtype,
            other,
        })
    }
}

/// The kernel of `gather(x, idx)` (`vars`: operand, indices, output).
pub fn gather_kernel(g: &GatherParams, s: &IndexedShapes, vars: [Var; 3]) -> Result<KernelSource> {
    let ty = c_ty(s.dtype)?;
    let ity = c_ty(s.index_dtype)?;
    if !s.index_dtype.is_int() {
        return Err(unsupported("gather indices must be integers".into()));
    }
    let d = &g.dims;
    let (k, batch_shape) = split_indices(s.indices);
    let walk = Walk {
        operand: s.operand,
        extent: g.slice_sizes.clone(),
        batch_shape,
        k,
        index_ty: s.index_dtype,
        index_map: &d.start_index_map,
        operand_batching: &d.operand_batching_dims,
        indices_batching: &d.start_indices_batching_dims,
        clamp: crate::prims::gather::gather_clamps(g),
    };
    let out = s.other;
    let len = checked_size(out)?;
    let mut body = String::new();
    coords(&mut body, "    ", "c", "i", out)?;
    // Output axes that are not offset axes index the batch, in order.
    let batch_axes: Vec<usize> = (0..out.len())
        .filter(|p| !d.offset_dims.contains(p))
        .collect();
    let bstrides = strides(walk.batch_shape)?;
    let g_terms: Vec<String> = batch_axes
        .iter()
        .zip(&bstrides)
        .map(|(p, st)| format!("c{p} * {st}LL"))
        .collect();
    let _ = writeln!(body, "    const long long g = {};", join_sum(&g_terms));
    let batch_coord = |ib: usize| {
        batch_axes
            .get(ib)
            .map_or_else(|| "0LL".to_string(), |p| format!("c{p}"))
    };
    walk.start_lines(&mut body, "    ", &batch_coord)?;
    let axes = window_axes(
        s.operand.len(),
        &d.collapsed_slice_dims,
        &d.operand_batching_dims,
    );
    for (&p, &axis) in d.offset_dims.iter().zip(&axes) {
        let _ = writeln!(body, "    off += c{p} * {}LL;", walk.operand_stride(axis)?);
    }
    let fill = c_literal(
        g.fill_value
            .unwrap_or_else(|| crate::prims::kernel::gather_default_fill(s.dtype)),
        s.dtype,
    )?;
    let _ = writeln!(body, "    out0[i] = ok ? in_x[off] : {fill};");
    let params = vec![
        format!("const {ty}* __restrict__ in_x"),
        format!("const {ity}* __restrict__ in_idx"),
        format!("{ty}* __restrict__ out0"),
    ];
    let [x, idx, o] = vars;
    let full = |n: usize| Access { inner: 1, size: n };
    let inputs = vec![
        (x, full(checked_size(s.operand)?)),
        (idx, full(checked_size(s.indices)?)),
    ];
    Ok(finish(params, &body, inputs, vec![o], len))
}

fn join_sum(terms: &[String]) -> String {
    if terms.is_empty() {
        "0LL".to_string()
    } else {
        terms.join(" + ")
    }
}

/// The C statement combining update `u` into `out0[off]`.
fn combine(op: ScatterOp, d: DType, ty: &str) -> String {
    let slot = "out0[off]";
    let e = match (op, d) {
        (ScatterOp::Set, _) => "u".to_string(),
        (ScatterOp::Add | ScatterOp::Max, DType::Bool) => format!("({slot} | u)"),
        (ScatterOp::Mul | ScatterOp::Min, DType::Bool) => format!("({slot} & u)"),
        // Integer arithmetic wraps, as on the CPU (no signed overflow in C).
        (ScatterOp::Add, _) if d.is_int() => {
            format!("({ty})((unsigned long long){slot} + (unsigned long long)u)")
        }
        (ScatterOp::Mul, _) if d.is_int() => {
            format!("({ty})((unsigned long long){slot} * (unsigned long long)u)")
        }
        (ScatterOp::Add, _) => format!("({slot} + u)"),
        (ScatterOp::Mul, _) => format!("({slot} * u)"),
        (ScatterOp::Min | ScatterOp::Max, _) => {
            let pick = if op == ScatterOp::Min { "<" } else { ">" };
            if d.is_float() {
                // NaN in either wins, as on the CPU.
                format!(
                    "({slot} != {slot} ? {slot} : (u != u ? u : ({slot} {pick} u ? {slot} : u)))"
                )
            } else {
                format!("({slot} {pick} u ? {slot} : u)")
            }
        }
    };
    format!("{slot} = {e};")
}

/// Whether a scatter's combination of `d` elements has a device formula:
/// all of them for real dtypes; set, add and multiply for complex ones
/// (complex min/max order lexicographically and run on the host).
pub fn scatter_combines(op: ScatterOp, d: DType) -> bool {
    !d.is_complex() || matches!(op, ScatterOp::Set | ScatterOp::Add | ScatterOp::Mul)
}

/// Whether a scatter has a deterministic device kernel: every indexed
/// operand axis has a window extent of 1 (see the module docs).
pub fn scatter_lowers(sp: &ScatterParams, operand_rank: usize, updates: &[usize]) -> bool {
    let d = &sp.dims;
    let axes = window_axes(
        operand_rank,
        &d.inserted_window_dims,
        &d.operand_batching_dims,
    );
    d.scatter_dims_to_operand_dims.iter().all(|a| {
        match axes.iter().position(|w| w == a) {
            // An indexed axis that is also a window axis: its extent is the
            // updates' size along the matching window dim.
            Some(j) => d
                .update_window_dims
                .get(j)
                .and_then(|&ud| updates.get(ud))
                .is_some_and(|&n| n == 1),
            None => true,
        }
    })
}

/// The index walk of a scatter: windows of the updates' window extent on
/// the operand axes `axes` they map to, 1 elsewhere.
fn scatter_walk<'a>(sp: &'a ScatterParams, s: &IndexedShapes<'a>, axes: &[usize]) -> Walk<'a> {
    let d = &sp.dims;
    let (k, batch_shape) = split_indices(s.indices);
    let updates = s.other;
    let mut extent = vec![1usize; s.operand.len()];
    for (&axis, &ud) in axes.iter().zip(&d.update_window_dims) {
        if let (Some(e), Some(&n)) = (extent.get_mut(axis), updates.get(ud)) {
            *e = n;
        }
    }
    Walk {
        operand: s.operand,
        extent,
        batch_shape,
        k,
        index_ty: s.index_dtype,
        index_map: &d.scatter_dims_to_operand_dims,
        operand_batching: &d.operand_batching_dims,
        indices_batching: &d.scatter_indices_batching_dims,
        clamp: crate::prims::gather::scatter_clamps(sp),
    }
}

/// The body of the scatter kernel: each thread takes one element of the
/// update window (`window_shape`) and combines it into the operand at every
/// batch position, in order.
fn scatter_body(
    sp: &ScatterParams, s: &IndexedShapes, walk: &Walk, axes: &[usize], window_shape: &[usize],
) -> Result<String> {
    let d = &sp.dims;
    let ty = c_ty(s.dtype)?;
    let updates = s.other;
    let batch_shape = walk.batch_shape;
    let ustrides = strides(updates)?;
    let batch_pos: Vec<usize> = (0..updates.len())
        .filter(|p| !d.update_window_dims.contains(p))
        .collect();
    let mut body = String::new();
    // This thread's window element: its operand and update offsets.
    coords(&mut body, "    ", "w", "i", window_shape)?;
    let mut woff = Vec::new();
    let mut uoff = Vec::new();
    for (j, (&axis, &p)) in axes.iter().zip(&d.update_window_dims).enumerate() {
        woff.push(format!("w{j} * {}LL", walk.operand_stride(axis)?));
        uoff.push(format!(
            "w{j} * {}LL",
            ustrides.get(p).copied().unwrap_or(0)
        ));
    }
    let _ = writeln!(body, "    const long long woff = {};", join_sum(&woff));
    let _ = writeln!(body, "    const long long uwin = {};", join_sum(&uoff));
    let batch = checked_size(batch_shape)?;
    let _ = writeln!(body, "    for (long long g = 0; g < {batch}LL; ++g) {{");
    coords(&mut body, "      ", "b", "g", batch_shape)?;
    let batch_coord = |ib: usize| {
        if ib < batch_shape.len() {
            format!("b{ib}")
        } else {
            "0LL".to_string()
        }
    };
    walk.start_lines(&mut body, "      ", &batch_coord)?;
    let uterms: Vec<String> = batch_pos
        .iter()
        .enumerate()
        .map(|(t, &p)| format!("b{t} * {}LL", ustrides.get(p).copied().unwrap_or(0)))
        .collect();
    let _ = writeln!(body, "      if (ok) {{");
    let _ = writeln!(body, "        off += woff;");
    let _ = writeln!(
        body,
        "        const {ty} u = in_u[uwin + {}];",
        join_sum(&uterms)
    );
    let _ = writeln!(body, "        {}", combine(sp.op, s.dtype, ty));
    let _ = writeln!(body, "      }}");
    let _ = writeln!(body, "    }}");
    Ok(body)
}

/// The kernel of `scatter*(x, idx, u)` into an output already holding `x`
/// (`vars`: indices, updates, output). Its work items are the update
/// window's elements.
pub fn scatter_kernel(
    sp: &ScatterParams, s: &IndexedShapes, vars: [Var; 3],
) -> Result<KernelSource> {
    let ty = c_ty(s.dtype)?;
    let ity = c_ty(s.index_dtype)?;
    if !s.index_dtype.is_int() {
        return Err(unsupported("scatter indices must be integers".into()));
    }
    if !scatter_lowers(sp, s.operand.len(), s.other) {
        return Err(unsupported("scatter with overlapping windows".into()));
    }
    if !scatter_combines(sp.op, s.dtype) {
        return Err(unsupported(format!(
            "scatter-{:?} of {}",
            sp.op,
            s.dtype.name()
        )));
    }
    let d = &sp.dims;
    let axes = window_axes(
        s.operand.len(),
        &d.inserted_window_dims,
        &d.operand_batching_dims,
    );
    let walk = scatter_walk(sp, s, &axes);
    let updates = s.other;
    let window_shape: Vec<usize> = d
        .update_window_dims
        .iter()
        .map(|&p| updates.get(p).copied().unwrap_or(0))
        .collect();
    let body = scatter_body(sp, s, &walk, &axes, &window_shape)?;
    let params = vec![
        format!("const {ity}* __restrict__ in_idx"),
        format!("const {ty}* __restrict__ in_u"),
        format!("{ty}* __restrict__ out0"),
    ];
    let [idx, u, o] = vars;
    let full = |n: usize| Access { inner: 1, size: n };
    let inputs = vec![
        (idx, full(checked_size(s.indices)?)),
        (u, full(checked_size(updates)?)),
    ];
    Ok(finish(
        params,
        &body,
        inputs,
        vec![o],
        checked_size(&window_shape)?,
    ))
}
