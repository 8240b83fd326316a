//! Data-movement kernels: `broadcast_in_dim`, `transpose` (general strided
//! copies), `reshape`/`squeeze` (same data, new shape) and `iota`.
//!
//! Keys move as pairs of u32 words: a key array of shape `s` is handled as a
//! u32 array of shape `s + (2,)`. Float0 arrays carry no data.

use super::common::{bad_dtype, for_each_dtype, typed, BufElem, FromIndex};
use crate::array::{checked_size, Buffer, HostArray};
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
            return Ok(transpose_2d(src, *rows, inner_n, inner_s));
        }
    }
    let mut out: Vec<T> = Vec::with_capacity(n);
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
fn transpose_2d<T: Copy>(src: &[T], rows: usize, cols: usize, cs: usize) -> Vec<T> {
    const B: usize = 32;
    let Some(&fill) = src.first() else {
        return Vec::new();
    };
    let mut out = vec![fill; rows.saturating_mul(cols)];
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
    out
}

/// Applies a structural gather given output shape and per-output-dim source
/// strides (in elements), for every dtype.
fn gather_buffer(
    prim: &'static str,
    x: &Buffer,
    out_shape: &[usize],
    strides: &[usize],
) -> Result<Buffer> {
    let dtype = x.dtype();
    for_each_dtype!(dtype, T => {
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
            Ok(Buffer::Key(strided_gather(words, &shape, &st)?))
        }
        other => Err(bad_dtype(prim, &[other.dtype()])),
    })
}

pub fn broadcast_in_dim(x: &HostArray, shape: &[usize], bdims: &[usize]) -> Result<Buffer> {
    let name = "broadcast_in_dim";
    if x.shape() == shape {
        return Ok(x.buffer().clone());
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
        return Ok(x.buffer().clone());
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
    fn fill<T: FromIndex + BufElem>(n: usize, outer: usize, dim: usize, inner: usize) -> Buffer {
        let mut out: Vec<T> = Vec::with_capacity(n);
        for _ in 0..outer {
            for d in 0..dim {
                out.extend(std::iter::repeat_n(T::from_index(d), inner));
            }
        }
        T::wrap(out)
    }
    match dtype {
        DType::I8 => Ok(fill::<i8>(n, outer, dim, inner)),
        DType::I16 => Ok(fill::<i16>(n, outer, dim, inner)),
        DType::I32 => Ok(fill::<i32>(n, outer, dim, inner)),
        DType::I64 => Ok(fill::<i64>(n, outer, dim, inner)),
        DType::U8 => Ok(fill::<u8>(n, outer, dim, inner)),
        DType::U16 => Ok(fill::<u16>(n, outer, dim, inner)),
        DType::U32 => Ok(fill::<u32>(n, outer, dim, inner)),
        DType::U64 => Ok(fill::<u64>(n, outer, dim, inner)),
        DType::F16 => Ok(fill::<half::f16>(n, outer, dim, inner)),
        DType::BF16 => Ok(fill::<half::bf16>(n, outer, dim, inner)),
        DType::F32 => Ok(fill::<f32>(n, outer, dim, inner)),
        DType::F64 => Ok(fill::<f64>(n, outer, dim, inner)),
        DType::Bool | DType::Float0 | DType::Key => Err(bad_dtype(name, &[dtype])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_gather_transposes_and_broadcasts() {
        let src: Vec<i32> = (0..6).collect(); // 2x3
        assert_eq!(
            strided_gather(&src, &[3, 2], &[1, 3]).unwrap(),
            vec![0, 3, 1, 4, 2, 5]
        );
        assert_eq!(
            strided_gather(&src[..3], &[2, 3], &[0, 1]).unwrap(),
            vec![0, 1, 2, 0, 1, 2]
        );
        assert!(strided_gather(&src, &[3, 3], &[1, 3]).is_err());
        assert_eq!(
            strided_gather(&src, &[0, 3], &[1, 3]).unwrap(),
            Vec::<i32>::new()
        );
    }

    #[test]
    fn tiled_transpose_matches_naive() {
        for (r, c) in [(16, 16), (33, 70), (100, 17), (64, 64)] {
            let src: Vec<u32> = (0..(r * c) as u32).collect(); // r x c
            let got = strided_gather(&src, &[c, r], &[1, c]).unwrap();
            for i in 0..c {
                for j in 0..r {
                    assert_eq!(got[i * r + j], src[j * c + i]);
                }
            }
        }
    }
}
