//! `pad` and `concatenate`: arrays assembled from operands and a fill.

use super::{kernels, BroadcastInDim};
use crate::array::{checked_size, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Literal, Scalar};
use crate::prims::batch::{all_unbatched, batch_first, emit_batched, remove_axis, unbatched};
use crate::prims::family::{
    arity_error, emit1, operands, BatchOut, Family, JvpOut, Operand, TransposeOut,
};
use crate::prims::jvp::jvp_linear_prefix;
use crate::prims::shape::same_dtype;
use crate::prims::transpose::{operand_aval, single_ct};
use crate::prims::{BinaryOp, Primitive, ReduceOp, SelectN, Slice};

crate::declare_params! {
    /// `pad(operand, padding_value)` with `(lo, hi, interior)` per axis;
    /// negative `lo`/`hi` remove elements.
    pub struct Pad {
        padding_config: Vec<(i64, i64, i64)>,
    }
}

crate::declare_params! {
    /// Joins N operands along `dimension`.
    pub struct Concatenate {
        dimension: usize,
    }
}

/// A `slice` of `x` from `start` to `limit` (no-op when it is everything).
fn slice_of(
    b: &mut Builder, x: Atom, start: Vec<usize>, limit: Vec<usize>, strides: Option<Vec<usize>>,
) -> Result<Atom> {
    let shape = b.aval(&x)?.shape;
    let unit = strides.as_ref().is_none_or(|s| s.iter().all(|&v| v == 1));
    if unit && start.iter().all(|&s| s == 0) && limit == shape {
        return Ok(x);
    }
    let strides = if unit { None } else { strides };
    b.add_eqn1(
        Primitive::Slice(Slice {
            start_indices: start,
            limit_indices: limit,
            strides,
        }),
        vec![x],
    )
}

// -------------------------------------------------------------------- pad

/// Output shape of `pad`: `lo + hi + d + (d - 1) * interior` per axis.
fn pad_shape(shape: &[usize], config: &[(i64, i64, i64)]) -> Result<Vec<usize>> {
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

fn neg_i64(v: i64) -> Result<i64> {
    v.checked_neg().ok_or_else(|| Error::Overflow {
        what: "padding",
        detail: format!("{v}"),
    })
}

/// The sum of all elements of `v`, of rank `rank`.
fn sum_all(b: &mut Builder, v: Atom, rank: usize) -> Result<Atom> {
    b.reduce(ReduceOp::Sum, v, (0..rank).collect())
}

impl Pad {
    /// The operand's cotangent: `ct` with the padding removed (negative
    /// padding becomes zero padding) and strided past the interior padding.
    fn unpad(&self, b: &mut Builder, ct: &Atom, ct_dtype: DType) -> Result<Atom> {
        let mut unpad = Vec::with_capacity(self.padding_config.len());
        for &(lo, hi, _) in &self.padding_config {
            unpad.push((neg_i64(lo)?, neg_i64(hi)?, 0));
        }
        let t_x = if unpad.iter().all(|&(l, h, _)| l == 0 && h == 0) {
            ct.clone()
        } else {
            let p = Pad {
                padding_config: unpad,
            };
            emit1(b, p, vec![ct.clone(), Builder::lit(ct_dtype, 0.0)])?
        };
        let inner = b.aval(&t_x)?.shape;
        let steps: Vec<usize> = self
            .padding_config
            .iter()
            .map(|&(_, _, int)| usize::try_from(int).unwrap_or(0).saturating_add(1))
            .collect();
        slice_of(b, t_x, vec![0; inner.len()], inner, Some(steps))
    }

    /// Batched padding value (at axis 0 of `pv`): the operand, batched
    /// first, is padded with zeros and the padding value selected in where
    /// a padded mask marks the padding.
    fn batch_padding_value(
        &self, b: &mut Builder, (x, dx): (&Atom, Option<usize>), (pv, dp): (&Atom, usize),
        size: usize,
    ) -> BatchOut {
        let xb = batch_first(b, x, dx, size)?;
        let xa = b.aval(x)?;
        let xshape = match dx {
            Some(d) => remove_axis(&xa.shape, d),
            None => xa.shape.clone(),
        };
        let mut config = self.padding_config.clone();
        config.insert(0, (0, 0, 0));
        let zero = Builder::lit(xa.dtype, 0.0);
        let padded = emit1(
            b,
            Pad {
                padding_config: config,
            },
            vec![xb, zero],
        )?;
        let out_shape = b.aval(&padded)?.shape;
        let lie = Atom::Lit(Literal::new(Scalar::Bool(false), DType::Bool, false));
        let falses = if xshape.is_empty() {
            lie
        } else {
            let fill = BroadcastInDim {
                shape: xshape,
                broadcast_dimensions: Vec::new(),
            };
            emit1(b, fill, vec![lie])?
        };
        let truth = Atom::Lit(Literal::new(Scalar::Bool(true), DType::Bool, false));
        let mask = emit1(b, self.clone(), vec![falses, truth])?;
        let rank = out_shape.len();
        let mask_b = BroadcastInDim {
            shape: out_shape.clone(),
            broadcast_dimensions: (1..rank).collect(),
        };
        let mask = emit1(b, mask_b, vec![mask])?;
        if dp != 0 {
            return Err(super::batch_error(
                self.name(),
                "a batched scalar has its mapped axis at 0",
            ));
        }
        let pv_b = BroadcastInDim {
            shape: out_shape,
            broadcast_dimensions: vec![0],
        };
        let pvb = emit1(b, pv_b, vec![pv.clone()])?;
        let out = b.add_eqn1(Primitive::SelectN(SelectN), vec![mask, padded, pvb])?;
        Ok((vec![out], vec![Some(0)]))
    }
}

impl Family for Pad {
    crate::family_identity!(
        "pad",
        example = Pad {
            padding_config: vec![(1, 0, 0)]
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let [x, pv] = operands::<_, 2>(name, ins)?;
        same_dtype(name, &[x, pv])?;
        if !pv.shape.is_empty() {
            return Err(Error::shape(
                name,
                &[&x.shape, &pv.shape],
                "padding_value must be a scalar",
            ));
        }
        let shape = pad_shape(&x.shape, &self.padding_config)?;
        Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let name = self.name();
        let [x, pv] = operands::<_, 2>(name, args)?;
        let out = crate::prims::family::single_out(name, outs)?;
        let buf = kernels::pad(x, pv, &self.padding_config, &out.shape)?;
        Ok(vec![HostArray::new(out.shape, buf)?])
    }

    /// Linear in the operand and the padding value together.
    fn jvp(&self, b: &mut Builder, primals: &[Atom], tangents: &[Option<Atom>]) -> JvpOut {
        jvp_linear_prefix(self, 2, b, primals, tangents)
    }

    /// The operand's cotangent is the cotangent with the padding removed;
    /// the padding value's is the sum of the rest.
    fn transpose(
        &self, b: &mut Builder, cts: &[Option<Atom>], operands: &[Operand],
    ) -> TransposeOut {
        let name = self.name();
        let Some(ct) = single_ct(name, cts)? else {
            return Ok(vec![None; operands.len()]);
        };
        let [x, pv] = operands else {
            return Err(arity_error(name, 2, operands.len()));
        };
        let xa = operand_aval(b, x)?;
        let ca = b.aval(&ct)?;
        let t_x = self.unpad(b, &ct, ca.dtype)?;
        if b.aval(&t_x)?.shape != xa.shape {
            return Err(Error::shape(
                name,
                &[&xa.shape, &ca.shape],
                "transpose: cotangent does not match the padding",
            ));
        }
        let c_pv = match pv {
            Operand::Linear(_) => {
                let total = sum_all(b, ct, ca.ndim())?;
                let inside = sum_all(b, t_x.clone(), xa.ndim())?;
                Some(b.binary(BinaryOp::Sub, total, inside)?)
            }
            Operand::Known(_) => None,
        };
        let c_x = match x {
            Operand::Linear(_) => Some(t_x),
            Operand::Known(_) => None,
        };
        Ok(vec![c_x, c_pv])
    }

    /// An unbatched padding value pads around the mapped axis; a batched
    /// one is selected in where a padded mask marks the padding.
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], size: usize,
    ) -> BatchOut {
        let ([x, pv], [dx, dpv]) = (operands, dims) else {
            return Err(arity_error(self.name(), 2, operands.len()));
        };
        match (dx, dpv) {
            (None, None) => unbatched(self, b, operands),
            (Some(d), None) => {
                let mut config = self.padding_config.clone();
                config.insert((*d).min(config.len()), (0, 0, 0));
                let prim = Pad {
                    padding_config: config,
                };
                emit_batched(b, prim, vec![x.clone(), pv.clone()], Some(*d))
            }
            (_, Some(dp)) => self.batch_padding_value(b, (x, *dx), (pv, *dp), size),
        }
    }
}

// ------------------------------------------------------------ concatenate

impl Family for Concatenate {
    crate::family_identity!("concatenate", example = Concatenate { dimension: 0 });

    /// Operands of one dtype and rank, of equal sizes except along
    /// `dimension`, where the output's size is their sum.
    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let dimension = self.dimension;
        let Some(first) = ins.first() else {
            return Err(arity_error(name, 1, 0));
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

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let out = crate::prims::family::single_out(self.name(), outs)?;
        let buf = kernels::concatenate(args, self.dimension, &out.shape)?;
        Ok(vec![HostArray::new(out.shape, buf)?])
    }

    /// Linear in every operand.
    fn jvp(&self, b: &mut Builder, primals: &[Atom], tangents: &[Option<Atom>]) -> JvpOut {
        jvp_linear_prefix(self, primals.len(), b, primals, tangents)
    }

    /// Each linear operand's cotangent is its slice of the cotangent.
    fn transpose(
        &self, b: &mut Builder, cts: &[Option<Atom>], operands: &[Operand],
    ) -> TransposeOut {
        let dimension = self.dimension;
        let Some(ct) = single_ct(self.name(), cts)? else {
            return Ok(vec![None; operands.len()]);
        };
        let shape = b.aval(&ct)?.shape;
        let mut out = Vec::with_capacity(operands.len());
        let mut at = 0usize;
        for op in operands {
            let a = operand_aval(b, op)?;
            let n = a.shape.get(dimension).copied().unwrap_or(0);
            let end = at.saturating_add(n);
            out.push(match op {
                Operand::Linear(_) => {
                    let mut start = vec![0usize; shape.len()];
                    let mut limit = shape.clone();
                    if let (Some(s), Some(l)) = (start.get_mut(dimension), limit.get_mut(dimension))
                    {
                        *s = at;
                        *l = end;
                    }
                    Some(slice_of(b, ct.clone(), start, limit, None)?)
                }
                Operand::Known(_) => None,
            });
            at = end;
        }
        Ok(out)
    }

    /// Every operand carries the mapped axis first.
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], size: usize,
    ) -> BatchOut {
        if all_unbatched(dims) {
            return unbatched(self, b, operands);
        }
        let xs = operands
            .iter()
            .zip(dims)
            .map(|(x, d)| batch_first(b, x, *d, size))
            .collect::<Result<Vec<_>>>()?;
        let prim = Concatenate {
            dimension: self.dimension.saturating_add(1),
        };
        emit_batched(b, prim, xs, Some(0))
    }
}
