"""Named-axis collectives (`jax.lax.psum`, `all_gather`, `axis_index`, ...).

A collective names an axis bound by an enclosing `vmap(..., axis_name=...)`
or `pmap`; values are per example, as in JAX. Naming an axis no enclosing
map binds raises `NameError` when the collective is called (also under
`jit`). The Rust batch rules turn each collective into array code over the
batch dim of the map that binds its axis."""
from .. import core
from ..core import Primitive
from .._src import spmd
from ..interpreters.batching import axis_env
from ..tree_util import tree_flatten, tree_map, tree_unflatten

(
    psum_p, pmax_p, pmin_p, all_gather_p, reduce_scatter_p, all_to_all_p, axis_index_p,
    ppermute_p,
) = map(
    Primitive,
    (
        "psum", "pmax", "pmin", "all_gather", "reduce_scatter", "all_to_all", "axis_index",
        "ppermute",
    ),
)


def _collectives():
    """The traced collectives between processes (the core's `process_*`
    primitives on the communicators `_src/distributed` registers): only a
    multi-process shard_map reaches them."""
    from .._src import spmd_collectives
    return spmd_collectives


def _names(axis_name):
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"axis names must be strings in microjax_rs, got {n!r}")
    return tuple(names)


def _axis_sizes(names):
    """Size of each named axis, innermost binding first; NameError if unbound."""
    env = axis_env()
    sizes = []
    for n in names:
        if n not in env:
            raise NameError(
                f"unbound axis name: {n}. The following axis names (e.g. defined by pmap) are "
                f"available to collective operations: {sorted(env)}")
        sizes.append(env[n])
    return sizes


def _global_sizes(names):
    """`_axis_sizes`, with the whole size of mesh axes that span processes."""
    sizes = _axis_sizes(names)
    lay, cross = spmd.crossing(names)
    return [lay.size(n) if n in cross else s for n, s in zip(names, sizes)]


def axis_size(axis_name):
    """The size of the named mapped axis (a tuple of names: the product), a Python int."""
    n = 1
    for s in _global_sizes(_names(axis_name)):
        n *= int(s)
    return n


def _no_groups(axis_index_groups, fname):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{fname}: axis_index_groups is not supported by microjax_rs")


def _leaf(x):
    return x if isinstance(x, (core.ArrayImpl, core.Tracer)) else core.to_array(x)


def _all_reduce(p, x, axis_name, axis_index_groups):
    _no_groups(axis_index_groups, p.name)
    names = _names(axis_name)
    _axis_sizes(names)
    leaves, tree = tree_flatten(x)
    leaves = [_leaf(v) for v in leaves]
    if p is psum_p:
        # As JAX: booleans are summed as integers.
        from . import convert_element_type
        leaves = [convert_element_type(v, "int32") if core.get_aval(v).dtype_name == "bool" else v
                  for v in leaves]
    if not leaves:
        return x
    outs = p.bind(*leaves, axes=names, axis_index_groups=None)
    lay, cross = spmd.crossing(names)
    if cross:
        # The reduction over this process's devices, then over the processes.
        if p is psum_p:
            outs = [_collectives().xsum(o, lay, cross) for o in outs]
        else:
            op = "max" if p is pmax_p else "min"
            outs = [_collectives().xextremum(o, lay, cross, op) for o in outs]
    return tree_unflatten(tree, outs)


def psum(x, axis_name, *, axis_index_groups=None):
    """All-reduce sum of `x` (a pytree) over the named axis or axes."""
    return _all_reduce(psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """All-reduce maximum of `x` over the named axis or axes."""
    return _all_reduce(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """All-reduce minimum of `x` over the named axis or axes."""
    return _all_reduce(pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """All-reduce mean: `psum(x) / (size of the named axes)`."""
    _no_groups(axis_index_groups, "pmean")
    n = 1
    for s in _global_sizes(_names(axis_name)):
        n *= s
    return tree_map(lambda v: v / n, psum(x, axis_name))


def _one_name(axis_name, fname, axis_index_groups=None):
    """The one axis name of `axis_name` and its size (groups are not supported)."""
    _no_groups(axis_index_groups, fname)
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"{fname} over several axes at once is not supported, got {axis_name!r}")
    return names[0], _axis_sizes(names)[0]


def _canon(axis, rank, fname):
    if not -rank <= axis < rank:
        raise ValueError(f"{fname}: axis {axis} is out of bounds for rank {rank}")
    return axis % rank


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Gathers `x` from every example of the named axis: stacked along `axis`
    (a new axis), or concatenated along it when `tiled`."""
    name, size = _one_name(axis_name, "all_gather", axis_index_groups)

    def gather(v):
        v = _leaf(v)
        rank = core.get_aval(v).ndim
        d = _canon(axis, rank if tiled else rank + 1, "all_gather")
        y = all_gather_p.bind(v, all_gather_dimension=d, axis_name=name, axis_index_groups=None,
                              axis_size=size, tiled=bool(tiled))
        lay, cross = spmd.crossing((name,))
        if cross:
            # Every process's gathered block, in coordinate order, joined along `d`.
            from . import collapse, transpose
            g = _collectives().xgather(y, lay, name)
            perm = list(range(1, g.ndim))
            perm.insert(d, 0)
            y = collapse(transpose(g, perm), d, d + 2)
        return y

    return tree_map(gather, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """`psum`, then example `j` keeps block `j` of `scatter_dimension`."""
    name, size = _one_name(axis_name, "psum_scatter", axis_index_groups)
    lay, cross = spmd.crossing((name,))
    if cross:
        size = lay.size(name)

    def scatter(v):
        v = _leaf(v)
        aval = core.get_aval(v)
        d = _canon(scatter_dimension, aval.ndim, "psum_scatter")
        if not tiled and aval.shape[d] != size:
            raise ValueError(f"psum_scatter: the scatter dimension {d} of shape {aval.shape} must "
                             f"have the axis size {size}")
        if tiled and aval.shape[d] % size:
            raise ValueError(f"psum_scatter: the scatter dimension {d} of shape {aval.shape} must "
                             f"be a multiple of the axis size {size}")
        if cross:
            # The whole sum, then this position's block of it.
            from . import dynamic_index_in_dim, dynamic_slice_in_dim
            total = psum(v, name)
            i = axis_index(name)
            if tiled:
                blk = aval.shape[d] // size
                return dynamic_slice_in_dim(total, i * blk, blk, d)
            return dynamic_index_in_dim(total, i, d, keepdims=False)
        return reduce_scatter_p.bind(v, scatter_dimension=d, axis_name=name, axis_index_groups=None,
                                     axis_size=size, tiled=bool(tiled))

    return tree_map(scatter, x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Example `j` receives block `j` of `split_axis` from every example, in
    example order along `concat_axis` (a new axis of the axis size unless
    `tiled`, which concatenates instead)."""
    name, size = _one_name(axis_name, "all_to_all", axis_index_groups)
    lay, cross = spmd.crossing((name,))
    if cross:
        size = lay.size(name)
    from . import expand_dims, squeeze

    def tiled_exchange(v, split, concat):
        if not cross:
            return all_to_all_p.bind(v, split_axis=split, concat_axis=concat, axis_name=name,
                                     axis_index_groups=None, axis_size=size)
        # Across processes: every position's operand (all_gather), of which
        # position j keeps block j of `split` from each, joined along `concat`
        # in position order (the gather holds size times the operand).
        from . import collapse, dynamic_slice_in_dim, transpose
        g = all_gather(v, name)
        blk = core.get_aval(v).shape[split] // size
        mine = dynamic_slice_in_dim(g, axis_index(name) * blk, blk, split + 1)
        perm = list(range(1, mine.ndim))
        perm.insert(concat, 0)
        return collapse(transpose(mine, perm), concat, concat + 2)

    def exchange(v):
        v = _leaf(v)
        aval = core.get_aval(v)
        split = _canon(split_axis, aval.ndim, "all_to_all")
        concat = _canon(concat_axis, aval.ndim, "all_to_all")
        if tiled:
            if aval.shape[split] % size:
                raise ValueError(f"all_to_all: split axis {split} of shape {aval.shape} must be a "
                                 f"multiple of the axis size {size}")
            return tiled_exchange(v, split, concat)
        if aval.shape[split] != size:
            raise ValueError(f"all_to_all: split axis {split} of shape {aval.shape} must equal the "
                             f"axis size {size}")
        # A size-1 axis placed so that, once the split axis (now of size 1) is
        # squeezed, the gathered axis sits at `concat_axis` of the result.
        c = concat if concat <= split else concat + 1
        s = split + 1 if c <= split else split
        y = tiled_exchange(expand_dims(v, (c,)), s, c)
        return squeeze(y, (s,))

    return tree_map(exchange, x)


def axis_index(axis_name):
    """The index of the current example along the named axis (int32)."""
    name, _ = _one_name(axis_name, "axis_index")
    i = axis_index_p.bind(axis_name=name)
    lay, cross = spmd.crossing((name,))
    return i + lay.offset(name) if cross else i


def ppermute(x, axis_name, perm):
    """Example `dst` receives example `src`'s `x` for each `(src, dst)` in
    `perm`; examples that receive nothing get zeros."""
    name, size = _one_name(axis_name, "ppermute")
    lay, cross = spmd.crossing((name,))
    if cross:
        size = lay.size(name)
    perm = tuple((int(s), int(d)) for s, d in perm)
    for s, d in perm:
        if not (0 <= s < size and 0 <= d < size):
            raise ValueError(f"ppermute: pair {(s, d)} is out of range for an axis of size {size}")
    if len({s for s, _ in perm}) != len(perm) or len({d for _, d in perm}) != len(perm):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}")
    if cross:
        # Across processes: every position's value, then each takes its source's.
        import numpy as np

        from . import broadcast, dynamic_index_in_dim, full_like, ge, max as lax_max, select
        src_of = np.full(size, -1, np.int32)
        for s, d in perm:
            src_of[d] = s
        src = dynamic_index_in_dim(core.to_array(src_of), axis_index(name), 0, keepdims=False)
        zero = full_like(src, 0)

        def take(v):
            g = all_gather(_leaf(v), name)
            y = dynamic_index_in_dim(g, lax_max(src, zero), 0, keepdims=False)
            keep = broadcast(ge(src, zero), tuple(y.shape))
            return select(keep, y, full_like(y, 0))

        return tree_map(take, x)
    return tree_map(lambda v: ppermute_p.bind(_leaf(v), axis_name=name, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """`ppermute` with `perm[j]` the source of example `j`."""
    return ppermute(x, axis_name, [(s, d) for d, s in enumerate(perm)])


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the mapped axis `axis_name` with positional `axis` of `x`: an
    `all_to_all` splitting and concatenating along `axis`, tiled (the axis
    size of `x` along `axis` must equal the mapped axis size, as JAX)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups, tiled=True)


def with_sharding_constraint(x, shardings):
    """Asks that each array of the pytree ``x`` be laid out as ``shardings``
    says (a ``Sharding``, or a pytree of them that is a prefix of ``x``).

    microjax_rs runs one process: the values are unchanged. A concrete array
    comes back placed as its sharding says (``device_put``, so its
    ``.sharding`` is the one given); under ``jit``/``grad``/``vmap`` the value
    passes through. JAX's checks apply: ``None`` leaves and non-sharding leaves
    are refused, a bare ``PartitionSpec`` needs a context mesh (none can be set
    here: ``RuntimeError``), a ``NamedSharding`` may only name ``Auto`` mesh
    axes and must not have more entries than the value has dimensions.

    Example:
      >>> import microjax_rs as jax
      >>> from microjax_rs.sharding import AxisType, NamedSharding, PartitionSpec as P
      >>> mesh = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
      >>> y = jax.lax.with_sharding_constraint(jax.numpy.ones((2, 2)), NamedSharding(mesh, P("x")))
      >>> y.sharding.spec
      P('x')
    """
    from ..sharding import AxisType, NamedSharding, PartitionSpec, Sharding
    from ..tree_util import broadcast_prefix

    leaves, tree = tree_flatten(x)
    try:
        specs = broadcast_prefix(shardings, x, is_leaf=lambda s: s is None)
    except ValueError as e:
        raise ValueError("with_sharding_constraint shardings specification must be a tree prefix "
                         f"of the corresponding value; {e}") from None
    for leaf, s in zip(leaves, specs):
        if s is None:
            raise ValueError("One of with_sharding_constraint arguments got sharding None which is not "
                             "allowed. Please only pass `jax.sharding.Sharding` instances.")
        if isinstance(s, PartitionSpec):
            raise RuntimeError(
                "with_sharding_constraint requires a non-empty mesh in context if you are passing "
                "`PartitionSpec`s to shardings. You can define a context mesh via `jax.set_mesh(mesh)`. "
                "Alternatively, provide `Sharding`s to shardings and then the mesh context manager is "
                "not required.")
        if not isinstance(s, Sharding):
            raise TypeError("shardings leaf specifications are expected to be PartitionSpec instances "
                            f"or None, but got {s}")
        if not isinstance(s, NamedSharding):
            continue
        mesh = s.mesh
        kinds = dict(zip(mesh.axis_names, mesh.axis_types))
        if any(kinds.get(a) != AxisType.Auto for a in s._used_axes()):
            raise ValueError("The spec of NamedSharding passed to with_sharding_constraint can only refer "
                             f"to Auto axes of the mesh. Got spec={s.spec} and mesh={mesh}. You probably "
                             "meant to use `reshard` API?")
        ndim = core.get_aval(leaf).ndim
        if len(s.spec) > ndim:
            raise ValueError(
                f"One of with_sharding_constraint arguments is incompatible with its sharding annotation "
                f"{s}: Sharding {s} is only valid for values of rank at least {len(s.spec)}, but was "
                f"applied to a value of rank {ndim}.")
    if any(isinstance(leaf, core.Tracer) for leaf in leaves) or core.current_trace() is not None:
        return x
    from .._devices import device_put

    def place(leaf, s):
        # Placement over GPU devices is the executor's (device_put refuses a
        # multi-GPU sharding): the value is left where it is.
        return device_put(leaf, s) if all(d.platform == "cpu" for d in s.device_set) else leaf

    return tree_unflatten(tree, [place(leaf, s) for leaf, s in zip(leaves, specs)])
