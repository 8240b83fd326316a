"""`jax.experimental.multihost_utils`: moving host data between the processes
of a multi-process run (`jax.distributed.initialize`). In a one-process run
every function works on the one process's data."""
import numpy as np

from .. import numpy as jnp
from .._src import distributed
from .._src.global_array import ProcessShardedArray, global_from_blocks, process_box
from ..tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["assert_equal", "broadcast_one_to_all", "global_array_to_host_local_array",
           "host_local_array_to_global_array", "process_allgather", "sync_global_devices"]


def _is_global(x):
    return isinstance(x, ProcessShardedArray)


def process_allgather(in_tree, tiled=False):
    """Every process's data, on every process, as NumPy arrays.

    A global array split between processes (`ProcessShardedArray`) comes back
    whole. Any other leaf is process-local data: the processes' values stacked
    along a new leading axis (in process order), or concatenated along the
    first axis when `tiled`."""
    comm = distributed.world()

    def gather(x):
        if isinstance(x, ProcessShardedArray):
            mesh = x.sharding.mesh
            blocks = comm.allgather(np.asarray(x._local))
            boxes = [process_box(mesh, p) for p in range(distributed.process_count())]
            return global_from_blocks(blocks, boxes, x.sharding._dim_axes(len(x.shape)), x.shape)
        a = np.asarray(x)
        if comm is None:
            return a if tiled else a[None]
        parts = distributed.allgather(a, comm, "process_allgather")
        return np.concatenate(list(parts), axis=0) if tiled else parts

    return tree_map(gather, in_tree, is_leaf=_is_global)


def broadcast_one_to_all(in_tree, is_source=None):
    """The source process's values (default: process 0's) on every process."""
    comm = distributed.world()
    if comm is None:
        return tree_map(jnp.asarray, in_tree)
    src = distributed.process_index() == 0 if is_source is None else bool(is_source)
    flags = comm.allgather(src)
    if sum(flags) != 1:
        raise ValueError(f"broadcast_one_to_all: exactly one process must be the source, got "
                         f"{sum(flags)} (is_source per process: {flags})")
    root = flags.index(True)
    leaves, tree = tree_flatten(in_tree)
    out = [jnp.asarray(distributed.bcast(np.asarray(v), comm, root, "broadcast_one_to_all"))
           for v in leaves]
    return tree_unflatten(tree, out)


def sync_global_devices(name):
    """A barrier of every process; raises `AssertionError` when the processes
    arrive with different names."""
    comm = distributed.world()
    if comm is None:
        return
    names = comm.allgather(str(name))
    if any(n != names[0] for n in names):
        raise AssertionError(f"sync_global_devices name mismatch: {names}")
    comm.Barrier()


def assert_equal(in_tree, fail_message=""):
    """Raises `AssertionError` unless every process holds equal values."""
    comm = distributed.world()
    if comm is None:
        return
    leaves, _ = tree_flatten(in_tree)
    mine = [np.asarray(v) for v in leaves]
    everyone = comm.allgather(mine)
    for p, theirs in enumerate(everyone):
        for a, b in zip(mine, theirs):
            if a.shape != b.shape or not np.array_equal(a, b):
                raise AssertionError(
                    f"{fail_message} Expected: {a}; got: {b} (process {p}).")


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """Each process's local arrays as the global arrays they are blocks of
    (`pspecs`, a pytree prefix of `local_inputs`, says how)."""
    from .._src.global_array import make_array_from_process_local_data
    from ..sharding import NamedSharding, PartitionSpec
    from ..tree_util import broadcast_prefix
    leaves, tree = tree_flatten(local_inputs)
    specs = broadcast_prefix(pspecs, local_inputs,
                             is_leaf=lambda s: s is None or isinstance(s, PartitionSpec))
    out = [make_array_from_process_local_data(NamedSharding(global_mesh, s or PartitionSpec()), x)
           for x, s in zip(leaves, specs)]
    return tree_unflatten(tree, out)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """The inverse of `host_local_array_to_global_array`: this process's block of each."""
    return tree_map(lambda x: x.addressable_data(0) if isinstance(x, ProcessShardedArray) else x,
                    global_inputs, is_leaf=_is_global)
