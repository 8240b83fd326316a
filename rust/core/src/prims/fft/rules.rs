//! The transpose and batching rules of `fft` (see the family docs).

use super::{half_len, FftParams, FftType, NAME};
use crate::array::{checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::Atom;
use crate::prims::batch::{move_axis, unbatched};
use crate::prims::family::{arity_error, emit1, BatchOut, Operand, TransposeOut};
use crate::prims::transpose::single_ct;
use crate::prims::{BinaryOp, BroadcastInDim, Primitive};
use rustfft::num_complex::Complex;

/// `x * w`, where `w` weighs the last axis of `x` (the half spectrum of
/// real length `n`): `edge` at the zero frequency (and at the Nyquist
/// frequency for even `n`), `other` everywhere else.
fn weigh_half_spectrum(b: &mut Builder, x: Atom, n: usize, edge: f64, other: f64) -> Result<Atom> {
    let aval = b.aval(&x)?;
    let m = half_len(n);
    let weight = |i: usize| {
        let at_edge = i == 0 || (n.is_multiple_of(2) && i.checked_add(1) == Some(m));
        if at_edge {
            edge
        } else {
            other
        }
    };
    let buf = match aval.dtype {
        DType::C64 => Buffer::C64(
            (0..m)
                .map(|i| Complex::new(weight(i) as f32, 0.0))
                .collect::<Vec<_>>()
                .into(),
        ),
        DType::C128 => Buffer::C128(
            (0..m)
                .map(|i| Complex::new(weight(i), 0.0))
                .collect::<Vec<_>>()
                .into(),
        ),
        other => {
            return Err(Error::dtype(
                NAME,
                &[other],
                "the half spectrum of a transpose must be complex",
            ))
        }
    };
    let w = b.add_const(HostArray::new(vec![m], buf)?.shared(), false)?;
    let last = aval.ndim().saturating_sub(1);
    let wide = b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape: aval.shape.clone(),
            broadcast_dimensions: vec![last],
        }),
        vec![Atom::Var(w)],
    )?;
    b.binary(BinaryOp::Mul, x, wide)
}

fn conj(b: &mut Builder, x: Atom) -> Result<Atom> {
    let input_dtype = b.aval(&x)?.dtype;
    b.add_eqn1(
        Primitive::Conj(crate::prims::complex::Conj { input_dtype }),
        vec![x],
    )
}

fn with_type(p: &FftParams, fft_type: FftType) -> FftParams {
    FftParams {
        fft_type,
        fft_lengths: p.fft_lengths.clone(),
    }
}

/// JAX's transpose: `FFT`/`IFFT` are symmetric; `RFFT` and `IRFFT`
/// transpose to each other with the half-spectrum weights and conjugation.
pub(super) fn transpose(
    p: &FftParams, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand],
) -> TransposeOut {
    let Some(ct) = single_ct(NAME, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [Operand::Linear(_)] = ops else {
        return Ok(vec![None; ops.len()]);
    };
    let n = p.fft_lengths.last().copied().unwrap_or(1);
    // `prod(fft_lengths)` as a float (exact up to 2^53, far beyond any
    // buffer).
    let total = checked_size(&p.fft_lengths)? as f64;
    let out = match p.fft_type {
        FftType::Fft | FftType::Ifft => emit1(b, p.clone(), vec![ct])?,
        FftType::Rfft => {
            // prod(n) * irfft(conj(ct) / mask), mask 1 at the edges, 2 inside.
            let c = conj(b, ct)?;
            let w = weigh_half_spectrum(b, c, n, total, total / 2.0)?;
            emit1(b, with_type(p, FftType::Irfft), vec![w])?
        }
        FftType::Irfft => {
            // conj(mask * rfft(ct) / prod(n)).
            let r = emit1(b, with_type(p, FftType::Rfft), vec![ct])?;
            let w = weigh_half_spectrum(b, r, n, 1.0 / total, 2.0 / total)?;
            conj(b, w)?
        }
    };
    Ok(vec![Some(out)])
}

/// The mapped axis moves to the front (the transformed axes are trailing).
pub(super) fn batch(
    p: &FftParams, b: &mut Builder, xs: &[Atom], dims: &[Option<usize>],
) -> BatchOut {
    match (xs, dims) {
        ([_], [None]) => unbatched(p, b, xs),
        ([x], [Some(d)]) => {
            let front = move_axis(b, x.clone(), *d, 0)?;
            let y = emit1(b, p.clone(), vec![front])?;
            Ok((vec![y], vec![Some(0)]))
        }
        _ => Err(arity_error(NAME, 1, xs.len())),
    }
}
