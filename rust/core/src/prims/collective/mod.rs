//! Named-axis collectives: `psum`, `pmax`, `pmin`, `all_gather`,
//! `reduce_scatter` (`lax.psum_scatter`), `all_to_all`, `axis_index` and
//! `ppermute`, with JAX's names and params.
//!
//! Avals are per example (per device): `psum(x, 'i')` has `x`'s aval. The
//! primitives that change shapes carry the size of their axis
//! (`axis_size`), since abstract evaluation has no axis environment.
//! Outside a map binding the axis they cannot run: the kernel reports
//! [`Error::UnboundAxis`] (Python's `NameError`). Under `vmap` over the named
//! axis the batch rule turns each into ordinary array code over the batch
//! dim (a reduction, a transpose, an iota...); a collective naming another
//! (outer) axis keeps the batch dim and is bound again for the outer map.
//!
//! Differentiation follows JAX: `psum`, `all_gather`, `reduce_scatter`,
//! `all_to_all` and `ppermute` are linear; the transpose of `psum` is `psum`
//! over the same axes, `all_gather` and `reduce_scatter` transpose to each
//! other, `all_to_all` to the one with split and concat axes swapped,
//! `ppermute` to the inverse permutation. `pmax`/`pmin` differentiate like
//! `reduce_max` (the tangent averaged over the maximal examples);
//! `axis_index` has an integer output and no tangent.

use super::family::{emit, emit1, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::params::{Lookup, Param, ParamList};
use super::{BinaryOp, CmpOp, Primitive, ReduceOp};
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Effect};
use crate::prims::{Concatenate, ConvertElementType, Iota, Reshape, Slice, Transpose};
use crate::DType;

/// The reduction of `psum` / `pmax` / `pmin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AllReduceOp {
    Sum,
    Max,
    Min,
}

/// A collective over named axes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Collective {
    /// `psum` / `pmax` / `pmin` of each operand over `axes` (multiple
    /// operands and results, as JAX's).
    AllReduce { op: AllReduceOp, axes: Vec<String> },
    /// Stacks (or, `tiled`, concatenates) the operand of every example along
    /// `all_gather_dimension`.
    AllGather {
        axis_name: String,
        all_gather_dimension: usize,
        axis_size: usize,
        tiled: bool,
    },
    /// `psum_scatter`: sums over the axis, then example `j` keeps block `j`
    /// of `scatter_dimension` (one index, or `tiled` a block of
    /// `size / axis_size`).
    ReduceScatter {
        axis_name: String,
        scatter_dimension: usize,
        axis_size: usize,
        tiled: bool,
    },
    /// Example `j` receives block `j` (of `split_axis`) of every example,
    /// concatenated along `concat_axis` in example order.
    AllToAll {
        axis_name: String,
        split_axis: usize,
        concat_axis: usize,
        axis_size: usize,
    },
    /// The index of the example along the axis (`int32[]`).
    AxisIndex { axis_name: String },
    /// Example `dst` receives the operand of example `src` for each
    /// `(src, dst)` pair; examples no pair names receive zeros.
    Ppermute {
        axis_name: String,
        perm: Vec<(usize, usize)>,
    },
}

impl Collective {
    /// The axis names the collective reduces or exchanges over.
    pub fn axis_names(&self) -> Vec<&str> {
        match self {
            Collective::AllReduce { axes, .. } => axes.iter().map(String::as_str).collect(),
            Collective::AllGather { axis_name, .. }
            | Collective::ReduceScatter { axis_name, .. }
            | Collective::AllToAll { axis_name, .. }
            | Collective::AxisIndex { axis_name }
            | Collective::Ppermute { axis_name, .. } => vec![axis_name.as_str()],
        }
    }
}

fn unbound(c: &Collective) -> Error {
    Error::UnboundAxis {
        prim: c.name(),
        axis: c.axis_names().join(", "),
    }
}

/// Whether `p` names axis `name`, itself or in a sub-jaxpr (a `pjit` whose
/// body calls `axis_index('i')` must be batched even with no batched operand).
pub fn mentions_axis(p: &Primitive, name: &str) -> bool {
    if let Primitive::Collective(c) = p {
        return c.axis_names().contains(&name);
    }
    p.params().iter().any(|(_, v)| param_mentions(v, name))
}

/// Every axis name the collectives of `j` (and its sub-jaxprs) use, sorted.
pub fn axis_names_of(j: &crate::ir::ClosedJaxpr) -> Vec<String> {
    let mut out = Vec::new();
    collect_names(j, &mut out);
    out.sort();
    out.dedup();
    out
}

fn collect_names(j: &crate::ir::ClosedJaxpr, out: &mut Vec<String>) {
    for e in &j.jaxpr.eqns {
        if let Primitive::Collective(c) = &e.prim {
            out.extend(c.axis_names().into_iter().map(str::to_string));
        }
        for (_, v) in e.prim.params() {
            collect_param_names(&v, out);
        }
    }
}

fn collect_param_names(p: &Param, out: &mut Vec<String>) {
    match p {
        Param::Jaxpr(j) => collect_names(j, out),
        Param::Tuple(items) => items.iter().for_each(|x| collect_param_names(x, out)),
        _ => {}
    }
}

fn param_mentions(p: &Param, name: &str) -> bool {
    match p {
        Param::Jaxpr(j) => j.jaxpr.eqns.iter().any(|e| mentions_axis(&e.prim, name)),
        Param::Tuple(items) => items.iter().any(|x| param_mentions(x, name)),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Shapes

fn one<'a, T>(prim: &'static str, xs: &'a [T]) -> Result<&'a T> {
    match xs {
        [x] => Ok(x),
        _ => Err(Error::Arity {
            prim,
            expected: 1,
            got: xs.len(),
        }),
    }
}

fn dim_of(prim: &'static str, shape: &[usize], d: usize, what: &str) -> Result<usize> {
    shape.get(d).copied().ok_or_else(|| {
        Error::shape(
            prim,
            &[shape],
            format!(
                "{what} {d} is out of range for a rank-{} operand",
                shape.len()
            ),
        )
    })
}

/// `s / n` when `n` divides `s` (and is not 0).
fn exact_div(s: usize, n: usize) -> Option<usize> {
    (s.checked_rem(n) == Some(0))
        .then(|| s.checked_div(n))
        .flatten()
}

// ---------------------------------------------------------------------------
// Params

/// The params of one collective being rebuilt.
struct Args<'a> {
    prim: &'static str,
    params: &'a [(String, Param)],
}

impl Args<'_> {
    fn get(&self, key: &'static str) -> Option<&Param> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn bad(&self, key: &'static str, want: &str) -> Error {
        Error::param(
            self.prim,
            key,
            format!("expected {want}, got {:?}", self.get(key)),
        )
    }

    fn usize(&self, key: &'static str) -> Result<usize> {
        match self.get(key) {
            Some(Param::Int(i)) => usize::try_from(*i).map_err(|_| self.bad(key, "an int >= 0")),
            _ => Err(self.bad(key, "an int >= 0")),
        }
    }

    fn flag(&self, key: &'static str) -> Result<bool> {
        match self.get(key) {
            None | Some(Param::None) => Ok(false),
            Some(Param::Bool(b)) => Ok(*b),
            _ => Err(self.bad(key, "a bool")),
        }
    }

    fn groups_absent(&self) -> Result<()> {
        match self.get("axis_index_groups") {
            None | Some(Param::None) => Ok(()),
            Some(_) => Err(Error::Unsupported(format!(
                "{}: axis_index_groups is not supported",
                self.prim
            ))),
        }
    }

    /// Axis names: a string or a tuple of strings.
    fn names(&self, key: &'static str) -> Result<Vec<String>> {
        match self.get(key) {
            Some(Param::Str(s)) => Ok(vec![s.clone()]),
            Some(Param::Tuple(items)) => items
                .iter()
                .map(|x| match x {
                    Param::Str(s) => Ok(s.clone()),
                    _ => Err(self.bad(key, "axis names (strings)")),
                })
                .collect(),
            _ => Err(self.bad(key, "an axis name or a tuple of axis names")),
        }
    }

    /// Exactly one axis name (a string or a one-element tuple).
    fn name(&self, key: &'static str) -> Result<String> {
        let mut v = self.names(key)?;
        match (v.pop(), v.is_empty()) {
            (Some(s), true) => Ok(s),
            _ => Err(Error::Unsupported(format!(
                "{}: exactly one axis name is supported, got {:?}",
                self.prim,
                self.get(key)
            ))),
        }
    }

    fn perm(&self, key: &'static str) -> Result<Vec<(usize, usize)>> {
        let pair = |v: &[i64]| -> Result<(usize, usize)> {
            match v {
                [s, d] => Ok((
                    usize::try_from(*s).map_err(|_| self.bad(key, "(src, dst) pairs"))?,
                    usize::try_from(*d).map_err(|_| self.bad(key, "(src, dst) pairs"))?,
                )),
                _ => Err(self.bad(key, "(src, dst) pairs")),
            }
        };
        match self.get(key) {
            Some(Param::Tuple(items)) => items
                .iter()
                .map(|x| match x {
                    Param::Ints(v) => pair(v),
                    _ => Err(self.bad(key, "(src, dst) pairs")),
                })
                .collect(),
            Some(Param::Ints(v)) if v.is_empty() => Ok(Vec::new()),
            _ => Err(self.bad(key, "(src, dst) pairs")),
        }
    }
}

// ---------------------------------------------------------------------------
// JVP and transpose

fn is_float(b: &Builder, x: &Atom) -> Result<bool> {
    Ok(b.aval(x)?.dtype.is_inexact())
}

/// Tangent of `pmax`/`pmin` (over the examples of a named axis or over
/// processes) as `reduce_max`'s: the tangents of those holding the
/// extremum `z` of `x`, averaged: `sum(t * m) / sum(m)`, `m = (x == z)`,
/// with the family's sum across the same group. Two sums: the count is
/// known (primal), the numerator linear, and partial evaluation splits
/// them by equation (`count_sum` and `tangent_sum` may differ in a label).
pub(crate) fn extremum_tangent<F: Family>(
    b: &mut Builder, x: &Atom, z: &Atom, t: &Atom, count_sum: F, tangent_sum: F,
) -> Result<Atom>
where
    Primitive: From<F>,
{
    let dtype = b.aval(x)?.dtype;
    let eq = b.add_eqn1(Primitive::Compare(CmpOp::Eq), vec![x.clone(), z.clone()])?;
    let mask = b.add_eqn1(
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: dtype,
            weak_type: false,
        }),
        vec![eq],
    )?;
    let count = emit1(b, count_sum, vec![mask.clone()])?;
    let tm = b.binary(BinaryOp::Mul, t.clone(), mask)?;
    let num = emit1(b, tangent_sum, vec![tm])?;
    b.binary(BinaryOp::Div, num, count)
}

// ---------------------------------------------------------------------------
// Batching

type Batched = (Vec<Atom>, Vec<Option<usize>>);

use super::batch::{add_batch_axis, move_axis};

mod batching;
use batching::*;

/// `psum`/`pmax`/`pmin` avals: the operands' (of a numeric, or for
/// `pmax`/`pmin` bool, dtype).
fn all_reduce_avals(prim: &'static str, op: AllReduceOp, ins: &[Aval]) -> Result<Vec<Aval>> {
    for a in ins {
        let ok = match op {
            AllReduceOp::Sum => a.dtype.is_numeric() || a.dtype.is_complex(),
            AllReduceOp::Max | AllReduceOp::Min => a.dtype.is_numeric() || a.dtype == DType::Bool,
        };
        if !ok {
            return Err(Error::dtype(prim, &[a.dtype], "expected numeric operands"));
        }
    }
    Ok(ins.to_vec())
}

/// `all_gather` aval: the gathered axis of size `n` inserted at `d`, or
/// (`tiled`) axis `d` grown `n` times.
fn all_gather_aval(
    prim: &'static str, ins: &[Aval], d: usize, n: usize, tiled: bool,
) -> Result<Vec<Aval>> {
    let x = one(prim, ins)?;
    let mut shape = x.shape.clone();
    if tiled {
        let s = dim_of(prim, &x.shape, d, "all_gather_dimension")?;
        let grown = s.checked_mul(n).ok_or_else(|| Error::Overflow {
            what: "all_gather",
            detail: format!("{s} * {n}"),
        })?;
        if let Some(slot) = shape.get_mut(d) {
            *slot = grown;
        }
    } else {
        if d > shape.len() {
            return Err(Error::shape(
                prim,
                &[&x.shape],
                format!("all_gather_dimension {d} is out of range"),
            ));
        }
        shape.insert(d, n);
    }
    Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
}

/// `reduce_scatter` aval: axis `d` (of size `n`) removed, or (`tiled`)
/// divided by `n`.
fn reduce_scatter_aval(
    prim: &'static str, ins: &[Aval], d: usize, n: usize, tiled: bool,
) -> Result<Vec<Aval>> {
    let x = one(prim, ins)?;
    if !x.dtype.is_numeric() {
        return Err(Error::dtype(prim, &[x.dtype], "expected a numeric operand"));
    }
    let s = dim_of(prim, &x.shape, d, "scatter_dimension")?;
    let mut shape = x.shape.clone();
    if tiled {
        let Some(q) = exact_div(s, n) else {
            return Err(Error::shape(
                prim,
                &[&x.shape],
                format!("scatter dimension size {s} must be a multiple of the axis size {n}"),
            ));
        };
        if let Some(slot) = shape.get_mut(d) {
            *slot = q;
        }
    } else {
        if s != n {
            return Err(Error::shape(
                prim,
                &[&x.shape],
                format!("scatter dimension size {s} must equal the axis size {n}"),
            ));
        }
        shape.remove(d);
    }
    Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
}

/// `all_to_all` aval: `split_axis` divided by `n`, `concat_axis` grown `n`
/// times.
fn all_to_all_aval(
    prim: &'static str, ins: &[Aval], split_axis: usize, concat_axis: usize, n: usize,
) -> Result<Vec<Aval>> {
    let x = one(prim, ins)?;
    let s = dim_of(prim, &x.shape, split_axis, "split_axis")?;
    dim_of(prim, &x.shape, concat_axis, "concat_axis")?;
    let Some(q) = exact_div(s, n) else {
        return Err(Error::shape(
            prim,
            &[&x.shape],
            format!("split axis size {s} must be a multiple of the axis size {n}"),
        ));
    };
    let mut shape = x.shape.clone();
    if let Some(slot) = shape.get_mut(split_axis) {
        *slot = q;
    }
    if let Some(slot) = shape.get_mut(concat_axis) {
        *slot = slot.checked_mul(n).ok_or_else(|| Error::Overflow {
            what: "all_to_all",
            detail: format!("concat axis times {n}"),
        })?;
    }
    Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
}

/// `ppermute` aval: the operand's; sources and destinations must be unique.
fn ppermute_aval(prim: &'static str, ins: &[Aval], perm: &[(usize, usize)]) -> Result<Vec<Aval>> {
    let x = one(prim, ins)?;
    let mut srcs: Vec<usize> = perm.iter().map(|p| p.0).collect();
    let mut dsts: Vec<usize> = perm.iter().map(|p| p.1).collect();
    srcs.sort_unstable();
    dsts.sort_unstable();
    srcs.dedup();
    dsts.dedup();
    if srcs.len() != perm.len() || dsts.len() != perm.len() {
        return Err(Error::param(
            prim,
            "perm",
            format!("sources and destinations must be unique, got {perm:?}"),
        ));
    }
    Ok(vec![x.clone()])
}

impl Family for Collective {
    const NAMES: &'static [&'static str] = &[
        "psum",
        "pmax",
        "pmin",
        "all_gather",
        "reduce_scatter",
        "all_to_all",
        "axis_index",
        "ppermute",
    ];

    fn name(&self) -> &'static str {
        match self {
            Collective::AllReduce { op, .. } => match op {
                AllReduceOp::Sum => "psum",
                AllReduceOp::Max => "pmax",
                AllReduceOp::Min => "pmin",
            },
            Collective::AllGather { .. } => "all_gather",
            Collective::ReduceScatter { .. } => "reduce_scatter",
            Collective::AllToAll { .. } => "all_to_all",
            Collective::AxisIndex { .. } => "axis_index",
            Collective::Ppermute { .. } => "ppermute",
        }
    }

    /// `psum`/`pmax`/`pmin` take and return any number of operands.
    fn multiple_results(&self) -> bool {
        matches!(self, Collective::AllReduce { .. })
    }

    fn effect(&self) -> Effect {
        Effect::None
    }

    /// Params as JAX shows them.
    fn params(&self) -> ParamList {
        let int = |n: usize| Param::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let names = |v: &[String]| Param::Tuple(v.iter().map(|s| Param::Str(s.clone())).collect());
        match self {
            Collective::AllReduce { axes, .. } => {
                vec![("axes", names(axes)), ("axis_index_groups", Param::None)]
            }
            Collective::AllGather {
                axis_name,
                all_gather_dimension,
                axis_size,
                tiled,
            } => vec![
                ("all_gather_dimension", int(*all_gather_dimension)),
                ("axis_name", Param::Str(axis_name.clone())),
                ("axis_index_groups", Param::None),
                ("axis_size", int(*axis_size)),
                ("tiled", Param::Bool(*tiled)),
            ],
            Collective::ReduceScatter {
                axis_name,
                scatter_dimension,
                axis_size,
                tiled,
            } => vec![
                ("scatter_dimension", int(*scatter_dimension)),
                ("axis_name", Param::Str(axis_name.clone())),
                ("axis_index_groups", Param::None),
                ("axis_size", int(*axis_size)),
                ("tiled", Param::Bool(*tiled)),
            ],
            Collective::AllToAll {
                axis_name,
                split_axis,
                concat_axis,
                axis_size,
            } => vec![
                ("split_axis", int(*split_axis)),
                ("concat_axis", int(*concat_axis)),
                ("axis_name", Param::Str(axis_name.clone())),
                ("axis_index_groups", Param::None),
                ("axis_size", int(*axis_size)),
            ],
            Collective::AxisIndex { axis_name } => {
                vec![("axis_name", Param::Str(axis_name.clone()))]
            }
            Collective::Ppermute { axis_name, perm } => vec![
                ("axis_name", Param::Str(axis_name.clone())),
                (
                    "perm",
                    Param::Tuple(
                        perm.iter()
                            .map(|&(s, d)| {
                                Param::Ints(vec![
                                    i64::try_from(s).unwrap_or(i64::MAX),
                                    i64::try_from(d).unwrap_or(i64::MAX),
                                ])
                            })
                            .collect(),
                    ),
                ),
            ],
        }
    }

    /// The collective named `name` with these params; `None` when `name` is
    /// not a collective.
    fn from_params(name: &str, params: &Lookup<'_>) -> Result<Option<Collective>> {
        let params = params.list();
        let Some(prim) = Self::NAMES.iter().copied().find(|n| *n == name) else {
            return Ok(None);
        };
        let a = Args { prim, params };
        let reduce = |op| -> Result<Collective> {
            a.groups_absent()?;
            Ok(Collective::AllReduce {
                op,
                axes: a.names("axes")?,
            })
        };
        Ok(Some(match prim {
            "psum" => reduce(AllReduceOp::Sum)?,
            "pmax" => reduce(AllReduceOp::Max)?,
            "pmin" => reduce(AllReduceOp::Min)?,
            "all_gather" => {
                a.groups_absent()?;
                Collective::AllGather {
                    axis_name: a.name("axis_name")?,
                    all_gather_dimension: a.usize("all_gather_dimension")?,
                    axis_size: a.usize("axis_size")?,
                    tiled: a.flag("tiled")?,
                }
            }
            "reduce_scatter" => {
                a.groups_absent()?;
                Collective::ReduceScatter {
                    axis_name: a.name("axis_name")?,
                    scatter_dimension: a.usize("scatter_dimension")?,
                    axis_size: a.usize("axis_size")?,
                    tiled: a.flag("tiled")?,
                }
            }
            "all_to_all" => {
                a.groups_absent()?;
                Collective::AllToAll {
                    axis_name: a.name("axis_name")?,
                    split_axis: a.usize("split_axis")?,
                    concat_axis: a.usize("concat_axis")?,
                    axis_size: a.usize("axis_size")?,
                }
            }
            "axis_index" => Collective::AxisIndex {
                axis_name: a.name("axis_name")?,
            },
            _ => Collective::Ppermute {
                axis_name: a.name("axis_name")?,
                perm: a.perm("perm")?,
            },
        }))
    }

    fn display_params(&self, _params: &mut ParamList) {}

    /// One instance of each primitive, for rule listings.
    fn examples() -> Vec<Collective> {
        let i = || "i".to_string();
        let mut out: Vec<Collective> = [AllReduceOp::Sum, AllReduceOp::Max, AllReduceOp::Min]
            .into_iter()
            .map(|op| Collective::AllReduce {
                op,
                axes: vec![i()],
            })
            .collect();
        out.extend([
            Collective::AllGather {
                axis_name: i(),
                all_gather_dimension: 0,
                axis_size: 2,
                tiled: false,
            },
            Collective::ReduceScatter {
                axis_name: i(),
                scatter_dimension: 0,
                axis_size: 2,
                tiled: false,
            },
            Collective::AllToAll {
                axis_name: i(),
                split_axis: 0,
                concat_axis: 0,
                axis_size: 2,
            },
            Collective::AxisIndex { axis_name: i() },
            Collective::Ppermute {
                axis_name: i(),
                perm: vec![(0, 1), (1, 0)],
            },
        ]);
        out
    }

    /// Output avals (per example).
    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let prim = self.name();
        match self {
            Collective::AllReduce { op, .. } => all_reduce_avals(prim, *op, ins),
            Collective::AllGather {
                all_gather_dimension: d,
                axis_size: n,
                tiled,
                ..
            } => all_gather_aval(prim, ins, *d, *n, *tiled),
            Collective::ReduceScatter {
                scatter_dimension: d,
                axis_size: n,
                tiled,
                ..
            } => reduce_scatter_aval(prim, ins, *d, *n, *tiled),
            Collective::AllToAll {
                split_axis,
                concat_axis,
                axis_size: n,
                ..
            } => all_to_all_aval(prim, ins, *split_axis, *concat_axis, *n),
            Collective::AxisIndex { .. } => {
                if !ins.is_empty() {
                    return Err(Error::Arity {
                        prim,
                        expected: 0,
                        got: ins.len(),
                    });
                }
                Ok(vec![Aval::new(Vec::new(), DType::I32)])
            }
            Collective::Ppermute { perm, .. } => ppermute_aval(prim, ins, perm),
        }
    }

    /// Evaluation outside any map: the axis is unbound.
    fn kernel(
        &self, _ctx: &ExecCtx, _args: &[&HostArray], _outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        Err(unbound(self))
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let c = self;
        if xs.len() != ts.len() {
            return Err(Error::arity(c.name(), xs.len(), ts.len()));
        }
        let outs = emit(b, c.clone(), xs.to_vec())?;
        let tangents = match c {
            Collective::AxisIndex { .. } => vec![None],
            Collective::AllReduce {
                op: AllReduceOp::Sum,
                ..
            } => {
                // One psum of the present float tangents.
                let mut keep = Vec::new();
                for (x, t) in xs.iter().zip(ts) {
                    keep.push(match t {
                        Some(t) if is_float(b, x)? => Some(t.clone()),
                        _ => None,
                    });
                }
                let present: Vec<Atom> = keep.iter().flatten().cloned().collect();
                let mut summed = emit(b, c.clone(), present)?.into_iter();
                keep.iter()
                    .map(|t| t.as_ref().and_then(|_| summed.next()))
                    .collect()
            }
            Collective::AllReduce { axes, .. } => {
                let mut out = Vec::with_capacity(xs.len());
                for ((x, t), z) in xs.iter().zip(ts).zip(&outs) {
                    out.push(match t {
                        Some(t) if is_float(b, x)? => {
                            let psum = Collective::AllReduce {
                                op: AllReduceOp::Sum,
                                axes: axes.to_vec(),
                            };
                            Some(extremum_tangent(b, x, z, t, psum.clone(), psum)?)
                        }
                        _ => None,
                    });
                }
                out
            }
            _ => {
                let (x, t) = (one(c.name(), xs)?, one(c.name(), ts)?);
                match t {
                    Some(t) if is_float(b, x)? => vec![Some(emit1(b, c.clone(), vec![t.clone()])?)],
                    _ => vec![None],
                }
            }
        };
        Ok((outs, tangents))
    }

    /// Transpose rule (linear collectives only).
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let c = self;
        let t = match c {
            Collective::AllReduce {
                op: AllReduceOp::Sum,
                ..
            } => {
                let present: Vec<Atom> = cts
                    .iter()
                    .zip(ops)
                    .filter(|(_, o)| o.is_linear())
                    .filter_map(|(ct, _)| ct.clone())
                    .collect();
                let mut summed = emit(b, c.clone(), present)?.into_iter();
                return Ok(cts
                    .iter()
                    .zip(ops)
                    .map(|(ct, o)| match (ct, o.is_linear()) {
                        (Some(_), true) => summed.next(),
                        _ => None,
                    })
                    .collect());
            }
            Collective::AllGather {
                axis_name,
                all_gather_dimension,
                axis_size,
                tiled,
            } => Collective::ReduceScatter {
                axis_name: axis_name.clone(),
                scatter_dimension: *all_gather_dimension,
                axis_size: *axis_size,
                tiled: *tiled,
            },
            Collective::ReduceScatter {
                axis_name,
                scatter_dimension,
                axis_size,
                tiled,
            } => Collective::AllGather {
                axis_name: axis_name.clone(),
                all_gather_dimension: *scatter_dimension,
                axis_size: *axis_size,
                tiled: *tiled,
            },
            Collective::AllToAll {
                axis_name,
                split_axis,
                concat_axis,
                axis_size,
            } => Collective::AllToAll {
                axis_name: axis_name.clone(),
                split_axis: *concat_axis,
                concat_axis: *split_axis,
                axis_size: *axis_size,
            },
            Collective::Ppermute { axis_name, perm } => Collective::Ppermute {
                axis_name: axis_name.clone(),
                perm: perm.iter().map(|&(s, d)| (d, s)).collect(),
            },
            Collective::AllReduce { .. } | Collective::AxisIndex { .. } => {
                return Err(Error::Typecheck(format!(
                    "cannot transpose {}: it is not linear",
                    c.name()
                )))
            }
        };
        let ct = one(c.name(), cts)?;
        Ok(vec![match ct {
            Some(ct) => Some(emit1(b, t, vec![ct.clone()])?),
            None => None,
        }])
    }

    /// Batching rule. The axis being batched is the one the enclosing
    /// `batch_jaxpr` call names (`None` for an unnamed vmap): a collective
    /// over it becomes array code over the batch dim; over any other axis the
    /// collective is bound again with the batch dim kept (moved to the front
    /// where its params count axes).
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let c = self;
        let axis = crate::transforms::batch::current_axis_name();
        let axis = axis.as_deref();
        if ins.len() != dims.len() {
            return Err(Error::arity(c.name(), ins.len(), dims.len()));
        }
        let here = axis.filter(|a| c.axis_names().contains(a));
        if let Collective::AllReduce { op, axes } = c {
            return batch_all_reduce(b, *op, axes, ins, dims, n, here);
        }
        if here.is_none() {
            return batch_other_axis(c, b, ins, dims, n);
        }
        if let Collective::AxisIndex { .. } = c {
            let iota = b.add_eqn1(
                Primitive::Iota(Iota {
                    dtype: DType::I32,
                    shape: vec![n],
                    dimension: 0,
                }),
                Vec::new(),
            )?;
            return Ok((vec![iota], vec![Some(0)]));
        }
        let x = one(c.name(), ins)?.clone();
        let d = *one(c.name(), dims)?;
        let (y, yd) = batch_over_axis(c, b, x, d, n)?;
        Ok((vec![y], vec![yd]))
    }
}
