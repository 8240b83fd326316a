//! Collectives between processes: `process_allreduce[op, comm]`,
//! `process_allgather[comm, processes]` and `process_broadcast[comm, root]`.
//!
//! Each runs one MPI collective over the communicator the host program
//! registered as `comm` ([`crate::exec::mpi`]): the processes of a
//! multi-process run combine their values of the operand. A multi-process
//! `shard_map` binds them after the collective over its own devices, for the
//! mesh axes whose devices lie in several processes.
//!
//! * `process_allreduce`: the sum, maximum or minimum over the processes
//!   (booleans: maximum and minimum only; complex: sum only). Sums give the
//!   same bits on every process and from run to run: integers and two
//!   processes through MPI's own reduction (one operation per element, the
//!   same in either order), floats over more processes gathered and added in
//!   rank order (MPI may group a sum differently from run to run).
//! * `process_allgather`: `[processes, *x.shape]`, every process's operand in
//!   rank order.
//! * `process_broadcast`: the root process's operand on every process.
//! * `process_pvary[comm]` and `process_share[processes]`: the identity, where
//!   a value replicated over the processes enters (`pvary`) or leaves
//!   (`share`) a multi-process `shard_map` body. They move nothing; their
//!   transposes keep the cotangent convention below (`pvary`: the sum of the
//!   shares; `share`: an equal share, the cotangent over `processes`).
//!
//! Half floats travel as float32 and booleans as bytes.
//!
//! The three that communicate have the ordered I/O effect: never removed,
//! never reordered, run in program order (every process must run the same collectives in the same
//! order), inside loop bodies too.
//!
//! Derivatives follow one convention: the cotangent a process holds for a
//! value replicated over the processes is its share of the total. So a sum is
//! linear and its transpose is the sum of the shares; `process_allgather`
//! transposes to the sum of the cotangents, of which each process keeps its
//! own row; `process_broadcast` to the sum, kept by the root (the others get
//! zeros). Maximum and minimum differentiate like `reduce_max`: the tangent
//! averaged over the processes holding the extremum. vmap: every variant is
//! elementwise over the processes, so batch dims pass through (the gather's
//! moves one place right).

use super::family::{emit, emit1, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::params::{Lookup, Param, ParamList};
use super::{BinaryOp, Primitive};
use crate::array::{alloc, Buffer, HostArray};
use crate::error::{Error, Result};
use crate::exec::mpi::{self, Communicator, Wire, WireOp};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Effect};
use crate::prims::collective::extremum_tangent;
use crate::prims::{Reshape, Slice};
use half::{bf16, f16};

/// The reduction of `process_allreduce`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcessReduce {
    Sum,
    Max,
    Min,
}

impl ProcessReduce {
    fn name(self) -> &'static str {
        match self {
            ProcessReduce::Sum => "sum",
            ProcessReduce::Max => "max",
            ProcessReduce::Min => "min",
        }
    }

    fn from_name(s: &str) -> Result<ProcessReduce> {
        match s {
            "sum" => Ok(ProcessReduce::Sum),
            "max" => Ok(ProcessReduce::Max),
            "min" => Ok(ProcessReduce::Min),
            other => Err(Error::param(
                "process_allreduce",
                "op",
                format!("must be 'sum', 'max' or 'min', got {other:?}"),
            )),
        }
    }

    fn wire(self) -> WireOp {
        match self {
            ProcessReduce::Sum => WireOp::Sum,
            ProcessReduce::Max => WireOp::Max,
            ProcessReduce::Min => WireOp::Min,
        }
    }
}

/// A collective between processes. `comm` names a registered communicator;
/// `what` describes the user's call (`psum over ['x']`) for the mismatch
/// check's message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProcessCollective {
    AllReduce {
        op: ProcessReduce,
        comm: u32,
        what: String,
    },
    AllGather {
        comm: u32,
        processes: usize,
        what: String,
    },
    Broadcast {
        comm: u32,
        root: usize,
        what: String,
    },
    /// The identity; its transpose sums over the processes of `comm`.
    Pvary { comm: u32, what: String },
    /// The identity; its transpose divides by `processes`.
    Share { processes: usize },
}

const ALLREDUCE: &str = "process_allreduce";
const ALLGATHER: &str = "process_allgather";
const BROADCAST: &str = "process_broadcast";

impl ProcessCollective {
    fn comm(&self) -> u32 {
        match self {
            ProcessCollective::AllReduce { comm, .. }
            | ProcessCollective::AllGather { comm, .. }
            | ProcessCollective::Broadcast { comm, .. }
            | ProcessCollective::Pvary { comm, .. } => *comm,
            ProcessCollective::Share { .. } => 0,
        }
    }

    fn what(&self) -> &str {
        match self {
            ProcessCollective::AllReduce { what, .. }
            | ProcessCollective::AllGather { what, .. }
            | ProcessCollective::Broadcast { what, .. }
            | ProcessCollective::Pvary { what, .. } => what,
            ProcessCollective::Share { .. } => "share",
        }
    }

    /// What every process of the communicator compares before running this
    /// collective on an operand of `x` (the mismatch check's text; the same
    /// on the host and on a device).
    pub fn describe(&self, x: &Aval) -> String {
        format!("{} {}", self.what(), x.short())
    }

    /// The sum over the same communicator (the transposes' collective).
    fn sum(&self, note: &str) -> ProcessCollective {
        ProcessCollective::AllReduce {
            op: ProcessReduce::Sum,
            comm: self.comm(),
            what: format!("{} ({note})", self.what()),
        }
    }
}

/// Communicating collectives are ordered I/O; the identities are pure.
fn ordered_io(c: &ProcessCollective) -> Effect {
    match c {
        ProcessCollective::Pvary { .. } | ProcessCollective::Share { .. } => Effect::None,
        _ => Effect::OrderedIo,
    }
}

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

fn count(prim: &'static str, key: &'static str, p: &Lookup<'_>) -> Result<u32> {
    let v = p.int(key)?;
    u32::try_from(v).map_err(|_| Error::param(prim, key, format!("out of range: {v}")))
}

/// An MPI element type with the addition rank-ordered sums use.
trait Summable: Wire {
    /// Floating sums are gathered and added in rank order beyond two
    /// processes; integer sums are exact in any order.
    const ORDERED: bool;
    fn plus(self, other: Self) -> Self;
}

macro_rules! summable_int {
    ($($t:ty),*) => {$(
        impl Summable for $t {
            const ORDERED: bool = false;
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
        }
    )*};
}

macro_rules! summable_float {
    ($($t:ty),*) => {$(
        impl Summable for $t {
            const ORDERED: bool = true;
            fn plus(self, other: Self) -> Self {
                self + other
            }
        }
    )*};
}

summable_int!(i8, i16, i32, i64, u8, u16, u32, u64);
summable_float!(f32, f64, crate::array::C32, crate::array::C64);

/// What one collective does to a slice of one MPI element type.
trait OnWire {
    fn apply<T: Summable>(&self, x: &[T]) -> Result<Vec<T>>;
}

/// Runs `f` on `x`'s elements as MPI moves them (booleans as bytes, half
/// floats as float32) and gives the result back in `x`'s dtype, shaped `shape`.
fn on_wire(
    prim: &'static str, x: &HostArray, shape: Vec<usize>, f: &impl OnWire,
) -> Result<HostArray> {
    macro_rules! native {
        ($v:expr) => {
            HostArray::from_vec(shape, f.apply($v.as_slice())?)
        };
    }
    match x.buffer() {
        Buffer::I8(v) => native!(v),
        Buffer::I16(v) => native!(v),
        Buffer::I32(v) => native!(v),
        Buffer::I64(v) => native!(v),
        Buffer::U8(v) => native!(v),
        Buffer::U16(v) => native!(v),
        Buffer::U32(v) => native!(v),
        Buffer::U64(v) => native!(v),
        Buffer::F32(v) => native!(v),
        Buffer::F64(v) => native!(v),
        Buffer::C64(v) => native!(v),
        Buffer::C128(v) => native!(v),
        Buffer::Bool(v) => {
            let bytes = alloc::from_iter(prim, v.as_slice().iter().map(|&b| u8::from(b)))?;
            let r = f.apply(&bytes)?;
            HostArray::from_vec(shape, alloc::from_iter(prim, r.iter().map(|&b| b != 0))?)
        }
        Buffer::F16(v) => {
            let wide = alloc::from_iter(prim, v.as_slice().iter().map(|h| h.to_f32()))?;
            let r = f.apply(&wide)?;
            HostArray::from_vec(
                shape,
                alloc::from_iter(prim, r.iter().map(|&w| f16::from_f32(w)))?,
            )
        }
        Buffer::BF16(v) => {
            let wide = alloc::from_iter(prim, v.as_slice().iter().map(|h| h.to_f32()))?;
            let r = f.apply(&wide)?;
            HostArray::from_vec(
                shape,
                alloc::from_iter(prim, r.iter().map(|&w| bf16::from_f32(w)))?,
            )
        }
        Buffer::Float0(_) | Buffer::Key(_) => Err(Error::dtype(
            prim,
            &[x.dtype()],
            "collectives between processes move numeric and boolean arrays",
        )),
    }
}

struct Reduce(Communicator, ProcessReduce);

impl OnWire for Reduce {
    fn apply<T: Summable>(&self, x: &[T]) -> Result<Vec<T>> {
        let Reduce(comm, op) = self;
        if *op == ProcessReduce::Sum && T::ORDERED && comm.size > 2 {
            return ordered_sum(comm, x);
        }
        comm.allreduce_new(op.wire(), x)
    }
}

/// The processes' `x` gathered and added in rank order: the same bits
/// whatever MPI's algorithm.
fn ordered_sum<T: Summable>(comm: &Communicator, x: &[T]) -> Result<Vec<T>> {
    let total = x
        .len()
        .checked_mul(comm.size)
        .ok_or_else(|| Error::Overflow {
            what: "process_allreduce",
            detail: format!("{} elements × {} processes", x.len(), comm.size),
        })?;
    let mut all = alloc::filled(ALLREDUCE, T::default(), total)?;
    comm.allgather(x, &mut all)?;
    if x.is_empty() {
        return Ok(Vec::new());
    }
    let mut rows = all.chunks(x.len());
    let mut acc = alloc::to_vec(ALLREDUCE, rows.next().unwrap_or(&[]))?;
    for row in rows {
        for (a, &r) in acc.iter_mut().zip(row) {
            *a = a.plus(r);
        }
    }
    Ok(acc)
}

struct Gather(Communicator);

impl OnWire for Gather {
    fn apply<T: Summable>(&self, x: &[T]) -> Result<Vec<T>> {
        let total = x
            .len()
            .checked_mul(self.0.size)
            .ok_or_else(|| Error::Overflow {
                what: "process_allgather",
                detail: format!("{} elements × {} processes", x.len(), self.0.size),
            })?;
        let mut out = alloc::filled(ALLGATHER, T::default(), total)?;
        self.0.allgather(x, &mut out)?;
        Ok(out)
    }
}

struct Bcast(Communicator, usize);

impl OnWire for Bcast {
    fn apply<T: Summable>(&self, x: &[T]) -> Result<Vec<T>> {
        let mut out = alloc::to_vec(BROADCAST, x)?;
        self.0.bcast(self.1, &mut out)?;
        Ok(out)
    }
}

fn is_float(b: &Builder, x: &Atom) -> Result<bool> {
    Ok(b.aval(x)?.dtype.is_inexact())
}

impl Family for ProcessCollective {
    crate::family_names!(
        ProcessCollective::AllReduce { .. } => "process_allreduce",
        ProcessCollective::AllGather { .. } => "process_allgather",
        ProcessCollective::Broadcast { .. } => "process_broadcast",
        ProcessCollective::Pvary { .. } => "process_pvary",
        ProcessCollective::Share { .. } => "process_share",
    );

    crate::family_identity!(custom_params, effect = ordered_io);

    fn params(&self) -> ParamList {
        let comm = Param::Int(i64::from(self.comm()));
        let what = Param::Str(self.what().to_string());
        let int = |n: usize| Param::Int(i64::try_from(n).unwrap_or(i64::MAX));
        match self {
            ProcessCollective::AllReduce { op, .. } => vec![
                ("op", Param::Str(op.name().into())),
                ("comm", comm),
                ("what", what),
            ],
            ProcessCollective::AllGather { processes, .. } => {
                vec![
                    ("comm", comm),
                    ("processes", int(*processes)),
                    ("what", what),
                ]
            }
            ProcessCollective::Broadcast { root, .. } => {
                vec![("comm", comm), ("root", int(*root)), ("what", what)]
            }
            ProcessCollective::Pvary { .. } => vec![("comm", comm), ("what", what)],
            ProcessCollective::Share { processes } => vec![("processes", int(*processes))],
        }
    }

    fn from_params(name: &str, p: &Lookup<'_>) -> Result<Option<ProcessCollective>> {
        let what = || -> Result<String> { Ok(p.opt_str("what")?.unwrap_or_default()) };
        Ok(Some(match name {
            "process_allreduce" => ProcessCollective::AllReduce {
                op: ProcessReduce::from_name(&p.opt_str("op")?.unwrap_or_default())?,
                comm: count(ALLREDUCE, "comm", p)?,
                what: what()?,
            },
            "process_allgather" => ProcessCollective::AllGather {
                comm: count(ALLGATHER, "comm", p)?,
                processes: p.dim("processes")?,
                what: what()?,
            },
            "process_broadcast" => ProcessCollective::Broadcast {
                comm: count(BROADCAST, "comm", p)?,
                root: p.dim("root")?,
                what: what()?,
            },
            "process_pvary" => ProcessCollective::Pvary {
                comm: count("process_pvary", "comm", p)?,
                what: what()?,
            },
            "process_share" => ProcessCollective::Share {
                processes: p.dim("processes")?,
            },
            _ => return Ok(None),
        }))
    }

    fn display_params(&self, _params: &mut ParamList) {}

    fn examples() -> Vec<ProcessCollective> {
        let what = String::from("example");
        vec![
            ProcessCollective::AllReduce {
                op: ProcessReduce::Sum,
                comm: 0,
                what: what.clone(),
            },
            ProcessCollective::AllGather {
                comm: 0,
                processes: 2,
                what: what.clone(),
            },
            ProcessCollective::Broadcast {
                comm: 0,
                root: 0,
                what: what.clone(),
            },
            ProcessCollective::Pvary { comm: 0, what },
            ProcessCollective::Share { processes: 2 },
        ]
    }

    /// Sums and extrema keep the operand's type; the gather stacks the
    /// processes' operands on a new leading axis.
    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let prim = self.name();
        let x = one(prim, ins)?;
        let d = x.dtype;
        if let ProcessCollective::Pvary { .. } | ProcessCollective::Share { .. } = self {
            // Identities: any value may enter or leave (keys, float0 too).
            return Ok(vec![x.clone()]);
        }
        if !(d.is_numeric() || d.is_complex() || d == crate::DType::Bool) {
            return Err(Error::dtype(
                prim,
                &[d],
                "expected a numeric or boolean operand",
            ));
        }
        Ok(vec![match self {
            ProcessCollective::AllReduce { op, .. } => {
                if *op == ProcessReduce::Sum && d == crate::DType::Bool {
                    return Err(Error::dtype(prim, &[d], "booleans are not summed"));
                }
                if *op != ProcessReduce::Sum && d.is_complex() {
                    return Err(Error::dtype(prim, &[d], "complex numbers have no order"));
                }
                x.clone()
            }
            ProcessCollective::AllGather { processes, .. } => {
                let mut shape = Vec::with_capacity(x.shape.len().saturating_add(1));
                shape.push(*processes);
                shape.extend_from_slice(&x.shape);
                Aval::new(shape, d)
            }
            ProcessCollective::Broadcast { .. }
            | ProcessCollective::Pvary { .. }
            | ProcessCollective::Share { .. } => x.clone(),
        }])
    }

    /// Runs the MPI collective (after the mismatch check, when it is on).
    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let prim = self.name();
        let x = *one(prim, args)?;
        if let ProcessCollective::Pvary { .. } | ProcessCollective::Share { .. } = self {
            return Ok(vec![x.clone()]);
        }
        let out = one(prim, &outs)?.shape.clone();
        let comm = mpi::communicator(self.comm())?;
        comm.check(&self.describe(&x.aval()))?;
        let y = match self {
            ProcessCollective::AllReduce { op, .. } => on_wire(prim, x, out, &Reduce(comm, *op))?,
            ProcessCollective::AllGather { processes, .. } => {
                if *processes != comm.size {
                    return Err(Error::Collective(format!(
                        "{prim}: {processes} processes declared, the communicator has {}",
                        comm.size
                    )));
                }
                on_wire(prim, x, out, &Gather(comm))?
            }
            ProcessCollective::Broadcast { root, .. } => {
                on_wire(prim, x, out, &Bcast(comm, *root))?
            }
            ProcessCollective::Pvary { .. } | ProcessCollective::Share { .. } => x.clone(),
        };
        Ok(vec![y])
    }

    /// Sums, gathers and broadcasts are linear (the collective of the
    /// tangent); an extremum's tangent is the mean of the tangents of the
    /// processes holding it, `sum(t * m) / sum(m)` with `m = (x == max)`.
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let prim = self.name();
        let (x, t) = (one(prim, xs)?, one(prim, ts)?);
        let y = emit1(b, self.clone(), vec![x.clone()])?;
        let t = match t {
            Some(t) if is_float(b, x)? => t.clone(),
            _ => return Ok((vec![y], vec![None])),
        };
        let dy = match self {
            ProcessCollective::AllReduce {
                op: ProcessReduce::Max | ProcessReduce::Min,
                ..
            } => extremum_tangent(b, x, &y, &t, self.sum("ties"), self.sum("tangent"))?,
            _ => emit1(b, self.clone(), vec![t])?,
        };
        Ok((vec![y], vec![Some(dy)]))
    }

    /// The sum of the processes' cotangent shares; a gather's row and a
    /// broadcast's root keep theirs (every process runs the sum).
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let prim = self.name();
        let (ct, op) = (one(prim, cts)?, one(prim, ops)?);
        let ct = match ct {
            Some(ct) if op.is_linear() => ct.clone(),
            _ => return Ok(vec![None]),
        };
        if b.aval(&ct)?.dtype == crate::DType::Float0 {
            return Ok(vec![Some(ct)]);
        }
        let x = match self {
            ProcessCollective::AllReduce {
                op: ProcessReduce::Sum,
                ..
            } => emit1(b, self.clone(), vec![ct])?,
            ProcessCollective::Pvary { .. } => emit1(b, self.sum("transpose"), vec![ct])?,
            ProcessCollective::Share { processes } => {
                let dtype = b.aval(&ct)?.dtype;
                let n = Builder::lit(dtype, *processes as f64);
                b.binary(BinaryOp::Div, ct, n)?
            }
            ProcessCollective::AllReduce { .. } => {
                return Err(Error::Typecheck(format!(
                    "cannot transpose {prim}: it is not linear"
                )))
            }
            ProcessCollective::AllGather { .. } => {
                let rank = mpi::communicator(self.comm())?.rank;
                let aval = b.aval(&ct)?;
                let total = emit1(b, self.sum("transpose"), vec![ct])?;
                let mut start = vec![0; aval.shape.len()];
                let mut limit = aval.shape.clone();
                if let (Some(s), Some(l)) = (start.first_mut(), limit.first_mut()) {
                    *s = rank;
                    *l = rank.saturating_add(1);
                }
                let row = b.add_eqn1(
                    Primitive::Slice(Slice {
                        start_indices: start,
                        limit_indices: limit,
                        strides: None,
                    }),
                    vec![total],
                )?;
                let new_sizes = aval.shape.get(1..).unwrap_or(&[]).to_vec();
                b.add_eqn1(Primitive::Reshape(Reshape { new_sizes }), vec![row])?
            }
            ProcessCollective::Broadcast { root, .. } => {
                let rank = mpi::communicator(self.comm())?.rank;
                let aval = b.aval(&ct)?;
                let total = emit1(b, self.sum("transpose"), vec![ct])?;
                if rank == *root {
                    total
                } else {
                    b.zeros(&aval)?
                }
            }
        };
        Ok(vec![Some(x)])
    }

    /// Elementwise over the processes: the batch dim passes through (moved
    /// one place right by the gather's new leading axis).
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], _n: usize) -> BatchOut {
        let prim = self.name();
        let (x, d) = (one(prim, ins)?, *one(prim, dims)?);
        let outs = emit(b, self.clone(), vec![x.clone()])?;
        let d = match self {
            ProcessCollective::AllGather { .. } => d.map(|d| d.saturating_add(1)),
            _ => d,
        };
        Ok((outs, vec![d]))
    }
}
