//! Shape rules: output avals of every primitive, and the operand checks that
//! reject bad input with an error naming the primitive and the shapes.

use super::{BinaryOp, DotDims, Family, Primitive, UnaryOp};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::Aval;
use crate::prims::{
    ArgReduce, Checkpoint, Clamp, ConvertElementType, Cumulative, DotGeneral, DynamicSlice,
    DynamicUpdateSlice, IntegerPow, IsFinite, Pjit, Reduce, Round, SelectN, Slice, StopGradient,
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
        Primitive::IntegerPow(IntegerPow { y }) => {
            let [x] = arity::<1>(name, ins)?;
            if !x.dtype.is_numeric() {
                return Err(Error::dtype(name, &[x.dtype], "requires a numeric operand"));
            }
            // As JAX: integer operands need y >= 0 (x^-n is not an integer).
            if *y < 0 && !x.dtype.is_float() {
                return Err(Error::param(
                    name,
                    "y",
                    format!(
                        "negative exponent {y} requires a floating operand, got {}",
                        x.dtype
                    ),
                ));
            }
            Ok(vec![x.clone()])
        }
        Primitive::SelectN(SelectN) => select_n(ins),
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype,
            weak_type,
        }) => {
            let [x] = arity::<1>(name, ins)?;
            if matches!(x.dtype, DType::Key | DType::Float0) || matches!(new_dtype, DType::Key) {
                return Err(Error::dtype(name, &[x.dtype, *new_dtype], "cannot convert"));
            }
            Ok(vec![Aval::weak(x.shape.clone(), *new_dtype, *weak_type)])
        }
        Primitive::BroadcastInDim(f) => super::Family::abstract_eval(f, ins),
        Primitive::Reshape(f) => super::Family::abstract_eval(f, ins),
        Primitive::Transpose(f) => super::Family::abstract_eval(f, ins),
        Primitive::Squeeze(f) => super::Family::abstract_eval(f, ins),
        Primitive::Reduce(Reduce { op, axes }) => {
            let [x] = arity::<1>(name, ins)?;
            check_axes(name, "axes", axes, x.ndim())?;
            let class = op.class();
            if !class.accepts(x.dtype) {
                return Err(Error::dtype(
                    name,
                    &[x.dtype],
                    format!("requires {} operand", class.describe()),
                ));
            }
            Ok(vec![Aval::weak(
                drop_dims(&x.shape, axes),
                x.dtype,
                x.weak_type,
            )])
        }
        Primitive::DotGeneral(DotGeneral {
            dims,
            preferred_element_type,
        }) => {
            let [l, r] = arity::<2>(name, ins)?;
            dot_general(l, r, dims, *preferred_element_type)
        }
        Primitive::Iota(f) => super::Family::abstract_eval(f, ins),
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
                ));
            }
            Ok(vec![x.clone()])
        }
        Primitive::Rev(f) => super::Family::abstract_eval(f, ins),
        Primitive::Slice(Slice {
            start_indices,
            limit_indices,
            strides,
        }) => {
            let [x] = arity::<1>(name, ins)?;
            let shape = slice_shape(x, start_indices, limit_indices, strides.as_deref())?;
            Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
        }
        Primitive::Concatenate(f) => super::Family::abstract_eval(f, ins),
        Primitive::Pad(f) => super::Family::abstract_eval(f, ins),
        Primitive::DynamicSlice(DynamicSlice { slice_sizes }) => {
            let Some((x, idx)) = ins.split_first() else {
                return Err(Error::Arity {
                    prim: name,
                    expected: 1,
                    got: 0,
                });
            };
            check_start_indices(name, x, idx)?;
            let fits = slice_sizes.len() == x.ndim()
                && slice_sizes.iter().zip(&x.shape).all(|(s, d)| s <= d);
            if !fits {
                return Err(Error::shape(
                    name,
                    &[&x.shape, slice_sizes],
                    "slice_sizes must have one entry per operand axis, each at most the axis size",
                ));
            }
            Ok(vec![Aval::weak(slice_sizes.clone(), x.dtype, x.weak_type)])
        }
        Primitive::DynamicUpdateSlice(DynamicUpdateSlice) => {
            let (x, u, idx) = match ins {
                [x, u, idx @ ..] => (x, u, idx),
                _ => {
                    return Err(Error::Arity {
                        prim: name,
                        expected: 2,
                        got: ins.len(),
                    })
                }
            };
            same_dtype(name, &[x, u])?;
            check_start_indices(name, x, idx)?;
            let fits = u.ndim() == x.ndim() && u.shape.iter().zip(&x.shape).all(|(s, d)| s <= d);
            if !fits {
                return Err(Error::shape(
                    name,
                    &[&x.shape, &u.shape],
                    "update must have the operand's rank and fit inside it",
                ));
            }
            Ok(vec![x.clone()])
        }
        Primitive::Custom(f) => super::Family::abstract_eval(f, ins),
        Primitive::Control(f) => super::Family::abstract_eval(f, ins),
        Primitive::Callback(f) => super::Family::abstract_eval(f, ins),
        Primitive::Sort(f) => super::Family::abstract_eval(f, ins),
        Primitive::Linalg(f) => super::Family::abstract_eval(f, ins),
        Primitive::Conv(f) => super::Family::abstract_eval(f, ins),
        Primitive::Window(f) => super::Family::abstract_eval(f, ins),
        Primitive::Collective(f) => super::Family::abstract_eval(f, ins),
        Primitive::Threefry2x32(f) => super::Family::abstract_eval(f, ins),
        Primitive::Gather(f) => super::Family::abstract_eval(f, ins),
        Primitive::Scatter(f) => super::Family::abstract_eval(f, ins),
        Primitive::Pjit(Pjit { jaxpr, .. }) | Primitive::Checkpoint(Checkpoint { jaxpr, .. }) => {
            let want = jaxpr.in_avals()?;
            if want.len() != ins.len() {
                return Err(Error::Arity {
                    prim: name,
                    expected: want.len(),
                    got: ins.len(),
                });
            }
            for (w, g) in want.iter().zip(ins) {
                if !w.same_type(g) {
                    return Err(Error::Typecheck(format!(
                        "{name}: operand {} does not match parameter {}",
                        g.short(),
                        w.short()
                    )));
                }
            }
            jaxpr.out_avals()
        }
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
}

/// One rank-0 integer start index per operand axis.
fn check_start_indices(name: &'static str, x: &Aval, idx: &[Aval]) -> Result<()> {
    if idx.len() != x.ndim() {
        return Err(Error::Arity {
            prim: name,
            expected: x.ndim().saturating_add(1),
            got: idx.len().saturating_add(1),
        });
    }
    if let Some(bad) = idx
        .iter()
        .find(|a| !a.shape.is_empty() || !a.dtype.is_int())
    {
        return Err(Error::shape(
            name,
            &[&x.shape, &bad.shape],
            format!("start indices must be integer scalars, got {}", bad.short()),
        ));
    }
    Ok(())
}

fn dot_general(l: &Aval, r: &Aval, d: &DotDims, pref: Option<DType>) -> Result<Vec<Aval>> {
    let name = "dot_general";
    same_dtype(name, &[l, r])?;
    if !l.dtype.is_numeric() {
        return Err(Error::dtype(
            name,
            &[l.dtype, r.dtype],
            "requires numeric operands",
        ));
    }
    let shapes: [&[usize]; 2] = [&l.shape, &r.shape];
    if d.lhs_contract.len() != d.rhs_contract.len() || d.lhs_batch.len() != d.rhs_batch.len() {
        return Err(Error::shape(
            name,
            &shapes,
            "lhs and rhs need equal numbers of contracting and batch dims",
        ));
    }
    let lhs_used: Vec<usize> = d.lhs_batch.iter().chain(&d.lhs_contract).copied().collect();
    let rhs_used: Vec<usize> = d.rhs_batch.iter().chain(&d.rhs_contract).copied().collect();
    check_axes(name, "dimension_numbers", &lhs_used, l.ndim())?;
    check_axes(name, "dimension_numbers", &rhs_used, r.ndim())?;
    let pairs = d
        .lhs_batch
        .iter()
        .zip(&d.rhs_batch)
        .chain(d.lhs_contract.iter().zip(&d.rhs_contract));
    for (&a, &b) in pairs {
        if l.shape.get(a) != r.shape.get(b) {
            return Err(Error::shape(
                name,
                &shapes,
                format!("lhs axis {a} and rhs axis {b} differ in size"),
            ));
        }
    }
    let mut shape = gather_dims(&l.shape, &d.lhs_batch);
    shape.extend(drop_dims(&l.shape, &lhs_used));
    shape.extend(drop_dims(&r.shape, &rhs_used));
    let dtype = pref.unwrap_or(l.dtype);
    Ok(vec![Aval::weak(shape, dtype, l.weak_type && r.weak_type)])
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
