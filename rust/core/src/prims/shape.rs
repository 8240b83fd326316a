//! Shape-rule helpers the families share (operand arity and dtype checks,
//! elementwise broadcasting, axis lists), and `abstract_eval` as a function.

use super::{BinaryOp, Primitive, UnaryOp};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::Aval;

/// Output avals of `prim` applied to operands of avals `ins` (its shape
/// rule; the same as [`Primitive::abstract_eval`]).
pub fn abstract_eval(prim: &Primitive, ins: &[Aval]) -> Result<Vec<Aval>> {
    prim.abstract_eval(ins)
}

/// Destructures exactly `N` operands.
pub(super) fn arity<'a, const N: usize>(
    prim: &'static str, ins: &'a [Aval],
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

/// Operands of one dtype that `accepts` admits; `requirement` words the
/// error when it does not ("requires integer operands").
pub(super) fn same_dtype_where(
    prim: &'static str, ins: &[&Aval], accepts: fn(DType) -> bool, requirement: &str,
) -> Result<()> {
    same_dtype(prim, ins)?;
    if ins.iter().all(|a| accepts(a.dtype)) {
        return Ok(());
    }
    let ds: Vec<DType> = ins.iter().map(|a| a.dtype).collect();
    Err(Error::dtype(prim, &ds, requirement))
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

/// Axes in range and without repeats.
pub fn check_axes(
    prim: &'static str, param: &'static str, axes: &[usize], ndim: usize,
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
