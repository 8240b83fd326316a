//! Reductions over axes (`reduce_sum`, ...), the index of the extreme
//! element (`argmax`, `argmin`) and inclusive scans (`cumsum`, ...).

use super::batch::{axes_around, batch_one, shift};
use super::family::{emit1, jvp_zero, operands, unary_kernel};
use super::family::{transpose_not_linear, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::jvp::{convert, eq, jvp_linear, mul, select};
use super::kernel::reduce as kernels;
use super::params::{Lookup, ParamField, ParamList};
use super::shape::{check_axes, drop_dims};
use super::transpose::transpose_unary;
use super::{ArgOp, BinaryOp, BroadcastInDim, CmpOp, CumOp, DTypeClass, Iota, Primitive};
use super::{ReduceOp, UnaryOp};
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

crate::declare_params! {
    /// `op` over `axes`.
    pub struct Reduce {
        @name op: ReduceOp,
        axes: Vec<usize>,
    }
}

/// `argmax` / `argmin` along one axis (JAX's params: `axes=(axis,)`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArgReduce {
    pub op: ArgOp,
    pub axis: usize,
    pub index_dtype: DType,
}

impl ArgReduce {
    /// The params JAX shows: the axis as a one-element `axes` tuple.
    pub fn to_params(&self) -> ParamList {
        vec![
            ("axes", vec![self.axis].to_param()),
            ("index_dtype", self.index_dtype.to_param()),
        ]
    }

    /// Reads the params (exactly one axis) and the op from the name.
    pub fn read(p: &Lookup<'_>) -> Result<ArgReduce> {
        let op = ArgOp::from_name(p.name())
            .ok_or_else(|| Error::UnknownPrimitive(p.name().to_string()))?;
        let axes = p.dims("axes")?;
        let [axis] = axes.as_slice() else {
            return Err(Error::param(
                op.name(),
                "axes",
                format!("expected exactly one axis, got {axes:?}"),
            ));
        };
        Ok(ArgReduce {
            op,
            axis: *axis,
            index_dtype: p.dtype("index_dtype")?,
        })
    }
}

crate::declare_params! {
    /// Inclusive scan along `axis` (from the end when `reverse`).
    pub struct Cumulative {
        @name op: CumOp,
        axis: usize,
        reverse: bool = false,
    }
}

// ------------------------------------------------------------ shared rule helpers

/// The shape rule of the primitives of one operand whose dtype `class`
/// accepts (complex dtypes too where `complex_ok`: sums, products and the
/// lexicographic max/min).
fn check_class(name: &'static str, class: DTypeClass, x: &Aval, complex_ok: bool) -> Result<()> {
    if class.accepts(x.dtype) || (complex_ok && x.dtype.is_complex()) {
        Ok(())
    } else {
        Err(Error::dtype(
            name,
            &[x.dtype],
            format!("requires {} operand", class.describe()),
        ))
    }
}

fn reduce_sum(b: &mut Builder, x: Atom, axes: Vec<usize>) -> Result<Atom> {
    emit1(
        b,
        Reduce {
            op: ReduceOp::Sum,
            axes,
        },
        vec![x],
    )
}

/// `x` broadcast back to `shape` along the kept (non-reduced) axes.
fn unreduce(b: &mut Builder, x: Atom, shape: &[usize], axes: &[usize]) -> Result<Atom> {
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape: shape.to_vec(),
            broadcast_dimensions: kept,
        }),
        vec![x],
    )
}

/// The derivative of a product with respect to one factor, exact with
/// zeros: with `nz` zeros among the factors and `p` the product of the
/// nonzero ones, it is `p / x` when `nz = 0`, `p` at the zero when `nz = 1`,
/// and 0 otherwise. `nz` and `p` are given broadcast against `x`.
fn prod_others(b: &mut Builder, x: &Atom, x_safe: Atom, nz: Atom, p: Atom) -> Result<Atom> {
    let dtype = b.aval(x)?.dtype;
    let shape = b.aval(x)?.shape;
    let zeros = b.zeros(&Aval::new(shape, dtype))?;
    let none = eq(b, nz.clone(), Builder::lit(dtype, 0.0))?;
    let one_zero = eq(b, nz, Builder::lit(dtype, 1.0))?;
    let at_zero = eq(b, x.clone(), Builder::lit(dtype, 0.0))?;
    let q = b.binary(BinaryOp::Div, p.clone(), x_safe)?;
    let single = select(b, at_zero, zeros.clone(), p)?;
    let single = select(b, one_zero, zeros, single)?;
    select(b, none, single, q)
}

/// `x` with its zeros replaced by ones, and the zero indicator as `dtype`.
fn split_zeros(b: &mut Builder, x: &Atom) -> Result<(Atom, Atom)> {
    let aval = b.aval(x)?;
    let ones = b.full(&aval, 1.0)?;
    let is_zero = eq(b, x.clone(), Builder::lit(aval.dtype, 0.0))?;
    let x_safe = select(b, is_zero.clone(), x.clone(), ones)?;
    let zf = convert(b, is_zero, aval.dtype)?;
    Ok((x_safe, zf))
}

// ------------------------------------------------------------ reductions

impl Family for Reduce {
    crate::family_identity!(op: ReduceOp);

    fn examples() -> Vec<Reduce> {
        ReduceOp::ALL
            .iter()
            .map(|&op| Reduce { op, axes: vec![0] })
            .collect()
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let [x] = operands::<_, 1>(name, ins)?;
        check_axes(name, "axes", &self.axes, x.ndim())?;
        let complex_ok = !matches!(self.op, ReduceOp::And | ReduceOp::Or | ReduceOp::Xor);
        check_class(name, self.op.class(), x, complex_ok)?;
        Ok(vec![Aval::weak(
            drop_dims(&x.shape, &self.axes),
            x.dtype,
            x.weak_type,
        )])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let name = self.name();
        unary_kernel(name, args, outs, |x| {
            kernels::reduce(self.op, x, &self.axes)
        })
    }

    /// `reduce_and` / `reduce_or` / `reduce_xor` have integer or bool results.
    fn differentiable(&self) -> bool {
        !matches!(self.op, ReduceOp::And | ReduceOp::Or | ReduceOp::Xor)
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        match self.op {
            ReduceOp::Sum => jvp_linear(self, b, xs, ts),
            ReduceOp::Max | ReduceOp::Min => jvp_reduce_max(self, b, xs, ts),
            ReduceOp::Prod => jvp_reduce_prod(self, b, xs, ts),
            ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => jvp_zero(self, b, xs, ts),
        }
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        if self.op != ReduceOp::Sum {
            return transpose_not_linear(self.name());
        }
        transpose_unary(self.name(), b, cts, ops, |b, ct, a| {
            unreduce(b, ct, &a.shape, &self.axes)
        })
    }

    /// The reduced axes shift around the mapped one.
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], _n: usize) -> BatchOut {
        batch_one(self, b, ins, dims, |b, x, d| {
            let (axes, out_d) = axes_around(&self.axes, d);
            let z = emit1(b, Reduce { op: self.op, axes }, vec![x.clone()])?;
            Ok((vec![z], vec![Some(out_d)]))
        })
    }
}

/// The JVP of reduction `r` whose tangent `rule` builds from the operand,
/// its aval, its (float) tangent and the primal output; a zero tangent
/// otherwise.
fn reduce_jvp(
    r: &Reduce, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>],
    rule: impl FnOnce(&mut Builder, &Atom, &Aval, Atom, &Atom) -> Result<Atom>,
) -> JvpOut {
    let name = r.name();
    let [x] = operands::<_, 1>(name, xs)?;
    let [t] = operands::<_, 1>(name, ts)?;
    let z = emit1(b, r.clone(), xs.to_vec())?;
    let xaval = b.aval(x)?;
    let Some(t) = t.clone().filter(|_| xaval.dtype.is_inexact()) else {
        return Ok((vec![z], vec![None]));
    };
    let tz = rule(b, x, &xaval, t, &z)?;
    Ok((vec![z], vec![Some(tz)]))
}

/// `reduce_max`: the tangent averages the tangents at the positions that
/// attain the maximum (ties share equally, as JAX).
fn jvp_reduce_max(r: &Reduce, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    reduce_jvp(r, b, xs, ts, |b, x, xaval, t, z| {
        let zb = unreduce(b, z.clone(), &xaval.shape, &r.axes)?;
        let eq = b.add_eqn1(Primitive::Compare(CmpOp::Eq), vec![x.clone(), zb])?;
        let mask = convert(b, eq, xaval.dtype)?;
        let count = reduce_sum(b, mask.clone(), r.axes.clone())?;
        let tm = mul(b, t, mask)?;
        let ts = reduce_sum(b, tm, r.axes.clone())?;
        b.binary(BinaryOp::Div, ts, count)
    })
}

/// `reduce_prod`: `Σ t_i Π_{j≠i} x_j`, exact where factors are zero.
fn jvp_reduce_prod(r: &Reduce, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    reduce_jvp(r, b, xs, ts, |b, x, xaval, t, _z| {
        let axes = &r.axes;
        let (x_safe, zf) = split_zeros(b, x)?;
        let nz = reduce_sum(b, zf, axes.clone())?;
        let pnz = emit1(b, r.clone(), vec![x_safe.clone()])?;
        let nz = unreduce(b, nz, &xaval.shape, axes)?;
        let pnz = unreduce(b, pnz, &xaval.shape, axes)?;
        let d = prod_others(b, x, x_safe, nz, pnz)?;
        let td = mul(b, t, d)?;
        reduce_sum(b, td, axes.clone())
    })
}

// ------------------------------------------------------------ argmax / argmin

impl Family for ArgReduce {
    crate::family_identity!(op: ArgOp);

    fn examples() -> Vec<ArgReduce> {
        ArgOp::ALL
            .iter()
            .map(|&op| ArgReduce {
                op,
                axis: 0,
                index_dtype: DType::I32,
            })
            .collect()
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let (axis, index_dtype) = (self.axis, self.index_dtype);
        let [x] = operands::<_, 1>(name, ins)?;
        check_axes(name, "axes", &[axis], x.ndim())?;
        if x.dtype.is_complex() {
            // JAX compares with gt (argmax) / lt (argmin), which reject complex.
            let cmp = if self.op == ArgOp::Argmax { "gt" } else { "lt" };
            return Err(Error::dtype(
                name,
                &[x.dtype],
                format!(
                    "{cmp} does not accept dtype {} at position 0. Accepted dtypes at position 0 \
                     are subtypes of integer, floating, bool.",
                    x.dtype
                ),
            ));
        }
        if !(x.dtype.is_numeric() || x.dtype == DType::Bool) {
            return Err(Error::dtype(name, &[x.dtype], "requires a numeric operand"));
        }
        if !index_dtype.is_int() {
            return Err(Error::dtype(
                name,
                &[index_dtype],
                "index_dtype must be an integer dtype",
            ));
        }
        if x.shape.get(axis) == Some(&0) {
            return Err(Error::shape(
                name,
                &[&x.shape],
                format!("cannot take the {name} of the zero-size axis {axis}"),
            ));
        }
        Ok(vec![Aval::new(drop_dims(&x.shape, &[axis]), index_dtype)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let name = self.name();
        unary_kernel(name, args, outs, |x| {
            kernels::arg(self.op, x, self.axis, self.index_dtype)
        })
    }

    // Indices are piecewise constant: no tangent.
    crate::zero_derivative_rules!(not_differentiable);

    /// The axis shifts around the mapped one.
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], _n: usize) -> BatchOut {
        let name = self.name();
        batch_one(self, b, ins, dims, |b, x, d| {
            let (axes, out_d) = axes_around(&[self.axis], d);
            let axis = axes
                .first()
                .copied()
                .ok_or_else(|| Error::InvalidArgument(format!("vmap of {name}: no axis")))?;
            let arg = ArgReduce {
                axis,
                ..self.clone()
            };
            Ok((vec![emit1(b, arg, vec![x.clone()])?], vec![Some(out_d)]))
        })
    }
}

// ------------------------------------------------------------ scans

impl Family for Cumulative {
    crate::family_identity!(op: CumOp);

    fn examples() -> Vec<Cumulative> {
        CumOp::ALL
            .iter()
            .map(|&op| Cumulative {
                op,
                axis: 0,
                reverse: false,
            })
            .collect()
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let [x] = operands::<_, 1>(name, ins)?;
        check_axes(name, "axis", &[self.axis], x.ndim())?;
        let complex_ok = matches!(self.op, CumOp::Sum | CumOp::Prod | CumOp::Max | CumOp::Min);
        check_class(name, self.op.class(), x, complex_ok)?;
        Ok(vec![x.clone()])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let name = self.name();
        unary_kernel(name, args, outs, |x| {
            kernels::cumulative(self.op, x, self.axis, self.reverse)
        })
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        match self.op {
            CumOp::Sum => jvp_linear(self, b, xs, ts),
            _ => jvp_cumulative(self, b, xs, ts),
        }
    }

    /// `cumsum`: the transpose is the scan in the other direction.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        if self.op != CumOp::Sum {
            return transpose_not_linear(self.name());
        }
        transpose_unary(self.name(), b, cts, ops, |b, ct, _a| {
            let flipped = Cumulative {
                reverse: !self.reverse,
                ..self.clone()
            };
            emit1(b, flipped, vec![ct])
        })
    }

    /// The scanned axis shifts around the mapped one, which stays put.
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], _n: usize) -> BatchOut {
        batch_one(self, b, ins, dims, |b, x, d| {
            let scan = Cumulative {
                axis: shift(self.axis, d),
                ..self.clone()
            };
            Ok((vec![emit1(b, scan, vec![x.clone()])?], vec![Some(d)]))
        })
    }
}

/// The pair axes of a scan's pairwise weights: operand axis `a` (the
/// scanned one, `i`) followed by a new axis `ja` (`j`) of the same length.
struct PairAxes {
    /// The operand's shape with the `j` axis inserted.
    shape: Vec<usize>,
    /// Where operand axis `k` lands on the `i` side.
    on_i: Vec<usize>,
    /// Where operand axis `k` lands on the `j` side.
    on_j: Vec<usize>,
    ja: usize,
}

impl PairAxes {
    fn new(name: &'static str, shape: &[usize], a: usize) -> Result<PairAxes> {
        let n = *shape
            .get(a)
            .ok_or_else(|| Error::param(name, "axis", "out of range"))?;
        let ja = a.saturating_add(1);
        let mut pshape = shape.to_vec();
        pshape.insert(ja, n);
        let r = shape.len();
        // Operand axis k lands at k (i-side) or skips the pair axis (j-side).
        let on_i = (0..r)
            .map(|k| if k <= a { k } else { k.saturating_add(1) })
            .collect();
        let on_j = (0..r)
            .map(|k| if k < a { k } else { k.saturating_add(1) })
            .collect();
        Ok(PairAxes {
            shape: pshape,
            on_i,
            on_j,
            ja,
        })
    }

    /// `v` broadcast to the pair shape along `dims`.
    fn bcast(&self, b: &mut Builder, v: Atom, dims: &[usize]) -> Result<Atom> {
        b.add_eqn1(
            Primitive::BroadcastInDim(BroadcastInDim {
                shape: self.shape.clone(),
                broadcast_dimensions: dims.to_vec(),
            }),
            vec![v],
        )
    }

    fn iota(&self, b: &mut Builder, dimension: usize) -> Result<Atom> {
        b.add_eqn1(
            Primitive::Iota(Iota {
                dtype: DType::I32,
                shape: self.shape.clone(),
                dimension,
            }),
            vec![],
        )
    }
}

/// The scans other than `cumsum`, through pairwise weights: with the pair
/// axis `j` inserted after the scanned axis `i`, `t_out[i] = Σ_j W[i, j]
/// t[j]` over the prefix `j ≤ i` (suffix when `reverse`), `W` computed
/// from primals only:
///
/// * `cummax`/`cummin`: the prefix positions attaining the result, ties
///   sharing equally (as `reduce_max`);
/// * `cumlogsumexp`: `exp(x[j] - y[i])`;
/// * `cumprod`: the product of the other prefix factors (exact with zeros).
///
/// O(n²) in the scanned length: the reference rule, not a fast one.
fn jvp_cumulative(c: &Cumulative, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let name = c.name();
    let [x] = operands::<_, 1>(name, xs)?;
    let [t] = operands::<_, 1>(name, ts)?;
    let y = emit1(b, c.clone(), xs.to_vec())?;
    let xaval = b.aval(x)?;
    let Some(t) = t.clone().filter(|_| xaval.dtype.is_inexact()) else {
        return Ok((vec![y], vec![None]));
    };
    let pa = PairAxes::new(name, &xaval.shape, c.axis)?;
    let ii = pa.iota(b, c.axis)?;
    let jj = pa.iota(b, pa.ja)?;
    let cmp = if c.reverse { CmpOp::Ge } else { CmpOp::Le };
    let tri = b.add_eqn1(Primitive::Compare(cmp), vec![jj, ii])?;
    let w = scan_weights(c, b, &pa, x, &y, xaval.dtype, tri)?;
    let tj = pa.bcast(b, t, &pa.on_j)?;
    let tw = mul(b, tj, w)?;
    let tout = reduce_sum(b, tw, vec![pa.ja])?;
    Ok((vec![y], vec![Some(tout)]))
}

/// The weights `W[i, j]` of [`jvp_cumulative`] (zero outside the prefix
/// mask `tri`).
fn scan_weights(
    c: &Cumulative, b: &mut Builder, pa: &PairAxes, x: &Atom, y: &Atom, dtype: DType, tri: Atom,
) -> Result<Atom> {
    let paval = Aval::new(pa.shape.clone(), dtype);
    let zeros = b.zeros(&paval)?;
    let xj = pa.bcast(b, x.clone(), &pa.on_j)?;
    Ok(match c.op {
        CumOp::Max | CumOp::Min => {
            let yi = pa.bcast(b, y.clone(), &pa.on_i)?;
            let hit = eq(b, xj, yi)?;
            let hit = convert(b, hit, dtype)?;
            let m = select(b, tri, zeros, hit)?;
            let count = reduce_sum(b, m.clone(), vec![pa.ja])?;
            let count = pa.bcast(b, count, &pa.on_i)?;
            b.binary(BinaryOp::Div, m, count)?
        }
        CumOp::Logsumexp => {
            let yi = pa.bcast(b, y.clone(), &pa.on_i)?;
            let diff = b.binary(BinaryOp::Sub, xj, yi)?;
            let ninf = b.full(&paval, f64::NEG_INFINITY)?;
            let diff = select(b, tri, ninf, diff)?;
            b.unary(UnaryOp::Exp, diff)?
        }
        CumOp::Prod => {
            let (x_safe, zf) = split_zeros(b, x)?;
            let scan = |b: &mut Builder, op: CumOp, v: Atom| {
                emit1(b, Cumulative { op, ..c.clone() }, vec![v])
            };
            let nz = scan(b, CumOp::Sum, zf)?;
            let pnz = scan(b, CumOp::Prod, x_safe.clone())?;
            let nz = pa.bcast(b, nz, &pa.on_i)?;
            let pnz = pa.bcast(b, pnz, &pa.on_i)?;
            let x_safe = pa.bcast(b, x_safe, &pa.on_j)?;
            let d = prod_others(b, &xj, x_safe, nz, pnz)?;
            select(b, tri, zeros, d)?
        }
        // (`cumsum` is linear and takes the direct rule; these are its
        // weights all the same.)
        CumOp::Sum => {
            let ones = b.full(&paval, 1.0)?;
            select(b, tri, zeros, ones)?
        }
    })
}
