//! Slicing primitives: `slice` (static), `dynamic_slice` and
//! `dynamic_update_slice` (run-time, clamped start indices). Kernels are in
//! `kernels/structural.rs`; batched start indices batch through `gather` /
//! `scatter` ([`super::gather`]).

use super::batch::{batch_error, batch_first, insert_axis, unbatched};
use super::family::{arity_error, emit1, finish, operands, single_out};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::jvp::jvp_linear_prefix;
use super::kernel::structural as kernels;
use super::shape::same_dtype;
use super::transpose::{not_linear_error, single_ct};
use super::{Pad, Primitive};
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

crate::declare_params! {
    /// Static slice `[start, limit)` with optional `strides` per axis.
    pub struct Slice {
        start_indices: Vec<usize>,
        limit_indices: Vec<usize>,
        strides: Option<Vec<usize>>,
    }
}

crate::declare_params! {
    /// `dynamic_slice(operand, *start_indices)`: a `slice_sizes` window at
    /// run-time (clamped) start indices.
    pub struct DynamicSlice {
        slice_sizes: Vec<usize>,
    }
}

/// `dynamic_update_slice(operand, update, *start_indices)`: `update`
/// written at run-time (clamped) start indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DynamicUpdateSlice;

// ------------------------------------------------------------ shared rule helpers

/// A zero start index for a new leading axis, of the indices' dtype.
fn zero_index(b: &Builder, idx: &[Atom]) -> Result<Atom> {
    let dtype = match idx.first() {
        Some(i) => b.aval(i)?.dtype,
        None => DType::I32,
    };
    Ok(Builder::lit(dtype, 0.0))
}

/// The known start indices of a dynamic slice.
fn known_indices(prim: &'static str, ops: &[Operand]) -> Result<Vec<Atom>> {
    ops.iter()
        .map(|o| match o {
            Operand::Known(a) => Ok(a.clone()),
            Operand::Linear(_) => Err(not_linear_error(prim, " (a start index is linear)")),
        })
        .collect()
}

/// One rank-0 integer start index per operand axis.
fn check_start_indices(name: &'static str, x: &Aval, idx: &[Aval]) -> Result<()> {
    if idx.len() != x.ndim() {
        return Err(Error::arity(
            name,
            x.ndim().saturating_add(1),
            idx.len().saturating_add(1),
        ));
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

// ------------------------------------------------------------ slice

impl Family for Slice {
    crate::family_identity!(
        "slice",
        example = Slice {
            start_indices: vec![0],
            limit_indices: vec![1],
            strides: None
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let [x] = operands::<_, 1>(self.name(), ins)?;
        let shape = slice_shape(
            x,
            &self.start_indices,
            &self.limit_indices,
            self.strides.as_deref(),
        )?;
        Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let out = single_out(self.name(), outs)?;
        let [x] = operands::<_, 1>(self.name(), args)?;
        let strides = self.strides.as_deref();
        let buf = kernels::slice(x, &self.start_indices, strides, &out.shape)?;
        Ok(vec![HostArray::new(out.shape, buf)?])
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        jvp_linear_prefix(self, 1, b, xs, ts)
    }

    /// The cotangent padded with zeros back to the operand's shape
    /// (interior padding fills the skipped strides).
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let Some(ct) = single_ct(self.name(), cts)? else {
            return Ok(vec![None; ops.len()]);
        };
        let [Operand::Linear(a)] = ops else {
            return Ok(vec![None; ops.len()]);
        };
        let ca = b.aval(&ct)?;
        let mut config = Vec::with_capacity(a.ndim());
        for (j, (&d, &out)) in a.shape.iter().zip(&ca.shape).enumerate() {
            let start = self.start_indices.get(j).copied().unwrap_or(0);
            let st = self
                .strides
                .as_ref()
                .and_then(|s| s.get(j).copied())
                .unwrap_or(1);
            let real_limit = match out.checked_sub(1) {
                None => start,
                Some(o1) => o1
                    .checked_mul(st)
                    .and_then(|x| x.checked_add(start))
                    .and_then(|x| x.checked_add(1))
                    .unwrap_or(d),
            };
            config.push((
                to_i64(start)?,
                to_i64(d.saturating_sub(real_limit))?,
                to_i64(st.saturating_sub(1))?,
            ));
        }
        let c = b.add_eqn1(
            Primitive::Pad(Pad {
                padding_config: config,
            }),
            vec![ct, Builder::lit(ca.dtype, 0.0)],
        )?;
        Ok(vec![Some(c)])
    }

    /// The mapped axis is taken whole.
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let name = self.name();
        if dims.iter().all(Option::is_none) {
            return unbatched(self, b, ins);
        }
        let (x, d) = match (ins, dims) {
            ([x], [Some(d)]) => (x, *d),
            ([_], [None]) => return Err(batch_error(name, "the operand is not batched")),
            _ => return Err(arity_error(name, 1, ins.len())),
        };
        let sliced = Slice {
            start_indices: insert_axis(&self.start_indices, d, 0),
            limit_indices: insert_axis(&self.limit_indices, d, n),
            strides: self.strides.as_ref().map(|s| insert_axis(s, d, 1)),
        };
        Ok((vec![emit1(b, sliced, vec![x.clone()])?], vec![Some(d)]))
    }
}

fn to_i64(v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::Overflow {
        what: "padding",
        detail: format!("{v}"),
    })
}

/// Output shape of `slice`.
fn slice_shape(
    x: &Aval, start: &[usize], limit: &[usize], strides: Option<&[usize]>,
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

// ------------------------------------------------------------ dynamic_slice

impl Family for DynamicSlice {
    crate::family_identity!(
        "dynamic_slice",
        example = DynamicSlice {
            slice_sizes: vec![1]
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let slice_sizes = &self.slice_sizes;
        let Some((x, idx)) = ins.split_first() else {
            return Err(arity_error(name, 1, 0));
        };
        check_start_indices(name, x, idx)?;
        let fits =
            slice_sizes.len() == x.ndim() && slice_sizes.iter().zip(&x.shape).all(|(s, d)| s <= d);
        if !fits {
            return Err(Error::shape(
                name,
                &[&x.shape, slice_sizes],
                "slice_sizes must have one entry per operand axis, each at most the axis size",
            ));
        }
        Ok(vec![Aval::weak(slice_sizes.clone(), x.dtype, x.weak_type)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let name = self.name();
        let (x, idx) = args.split_first().ok_or(arity_error(name, 1, 0))?;
        let buf = kernels::dynamic_slice(x, idx, &self.slice_sizes)?;
        finish(name, outs, buf)
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        jvp_linear_prefix(self, 1, b, xs, ts)
    }

    /// The cotangent written into zeros at the same indices.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let Some(ct) = single_ct(self.name(), cts)? else {
            return Ok(vec![None; ops.len()]);
        };
        let Some((Operand::Linear(a), idx)) = ops.split_first() else {
            return Ok(vec![None; ops.len()]);
        };
        let idx = known_indices(self.name(), idx)?;
        let zeros = b.zeros(a)?;
        let mut ins = vec![zeros, ct];
        ins.extend(idx.iter().cloned());
        let c = emit1(b, DynamicUpdateSlice, ins)?;
        let mut out = vec![Some(c)];
        out.extend(idx.iter().map(|_| None));
        Ok(out)
    }

    /// Unbatched start indices prepend a zero index for the mapped axis;
    /// batched ones become one `gather` with a batching dim pair (as JAX),
    /// whose clip mode clamps like `dynamic_slice`.
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let name = self.name();
        if dims.iter().all(Option::is_none) {
            return unbatched(self, b, ins);
        }
        let (Some((x, idx)), Some((dx, didx))) = (ins.split_first(), dims.split_first()) else {
            return Err(batch_error(name, "no operand"));
        };
        if didx.iter().all(Option::is_none) {
            let d = dx.ok_or_else(|| batch_error(name, "the operand is not batched"))?;
            let mut new_ins = vec![x.clone()];
            new_ins.extend(idx.iter().cloned());
            new_ins.insert(d.saturating_add(1).min(new_ins.len()), zero_index(b, idx)?);
            let sliced = DynamicSlice {
                slice_sizes: insert_axis(&self.slice_sizes, d, n),
            };
            return Ok((vec![emit1(b, sliced, new_ins)?], vec![Some(d)]));
        }
        let xb = batch_first(b, x, *dx, n)?;
        let starts = super::gather::stacked_starts(b, idx, didx, n)?;
        let prim = super::gather::dynamic_slice_gather(&self.slice_sizes);
        Ok((vec![b.add_eqn1(prim, vec![xb, starts])?], vec![Some(0)]))
    }
}

// ------------------------------------------------------------ dynamic_update_slice

impl Family for DynamicUpdateSlice {
    crate::family_identity!(unit: "dynamic_update_slice");

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let [x, u, idx @ ..] = ins else {
            return Err(arity_error(name, 2, ins.len()));
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

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let name = self.name();
        let [x, u, idx @ ..] = args else {
            return Err(arity_error(name, 2, args.len()));
        };
        let buf = kernels::dynamic_update_slice(x, u, idx)?;
        finish(name, outs, buf)
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        jvp_linear_prefix(self, 2, b, xs, ts)
    }

    /// The operand's cotangent is the cotangent with the window zeroed; the
    /// update's is the window.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let name = self.name();
        let Some(ct) = single_ct(name, cts)? else {
            return Ok(vec![None; ops.len()]);
        };
        let [x, u, idx @ ..] = ops else {
            return Err(arity_error(name, 2, ops.len()));
        };
        let idx = known_indices(name, idx)?;
        let ua = match u {
            Operand::Known(a) => b.aval(a)?,
            Operand::Linear(a) => a.clone(),
        };
        let c_x = match x {
            Operand::Linear(_) => {
                let zeros = b.zeros(&ua)?;
                let mut ins = vec![ct.clone(), zeros];
                ins.extend(idx.iter().cloned());
                Some(emit1(b, DynamicUpdateSlice, ins)?)
            }
            Operand::Known(_) => None,
        };
        let c_u = match u {
            Operand::Linear(_) => {
                let mut ins = vec![ct];
                ins.extend(idx.iter().cloned());
                let window = DynamicSlice {
                    slice_sizes: ua.shape.clone(),
                };
                Some(emit1(b, window, ins)?)
            }
            Operand::Known(_) => None,
        };
        let mut out = vec![c_x, c_u];
        out.extend(idx.iter().map(|_| None));
        Ok(out)
    }

    /// Unbatched start indices prepend a zero index; batched ones become one
    /// `scatter` with a batching dim pair (as JAX).
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        if dims.iter().all(Option::is_none) {
            return unbatched(self, b, ins);
        }
        let ([x, u, idx @ ..], [dx, du, didx @ ..]) = (ins, dims) else {
            return Err(arity_error(self.name(), 2, ins.len()));
        };
        let xb = batch_first(b, x, *dx, n)?;
        let ub = batch_first(b, u, *du, n)?;
        if didx.iter().all(Option::is_none) {
            let mut new_ins = vec![xb, ub, zero_index(b, idx)?];
            new_ins.extend(idx.iter().cloned());
            return Ok((vec![emit1(b, *self, new_ins)?], vec![Some(0)]));
        }
        let starts = super::gather::stacked_starts(b, idx, didx, n)?;
        let prim = super::gather::dynamic_update_slice_scatter(idx.len());
        Ok((vec![b.add_eqn1(prim, vec![xb, starts, ub])?], vec![Some(0)]))
    }
}
