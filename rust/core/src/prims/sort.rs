//! Sorting, selection and bit reinterpretation: `sort`, `top_k` and
//! `bitcast_convert_type` (shape, kernel, params and transformation rules).
//!
//! Order: every dtype maps to an order-preserving `u64` key. Floats follow
//! JAX's sort comparator: `-0.0` and `0.0` compare equal, every NaN (of
//! either sign) compares equal and greater than `+inf`, so
//! `-inf < ... < -0.0 == 0.0 < ... < inf < NaN` and a stable sort keeps the
//! input order of equal keys. The kernel is always stable (`is_stable=False`
//! permits any order of ties; the stable one is one of them), so a sort's
//! permutation is a function of its keys alone, which the AD rules rely on:
//! * JVP: the tangents are extra payload operands of a second sort with the
//!   same keys (no gather);
//! * transpose (linear in the payload when the keys are known): the
//!   permutation is `sort(keys..., iota)`'s last output, and sorting
//!   `(perm, ct)` by `perm` undoes it;
//! * `top_k`'s tangent is `rev(slice(sort(rev(x), rev(t))[1]))`: a stable
//!   ascending sort of the reversed row, reversed, is the descending order
//!   with ties by lower index first, which is `top_k`'s.

use super::batch::emit_all_at;
use super::family::{emit, finish_all, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::params::{Lookup, Param, ParamList};
use super::Primitive;
use crate::array::alloc::{from_iter, to_vec, try_from_iter, with_capacity};
use crate::array::{checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Effect};
use crate::prims::{Iota, Rev, Slice};
use std::cmp::Ordering;

/// The primitives of this family.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SortOp {
    /// `sort(*operands)`: all operands of one shape, permuted together along
    /// `dimension` by the lexicographic order of the first `num_keys`.
    Sort {
        dimension: usize,
        is_stable: bool,
        num_keys: usize,
    },
    /// `top_k(x) -> (values, int32 indices)` along the last axis.
    TopK { k: usize },
    /// Reinterprets the bits of each element as `new_dtype`.
    BitcastConvertType { new_dtype: DType },
}

// ----------------------------------------------------------------- params

fn get<'a>(params: &'a [(String, Param)], key: &str) -> Option<&'a Param> {
    params.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn count_param(
    prim: &'static str, params: &[(String, Param)], key: &'static str, default: Option<usize>,
) -> Result<usize> {
    match (get(params, key), default) {
        (None | Some(Param::None), Some(d)) => Ok(d),
        (Some(Param::Int(i)), _) => {
            usize::try_from(*i).map_err(|_| Error::param(prim, key, format!("negative value {i}")))
        }
        (Some(other), _) => Err(Error::param(
            prim,
            key,
            format!("expected an int, got {other:?}"),
        )),
        (None, None) => Err(Error::param(prim, key, "missing")),
    }
}

// ----------------------------------------------------------------- shape

fn sortable(d: DType) -> bool {
    d.is_numeric() || d == DType::Bool
}

/// JAX's shape rule: equal widths keep the shape, a narrower target appends
/// a trailing axis of the width ratio, a wider one consumes it.
fn bitcast_shape(x: &Aval, new: DType) -> Result<Vec<usize>> {
    let name = "bitcast_convert_type";
    let old = x.dtype;
    if old == DType::Bool || new == DType::Bool {
        if old == new {
            return Ok(x.shape.clone());
        }
        return Err(Error::dtype(
            name,
            &[old, new],
            format!("`bitcast_convert_type` for operand type ({old}) cannot have different destination type ({new})"),
        ));
    }
    if !old.is_numeric() || !new.is_numeric() {
        return Err(Error::dtype(name, &[old, new], "requires numeric dtypes"));
    }
    let (ow, nw) = (old.itemsize(), new.itemsize());
    match ow.cmp(&nw) {
        Ordering::Equal => Ok(x.shape.clone()),
        Ordering::Greater => {
            let mut shape = x.shape.clone();
            shape.push(ow.checked_div(nw).unwrap_or(1));
            Ok(shape)
        }
        Ordering::Less => {
            let last = x.shape.last().copied().unwrap_or(1);
            if last.checked_mul(ow) != Some(nw) {
                return Err(Error::param(
                    name,
                    "new_dtype",
                    format!(
                        "Attempting to convert array of shape {} from {old} of size {ow} \
                         to {new} of size {nw}, but {last} * {ow} != {nw}",
                        crate::error::format_shape(&x.shape)
                    ),
                ));
            }
            let mut shape = x.shape.clone();
            shape.pop();
            Ok(shape)
        }
    }
}

// ----------------------------------------------------------------- kernels

const SIGN64: u64 = 1 << 63;

/// Order key of a float's bits (`w`-bit IEEE value widened to f64 first is
/// not needed: each width keys its own bits). Zeros and NaNs are made
/// canonical so that they compare equal among themselves.
#[doc(hidden)]
pub fn f64_key(x: f64) -> u64 {
    let x = if x == 0.0 {
        0.0
    } else if x.is_nan() {
        f64::NAN
    } else {
        x
    };
    let bits = x.to_bits();
    if bits & SIGN64 != 0 {
        !bits
    } else {
        bits | SIGN64
    }
}

#[doc(hidden)]
pub fn f32_key(x: f32) -> u64 {
    // f32 -> f64 is exact and order-preserving.
    f64_key(f64::from(x))
}

#[doc(hidden)]
pub fn signed_key(x: i64) -> u64 {
    u64::from_ne_bytes(x.to_ne_bytes()) ^ SIGN64
}

/// Order-preserving `u64` keys of every element.
fn order_keys(buf: &Buffer) -> Result<Vec<u64>> {
    Ok(match buf {
        Buffer::Bool(v) => from_iter("sort", v.iter().map(|&b| u64::from(b)))?,
        Buffer::I8(v) => from_iter("sort", v.iter().map(|&x| signed_key(i64::from(x))))?,
        Buffer::I16(v) => from_iter("sort", v.iter().map(|&x| signed_key(i64::from(x))))?,
        Buffer::I32(v) => from_iter("sort", v.iter().map(|&x| signed_key(i64::from(x))))?,
        Buffer::I64(v) => from_iter("sort", v.iter().map(|&x| signed_key(x)))?,
        Buffer::U8(v) => from_iter("sort", v.iter().map(|&x| u64::from(x)))?,
        Buffer::U16(v) => from_iter("sort", v.iter().map(|&x| u64::from(x)))?,
        Buffer::U32(v) => from_iter("sort", v.iter().map(|&x| u64::from(x)))?,
        Buffer::U64(v) => to_vec("sort", v)?,
        Buffer::F16(v) => from_iter("sort", v.iter().map(|&x| f32_key(x.to_f32())))?,
        Buffer::BF16(v) => from_iter("sort", v.iter().map(|&x| f32_key(x.to_f32())))?,
        Buffer::F32(v) => from_iter("sort", v.iter().map(|&x| f32_key(x)))?,
        Buffer::F64(v) => from_iter("sort", v.iter().map(|&x| f64_key(x)))?,
        Buffer::C64(_) | Buffer::C128(_) => {
            return Err(Error::dtype(
                "sort",
                &[buf.dtype()],
                "a complex key orders by two columns (`key_columns`)",
            ))
        }
        Buffer::Float0(_) | Buffer::Key(_) => {
            return Err(Error::dtype(
                "sort",
                &[buf.dtype()],
                "requires numeric or bool operands",
            ))
        }
    })
}

/// The order-key columns of a sort operand: one for real dtypes, two for
/// complex ones (real parts, then imaginary parts: JAX's lexicographic order
/// of complex numbers, each part in the float total order).
fn key_columns(buf: &Buffer) -> Result<Vec<Vec<u64>>> {
    Ok(match buf {
        Buffer::C64(v) => vec![
            from_iter("sort", v.iter().map(|z| f32_key(z.re)))?,
            from_iter("sort", v.iter().map(|z| f32_key(z.im)))?,
        ],
        Buffer::C128(v) => vec![
            from_iter("sort", v.iter().map(|z| f64_key(z.re)))?,
            from_iter("sort", v.iter().map(|z| f64_key(z.im)))?,
        ],
        _ => vec![order_keys(buf)?],
    })
}

/// `out[i] = buf[src[i]]`.
fn take(buf: &Buffer, src: &[usize]) -> Result<Buffer> {
    let oob = || Error::InvalidArgument("sort: permutation index out of range".into());
    crate::with_buffer!(buf,
        v => {
            let out = try_from_iter("sort", src.iter().map(|&i| v.get(i).copied().ok_or_else(oob)))?;
            Ok(Buffer::from(out))
        },
        _ => Err(Error::dtype("sort", &[buf.dtype()], "requires numeric or bool operands"))
    )
}

/// Lexicographic comparison of flat positions `a` and `b` over the keys.
fn cmp_keys(keys: &[Vec<u64>], a: usize, b: usize) -> Ordering {
    keys.iter()
        .map(|k| k.get(a).cmp(&k.get(b)))
        .find(|o| *o != Ordering::Equal)
        .unwrap_or(Ordering::Equal)
}

/// (outer, n, inner) sizes around axis `d` of `shape`.
fn split_at_axis(shape: &[usize], d: usize) -> Result<(usize, usize, usize)> {
    let n = *shape.get(d).ok_or_else(|| {
        Error::InvalidArgument(format!("sort: axis {d} out of range for {shape:?}"))
    })?;
    let outer = checked_size(shape.get(..d).unwrap_or_default())?;
    let inner = checked_size(shape.get(d.saturating_add(1)..).unwrap_or_default())?;
    Ok((outer, n, inner))
}

/// The flat source position of every output position of a stable sort of
/// `keys` (one vector per key column, flat over `shape`) along `d`: the
/// sorts by several keys or by a complex key ([`sort_by_one_key`] sorts by
/// one real key).
fn sort_permutation(keys: &[Vec<u64>], shape: &[usize], d: usize) -> Result<Vec<usize>> {
    let (outer, n, inner) = split_at_axis(shape, d)?;
    let total = checked_size(shape)?;
    let mut src: Vec<usize> = from_iter("sort", 0..total)?;
    let mut row: Vec<usize> = with_capacity("sort", n)?;
    // All positions below are < total, so the saturating ops are exact.
    let row_stride = n.saturating_mul(inner);
    for o in 0..outer {
        for i in 0..inner {
            let base = o.saturating_mul(row_stride).saturating_add(i);
            row.clear();
            row.extend((0..n).map(|j| base.saturating_add(j.saturating_mul(inner))));
            row.sort_by(|&a, &b| cmp_keys(keys, a, b));
            for (j, &p) in row.iter().enumerate() {
                if let Some(s) = src.get_mut(base.saturating_add(j.saturating_mul(inner))) {
                    *s = p;
                }
            }
        }
    }
    Ok(src)
}

const SIGN32: u32 = 1 << 31;

/// The 32-bit order key of an `f32` (the order of [`f32_key`]: zeros and
/// NaNs canonical).
fn f32_key32(x: f32) -> u32 {
    let x = if x == 0.0 {
        0.0
    } else if x.is_nan() {
        f32::NAN
    } else {
        x
    };
    let bits = x.to_bits();
    if bits & SIGN32 != 0 {
        !bits
    } else {
        bits | SIGN32
    }
}

fn signed_key32(x: i32) -> u32 {
    u32::from_ne_bytes(x.to_ne_bytes()) ^ SIGN32
}

/// The order key of the element at a flat position.
enum PosKey<'a> {
    /// Dtypes of at most 32 bits.
    Narrow(Box<dyn Fn(usize) -> u32 + 'a>),
    Wide(Box<dyn Fn(usize) -> u64 + 'a>),
}

/// The order key of a real operand's elements, or `None` for dtypes that
/// order by several columns (complex) or not at all.
fn pos_key(buf: &Buffer) -> Option<PosKey<'_>> {
    use PosKey::{Narrow, Wide};
    Some(match buf {
        Buffer::Bool(v) => Narrow(Box::new(|p| v.get(p).map_or(0, |&b| u32::from(b)))),
        Buffer::I8(v) => Narrow(Box::new(|p| {
            v.get(p).map_or(0, |&x| signed_key32(x.into()))
        })),
        Buffer::I16(v) => Narrow(Box::new(|p| {
            v.get(p).map_or(0, |&x| signed_key32(x.into()))
        })),
        Buffer::I32(v) => Narrow(Box::new(|p| v.get(p).map_or(0, |&x| signed_key32(x)))),
        Buffer::U8(v) => Narrow(Box::new(|p| v.get(p).map_or(0, |&x| u32::from(x)))),
        Buffer::U16(v) => Narrow(Box::new(|p| v.get(p).map_or(0, |&x| u32::from(x)))),
        Buffer::U32(v) => Narrow(Box::new(|p| v.get(p).copied().unwrap_or(0))),
        Buffer::F16(v) => Narrow(Box::new(|p| v.get(p).map_or(0, |&x| f32_key32(x.to_f32())))),
        Buffer::BF16(v) => Narrow(Box::new(|p| v.get(p).map_or(0, |&x| f32_key32(x.to_f32())))),
        Buffer::F32(v) => Narrow(Box::new(|p| v.get(p).map_or(0, |&x| f32_key32(x)))),
        Buffer::I64(v) => Wide(Box::new(|p| v.get(p).map_or(0, |&x| signed_key(x)))),
        Buffer::U64(v) => Wide(Box::new(|p| v.get(p).copied().unwrap_or(0))),
        Buffer::F64(v) => Wide(Box::new(|p| v.get(p).map_or(0, |&x| f64_key(x)))),
        _ => return None,
    })
}

/// Row offsets of a stable sort of one row by `key`: `pos(j)` is the flat
/// position of the row's `j`-th element. Narrow keys of rows shorter than
/// 2^32 sort as packed `key << 32 | j` words (8 bytes an element), which
/// are turned into the offsets in place; the rest as `(key, j)` pairs.
fn sort_row<'w>(
    key: &PosKey<'_>, n: usize, pos: impl Fn(usize) -> usize, words: &'w mut Vec<u64>,
    pairs: &mut Vec<(u64, u64)>,
) -> &'w [u64] {
    words.clear();
    match key {
        PosKey::Narrow(k) if u32::try_from(n).is_ok() => {
            words.extend((0..n).map(|j| (u64::from(k(pos(j))) << 32) | j as u64));
            words.sort_unstable();
            for w in words.iter_mut() {
                *w &= u64::from(u32::MAX);
            }
        }
        _ => {
            let wide = |p: usize| match key {
                PosKey::Narrow(k) => u64::from(k(p)),
                PosKey::Wide(k) => k(p),
            };
            pairs.clear();
            pairs.extend((0..n).map(|j| (wide(pos(j)), j as u64)));
            pairs.sort_unstable();
            words.extend(pairs.iter().map(|&(_, j)| j));
        }
    }
    words
}

/// A sort by one real key: row by row, without order-key or permutation
/// arrays over the whole operand (the scratch is one row's words). Every
/// operand's output starts as a copy and each row is rewritten in order.
fn sort_by_one_key(args: &[&HostArray], key: &PosKey<'_>, d: usize) -> Result<Vec<Buffer>> {
    let first = args.first().ok_or(Error::arity("sort", 1, 0))?;
    let (outer, n, inner) = split_at_axis(first.shape(), d)?;
    let mut outs: Vec<Buffer> = try_from_iter("sort", args.iter().map(|a| owned_copy(a.buffer())))?;
    let mut words: Vec<u64> = with_capacity("sort", n)?;
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    if matches!(key, PosKey::Wide(_)) || u32::try_from(n).is_err() {
        crate::array::alloc::reserve("sort", &mut pairs, n)?;
    }
    // All positions below are < the operand's size, so the saturating ops
    // are exact.
    let row_stride = n.saturating_mul(inner);
    for o in 0..outer {
        for i in 0..inner {
            let base = o.saturating_mul(row_stride).saturating_add(i);
            let pos = |j: usize| base.saturating_add(j.saturating_mul(inner));
            let order = sort_row(key, n, pos, &mut words, &mut pairs);
            for (src, out) in args.iter().zip(outs.iter_mut()) {
                permute_row(src.buffer(), out, order, pos)?;
            }
        }
    }
    Ok(outs)
}

/// A copy of `buf` in owned storage (fallible), to be rewritten in place.
fn owned_copy(buf: &Buffer) -> Result<Buffer> {
    crate::with_buffer!(buf,
        v => Ok(Buffer::from(to_vec("sort", v)?)),
        _ => Err(Error::dtype("sort", &[buf.dtype()], "requires numeric or bool operands"))
    )
}

/// `out[pos(j)] = src[pos(order[j])]` for one row (`out` an
/// [`owned_copy`] of `src`).
fn permute_row(
    src: &Buffer, out: &mut Buffer, order: &[u64], pos: impl Fn(usize) -> usize,
) -> Result<()> {
    let oob = || Error::InvalidArgument("sort: permutation index out of range".into());
    macro_rules! permute {
        ($($variant:ident),*) => {
            match (src, out) {
                $((Buffer::$variant(s), Buffer::$variant(o)) => {
                    let o = o.make_mut();
                    for (j, &from) in order.iter().enumerate() {
                        let from = usize::try_from(from).map_err(|_| oob())?;
                        let v = *s.get(pos(from)).ok_or_else(oob)?;
                        *o.get_mut(pos(j)).ok_or_else(oob)? = v;
                    }
                    Ok(())
                })*
                _ => Err(Error::dtype("sort", &[src.dtype()], "requires numeric or bool operands")),
            }
        };
    }
    permute!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128)
}

fn sort_kernel(args: &[&HostArray], dimension: usize, num_keys: usize) -> Result<Vec<Buffer>> {
    let first = args.first().ok_or(Error::arity("sort", 1, 0))?;
    if num_keys == 1 {
        if let Some(key) = pos_key(first.buffer()) {
            return sort_by_one_key(args, &key, dimension);
        }
    }
    let mut keys = Vec::with_capacity(num_keys);
    for a in args.iter().take(num_keys) {
        keys.extend(key_columns(a.buffer())?);
    }
    let src = sort_permutation(&keys, first.shape(), dimension)?;
    args.iter().map(|a| take(a.buffer(), &src)).collect()
}

fn top_k_kernel(x: &HostArray, k: usize) -> Result<Vec<Buffer>> {
    let (&n, lead) = x
        .shape()
        .split_last()
        .ok_or_else(|| Error::shape("top_k", &[x.shape()], "needs rank >= 1"))?;
    let rows = checked_size(lead)?;
    let keys = order_keys(x.buffer())?;
    let out_len = rows.checked_mul(k).ok_or_else(|| Error::Overflow {
        what: "top_k",
        detail: format!("{rows} rows of {k}"),
    })?;
    let mut src: Vec<usize> = with_capacity("top_k", out_len)?;
    let mut idx: Vec<i32> = with_capacity("top_k", out_len)?;
    // (complemented key, index): ascending order is descending in the key
    // with ties by lower index first.
    let mut pairs: Vec<(u64, usize)> = with_capacity("top_k", n)?;
    for r in 0..rows {
        let base = r.saturating_mul(n);
        let row = keys.get(base..base.saturating_add(n)).unwrap_or_default();
        pairs.clear();
        pairs.extend(row.iter().enumerate().map(|(j, &key)| (!key, j)));
        if k == 0 {
            continue;
        }
        if k < n {
            pairs.select_nth_unstable(k.saturating_sub(1));
        }
        let top = pairs.get_mut(..k).unwrap_or_default();
        top.sort_unstable();
        for &(_, j) in top.iter() {
            src.push(base.saturating_add(j));
            idx.push(i32::try_from(j).map_err(|_| Error::Overflow {
                what: "top_k",
                detail: format!("index {j} does not fit int32"),
            })?);
        }
    }
    Ok(vec![take(x.buffer(), &src)?, Buffer::I32(idx.into())])
}

/// Little-endian bytes of every element (as NumPy's `view` on x86/ARM).
fn le_bytes(buf: &Buffer) -> Result<Vec<u8>> {
    macro_rules! bytes {
        ($v:expr, $f:expr) => {
            from_iter("bitcast_convert_type", $v.iter().flat_map($f))?
        };
    }
    Ok(match buf {
        Buffer::Bool(v) => from_iter("bitcast_convert_type", v.iter().map(|&b| u8::from(b)))?,
        Buffer::I8(v) => bytes!(v, |x: &i8| x.to_le_bytes()),
        Buffer::I16(v) => bytes!(v, |x: &i16| x.to_le_bytes()),
        Buffer::I32(v) => bytes!(v, |x: &i32| x.to_le_bytes()),
        Buffer::I64(v) => bytes!(v, |x: &i64| x.to_le_bytes()),
        Buffer::U8(v) => to_vec("bitcast_convert_type", v)?,
        Buffer::U16(v) => bytes!(v, |x: &u16| x.to_le_bytes()),
        Buffer::U32(v) => bytes!(v, |x: &u32| x.to_le_bytes()),
        Buffer::U64(v) => bytes!(v, |x: &u64| x.to_le_bytes()),
        Buffer::F16(v) => bytes!(v, |x: &half::f16| x.to_bits().to_le_bytes()),
        Buffer::BF16(v) => bytes!(v, |x: &half::bf16| x.to_bits().to_le_bytes()),
        Buffer::F32(v) => bytes!(v, |x: &f32| x.to_le_bytes()),
        Buffer::F64(v) => bytes!(v, |x: &f64| x.to_le_bytes()),
        Buffer::C64(_) | Buffer::C128(_) | Buffer::Float0(_) | Buffer::Key(_) => {
            return Err(Error::dtype(
                "bitcast_convert_type",
                &[buf.dtype()],
                "requires numeric dtypes",
            ))
        }
    })
}

/// Elements of `dtype` from little-endian bytes.
fn from_le_bytes(bytes: &[u8], dtype: DType) -> Result<Buffer> {
    macro_rules! decode {
        ($n:literal, $f:expr) => {{
            let ragged = || Error::InvalidArgument("bitcast_convert_type: ragged bytes".into());
            let out = try_from_iter(
                "bitcast_convert_type",
                bytes
                    .chunks_exact($n)
                    .map(|c| <[u8; $n]>::try_from(c).ok().map($f).ok_or_else(ragged)),
            )?;
            Buffer::from(out)
        }};
    }
    Ok(match dtype {
        DType::Bool => {
            Buffer::Bool(from_iter("bitcast_convert_type", bytes.iter().map(|&b| b != 0))?.into())
        }
        DType::I8 => decode!(1, i8::from_le_bytes),
        DType::I16 => decode!(2, i16::from_le_bytes),
        DType::I32 => decode!(4, i32::from_le_bytes),
        DType::I64 => decode!(8, i64::from_le_bytes),
        DType::U8 => Buffer::U8(to_vec("bitcast_convert_type", bytes)?.into()),
        DType::U16 => decode!(2, u16::from_le_bytes),
        DType::U32 => decode!(4, u32::from_le_bytes),
        DType::U64 => decode!(8, u64::from_le_bytes),
        DType::F16 => decode!(2, |b| half::f16::from_bits(u16::from_le_bytes(b))),
        DType::BF16 => decode!(2, |b| half::bf16::from_bits(u16::from_le_bytes(b))),
        DType::F32 => decode!(4, f32::from_le_bytes),
        DType::F64 => decode!(8, f64::from_le_bytes),
        DType::C64 | DType::C128 | DType::Float0 | DType::Key => {
            return Err(Error::dtype(
                "bitcast_convert_type",
                &[dtype],
                "requires numeric dtypes",
            ))
        }
    })
}

// ----------------------------------------------------------------- rules

/// A rule found no sort key or no sorted output (the shape rule rules both
/// out: `num_keys >= 1`, one output per operand).
fn missing_output(rule: &str) -> Error {
    Error::InvalidArgument(format!("sort: {rule} rule: no sort key or sorted output"))
}

/// A sort of `keys` (with `num_keys = keys.len()`) carrying `payload`;
/// returns the sorted payload.
fn sort_payload(
    b: &mut Builder, keys: &[Atom], payload: Vec<Atom>, dimension: usize, is_stable: bool,
) -> Result<Vec<Atom>> {
    let mut ins = keys.to_vec();
    ins.extend(payload);
    let op = SortOp::Sort {
        dimension,
        is_stable,
        num_keys: keys.len(),
    };
    Ok(emit(b, op, ins)?.split_off(keys.len()))
}

/// `sort` avals: the operands' (of one shape, sortable dtypes), after
/// checking `dimension` and `num_keys`.
fn sort_avals(
    name: &'static str, ins: &[Aval], dimension: usize, num_keys: usize,
) -> Result<Vec<Aval>> {
    let first = ins.first().ok_or(Error::arity(name, 1, 0))?;
    if num_keys == 0 || num_keys > ins.len() {
        return Err(Error::param(
            name,
            "num_keys",
            format!(
                "must be between 1 and the number of operands ({}), got {num_keys}",
                ins.len()
            ),
        ));
    }
    if let Some(bad) = ins.iter().find(|a| a.shape != first.shape) {
        return Err(Error::shape(
            name,
            &[&first.shape, &bad.shape],
            "all operands must have the same shape",
        ));
    }
    if dimension >= first.ndim() {
        return Err(Error::param(
            name,
            "dimension",
            format!(
                "{dimension} is out of range for operands of rank {}",
                first.ndim()
            ),
        ));
    }
    if let Some(bad) = ins
        .iter()
        .find(|a| !(sortable(a.dtype) || a.dtype.is_complex()))
    {
        return Err(Error::dtype(
            name,
            &[bad.dtype],
            "requires numeric or bool operands",
        ));
    }
    Ok(ins.to_vec())
}

/// `top_k` avals: values and `i32` indices, the last axis cut to `k`.
fn top_k_avals(name: &'static str, ins: &[Aval], k: usize) -> Result<Vec<Aval>> {
    let [x] = ins else {
        return Err(Error::arity(name, 1, ins.len()));
    };
    if x.dtype.is_complex() {
        return Err(Error::InvalidArgument(
            "top_k is not compatible with complex inputs.".into(),
        ));
    }
    if !sortable(x.dtype) {
        return Err(Error::dtype(
            name,
            &[x.dtype],
            "requires a numeric or bool operand",
        ));
    }
    let Some((&n, lead)) = x.shape.split_last() else {
        return Err(Error::shape(
            name,
            &[&x.shape],
            "top_k operand must have >= 1 dimension",
        ));
    };
    if k > n {
        return Err(Error::param(
            name,
            "k",
            format!(
                "k argument to top_k must be no larger than minor dimension; {k} vs {}",
                crate::error::format_shape(&x.shape)
            ),
        ));
    }
    let mut shape = lead.to_vec();
    shape.push(k);
    Ok(vec![
        Aval::weak(shape.clone(), x.dtype, x.weak_type),
        Aval::new(shape, DType::I32),
    ])
}

impl Family for SortOp {
    crate::family_names!(
        SortOp::Sort { .. } => "sort",
        SortOp::TopK { .. } => "top_k",
        SortOp::BitcastConvertType { .. } => "bitcast_convert_type",
    );

    /// `sort` and `top_k` return lists.
    fn multiple_results(&self) -> bool {
        !matches!(self, SortOp::BitcastConvertType { .. })
    }

    /// Params as Python sees them (`eqn.params`).
    fn params(&self) -> ParamList {
        let int = |n: usize| Param::Int(i64::try_from(n).unwrap_or(i64::MAX));
        match self {
            SortOp::Sort {
                dimension,
                is_stable,
                num_keys,
            } => vec![
                ("dimension", int(*dimension)),
                ("is_stable", Param::Bool(*is_stable)),
                ("num_keys", int(*num_keys)),
            ],
            SortOp::TopK { k } => vec![("k", int(*k))],
            SortOp::BitcastConvertType { new_dtype } => {
                vec![("new_dtype", Param::DType(*new_dtype))]
            }
        }
    }

    fn effect(&self) -> Effect {
        Effect::None
    }

    fn from_params(name: &str, params: &Lookup<'_>) -> Result<Option<SortOp>> {
        let params = params.list();
        let op = match name {
            "sort" => SortOp::Sort {
                dimension: count_param("sort", params, "dimension", None)?,
                is_stable: match get(params, "is_stable") {
                    None | Some(Param::None) => false,
                    Some(Param::Bool(b)) => *b,
                    Some(other) => {
                        return Err(Error::param(
                            "sort",
                            "is_stable",
                            format!("expected a bool, got {other:?}"),
                        ))
                    }
                },
                num_keys: count_param("sort", params, "num_keys", Some(1))?,
            },
            "top_k" => SortOp::TopK {
                k: count_param("top_k", params, "k", None)?,
            },
            "bitcast_convert_type" => SortOp::BitcastConvertType {
                new_dtype: match get(params, "new_dtype") {
                    Some(Param::DType(d)) => *d,
                    Some(Param::Str(s)) => DType::from_name(s)?,
                    other => {
                        return Err(Error::param(
                            "bitcast_convert_type",
                            "new_dtype",
                            format!("expected a dtype, got {other:?}"),
                        ))
                    }
                },
            },
            _ => return Ok(None),
        };
        Ok(Some(op))
    }

    fn display_params(&self, _params: &mut ParamList) {}

    fn examples() -> Vec<SortOp> {
        vec![
            SortOp::Sort {
                dimension: 0,
                is_stable: true,
                num_keys: 1,
            },
            SortOp::TopK { k: 1 },
            SortOp::BitcastConvertType {
                new_dtype: DType::I32,
            },
        ]
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        match self {
            SortOp::Sort {
                dimension,
                num_keys,
                ..
            } => sort_avals(name, ins, *dimension, *num_keys),
            SortOp::TopK { k } => top_k_avals(name, ins, *k),
            SortOp::BitcastConvertType { new_dtype } => {
                let [x] = ins else {
                    return Err(Error::arity(name, 1, ins.len()));
                };
                Ok(vec![Aval::new(bitcast_shape(x, *new_dtype)?, *new_dtype)])
            }
        }
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let bufs = match (self, args) {
            (
                SortOp::Sort {
                    dimension,
                    num_keys,
                    ..
                },
                _,
            ) => sort_kernel(args, *dimension, *num_keys)?,
            (SortOp::TopK { k }, [x]) => top_k_kernel(x, *k)?,
            (SortOp::BitcastConvertType { new_dtype }, [x]) => {
                vec![from_le_bytes(&le_bytes(x.buffer())?, *new_dtype)?]
            }
            _ => return Err(Error::arity(self.name(), 1, args.len())),
        };
        finish_all(self.name(), outs, bufs)
    }

    /// `bitcast_convert_type` reinterprets bits: zero tangents (as JAX).
    fn differentiable(&self) -> bool {
        !matches!(self, SortOp::BitcastConvertType { .. })
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let op = self.clone();
        let outs = emit(b, op.clone(), xs.to_vec())?;
        let mut touts: Vec<Option<Atom>> = vec![None; outs.len()];
        match op {
            SortOp::Sort {
                dimension,
                is_stable,
                num_keys,
            } => {
                // Every operand moves by the same permutation, a function of the
                // keys only: its tangent rides along as payload.
                let mut which: Vec<usize> = Vec::new();
                let mut payload: Vec<Atom> = Vec::new();
                for (i, (x, t)) in xs.iter().zip(ts).enumerate() {
                    if let Some(t) = t {
                        if b.aval(x)?.dtype.is_inexact() {
                            which.push(i);
                            payload.push(t.clone());
                        }
                    }
                }
                if payload.is_empty() {
                    return Ok((outs, touts));
                }
                let keys = xs.get(..num_keys).unwrap_or_default();
                let sorted = sort_payload(b, keys, payload, dimension, is_stable)?;
                for (i, t) in which.into_iter().zip(sorted) {
                    if let Some(slot) = touts.get_mut(i) {
                        *slot = Some(t);
                    }
                }
            }
            SortOp::TopK { k } => {
                let (Some(x), Some(Some(t))) = (xs.first(), ts.first()) else {
                    return Ok((outs, touts));
                };
                let aval = b.aval(x)?;
                if !aval.dtype.is_inexact() {
                    return Ok((outs, touts));
                }
                let last = aval.ndim().saturating_sub(1);
                let rev = |b: &mut Builder, a: Atom| {
                    b.add_eqn1(
                        Primitive::Rev(Rev {
                            dimensions: vec![last],
                        }),
                        vec![a],
                    )
                };
                let rx = rev(b, x.clone())?;
                let rt = rev(b, t.clone())?;
                let sorted = sort_payload(b, &[rx], vec![rt], last, true)?;
                let st = sorted
                    .into_iter()
                    .next()
                    .ok_or_else(|| missing_output("jvp"))?;
                let n = aval.shape.get(last).copied().unwrap_or(0);
                let mut start = vec![0; aval.ndim()];
                if let Some(s) = start.get_mut(last) {
                    *s = n.saturating_sub(k);
                }
                let tail = b.add_eqn1(
                    Primitive::Slice(Slice {
                        start_indices: start,
                        limit_indices: aval.shape.clone(),
                        strides: None,
                    }),
                    vec![st],
                )?;
                if let Some(slot) = touts.first_mut() {
                    *slot = Some(rev(b, tail)?);
                }
            }
            // Bits reinterpretation: not differentiable (zero tangent).
            SortOp::BitcastConvertType { .. } => {}
        }
        Ok((outs, touts))
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let SortOp::Sort {
            dimension,
            is_stable,
            num_keys,
        } = *self
        else {
            return super::family::transpose_not_linear(self.name());
        };
        let mut keys: Vec<Atom> = Vec::with_capacity(num_keys);
        for op in ops.iter().take(num_keys) {
            match op {
                Operand::Known(a) => keys.push(a.clone()),
                Operand::Linear(_) => {
                    return Err(super::transpose::not_linear_error(
                        "sort",
                        " (a sort key is linear)",
                    ))
                }
            }
        }
        let mut result: Vec<Option<Atom>> = vec![None; ops.len()];
        let mut which: Vec<usize> = Vec::new();
        let mut payload: Vec<Atom> = Vec::new();
        for (i, (op, ct)) in ops.iter().zip(cts).enumerate().skip(num_keys) {
            if let (Operand::Linear(_), Some(ct)) = (op, ct) {
                which.push(i);
                payload.push(ct.clone());
            }
        }
        if payload.is_empty() {
            return Ok(result);
        }
        let shape = b
            .aval(keys.first().ok_or_else(|| missing_output("transpose"))?)?
            .shape;
        let n = shape.get(dimension).copied().unwrap_or(0);
        let dtype = if i32::try_from(n).is_ok() {
            DType::I32
        } else {
            DType::I64
        };
        let iota = b.add_eqn1(
            Primitive::Iota(Iota {
                dtype,
                shape,
                dimension,
            }),
            vec![],
        )?;
        // perm[j] = the source position of output j; sorting by perm sends
        // output j's cotangent back to position perm[j].
        let perm = sort_payload(b, &keys, vec![iota], dimension, is_stable)?
            .into_iter()
            .next()
            .ok_or_else(|| missing_output("transpose"))?;
        let back = sort_payload(b, &[perm], payload, dimension, true)?;
        for (i, c) in which.into_iter().zip(back) {
            if let Some(slot) = result.get_mut(i) {
                *slot = Some(c);
            }
        }
        Ok(result)
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let op = self.clone();
        if dims.iter().all(Option::is_none) {
            return emit_all_at(b, Primitive::from(op), ins.to_vec(), None);
        }
        // Every operand gets the mapped axis in front (sort needs equal shapes;
        // top_k and bitcast act on trailing axes, which stay trailing).
        let front = super::batch::all_batch_first(b, ins, dims, n)?;
        let op = match op {
            SortOp::Sort {
                dimension,
                is_stable,
                num_keys,
            } => SortOp::Sort {
                dimension: dimension.saturating_add(1),
                is_stable,
                num_keys,
            },
            other => other,
        };
        emit_all_at(b, Primitive::from(op), front, Some(0))
    }
}
