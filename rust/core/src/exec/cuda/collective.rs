//! Collectives between processes on a device: `process_allreduce`,
//! `process_allgather` and `process_broadcast` of arrays in GPU memory run
//! through NCCL (`nccl.rs`, feature `cuda`) on the device's stream, with the
//! same results as the host path through MPI (`prims/process.rs`):
//!
//! * gathers and broadcasts move the operand's bytes as they are (every
//!   dtype, booleans and half floats included);
//! * sums, maxima and minima reduce the dtypes NCCL has (8-, 32- and 64-bit
//!   integers, float32, float64; complex numbers as pairs of floats, which
//!   add componentwise; booleans as bytes, whose maximum and minimum are
//!   `or` and `and`). 16-bit integers (NCCL has none) and half-float
//!   reductions (the host path reduces them in float32) stay on the host;
//! * a float sum over more than two processes is gathered and added in rank
//!   order by a generated kernel ([`ordered_sum_kernel`]), so it has the
//!   same bits on every process, from run to run and as the host path,
//!   whatever algorithm NCCL picks. Over two processes each element is one
//!   addition, the same in either order, so NCCL's own all-reduce is used.
//!
//! No CUDA types here: the plan ([`collective_spec`]) and the driver
//! ([`run_collective`], over any [`CollectiveMemory`]) are tested on every
//! machine, with threads standing in for processes.

use super::codegen::{c_type, finish, KernelSource};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::compiled::fusion::Access;
use crate::ir::{Aval, Var};
use crate::prims::process::{ProcessCollective, ProcessReduce};
use std::fmt::Write;

/// The element types NCCL moves and reduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NcclWire {
    I8,
    U8,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl NcclWire {
    /// Bytes of one element.
    pub fn bytes(self) -> usize {
        match self {
            NcclWire::I8 | NcclWire::U8 => 1,
            NcclWire::I32 | NcclWire::U32 | NcclWire::F32 => 4,
            NcclWire::I64 | NcclWire::U64 | NcclWire::F64 => 8,
        }
    }

    /// The dtype whose elements these are (its C type names the kernels').
    pub fn dtype(self) -> DType {
        match self {
            NcclWire::I8 => DType::I8,
            NcclWire::U8 => DType::U8,
            NcclWire::I32 => DType::I32,
            NcclWire::U32 => DType::U32,
            NcclWire::I64 => DType::I64,
            NcclWire::U64 => DType::U64,
            NcclWire::F32 => DType::F32,
            NcclWire::F64 => DType::F64,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, NcclWire::F32 | NcclWire::F64)
    }
}

/// What one device collective does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollectiveKind {
    AllReduce(ProcessReduce),
    /// `processes` rows, one per process in rank order.
    AllGather {
        processes: usize,
    },
    Broadcast {
        root: usize,
    },
}

/// A collective between processes as a device runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectiveSpec {
    pub kind: CollectiveKind,
    /// The communicator's id ([`crate::exec::mpi::register_communicator`]).
    pub comm: u32,
    /// What the mismatch check compares (as the host path does).
    pub check: String,
    /// The elements NCCL sees: `count` of `wire` per process.
    pub wire: NcclWire,
    pub count: usize,
}

impl CollectiveSpec {
    /// Bytes each process contributes.
    pub fn send_bytes(&self) -> Result<usize> {
        self.count
            .checked_mul(self.wire.bytes())
            .ok_or_else(|| overflow(self.count, 1))
    }

    /// Bytes of the result on a communicator of `processes`.
    pub fn result_bytes(&self, processes: usize) -> Result<usize> {
        match self.kind {
            CollectiveKind::AllGather { .. } => gathered_bytes(self, processes),
            _ => self.send_bytes(),
        }
    }

    /// Whether the result is gathered and added in rank order (a float sum
    /// over more than two processes).
    pub fn ordered_sum(&self, processes: usize) -> bool {
        self.kind == CollectiveKind::AllReduce(ProcessReduce::Sum)
            && self.wire.is_float()
            && processes > 2
    }
}

fn overflow(count: usize, processes: usize) -> Error {
    Error::Overflow {
        what: "device collective",
        detail: format!("{count} elements × {processes} processes"),
    }
}

fn gathered_bytes(spec: &CollectiveSpec, processes: usize) -> Result<usize> {
    spec.send_bytes()?
        .checked_mul(processes)
        .ok_or_else(|| overflow(spec.count, processes))
}

/// The NCCL element type a reduction of `d` uses and the elements per
/// array element, or why the reduction stays on the host.
fn reduce_wire(
    op: ProcessReduce, d: DType,
) -> std::result::Result<(NcclWire, usize), &'static str> {
    Ok(match d {
        DType::I8 => (NcclWire::I8, 1),
        DType::U8 => (NcclWire::U8, 1),
        DType::I32 => (NcclWire::I32, 1),
        DType::U32 => (NcclWire::U32, 1),
        DType::I64 => (NcclWire::I64, 1),
        DType::U64 => (NcclWire::U64, 1),
        DType::F32 => (NcclWire::F32, 1),
        DType::F64 => (NcclWire::F64, 1),
        // One byte, 0 or 1: the maximum is `or`, the minimum `and`.
        DType::Bool if op != ProcessReduce::Sum => (NcclWire::U8, 1),
        // Componentwise sums (complex numbers have no order).
        DType::C64 if op == ProcessReduce::Sum => (NcclWire::F32, 2),
        DType::C128 if op == ProcessReduce::Sum => (NcclWire::F64, 2),
        DType::I16 | DType::U16 => return Err("a 16-bit integer reduction (NCCL has none)"),
        DType::F16 | DType::BF16 => {
            return Err("a half-float reduction (accumulated in float32 as on the host)")
        }
        _ => return Err("a reduction of this dtype"),
    })
}

/// How `c` runs on a device for an operand of `x`: `Ok(Some(spec))` through
/// NCCL, `Ok(None)` for the identities (`process_pvary`, `process_share`:
/// the simplifier removes them), `Err(reason)` on the host.
pub fn collective_spec(
    c: &ProcessCollective, x: &Aval,
) -> std::result::Result<Option<CollectiveSpec>, &'static str> {
    let size = x.size().map_err(|_| "an operand too large to count")?;
    let check = c.describe(x);
    let (kind, comm, wire, count) = match c {
        ProcessCollective::AllReduce { op, comm, .. } => {
            let (wire, per) = reduce_wire(*op, x.dtype)?;
            let count = size
                .checked_mul(per)
                .ok_or("an operand too large to count")?;
            (CollectiveKind::AllReduce(*op), *comm, wire, count)
        }
        ProcessCollective::AllGather {
            comm, processes, ..
        } => {
            let bytes = super::bytes::nbytes(x.dtype, size).map_err(|_| "an operand too large")?;
            (
                CollectiveKind::AllGather {
                    processes: *processes,
                },
                *comm,
                NcclWire::U8,
                bytes,
            )
        }
        ProcessCollective::Broadcast { comm, root, .. } => {
            let bytes = super::bytes::nbytes(x.dtype, size).map_err(|_| "an operand too large")?;
            (
                CollectiveKind::Broadcast { root: *root },
                *comm,
                NcclWire::U8,
                bytes,
            )
        }
        ProcessCollective::Pvary { .. } | ProcessCollective::Share { .. } => return Ok(None),
    };
    Ok(Some(CollectiveSpec {
        kind,
        comm,
        check,
        wire,
        count,
    }))
}

/// `out[i] = rows[0][i] + rows[1][i] + ... + rows[processes-1][i]`, added in
/// that order, over the `processes` rows of `count` elements of `wire` (a
/// float type) that an all-gather wrote. `gathered` and `out` only name the
/// kernel's parameters.
pub fn ordered_sum_kernel(
    wire: NcclWire, count: usize, processes: usize, gathered: Var, out: Var,
) -> Result<KernelSource> {
    let t = c_type(wire.dtype())
        .filter(|_| wire.is_float())
        .ok_or_else(|| Error::Unsupported(format!("ordered sum of {wire:?}")))?;
    let total = count
        .checked_mul(processes)
        .ok_or_else(|| overflow(count, processes))?;
    let params = vec![
        format!("const {t}* __restrict__ in0"),
        format!("{t}* __restrict__ out0"),
    ];
    let mut body = String::new();
    let _ = writeln!(body, "    {t} acc = in0[i];");
    let _ = writeln!(
        body,
        "    for (long long r = 1; r < {processes}LL; ++r) acc += in0[r * {count}LL + i];"
    );
    body.push_str("    out0[i] = acc;\n");
    Ok(finish(
        params,
        &body,
        vec![(
            gathered,
            Access {
                inner: 1,
                size: total,
            },
        )],
        vec![out],
        count,
    ))
}

/// What [`run_collective`] needs from a communicator over some memory: NCCL
/// over device buffers (`nccl.rs`), or host memory with threads standing in
/// for processes (the tests).
pub trait CollectiveMemory {
    /// A buffer of bytes.
    type Buffer;

    /// Processes in the communicator.
    fn processes(&self) -> usize;
    /// A buffer of `bytes` (contents undefined until written).
    fn alloc(&self, bytes: usize) -> Result<Self::Buffer>;
    /// `recv = op over the processes of send` (`count` elements of `wire`).
    fn all_reduce(
        &self, op: ProcessReduce, wire: NcclWire, count: usize, send: &Self::Buffer,
        recv: &mut Self::Buffer,
    ) -> Result<()>;
    /// Every process's `send` (`count` elements of `wire`) in rank order.
    fn all_gather(
        &self, wire: NcclWire, count: usize, send: &Self::Buffer, recv: &mut Self::Buffer,
    ) -> Result<()>;
    /// The root's `send` into every process's `recv`.
    fn broadcast(
        &self, root: usize, wire: NcclWire, count: usize, send: &Self::Buffer,
        recv: &mut Self::Buffer,
    ) -> Result<()>;
    /// Runs an [`ordered_sum_kernel`] on `gathered` into `out`.
    fn run_kernel(
        &self, kernel: &KernelSource, gathered: &Self::Buffer, out: &mut Self::Buffer,
    ) -> Result<()>;
}

/// Runs `spec` on this process's operand `x` (its `spec.count` elements of
/// `spec.wire`) and returns the result buffer. Every process of the
/// communicator must call it with the same spec (the mismatch check, when
/// on, runs before this).
pub fn run_collective<M: CollectiveMemory>(
    mem: &M, spec: &CollectiveSpec, x: &M::Buffer,
) -> Result<M::Buffer> {
    let processes = mem.processes();
    let mut out = mem.alloc(spec.result_bytes(processes)?)?;
    if spec.count == 0 {
        return Ok(out);
    }
    match spec.kind {
        CollectiveKind::AllReduce(_) if spec.ordered_sum(processes) => {
            let mut all = mem.alloc(gathered_bytes(spec, processes)?)?;
            mem.all_gather(spec.wire, spec.count, x, &mut all)?;
            let kernel = ordered_sum_kernel(spec.wire, spec.count, processes, Var(0), Var(1))?;
            mem.run_kernel(&kernel, &all, &mut out)?;
        }
        CollectiveKind::AllReduce(op) => {
            mem.all_reduce(op, spec.wire, spec.count, x, &mut out)?;
        }
        CollectiveKind::AllGather {
            processes: declared,
        } => {
            if declared != processes {
                return Err(Error::Collective(format!(
                    "process_allgather: {declared} processes declared, the communicator has \
                     {processes}"
                )));
            }
            mem.all_gather(spec.wire, spec.count, x, &mut out)?;
        }
        CollectiveKind::Broadcast { root } => {
            if root >= processes {
                return Err(Error::Collective(format!(
                    "process_broadcast: root {root} of a communicator of {processes} processes"
                )));
            }
            mem.broadcast(root, spec.wire, spec.count, x, &mut out)?;
        }
    }
    Ok(out)
}
