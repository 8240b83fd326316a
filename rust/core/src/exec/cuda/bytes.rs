//! Host buffers as the little-endian bytes a device buffer holds (and
//! back). Device memory is untyped: every device array is bytes plus an
//! aval, so one allocator and one copy path serve every dtype. bool is one
//! byte (0/1, CUDA's `bool`), a key element two u32 words, float0 nothing.

use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};

/// Bytes of one element of `d` on the device (its host item size).
pub fn element_bytes(d: DType) -> usize {
    d.itemsize()
}

/// Bytes of `n` elements of `d`.
pub fn nbytes(d: DType, n: usize) -> Result<usize> {
    n.checked_mul(element_bytes(d))
        .ok_or_else(|| Error::Overflow {
            what: "device buffer",
            detail: format!("{n} elements of {}", d.name()),
        })
}

/// The device bytes of `buf`.
pub fn to_bytes(buf: &Buffer) -> Vec<u8> {
    buf.to_le_bytes()
}

/// The buffer of `n` elements of `d` stored in `bytes` (exactly
/// [`nbytes`]`(d, n)` of them; any non-zero bool byte is true).
pub fn from_bytes(d: DType, n: usize, bytes: &[u8]) -> Result<Buffer> {
    Buffer::from_le_bytes("device buffer", d, n, bytes, false)
}

/// The host array of `shape` and `d` stored in `bytes`.
pub fn array_from_bytes(shape: Vec<usize>, d: DType, bytes: &[u8]) -> Result<HostArray> {
    let n = crate::array::checked_size(&shape)?;
    HostArray::new(shape, from_bytes(d, n, bytes)?)
}
