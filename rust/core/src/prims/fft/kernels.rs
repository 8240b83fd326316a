//! CPU FFT kernels over the trailing axes of row-major buffers: complex to
//! complex ([`c2c`]), real to complex ([`r2c`]) and complex to real
//! ([`c2r`]), with XLA's conventions (the forward transform unnormalized,
//! the inverse ones scaled by `1/prod(lengths)`; `c2r` reads the `n/2 + 1`
//! leading frequencies of the last axis and ignores the imaginary parts of
//! the zero (and, for even `n`, the Nyquist) frequency, as pocketfft does).
//!
//! A buffer is `batch` rows of the transformed block `dims` (one to three
//! axes; any count works). Axes are transformed last first. The last axis
//! is contiguous: its rows are transformed in place, [`TASK_ELEMS`] elements
//! per task. Any other axis is strided: a task gathers [`TILE`] columns
//! into contiguous rows of a scratch buffer, transforms them there, and a
//! second pass writes them back. Tasks run on rayon's pool when the buffer
//! is large ([`PARALLEL_MIN`]); the split into tasks is fixed by the shape
//! alone and every row is transformed by the same cached plan
//! ([`super::plans`]), so the result is the same bits at any thread count
//! and with or without parallelism.

use super::plans::FftFloat;
use crate::array::{alloc, checked_size};
use crate::error::{Error, Result};
use rayon::prelude::*;
use rustfft::num_complex::Complex;
use rustfft::Fft;

/// Elements per task of a contiguous-axis pass (at least one row).
pub const TASK_ELEMS: usize = 1 << 14;
/// Columns a task of a strided-axis pass gathers.
pub const TILE: usize = 16;
/// Buffers of at least this many elements run their tasks in parallel.
pub const PARALLEL_MIN: usize = 1 << 15;

fn overflow(what: &'static str, detail: String) -> Error {
    Error::Overflow { what, detail }
}

fn bad_buffer(what: &str, got: usize, want: usize) -> Error {
    Error::InvalidArgument(format!(
        "{what}: buffer of {got} elements where the shape needs {want}"
    ))
}

/// `batch * prod(dims)`, checked.
fn elements(batch: usize, dims: &[usize]) -> Result<usize> {
    checked_size(dims)?
        .checked_mul(batch)
        .ok_or_else(|| overflow("fft size", format!("{batch} rows of {dims:?}")))
}

/// The complex length of a real axis of length `n`: `n / 2 + 1`.
pub fn half_len(n: usize) -> usize {
    n.checked_div(2).unwrap_or(0).saturating_add(1)
}

/// Runs `f(index, chunk)` on the consecutive `chunk`-element pieces of
/// `data` (the last may be shorter), on the kernel pool ([`crate::exec::pool`]) when
/// `parallel`.
fn each_chunk<E: Send>(
    data: &mut [E], chunk: usize, parallel: bool,
    f: impl Fn(usize, &mut [E]) -> Result<()> + Sync + Send,
) -> Result<()> {
    let chunk = chunk.max(1);
    if parallel {
        crate::exec::pool::install(|| {
            data.par_chunks_mut(chunk)
                .enumerate()
                .try_for_each(|(i, c)| f(i, c))
        })
    } else {
        data.chunks_mut(chunk)
            .enumerate()
            .try_for_each(|(i, c)| f(i, c))
    }
}

/// Rows of length `n` per task of a contiguous pass.
fn rows_per_task(n: usize) -> usize {
    TASK_ELEMS.checked_div(n).unwrap_or(1).max(1)
}

fn zero<T: FftFloat>() -> Complex<T> {
    Complex::new(T::zero(), T::zero())
}

/// `1 / count` in `T`.
fn inverse_scale<T: FftFloat>(count: usize) -> Result<T> {
    let n = T::from_usize(count).ok_or_else(|| overflow("fft scale", format!("length {count}")))?;
    Ok(T::one().div(n))
}

/// Transforms `rows` (a whole number of rows of the plan's length) in place,
/// then multiplies them by `scale` when given.
fn run_rows<T: FftFloat>(
    plan: &dyn Fft<T>, rows: &mut [Complex<T>], scale: Option<T>,
) -> Result<()> {
    let mut scratch = alloc::filled("fft", zero::<T>(), plan.get_inplace_scratch_len())?;
    plan.process_with_scratch(rows, &mut scratch);
    if let Some(s) = scale {
        for v in rows.iter_mut() {
            *v = v.scale(s);
        }
    }
    Ok(())
}

/// Copies columns `j0..` of `src` (`[n, inner]`) into the rows of `tile`
/// (`[w, n]`, `w` columns).
fn gather_columns<E: Copy>(src: &[E], inner: usize, n: usize, j0: usize, tile: &mut [E]) {
    for (i, srow) in src.chunks_exact(inner).enumerate() {
        for (v, trow) in srow.iter().skip(j0).zip(tile.chunks_exact_mut(n)) {
            if let Some(d) = trow.get_mut(i) {
                *d = *v;
            }
        }
    }
}

/// Copies entries `i0..` of the rows of `src` (`[inner, n]`) into the columns
/// of `rows` (`[h, inner]`, rows `i0..i0 + h` of the `[n, inner]` block).
fn scatter_columns<E: Copy>(src: &[E], n: usize, inner: usize, i0: usize, rows: &mut [E]) {
    for (j, srow) in src.chunks_exact(n).enumerate() {
        for (v, drow) in srow.iter().skip(i0).zip(rows.chunks_exact_mut(inner)) {
            if let Some(d) = drow.get_mut(j) {
                *d = *v;
            }
        }
    }
}

/// One axis of length `n` with `inner` elements after it, over every block
/// of `data`; the result is multiplied by `scale` when given.
fn axis_pass<T: FftFloat>(
    data: &mut [Complex<T>], n: usize, inner: usize, inverse: bool, scale: Option<T>,
    parallel: bool,
) -> Result<()> {
    if n <= 1 && scale.is_none() {
        return Ok(());
    }
    let plan = T::plans().complex(n.max(1), inverse);
    let par = parallel && data.len() >= PARALLEL_MIN;
    let detail = || format!("axis of {n} by {inner}");
    if inner == 1 {
        let chunk = rows_per_task(n)
            .checked_mul(n)
            .ok_or_else(|| overflow("fft task", detail()))?;
        return each_chunk(data, chunk, par, |_, rows| run_rows(&*plan, rows, scale));
    }
    let block = n
        .checked_mul(inner)
        .ok_or_else(|| overflow("fft block", detail()))?;
    let tile = TILE
        .checked_mul(n)
        .ok_or_else(|| overflow("fft tile", detail()))?;
    let band = TILE
        .checked_mul(inner)
        .ok_or_else(|| overflow("fft tile", detail()))?;
    // `tmp` holds every block transposed to `[inner, n]`.
    let mut tmp = alloc::filled("fft", zero::<T>(), data.len())?;
    let src: &[Complex<T>] = data;
    each_chunk(&mut tmp, block, par, |o, tblock| {
        let sblock = src.chunks(block).nth(o).unwrap_or(&[]);
        each_chunk(tblock, tile, par, |t, rows| {
            gather_columns(sblock, inner, n, t.saturating_mul(TILE), rows);
            run_rows(&*plan, rows, scale)
        })
    })?;
    let tmp: &[Complex<T>] = &tmp;
    each_chunk(data, block, par, |o, dblock| {
        let tblock = tmp.chunks(block).nth(o).unwrap_or(&[]);
        each_chunk(dblock, band, par, |t, rows| {
            scatter_columns(tblock, n, inner, t.saturating_mul(TILE), rows);
            Ok(())
        })
    })
}

/// Transforms the first `count` axes of `dims` (the block each of the rows
/// of `data` holds), last first; the final pass scales by `scale`.
fn c2c_axes<T: FftFloat>(
    data: &mut [Complex<T>], dims: &[usize], count: usize, inverse: bool, scale: Option<T>,
    parallel: bool,
) -> Result<()> {
    let mut inner = checked_size(dims.get(count..).unwrap_or(&[]))?;
    let axes = dims.get(..count).unwrap_or(&[]);
    for (k, &n) in axes.iter().enumerate().rev() {
        let last_pass = if k == 0 { scale } else { None };
        axis_pass(data, n, inner, inverse, last_pass, parallel)?;
        inner = inner
            .checked_mul(n)
            .ok_or_else(|| overflow("fft size", format!("{dims:?}")))?;
    }
    if axes.is_empty() {
        if let Some(s) = scale {
            data.iter_mut().for_each(|v| *v = v.scale(s));
        }
    }
    Ok(())
}

/// Complex FFT in place over the trailing axes `lengths` of `data`
/// (`batch` rows of `prod(lengths)` elements): forward (`e^{-2πi jk/n}`,
/// unnormalized) or inverse (`e^{+2πi jk/n}`, scaled by `1/prod(lengths)`).
pub fn c2c<T: FftFloat>(
    data: &mut [Complex<T>], batch: usize, lengths: &[usize], inverse: bool, parallel: bool,
) -> Result<()> {
    let want = elements(batch, lengths)?;
    if data.len() != want {
        return Err(bad_buffer("fft", data.len(), want));
    }
    if data.is_empty() {
        return Ok(());
    }
    let scale = if inverse {
        Some(inverse_scale(checked_size(lengths)?)?)
    } else {
        None
    };
    c2c_axes(data, lengths, lengths.len(), inverse, scale, parallel)
}

/// The layout of a real transform over the trailing axes `lengths` of
/// `batch` rows.
struct RealLayout<'a> {
    /// The lengths before the last one (complex transforms).
    lead: &'a [usize],
    /// The real length of the last axis.
    n: usize,
    /// Its complex length, `n / 2 + 1`.
    m: usize,
    /// The dims of the half spectrum (`lengths` with the last replaced by `m`).
    half: Vec<usize>,
    /// Reals (`rows * n`) and frequencies (`rows * m`) per task.
    real_chunk: usize,
    half_chunk: usize,
}

impl<'a> RealLayout<'a> {
    /// The layout, after checking the lengths of the `input` and `output`
    /// buffers of the transform `what`: reals in and the half spectrum out
    /// when `forward`, the other way round otherwise.
    fn new(
        what: &str, forward: bool, lengths: &'a [usize], batch: usize, input: usize, output: usize,
    ) -> Result<Self> {
        let Some((&n, lead)) = lengths.split_last() else {
            return Err(Error::InvalidArgument(
                "real FFT: at least one FFT length is needed".into(),
            ));
        };
        let m = half_len(n);
        let mut half = lead.to_vec();
        half.push(m);
        let (real, spectrum) = (elements(batch, lengths)?, elements(batch, &half)?);
        let wants = if forward {
            [real, spectrum]
        } else {
            [spectrum, real]
        };
        for ((got, side), want) in [(input, "input"), (output, "output")]
            .into_iter()
            .zip(wants)
        {
            if got != want {
                return Err(bad_buffer(&format!("{what} {side}"), got, want));
            }
        }
        let rows = rows_per_task(n);
        let chunk = |len: usize| {
            rows.checked_mul(len)
                .ok_or_else(|| overflow("fft task", format!("{lengths:?}")))
        };
        Ok(RealLayout {
            lead,
            n,
            m,
            real_chunk: chunk(n)?,
            half_chunk: chunk(m)?,
            half,
        })
    }
}

/// Real-to-complex FFT over the trailing axes `lengths` of `input` (`batch`
/// rows of `prod(lengths)` reals) into `out` (`batch` rows of the half
/// spectrum `lengths[..-1] + [n/2 + 1]`), unnormalized.
pub fn r2c<T: FftFloat>(
    input: &[T], batch: usize, lengths: &[usize], out: &mut [Complex<T>], parallel: bool,
) -> Result<()> {
    let layout = RealLayout::new("rfft", true, lengths, batch, input.len(), out.len())?;
    let RealLayout { n, m, .. } = layout;
    if n == 0 || out.is_empty() {
        out.fill(zero());
        return Ok(());
    }
    let plan = T::plans().real_forward(n);
    let par = parallel && out.len() >= PARALLEL_MIN;
    each_chunk(out, layout.half_chunk, par, |i, ochunk| {
        let ichunk = input.chunks(layout.real_chunk).nth(i).unwrap_or(&[]);
        let mut row = alloc::filled("rfft", T::zero(), n)?;
        let mut scratch = alloc::filled("rfft", zero::<T>(), plan.get_scratch_len())?;
        for (irow, orow) in ichunk.chunks_exact(n).zip(ochunk.chunks_exact_mut(m)) {
            row.copy_from_slice(irow);
            plan.process_with_scratch(&mut row, orow, &mut scratch)
                .map_err(|e| Error::InvalidArgument(format!("rfft: {e}")))?;
        }
        Ok(())
    })?;
    c2c_axes(out, &layout.half, layout.lead.len(), false, None, parallel)
}

/// Complex-to-real FFT: `input` holds `batch` rows of the half spectrum
/// `lengths[..-1] + [n/2 + 1]`; `out` receives `batch` rows of
/// `prod(lengths)` reals, scaled by `1/prod(lengths)`. The imaginary parts
/// of the zero and (even `n`) Nyquist frequencies of the last axis are
/// ignored.
pub fn c2r<T: FftFloat>(
    input: &[Complex<T>], batch: usize, lengths: &[usize], out: &mut [T], parallel: bool,
) -> Result<()> {
    let layout = RealLayout::new("irfft", false, lengths, batch, input.len(), out.len())?;
    let RealLayout { lead, n, m, .. } = layout;
    if out.is_empty() {
        return Ok(());
    }
    // The leading axes are inverse complex transforms of the half spectrum.
    let work;
    let spectrum: &[Complex<T>] = if lead.is_empty() {
        input
    } else {
        let mut w = alloc::filled("irfft", zero::<T>(), input.len())?;
        w.copy_from_slice(input);
        c2c_axes(&mut w, &layout.half, lead.len(), true, None, parallel)?;
        work = w;
        &work
    };
    let scale = inverse_scale::<T>(checked_size(lengths)?)?;
    let plan = T::plans().real_inverse(n);
    let par = parallel && out.len() >= PARALLEL_MIN;
    let even = n.is_multiple_of(2);
    each_chunk(out, layout.real_chunk, par, |i, ochunk| {
        let ichunk = spectrum.chunks(layout.half_chunk).nth(i).unwrap_or(&[]);
        let mut row = alloc::filled("irfft", zero::<T>(), m)?;
        let mut scratch = alloc::filled("irfft", zero::<T>(), plan.get_scratch_len())?;
        for (irow, orow) in ichunk.chunks_exact(m).zip(ochunk.chunks_exact_mut(n)) {
            row.copy_from_slice(irow);
            if let Some(first) = row.first_mut() {
                first.im = T::zero();
            }
            if let (true, Some(last)) = (even, row.last_mut()) {
                last.im = T::zero();
            }
            plan.process_with_scratch(&mut row, orow, &mut scratch)
                .map_err(|e| Error::InvalidArgument(format!("irfft: {e}")))?;
            orow.iter_mut().for_each(|v| *v = v.mul(scale));
        }
        Ok(())
    })
}
