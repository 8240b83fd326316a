"""Multi-process state (`jax.distributed`) and the collectives between processes.

Processes are started by an MPI launcher (`mpirun`/`mpiexec` of Open MPI or
MPICH, Slurm's `srun` with MPI) and talk through mpi4py, which loads the MPI
library at run time: the extension never links libmpi, and a process with no
launcher and no mpi4py runs single-process as before.

Collectives inside traced programs are the core's `process_*` primitives: the
executor calls the MPI library mpi4py loaded (found by symbol, Open MPI's ABI)
on the communicators registered here (`core_comm`), with the GIL released and no
Python in between. When every process computes on a GPU and NCCL loads, each
communicator also gets an NCCL communicator on the process's GPU, and programs
running there call NCCL on device memory instead. The host functions below (`allgather`, `bcast`, `barrier`)
move NumPy buffers for `multihost_utils` through mpi4py itself.

With collective checks on (`MICROJAX_COLLECTIVE_CHECKS=1` or
`jax.config.update("microjax_collective_checks", True)`), every collective first
exchanges a description of itself (operation, shape, dtype, mesh axes) and all
processes raise `RuntimeError` naming the first mismatch, instead of MPI's
undefined behaviour on mismatched calls."""
import os
import sys
import threading

import numpy as np

_LAUNCHER_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                       "SLURM_NTASKS")
_LAUNCHER_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")


class _State:
    def __init__(self):
        self.initialized = False
        self.process_id = 0
        self.num_processes = 1
        self.comm = None
        self.comm_cache = {}
        self.core_comms = {}
        self.mpi_library = None
        # Per process, `(CUDA ordinal, info)` of each GPU it uses; None: this
        # process's GPUs only (one process, or no launcher).
        self.gpu_table = None
        self.lock = threading.Lock()


global_state = _State()


def _env_int(names):
    for n in names:
        v = os.environ.get(n)
        if v is not None:
            try:
                return int(v), n
            except ValueError:
                continue
    return None, None


def detect_cluster():
    """(process count, this process's index, the variable read) that a
    launcher's environment gives, or (None, None, None) outside a launcher."""
    size, var = _env_int(_LAUNCHER_SIZE_VARS)
    rank, _ = _env_int(_LAUNCHER_RANK_VARS)
    if size is None:
        return None, None, None
    return size, (rank if rank is not None else 0), var


def _import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(
            "jax.distributed.initialize: this process was started by a launcher for several "
            "processes, but mpi4py is not installed (`pip install mpi4py`; microjax_rs runs "
            f"collectives between processes through MPI): {e}") from None
    return MPI


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, cluster_detection_method=None,
               initialization_timeout=300, coordinator_bind_address=None, **kwargs):
    """See `microjax_rs.distributed.initialize`."""
    st = global_state
    if st.initialized:
        raise RuntimeError("distributed.initialize should only be called once.")
    if cluster_detection_method not in (None, "mpi4py", "deactivate"):
        raise ValueError(f"cluster_detection_method {cluster_detection_method!r} is not supported "
                         f"by microjax_rs (None, 'mpi4py' or 'deactivate')")
    size, rank, var = (None, None, None)
    if cluster_detection_method != "deactivate":
        size, rank, var = detect_cluster()
    if size is None and cluster_detection_method == "mpi4py":
        size, rank, var = 1, 0, "mpi4py"
    if num_processes is not None and int(num_processes) < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}")
    if size is None:
        # No launcher: only a one-process "cluster" can start here.
        if num_processes not in (None, 1) or process_id not in (None, 0):
            raise RuntimeError(
                f"jax.distributed.initialize(num_processes={num_processes}, process_id={process_id}): "
                "microjax_rs starts the processes of a multi-process run with an MPI launcher "
                "(e.g. `mpirun -np 4 python train.py`); no launcher's environment was found")
        st.process_id, st.num_processes, st.comm = 0, 1, None
    else:
        comm = None
        if size > 1 or cluster_detection_method == "mpi4py":
            MPI = _import_mpi()
            comm = MPI.COMM_WORLD
            size, rank = comm.Get_size(), comm.Get_rank()
        if num_processes is not None and int(num_processes) != size:
            raise ValueError(f"jax.distributed.initialize: num_processes={num_processes} but the "
                             f"launcher started {size} processes ({var})")
        if process_id is not None and int(process_id) != rank:
            raise ValueError(f"jax.distributed.initialize: process_id={process_id} but the launcher "
                             f"gave this process rank {rank} ({var})")
        st.process_id, st.num_processes, st.comm = rank, size, comm
        if comm is not None and size > 1:
            _abort_on_uncaught_exceptions()
    ids = None
    if local_device_ids is not None:
        ids = [local_device_ids] if isinstance(local_device_ids, int) else list(local_device_ids)
        if not ids:
            raise ValueError("local_device_ids must not be empty")
    st.comm_cache = {}
    st.gpu_table = _gather_gpu_table(st.comm, ids)
    st.initialized = True


_HOOKED = []


def _abort_on_uncaught_exceptions():
    """An uncaught exception in one process aborts the whole run (MPI_Abort)
    once its traceback is printed: the other processes may be waiting in a
    collective this one will never join, and a clean exit would wait for them
    in MPI_Finalize. (A process killed or ended with `os._exit` is reported by
    the launcher, which stops the others.)"""
    if _HOOKED:
        return
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        comm = global_state.comm
        if comm is not None and global_state.num_processes > 1:
            try:
                sys.stderr.flush()
            finally:
                comm.Abort(1)

    sys.excepthook = hook
    _HOOKED.append(hook)


# What the device layer above tells this one about the process's GPUs
# (`register_gpu_hooks`, called when `_devices` is imported): its GPU rows for
# `local_device_ids`, and the CUDA ordinal of the default device when that is a
# GPU (else None).
_GPU_HOOKS = {"rows": lambda ids: [], "default_ordinal": lambda: None}


def register_gpu_hooks(rows, default_ordinal):
    _GPU_HOOKS.update(rows=rows, default_ordinal=default_ordinal)


def _gather_gpu_table(comm, local_device_ids):
    """Every process's GPUs (`(CUDA ordinal, info)` rows), gathered over
    `comm` (collective: every process calls it from `initialize`); None for
    one process using all its GPUs."""
    rows = _GPU_HOOKS["rows"](local_device_ids)
    if comm is None or comm.Get_size() == 1:
        return None if local_device_ids is None else [rows]
    return comm.allgather(rows)


def gpu_table():
    return global_state.gpu_table


def shutdown():
    """See `microjax_rs.distributed.shutdown`."""
    st = global_state
    if not st.initialized:
        return
    if st.comm is not None:
        st.comm.Barrier()
    st.gpu_table = None
    st.initialized = False
    st.process_id, st.num_processes, st.comm = 0, 1, None
    st.comm_cache = {}


def is_initialized():
    return global_state.initialized


def process_index():
    return global_state.process_id


def process_count():
    return global_state.num_processes


def multi_process():
    """True when collectives must cross processes."""
    return global_state.num_processes > 1


def world():
    return global_state.comm


def split(key, color, rank_key):
    """The sub-communicator of the processes with this `color` (ranks ordered
    by `rank_key`), cached under `key`. Collective over all processes: every
    process calls it with the same `key` in the same order (they trace the
    same program)."""
    st = global_state
    with st.lock:
        c = st.comm_cache.get(key)
        if c is None:
            c = st.comm_cache[key] = st.comm.Split(int(color), int(rank_key))
    return c


# ------------------------------------------------------------ the core's communicators

def mpi_library():
    """The path of the MPI library this process loaded (through mpi4py)."""
    st = global_state
    if getattr(st, "mpi_library", None):
        return st.mpi_library
    path = None
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                name = line.rsplit(None, 1)[-1] if "/" in line else ""
                if os.path.basename(name).startswith("libmpi.so"):
                    path = name
                    break
    except OSError:
        pass
    if path is None:
        import ctypes.util
        path = ctypes.util.find_library("mpi")
    if path is None:
        raise RuntimeError("collectives between processes: cannot find the MPI library mpi4py "
                           "loaded (libmpi.so)")
    st.mpi_library = path
    return path


def core_comm(comm):
    """The id the core's `process_*` primitives name `comm` by (registered
    once per communicator); also sets the core's mismatch check from the
    config."""
    from .. import _core
    st = global_state
    _core.set_collective_checks(checks_enabled())
    key = comm.handle
    entry = st.core_comms.get(key)
    if entry is None:
        # The communicator object is kept for the process's life, so its
        # handle is never freed and reused for another registration.
        cid = _core.register_mpi_communicator(mpi_library(), key)
        entry = st.core_comms[key] = (comm, cid)
        _register_nccl(comm, cid)
    return entry[1]


def _nccl_ordinal():
    """The CUDA ordinal of this process's default device when it is a GPU
    and NCCL loads (and `MICROJAX_NCCL` is not "0"), else None."""
    from .. import _core
    if os.environ.get("MICROJAX_NCCL", "") == "0":
        return None
    ordinal = _GPU_HOOKS["default_ordinal"]()
    available = getattr(_core, "nccl_available", None)
    if ordinal is None or available is None or not available():
        return None
    return ordinal


def _register_nccl(comm, cid):
    """Makes the NCCL communicator of `comm` on this process's GPU when every
    process of `comm` computes on a GPU with NCCL (decided together: NCCL's
    set-up is collective); the core's device collectives then run through it,
    and through MPI on the host otherwise. Rank 0 makes NCCL's unique id and
    sends it over MPI."""
    from .. import _core
    ordinal = _nccl_ordinal()
    if not all(comm.allgather(ordinal is not None)):
        return
    uid = _core.nccl_unique_id() if comm.Get_rank() == 0 else None
    uid = comm.bcast(uid, root=0)
    _core.register_nccl_communicator(cid, ordinal, uid)


# ------------------------------------------------------------ host collectives

def checks_enabled():
    from .. import config
    v = getattr(config, "microjax_collective_checks", None)
    if v:
        return True
    return os.environ.get("MICROJAX_COLLECTIVE_CHECKS", "") not in ("", "0")


def _check(comm, what):
    """All processes of `comm` compare `what` (a string); RuntimeError on any
    difference, raised by every process."""
    seen = comm.allgather(what)
    if any(s != seen[0] for s in seen):
        lines = "\n".join(f"  process rank {r} of the group: {s}" for r, s in enumerate(seen))
        raise RuntimeError(
            "mismatched collectives across processes (each process must run the same "
            f"collectives in the same order with the same shapes and dtypes):\n{lines}")


_MPI_NATIVE = {"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
               "uint32", "uint64", "complex64", "complex128"}


def _wire(x, comm, what):
    """Checks (when checks are on) that every process of `comm` runs this
    collective, then gives a C-contiguous array MPI can move (bool as uint8,
    half floats widened to float32) and the dtype to give results back in
    (None: unchanged)."""
    x = np.asarray(x)
    if checks_enabled():
        _check(comm, f"{what} {x.dtype.name}{list(x.shape)}")
    if x.dtype == np.bool_:
        return np.array(x, dtype=np.uint8, order="C"), x.dtype
    if x.dtype.name not in _MPI_NATIVE:
        return np.array(x, dtype=np.float32, order="C"), x.dtype
    return (x if x.flags.c_contiguous else np.array(x, order="C")), None


def _unwire(out, orig):
    return out.astype(orig) if orig is not None else out


def allgather(x, comm, what="all_gather"):
    """`x` from every process of `comm`, stacked in rank order: [size, *x.shape]."""
    buf, orig = _wire(x, comm, what)
    out = np.empty((comm.Get_size(),) + buf.shape, buf.dtype)
    comm.Allgather(buf, out)
    return _unwire(out, orig)


def bcast(x, comm, root=0, what="broadcast"):
    buf, orig = _wire(x, comm, what)
    buf = buf.copy()  # Bcast writes into it
    comm.Bcast(buf, root=root)
    return _unwire(buf, orig)


def barrier(comm=None, what="barrier"):
    comm = comm if comm is not None else global_state.comm
    if comm is None:
        return
    if checks_enabled():
        _check(comm, what)
    comm.Barrier()
