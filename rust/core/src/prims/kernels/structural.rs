//! Data-movement kernels: `broadcast_in_dim`, `transpose` (general strided
//! copies), `reshape`/`squeeze` (same data, new shape) and `iota`.
//!
//! Keys move as pairs of u32 words: a key array of shape `s` is handled as a
//! u32 array of shape `s + (2,)`. Float0 arrays carry no data.

use super::common::{bad_dtype, for_each_element, typed, BufElem, FromIndex};
use crate::array::{alloc, checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};

fn internal(prim: &'static str, what: &str) -> Error {
    Error::shape(prim, &[], format!("kernel index out of range ({what})"))
}

/// Row-major strides (in elements) of `shape`.
pub fn row_major_strides(shape: &[usize]) -> Result<Vec<usize>> {
    let mut strides = vec![0usize; shape.len()];
    let mut acc = 1usize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.checked_mul(d).ok_or_else(|| Error::Overflow {
            what: "strides",
            detail: format!("shape {shape:?}"),
        })?;
    }
    Ok(strides)
}

/// Drops size-1 dims and merges neighbours that are contiguous in the
/// source (`stride[j] == stride[j+1] * shape[j+1]`). Returns `None` when the
/// output is empty.
fn simplify(shape: &[usize], strides: &[usize]) -> Option<Vec<(usize, usize)>> {
    if shape.contains(&0) {
        return None;
    }
    let mut dims: Vec<(usize, usize)> = Vec::with_capacity(shape.len());
    for (&n, &s) in shape.iter().zip(strides) {
        if n == 1 {
            continue;
        }
        match dims.last_mut() {
            Some((pn, ps)) if s.checked_mul(n) == Some(*ps) => {
                *pn = pn.saturating_mul(n);
                *ps = s;
            }
            _ => dims.push((n, s)),
        }
    }
    Some(dims)
}

/// `out[i_0, .., i_k] = src[sum_j i_j * strides[j]]` for an output of
/// `shape`, in row-major order. Strides may be 0 (broadcast). Every read is
/// bounds-checked; an out-of-range stride set is an error, not a panic.
pub fn strided_gather<T: Copy>(src: &[T], shape: &[usize], strides: &[usize]) -> Result<Vec<T>> {
    let name = "strided_copy";
    let Some(dims) = simplify(shape, strides) else {
        return Ok(Vec::new());
    };
    let n = checked_size(shape)?;
    let Some((&(inner_n, inner_s), outer)) = dims.split_last() else {
        // Every dim has size 1: one element.
        let v = *src.first().ok_or_else(|| internal(name, "scalar"))?;
        return Ok(vec![v]);
    };
    // Bounds check once: the largest offset read.
    let max_off = dims.iter().try_fold(0usize, |acc, &(d, s)| {
        d.checked_sub(1)
            .and_then(|d1| d1.checked_mul(s))
            .and_then(|x| acc.checked_add(x))
    });
    match max_off {
        Some(m) if m < src.len() => {}
        _ => return Err(internal(name, "strides exceed the source")),
    }
    // 2-d transposes read down columns: tile them so both sides stay in cache.
    if let [(rows, rs)] = outer {
        if inner_s != 1 && *rs == 1 && inner_n >= 16 && *rows >= 16 {
            return transpose_2d(src, *rows, inner_n, inner_s);
        }
    }
    let mut out: Vec<T> = alloc::with_capacity(name, n)?;
    let mut counters = vec![0usize; outer.len()];
    let mut base = 0usize;
    loop {
        let run = src.get(base..).ok_or_else(|| internal(name, "run"))?;
        match inner_s {
            1 => out.extend_from_slice(run.get(..inner_n).ok_or_else(|| internal(name, "row"))?),
            0 => {
                let v = *run.first().ok_or_else(|| internal(name, "bcast"))?;
                out.extend(std::iter::repeat_n(v, inner_n));
            }
            s => out.extend(run.iter().step_by(s).take(inner_n).copied()),
        }
        // Odometer over the outer dims.
        let mut done = true;
        for (c, &(d, s)) in counters.iter_mut().zip(outer).rev() {
            *c = c.wrapping_add(1);
            base = base.wrapping_add(s);
            if *c < d {
                done = false;
                break;
            }
            *c = 0;
            base = base.wrapping_sub(s.wrapping_mul(d));
        }
        if done {
            break;
        }
    }
    Ok(out)
}

/// `out[r, c] = src[r + c * cs]` for `r < rows`, `c < cols`: blocks of
/// 32×32 are read along source rows into a stack buffer, then written
/// along output rows, so both sides stream through memory. The caller has
/// bounds-checked the largest offset.
fn transpose_2d<T: Copy>(src: &[T], rows: usize, cols: usize, cs: usize) -> Result<Vec<T>> {
    const B: usize = 32;
    let Some(&fill) = src.first() else {
        return Ok(Vec::new());
    };
    let mut out = alloc::filled("transpose", fill, rows.saturating_mul(cols))?;
    // buf[c - c0][r - r0]
    let mut buf = [[fill; B]; B];
    for (rt, out_rows) in out.chunks_mut(B.saturating_mul(cols)).enumerate() {
        let r0 = rt.wrapping_mul(B);
        let nr = out_rows.len().checked_div(cols).unwrap_or(0);
        for c0 in (0..cols).step_by(B) {
            let nc = B.min(cols.wrapping_sub(c0));
            for (dc, brow) in buf.iter_mut().enumerate().take(nc) {
                let start = c0.wrapping_add(dc).wrapping_mul(cs).wrapping_add(r0);
                let run = src.get(start..start.saturating_add(nr)).unwrap_or(&[]);
                for (b, &v) in brow.iter_mut().zip(run) {
                    *b = v;
                }
            }
            for (dr, out_row) in out_rows.chunks_exact_mut(cols).enumerate() {
                let dst = out_row
                    .get_mut(c0..c0.saturating_add(nc))
                    .unwrap_or(&mut []);
                for (d, brow) in dst.iter_mut().zip(buf.iter()) {
                    if let Some(&v) = brow.get(dr) {
                        *d = v;
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Applies a structural gather given output shape and per-output-dim source
/// strides (in elements), for every dtype.
fn gather_buffer(
    prim: &'static str, x: &Buffer, out_shape: &[usize], strides: &[usize],
) -> Result<Buffer> {
    let dtype = x.dtype();
    for_each_element!(dtype, T => {
        let v = typed::<T>(prim, x)?;
        Ok(T::wrap(strided_gather(v, out_shape, strides)?))
    },
    DType::Float0 => Ok(Buffer::Float0(checked_size(out_shape)?)),
    DType::Key => match x {
        Buffer::Key(words) => {
            let mut shape = out_shape.to_vec();
            shape.push(2);
            let mut st: Vec<usize> = strides
                .iter()
                .map(|&s| s.checked_mul(2).ok_or_else(|| internal(prim, "key stride")))
                .collect::<Result<_>>()?;
            st.push(1);
            Ok(Buffer::Key(strided_gather(words, &shape, &st)?.into()))
        }
        other => Err(bad_dtype(prim, &[other.dtype()])),
    })
}

pub fn broadcast_in_dim(x: &HostArray, shape: &[usize], bdims: &[usize]) -> Result<Buffer> {
    let name = "broadcast_in_dim";
    if x.shape() == shape {
        return x.buffer().try_clone(name);
    }
    let in_strides = row_major_strides(x.shape())?;
    let mut strides = vec![0usize; shape.len()];
    for ((&d, &s), &od) in x.shape().iter().zip(&in_strides).zip(bdims) {
        let slot = strides.get_mut(od).ok_or_else(|| internal(name, "dims"))?;
        *slot = if d == 1 { 0 } else { s };
    }
    gather_buffer(name, x.buffer(), shape, &strides)
}

pub fn transpose(x: &HostArray, perm: &[usize]) -> Result<Buffer> {
    let name = "transpose";
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return x.buffer().try_clone(name);
    }
    let in_strides = row_major_strides(x.shape())?;
    let mut shape = Vec::with_capacity(perm.len());
    let mut strides = Vec::with_capacity(perm.len());
    for &p in perm {
        shape.push(*x.shape().get(p).ok_or_else(|| internal(name, "perm"))?);
        strides.push(*in_strides.get(p).ok_or_else(|| internal(name, "perm"))?);
    }
    gather_buffer(name, x.buffer(), &shape, &strides)
}

/// `iota`: the index along `dimension`, converted to `dtype`.
pub fn iota(dtype: DType, shape: &[usize], dimension: usize) -> Result<Buffer> {
    let name = "iota";
    let dim = *shape
        .get(dimension)
        .ok_or_else(|| internal(name, "dimension"))?;
    let outer = checked_size(shape.get(..dimension).unwrap_or(&[]))?;
    let inner = checked_size(shape.get(dimension.saturating_add(1)..).unwrap_or(&[]))?;
    let n = checked_size(shape)?;
    fn fill<T: FromIndex + BufElem>(
        n: usize, outer: usize, dim: usize, inner: usize,
    ) -> Result<Buffer> {
        let mut out: Vec<T> = alloc::with_capacity("iota", n)?;
        for _ in 0..outer {
            for d in 0..dim {
                out.extend(std::iter::repeat_n(T::from_index(d), inner));
            }
        }
        Ok(T::wrap(out))
    }
    match dtype {
        DType::I8 => fill::<i8>(n, outer, dim, inner),
        DType::I16 => fill::<i16>(n, outer, dim, inner),
        DType::I32 => fill::<i32>(n, outer, dim, inner),
        DType::I64 => fill::<i64>(n, outer, dim, inner),
        DType::U8 => fill::<u8>(n, outer, dim, inner),
        DType::U16 => fill::<u16>(n, outer, dim, inner),
        DType::U32 => fill::<u32>(n, outer, dim, inner),
        DType::U64 => fill::<u64>(n, outer, dim, inner),
        DType::F16 => fill::<half::f16>(n, outer, dim, inner),
        DType::BF16 => fill::<half::bf16>(n, outer, dim, inner),
        DType::F32 => fill::<f32>(n, outer, dim, inner),
        DType::F64 => fill::<f64>(n, outer, dim, inner),
        DType::C64 => fill::<crate::array::C32>(n, outer, dim, inner),
        DType::C128 => fill::<crate::array::C64>(n, outer, dim, inner),
        DType::Bool | DType::Float0 | DType::Key => Err(bad_dtype(name, &[dtype])),
    }
}

/// Calls `f` with every multi-index of `shape`, in row-major order.
pub(super) fn for_each_index(
    shape: &[usize], mut f: impl FnMut(&[usize]) -> Result<()>,
) -> Result<()> {
    if shape.contains(&0) {
        return Ok(());
    }
    let mut idx = vec![0usize; shape.len()];
    loop {
        f(&idx)?;
        let mut done = true;
        for (i, &d) in idx.iter_mut().zip(shape).rev() {
            *i = i.wrapping_add(1);
            if *i < d {
                done = false;
                break;
            }
            *i = 0;
        }
        if done {
            return Ok(());
        }
    }
}

/// An output whose element `k` is element `picks[k].1` of `srcs[picks[k].0]`
/// (every source has one dtype), for every dtype.
pub(super) fn assemble(
    prim: &'static str, srcs: &[&Buffer], picks: &[(usize, usize)],
) -> Result<Buffer> {
    let dtype = srcs
        .first()
        .map(|b| b.dtype())
        .ok_or_else(|| internal(prim, "no operand"))?;
    for_each_element!(dtype, T => {
        let slices: Vec<&[T]> = srcs.iter().map(|b| typed::<T>(prim, b)).collect::<Result<_>>()?;
        let out: Vec<T> = alloc::try_from_iter(
            prim,
            picks.iter().map(|&(s, i)| {
                slices
                    .get(s)
                    .and_then(|v| v.get(i))
                    .copied()
                    .ok_or_else(|| internal(prim, "pick"))
            }),
        )?;
        Ok(T::wrap(out))
    },
    DType::Float0 => Ok(Buffer::Float0(picks.len())),
    DType::Key => {
        let words: Vec<&[u32]> = srcs
            .iter()
            .map(|b| match b {
                Buffer::Key(w) => Ok(w.as_slice()),
                other => Err(bad_dtype(prim, &[other.dtype()])),
            })
            .collect::<Result<_>>()?;
        let mut out: Vec<u32> = alloc::with_capacity(prim, picks.len().saturating_mul(2))?;
        for &(s, i) in picks {
            let k = i.checked_mul(2).ok_or_else(|| internal(prim, "key pick"))?;
            let pair = words
                .get(s)
                .and_then(|w| w.get(k..k.saturating_add(2)))
                .ok_or_else(|| internal(prim, "key pick"))?;
            out.extend_from_slice(pair);
        }
        Ok(Buffer::Key(out.into()))
    })
}

/// Flat row-major offset of `idx` given `strides`.
pub(super) fn offset(idx: impl Iterator<Item = usize>, strides: &[usize]) -> usize {
    idx.zip(strides)
        .fold(0usize, |acc, (i, &s)| acc.wrapping_add(i.wrapping_mul(s)))
}

/// `rev`: reverses the axes in `dims`.
pub fn rev(x: &HostArray, dims: &[usize]) -> Result<Buffer> {
    let shape = x.shape();
    let strides = row_major_strides(shape)?;
    let mut picks = alloc::with_capacity("rev", x.size())?;
    for_each_index(shape, |idx| {
        let src = idx.iter().zip(shape).enumerate().map(|(j, (&i, &d))| {
            if dims.contains(&j) {
                d.wrapping_sub(1).wrapping_sub(i)
            } else {
                i
            }
        });
        picks.push((0, offset(src, &strides)));
        Ok(())
    })?;
    assemble("rev", &[x.buffer()], &picks)
}

/// `slice`: elements `start + i * stride` per axis, for an output of `out_shape`.
pub fn slice(
    x: &HostArray, start: &[usize], steps: Option<&[usize]>, out_shape: &[usize],
) -> Result<Buffer> {
    let strides = row_major_strides(x.shape())?;
    let ones = vec![1usize; start.len()];
    let steps = steps.unwrap_or(&ones);
    let mut picks = alloc::with_capacity("slice", checked_size(out_shape)?)?;
    for_each_index(out_shape, |idx| {
        let src = idx
            .iter()
            .zip(start)
            .zip(steps)
            .map(|((&i, &s), &st)| s.wrapping_add(i.wrapping_mul(st)));
        picks.push((0, offset(src, &strides)));
        Ok(())
    })?;
    assemble("slice", &[x.buffer()], &picks)
}

/// `pad`: output position `p` along an axis reads operand element
/// `(p - lo) / (interior + 1)` when that divides exactly and is in range,
/// else the padding value.
pub fn pad(
    x: &HostArray, pv: &HostArray, config: &[(i64, i64, i64)], out_shape: &[usize],
) -> Result<Buffer> {
    let name = "pad";
    let shape = x.shape();
    let strides = row_major_strides(shape)?;
    let mut picks = alloc::with_capacity(name, checked_size(out_shape)?)?;
    for_each_index(out_shape, |idx| {
        let mut src = 0usize;
        let mut inside = true;
        for (((&i, &d), &(lo, _, int)), &st) in idx.iter().zip(shape).zip(config).zip(&strides) {
            let p = i64::try_from(i)
                .ok()
                .and_then(|i| i.checked_sub(lo))
                .ok_or_else(|| internal(name, "position"))?;
            let step = int.saturating_add(1);
            let q = p.checked_div(step).unwrap_or(-1);
            let exact = p.checked_rem(step) == Some(0);
            match usize::try_from(q) {
                Ok(q) if p >= 0 && exact && q < d => {
                    src = src.wrapping_add(q.wrapping_mul(st));
                }
                _ => {
                    inside = false;
                    break;
                }
            }
        }
        picks.push(if inside { (0, src) } else { (1, 0) });
        Ok(())
    })?;
    assemble(name, &[x.buffer(), pv.buffer()], &picks)
}

/// `concatenate` along `dim`.
pub fn concatenate(xs: &[&HostArray], dim: usize, out_shape: &[usize]) -> Result<Buffer> {
    let name = "concatenate";
    let strides: Vec<Vec<usize>> = xs
        .iter()
        .map(|x| row_major_strides(x.shape()))
        .collect::<Result<_>>()?;
    // Start of each operand along `dim`.
    let mut starts = Vec::with_capacity(xs.len());
    let mut acc = 0usize;
    for x in xs {
        starts.push(acc);
        acc = acc.saturating_add(x.shape().get(dim).copied().unwrap_or(0));
    }
    let mut picks = alloc::with_capacity(name, checked_size(out_shape)?)?;
    for_each_index(out_shape, |idx| {
        let i = idx.get(dim).copied().ok_or_else(|| internal(name, "dim"))?;
        let k = starts
            .iter()
            .zip(xs)
            .rposition(|(&s, x)| s <= i && x.shape().get(dim).is_some_and(|&n| n > 0))
            .ok_or_else(|| internal(name, "operand"))?;
        let s = starts.get(k).copied().unwrap_or(0);
        let st = strides.get(k).ok_or_else(|| internal(name, "strides"))?;
        let src = idx
            .iter()
            .enumerate()
            .map(|(j, &v)| if j == dim { v.wrapping_sub(s) } else { v });
        picks.push((k, offset(src, st)));
        Ok(())
    })?;
    let bufs: Vec<&Buffer> = xs.iter().map(|x| x.buffer()).collect();
    if bufs.is_empty() {
        return Err(internal(name, "no operand"));
    }
    assemble(name, &bufs, &picks)
}

/// The value of a rank-0 integer operand.
fn scalar_index(prim: &'static str, x: &HostArray) -> Result<i64> {
    let v = match x.buffer() {
        Buffer::I8(v) => v.first().map(|&a| i64::from(a)),
        Buffer::I16(v) => v.first().map(|&a| i64::from(a)),
        Buffer::I32(v) => v.first().map(|&a| i64::from(a)),
        Buffer::I64(v) => v.first().copied(),
        Buffer::U8(v) => v.first().map(|&a| i64::from(a)),
        Buffer::U16(v) => v.first().map(|&a| i64::from(a)),
        Buffer::U32(v) => v.first().map(|&a| i64::from(a)),
        Buffer::U64(v) => v.first().map(|&a| i64::try_from(a).unwrap_or(i64::MAX)),
        other => return Err(bad_dtype(prim, &[other.dtype()])),
    };
    v.ok_or_else(|| internal(prim, "empty index"))
}

/// Start indices clamped (as XLA) so the window `sizes` fits in `shape`.
fn clamped_starts(
    prim: &'static str, idx: &[&HostArray], shape: &[usize], sizes: &[usize],
) -> Result<Vec<usize>> {
    idx.iter()
        .zip(shape)
        .zip(sizes)
        .map(|((i, &d), &s)| {
            let hi = d.saturating_sub(s);
            let v = scalar_index(prim, i)?;
            Ok(usize::try_from(v.max(0)).unwrap_or(usize::MAX).min(hi))
        })
        .collect()
}

/// `dynamic_slice(x, *idx)` with window `sizes`.
pub fn dynamic_slice(x: &HostArray, idx: &[&HostArray], sizes: &[usize]) -> Result<Buffer> {
    let name = "dynamic_slice";
    let starts = clamped_starts(name, idx, x.shape(), sizes)?;
    let strides = row_major_strides(x.shape())?;
    let mut picks = alloc::with_capacity(name, checked_size(sizes)?)?;
    for_each_index(sizes, |o| {
        let src = o.iter().zip(&starts).map(|(&i, &s)| i.wrapping_add(s));
        picks.push((0, offset(src, &strides)));
        Ok(())
    })?;
    assemble(name, &[x.buffer()], &picks)
}

/// `dynamic_update_slice(x, u, *idx)`.
pub fn dynamic_update_slice(x: &HostArray, u: &HostArray, idx: &[&HostArray]) -> Result<Buffer> {
    let name = "dynamic_update_slice";
    let starts = clamped_starts(name, idx, x.shape(), u.shape())?;
    let xs = row_major_strides(x.shape())?;
    let us = row_major_strides(u.shape())?;
    let mut picks = alloc::with_capacity(name, x.size())?;
    for_each_index(x.shape(), |o| {
        let inside = o
            .iter()
            .zip(&starts)
            .zip(u.shape())
            .all(|((&i, &s), &n)| i >= s && i.wrapping_sub(s) < n);
        picks.push(if inside {
            let src = o.iter().zip(&starts).map(|(&i, &s)| i.wrapping_sub(s));
            (1, offset(src, &us))
        } else {
            (0, offset(o.iter().copied(), &xs))
        });
        Ok(())
    })?;
    assemble(name, &[x.buffer(), u.buffer()], &picks)
}
