"""Arrays of a multi-process run whose data spans processes.

A `ProcessShardedArray` is a global array (`shape` is the global shape) of
which this process holds one block: the elements of the devices of its own
process, in mesh order. `shard_map` takes it and returns it for mesh axes that
span processes; `multihost_utils.process_allgather` assembles it on every
process. Outside those it has no values this process can read (as JAX's
non-addressable arrays): converting it to NumPy raises `RuntimeError`, and
`jnp` functions reject it. It is a pytree node whose one child is the local
block, so `jit`, `grad` and `vmap` pass it through to `shard_map` (and a
`tree_map` over it maps the local block)."""
import math

import numpy as np

from ..tree_util import register_pytree_node


class ProcessShardedArray:
    """A global `jax.Array` spanning the devices of several processes."""

    __slots__ = ("_local", "shape", "dtype", "sharding")

    def __init__(self, local, shape, dtype, sharding):
        self._local = local
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype) if not isinstance(dtype, str) else dtype
        self.sharding = sharding

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    is_fully_addressable = False

    @property
    def is_fully_replicated(self):
        return False

    def addressable_data(self, index):
        """The block of this process (`index` 0: microjax_rs keeps a process's
        devices' pieces together)."""
        if index != 0:
            raise IndexError(f"addressable_data: this process holds one block, got index {index}")
        return self._local

    @property
    def addressable_shards(self):
        from . import distributed
        p = distributed.process_index()
        mesh = self.sharding.mesh
        box = process_box(mesh, p)
        imap = self.sharding.devices_indices_map(self.shape)
        start = _block_start(self.sharding, self.shape, box)
        out = []
        for d, idx in imap.items():
            if d.process_index != p:
                continue
            local_idx = tuple(slice(s.start - o if s.start is not None else None,
                                    s.stop - o if s.stop is not None else None)
                              for s, o in zip(idx, start))
            out.append(_LocalShard(d, idx, self._local[local_idx]))
        return out

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(
            "Fetching value for `jax.Array` that spans non-addressable (non process local) "
            "devices is not possible. You can use "
            "`jax.experimental.multihost_utils.process_allgather` to print the global array or "
            "use `.addressable_shards` method of jax.Array to inspect the addressable (process "
            "local) shards.")

    def __repr__(self):
        return (f"ProcessShardedArray(shape={self.shape}, dtype={self.dtype}, "
                f"sharding={self.sharding!r}, local block {tuple(getattr(self._local, 'shape', ()))})")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]


class _LocalShard:
    """One of this process's devices' pieces of a `ProcessShardedArray`
    (`device`, `index` into the global array, `data`, `replica_id`)."""

    def __init__(self, device, index, data):
        self.device = device
        self.index = index
        self.data = data
        self.replica_id = 0


register_pytree_node(
    ProcessShardedArray,
    lambda a: ((a._local,), (a.shape, str(a.dtype), a.sharding)),
    lambda aux, ch: ProcessShardedArray(ch[0], aux[0], aux[1], aux[2]),
)


# ------------------------------------------------------------ process layout

def process_box(mesh, process):
    """Per mesh axis, (size, local extent, offset) of the devices of
    `process`: they must form one box of the mesh (every combination of their
    coordinates, each contiguous), as a mesh built from `jax.devices()` in
    order gives."""
    devs = np.asarray(mesh.devices, dtype=object)
    coords = [c for c in np.ndindex(*devs.shape) if getattr(devs[c], "process_index", 0) == process]
    if not coords:
        raise ValueError(f"the mesh {mesh} has no device of process {process}")
    box = {}
    count = 1
    for k, name in enumerate(mesh.axis_names):
        vals = sorted({c[k] for c in coords})
        if vals != list(range(vals[0], vals[0] + len(vals))):
            raise NotImplementedError(
                f"the devices of process {process} are not contiguous along mesh axis {name!r}; "
                "microjax_rs needs each process's devices to form one block of the mesh")
        box[name] = (devs.shape[k], len(vals), vals[0])
        count *= len(vals)
    if count != len(coords):
        raise NotImplementedError(
            f"the devices of process {process} do not form one block of the mesh {mesh}")
    return box


def spanning_axes(mesh, process):
    """The mesh axes along which devices of more than one process lie."""
    box = process_box(mesh, process)
    return {a for a, (size, local, _) in box.items() if local < size}


def _block_start(sharding, shape, box):
    """The global index of the first element of this process's block."""
    start = []
    for dim, names in zip(shape, sharding._dim_axes(len(shape))):
        n = math.prod(box[a][0] for a in names) if names else 1
        step = dim // n if n else dim
        k = 0
        for a in names:
            k = k * box[a][0] + box[a][2]
        start.append(k * step)
    return start


def local_block(x, spec_axes, box):
    """This process's block of the global NumPy array `x` (dimension by
    dimension: the pieces of the process's coordinates along the dimension's
    mesh axes, in order)."""
    x = np.asarray(x)
    for d, names in enumerate(spec_axes):
        if not names or all(box[a][1] == box[a][0] for a in names):
            continue
        n = x.shape[d]
        sizes = [box[a][0] for a in names]
        b = n // math.prod(sizes)
        shp = x.shape[:d] + tuple(sizes) + (b,) + x.shape[d + 1:]
        y = x.reshape(shp)
        idx = [slice(None)] * y.ndim
        for j, a in enumerate(names):
            size, local, off = box[a]
            idx[d + j] = slice(off, off + local)
        y = y[tuple(idx)]
        x = y.reshape(x.shape[:d] + (-1,) + x.shape[d + 1:])
    return x


def global_from_blocks(blocks, boxes, spec_axes, shape):
    """The global NumPy array from every process's block (`blocks[p]`, `boxes[p]`)."""
    out = None
    for blk, box in zip(blocks, boxes):
        blk = np.asarray(blk)
        if out is None:
            out = np.zeros(shape, blk.dtype)
        # Scatter: reshape the destination as the blocks were cut.
        view_shape = []
        idx = []
        for d, names in enumerate(spec_axes):
            if not names:
                view_shape.append(shape[d])
                idx.append(slice(None))
                continue
            sizes = [box[a][0] for a in names]
            b = shape[d] // math.prod(sizes)
            view_shape.extend(sizes + [b])
            for a in names:
                size, local, off = box[a]
                idx.append(slice(off, off + local))
            idx.append(slice(None))
        v = out.reshape(view_shape)
        sub_shape = v[tuple(idx)].shape
        v[tuple(idx)] = blk.reshape(sub_shape)
    return out


# ------------------------------------------------------------ constructors

def _factors(sharding, ndim, box):
    """Per dimension, how many processes' blocks make it up."""
    out = []
    for names in sharding._dim_axes(ndim):
        out.append(math.prod(box[a][0] // box[a][1] for a in names) if names else 1)
    return out


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """`jax.make_array_from_process_local_data`: the global array of which
    this process holds `local_data` (its devices' part, in mesh order).

    In a one-process run, and for a sharding that does not split the array
    between processes (every process passes the whole value), this is an
    ordinary array. Otherwise it is a `ProcessShardedArray` of global shape
    `global_shape` (default: each dimension split between processes
    multiplied by the number of their blocks)."""
    from .. import numpy as jnp
    from . import distributed
    from ..sharding import NamedSharding
    x = jnp.asarray(local_data)
    if not distributed.multi_process() or not isinstance(sharding, NamedSharding):
        if global_shape is not None and tuple(global_shape) != tuple(x.shape):
            raise ValueError(f"make_array_from_process_local_data: global_shape {tuple(global_shape)} "
                             f"differs from the data's shape {tuple(x.shape)} in a one-process run")
        from .. import device_put
        return device_put(x, sharding)
    box = process_box(sharding.mesh, distributed.process_index())
    factors = _factors(sharding, x.ndim, box)
    shape = tuple(n * f for n, f in zip(x.shape, factors))
    if global_shape is not None and tuple(global_shape) != shape:
        raise ValueError(
            f"make_array_from_process_local_data: local data of shape {tuple(x.shape)} with "
            f"{sharding} makes a global shape {shape}, not {tuple(global_shape)}")
    if all(f == 1 for f in factors):
        return x
    return ProcessShardedArray(x, shape, x.dtype.name, sharding)


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """`jax.make_array_from_callback`: the array of global `shape` whose piece
    at each of this process's devices is `data_callback(index)` (`index` a
    tuple of slices of the global array)."""
    from .. import numpy as jnp
    from . import distributed
    shape = tuple(int(d) for d in shape)
    imap = sharding.devices_indices_map(shape)
    p = distributed.process_index()
    mine = {d: idx for d, idx in imap.items() if getattr(d, "process_index", 0) == p}
    mesh = getattr(sharding, "mesh", None)
    if distributed.multi_process() and mesh is not None:
        box = process_box(mesh, p)
        factors = _factors(sharding, len(shape), box)
        start = _block_start(sharding, shape, box)
    else:
        factors, start = [1] * len(shape), [0] * len(shape)
    block_shape = tuple(n // f for n, f in zip(shape, factors))
    out = None
    for idx in mine.values():
        piece = np.asarray(data_callback(idx))
        if out is None:
            out = np.empty(block_shape, dtype or piece.dtype)
        local = tuple(slice((s.start or 0) - o, (s.stop if s.stop is not None else n) - o)
                      for s, o, n in zip(idx, start, shape))
        out[local] = piece
    if out is None:
        raise ValueError("make_array_from_callback: this process has no device of the sharding")
    return make_array_from_process_local_data(sharding, out, shape)
