//! The gather/scatter family: `gather`, `scatter`, `scatter-add`,
//! `scatter-mul`, `scatter-min`, `scatter-max`, with JAX's params and XLA's
//! semantics (the index vector is always the last axis of the indices).
//!
//! This file holds `impl Family for GatherParams` and the helpers shared
//! with the scatter family, whose params and `impl Family for ScatterParams`
//! are in `scatter.rs` (re-exported here). The kernels are in
//! `kernels/gather.rs`.
//!
//! Modes (`GatherScatterMode`, JAX's enum values): `CLIP` (1) clamps start
//! indices so the whole window is in bounds; `FILL_OR_DROP` (2) fills a
//! gathered window that is not entirely in bounds with `fill_value` (NaN,
//! the dtype's minimum for signed and maximum for unsigned integers, true for
//! bool when `None`) and drops such a scattered window; `PROMISE_IN_BOUNDS`
//! (3) clamps gathers and drops scatters (what XLA does).

use super::family::{
    arity_error, emit1, operands, single_out, BatchOut, Family, JvpOut, Operand, TransposeOut,
};
use super::params::{ints, nonnegative, Lookup, Param, ParamList};
use super::transpose::operand_aval;
use super::Primitive;
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Scalar};
use crate::prims::{BroadcastInDim, Concatenate, ConvertElementType};

pub(crate) use super::scatter::scatter_clamps;
pub use super::scatter::{ScatterDims, ScatterOp, ScatterParams};

/// `lax.GatherDimensionNumbers`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GatherDims {
    pub offset_dims: Vec<usize>,
    pub collapsed_slice_dims: Vec<usize>,
    pub start_index_map: Vec<usize>,
    pub operand_batching_dims: Vec<usize>,
    pub start_indices_batching_dims: Vec<usize>,
}

/// `lax.GatherScatterMode` (JAX's enum values 1, 2, 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Clip,
    FillOrDrop,
    PromiseInBounds,
}

impl Mode {
    pub fn code(self) -> i64 {
        match self {
            Mode::Clip => 1,
            Mode::FillOrDrop => 2,
            Mode::PromiseInBounds => 3,
        }
    }

    /// JAX's enum value, or its `from_any` string (`"clip"`, `"fill"`,
    /// `"drop"`, `"promise_in_bounds"`, also the enum member names).
    pub fn from_param(prim: &'static str, p: Option<&Param>) -> Result<Mode> {
        match p {
            None | Some(Param::None) => Ok(Mode::FillOrDrop),
            Some(Param::Int(1)) => Ok(Mode::Clip),
            Some(Param::Int(2)) => Ok(Mode::FillOrDrop),
            Some(Param::Int(3)) => Ok(Mode::PromiseInBounds),
            Some(Param::Str(s)) => match s.to_ascii_lowercase().as_str() {
                "clip" => Ok(Mode::Clip),
                "fill" | "drop" | "fill_or_drop" => Ok(Mode::FillOrDrop),
                "promise_in_bounds" => Ok(Mode::PromiseInBounds),
                _ => Err(Error::param(prim, "mode", format!("unknown mode {s:?}"))),
            },
            Some(other) => Err(Error::param(
                prim,
                "mode",
                format!("expected a GatherScatterMode, got {other:?}"),
            )),
        }
    }

    /// Whether start indices are clamped (otherwise out-of-bounds windows are
    /// filled / dropped).
    pub(super) fn clamps(self, gather: bool) -> bool {
        match self {
            Mode::Clip => true,
            Mode::FillOrDrop => false,
            Mode::PromiseInBounds => gather,
        }
    }
}

/// Params of `gather`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GatherParams {
    pub dims: GatherDims,
    pub slice_sizes: Vec<usize>,
    pub indices_are_sorted: bool,
    pub unique_indices: bool,
    pub mode: Mode,
    pub fill_value: Option<Scalar>,
}

// ---------------------------------------------------------------------------
// params

fn scalar_param(s: Option<Scalar>) -> Param {
    match s {
        None => Param::None,
        Some(Scalar::Bool(b)) => Param::Bool(b),
        Some(Scalar::Int(i)) => Param::Int(i),
        Some(Scalar::UInt(u)) => i64::try_from(u).map_or(Param::Float(u as f64), Param::Int),
        Some(Scalar::Float(f)) => Param::Float(f),
        Some(Scalar::Complex(re, im)) => Param::Tuple(vec![Param::Float(re), Param::Float(im)]),
    }
}

pub(super) fn py_tuple(v: &[usize]) -> String {
    match v {
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = v.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// The five dimension lists of gather and scatter dimension numbers, in
/// JAX's order: the window dims (`offset_dims` / `update_window_dims`), the
/// operand dims without a window axis (`collapsed_slice_dims` /
/// `inserted_window_dims`), the index map, the operand batching dims and the
/// indices batching dims.
pub(super) type DimLists = [Vec<usize>; 5];

/// The list view, the param and the Python repr of a dimension-numbers type
/// with the fields of [`DimLists`] (in its order).
macro_rules! dim_lists {
    ($($t:ident, $class:literal { $($field:ident),* };)*) => {$(
        impl $t {
            /// The dimension lists in JAX's order.
            pub(super) fn lists(&self) -> [&[usize]; 5] {
                [$(&self.$field),*]
            }

            /// The dimension lists in JAX's order, owned.
            pub(super) fn to_lists(&self) -> DimLists {
                self.lists().map(<[usize]>::to_vec)
            }

            pub(super) fn from_lists(lists: DimLists) -> $t {
                let [$($field),*] = lists;
                $t { $($field),* }
            }

            /// The `dimension_numbers` param.
            pub(super) fn to_param(&self) -> Param {
                Param::Tuple(self.lists().iter().map(|l| ints(l)).collect())
            }

            /// What Python prints for the dimension numbers.
            pub(super) fn repr(&self) -> String {
                let fields = [$(format!("{}={}", stringify!($field), py_tuple(&self.$field))),*];
                format!("{}({})", $class, fields.join(", "))
            }
        }
    )*};
}

dim_lists! {
    GatherDims, "GatherDimensionNumbers" {
        offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
        start_indices_batching_dims
    };
    ScatterDims, "ScatterDimensionNumbers" {
        update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
        operand_batching_dims, scatter_indices_batching_dims
    };
}

/// The dimension lists of the examples: one collapsed axis indexed by the
/// one start index.
pub(super) fn example_lists() -> DimLists {
    [vec![], vec![0], vec![0], vec![], vec![]]
}

/// The dimension lists of a per-example dynamic slice of rank `rank`
/// (operand `[n, ...]`, indices `[n, rank]`): one batching dim pair, every
/// other operand axis a window indexed by the starts.
fn per_example_lists(rank: usize) -> DimLists {
    [
        (1..=rank).collect(),
        vec![],
        (1..=rank).collect(),
        vec![0],
        vec![0],
    ]
}

/// The dimension lists once vmap has moved the mapped axis to the front of
/// the operand alone (a new leading window dim), of the indices alone (a
/// new leading batch dim), or of both (a batching dim pair).
pub(super) fn batched_lists(lists: [&[usize]; 5], operand: bool, indices: bool) -> DimLists {
    let [w, c, m, ob, ib] = lists;
    match (operand, indices) {
        (true, false) => [front(w), bump(c), bump(m), bump(ob), ib.to_vec()],
        (false, true) => [bump(w), c.to_vec(), m.to_vec(), ob.to_vec(), bump(ib)],
        (true, true) => [bump(w), bump(c), bump(m), front(ob), front(ib)],
        (false, false) => lists.map(<[usize]>::to_vec),
    }
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Clip => "GatherScatterMode.CLIP",
        Mode::FillOrDrop => "GatherScatterMode.FILL_OR_DROP",
        Mode::PromiseInBounds => "GatherScatterMode.PROMISE_IN_BOUNDS",
    }
}

pub(super) fn get<'a>(params: &'a [(String, Param)], key: &str) -> Option<&'a Param> {
    params.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn to_dims(prim: &'static str, key: &'static str, p: &Param) -> Result<Vec<usize>> {
    let list = p
        .int_list()
        .map_err(|_| Error::param(prim, key, format!("expected a tuple of ints, got {p:?}")))?;
    nonnegative(prim, key, list)
}

pub(super) fn opt_bool(
    prim: &'static str, params: &[(String, Param)], key: &'static str,
) -> Result<bool> {
    match get(params, key) {
        None | Some(Param::None) => Ok(false),
        Some(Param::Bool(b)) => Ok(*b),
        Some(Param::Int(i)) => Ok(*i != 0),
        Some(other) => Err(Error::param(
            prim,
            key,
            format!("expected a bool, got {other:?}"),
        )),
    }
}

/// The five tuples of a dimension-numbers param (the last two optional, as
/// JAX's NamedTuple defaults).
pub(super) fn five_dims(prim: &'static str, params: &[(String, Param)]) -> Result<[Vec<usize>; 5]> {
    let key = "dimension_numbers";
    let p = get(params, key).ok_or_else(|| Error::param(prim, key, "missing"))?;
    let parts: Vec<Param> = match p {
        Param::Tuple(v) => v.clone(),
        Param::Ints(v) if v.is_empty() => Vec::new(),
        other => {
            return Err(Error::param(
                prim,
                key,
                format!("expected a tuple of dimension tuples, got {other:?}"),
            ))
        }
    };
    if parts.len() != 3 && parts.len() != 5 {
        return Err(Error::param(
            prim,
            key,
            format!("expected 3 or 5 dimension tuples, got {}", parts.len()),
        ));
    }
    let mut out: [Vec<usize>; 5] = Default::default();
    for (slot, part) in out.iter_mut().zip(&parts) {
        *slot = to_dims(prim, key, part)?;
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// shape rules

pub(super) fn strictly_sorted(v: &[usize]) -> bool {
    v.windows(2).all(|w| matches!(w, [a, b] if a < b))
}

fn distinct(v: &[usize]) -> bool {
    v.iter()
        .enumerate()
        .all(|(i, x)| !v.iter().skip(i.saturating_add(1)).any(|y| y == x))
}

pub(super) fn check(
    ok: bool, prim: &'static str, shapes: &[&[usize]], reason: impl Into<String>,
) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::shape(prim, shapes, reason))
    }
}

/// Checks the indices operand: integer dtype, rank >= 1; returns its batch
/// shape (every axis but the last) and the index vector length.
pub(super) fn index_parts<'a>(
    prim: &'static str, x: &Aval, idx: &'a Aval,
) -> Result<(&'a [usize], usize)> {
    if !idx.dtype.is_int() {
        return Err(Error::dtype(
            prim,
            &[x.dtype, idx.dtype],
            "indices must have an integer dtype",
        ));
    }
    match idx.shape.split_last() {
        Some((&k, batch)) => Ok((batch, k)),
        None => Err(Error::shape(
            prim,
            &[&x.shape, &idx.shape],
            "indices must have rank >= 1 (the last axis is the index vector)",
        )),
    }
}

/// Operand dims that are neither collapsed/inserted nor batching (the window
/// dims), after checking both lists.
pub(super) fn window_dims(
    prim: &'static str, x: &Aval, idx: &Aval, (removed_name, removed): (&str, &[usize]),
    batching: &[usize], idx_batching: &[usize], batch_shape: &[usize],
) -> Result<Vec<usize>> {
    let shapes: [&[usize]; 2] = [&x.shape, &idx.shape];
    let n = x.ndim();
    check(
        strictly_sorted(removed) && removed.iter().all(|&d| d < n),
        prim,
        &shapes,
        format!("{removed_name} {removed:?} must be sorted, distinct and < the operand rank {n}"),
    )?;
    check(
        strictly_sorted(batching) && batching.iter().all(|&d| d < n),
        prim,
        &shapes,
        format!("operand_batching_dims {batching:?} must be sorted, distinct and < the operand rank {n}"),
    )?;
    check(
        !removed.iter().any(|d| batching.contains(d)),
        prim,
        &shapes,
        format!(
            "{removed_name} {removed:?} and operand_batching_dims {batching:?} must be disjoint"
        ),
    )?;
    check(
        idx_batching.len() == batching.len()
            && distinct(idx_batching)
            && idx_batching.iter().all(|&d| d < batch_shape.len()),
        prim,
        &shapes,
        format!(
            "the indices batching dims {idx_batching:?} must be distinct axes of the indices other \
             than the last, one per operand batching dim {batching:?}"
        ),
    )?;
    for (&od, &id) in batching.iter().zip(idx_batching) {
        check(
            x.shape.get(od) == batch_shape.get(id),
            prim,
            &shapes,
            format!(
                "operand batching dim {od} and indices batching dim {id} must have equal sizes"
            ),
        )?;
    }
    Ok((0..n)
        .filter(|d| !removed.contains(d) && !batching.contains(d))
        .collect())
}

pub(super) fn check_index_map(
    prim: &'static str, x: &Aval, idx: &Aval, map: &[usize], k: usize, batching: &[usize],
) -> Result<()> {
    check(
        map.len() == k,
        prim,
        &[&x.shape, &idx.shape],
        format!("the index map {map:?} must have one entry per index vector element ({k})"),
    )?;
    check(
        distinct(map) && map.iter().all(|&d| d < x.ndim() && !batching.contains(&d)),
        prim,
        &[&x.shape, &idx.shape],
        format!("the index map {map:?} must name distinct non-batching operand axes"),
    )
}

// ---------------------------------------------------------------------------
// builder helpers

pub(super) fn emit(b: &mut Builder, p: Primitive, ins: Vec<Atom>) -> Result<Atom> {
    b.add_eqn1(p, ins)
}

pub(super) fn is_float(b: &Builder, a: &Atom) -> Result<bool> {
    Ok(b.aval(a)?.dtype.is_inexact())
}

/// The scatter-add that accumulates a gather's cotangent into the operand.
fn inverse_scatter_add(g: &GatherParams) -> ScatterParams {
    ScatterParams {
        op: ScatterOp::Add,
        dims: ScatterDims::from_lists(g.dims.to_lists()),
        indices_are_sorted: g.indices_are_sorted,
        unique_indices: g.unique_indices,
        mode: g.mode,
    }
}

// ---------------------------------------------------------------------------
// transpose helpers

pub(super) fn known_indices(prim: &'static str, op: &Operand) -> Result<Atom> {
    match op {
        Operand::Known(a) => Ok(a.clone()),
        Operand::Linear(_) => Err(super::transpose::not_linear_error(
            prim,
            "the indices are not linear",
        )),
    }
}

pub(super) fn single(prim: &'static str, cts: &[Option<Atom>]) -> Result<Option<Atom>> {
    match cts {
        [c] => Ok(c.clone()),
        _ => Err(arity_error(prim, 1, cts.len())),
    }
}

pub(super) fn three<T: Clone>(prim: &'static str, xs: &[T]) -> Result<(T, T, T)> {
    match xs {
        [a, b, c] => Ok((a.clone(), b.clone(), c.clone())),
        _ => Err(arity_error(prim, 3, xs.len())),
    }
}

// ---------------------------------------------------------------------------
// batch helpers

pub(super) fn bump(v: &[usize]) -> Vec<usize> {
    v.iter().map(|d| d.saturating_add(1)).collect()
}

pub(super) fn front(v: &[usize]) -> Vec<usize> {
    let mut out = vec![0];
    out.extend(bump(v));
    out
}

pub(super) fn to_front(b: &mut Builder, x: &Atom, d: Option<usize>, n: usize) -> Result<Atom> {
    match d {
        Some(d) => super::batch::move_axis(b, x.clone(), d, 0),
        None => super::batch::add_batch_axis(b, x.clone(), n, 0),
    }
}

/// The display printer's `dimension_numbers` and `mode` as JAX prints them
/// (`GatherDimensionNumbers(offset_dims=(1,), ...)`, `GatherScatterMode.CLIP`).
pub(super) fn display_dims_and_mode(params: &mut ParamList, dims: String, mode: Mode) {
    for (k, v) in params.iter_mut() {
        match *k {
            "dimension_numbers" => *v = Param::Str(dims.clone()),
            "mode" => *v = Param::Str(mode_name(mode).to_string()),
            _ => {}
        }
    }
}

impl From<GatherParams> for Primitive {
    fn from(g: GatherParams) -> Primitive {
        Primitive::Gather(Box::new(g))
    }
}
// ---------------------------------------------------------------------------
// gather

impl Family for GatherParams {
    const NAMES: &'static [&'static str] = &["gather"];

    fn name(&self) -> &'static str {
        "gather"
    }

    crate::family_identity!(custom_params);

    fn params(&self) -> ParamList {
        vec![
            ("dimension_numbers", self.dims.to_param()),
            ("fill_value", scalar_param(self.fill_value)),
            ("indices_are_sorted", Param::Bool(self.indices_are_sorted)),
            ("mode", Param::Int(self.mode.code())),
            ("slice_sizes", ints(&self.slice_sizes)),
            ("unique_indices", Param::Bool(self.unique_indices)),
        ]
    }

    fn from_params(name: &str, params: &Lookup<'_>) -> Result<Option<GatherParams>> {
        if name != "gather" {
            return Ok(None);
        }
        let prim = "gather";
        let params = params.list();
        let dims = GatherDims::from_lists(five_dims(prim, params)?);
        let slice_sizes = match get(params, "slice_sizes") {
            Some(p) => to_dims(prim, "slice_sizes", p)?,
            None => return Err(Error::param(prim, "slice_sizes", "missing")),
        };
        let fill_value = match get(params, "fill_value") {
            None | Some(Param::None) => None,
            Some(Param::Bool(b)) => Some(Scalar::Bool(*b)),
            Some(Param::Int(i)) => Some(Scalar::Int(*i)),
            Some(Param::Float(f)) => Some(Scalar::Float(*f)),
            Some(Param::Tuple(parts))
                if matches!(parts.as_slice(), [Param::Float(_), Param::Float(_)]) =>
            {
                match parts.as_slice() {
                    [Param::Float(re), Param::Float(im)] => Some(Scalar::Complex(*re, *im)),
                    _ => None,
                }
            }
            Some(other) => {
                return Err(Error::param(
                    prim,
                    "fill_value",
                    format!("expected a scalar, got {other:?}"),
                ))
            }
        };
        Ok(Some(GatherParams {
            dims,
            slice_sizes,
            indices_are_sorted: opt_bool(prim, params, "indices_are_sorted")?,
            unique_indices: opt_bool(prim, params, "unique_indices")?,
            mode: Mode::from_param(prim, get(params, "mode"))?,
            fill_value,
        }))
    }

    fn display_params(&self, params: &mut ParamList) {
        let text = self.dims.repr();
        display_dims_and_mode(params, text, self.mode);
    }

    fn examples() -> Vec<GatherParams> {
        vec![GatherParams {
            dims: GatherDims::from_lists(example_lists()),
            slice_sizes: vec![1],
            indices_are_sorted: false,
            unique_indices: false,
            mode: Mode::FillOrDrop,
            fill_value: Some(Scalar::Float(0.5)),
        }]
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let prim = "gather";
        let [x, idx] = operands::<_, 2>(prim, ins)?;
        let (batch_shape, k) = index_parts(prim, x, idx)?;
        let d = &self.dims;
        let shapes: [&[usize]; 2] = [&x.shape, &idx.shape];
        check(
            self.slice_sizes.len() == x.ndim()
                && self
                    .slice_sizes
                    .iter()
                    .zip(&x.shape)
                    .enumerate()
                    .all(|(a, (s, n))| {
                        // A batching dim of size 0 (vmap over no examples) keeps slice size 1.
                        s <= n || (*s <= 1 && d.operand_batching_dims.contains(&a))
                    }),
            prim,
            &shapes,
            format!(
                "slice_sizes {:?} must have one entry per operand axis, each at most the axis size",
                self.slice_sizes
            ),
        )?;
        let window = window_dims(
            prim,
            x,
            idx,
            ("collapsed_slice_dims", &d.collapsed_slice_dims),
            &d.operand_batching_dims,
            &d.start_indices_batching_dims,
            batch_shape,
        )?;
        check_index_map(
            prim,
            x,
            idx,
            &d.start_index_map,
            k,
            &d.operand_batching_dims,
        )?;
        let unit = d
            .collapsed_slice_dims
            .iter()
            .chain(&d.operand_batching_dims)
            .all(|&a| self.slice_sizes.get(a).is_some_and(|&s| s <= 1));
        check(
            unit,
            prim,
            &shapes,
            "slice_sizes of collapsed and batching dims must be 1",
        )?;
        let rank = batch_shape.len().saturating_add(d.offset_dims.len());
        check(
            d.offset_dims.len() == window.len()
                && strictly_sorted(&d.offset_dims)
                && d.offset_dims.iter().all(|&o| o < rank),
            prim,
            &shapes,
            format!(
                "offset_dims {:?} must be sorted output axes, one per window dim {window:?}",
                d.offset_dims
            ),
        )?;
        let mut sizes = window.iter().map(|&w| self.slice_sizes.get(w).copied());
        let mut batch = batch_shape.iter().copied();
        let mut out = Vec::with_capacity(rank);
        for o in 0..rank {
            let next = if d.offset_dims.contains(&o) {
                sizes.next().flatten()
            } else {
                batch.next()
            };
            out.push(
                next.ok_or_else(|| Error::shape(prim, &shapes, "inconsistent dimension numbers"))?,
            );
        }
        Ok(vec![Aval::weak(out, x.dtype, x.weak_type)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let prim = "gather";
        let [x, i] = operands::<_, 2>(prim, args)?;
        let out = single_out(prim, outs)?;
        let buf = super::kernel::gather::gather(self, x, i, &out.shape)?;
        Ok(vec![HostArray::new(out.shape, buf)?])
    }

    /// Linear in the operand; the tangent of a filled window is 0.
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let ([x, i], [tx, _]) = (xs, ts) else {
            return Err(arity_error("gather", 2, xs.len()));
        };
        let z = emit1(b, self.clone(), vec![x.clone(), i.clone()])?;
        let Some(tx) = tx.clone().filter(|_| is_float(b, &z).unwrap_or(false)) else {
            return Ok((vec![z], vec![None]));
        };
        let mut gt = self.clone();
        gt.fill_value = Some(Scalar::Float(0.0));
        let t = emit1(b, gt, vec![tx, i.clone()])?;
        Ok((vec![z], vec![Some(t)]))
    }

    /// Scatter-add of the cotangent into zeros.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let prim = "gather";
        let [x, i] = ops else {
            return Err(arity_error(prim, 2, ops.len()));
        };
        let i = known_indices(prim, i)?;
        let Some(ct) = single(prim, cts)? else {
            return Ok(vec![None, None]);
        };
        if !x.is_linear() {
            return Ok(vec![None, None]);
        }
        let xa = operand_aval(b, x)?;
        let zeros = b.zeros(&Aval::new(xa.shape, xa.dtype))?;
        let r = emit1(b, inverse_scatter_add(self), vec![zeros, i, ct])?;
        Ok(vec![Some(r), None])
    }

    /// A batched operand alone gains a leading window dim of the full batch
    /// size; batched indices alone gain a leading batch dim; both batched
    /// become a pair of batching dims.
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let ([x, i], [dx, di]) = (ins, dims) else {
            return Err(arity_error("gather", 2, ins.len()));
        };
        let mut ng = self.clone();
        ng.dims =
            GatherDims::from_lists(batched_lists(self.dims.lists(), dx.is_some(), di.is_some()));
        let (x, i) = match (dx, di) {
            (None, None) => {
                let out = emit1(b, self.clone(), ins.to_vec())?;
                return Ok((vec![out], vec![None]));
            }
            (Some(_), None) => {
                ng.slice_sizes.insert(0, n);
                (to_front(b, x, *dx, n)?, i.clone())
            }
            (None, Some(_)) => (x.clone(), to_front(b, i, *di, n)?),
            (Some(_), Some(_)) => {
                ng.slice_sizes.insert(0, 1);
                (to_front(b, x, *dx, n)?, to_front(b, i, *di, n)?)
            }
        };
        let out = emit1(b, ng, vec![x, i])?;
        Ok((vec![out], vec![Some(0)]))
    }
}

// ---------------------------------------------------------------------------
// dynamic slices under vmap

/// Per-example start indices of `dynamic_slice` / `dynamic_update_slice`
/// (the operand mapped axis first): one `[n, rank]` index array of the
/// first index's dtype.
pub(crate) fn stacked_starts(
    b: &mut Builder, idx: &[Atom], didx: &[Option<usize>], n: usize,
) -> Result<Atom> {
    let dtype = match idx.first() {
        Some(a) => b.aval(a)?.dtype,
        None => DType::I32,
    };
    let mut cols = Vec::with_capacity(idx.len());
    for (a, d) in idx.iter().zip(didx) {
        let mut a = a.clone();
        if b.aval(&a)?.dtype != dtype {
            a = emit(
                b,
                Primitive::ConvertElementType(ConvertElementType {
                    new_dtype: dtype,
                    weak_type: false,
                }),
                vec![a],
            )?;
        }
        let col = match d {
            Some(_) => emit(
                b,
                Primitive::BroadcastInDim(BroadcastInDim {
                    shape: vec![n, 1],
                    broadcast_dimensions: vec![0],
                }),
                vec![a],
            )?,
            None => emit(
                b,
                Primitive::BroadcastInDim(BroadcastInDim {
                    shape: vec![n, 1],
                    broadcast_dimensions: vec![],
                }),
                vec![a],
            )?,
        };
        cols.push(col);
    }
    if cols.is_empty() {
        return b.zeros(&Aval::new(vec![n, 0], dtype));
    }
    if cols.len() == 1 {
        return cols
            .pop()
            .ok_or_else(|| Error::InvalidArgument("no start index".into()));
    }
    emit(
        b,
        Primitive::Concatenate(Concatenate { dimension: 1 }),
        cols,
    )
}

/// The gather that `dynamic_slice` with per-example starts becomes: operand
/// `[n, ...]`, indices `[n, rank]`, one batching dim pair, clamped starts.
pub(crate) fn dynamic_slice_gather(slice_sizes: &[usize]) -> Primitive {
    let rank = slice_sizes.len();
    let mut sizes = vec![1];
    sizes.extend_from_slice(slice_sizes);
    Primitive::Gather(Box::new(GatherParams {
        dims: GatherDims::from_lists(per_example_lists(rank)),
        slice_sizes: sizes,
        indices_are_sorted: true,
        unique_indices: true,
        mode: Mode::Clip,
        fill_value: None,
    }))
}

/// The scatter that `dynamic_update_slice` with per-example starts becomes.
pub(crate) fn dynamic_update_slice_scatter(rank: usize) -> Primitive {
    Primitive::Scatter(Box::new(ScatterParams {
        op: ScatterOp::Set,
        dims: ScatterDims::from_lists(per_example_lists(rank)),
        indices_are_sorted: true,
        unique_indices: true,
        mode: Mode::Clip,
    }))
}

/// Used by the kernel: whether the mode clamps starts for a gather.
pub(crate) fn gather_clamps(g: &GatherParams) -> bool {
    g.mode.clamps(true)
}
