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
use crate::prims::{Concatenate, ConvertElementType, Iota, Reduce, Reshape, Slice, Transpose};
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
    Ok(b.aval(x)?.dtype.is_float())
}

/// Tangent of `pmax`/`pmin` as `reduce_max`'s: the tangents of the examples
/// holding the extremum, averaged: `psum(t * m) / psum(m)`, `m = (x == z)`.
fn extremum_tangent(
    b: &mut Builder,
    axes: &[String],
    x: &Atom,
    z: &Atom,
    t: &Atom,
) -> Result<Atom> {
    let dtype = b.aval(x)?.dtype;
    let eq = b.add_eqn1(Primitive::Compare(CmpOp::Eq), vec![x.clone(), z.clone()])?;
    let mask = b.add_eqn1(
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: dtype,
            weak_type: false,
        }),
        vec![eq],
    )?;
    let psum = Collective::AllReduce {
        op: AllReduceOp::Sum,
        axes: axes.to_vec(),
    };
    // Two psums: the count is known (primal), the numerator linear, and
    // partial evaluation splits by equation.
    let count = emit1(b, psum.clone(), vec![mask.clone()])?;
    let tm = b.binary(BinaryOp::Mul, t.clone(), mask)?;
    let num = emit1(b, psum, vec![tm])?;
    b.binary(BinaryOp::Div, num, count)
}

// ---------------------------------------------------------------------------
// Batching

type Batched = (Vec<Atom>, Vec<Option<usize>>);

use super::batch::{add_batch_axis, move_axis};

/// `x` with its mapped axis (or a broadcast one) at position 0.
fn batch_front(b: &mut Builder, x: &Atom, d: Option<usize>, n: usize) -> Result<Atom> {
    match d {
        Some(d) => move_axis(b, x.clone(), d, 0),
        None => add_batch_axis(b, x.clone(), n, 0),
    }
}

fn reshape(b: &mut Builder, x: Atom, new_sizes: Vec<usize>) -> Result<Atom> {
    b.add_eqn1(Primitive::Reshape(Reshape { new_sizes }), vec![x])
}

/// `shape` with axes `k` and `k + 1` merged.
fn merge_axes(shape: &[usize], k: usize) -> Result<Vec<usize>> {
    let next = k.saturating_add(1);
    let (Some(&a), Some(&c)) = (shape.get(k), shape.get(next)) else {
        return Err(Error::InvalidArgument(format!(
            "vmap of a collective: cannot merge axes {k} and {next} of shape {shape:?}"
        )));
    };
    let merged = a.checked_mul(c).ok_or_else(|| Error::Overflow {
        what: "vmap of a collective",
        detail: format!("{shape:?}"),
    })?;
    let mut out: Vec<usize> = shape.get(..k).unwrap_or_default().to_vec();
    out.push(merged);
    out.extend_from_slice(shape.get(next.saturating_add(1)..).unwrap_or_default());
    Ok(out)
}

/// `shape` with axis `k` split into `(n, shape[k] / n)`.
fn split_axis(shape: &[usize], k: usize, n: usize) -> Vec<usize> {
    let mut out = shape.to_vec();
    let s = out.get(k).copied().unwrap_or(0);
    if let Some(slot) = out.get_mut(k) {
        *slot = s.checked_div(n).unwrap_or(0);
    }
    out.insert(k, n);
    out
}

fn check_size(c: &Collective, want: usize, n: usize) -> Result<()> {
    if want != n {
        return Err(Error::param(
            c.name(),
            "axis_size",
            format!("{want} does not match the size {n} of the mapped axis"),
        ));
    }
    Ok(())
}

/// `x * n` (psum of a value equal on every example).
fn scale(b: &mut Builder, x: Atom, n: usize) -> Result<Atom> {
    let dtype = b.aval(&x)?.dtype;
    #[allow(clippy::cast_precision_loss)]
    let lit = Builder::lit(dtype, n as f64);
    b.binary(BinaryOp::Mul, x, lit)
}

fn batch_all_reduce(
    b: &mut Builder,
    op: AllReduceOp,
    axes: &[String],
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
    here: Option<&str>,
) -> Result<Batched> {
    let mut outs = Vec::with_capacity(ins.len());
    let mut odims = Vec::with_capacity(ins.len());
    for (x, d) in ins.iter().zip(dims) {
        let (y, yd) = match (here, d) {
            (None, _) => (x.clone(), *d),
            (Some(_), Some(d)) => {
                let rop = match op {
                    AllReduceOp::Sum => ReduceOp::Sum,
                    AllReduceOp::Max => ReduceOp::Max,
                    AllReduceOp::Min => ReduceOp::Min,
                };
                let r = b.add_eqn1(
                    Primitive::Reduce(Reduce {
                        op: rop,
                        axes: vec![*d],
                    }),
                    vec![x.clone()],
                )?;
                (r, None)
            }
            (Some(_), None) => match op {
                AllReduceOp::Sum => (scale(b, x.clone(), n)?, None),
                AllReduceOp::Max | AllReduceOp::Min => (x.clone(), None),
            },
        };
        outs.push(y);
        odims.push(yd);
    }
    let rest: Vec<String> = axes
        .iter()
        .filter(|a| Some(a.as_str()) != here)
        .cloned()
        .collect();
    if !rest.is_empty() {
        outs = emit(b, Collective::AllReduce { op, axes: rest }, outs)?;
    }
    Ok((outs, odims))
}

/// A collective over an outer axis: bound again on the batched operand.
fn batch_other_axis(
    c: &Collective,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let shifted = match c {
        Collective::AllGather {
            axis_name,
            all_gather_dimension,
            axis_size,
            tiled,
        } => Collective::AllGather {
            axis_name: axis_name.clone(),
            all_gather_dimension: all_gather_dimension.saturating_add(1),
            axis_size: *axis_size,
            tiled: *tiled,
        },
        Collective::ReduceScatter {
            axis_name,
            scatter_dimension,
            axis_size,
            tiled,
        } => Collective::ReduceScatter {
            axis_name: axis_name.clone(),
            scatter_dimension: scatter_dimension.saturating_add(1),
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
            split_axis: split_axis.saturating_add(1),
            concat_axis: concat_axis.saturating_add(1),
            axis_size: *axis_size,
        },
        // Elementwise over examples, or no operands: the batch dim stays.
        Collective::Ppermute { .. }
        | Collective::AllReduce { .. }
        | Collective::AxisIndex { .. } => {
            let outs = emit(b, c.clone(), ins.to_vec())?;
            let odims = if ins.is_empty() {
                vec![None; outs.len()]
            } else {
                dims.to_vec()
            };
            return Ok((outs, odims));
        }
    };
    let x = one(c.name(), ins)?;
    let d = *one(c.name(), dims)?;
    let x0 = batch_front(b, x, d, n)?;
    Ok((vec![emit1(b, shifted, vec![x0])?], vec![Some(0)]))
}

/// `all_to_all` over the mapped axis of `x` (mapped axis in front): example
/// `j` of the result concatenates, along `concat`, block `j` (of `split`) of
/// every example `k` in order.
fn all_to_all_mapped(
    b: &mut Builder,
    x: Atom,
    split: usize,
    concat: usize,
    n: usize,
) -> Result<Atom> {
    let shape = b.aval(&x)?.shape;
    let rank = shape.len().saturating_sub(1);
    // Axes of `x` split: [k, ..., j, m, ...] with (j, m) at split + 1.
    let split_shape = split_axis(&shape, split.saturating_add(1), n);
    let y = reshape(b, x, split_shape.clone())?;
    // Position in `y` of per-example axis i (its block part m for the split axis).
    let pos = |i: usize| -> usize {
        if i < split {
            i.saturating_add(1)
        } else if i == split {
            split.saturating_add(2)
        } else {
            i.saturating_add(2)
        }
    };
    let mut perm = vec![split.saturating_add(1)];
    for i in 0..rank {
        if i == concat {
            perm.push(0);
        }
        perm.push(pos(i));
    }
    let moved = b.add_eqn1(
        Primitive::Transpose(Transpose {
            permutation: perm.clone(),
        }),
        vec![y],
    )?;
    let moved_shape: Vec<usize> = perm
        .iter()
        .map(|&p| split_shape.get(p).copied().unwrap_or(0))
        .collect();
    let out_shape = merge_axes(&moved_shape, concat.saturating_add(1))?;
    reshape(b, moved, out_shape)
}

/// `ppermute` over the mapped axis of `x` (in front): example `dst` takes
/// example `src`'s value, zeros where no pair sends.
fn ppermute_mapped(b: &mut Builder, x: Atom, perm: &[(usize, usize)], n: usize) -> Result<Atom> {
    let aval = b.aval(&x)?;
    let mut row_shape = aval.shape.clone();
    if let Some(first) = row_shape.first_mut() {
        *first = 1;
    }
    let mut rows = Vec::with_capacity(n);
    for dst in 0..n {
        let row = match perm.iter().find(|p| p.1 == dst) {
            Some(&(src, _)) if src < n => {
                let mut start = vec![0; aval.ndim()];
                let mut limit = aval.shape.clone();
                if let (Some(s), Some(l)) = (start.first_mut(), limit.first_mut()) {
                    *s = src;
                    *l = src.saturating_add(1);
                }
                b.add_eqn1(
                    Primitive::Slice(Slice {
                        start_indices: start,
                        limit_indices: limit,
                        strides: None,
                    }),
                    vec![x.clone()],
                )?
            }
            _ => b.zeros(&Aval::new(row_shape.clone(), aval.dtype))?,
        };
        rows.push(row);
    }
    if rows.is_empty() {
        return Ok(x);
    }
    b.add_eqn1(Primitive::Concatenate(Concatenate { dimension: 0 }), rows)
}

/// `psum`/`pmax`/`pmin` avals: the operands' (of a numeric, or for
/// `pmax`/`pmin` bool, dtype).
fn all_reduce_avals(prim: &'static str, op: AllReduceOp, ins: &[Aval]) -> Result<Vec<Aval>> {
    for a in ins {
        let ok = match op {
            AllReduceOp::Sum => a.dtype.is_numeric(),
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
    prim: &'static str,
    ins: &[Aval],
    d: usize,
    n: usize,
    tiled: bool,
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
    prim: &'static str,
    ins: &[Aval],
    d: usize,
    n: usize,
    tiled: bool,
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
    prim: &'static str,
    ins: &[Aval],
    split_axis: usize,
    concat_axis: usize,
    n: usize,
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

/// vmap of `c` (not `psum`-like, not `axis_index`) over the axis it names:
/// the collective becomes array code over the batch dim. Returns the
/// result and its batch dim.
fn batch_over_axis(
    c: &Collective,
    b: &mut Builder,
    x: Atom,
    d: Option<usize>,
    n: usize,
) -> Result<(Atom, Option<usize>)> {
    Ok(match c {
        Collective::AllGather {
            all_gather_dimension: g,
            axis_size,
            tiled,
            ..
        } => {
            check_size(c, *axis_size, n)?;
            all_gather_mapped(b, x, d, n, *g, *tiled)?
        }
        Collective::ReduceScatter {
            scatter_dimension: s,
            axis_size,
            tiled,
            ..
        } => {
            check_size(c, *axis_size, n)?;
            reduce_scatter_mapped(b, x, d, n, *s, *tiled)?
        }
        Collective::AllToAll {
            split_axis: a,
            concat_axis: k,
            axis_size,
            ..
        } => {
            check_size(c, *axis_size, n)?;
            let x0 = batch_front(b, &x, d, n)?;
            (all_to_all_mapped(b, x0, *a, *k, n)?, Some(0))
        }
        Collective::Ppermute { perm, .. } => {
            let x0 = batch_front(b, &x, d, n)?;
            (ppermute_mapped(b, x0, perm, n)?, Some(0))
        }
        Collective::AllReduce { .. } | Collective::AxisIndex { .. } => {
            return Err(Error::InvalidArgument(format!(
                "vmap of {}: handled above",
                c.name()
            )))
        }
    })
}

/// `all_gather` along dim `g` over the batch dim `d` of `x`: every example
/// sees the same stack, an unbatched result.
fn all_gather_mapped(
    b: &mut Builder,
    x: Atom,
    d: Option<usize>,
    n: usize,
    g: usize,
    tiled: bool,
) -> Result<(Atom, Option<usize>)> {
    let stacked = match d {
        Some(d) => move_axis(b, x, d, g)?,
        None => add_batch_axis(b, x, n, g)?,
    };
    if tiled {
        let shape = merge_axes(&b.aval(&stacked)?.shape, g)?;
        Ok((reshape(b, stacked, shape)?, None))
    } else {
        Ok((stacked, None))
    }
}

/// `reduce_scatter` along dim `s` over the batch dim `d` of `x`: the sum
/// over the batch, whose block `j` of the scatter dimension belongs to
/// example `j`.
fn reduce_scatter_mapped(
    b: &mut Builder,
    x: Atom,
    d: Option<usize>,
    n: usize,
    s: usize,
    tiled: bool,
) -> Result<(Atom, Option<usize>)> {
    let total = match d {
        Some(d) => b.add_eqn1(
            Primitive::Reduce(Reduce {
                op: ReduceOp::Sum,
                axes: vec![d],
            }),
            vec![x],
        )?,
        None => scale(b, x, n)?,
    };
    if tiled {
        let shape = split_axis(&b.aval(&total)?.shape, s, n);
        Ok((reshape(b, total, shape)?, Some(s)))
    } else {
        Ok((total, Some(s)))
    }
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
        &self,
        _ctx: &ExecCtx,
        _args: &[&HostArray],
        _outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        Err(unbound(self))
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let c = self;
        if xs.len() != ts.len() {
            return Err(Error::Arity {
                prim: c.name(),
                expected: xs.len(),
                got: ts.len(),
            });
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
                        Some(t) if is_float(b, x)? => Some(extremum_tangent(b, axes, x, z, t)?),
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
            return Err(Error::Arity {
                prim: c.name(),
                expected: ins.len(),
                got: dims.len(),
            });
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
