//! Transformation-rule helpers of `conv_general_dilated`: axis reshapes for
//! vmap, the padding of the transposed convolutions and the lhs/rhs
//! transposes.

use super::{dilate, spatial, to_i64, ConvDims, ConvParams, NAME};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};
use crate::prims::family::Family;
use crate::prims::Primitive;
use crate::prims::{ConvertElementType, Reshape, Rev, Transpose};

// ----------------------------------------------------------------- rules

pub(super) fn conv(b: &mut Builder, p: ConvParams, lhs: Atom, rhs: Atom) -> Result<Atom> {
    b.add_eqn1(Primitive::Conv(Box::new(p)), vec![lhs, rhs])
}

/// Moves axis `src` of `x` next to axis `dst` (an index once `src` is
/// removed) and merges them, `src` as the major part.
pub(crate) fn reshape_axis_into(b: &mut Builder, src: usize, dst: usize, x: Atom) -> Result<Atom> {
    let shape = b.aval(&x)?.shape;
    let mut perm: Vec<usize> = (0..shape.len()).filter(|&i| i != src).collect();
    if dst > perm.len() {
        return Err(Error::InvalidArgument(format!(
            "{NAME}: axis {dst} out of range for {shape:?}"
        )));
    }
    perm.insert(dst, src);
    let mut new_shape = crate::prims::batch::remove_axis(&shape, src);
    let s = shape.get(src).copied().unwrap_or(1);
    if let Some(slot) = new_shape.get_mut(dst) {
        *slot = slot.saturating_mul(s);
    }
    let moved = if perm.iter().enumerate().all(|(i, &q)| i == q) {
        x
    } else {
        b.add_eqn1(
            Primitive::Transpose(Transpose { permutation: perm }),
            vec![x],
        )?
    };
    b.add_eqn1(
        Primitive::Reshape(Reshape {
            new_sizes: new_shape,
        }),
        vec![moved],
    )
}

/// Splits axis `src` of `x` into `(size1, rest)`.
pub(crate) fn reshape_axis_out_of(
    b: &mut Builder, src: usize, size1: usize, x: Atom,
) -> Result<Atom> {
    let mut shape = b.aval(&x)?.shape;
    let s = shape.get(src).copied().unwrap_or(0);
    let rest = s.checked_div(size1).unwrap_or(0);
    if let Some(slot) = shape.get_mut(src) {
        *slot = rest;
    }
    shape.insert(src.min(shape.len()), size1);
    b.add_eqn1(Primitive::Reshape(Reshape { new_sizes: shape }), vec![x])
}

fn swap01(spec: &[usize]) -> Vec<usize> {
    let mut s = spec.to_vec();
    if s.len() >= 2 {
        s.swap(0, 1);
    }
    s
}

pub(super) fn spec_get(spec: &[usize], k: usize) -> usize {
    spec.get(k).copied().unwrap_or(0)
}

/// Axis `i`'s dilated input, window and output sizes (output dilated by
/// the strides), shared by both transposes' padding rules.
fn dilated_sizes(
    i: usize, in_shape: &[usize], window: &[usize], strides: &[usize], out_shape: &[usize],
    lhs_dil: &[usize], rhs_dil: &[usize],
) -> Result<(i64, i64, i64)> {
    let g = |v: &[usize], dflt: usize| v.get(i).copied().unwrap_or(dflt);
    Ok((
        to_i64(dilate(g(in_shape, 0), g(lhs_dil, 1))?)?,
        to_i64(dilate(g(window, 0), g(rhs_dil, 1))?)?,
        to_i64(dilate(g(out_shape, 0), g(strides, 1))?)?,
    ))
}

/// Per spatial axis: the dilated input, window and output sizes and the low
/// padding.
pub(crate) fn axis_geometry(
    in_shape: &[usize], window: &[usize], strides: &[usize], out_shape: &[usize],
    padding: &[(i64, i64)], lhs_dil: &[usize], rhs_dil: &[usize],
) -> Result<Vec<(i64, i64, i64, i64)>> {
    (0..in_shape.len())
        .map(|i| {
            let (ld, rd, od) =
                dilated_sizes(i, in_shape, window, strides, out_shape, lhs_dil, rhs_dil)?;
            Ok((ld, rd, od, padding.get(i).map_or(0, |x| x.0)))
        })
        .collect()
}

/// [`axis_geometry`] of convolution `c` with spatial lhs, rhs and output
/// sizes `lhs`, `rhs`, `out`.
fn conv_axes(
    c: &ConvParams, lhs: &[usize], rhs: &[usize], out: &[usize],
) -> Result<Vec<(i64, i64, i64, i64)>> {
    let (strides, pad) = (&c.window_strides, &c.padding);
    axis_geometry(
        lhs,
        rhs,
        strides,
        out,
        pad,
        &c.lhs_dilation,
        &c.rhs_dilation,
    )
}

/// Padding of the lhs-transpose convolution (also reduce_window_sum's
/// transpose), from [`axis_geometry`]: per axis `(window' - lo - 1, in' +
/// window' - 1 - out' - before)` over dilated sizes.
pub(crate) fn vjp_lhs_padding(axes: &[(i64, i64, i64, i64)]) -> Vec<(i64, i64)> {
    axes.iter()
        .map(|&(ld, rd, od, lo)| {
            let before = rd.saturating_sub(lo).saturating_sub(1);
            let after = ld
                .saturating_add(rd)
                .saturating_sub(1)
                .saturating_sub(od)
                .saturating_sub(before);
            (before, after)
        })
        .collect()
}

/// Padding of the rhs-transpose convolution, from [`axis_geometry`]: per
/// axis `(lo, out' - in' + window' - lo - 1)` over dilated sizes.
fn vjp_rhs_padding(axes: &[(i64, i64, i64, i64)]) -> Vec<(i64, i64)> {
    axes.iter()
        .map(|&(ld, rd, od, lo)| {
            let hi = od
                .saturating_sub(ld)
                .saturating_add(rd.saturating_sub(lo).saturating_sub(1));
            (lo, hi)
        })
        .collect()
}

/// A cotangent in the operands' dtype (the result may be a preferred wider type).
pub(super) fn ct_as(b: &mut Builder, ct: Atom, dtype: DType) -> Result<Atom> {
    if b.aval(&ct)?.dtype == dtype {
        return Ok(ct);
    }
    b.add_eqn1(
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: dtype,
            weak_type: false,
        }),
        vec![ct],
    )
}

pub(super) fn transpose_lhs(
    b: &mut Builder, c: &ConvParams, ct: Atom, rhs: Atom, lhs_shape: &[usize],
) -> Result<Atom> {
    let d = &c.dims;
    let (ls, rs, os) = (&d.lhs_spec, &d.rhs_spec, &d.out_spec);
    let rhs_shape = b.aval(&rhs)?.shape;
    let ct_shape = b.aval(&ct)?.shape;
    let (fg, bg) = (c.feature_group_count, c.batch_group_count);
    let mut groups = fg;
    let mut rhs = rhs;
    if fg > 1 || bg > 1 {
        let n = fg.max(bg);
        rhs = reshape_axis_out_of(b, spec_get(rs, 0), n, rhs)?;
        rhs = reshape_axis_into(b, spec_get(rs, 0), spec_get(rs, 1), rhs)?;
        groups = n;
    }
    let (l, r, o) = (
        spatial(lhs_shape, ls),
        spatial(&rhs_shape, rs),
        spatial(&ct_shape, os),
    );
    let padding = vjp_lhs_padding(&conv_axes(c, &l, &r, &o)?);
    let rev = b.add_eqn1(
        Primitive::Rev(Rev {
            dimensions: rs.iter().skip(2).copied().collect(),
        }),
        vec![rhs],
    )?;
    let t = ConvParams {
        window_strides: c.lhs_dilation.clone(),
        padding,
        lhs_dilation: c.window_strides.clone(),
        rhs_dilation: c.rhs_dilation.clone(),
        dims: ConvDims {
            lhs_spec: os.clone(),
            rhs_spec: swap01(rs),
            out_spec: ls.clone(),
        },
        feature_group_count: groups,
        batch_group_count: 1,
        preferred_element_type: None,
    };
    let mut out = conv(b, t, ct, rev)?;
    if bg > 1 {
        out = reshape_axis_out_of(b, spec_get(ls, 1), bg, out)?;
        out = reshape_axis_into(b, spec_get(ls, 1), spec_get(ls, 0), out)?;
    }
    Ok(out)
}

pub(super) fn transpose_rhs(
    b: &mut Builder, c: &ConvParams, ct: Atom, lhs: Atom, rhs_aval: &Aval,
) -> Result<Atom> {
    let d = &c.dims;
    let (ls, rs, os) = (&d.lhs_spec, &d.rhs_spec, &d.out_spec);
    let lhs_shape = b.aval(&lhs)?.shape;
    let ct_shape = b.aval(&ct)?.shape;
    if ct_shape.contains(&0) {
        return b.zeros(rhs_aval);
    }
    let (fg, bg) = if c.batch_group_count > 1 {
        (c.batch_group_count, 1)
    } else {
        (1, c.feature_group_count)
    };
    let (l, r, o) = (
        spatial(&lhs_shape, ls),
        spatial(&rhs_aval.shape, rs),
        spatial(&ct_shape, os),
    );
    let padding = vjp_rhs_padding(&conv_axes(c, &l, &r, &o)?);
    let t = ConvParams {
        window_strides: c.rhs_dilation.clone(),
        padding,
        lhs_dilation: c.lhs_dilation.clone(),
        rhs_dilation: c.window_strides.clone(),
        dims: ConvDims {
            lhs_spec: swap01(ls),
            rhs_spec: swap01(os),
            out_spec: swap01(rs),
        },
        feature_group_count: fg,
        batch_group_count: bg,
        preferred_element_type: None,
    };
    conv(b, t, lhs, ct)
}

/// A map of size 0: zeros of the per-example result with an empty axis in front.
pub(super) fn empty_batch(
    b: &mut Builder, c: &ConvParams, ins: &[Atom], dims: &[Option<usize>],
) -> Result<(Vec<Atom>, Vec<Option<usize>>)> {
    let mut avals = Vec::with_capacity(ins.len());
    for (x, d) in ins.iter().zip(dims) {
        let mut a = b.aval(x)?;
        if let Some(d) = d {
            a.shape = crate::prims::batch::remove_axis(&a.shape, *d);
        }
        avals.push(a);
    }
    let mut out = c
        .abstract_eval(&avals)?
        .into_iter()
        .next()
        .ok_or_else(|| Error::InvalidArgument(format!("{NAME}: no output aval")))?;
    out.shape.insert(0, 0);
    Ok((vec![b.zeros(&out)?], vec![Some(0)]))
}
