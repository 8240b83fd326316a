//! NCCL communicators and the device collectives that use them (feature
//! `cuda`; NCCL is loaded at run time like the other CUDA libraries, so a
//! machine without it runs every collective on the host through MPI).
//!
//! A communicator is made per (MPI communicator id, device): the host
//! program makes a unique id in one process ([`unique_id`]), sends it to the
//! others over MPI, and every process calls [`register`] with it (NCCL's
//! `ncclCommInitRank`, collective over the MPI communicator's processes,
//! with the same ranks). A device plan's collective step then runs through
//! the NCCL communicator of its MPI communicator and device, or through MPI
//! on the host when there is none.
//!
//! Communicators live until the process exits (a program may run at any
//! time), so nothing here destroys one.
//!
//! This module holds the FFI of the collectives, so it allows `unsafe`:
//! NCCL's calls take raw device pointers. Every buffer handed to NCCL is a
//! live device allocation of at least the bytes the call reads or writes
//! (checked before the call), enqueued on the device's stream that every
//! other step of a plan uses. cudarc resolves NCCL's symbols on first use
//! and panics when one is missing: each call runs under `guarded`.

#![allow(unsafe_code)]

use super::codegen::KernelSource;
use super::collective::{CollectiveMemory, NcclWire};
use super::launch;
use super::probe::{device_error, guarded};
use super::runtime::{self, Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::exec::mpi;
use crate::prims::process::ProcessReduce;
use cudarc::driver::{DevicePtr, DevicePtrMut};
use cudarc::nccl::{result, sys};
use std::sync::{Arc, Mutex};

/// Whether the NCCL library loads.
pub fn present() -> bool {
    // SAFETY: only tries to dlopen the library; a panic reads as absent.
    guarded(|| unsafe { sys::is_culib_present() }) == Some(true)
}

fn nccl_error(call: &str, e: result::NcclError) -> Error {
    Error::Collective(format!("{call} failed: {:?}", e.0))
}

fn missing(call: &str) -> Error {
    Error::Collective(format!(
        "{call}: the NCCL library is missing or lacks the function"
    ))
}

/// Bytes of NCCL's unique id.
pub const UNIQUE_ID_BYTES: usize = 128;

/// A new NCCL unique id (made by one process of a communicator, sent to the
/// others, and passed to [`register`] by all).
pub fn unique_id() -> Result<Vec<u8>> {
    if !present() {
        return Err(missing("ncclGetUniqueId"));
    }
    let id = guarded(result::get_uniqueid)
        .ok_or_else(|| missing("ncclGetUniqueId"))?
        .map_err(|e| nccl_error("ncclGetUniqueId", e))?;
    // `c_char` is i8 or u8 by platform: its bits as a byte.
    Ok(id.internal.iter().map(|&c| c as u8).collect())
}

/// One registered communicator: NCCL's handle (a pointer, kept as an
/// integer so the table is `Send`), its rank and size.
#[derive(Debug, Clone, Copy)]
struct Entry {
    comm: u32,
    ordinal: usize,
    handle: usize,
    size: usize,
}

static COMMS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn table() -> Result<std::sync::MutexGuard<'static, Vec<Entry>>> {
    COMMS
        .lock()
        .map_err(|_| Error::Collective("the NCCL communicator table is poisoned".into()))
}

/// Makes the NCCL communicator of MPI communicator `comm` on device
/// `ordinal` from the unique id every process of `comm` passes (with their
/// MPI ranks). Collective: blocks until every process of `comm` has called
/// it. Registering the same pair again does nothing.
pub fn register(comm: u32, ordinal: usize, id: &[u8]) -> Result<()> {
    let mpi_comm = mpi::communicator(comm)?;
    register_ranks(comm, ordinal, id, mpi_comm.rank, mpi_comm.size)
}

/// [`register`] with this process's rank and the process count given
/// instead of read from MPI communicator `comm` (which need not exist: a
/// run whose processes start NCCL by other means, or one process alone).
/// The id then only names the communicator the `process_*` primitives'
/// `comm` parameter selects.
pub fn register_ranks(
    comm: u32, ordinal: usize, id: &[u8], rank: usize, size: usize,
) -> Result<()> {
    if table()?
        .iter()
        .any(|e| e.comm == comm && e.ordinal == ordinal)
    {
        return Ok(());
    }
    if rank >= size {
        return Err(Error::InvalidArgument(format!(
            "NCCL communicator: rank {rank} of {size} processes"
        )));
    }
    let bytes: [u8; UNIQUE_ID_BYTES] = id.try_into().map_err(|_| {
        Error::InvalidArgument(format!(
            "an NCCL unique id has {UNIQUE_ID_BYTES} bytes, got {}",
            id.len()
        ))
    })?;
    if !present() {
        return Err(missing("ncclCommInitRank"));
    }
    let device = runtime::device(ordinal)?;
    device
        .ctx
        .bind_to_thread()
        .map_err(|e| device_error("context bind", e))?;
    let uid = sys::ncclUniqueId {
        internal: bytes.map(|b| b as std::ffi::c_char),
    };
    let nranks = i32::try_from(size).map_err(|_| Error::Collective(format!("{size} processes")))?;
    let me = i32::try_from(rank).map_err(|_| Error::Collective(format!("rank {rank}")))?;
    let mut handle: sys::ncclComm_t = std::ptr::null_mut();
    // SAFETY: `handle` is a live out-pointer; the id is a plain 128-byte
    // value; NCCL uses the device bound to this thread above.
    let rc = guarded(|| unsafe { result::comm_init_rank(&mut handle, nranks, uid, me) })
        .ok_or_else(|| missing("ncclCommInitRank"))?;
    rc.map_err(|e| nccl_error("ncclCommInitRank", e))?;
    if handle.is_null() {
        return Err(Error::Collective(
            "ncclCommInitRank gave no communicator".into(),
        ));
    }
    table()?.push(Entry {
        comm,
        ordinal,
        handle: handle as usize,
        size,
    });
    Ok(())
}

/// The NCCL communicator of MPI communicator `comm` on `device`, if one
/// was registered.
pub(super) fn lookup(comm: u32, device: &Arc<Device>) -> Result<Option<NcclComm>> {
    Ok(table()?
        .iter()
        .find(|e| e.comm == comm && e.ordinal == device.ordinal)
        .map(|e| NcclComm {
            handle: e.handle,
            size: e.size,
            device: device.clone(),
        }))
}

/// A registered communicator on its device.
pub(super) struct NcclComm {
    handle: usize,
    size: usize,
    device: Arc<Device>,
}

fn data_type(w: NcclWire) -> sys::ncclDataType_t {
    use sys::ncclDataType_t as T;
    match w {
        NcclWire::I8 => T::ncclInt8,
        NcclWire::U8 => T::ncclUint8,
        NcclWire::I32 => T::ncclInt32,
        NcclWire::U32 => T::ncclUint32,
        NcclWire::I64 => T::ncclInt64,
        NcclWire::U64 => T::ncclUint64,
        NcclWire::F32 => T::ncclFloat32,
        NcclWire::F64 => T::ncclFloat64,
    }
}

fn reduce_op(op: ProcessReduce) -> sys::ncclRedOp_t {
    match op {
        ProcessReduce::Sum => sys::ncclRedOp_t::ncclSum,
        ProcessReduce::Max => sys::ncclRedOp_t::ncclMax,
        ProcessReduce::Min => sys::ncclRedOp_t::ncclMin,
    }
}

/// Checks that `buf` holds at least `count` elements of `wire` times `rows`.
fn holds(buf: &DeviceBuffer, wire: NcclWire, count: usize, rows: usize, call: &str) -> Result<()> {
    let need = count
        .checked_mul(wire.bytes())
        .and_then(|b| b.checked_mul(rows));
    match need {
        Some(n) if n <= buf.bytes => Ok(()),
        _ => Err(Error::Device(format!(
            "{call}: a buffer of {} bytes for {count} × {rows} elements of {wire:?}",
            buf.bytes
        ))),
    }
}

impl NcclComm {
    /// Runs one NCCL call from `send` into `recv` (`f` given their device
    /// pointers, the communicator and the stream) with the device's context
    /// bound; the pointers' stream records live until the call returns.
    fn call(
        &self, name: &str, send: &DeviceBuffer, recv: &mut DeviceBuffer,
        f: impl FnOnce(
            *const std::ffi::c_void,
            *mut std::ffi::c_void,
            sys::ncclComm_t,
            sys::cudaStream_t,
        ) -> std::result::Result<result::NcclStatus, result::NcclError>,
    ) -> Result<()> {
        self.device
            .ctx
            .bind_to_thread()
            .map_err(|e| device_error("context bind", e))?;
        let stream = &self.device.stream;
        let (s, _rs) = send.slice()?.device_ptr(stream);
        let (r, _rr) = recv.slice_mut()?.device_ptr_mut(stream);
        let st = stream.cu_stream() as sys::cudaStream_t;
        let comm = self.handle as sys::ncclComm_t;
        let (s, r) = (s as *const std::ffi::c_void, r as *mut std::ffi::c_void);
        guarded(|| f(s, r, comm, st))
            .ok_or_else(|| missing(name))?
            .map(|_| ())
            .map_err(|e| nccl_error(name, e))
    }
}

impl CollectiveMemory for NcclComm {
    type Buffer = DeviceBuffer;

    fn processes(&self) -> usize {
        self.size
    }

    fn alloc(&self, bytes: usize) -> Result<DeviceBuffer> {
        self.device.alloc(bytes)
    }

    fn all_reduce(
        &self, op: ProcessReduce, wire: NcclWire, count: usize, send: &DeviceBuffer,
        recv: &mut DeviceBuffer,
    ) -> Result<()> {
        holds(send, wire, count, 1, "ncclAllReduce")?;
        holds(recv, wire, count, 1, "ncclAllReduce")?;
        self.call("ncclAllReduce", send, recv, |s, r, comm, st| {
            // SAFETY: both buffers hold `count` elements of `wire` (checked
            // above) and stay alive until the call returns; the stream
            // orders the reduction after their producers.
            unsafe { result::all_reduce(s, r, count, data_type(wire), reduce_op(op), comm, st) }
        })
    }

    fn all_gather(
        &self, wire: NcclWire, count: usize, send: &DeviceBuffer, recv: &mut DeviceBuffer,
    ) -> Result<()> {
        holds(send, wire, count, 1, "ncclAllGather")?;
        holds(recv, wire, count, self.size, "ncclAllGather")?;
        self.call("ncclAllGather", send, recv, |s, r, comm, st| {
            // SAFETY: `send` holds `count` elements and `recv` `size` times
            // as many (checked above).
            unsafe { result::all_gather(s, r, count, data_type(wire), comm, st) }
        })
    }

    fn broadcast(
        &self, root: usize, wire: NcclWire, count: usize, send: &DeviceBuffer,
        recv: &mut DeviceBuffer,
    ) -> Result<()> {
        holds(send, wire, count, 1, "ncclBroadcast")?;
        holds(recv, wire, count, 1, "ncclBroadcast")?;
        let root = i32::try_from(root)
            .map_err(|_| Error::Collective(format!("ncclBroadcast: root {root}")))?;
        self.call("ncclBroadcast", send, recv, |s, r, comm, st| {
            // SAFETY: both buffers hold `count` elements (checked above).
            unsafe { result::broadcast(s, r, count, data_type(wire), root, comm, st) }
        })
    }

    fn run_kernel(
        &self, kernel: &KernelSource, gathered: &DeviceBuffer, out: &mut DeviceBuffer,
    ) -> Result<()> {
        let func = self.device.function(kernel)?;
        launch::launch_kernel(
            &self.device.stream,
            &func,
            kernel,
            &[gathered.slice()?],
            &[out.slice()?],
        )
    }
}
