//! Reference kernels of `gather` and the scatters (operands already checked
//! by the shape rules in `prims/gather.rs`).
//!
//! Both walk one index space (the output for gather, the updates for
//! scatter), split each position into its indices-batch part and its window
//! part, and compute the operand position it reads or writes. Scatters apply
//! updates in row-major order of the updates, so with repeated indices the
//! last update wins (`scatter`) or all of them combine in that order.

use super::common::{for_each_element, typed, BufElem, FloatElem, HalfElem};
use super::structural::{assemble, for_each_index, offset, row_major_strides};
use crate::array::{alloc, checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::Scalar;
use crate::prims::gather::{gather_clamps, scatter_clamps, GatherParams, ScatterOp, ScatterParams};

fn internal(prim: &'static str, what: &str) -> Error {
    Error::shape(prim, &[], format!("kernel index out of range ({what})"))
}

/// The indices as i64, row-major.
fn index_values(prim: &'static str, idx: &HostArray) -> Result<Vec<i64>> {
    Ok(match idx.buffer() {
        Buffer::I8(v) => alloc::from_iter(prim, v.iter().map(|&x| i64::from(x)))?,
        Buffer::I16(v) => alloc::from_iter(prim, v.iter().map(|&x| i64::from(x)))?,
        Buffer::I32(v) => alloc::from_iter(prim, v.iter().map(|&x| i64::from(x)))?,
        Buffer::I64(v) => alloc::to_vec(prim, v)?,
        Buffer::U8(v) => alloc::from_iter(prim, v.iter().map(|&x| i64::from(x)))?,
        Buffer::U16(v) => alloc::from_iter(prim, v.iter().map(|&x| i64::from(x)))?,
        Buffer::U32(v) => alloc::from_iter(prim, v.iter().map(|&x| i64::from(x)))?,
        Buffer::U64(v) => alloc::from_iter(
            prim,
            v.iter().map(|&x| i64::try_from(x).unwrap_or(i64::MAX)),
        )?,
        other => {
            return Err(Error::dtype(
                prim,
                &[other.dtype()],
                "indices must have an integer dtype",
            ))
        }
    })
}

/// What one index-space walk needs: how positions split, and how starts are
/// read and bounded.
struct Walk<'a> {
    prim: &'static str,
    /// Operand shape and row-major strides.
    shape: &'a [usize],
    strides: Vec<usize>,
    /// Positions of the walked space that are window axes (sorted), and the
    /// operand axis each one moves along.
    window_pos: &'a [usize],
    window_axes: Vec<usize>,
    /// Window extent per operand axis (1 for collapsed/inserted/batching).
    extent: Vec<usize>,
    /// Indices batch shape, the index vector length and values.
    batch_shape: &'a [usize],
    k: usize,
    index: Vec<i64>,
    index_map: &'a [usize],
    operand_batching: &'a [usize],
    indices_batching: &'a [usize],
    clamp: bool,
}

impl<'a> Walk<'a> {
    /// The walk of operand `x` by indices `idx` under the gather/scatter
    /// dimension lists `lists` (in JAX's order); `extent` gives the window
    /// extent per operand axis from the operand axis of each window axis.
    fn new(
        prim: &'static str, x: &'a HostArray, idx: &'a HostArray, lists: [&'a [usize]; 5],
        extent: impl FnOnce(&[usize]) -> Vec<usize>, clamp: bool,
    ) -> Result<Walk<'a>> {
        let [window_pos, collapsed, index_map, operand_batching, indices_batching] = lists;
        let window_axes = window_axes(x.ndim(), collapsed, operand_batching);
        Ok(Walk {
            prim,
            shape: x.shape(),
            strides: row_major_strides(x.shape())?,
            window_pos,
            extent: extent(&window_axes),
            window_axes,
            batch_shape: idx.shape().split_last().map_or(&[][..], |(_, b)| b),
            k: idx.shape().last().copied().unwrap_or(0),
            index: index_values(prim, idx)?,
            index_map,
            operand_batching,
            indices_batching,
            clamp,
        })
    }

    /// The operand offset of the window start of every indices batch
    /// position (row-major), `None` where the window is out of bounds and
    /// the mode fills/drops it.
    fn bases(&self) -> Result<Vec<Option<usize>>> {
        let mut out = alloc::with_capacity(self.prim, checked_size(self.batch_shape)?)?;
        let mut row = 0usize;
        let mut start = vec![0usize; self.shape.len()];
        for_each_index(self.batch_shape, |g| {
            out.push(self.base(g, row, &mut start)?);
            row = row.wrapping_add(self.k);
            Ok(())
        })?;
        // A rank-0 batch shape still has one position.
        if self.batch_shape.is_empty() && out.is_empty() {
            out.push(self.base(&[], 0, &mut start)?);
        }
        Ok(out)
    }

    fn base(&self, g: &[usize], row: usize, start: &mut [usize]) -> Result<Option<usize>> {
        start.fill(0);
        for (j, &axis) in self.index_map.iter().enumerate() {
            let raw = *self
                .index
                .get(row.wrapping_add(j))
                .ok_or_else(|| internal(self.prim, "index"))?;
            let n = self.shape.get(axis).copied().unwrap_or(0);
            let hi = n.saturating_sub(self.extent.get(axis).copied().unwrap_or(0));
            let hi_i = i64::try_from(hi).unwrap_or(i64::MAX);
            let v = if self.clamp {
                raw.clamp(0, hi_i)
            } else if raw < 0 || raw > hi_i {
                return Ok(None);
            } else {
                raw
            };
            if let Some(slot) = start.get_mut(axis) {
                *slot = usize::try_from(v).unwrap_or(0);
            }
        }
        for (&axis, &ib) in self.operand_batching.iter().zip(self.indices_batching) {
            if let (Some(slot), Some(&v)) = (start.get_mut(axis), g.get(ib)) {
                *slot = v;
            }
        }
        Ok(Some(offset(start.iter().copied(), &self.strides)))
    }

    /// The operand offset of every window position (row-major over the
    /// window extents in `window_axes` order).
    fn window_offsets(&self, window_shape: &[usize]) -> Result<Vec<usize>> {
        let wstrides: Vec<usize> = self
            .window_axes
            .iter()
            .map(|&a| self.strides.get(a).copied().unwrap_or(0))
            .collect();
        let mut out = alloc::with_capacity(self.prim, checked_size(window_shape)?)?;
        for_each_index(window_shape, |w| {
            out.push(offset(w.iter().copied(), &wstrides));
            Ok(())
        })?;
        if window_shape.is_empty() && out.is_empty() {
            out.push(0);
        }
        Ok(out)
    }

    /// Calls `f(walk position linear index, operand offset or None)` for
    /// every position of the walked space of `shape`.
    fn for_each(
        &self, shape: &[usize], mut f: impl FnMut(usize, Option<usize>) -> Result<()>,
    ) -> Result<()> {
        let window_shape: Vec<usize> = self
            .window_pos
            .iter()
            .map(|&p| shape.get(p).copied().unwrap_or(0))
            .collect();
        let bases = self.bases()?;
        let woffs = self.window_offsets(&window_shape)?;
        // Per walked axis: its stride in the batch or the window space.
        let bstrides = row_major_strides(self.batch_shape)?;
        let wstrides = row_major_strides(&window_shape)?;
        let (mut bi, mut wi) = (bstrides.iter(), wstrides.iter());
        let split: Vec<(bool, usize)> = (0..shape.len())
            .map(|p| {
                if self.window_pos.contains(&p) {
                    (true, wi.next().copied().unwrap_or(0))
                } else {
                    (false, bi.next().copied().unwrap_or(0))
                }
            })
            .collect();
        let mut k = 0usize;
        for_each_index(shape, |pos| {
            let (mut g, mut w) = (0usize, 0usize);
            for (&i, &(is_window, stride)) in pos.iter().zip(&split) {
                let t = i.wrapping_mul(stride);
                if is_window {
                    w = w.wrapping_add(t);
                } else {
                    g = g.wrapping_add(t);
                }
            }
            let base = *bases.get(g).ok_or_else(|| internal(self.prim, "batch"))?;
            let woff = *woffs.get(w).ok_or_else(|| internal(self.prim, "window"))?;
            f(k, base.map(|b| b.wrapping_add(woff)))?;
            k = k.wrapping_add(1);
            Ok(())
        })
    }
}

fn window_axes(n: usize, removed: &[usize], batching: &[usize]) -> Vec<usize> {
    (0..n)
        .filter(|d| !removed.contains(d) && !batching.contains(d))
        .collect()
}

/// The value a filled gather window holds (also the CUDA kernels').
pub(crate) fn default_fill(dtype: DType) -> Scalar {
    match dtype {
        DType::Bool => Scalar::Bool(true),
        DType::I8 => Scalar::Int(i64::from(i8::MIN)),
        DType::I16 => Scalar::Int(i64::from(i16::MIN)),
        DType::I32 => Scalar::Int(i64::from(i32::MIN)),
        DType::I64 => Scalar::Int(i64::MIN),
        DType::U8 => Scalar::UInt(u64::from(u8::MAX)),
        DType::U16 => Scalar::UInt(u64::from(u16::MAX)),
        DType::U32 => Scalar::UInt(u64::from(u32::MAX)),
        DType::U64 => Scalar::UInt(u64::MAX),
        _ => Scalar::Float(f64::NAN),
    }
}

/// `gather(x, idx)` for an output of `out_shape`.
pub fn gather(
    g: &GatherParams, x: &HostArray, idx: &HostArray, out_shape: &[usize],
) -> Result<Buffer> {
    let prim = "gather";
    let extent = |_: &[usize]| g.slice_sizes.clone();
    let walk = Walk::new(prim, x, idx, g.dims.lists(), extent, gather_clamps(g))?;
    let mut picks = alloc::with_capacity(prim, checked_size(out_shape)?)?;
    walk.for_each(out_shape, |_, off| {
        picks.push(match off {
            Some(off) => (0, off),
            None => (1, 0),
        });
        Ok(())
    })?;
    let fill = g.fill_value.unwrap_or_else(|| default_fill(x.dtype()));
    let fill = HostArray::scalar(fill, x.dtype())?;
    assemble(prim, &[x.buffer(), fill.buffer()], &picks)
}

/// `(update offset, operand offset)` of every update element that lands.
fn scatter_targets(
    s: &ScatterParams, x: &HostArray, idx: &HostArray, u: &HostArray,
) -> Result<Vec<(usize, usize)>> {
    let prim = s.op.name();
    let extent = |axes: &[usize]| {
        let mut extent = vec![1usize; x.ndim()];
        for (&axis, &ud) in axes.iter().zip(&s.dims.update_window_dims) {
            if let (Some(e), Some(&n)) = (extent.get_mut(axis), u.shape().get(ud)) {
                *e = n;
            }
        }
        extent
    };
    let walk = Walk::new(prim, x, idx, s.dims.lists(), extent, scatter_clamps(s))?;
    let mut out = alloc::with_capacity(prim, u.size())?;
    walk.for_each(u.shape(), |k, off| {
        if let Some(t) = off {
            out.push((k, t));
        }
        Ok(())
    })?;
    Ok(out)
}

/// How an update combines with the value already there.
trait Combine: Copy {
    fn combine(op: ScatterOp, a: Self, b: Self) -> Self;
}

/// `Combine` for the types `$t`, given how `$a` and `$b` add, multiply and
/// take the min and the max (set is always `$b`).
macro_rules! impl_combine {
    ($(|$a:ident, $b:ident| $add:expr, $mul:expr, $min:expr, $max:expr => $($t:ident),*;)*) => {$($(
        impl Combine for $t {
            #[inline(always)]
            fn combine(op: ScatterOp, $a: Self, $b: Self) -> Self {
                match op {
                    ScatterOp::Set => $b,
                    ScatterOp::Add => $add,
                    ScatterOp::Mul => $mul,
                    ScatterOp::Min => $min,
                    ScatterOp::Max => $max,
                }
            }
        }
    )*)*};
}
impl_combine! {
    |a, b| a.wrapping_add(b), a.wrapping_mul(b), a.min(b), a.max(b)
        => i8, i16, i32, i64, u8, u16, u32, u64;
    |a, b| FloatElem::add(a, b), FloatElem::mul(a, b), a.min_nan(b), a.max_nan(b) => f32, f64;
}

macro_rules! impl_combine_half {
    ($($t:ident),*) => {$(
        impl Combine for half::$t {
            #[inline(always)]
            fn combine(op: ScatterOp, a: Self, b: Self) -> Self {
                let r = f32::combine(op, HalfElem::to_f32(a), HalfElem::to_f32(b));
                <half::$t as HalfElem>::from_f32(r)
            }
        }
    )*};
}
impl_combine_half!(f16, bf16);

/// Complex scatters add or multiply; `min`/`max` never reach here (the
/// shape rule rejects them for complex operands) and keep the old value.
macro_rules! impl_combine_complex {
    ($($t:ident),*) => {$(
        impl Combine for crate::array::$t {
            #[inline(always)]
            fn combine(op: ScatterOp, a: Self, b: Self) -> Self {
                match op {
                    ScatterOp::Set => b,
                    ScatterOp::Add => a + b,
                    ScatterOp::Mul => a * b,
                    ScatterOp::Min | ScatterOp::Max => a,
                }
            }
        }
    )*};
}
impl_combine_complex!(C32, C64);

impl Combine for bool {
    #[inline(always)]
    fn combine(op: ScatterOp, a: Self, b: Self) -> Self {
        match op {
            ScatterOp::Set => b,
            ScatterOp::Add | ScatterOp::Max => a | b,
            ScatterOp::Mul | ScatterOp::Min => a & b,
        }
    }
}

fn combine_all<T: Combine + BufElem>(
    prim: &'static str, op: ScatterOp, x: &Buffer, u: &Buffer, targets: &[(usize, usize)],
) -> Result<Buffer> {
    let mut out: Vec<T> = alloc::to_vec(prim, typed::<T>(prim, x)?)?;
    let ups = typed::<T>(prim, u)?;
    for &(k, t) in targets {
        let v = *ups.get(k).ok_or_else(|| internal(prim, "update"))?;
        let slot = out.get_mut(t).ok_or_else(|| internal(prim, "target"))?;
        *slot = T::combine(op, *slot, v);
    }
    Ok(T::wrap(out))
}

/// `scatter*(x, idx, u)`.
pub fn scatter(s: &ScatterParams, x: &HostArray, idx: &HostArray, u: &HostArray) -> Result<Buffer> {
    let prim = s.op.name();
    let targets = scatter_targets(s, x, idx, u)?;
    if s.op == ScatterOp::Set {
        // Picks work for every dtype (keys and float0 too).
        let mut picks: Vec<(usize, usize)> = alloc::from_iter(prim, (0..x.size()).map(|i| (0, i)))?;
        for &(k, t) in &targets {
            let slot = picks.get_mut(t).ok_or_else(|| internal(prim, "target"))?;
            *slot = (1, k);
        }
        return assemble(prim, &[x.buffer(), u.buffer()], &picks);
    }
    if matches!(s.op, ScatterOp::Min | ScatterOp::Max) && x.dtype().is_complex() {
        return Err(Error::dtype(
            prim,
            &[x.dtype()],
            "complex operands are not supported yet",
        ));
    }
    for_each_element!(x.dtype(), T => combine_all::<T>(prim, s.op, x.buffer(), u.buffer(), &targets),
        other => Err(Error::dtype(prim, &[other], "expected a numeric or bool operand")))
}
