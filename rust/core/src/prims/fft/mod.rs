//! Fast Fourier transforms: `jax.lax.fft`'s primitive `fft` with its four
//! transform types over the trailing one to three axes (`fft_lengths`) of
//! an array (shape, kernel, params and transformation rules).
//!
//! * `FFT`/`IFFT`: complex to complex of the same shape; `IFFT` is scaled by
//!   `1/prod(fft_lengths)` (NumPy's `ifftn`).
//! * `RFFT`: float32/float64 to complex64/complex128, the last axis
//!   becoming `n/2 + 1` frequencies.
//! * `IRFFT`: complex to real, the last axis of `n/2 + 1` frequencies
//!   becoming `fft_lengths[-1]` samples (the imaginary parts of the zero
//!   and Nyquist frequencies are ignored).
//!
//! The CPU kernels ([`kernels`]) run rustfft's plans (realfft's for the
//! real-input and real-output transforms), kept in a bounded process-wide
//! cache ([`plans`]); results do not depend on the thread count.
//!
//! Rules, as JAX: every type is linear, so the JVP applies the same
//! transform to the tangent; `FFT` and `IFFT` transpose to themselves (the
//! DFT matrix is symmetric); `RFFT` transposes to `IRFFT` of the conjugated
//! cotangent weighted by `prod(n)` (halved away from the zero and Nyquist
//! frequencies, which the half spectrum holds once), and `IRFFT` to the
//! conjugated `RFFT` of the cotangent weighted by `1/prod(n)` (doubled
//! away from them). Batching moves the mapped axis to the front.

use super::family::{emit1, operands, single_out};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::params::{Lookup, Param, ParamField};
use crate::array::{checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

pub mod kernels;
pub mod plans;
mod rules;

pub use kernels::{c2c, c2r, half_len, r2c};
pub use plans::FftFloat;
use rustfft::num_complex::Complex;

/// `jax.lax.FftType`: which transform (its integer value is JAX's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FftType {
    /// Forward complex-to-complex.
    Fft,
    /// Inverse complex-to-complex (scaled by `1/prod(fft_lengths)`).
    Ifft,
    /// Forward real-to-complex (half spectrum).
    Rfft,
    /// Inverse complex-to-real (from the half spectrum).
    Irfft,
}

impl FftType {
    /// JAX's enum value.
    pub fn code(self) -> i64 {
        match self {
            FftType::Fft => 0,
            FftType::Ifft => 1,
            FftType::Rfft => 2,
            FftType::Irfft => 3,
        }
    }

    /// The type of JAX's enum value `code`.
    pub fn from_code(code: i64) -> Option<FftType> {
        match code {
            0 => Some(FftType::Fft),
            1 => Some(FftType::Ifft),
            2 => Some(FftType::Rfft),
            3 => Some(FftType::Irfft),
            _ => None,
        }
    }

    /// JAX's enum name.
    pub fn name(self) -> &'static str {
        match self {
            FftType::Fft => "FFT",
            FftType::Ifft => "IFFT",
            FftType::Rfft => "RFFT",
            FftType::Irfft => "IRFFT",
        }
    }
}

impl ParamField for FftType {
    fn to_param(&self) -> Param {
        Param::Int(self.code())
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<FftType> {
        match p.need(key)? {
            Param::Int(i) => FftType::from_code(*i)
                .ok_or_else(|| Error::param(p.prim(), key, format!("unknown FFT type {i}"))),
            Param::Str(s) => match s.to_ascii_uppercase().as_str() {
                "FFT" => Ok(FftType::Fft),
                "IFFT" => Ok(FftType::Ifft),
                "RFFT" => Ok(FftType::Rfft),
                "IRFFT" => Ok(FftType::Irfft),
                _ => Err(Error::param(
                    p.prim(),
                    key,
                    format!("Unknown FFT type '{s}'"),
                )),
            },
            other => Err(p.bad(key, "an FFT type", other)),
        }
    }
}

crate::declare_params! {
    /// `fft(x)`: the `fft_type` transform over the trailing
    /// `len(fft_lengths)` (one to three) axes.
    pub struct FftParams {
        fft_type: FftType,
        fft_lengths: Vec<usize>,
    }
}

const NAME: &str = "fft";

fn fft_error(reason: String) -> Error {
    Error::param(NAME, "fft_lengths", reason)
}

fn shape_text(s: &[usize]) -> String {
    match s {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            s.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl FftParams {
    /// The operand's leading (batch) dims and its trailing transformed dims.
    fn split<'a>(&self, x: &'a Aval) -> Result<(&'a [usize], &'a [usize])> {
        let k = self.fft_lengths.len();
        if !(1..=3).contains(&k) {
            return Err(fft_error(format!(
                "fft_lengths {} must have 1 to 3 entries",
                shape_text(&self.fft_lengths)
            )));
        }
        match x.ndim().checked_sub(k) {
            Some(lead) => Ok(x.shape.split_at(lead)),
            None => Err(fft_error(format!(
                "FFT input shape {} must have at least as many input dimensions as fft_lengths {}.",
                shape_text(&x.shape),
                shape_text(&self.fft_lengths)
            ))),
        }
    }

    /// The output aval for an operand of aval `x` (JAX's shape rule).
    fn out_aval(&self, x: &Aval) -> Result<Aval> {
        let (lead, minor) = self.split(x)?;
        let lengths = &self.fft_lengths;
        let (dtype, tail) = match self.fft_type {
            FftType::Rfft => {
                if !matches!(x.dtype, DType::F32 | DType::F64) {
                    return Err(fft_error(format!(
                        "RFFT input must be float32 or float64, got {}",
                        x.dtype
                    )));
                }
                self.check_minor(x, minor == lengths.as_slice(), "be equal to fft_lengths")?;
                let mut tail = lengths.clone();
                if let Some(last) = tail.last_mut() {
                    *last = half_len(*last);
                }
                (x.dtype.complex_dtype().unwrap_or(DType::C64), tail)
            }
            FftType::Irfft => {
                self.check_complex(x, "IRFFT")?;
                let outer = lengths.split_last().map_or(&[][..], |(_, l)| l);
                let got = minor.split_last().map_or(&[][..], |(_, l)| l);
                let why = "be equal to all except the last fft_length";
                self.check_minor(x, got == outer, why)?;
                (x.dtype.real_dtype(), lengths.clone())
            }
            FftType::Fft | FftType::Ifft => {
                self.check_complex(x, "FFT")?;
                self.check_minor(x, minor == lengths.as_slice(), "be equal to fft_lengths")?;
                (x.dtype, lengths.clone())
            }
        };
        let mut shape = lead.to_vec();
        shape.extend(tail);
        Ok(Aval::new(shape, dtype))
    }

    fn check_complex(&self, x: &Aval, what: &str) -> Result<()> {
        if x.dtype.is_complex() {
            return Ok(());
        }
        Err(fft_error(format!(
            "{what} input must be complex64 or complex128, got {}",
            x.dtype
        )))
    }

    fn check_minor(&self, x: &Aval, ok: bool, why: &str) -> Result<()> {
        if ok {
            return Ok(());
        }
        Err(fft_error(format!(
            "{} input shape {} minor dimensions must {why} {}",
            self.fft_type.name(),
            shape_text(&x.shape),
            shape_text(&self.fft_lengths)
        )))
    }

    /// The number of transforms: the product of the leading dims.
    fn batch_of(&self, x: &HostArray) -> Result<usize> {
        let lead = x.shape().len().saturating_sub(self.fft_lengths.len());
        checked_size(x.shape().get(..lead).unwrap_or(&[]))
    }
}

/// A fallibly allocated zero buffer of `n` elements.
fn zeros<E: Clone>(what: &str, dtype: DType, zero: E, n: usize) -> Result<Vec<E>> {
    crate::array::budget::filled(what, dtype, zero, n)
}

/// One kernel call: `batch` rows transformed over the trailing `lengths`,
/// into `n_out` elements.
struct Job<'a> {
    batch: usize,
    lengths: &'a [usize],
    parallel: bool,
    n_out: usize,
}

impl Job<'_> {
    /// `FFT` / `IFFT` of a copy of `v`.
    fn c2c<T: FftFloat>(&self, v: &[Complex<T>], inverse: bool) -> Result<Vec<Complex<T>>> {
        let mut data = v.to_vec();
        c2c(&mut data, self.batch, self.lengths, inverse, self.parallel)?;
        Ok(data)
    }

    /// `RFFT` of `v` into a new buffer of complex dtype `dtype`.
    fn r2c<T: FftFloat>(&self, v: &[T], dtype: DType) -> Result<Vec<Complex<T>>> {
        let zero = Complex::new(T::zero(), T::zero());
        let mut o = zeros(NAME, dtype, zero, self.n_out)?;
        r2c(v, self.batch, self.lengths, &mut o, self.parallel)?;
        Ok(o)
    }

    /// `IRFFT` of `v` into a new buffer of float dtype `dtype`.
    fn c2r<T: FftFloat>(&self, v: &[Complex<T>], dtype: DType) -> Result<Vec<T>> {
        let mut o = zeros(NAME, dtype, T::zero(), self.n_out)?;
        c2r(v, self.batch, self.lengths, &mut o, self.parallel)?;
        Ok(o)
    }
}

impl Family for FftParams {
    crate::family_identity!(
        "fft",
        example = FftParams {
            fft_type: FftType::Fft,
            fft_lengths: vec![2]
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let [x] = operands::<_, 1>(NAME, ins)?;
        let mut out = self.out_aval(x)?;
        out.weak_type = false;
        Ok(vec![out])
    }

    fn kernel(
        &self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let out = single_out(NAME, outs)?;
        let [x] = operands::<_, 1>(NAME, args)?;
        let job = Job {
            batch: self.batch_of(x)?,
            lengths: &self.fft_lengths,
            parallel: ctx.partitions(usize::MAX) > 1,
            n_out: checked_size(&out.shape)?,
        };
        let inverse = self.fft_type == FftType::Ifft;
        let buf = match (self.fft_type, x.buffer()) {
            (FftType::Fft | FftType::Ifft, Buffer::C64(v)) => {
                Buffer::C64(job.c2c(v, inverse)?.into())
            }
            (FftType::Fft | FftType::Ifft, Buffer::C128(v)) => {
                Buffer::C128(job.c2c(v, inverse)?.into())
            }
            (FftType::Rfft, Buffer::F32(v)) => Buffer::C64(job.r2c(v, DType::C64)?.into()),
            (FftType::Rfft, Buffer::F64(v)) => Buffer::C128(job.r2c(v, DType::C128)?.into()),
            (FftType::Irfft, Buffer::C64(v)) => Buffer::F32(job.c2r(v, DType::F32)?.into()),
            (FftType::Irfft, Buffer::C128(v)) => Buffer::F64(job.c2r(v, DType::F64)?.into()),
            (t, other) => {
                return Err(Error::dtype(
                    NAME,
                    &[other.dtype()],
                    format!("{} does not accept this operand dtype", t.name()),
                ))
            }
        };
        Ok(vec![HostArray::new(out.shape, buf)?])
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let [x] = operands::<_, 1>(NAME, xs)?;
        let y = emit1(b, self.clone(), vec![x.clone()])?;
        let t = match ts {
            [Some(t)] => Some(emit1(b, self.clone(), vec![t.clone()])?),
            _ => None,
        };
        Ok((vec![y], vec![t]))
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        rules::transpose(self, b, cts, ops)
    }

    fn batch(&self, b: &mut Builder, xs: &[Atom], dims: &[Option<usize>], _: usize) -> BatchOut {
        rules::batch(self, b, xs, dims)
    }
}
