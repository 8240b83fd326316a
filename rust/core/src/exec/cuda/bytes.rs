//! Host buffers as the little-endian bytes a device buffer holds (and
//! back). Device memory is untyped: every device array is bytes plus an
//! aval, so one allocator and one copy path serve every dtype. bool is one
//! byte (0/1, CUDA's `bool`), a key element two u32 words, float0 nothing.

use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use half::{bf16, f16};

/// Bytes of one element of `d` on the device.
pub fn element_bytes(d: DType) -> usize {
    match d {
        DType::Bool | DType::I8 | DType::U8 => 1,
        DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
        DType::I32 | DType::U32 | DType::F32 => 4,
        DType::I64 | DType::U64 | DType::F64 | DType::Key => 8,
        DType::Float0 => 0,
    }
}

/// Bytes of `n` elements of `d`.
pub fn nbytes(d: DType, n: usize) -> Result<usize> {
    n.checked_mul(element_bytes(d))
        .ok_or_else(|| Error::Overflow {
            what: "device buffer",
            detail: format!("{n} elements of {}", d.name()),
        })
}

fn flat<T, const N: usize>(v: &[T], f: impl Fn(&T) -> [u8; N]) -> Vec<u8> {
    v.iter().flat_map(f).collect()
}

/// The device bytes of `buf`.
pub fn to_bytes(buf: &Buffer) -> Vec<u8> {
    match buf {
        Buffer::Bool(v) => v.iter().map(|&b| u8::from(b)).collect(),
        Buffer::I8(v) => flat(v, |x| x.to_le_bytes()),
        Buffer::I16(v) => flat(v, |x| x.to_le_bytes()),
        Buffer::I32(v) => flat(v, |x| x.to_le_bytes()),
        Buffer::I64(v) => flat(v, |x| x.to_le_bytes()),
        Buffer::U8(v) => v.clone(),
        Buffer::U16(v) => flat(v, |x| x.to_le_bytes()),
        Buffer::U32(v) | Buffer::Key(v) => flat(v, |x| x.to_le_bytes()),
        Buffer::U64(v) => flat(v, |x| x.to_le_bytes()),
        Buffer::F16(v) => flat(v, |x| x.to_bits().to_le_bytes()),
        Buffer::BF16(v) => flat(v, |x| x.to_bits().to_le_bytes()),
        Buffer::F32(v) => flat(v, |x| x.to_le_bytes()),
        Buffer::F64(v) => flat(v, |x| x.to_le_bytes()),
        Buffer::Float0(_) => Vec::new(),
    }
}

fn words<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
    bytes
        .chunks_exact(N)
        .map(|c| {
            let mut w = [0u8; N];
            w.copy_from_slice(c);
            f(w)
        })
        .collect()
}

/// The buffer of `n` elements of `d` stored in `bytes` (exactly
/// [`nbytes`]`(d, n)` of them).
pub fn from_bytes(d: DType, n: usize, bytes: &[u8]) -> Result<Buffer> {
    let want = nbytes(d, n)?;
    if bytes.len() != want {
        return Err(Error::InvalidArgument(format!(
            "device buffer of {} bytes for {n} elements of {} ({want} bytes)",
            bytes.len(),
            d.name()
        )));
    }
    Ok(match d {
        DType::Bool => Buffer::Bool(bytes.iter().map(|&b| b != 0).collect()),
        DType::I8 => Buffer::I8(words(bytes, i8::from_le_bytes)),
        DType::I16 => Buffer::I16(words(bytes, i16::from_le_bytes)),
        DType::I32 => Buffer::I32(words(bytes, i32::from_le_bytes)),
        DType::I64 => Buffer::I64(words(bytes, i64::from_le_bytes)),
        DType::U8 => Buffer::U8(bytes.to_vec()),
        DType::U16 => Buffer::U16(words(bytes, u16::from_le_bytes)),
        DType::U32 => Buffer::U32(words(bytes, u32::from_le_bytes)),
        DType::U64 => Buffer::U64(words(bytes, u64::from_le_bytes)),
        DType::F16 => Buffer::F16(words(bytes, |w| f16::from_bits(u16::from_le_bytes(w)))),
        DType::BF16 => Buffer::BF16(words(bytes, |w| bf16::from_bits(u16::from_le_bytes(w)))),
        DType::F32 => Buffer::F32(words(bytes, f32::from_le_bytes)),
        DType::F64 => Buffer::F64(words(bytes, f64::from_le_bytes)),
        DType::Key => Buffer::Key(words(bytes, u32::from_le_bytes)),
        DType::Float0 => Buffer::Float0(n),
    })
}

/// The host array of `shape` and `d` stored in `bytes`.
pub fn array_from_bytes(shape: Vec<usize>, d: DType, bytes: &[u8]) -> Result<HostArray> {
    let n = crate::array::checked_size(&shape)?;
    HostArray::new(shape, from_bytes(d, n, bytes)?)
}
