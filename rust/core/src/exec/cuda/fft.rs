//! The device form of `fft` (no CUDA types: planned and tested
//! everywhere; the runtime runs it through cuFFT, feature `cuda`).
//!
//! One cuFFT transform per equation over the trailing one to three axes,
//! every leading axis a batch (`cufftPlanMany` with the basic, tightly
//! packed layout: row-major arrays as the executor stores them):
//!
//! | JAX type | complex64 | complex128 | direction |
//! |----------|-----------|------------|-----------|
//! | `FFT`    | `C2C`     | `Z2Z`      | forward   |
//! | `IFFT`   | `C2C`     | `Z2Z`      | inverse   |
//! | `RFFT`   | `R2C`     | `D2Z`      | forward   |
//! | `IRFFT`  | `C2R`     | `Z2D`      | inverse   |
//!
//! cuFFT's inverse transforms are unnormalized; JAX scales `IFFT` and
//! `IRFFT` by `1/prod(fft_lengths)`, so an inverse step carries a generated
//! in-place kernel ([`scale_kernel`]) multiplying every output element by
//! that factor, computed in the element type as the CPU kernels compute it.
//! A `C2R` transform overwrites its input, so the runtime transforms a
//! device copy of it. Transforms cuFFT cannot take (f16/bf16, an extent
//! or batch beyond `i32`, an empty array) run on the host.

use super::codegen::{c_literal, finish, KernelSource};
use super::complex;
use crate::array::checked_size;
use crate::dtype::DType;
use crate::error::Result;
use crate::ir::{Aval, Scalar, Var};
use crate::prims::fft::{half_len, FftParams, FftType};
use std::fmt::Write;

/// cuFFT's transform types (`cufftType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CufftType {
    C2C,
    R2C,
    C2R,
    Z2Z,
    D2Z,
    Z2D,
}

impl CufftType {
    /// cuFFT's name of the type (`CUFFT_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            CufftType::C2C => "C2C",
            CufftType::R2C => "R2C",
            CufftType::C2R => "C2R",
            CufftType::Z2Z => "Z2Z",
            CufftType::D2Z => "D2Z",
            CufftType::Z2D => "Z2D",
        }
    }

    /// The bytes of one input and one output element.
    pub fn element_bytes(self) -> (usize, usize) {
        match self {
            CufftType::C2C => (8, 8),
            CufftType::R2C => (4, 8),
            CufftType::C2R => (8, 4),
            CufftType::Z2Z => (16, 16),
            CufftType::D2Z => (8, 16),
            CufftType::Z2D => (16, 8),
        }
    }
}

/// One `fft` equation as a cuFFT transform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FftSpec {
    pub fft_type: FftType,
    pub cufft: CufftType,
    /// The transform lengths (the trailing axes of the real or complex
    /// full-length side), one to three.
    pub lengths: Vec<usize>,
    /// The number of transforms (the product of the leading axes).
    pub batch: usize,
    /// Elements of the input and of the output over the whole batch.
    pub in_len: usize,
    pub out_len: usize,
    /// The `1/prod(lengths)` scaling of an inverse transform, run in place
    /// on the output after cuFFT.
    pub scale: Option<KernelSource>,
}

impl FftSpec {
    /// Whether cuFFT runs the transform in its inverse direction.
    pub fn inverse(&self) -> bool {
        matches!(self.fft_type, FftType::Ifft | FftType::Irfft)
    }
}

/// The cuFFT type of a transform of `fft_type` from `input` to `output`
/// elements, `None` when cuFFT has none.
fn cufft_type(fft_type: FftType, input: DType, output: DType) -> Option<CufftType> {
    Some(match (fft_type, input, output) {
        (FftType::Fft | FftType::Ifft, DType::C64, DType::C64) => CufftType::C2C,
        (FftType::Fft | FftType::Ifft, DType::C128, DType::C128) => CufftType::Z2Z,
        (FftType::Rfft, DType::F32, DType::C64) => CufftType::R2C,
        (FftType::Rfft, DType::F64, DType::C128) => CufftType::D2Z,
        (FftType::Irfft, DType::C64, DType::F32) => CufftType::C2R,
        (FftType::Irfft, DType::C128, DType::F64) => CufftType::Z2D,
        _ => return None,
    })
}

/// The cuFFT form of `fft(x) -> out` (`out_var` names the output the scale
/// kernel writes), `None` when the transform runs on the host.
pub fn fft_spec(p: &FftParams, x: &Aval, out: &Aval, out_var: Var) -> Result<Option<FftSpec>> {
    let Some(cufft) = cufft_type(p.fft_type, x.dtype, out.dtype) else {
        return Ok(None);
    };
    let rank = p.fft_lengths.len();
    if !(1..=3).contains(&rank) || x.shape.len() < rank || out.shape.len() != x.shape.len() {
        return Ok(None);
    }
    let lead = x.shape.len().saturating_sub(rank);
    // The full-length side carries `fft_lengths` on its trailing axes, the
    // other side the half spectrum `n/2 + 1` on the last one.
    let n = p.fft_lengths.last().copied().unwrap_or(0);
    let mut half = p.fft_lengths.clone();
    if let Some(last) = half.last_mut() {
        *last = half_len(n);
    }
    let (full_side, other_side) = match p.fft_type {
        FftType::Fft | FftType::Ifft => (&x.shape, (&out.shape, &p.fft_lengths)),
        FftType::Rfft => (&x.shape, (&out.shape, &half)),
        FftType::Irfft => (&out.shape, (&x.shape, &half)),
    };
    let trailing = |s: &[usize]| s.get(lead..).map(<[usize]>::to_vec);
    if trailing(full_side).as_ref() != Some(&p.fft_lengths)
        || trailing(other_side.0).as_ref() != Some(other_side.1)
        || x.shape.get(..lead) != out.shape.get(..lead)
    {
        return Ok(None);
    }
    let batch = checked_size(x.shape.get(..lead).unwrap_or_default())?;
    let (in_len, out_len) = (checked_size(&x.shape)?, checked_size(&out.shape)?);
    let fits = |v: usize| i32::try_from(v).is_ok_and(|v| v > 0);
    if !(p.fft_lengths.iter().all(|&l| fits(l)) && fits(batch) && in_len > 0 && out_len > 0) {
        return Ok(None);
    }
    let inverse = matches!(p.fft_type, FftType::Ifft | FftType::Irfft);
    let scale = if inverse {
        Some(scale_kernel(
            out.dtype,
            checked_size(&p.fft_lengths)?,
            out_len,
            out_var,
        )?)
    } else {
        None
    };
    Ok(Some(FftSpec {
        fft_type: p.fft_type,
        cufft,
        lengths: p.fft_lengths.clone(),
        batch,
        in_len,
        out_len,
        scale,
    }))
}

/// `1/count` in the part type of `d` (f32 for complex64 and float32), as a
/// C literal of that type: the factor the CPU kernels multiply by.
fn inverse_factor(d: DType, count: usize) -> Result<String> {
    let part = if d.is_complex() { complex::part(d) } else { d };
    let v = if part == DType::F32 {
        f64::from(1.0f32 / count as f32)
    } else {
        1.0 / count as f64
    };
    c_literal(Scalar::Float(v), part)
}

/// The in-place kernel multiplying the `len` elements of `out` (of dtype
/// `d`: complex, or float32/float64 for `IRFFT`) by `1/count`. No inputs:
/// its one parameter is the transform's output.
pub fn scale_kernel(d: DType, count: usize, len: usize, out: Var) -> Result<KernelSource> {
    let s = inverse_factor(d, count)?;
    let mut body = String::new();
    let ty = match complex::c_type(d) {
        Some(ty) => {
            let t = complex::part_c(d);
            let _ = writeln!(
                body,
                "    out0[i] = mj_cmake<{t}>(out0[i].re * {s}, out0[i].im * {s});"
            );
            ty
        }
        None => {
            let ty = super::kernels::c_ty(d)?;
            let _ = writeln!(body, "    out0[i] = out0[i] * {s};");
            ty
        }
    };
    let params = vec![format!("{ty}* __restrict__ out0")];
    Ok(finish(params, &body, Vec::new(), vec![out], len))
}

/// What a cuFFT plan is made for: the transform type (which fixes the
/// element dtype: `C2C`/`R2C`/`C2R` single, `Z2Z`/`D2Z`/`Z2D` double
/// precision), the lengths and the batch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanKey {
    pub cufft: CufftType,
    pub lengths: Vec<usize>,
    pub batch: usize,
}

impl PlanKey {
    pub fn of(spec: &FftSpec) -> PlanKey {
        PlanKey {
            cufft: spec.cufft,
            lengths: spec.lengths.clone(),
            batch: spec.batch,
        }
    }
}

/// Plans kept per device: a cuFFT plan holds device work memory, so the
/// cache is bounded (least recently used dropped first).
pub const PLAN_CACHE_SIZE: usize = 16;

/// A bounded least-recently-used cache of plans `P` by [`PlanKey`] (the
/// runtime's cuFFT plans; generic so that it is tested without a GPU).
#[derive(Debug)]
pub struct PlanCache<P> {
    capacity: usize,
    /// Most recently used first.
    entries: Vec<(PlanKey, P)>,
}

impl<P: Clone> PlanCache<P> {
    pub fn new(capacity: usize) -> PlanCache<P> {
        PlanCache {
            capacity: capacity.max(1),
            entries: Vec::new(),
        }
    }

    /// The plan of `key`, made by `make` (and cached) on a miss; a failed
    /// `make` caches nothing.
    pub fn get_or_make(&mut self, key: &PlanKey, make: impl FnOnce() -> Result<P>) -> Result<P> {
        if let Some(at) = self.entries.iter().position(|(k, _)| k == key) {
            let hit = self.entries.remove(at);
            let plan = hit.1.clone();
            self.entries.insert(0, hit);
            return Ok(plan);
        }
        let plan = make()?;
        self.entries.truncate(self.capacity.saturating_sub(1));
        self.entries.insert(0, (key.clone(), plan.clone()));
        Ok(plan)
    }

    /// The cached keys, most recently used first.
    pub fn keys(&self) -> Vec<&PlanKey> {
        self.entries.iter().map(|(k, _)| k).collect()
    }
}
