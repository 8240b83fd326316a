//! The scatter primitives (`scatter`, `scatter-add`, `scatter-mul`,
//! `scatter-min`, `scatter-max`): their params and `impl Family for
//! ScatterParams`, with the builder and JVP helpers only scatter uses. The
//! helpers shared with gather (params, shape checks, transpose and batch
//! helpers) are in `gather.rs`; the kernels are in `kernels/gather.rs`.

use super::family::{emit1, finish, operands, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::gather::{
    batched_lists, check, check_index_map, display_dims_and_mode, emit, example_lists, five_dims,
    get, index_parts, is_float, known_indices, opt_bool, single, strictly_sorted, three, to_front,
    window_dims, GatherDims, GatherParams, Mode,
};
use super::params::{Lookup, Param, ParamList};
use super::transpose::operand_aval;
use super::{CmpOp, Primitive};
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Scalar};
use crate::prims::{BroadcastInDim, Iota, Reshape, SelectN};

/// `lax.ScatterDimensionNumbers`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ScatterDims {
    pub update_window_dims: Vec<usize>,
    pub inserted_window_dims: Vec<usize>,
    pub scatter_dims_to_operand_dims: Vec<usize>,
    pub operand_batching_dims: Vec<usize>,
    pub scatter_indices_batching_dims: Vec<usize>,
}

/// How a scatter combines an update with the operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterOp {
    Set,
    Add,
    Mul,
    Min,
    Max,
}

impl ScatterOp {
    pub const ALL: &'static [ScatterOp] = &[
        ScatterOp::Set,
        ScatterOp::Add,
        ScatterOp::Mul,
        ScatterOp::Min,
        ScatterOp::Max,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ScatterOp::Set => "scatter",
            ScatterOp::Add => "scatter-add",
            ScatterOp::Mul => "scatter-mul",
            ScatterOp::Min => "scatter-min",
            ScatterOp::Max => "scatter-max",
        }
    }

    pub fn from_name(s: &str) -> Option<ScatterOp> {
        ScatterOp::ALL.iter().copied().find(|o| o.name() == s)
    }
}

/// Params of the scatter primitives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScatterParams {
    pub op: ScatterOp,
    pub dims: ScatterDims,
    pub indices_are_sorted: bool,
    pub unique_indices: bool,
    pub mode: Mode,
}

impl From<ScatterParams> for Primitive {
    fn from(s: ScatterParams) -> Primitive {
        Primitive::Scatter(Box::new(s))
    }
}

// ---------------------------------------------------------------------------
// builder helpers

fn zeros_like(b: &mut Builder, a: &Atom) -> Result<Atom> {
    let av = b.aval(a)?;
    b.zeros(&Aval::new(av.shape, av.dtype))
}

fn select(b: &mut Builder, pred: Atom, on_false: Atom, on_true: Atom) -> Result<Atom> {
    emit(
        b,
        Primitive::SelectN(SelectN),
        vec![pred, on_false, on_true],
    )
}

fn eq(b: &mut Builder, x: Atom, y: Atom) -> Result<Atom> {
    emit(b, Primitive::Compare(CmpOp::Eq), vec![x, y])
}

fn mask_to(b: &mut Builder, pred: Atom, like: &Atom) -> Result<Atom> {
    let av = b.aval(like)?;
    let one = b.full(&Aval::new(av.shape.clone(), av.dtype), 1.0)?;
    let zero = b.zeros(&Aval::new(av.shape, av.dtype))?;
    select(b, pred, zero, one)
}

fn with_op(s: &ScatterParams, op: ScatterOp) -> ScatterParams {
    let mut s = s.clone();
    s.op = op;
    s
}

/// The gather that reads back, for every update element, the operand
/// element a scatter with `s` writes it to (the transpose of scatter-add).
fn inverse_gather(s: &ScatterParams, x: &Aval, u: &Aval) -> GatherParams {
    let d = &s.dims;
    let mut window = d.update_window_dims.iter();
    let slice_sizes = (0..x.ndim())
        .map(|a| {
            if d.inserted_window_dims.contains(&a) || d.operand_batching_dims.contains(&a) {
                1
            } else {
                window
                    .next()
                    .and_then(|&w| u.shape.get(w).copied())
                    .unwrap_or(1)
            }
        })
        .collect();
    GatherParams {
        dims: GatherDims::from_lists(s.dims.to_lists()),
        slice_sizes,
        indices_are_sorted: s.indices_are_sorted,
        unique_indices: s.unique_indices,
        mode: s.mode,
        fill_value: Some(Scalar::Float(0.0)),
    }
}

// ---------------------------------------------------------------------------
// jvp helpers

fn tangent_or_zeros(b: &mut Builder, t: Option<Atom>, like: &Atom) -> Result<Atom> {
    match t {
        Some(t) => Ok(t),
        None => zeros_like(b, like),
    }
}

/// scatter with possibly repeated indices: the tangent of a position is the
/// tangent of the update that won it (the kernel lets the last update in
/// row-major order win), found by scattering update ids and gathering them
/// back; untouched positions keep the operand's tangent.
fn jvp_scatter_set(
    s: &ScatterParams, b: &mut Builder, x: &Atom, i: &Atom, u: &Atom, tx: Option<Atom>,
    tu: Option<Atom>,
) -> Result<Atom> {
    let xa = b.aval(x)?;
    let ua = b.aval(u)?;
    let ids_shape: Vec<usize> = ua
        .shape
        .iter()
        .enumerate()
        .map(|(a, &n)| {
            if s.dims.update_window_dims.contains(&a) {
                1
            } else {
                n
            }
        })
        .collect();
    let num_ids = crate::array::checked_size(&ids_shape)?;
    if i32::try_from(num_ids).is_err() {
        return Err(Error::Overflow {
            what: "scatter jvp",
            detail: format!("{num_ids} update positions"),
        });
    }
    let iota = emit(
        b,
        Primitive::Iota(Iota {
            dtype: DType::I32,
            shape: vec![num_ids],
            dimension: 0,
        }),
        vec![],
    )?;
    let ids = emit(
        b,
        Primitive::Reshape(Reshape {
            new_sizes: ids_shape.clone(),
        }),
        vec![iota],
    )?;
    let ids = b.binary(super::BinaryOp::Add, ids, Builder::lit(DType::I32, 1.0))?;
    let ids = emit(
        b,
        Primitive::BroadcastInDim(BroadcastInDim {
            shape: ua.shape.clone(),
            broadcast_dimensions: (0..ua.ndim()).collect(),
        }),
        vec![ids],
    )?;
    let zero_ids = b.zeros(&Aval::new(xa.shape.clone(), DType::I32))?;
    let scattered = emit1(
        b,
        with_op(s, ScatterOp::Set),
        vec![zero_ids, i.clone(), ids.clone()],
    )?;
    let back = emit1(
        b,
        inverse_gather(s, &xa, &ua),
        vec![scattered.clone(), i.clone()],
    )?;
    let untouched = eq(b, scattered, Builder::lit(DType::I32, 0.0))?;
    let won = eq(b, ids, back)?;
    let tx = tangent_or_zeros(b, tx, x)?;
    let tu = tangent_or_zeros(b, tu, u)?;
    let zx = zeros_like(b, x)?;
    let zu = zeros_like(b, u)?;
    let kept = select(b, untouched, zx, tx)?;
    let winners = select(b, won, zu, tu)?;
    emit1(
        b,
        with_op(s, ScatterOp::Add),
        vec![kept, i.clone(), winners],
    )
}

/// scatter-min/max: at each position, the tangents of the operand and of
/// every update equal to the result, averaged.
#[allow(clippy::too_many_arguments)]
fn jvp_scatter_extremal(
    s: &ScatterParams, b: &mut Builder, x: &Atom, i: &Atom, u: &Atom, z: &Atom, tx: Option<Atom>,
    tu: Option<Atom>,
) -> Result<Atom> {
    let xa = b.aval(x)?;
    let ua = b.aval(u)?;
    let at_target = emit1(b, inverse_gather(s, &xa, &ua), vec![z.clone(), i.clone()])?;
    let won = eq(b, u.clone(), at_target)?;
    let won = mask_to(b, won, u)?;
    let kept = eq(b, x.clone(), z.clone())?;
    let kept = mask_to(b, kept, x)?;
    let add = with_op(s, ScatterOp::Add);
    let count = emit1(b, add.clone(), vec![kept.clone(), i.clone(), won.clone()])?;
    let tx = tangent_or_zeros(b, tx, x)?;
    let tu = tangent_or_zeros(b, tu, u)?;
    let tx = b.binary(super::BinaryOp::Mul, kept, tx)?;
    let tu = b.binary(super::BinaryOp::Mul, won, tu)?;
    let total = emit1(b, add, vec![tx, i.clone(), tu])?;
    b.binary(super::BinaryOp::Div, total, count)
}

// ---------------------------------------------------------------------------
// scatter

impl Family for ScatterParams {
    const NAMES: &'static [&'static str] = &[
        "scatter",
        "scatter-add",
        "scatter-mul",
        "scatter-min",
        "scatter-max",
    ];

    fn name(&self) -> &'static str {
        self.op.name()
    }

    crate::family_identity!(custom_params);

    fn params(&self) -> ParamList {
        vec![
            ("dimension_numbers", self.dims.to_param()),
            ("indices_are_sorted", Param::Bool(self.indices_are_sorted)),
            ("mode", Param::Int(self.mode.code())),
            ("unique_indices", Param::Bool(self.unique_indices)),
            ("update_consts", Param::Ints(Vec::new())),
            ("update_jaxpr", Param::None),
        ]
    }

    fn from_params(name: &str, params: &Lookup<'_>) -> Result<Option<ScatterParams>> {
        let Some(op) = ScatterOp::from_name(name) else {
            return Ok(None);
        };
        let prim = op.name();
        let params = params.list();
        Ok(Some(ScatterParams {
            op,
            dims: ScatterDims::from_lists(five_dims(prim, params)?),
            indices_are_sorted: opt_bool(prim, params, "indices_are_sorted")?,
            unique_indices: opt_bool(prim, params, "unique_indices")?,
            mode: Mode::from_param(prim, get(params, "mode"))?,
        }))
    }

    fn display_params(&self, params: &mut ParamList) {
        let text = self.dims.repr();
        display_dims_and_mode(params, text, self.mode);
    }

    fn examples() -> Vec<ScatterParams> {
        ScatterOp::ALL
            .iter()
            .map(|&op| ScatterParams {
                op,
                dims: ScatterDims::from_lists(example_lists()),
                indices_are_sorted: false,
                unique_indices: false,
                mode: Mode::FillOrDrop,
            })
            .collect()
    }

    /// Checks a scatter's operands; the output is the operand's aval.
    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let prim = self.op.name();
        let [x, idx, u] = operands::<_, 3>(prim, ins)?;
        if x.dtype != u.dtype {
            return Err(Error::dtype(
                prim,
                &[x.dtype, u.dtype],
                "operand and updates must have the same dtype",
            ));
        }
        if self.op != ScatterOp::Set && matches!(x.dtype, DType::Key | DType::Float0) {
            return Err(Error::dtype(
                prim,
                &[x.dtype],
                "expected a numeric or bool operand",
            ));
        }
        if matches!(self.op, ScatterOp::Min | ScatterOp::Max) && x.dtype.is_complex() {
            return Err(Error::dtype(
                prim,
                &[x.dtype],
                "complex operands are not supported yet",
            ));
        }
        let (batch_shape, k) = index_parts(prim, x, idx)?;
        let d = &self.dims;
        let shapes: [&[usize]; 3] = [&x.shape, &idx.shape, &u.shape];
        let window = window_dims(
            prim,
            x,
            idx,
            ("inserted_window_dims", &d.inserted_window_dims),
            &d.operand_batching_dims,
            &d.scatter_indices_batching_dims,
            batch_shape,
        )?;
        check_index_map(
            prim,
            x,
            idx,
            &d.scatter_dims_to_operand_dims,
            k,
            &d.operand_batching_dims,
        )?;
        check(
            u.ndim() == d.update_window_dims.len().saturating_add(batch_shape.len())
                && strictly_sorted(&d.update_window_dims)
                && d.update_window_dims.iter().all(|&w| w < u.ndim())
                && d.update_window_dims.len() == window.len(),
            prim,
            &shapes,
            format!(
                "update_window_dims {:?} must be sorted updates axes, one per operand window dim \
                 {window:?}, the other updates axes matching the indices batch axes",
                d.update_window_dims
            ),
        )?;
        for (&ud, &od) in d.update_window_dims.iter().zip(&window) {
            check(
                u.shape.get(ud) <= x.shape.get(od),
                prim,
                &shapes,
                format!("updates window axis {ud} is larger than operand axis {od}"),
            )?;
        }
        let scatter_sizes: Vec<usize> = (0..u.ndim())
            .filter(|a| !d.update_window_dims.contains(a))
            .filter_map(|a| u.shape.get(a).copied())
            .collect();
        check(
            scatter_sizes == batch_shape,
            prim,
            &shapes,
            "the updates scatter axes must match the indices batch axes",
        )?;
        Ok(vec![x.clone()])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let prim = self.op.name();
        let [x, i, u] = operands::<_, 3>(prim, args)?;
        let buf = super::kernel::gather::scatter(self, x, i, u)?;
        finish(prim, outs, buf)
    }

    /// Tangents as JAX defines them: scatter-add is linear; scatter with
    /// unique indices is linear, otherwise the winning update of each
    /// position is found by scattering ids and its tangent is added where it
    /// won; scatter-mul is linear in the operand and (unique indices only)
    /// `x * scatter_add(0, t_u)` in the updates; scatter-min/max average the
    /// tangents of every value equal to the result.
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let prim = self.op.name();
        let (x, i, u) = three(prim, xs)?;
        let (tx, _, tu) = three(prim, ts)?;
        let z = emit1(b, self.clone(), vec![x.clone(), i.clone(), u.clone()])?;
        if !is_float(b, &z)? || (tx.is_none() && tu.is_none()) {
            return Ok((vec![z], vec![None]));
        }
        let t = match self.op {
            ScatterOp::Add => {
                let tx = tangent_or_zeros(b, tx, &x)?;
                let tu = tangent_or_zeros(b, tu, &u)?;
                emit1(b, self.clone(), vec![tx, i, tu])?
            }
            ScatterOp::Set if self.unique_indices => {
                let tx = tangent_or_zeros(b, tx, &x)?;
                let tu = tangent_or_zeros(b, tu, &u)?;
                emit1(b, self.clone(), vec![tx, i, tu])?
            }
            ScatterOp::Set => jvp_scatter_set(self, b, &x, &i, &u, tx, tu)?,
            ScatterOp::Mul => {
                let mut t = None;
                if let Some(tx) = tx {
                    t = Some(emit1(b, self.clone(), vec![tx, i.clone(), u.clone()])?);
                }
                if let Some(tu) = tu {
                    if !self.unique_indices {
                        return Err(Error::NotImplemented(
                            "scatter-mul gradients with respect to the updates are only \
                             implemented if unique_indices=True"
                                .into(),
                        ));
                    }
                    let zx = zeros_like(b, &x)?;
                    let spread = emit1(b, with_op(self, ScatterOp::Add), vec![zx, i, tu])?;
                    let tu_out = b.binary(super::BinaryOp::Mul, x, spread)?;
                    t = super::jvp::add_opt(b, t, Some(tu_out))?;
                }
                t.ok_or_else(|| Error::InvalidArgument(format!("{prim}: no tangent to propagate")))?
            }
            ScatterOp::Min | ScatterOp::Max => {
                jvp_scatter_extremal(self, b, &x, &i, &u, &z, tx, tu)?
            }
        };
        Ok((vec![z], vec![Some(t)]))
    }

    /// Transposes of the linear scatters: scatter-add (identity for the
    /// operand, a gather for the updates), scatter with unique indices (the
    /// operand keeps the cotangent where nothing was written), scatter-mul
    /// in its operand.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let prim = self.op.name();
        let (x, i, u) = three(prim, ops)?;
        let i = known_indices(prim, &i)?;
        let Some(ct) = single(prim, cts)? else {
            return Ok(vec![None, None, None]);
        };
        let xa = operand_aval(b, &x)?;
        let ua = operand_aval(b, &u)?;
        let gather_u = |b: &mut Builder, ct: Atom| -> Result<Option<Atom>> {
            if u.is_linear() {
                Ok(Some(emit1(
                    b,
                    inverse_gather(self, &xa, &ua),
                    vec![ct, i.clone()],
                )?))
            } else {
                Ok(None)
            }
        };
        match self.op {
            ScatterOp::Add => {
                let cu = gather_u(b, ct.clone())?;
                let cx = x.is_linear().then_some(ct);
                Ok(vec![cx, None, cu])
            }
            ScatterOp::Set => {
                if !self.unique_indices {
                    return Err(Error::NotImplemented(
                        "scatter transpose is only implemented where unique_indices=True".into(),
                    ));
                }
                let cu = gather_u(b, ct.clone())?;
                let cx = if x.is_linear() {
                    let zu = b.zeros(&Aval::new(ua.shape.clone(), ua.dtype))?;
                    Some(emit1(b, self.clone(), vec![ct, i.clone(), zu])?)
                } else {
                    None
                };
                Ok(vec![cx, None, cu])
            }
            ScatterOp::Mul => {
                let Operand::Known(uk) = &u else {
                    return Err(super::transpose::not_linear_error(
                        prim,
                        "scatter-mul is not linear in its updates",
                    ));
                };
                let cx = if x.is_linear() {
                    Some(emit1(b, self.clone(), vec![ct, i.clone(), uk.clone()])?)
                } else {
                    None
                };
                Ok(vec![cx, None, None])
            }
            ScatterOp::Min | ScatterOp::Max => Err(super::transpose::not_linear_error(
                prim,
                "min/max scatters are not linear",
            )),
        }
    }

    /// The operand (and updates) carry the mapped axis first; unbatched
    /// indices make it a leading window dim, batched indices a pair of
    /// batching dims.
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let prim = self.op.name();
        let (x, i, u) = three(prim, ins)?;
        let (dx, di, du) = three(prim, dims)?;
        if dx.is_none() && di.is_none() && du.is_none() {
            let out = emit1(b, self.clone(), ins.to_vec())?;
            return Ok((vec![out], vec![None]));
        }
        let mut ns = self.clone();
        ns.dims = ScatterDims::from_lists(batched_lists(self.dims.lists(), true, di.is_some()));
        let x = to_front(b, &x, dx, n)?;
        let u = to_front(b, &u, du, n)?;
        let i = match di {
            None => i,
            Some(_) => to_front(b, &i, di, n)?,
        };
        let out = emit1(b, ns, vec![x, i, u])?;
        Ok((vec![out], vec![Some(0)]))
    }
}

/// Used by the kernel: whether the mode clamps starts for a scatter.
pub(crate) fn scatter_clamps(s: &ScatterParams) -> bool {
    s.mode.clamps(false)
}
