//! Collectives between processes through an MPI library loaded at run time.
//!
//! The crate never links libmpi (a wheel built here must import and run
//! single-process on a machine without MPI). A host program that has
//! initialized MPI (the Python binding, through mpi4py) names the library its
//! MPI came from and hands over communicator handles with
//! [`register_communicator`]; the `process_*` primitives
//! (`prims/process.rs`) then call `MPI_Allreduce`, `MPI_Allgather` and
//! `MPI_Bcast` from the executor's own thread, with no host-language round
//! trip (the Python binding runs compiled programs with the GIL released).
//!
//! Handles follow Open MPI's ABI: a communicator, a datatype and an
//! operation are pointers to the library's objects (`ompi_mpi_float`,
//! `ompi_mpi_op_sum`, ...), resolved here by symbol. A library without those
//! symbols (MPICH and its derivatives, whose handles are integers) is refused
//! when the first communicator is registered; such libraries are untested.
//!
//! This is the executor's one MPI FFI module, so it allows `unsafe`: loading
//! the library, reading its symbols and calling its functions. Every buffer
//! handed to MPI is a live Rust slice of exactly the count passed with it,
//! counts are checked into `c_int`, and a nonzero return code is an error.

#![allow(unsafe_code)]

use crate::error::{Error, Result};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

type Handle = *mut c_void;
type AllreduceFn =
    unsafe extern "C" fn(*const c_void, *mut c_void, c_int, Handle, Handle, Handle) -> c_int;
type AllgatherFn =
    unsafe extern "C" fn(*const c_void, c_int, Handle, *mut c_void, c_int, Handle, Handle) -> c_int;
type BcastFn = unsafe extern "C" fn(*mut c_void, c_int, Handle, c_int, Handle) -> c_int;
type CommQueryFn = unsafe extern "C" fn(Handle, *mut c_int) -> c_int;

/// The element types MPI moves (its predefined datatypes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    C64,
    C128,
}

/// Open MPI's symbol of each [`WireType`], in declaration order.
const TYPE_SYMBOLS: [&str; 12] = [
    "ompi_mpi_int8_t",
    "ompi_mpi_int16_t",
    "ompi_mpi_int32_t",
    "ompi_mpi_int64_t",
    "ompi_mpi_uint8_t",
    "ompi_mpi_uint16_t",
    "ompi_mpi_uint32_t",
    "ompi_mpi_uint64_t",
    "ompi_mpi_float",
    "ompi_mpi_double",
    "ompi_mpi_c_float_complex",
    "ompi_mpi_c_double_complex",
];

/// The reductions MPI performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireOp {
    Sum,
    Max,
    Min,
}

const OP_SYMBOLS: [&str; 3] = ["ompi_mpi_op_sum", "ompi_mpi_op_max", "ompi_mpi_op_min"];

/// An element type MPI can move as it is.
pub trait Wire: Copy + Default + Send + Sync + 'static {
    const TYPE: WireType;
}

macro_rules! wire {
    ($($t:ty => $w:ident),* $(,)?) => {
        $(impl Wire for $t {
            const TYPE: WireType = WireType::$w;
        })*
    };
}

wire!(
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f32 => F32, f64 => F64,
    crate::array::C32 => C64, crate::array::C64 => C128,
);

/// The loaded library: its functions and the addresses of its predefined
/// objects (kept as integers so the table is `Send + Sync`; the library is
/// never unloaded, so they stay valid).
struct Library {
    _lib: libloading::Library,
    path: String,
    allreduce: AllreduceFn,
    allgather: AllgatherFn,
    bcast: BcastFn,
    comm_size: CommQueryFn,
    comm_rank: CommQueryFn,
    types: [usize; 12],
    ops: [usize; 3],
}

impl Library {
    fn datatype(&self, t: WireType) -> Result<Handle> {
        let a = self.types.get(t as usize).copied();
        a.map(|a| a as Handle)
            .ok_or_else(|| Error::Collective(format!("no MPI datatype for {t:?}")))
    }

    fn op(&self, op: WireOp) -> Result<Handle> {
        let a = self.ops.get(op as usize).copied();
        a.map(|a| a as Handle)
            .ok_or_else(|| Error::Collective(format!("no MPI operation for {op:?}")))
    }
}

static LIBRARY: OnceLock<Library> = OnceLock::new();

fn load(path: &str) -> Result<Library> {
    let bad = |what: &str, e: libloading::Error| {
        Error::Collective(format!(
            "{path}: {what} ({e}); collectives between processes need Open MPI's library \
             (other MPI libraries are not supported)"
        ))
    };
    // SAFETY: loading the MPI library the host process already uses (its
    // initializers have run); the handle lives in a static, never unloaded.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| bad("cannot load", e))?;
    // SAFETY: each symbol is read with the type Open MPI declares for it
    // (`mpi.h`); data symbols are only used for their addresses.
    unsafe {
        let f = |name: &str| lib.get::<*mut c_void>(name).map(|s| *s as usize);
        let mut types = [0usize; 12];
        for (slot, name) in types.iter_mut().zip(TYPE_SYMBOLS) {
            *slot = f(name).map_err(|e| bad(name, e))?;
        }
        let mut ops = [0usize; 3];
        for (slot, name) in ops.iter_mut().zip(OP_SYMBOLS) {
            *slot = f(name).map_err(|e| bad(name, e))?;
        }
        let allreduce = *lib
            .get::<AllreduceFn>("MPI_Allreduce")
            .map_err(|e| bad("MPI_Allreduce", e))?;
        let allgather = *lib
            .get::<AllgatherFn>("MPI_Allgather")
            .map_err(|e| bad("MPI_Allgather", e))?;
        let bcast = *lib
            .get::<BcastFn>("MPI_Bcast")
            .map_err(|e| bad("MPI_Bcast", e))?;
        let comm_size = *lib
            .get::<CommQueryFn>("MPI_Comm_size")
            .map_err(|e| bad("MPI_Comm_size", e))?;
        let comm_rank = *lib
            .get::<CommQueryFn>("MPI_Comm_rank")
            .map_err(|e| bad("MPI_Comm_rank", e))?;
        Ok(Library {
            _lib: lib,
            path: path.to_string(),
            allreduce,
            allgather,
            bcast,
            comm_size,
            comm_rank,
            types,
            ops,
        })
    }
}

fn library() -> Result<&'static Library> {
    LIBRARY.get().ok_or_else(|| {
        Error::Collective(
            "no MPI library is loaded: register a communicator first (jax.distributed.initialize \
             under an MPI launcher)"
                .into(),
        )
    })
}

fn check_rc(rc: c_int, call: &str) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::Collective(format!(
            "{call} failed with MPI error code {rc}"
        )))
    }
}

/// A communicator the host program registered: its handle, this process's
/// rank in it and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Communicator {
    handle: usize,
    pub rank: usize,
    pub size: usize,
}

static COMMUNICATORS: Mutex<Vec<Communicator>> = Mutex::new(Vec::new());

fn registry() -> Result<std::sync::MutexGuard<'static, Vec<Communicator>>> {
    COMMUNICATORS
        .lock()
        .map_err(|_| Error::Collective("the communicator table is poisoned".into()))
}

/// Registers an MPI communicator of the library at `library` (loaded on the
/// first call; later calls must name the same library) and returns the id
/// the `process_*` primitives name it by. Registering the same handle again
/// returns its id.
///
/// # Safety
/// MPI must be initialized in this process by the library at `library`, and
/// `handle` must be a valid communicator of it (an `MPI_Comm`, Open MPI's
/// pointer) that stays valid while programs naming the id run.
pub unsafe fn register_communicator(library_path: &str, handle: usize) -> Result<u32> {
    let lib = match LIBRARY.get() {
        Some(l) => l,
        None => {
            let loaded = load(library_path)?;
            // A concurrent first registration may have won; either table is
            // the same library's.
            let _ = LIBRARY.set(loaded);
            library()?
        }
    };
    if lib.path != library_path {
        return Err(Error::Collective(format!(
            "communicators must come from one MPI library: {} is loaded, {library_path} was named",
            lib.path
        )));
    }
    let mut table = registry()?;
    if let Some(k) = table.iter().position(|c| c.handle == handle) {
        return u32::try_from(k).map_err(|_| Error::Collective("too many communicators".into()));
    }
    let (mut size, mut rank): (c_int, c_int) = (0, 0);
    // SAFETY: the caller promises a valid communicator; the out-pointers are
    // live locals.
    unsafe {
        check_rc(
            (lib.comm_size)(handle as Handle, &mut size),
            "MPI_Comm_size",
        )?;
        check_rc(
            (lib.comm_rank)(handle as Handle, &mut rank),
            "MPI_Comm_rank",
        )?;
    }
    let size = usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| Error::Collective(format!("MPI_Comm_size gave {size}")))?;
    let rank = usize::try_from(rank)
        .ok()
        .filter(|&r| r < size)
        .ok_or_else(|| Error::Collective(format!("MPI_Comm_rank gave {rank} of {size}")))?;
    let id = u32::try_from(table.len())
        .map_err(|_| Error::Collective("too many communicators".into()))?;
    table.push(Communicator { handle, rank, size });
    Ok(id)
}

/// The communicator registered under `id`.
pub fn communicator(id: u32) -> Result<Communicator> {
    let table = registry()?;
    usize::try_from(id)
        .ok()
        .and_then(|k| table.get(k).copied())
        .ok_or_else(|| {
            Error::Collective(format!(
                "no MPI communicator {id} is registered in this process (programs holding \
                 collectives between processes run only in the processes that traced them)"
            ))
        })
}

static CHECKS: AtomicBool = AtomicBool::new(false);

/// Turns the mismatch check on or off: with it, every collective first
/// compares a description of itself across the communicator's processes.
pub fn set_checks(on: bool) {
    CHECKS.store(on, Ordering::Relaxed);
}

/// Whether the mismatch check is on.
pub fn checks() -> bool {
    CHECKS.load(Ordering::Relaxed)
}

/// The most elements one MPI call moves (its counts are `int`).
fn max_count() -> usize {
    usize::try_from(c_int::MAX).unwrap_or(usize::MAX)
}

fn count(n: usize, call: &str) -> Result<c_int> {
    c_int::try_from(n).map_err(|_| {
        Error::Collective(format!(
            "{call}: {n} elements per process is more than MPI's int count allows"
        ))
    })
}

impl Communicator {
    /// `out[i] = op over the processes of send[i]` (MPI's own algorithm; the
    /// counts are split into calls of at most `c_int::MAX` elements), into a
    /// new vector (allocated fallibly and written only by MPI, as NumPy's
    /// `empty` would be).
    pub fn allreduce_new<T: Wire>(&self, op: WireOp, send: &[T]) -> Result<Vec<T>> {
        let mut out = crate::array::alloc::with_capacity::<T>("MPI_Allreduce", send.len())?;
        let lib = library()?;
        let dt = lib.datatype(T::TYPE)?;
        let opv = lib.op(op)?;
        let spare = out.spare_capacity_mut();
        let mut done = 0usize;
        for (s, r) in send.chunks(max_count()).zip(spare.chunks_mut(max_count())) {
            let n = count(s.len(), "MPI_Allreduce")?;
            // SAFETY: `s` holds `n` elements and `r` room for `n` elements of
            // the datatype `dt` describes; MPI writes all of them on success.
            let rc = unsafe {
                (lib.allreduce)(
                    s.as_ptr().cast(),
                    r.as_mut_ptr().cast(),
                    n,
                    dt,
                    opv,
                    self.handle as Handle,
                )
            };
            check_rc(rc, "MPI_Allreduce")?;
            done = done.saturating_add(s.len());
        }
        if done != send.len() {
            return Err(Error::Collective("MPI_Allreduce: short output".into()));
        }
        // SAFETY: the first `send.len()` elements were written by MPI above
        // (every chunk succeeded), and `Wire` types are plain data.
        unsafe { out.set_len(done) };
        Ok(out)
    }

    /// Every process's `send`, in rank order: `recv` holds `size` blocks of
    /// `send.len()` elements.
    pub fn allgather<T: Wire>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        let want = send
            .len()
            .checked_mul(self.size)
            .ok_or(Error::Collective("MPI_Allgather: size overflow".into()))?;
        if recv.len() != want {
            return Err(Error::Collective(format!(
                "MPI_Allgather: {} elements received, {want} expected",
                recv.len()
            )));
        }
        if send.is_empty() {
            return Ok(());
        }
        let lib = library()?;
        let dt = lib.datatype(T::TYPE)?;
        let n = count(send.len(), "MPI_Allgather")?;
        // SAFETY: `send` holds `n` elements and `recv` `size * n` of the
        // datatype `dt` describes.
        let rc = unsafe {
            (lib.allgather)(
                send.as_ptr().cast(),
                n,
                dt,
                recv.as_mut_ptr().cast(),
                n,
                dt,
                self.handle as Handle,
            )
        };
        check_rc(rc, "MPI_Allgather")
    }

    /// The root's `buf` into every process's `buf`.
    pub fn bcast<T: Wire>(&self, root: usize, buf: &mut [T]) -> Result<()> {
        if root >= self.size {
            return Err(Error::Collective(format!(
                "MPI_Bcast: root {root} of a communicator of {} processes",
                self.size
            )));
        }
        let root = count(root, "MPI_Bcast")?;
        let lib = library()?;
        let dt = lib.datatype(T::TYPE)?;
        for chunk in buf.chunks_mut(max_count()) {
            let n = count(chunk.len(), "MPI_Bcast")?;
            // SAFETY: `chunk` is a live slice of `n` elements of `dt`.
            let rc = unsafe {
                (lib.bcast)(
                    chunk.as_mut_ptr().cast(),
                    n,
                    dt,
                    root,
                    self.handle as Handle,
                )
            };
            check_rc(rc, "MPI_Bcast")?;
        }
        Ok(())
    }

    /// With checks on ([`set_checks`]): every process compares `what` (a
    /// description of the collective it is about to run) with the others';
    /// all raise the same error, naming each process's call, when any
    /// differs. Descriptions are compared on their first 240 bytes.
    pub fn check(&self, what: &str) -> Result<()> {
        const WIDTH: usize = 240;
        if !checks() {
            return Ok(());
        }
        let mut mine = [0u8; WIDTH];
        for (slot, b) in mine.iter_mut().zip(what.bytes()) {
            *slot = b;
        }
        let total = WIDTH
            .checked_mul(self.size)
            .ok_or(Error::Collective("collective check: size overflow".into()))?;
        let mut all = crate::array::alloc::filled("collective check", 0u8, total)?;
        self.allgather(&mine, &mut all)?;
        let rows: Vec<&[u8]> = all.chunks(WIDTH).collect();
        if rows.iter().all(|r| *r == mine.as_slice()) {
            return Ok(());
        }
        let text = |r: &[u8]| {
            let end = r.iter().position(|&b| b == 0).unwrap_or(r.len());
            String::from_utf8_lossy(r.get(..end).unwrap_or(r)).into_owned()
        };
        let lines: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(k, r)| format!("  process rank {k} of the group: {}", text(r)))
            .collect();
        Err(Error::Collective(format!(
            "mismatched collectives across processes (each process must run the same \
             collectives in the same order with the same shapes and dtypes):\n{}",
            lines.join("\n")
        )))
    }
}
