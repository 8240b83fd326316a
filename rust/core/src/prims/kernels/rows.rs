//! Rows of the leading axis: reading `x[i]` and writing into a preallocated
//! stacked buffer. `scan` reads its `xs` and writes its `ys` with these.

use crate::array::{Buffer, HostArray};
use crate::error::{Error, Result};

/// Elements per row of the leading axis (1 for a rank-1 array).
fn row_len(shape: &[usize]) -> Result<usize> {
    crate::array::checked_size(shape.get(1..).unwrap_or(&[]))
}

fn range(
    start: usize, len: usize, total: usize, what: &'static str,
) -> Result<std::ops::Range<usize>> {
    let end = start.checked_add(len).ok_or_else(|| Error::Overflow {
        what,
        detail: format!("{start} + {len}"),
    })?;
    if end > total {
        return Err(Error::InvalidArgument(format!(
            "{what}: row {start}..{end} out of a buffer of {total} elements"
        )));
    }
    Ok(start..end)
}

/// `x[i]` along the leading axis.
pub fn take_row(x: &HostArray, i: usize) -> Result<HostArray> {
    let n = row_len(x.shape())?;
    let start = i.checked_mul(n).ok_or_else(|| Error::Overflow {
        what: "take_row",
        detail: format!("{i} * {n}"),
    })?;
    let shape = x.shape().get(1..).unwrap_or(&[]).to_vec();
    let buf = match x.buffer() {
        Buffer::Float0(total) => {
            range(start, n, *total, "take_row")?;
            Buffer::Float0(n)
        }
        Buffer::Key(v) => {
            let words = |k: usize| {
                k.checked_mul(2).ok_or_else(|| Error::Overflow {
                    what: "take_row",
                    detail: format!("2 * {k}"),
                })
            };
            let r = range(words(start)?, words(n)?, v.len(), "take_row")?;
            Buffer::Key(v.get(r).unwrap_or_default().to_vec().into())
        }
        other => crate::with_buffer!(other, v => {
            let r = range(start, n, v.len(), "take_row")?;
            Buffer::from(v.get(r).unwrap_or_default().to_vec())
        }, _ => return Err(Error::InvalidArgument("take_row: unsupported buffer".into()))),
    };
    HostArray::new(shape, buf)
}

/// Copies `x[i]` along the leading axis into `dst` (a buffer of one row's
/// size); `false` (and `dst` untouched) for a dtype other than `x`'s or an
/// opaque one.
pub fn read_row_into(x: &HostArray, i: usize, dst: &mut Buffer) -> Result<bool> {
    fn copy<T: Copy>(src: &[T], i: usize, dst: &mut [T]) -> Result<bool> {
        let n = dst.len();
        let start = i.checked_mul(n).ok_or_else(|| Error::Overflow {
            what: "take_row",
            detail: format!("{i} * {n}"),
        })?;
        let r = range(start, n, src.len(), "take_row")?;
        dst.copy_from_slice(src.get(r).unwrap_or_default());
        Ok(true)
    }
    if row_len(x.shape())? != dst.len() {
        return Ok(false);
    }
    match (x.buffer(), dst) {
        (Buffer::F32(s), Buffer::F32(d)) => copy(s, i, d),
        (Buffer::F64(s), Buffer::F64(d)) => copy(s, i, d),
        (Buffer::I32(s), Buffer::I32(d)) => copy(s, i, d),
        (Buffer::I64(s), Buffer::I64(d)) => copy(s, i, d),
        (Buffer::U32(s), Buffer::U32(d)) => copy(s, i, d),
        (Buffer::Bool(s), Buffer::Bool(d)) => copy(s, i, d),
        (Buffer::C64(s), Buffer::C64(d)) => copy(s, i, d),
        (Buffer::C128(s), Buffer::C128(d)) => copy(s, i, d),
        _ => Ok(false),
    }
}

fn copy_into<T: Copy>(dst: &mut [T], start: usize, src: &[T]) -> Result<()> {
    let r = range(start, src.len(), dst.len(), "write_row")?;
    dst.get_mut(r)
        .ok_or_else(|| Error::InvalidArgument("write_row: out of range".into()))?
        .copy_from_slice(src);
    Ok(())
}

/// Writes `row` as row `i` of `dst` (a stacked buffer of rows of `row`'s
/// size and dtype).
pub fn write_row(dst: &mut Buffer, i: usize, row: &HostArray) -> Result<()> {
    let n = row.size();
    let start = i.checked_mul(n).ok_or_else(|| Error::Overflow {
        what: "write_row",
        detail: format!("{i} * {n}"),
    })?;
    match (dst, row.buffer()) {
        (Buffer::Bool(d), Buffer::Bool(s)) => copy_into(d, start, s),
        (Buffer::I8(d), Buffer::I8(s)) => copy_into(d, start, s),
        (Buffer::I16(d), Buffer::I16(s)) => copy_into(d, start, s),
        (Buffer::I32(d), Buffer::I32(s)) => copy_into(d, start, s),
        (Buffer::I64(d), Buffer::I64(s)) => copy_into(d, start, s),
        (Buffer::U8(d), Buffer::U8(s)) => copy_into(d, start, s),
        (Buffer::U16(d), Buffer::U16(s)) => copy_into(d, start, s),
        (Buffer::U32(d), Buffer::U32(s)) => copy_into(d, start, s),
        (Buffer::U64(d), Buffer::U64(s)) => copy_into(d, start, s),
        (Buffer::F16(d), Buffer::F16(s)) => copy_into(d, start, s),
        (Buffer::BF16(d), Buffer::BF16(s)) => copy_into(d, start, s),
        (Buffer::F32(d), Buffer::F32(s)) => copy_into(d, start, s),
        (Buffer::F64(d), Buffer::F64(s)) => copy_into(d, start, s),
        (Buffer::C64(d), Buffer::C64(s)) => copy_into(d, start, s),
        (Buffer::C128(d), Buffer::C128(s)) => copy_into(d, start, s),
        (Buffer::Key(d), Buffer::Key(s)) => {
            let words = start.checked_mul(2).ok_or_else(|| Error::Overflow {
                what: "write_row",
                detail: format!("2 * {start}"),
            })?;
            copy_into(d, words, s)
        }
        (Buffer::Float0(_), Buffer::Float0(_)) => Ok(()),
        (d, s) => Err(Error::dtype(
            "write_row",
            &[d.dtype(), s.dtype()],
            "row dtype differs from the stacked buffer's",
        )),
    }
}
