//! Shape rules: output avals of every primitive, and the operand checks that
//! reject bad input with an error naming the primitive and the shapes.

use super::{BinaryOp, Family, Primitive, UnaryOp};
use crate::array::checked_size;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::Aval;
use crate::prims::{
    ArgReduce, BroadcastInDim, Checkpoint, Concatenate, Cumulative, DotGeneral, DynamicSlice,
    DynamicUpdateSlice, Iota, Pad, Pjit, Reduce, Reshape, Rev, Slice, Squeeze, Transpose,
    BroadcastInDim, Clamp, Concatenate, ConvertElementType, IntegerPow, Iota, IsFinite, Pad,
    Reshape, Rev, Round, SelectN, Squeeze, StopGradient, Transpose,
};

/// Output avals of `prim` applied to operands of avals `ins` (its shape
/// rule; the same as [`Primitive::abstract_eval`]).
pub fn abstract_eval(prim: &Primitive, ins: &[Aval]) -> Result<Vec<Aval>> {
    prim.abstract_eval(ins)
}

/// The shape rule of a core primitive (families dispatch to their impl).
pub(super) fn core_abstract_eval(prim: &Primitive, ins: &[Aval]) -> Result<Vec<Aval>> {
    let name = prim.name();
    match prim {
        Primitive::Unary(f) => f.abstract_eval(ins),
        Primitive::Binary(f) => f.abstract_eval(ins),
        Primitive::Compare(f) => f.abstract_eval(ins),
        Primitive::IntegerPow(f) => super::Family::abstract_eval(f, ins),
        Primitive::SelectN(f) => super::Family::abstract_eval(f, ins),
        Primitive::ConvertElementType(f) => super::Family::abstract_eval(f, ins),
        Primitive::BroadcastInDim(BroadcastInDim {
            shape,
            broadcast_dimensions,
        }) => {
            let [x] = arity::<1>(name, ins)?;
            broadcast_in_dim(x, shape, broadcast_dimensions)
        }
        Primitive::Reshape(Reshape { new_sizes }) => {
            let [x] = arity::<1>(name, ins)?;
            if checked_size(new_sizes)? != x.size()? {
                return Err(Error::shape(
                    name,
                    &[&x.shape, new_sizes],
                    "reshape must preserve the number of elements",
                ));
            }
            Ok(vec![Aval::weak(new_sizes.clone(), x.dtype, x.weak_type)])
        }
        Primitive::Transpose(Transpose { permutation }) => {
            let [x] = arity::<1>(name, ins)?;
            if !is_permutation(permutation, x.ndim()) {
                return Err(Error::param(
                    name,
                    "permutation",
                    format!(
                        "{permutation:?} is not a permutation of the {} axes of {}",
                        x.ndim(),
                        x.short()
                    ),
                ));
            }
            let shape = gather_dims(&x.shape, permutation);
            Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
        }
        Primitive::Squeeze(Squeeze { dimensions }) => {
            let [x] = arity::<1>(name, ins)?;
            check_axes(name, "dimensions", dimensions, x.ndim())?;
            if let Some(d) = dimensions.iter().find(|&&d| x.shape.get(d) != Some(&1)) {
                return Err(Error::shape(
                    name,
                    &[&x.shape],
                    format!("cannot squeeze axis {d} of size other than 1"),
                ));
            }
            Ok(vec![Aval::weak(
                drop_dims(&x.shape, dimensions),
                x.dtype,
                x.weak_type,
            )])
        }
        Primitive::Reduce(f) => super::Family::abstract_eval(f, ins),
        Primitive::DotGeneral(f) => super::Family::abstract_eval(f, ins),
        Primitive::Iota(Iota {
            dtype,
            shape,
            dimension,
        }) => {
            arity::<0>(name, ins)?;
            if *dimension >= shape.len() {
                return Err(Error::param(
                    name,
                    "dimension",
                    format!("{dimension} out of range for shape {shape:?}"),
                ));
            }
            if !dtype.is_numeric() {
                return Err(Error::dtype(name, &[*dtype], "requires a numeric dtype"));
            }
            checked_size(shape)?;
            Ok(vec![Aval::new(shape.clone(), *dtype)])
        }
        Primitive::StopGradient(f) => super::Family::abstract_eval(f, ins),
        Primitive::IsFinite(f) => super::Family::abstract_eval(f, ins),
        Primitive::Round(f) => super::Family::abstract_eval(f, ins),
        Primitive::Clamp(f) => super::Family::abstract_eval(f, ins),
        Primitive::Arg(ArgReduce {
            axis, index_dtype, ..
        }) => {
            let [x] = arity::<1>(name, ins)?;
            check_axes(name, "axes", &[*axis], x.ndim())?;
            if !(x.dtype.is_numeric() || x.dtype == DType::Bool) {
                return Err(Error::dtype(name, &[x.dtype], "requires a numeric operand"));
            }
            if !index_dtype.is_int() {
                return Err(Error::dtype(
                    name,
                    &[*index_dtype],
                    "index_dtype must be an integer dtype",
                ));
            }
            if x.shape.get(*axis) == Some(&0) {
                return Err(Error::shape(
                    name,
                    &[&x.shape],
                    format!("cannot take the {name} of the zero-size axis {axis}"),
                ));
            }
            Ok(vec![Aval::new(drop_dims(&x.shape, &[*axis]), *index_dtype)])
        }
        Primitive::Cumulative(Cumulative { op, axis, .. }) => {
            let [x] = arity::<1>(name, ins)?;
            check_axes(name, "axis", &[*axis], x.ndim())?;
            let class = op.class();
            if !class.accepts(x.dtype) {
                return Err(Error::dtype(
                    name,
                    &[x.dtype],
                    format!("requires {} operand", class.describe()),
        Primitive::StopGradient(StopGradient) => {
            let [x] = arity::<1>(name, ins)?;
            Ok(vec![x.clone()])
        }
        Primitive::IsFinite(IsFinite) => {
            let [x] = arity::<1>(name, ins)?;
            if !x.dtype.is_float() {
                return Err(Error::dtype(
                    name,
                    &[x.dtype],
                    "requires a floating operand",
                ));
            }
            Ok(vec![Aval::new(x.shape.clone(), DType::Bool)])
        }
        Primitive::Round(Round { .. }) => {
            let [x] = arity::<1>(name, ins)?;
            if !x.dtype.is_float() {
                return Err(Error::dtype(
                    name,
                    &[x.dtype],
                    "requires a floating operand",
                ));
            }
            Ok(vec![x.clone()])
        }
        Primitive::Clamp(Clamp) => {
            let [lo, x, hi] = arity::<3>(name, ins)?;
            same_dtype(name, &[lo, x, hi])?;
            if !x.dtype.is_numeric() {
                return Err(Error::dtype(
                    name,
                    &[lo.dtype, x.dtype, hi.dtype],
                    "requires numeric operands",
                ));
            }
            for bound in [lo, hi] {
                if !bound.shape.is_empty() && bound.shape != x.shape {
                    return Err(Error::shape(
                        name,
                        &[&lo.shape, &x.shape, &hi.shape],
                        "min and max must be scalars or have the shape of the operand",
                    ));
                }
            }
            Ok(vec![x.clone()])
        }
        Primitive::Arg(f) => super::Family::abstract_eval(f, ins),
        Primitive::Cumulative(f) => super::Family::abstract_eval(f, ins),
        Primitive::Rev(Rev { dimensions }) => {
            let [x] = arity::<1>(name, ins)?;
            check_axes(name, "dimensions", dimensions, x.ndim())?;
            Ok(vec![x.clone()])
        }
        Primitive::Slice(f) => super::Family::abstract_eval(f, ins),
        Primitive::Concatenate(Concatenate { dimension }) => concatenate(ins, *dimension),
        Primitive::Pad(Pad { padding_config }) => {
            let [x, pv] = arity::<2>(name, ins)?;
            same_dtype(name, &[x, pv])?;
            if !pv.shape.is_empty() {
                return Err(Error::shape(
                    name,
                    &[&x.shape, &pv.shape],
                    "padding_value must be a scalar",
                ));
            }
            let shape = pad_shape(&x.shape, padding_config)?;
            Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
        }
        Primitive::DynamicSlice(f) => super::Family::abstract_eval(f, ins),
        Primitive::DynamicUpdateSlice(f) => super::Family::abstract_eval(f, ins),
        Primitive::Custom(f) => super::Family::abstract_eval(f, ins),
        Primitive::Control(f) => super::Family::abstract_eval(f, ins),
        Primitive::Callback(f) => super::Family::abstract_eval(f, ins),
        Primitive::Sort(f) => super::Family::abstract_eval(f, ins),
        Primitive::Linalg(f) => super::Family::abstract_eval(f, ins),
        Primitive::Conv(f) => super::Family::abstract_eval(f, ins),
        Primitive::Window(f) => super::Family::abstract_eval(f, ins),
        Primitive::Dynamic(f) => super::Family::abstract_eval(f, ins),
        Primitive::Collective(f) => super::Family::abstract_eval(f, ins),
        Primitive::Threefry2x32(f) => super::Family::abstract_eval(f, ins),
        Primitive::Gather(f) => super::Family::abstract_eval(f, ins),
        Primitive::Scatter(f) => super::Family::abstract_eval(f, ins),
        Primitive::Pjit(f) => super::Family::abstract_eval(f, ins),
        Primitive::Checkpoint(f) => super::Family::abstract_eval(f, ins),
    }
}

/// Destructures exactly `N` operands.
pub(super) fn arity<'a, const N: usize>(
    prim: &'static str,
    ins: &'a [Aval],
) -> Result<[&'a Aval; N]> {
    let refs: Vec<&Aval> = ins.iter().collect();
    refs.try_into().map_err(|_| Error::Arity {
        prim,
        expected: N,
        got: ins.len(),
    })
}

pub(super) fn check_unary_dtype(op: UnaryOp, x: &Aval) -> Result<()> {
    if op.accepts(x.dtype) {
        Ok(())
    } else {
        Err(Error::dtype(
            op.name(),
            &[x.dtype],
            format!("requires {} operand", op.class().describe()),
        ))
    }
}

pub(super) fn check_binary_dtype(op: BinaryOp, x: &Aval, y: &Aval) -> Result<()> {
    same_dtype(op.name(), &[x, y])?;
    if op.accepts(x.dtype) {
        Ok(())
    } else {
        Err(Error::dtype(
            op.name(),
            &[x.dtype, y.dtype],
            "unsupported operand dtype",
        ))
    }
}

/// Operands must share one dtype (jnp promotes before binding).
pub(super) fn same_dtype(prim: &'static str, ins: &[&Aval]) -> Result<()> {
    match ins.split_first() {
        Some((first, rest)) if rest.iter().any(|a| a.dtype != first.dtype) => {
            let ds: Vec<DType> = ins.iter().map(|a| a.dtype).collect();
            Err(Error::dtype(prim, &ds, "operands must have equal dtypes"))
        }
        _ => Ok(()),
    }
}

/// Elementwise operands have equal shapes, except that rank-0 operands
/// combine with arrays.
pub fn elementwise_shape(prim: &'static str, ins: &[&Aval]) -> Result<Vec<usize>> {
    let mut out: Option<&Vec<usize>> = None;
    for a in ins {
        if a.shape.is_empty() {
            continue;
        }
        match out {
            None => out = Some(&a.shape),
            Some(s) if *s == a.shape => {}
            Some(_) => {
                let shapes: Vec<&[usize]> = ins.iter().map(|a| a.shape.as_slice()).collect();
                return Err(Error::shape(
                    prim,
                    &shapes,
                    "incompatible shapes for an elementwise op",
                ));
            }
        }
    }
    Ok(out.cloned().unwrap_or_default())
}

/// Output shape of `slice`.
pub(crate) fn slice_shape(
    x: &Aval,
    start: &[usize],
    limit: &[usize],
    strides: Option<&[usize]>,
) -> Result<Vec<usize>> {
    let name = "slice";
    let n = x.ndim();
    let ones = vec![1usize; n];
    let strides = strides.unwrap_or(&ones);
    if start.len() != n || limit.len() != n || strides.len() != n {
        return Err(Error::shape(
            name,
            &[&x.shape, start, limit, strides],
            "start_indices, limit_indices and strides need one entry per operand axis",
        ));
    }
    let mut out = Vec::with_capacity(n);
    for (((&d, &s), &l), &st) in x.shape.iter().zip(start).zip(limit).zip(strides) {
        if s > l || l > d || st == 0 {
            return Err(Error::shape(
                name,
                &[&x.shape, start, limit, strides],
                "need 0 <= start <= limit <= axis size and strides >= 1",
            ));
        }
        out.push(l.wrapping_sub(s).div_ceil(st));
    }
    Ok(out)
fn select_n(ins: &[Aval]) -> Result<Vec<Aval>> {
    let name = "select_n";
    let Some((pred, cases)) = ins.split_first() else {
        return Err(Error::Arity {
            prim: name,
            expected: 2,
            got: 0,
        });
    };
    let Some(first) = cases.first() else {
        return Err(Error::Arity {
            prim: name,
            expected: 2,
            got: 1,
        });
    };
    if !matches!(pred.dtype, DType::Bool | DType::I32) {
        return Err(Error::dtype(
            name,
            &[pred.dtype],
            "predicate must be bool or int32",
        ));
    }
    if pred.dtype == DType::Bool && cases.len() > 2 {
        return Err(Error::param(
            name,
            "cases",
            "a bool predicate selects among at most 2 cases",
        ));
    }
    if let Some(bad) = cases.iter().find(|c| !c.same_type(first)) {
        return Err(Error::shape(
            name,
            &[&first.shape, &bad.shape],
            format!(
                "cases must have equal shapes and dtypes ({} vs {})",
                first.short(),
                bad.short()
            ),
        ));
    }
    if !pred.shape.is_empty() && pred.shape != first.shape {
        return Err(Error::shape(
            name,
            &[&pred.shape, &first.shape],
            "predicate must be a scalar or have the shape of the cases",
        ));
    }
    let weak = cases.iter().all(|c| c.weak_type);
    Ok(vec![Aval::weak(first.shape.clone(), first.dtype, weak)])
}

/// Output shape of `pad`: `lo + hi + d + (d - 1) * interior` per axis.
pub(crate) fn pad_shape(shape: &[usize], config: &[(i64, i64, i64)]) -> Result<Vec<usize>> {
    let name = "pad";
    if config.len() != shape.len() {
        return Err(Error::shape(
            name,
            &[shape],
            format!("padding_config {config:?} needs one (lo, hi, interior) per operand axis"),
        ));
    }
    let mut out = Vec::with_capacity(shape.len());
    for (&d, &(lo, hi, int)) in shape.iter().zip(config) {
        let size = i64::try_from(d).ok().and_then(|d| {
            let gaps = d.checked_sub(1)?.max(0).checked_mul(int)?;
            lo.checked_add(hi)?.checked_add(d)?.checked_add(gaps)
        });
        match size.and_then(|s| usize::try_from(s).ok()) {
            Some(s) if int >= 0 => out.push(s),
            _ => {
                return Err(Error::shape(
                    name,
                    &[shape],
                    format!("padding_config {config:?} gives a negative or invalid size"),
                ))
            }
        }
    }
    checked_size(&out)?;
    Ok(out)
}

fn concatenate(ins: &[Aval], dimension: usize) -> Result<Vec<Aval>> {
    let name = "concatenate";
    let Some(first) = ins.first() else {
        return Err(Error::Arity {
            prim: name,
            expected: 1,
            got: 0,
        });
    };
    let refs: Vec<&Aval> = ins.iter().collect();
    same_dtype(name, &refs)?;
    let shapes: Vec<&[usize]> = ins.iter().map(|a| a.shape.as_slice()).collect();
    if dimension >= first.ndim() {
        return Err(Error::shape(
            name,
            &shapes,
            format!("dimension {dimension} out of range"),
        ));
    }
    let mut total = 0usize;
    for a in ins {
        let same_rest = a.ndim() == first.ndim()
            && a.shape
                .iter()
                .zip(&first.shape)
                .enumerate()
                .all(|(i, (p, q))| i == dimension || p == q);
        if !same_rest {
            return Err(Error::shape(
                name,
                &shapes,
                format!("operands must have equal shapes except along dimension {dimension}"),
            ));
        }
        total = total
            .checked_add(a.shape.get(dimension).copied().unwrap_or(0))
            .ok_or_else(|| Error::shape(name, &shapes, "size overflow"))?;
    }
    let mut shape = first.shape.clone();
    if let Some(s) = shape.get_mut(dimension) {
        *s = total;
    }
    let weak = ins.iter().all(|a| a.weak_type);
    Ok(vec![Aval::weak(shape, first.dtype, weak)])
}

fn broadcast_in_dim(x: &Aval, shape: &[usize], bdims: &[usize]) -> Result<Vec<Aval>> {
    let name = "broadcast_in_dim";
    if bdims.len() != x.ndim() {
        return Err(Error::shape(
            name,
            &[&x.shape, shape],
            format!("broadcast_dimensions {bdims:?} must have one entry per operand axis"),
        ));
    }
    let increasing = bdims.windows(2).all(|w| matches!(w, [a, b] if a < b));
    if !increasing {
        return Err(Error::param(
            name,
            "broadcast_dimensions",
            format!("{bdims:?} must be strictly increasing"),
        ));
    }
    for (&d, &od) in x.shape.iter().zip(bdims) {
        match shape.get(od) {
            Some(&t) if d == 1 || d == t => {}
            _ => {
                return Err(Error::shape(
                    name,
                    &[&x.shape, shape],
                    format!("operand axis of size {d} cannot broadcast to output axis {od}"),
                ))
            }
        }
    }
    checked_size(shape)?;
    Ok(vec![Aval::weak(shape.to_vec(), x.dtype, x.weak_type)])
}

/// Axes in range and without repeats.
pub fn check_axes(
    prim: &'static str,
    param: &'static str,
    axes: &[usize],
    ndim: usize,
) -> Result<()> {
    for (i, &a) in axes.iter().enumerate() {
        if a >= ndim {
            return Err(Error::param(
                prim,
                param,
                format!("axis {a} out of range for rank {ndim}"),
            ));
        }
        if axes.get(..i).is_some_and(|prev| prev.contains(&a)) {
            return Err(Error::param(prim, param, format!("axis {a} repeated")));
        }
    }
    Ok(())
}

pub fn is_permutation(perm: &[usize], n: usize) -> bool {
    perm.len() == n && check_axes("transpose", "permutation", perm, n).is_ok()
}

/// `shape[i] for i in dims` (dims already validated).
pub fn gather_dims(shape: &[usize], dims: &[usize]) -> Vec<usize> {
    dims.iter().filter_map(|&i| shape.get(i).copied()).collect()
}

/// `shape` without the axes in `dims`.
pub fn drop_dims(shape: &[usize], dims: &[usize]) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !dims.contains(i))
        .map(|(_, &d)| d)
        .collect()
}
