//! `dot_general`: contraction over paired axes with batch axes.

use super::batch::shift;
use super::family::{arity_error, emit1, finish, operands};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::jvp::{add_opt, is_float};
use super::kernel::dot as kernels;
use super::params::Param;
use super::shape::{check_axes, drop_dims, gather_dims, same_dtype_where};
use super::transpose::{not_linear_error, operand_aval};
use super::{ConvertElementType, DotDims, Primitive, Transpose};
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

crate::declare_params! {
    /// Contracts `dimension_numbers`' paired axes; the output is batch axes,
    /// then lhs free axes, then rhs free axes.
    pub struct DotGeneral {
        dims: DotDims as dimension_numbers,
        const precision = Param::None,
        preferred_element_type: Option<DType>,
    }
}

impl Family for DotGeneral {
    crate::family_identity!(
        "dot_general",
        example = DotGeneral {
            dims: DotDims::default(),
            preferred_element_type: None
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let [l, r] = operands::<_, 2>(self.name(), ins)?;
        dot_shape(l, r, &self.dims, self.preferred_element_type)
    }

    fn kernel(
        &self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let name = self.name();
        let [l, r] = operands::<_, 2>(name, args)?;
        let buf = kernels::dot_general(ctx, l, r, &self.dims, self.preferred_element_type)?;
        finish(name, outs, buf)
    }

    /// Bilinear: `dot(tx, y) + dot(x, ty)`.
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let name = self.name();
        let [x, y] = operands::<_, 2>(name, xs)?;
        let [tx, ty] = operands::<_, 2>(name, ts)?;
        let z = emit1(b, self.clone(), xs.to_vec())?;
        if !is_float(b, &z)? || !is_float(b, x)? {
            return Ok((vec![z], vec![None]));
        }
        let l = tx
            .clone()
            .map(|t| emit1(b, self.clone(), vec![t, y.clone()]))
            .transpose()?;
        let r = ty
            .clone()
            .map(|t| emit1(b, self.clone(), vec![x.clone(), t]))
            .transpose()?;
        Ok((vec![z], vec![add_opt(b, l, r)?]))
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let name = self.name();
        let [ct] = operands::<_, 1>(name, cts)?;
        let Some(ct) = ct.clone() else {
            return Ok(vec![None; ops.len()]);
        };
        let [x, y] = operands::<_, 2>(name, ops)?;
        transpose_dot(&self.dims, b, ct, x, y)
    }

    /// With both operands batched the mapped axes become a new leading
    /// batch dimension (output axis 0); with one batched, the mapped axis is
    /// a free dimension of that operand and lands among its free axes of the
    /// output (batch axes, then lhs free, then rhs free).
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], _n: usize) -> BatchOut {
        let name = self.name();
        let ([l, r], [ld, rd]) = (ins, dims) else {
            return Err(arity_error(name, 2, ins.len()));
        };
        let dn = &self.dims;
        let map = |axes: &[usize], d: Option<usize>| -> Vec<usize> {
            match d {
                Some(d) => axes.iter().map(|&k| shift(k, d)).collect(),
                None => axes.to_vec(),
            }
        };
        let mut nd = DotDims {
            lhs_contract: map(&dn.lhs_contract, *ld),
            rhs_contract: map(&dn.rhs_contract, *rd),
            lhs_batch: map(&dn.lhs_batch, *ld),
            rhs_batch: map(&dn.rhs_batch, *rd),
        };
        let nbatch = nd.lhs_batch.len();
        let collides = || {
            Error::InvalidArgument(format!(
                "vmap of {name}: batch dim collides with the dimension numbers"
            ))
        };
        let out_d = match (*ld, *rd) {
            (None, None) => {
                let z = emit1(b, self.clone(), ins.to_vec())?;
                return Ok((vec![z], vec![None]));
            }
            (Some(a), Some(c)) => {
                nd.lhs_batch.insert(0, a);
                nd.rhs_batch.insert(0, c);
                0
            }
            (Some(a), None) => {
                let rank = b.aval(l)?.ndim();
                let pos = free_dims(rank, &nd.lhs_batch, &nd.lhs_contract)
                    .iter()
                    .position(|&k| k == a)
                    .ok_or_else(collides)?;
                nbatch.saturating_add(pos)
            }
            (None, Some(c)) => {
                let lrank = b.aval(l)?.ndim();
                let lfree = free_dims(lrank, &nd.lhs_batch, &nd.lhs_contract).len();
                let rank = b.aval(r)?.ndim();
                let pos = free_dims(rank, &nd.rhs_batch, &nd.rhs_contract)
                    .iter()
                    .position(|&k| k == c)
                    .ok_or_else(collides)?;
                nbatch.saturating_add(lfree).saturating_add(pos)
            }
        };
        let dot = DotGeneral {
            dims: nd,
            preferred_element_type: self.preferred_element_type,
        };
        let z = emit1(b, dot, vec![l.clone(), r.clone()])?;
        Ok((vec![z], vec![Some(out_d)]))
    }
}

/// The shape rule: operands of one numeric dtype, paired axes of equal
/// sizes; the output is batch axes, lhs free axes, rhs free axes.
fn dot_shape(l: &Aval, r: &Aval, d: &DotDims, pref: Option<DType>) -> Result<Vec<Aval>> {
    let name = "dot_general";
    same_dtype_where(
        name,
        &[l, r],
        |d| d.is_numeric() || d.is_complex(),
        "requires numeric operands",
    )?;
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

/// The free axes (neither batch nor contracting) of an operand of rank
/// `ndim`, in order.
fn free_dims(ndim: usize, batch: &[usize], contract: &[usize]) -> Vec<usize> {
    (0..ndim)
        .filter(|d| !batch.contains(d) && !contract.contains(d))
        .collect()
}

/// The transpose for a present cotangent `ct`: the cotangent of the one
/// linear operand.
fn transpose_dot(
    dims: &DotDims, b: &mut Builder, ct: Atom, x: &Operand, y: &Operand,
) -> TransposeOut {
    let xa = operand_aval(b, x)?;
    let ya = operand_aval(b, y)?;
    let lhs = DotSide {
        batch: &dims.lhs_batch,
        contract: &dims.lhs_contract,
        free: free_dims(xa.ndim(), &dims.lhs_batch, &dims.lhs_contract),
    };
    let rhs = DotSide {
        batch: &dims.rhs_batch,
        contract: &dims.rhs_contract,
        free: free_dims(ya.ndim(), &dims.rhs_batch, &dims.rhs_contract),
    };
    let nb = dims.lhs_batch.len();
    let rhs_free_start = nb.saturating_add(lhs.free.len());
    match (x, y) {
        (Operand::Linear(_), Operand::Known(yv)) => {
            let c = dot_transpose_side(b, ct, yv.clone(), &xa, &lhs, &rhs, rhs_free_start)?;
            Ok(vec![Some(c), None])
        }
        (Operand::Known(xv), Operand::Linear(_)) => {
            let c = dot_transpose_side(b, ct, xv.clone(), &ya, &rhs, &lhs, nb)?;
            Ok(vec![None, Some(c)])
        }
        (Operand::Linear(_), Operand::Linear(_)) => Err(not_linear_error(
            "dot_general",
            " (both operands are linear)",
        )),
        (Operand::Known(_), Operand::Known(_)) => Ok(vec![None, None]),
    }
}

/// One side of `dot_general`'s transpose. The cotangent has the output
/// layout `(batch, lhs free, rhs free)`; contracting its `other` free axes
/// with the other operand's free axes (batching the batch axes) gives
/// `(batch, this free, this contracting axes in the other's order)`, which a
/// transpose brings to this operand's layout.
struct DotSide<'a> {
    batch: &'a [usize],
    contract: &'a [usize],
    free: Vec<usize>,
}

/// `dot_general` with dimension numbers `dims` and no preferred type.
fn plain_dot(dims: DotDims) -> DotGeneral {
    DotGeneral {
        dims,
        preferred_element_type: None,
    }
}

/// Which axis of this operand each of the other operand's contracting
/// axes is, in the other operand's axis order (the order those axes keep
/// in a product with the other operand).
fn contract_positions(this: &DotSide, oth: &DotSide) -> Result<Vec<usize>> {
    let mut oc_sorted = oth.contract.to_vec();
    oc_sorted.sort_unstable();
    oc_sorted
        .iter()
        .map(|d| {
            let k = oth.contract.iter().position(|c| c == d)?;
            this.contract.get(k).copied()
        })
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| Error::param("dot_general", "dimension_numbers", "bad contract"))
}

fn dot_transpose_side(
    b: &mut Builder, ct: Atom, other: Atom, this_aval: &Aval, this: &DotSide, oth: &DotSide,
    other_free_start: usize,
) -> Result<Atom> {
    let nb = this.batch.len();
    let other_dtype = b.aval(&other)?.dtype;
    let ct = if b.aval(&ct)?.dtype == other_dtype {
        ct
    } else {
        b.add_eqn1(
            Primitive::ConvertElementType(ConvertElementType {
                new_dtype: other_dtype,
                weak_type: false,
            }),
            vec![ct],
        )?
    };
    let ct_contract: Vec<usize> = (0..oth.free.len())
        .map(|i| other_free_start.saturating_add(i))
        .collect();
    let contract_pos = contract_positions(this, oth)?;
    // `ct · other` gives (batch, this free, this contracting);
    // `other · ct` gives (batch, this contracting, this free). When only the
    // second is already this operand's layout, it is the one emitted, so the
    // cotangent needs no transpose (the weight gradient `x^T · ct` of
    // `x @ w`).
    let layout = |first: &[usize], second: &[usize]| -> Vec<usize> {
        this.batch
            .iter()
            .chain(first)
            .chain(second)
            .copied()
            .collect()
    };
    let ct_first = layout(&this.free, &contract_pos);
    let other_first = layout(&contract_pos, &this.free);
    let is_identity = |pos: &[usize]| pos.iter().enumerate().all(|(i, &q)| i == q);
    if !is_identity(&ct_first) && is_identity(&other_first) {
        let dims = DotDims {
            lhs_contract: oth.free.clone(),
            rhs_contract: ct_contract,
            lhs_batch: oth.batch.to_vec(),
            rhs_batch: (0..nb).collect(),
        };
        return emit1(b, plain_dot(dims), vec![other, ct]);
    }
    let dims = DotDims {
        lhs_contract: ct_contract,
        rhs_contract: oth.free.clone(),
        lhs_batch: (0..nb).collect(),
        rhs_batch: oth.batch.to_vec(),
    };
    let r = emit1(b, plain_dot(dims), vec![ct, other])?;
    let pos = ct_first;
    let perm: Vec<usize> = (0..this_aval.ndim())
        .map(|i| pos.iter().position(|&q| q == i))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| Error::param("dot_general", "dimension_numbers", "bad layout"))?;
    if is_identity(&perm) {
        return Ok(r);
    }
    b.add_eqn1(
        Primitive::Transpose(Transpose { permutation: perm }),
        vec![r],
    )
}
