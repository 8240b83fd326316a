"""`jax.shard_map`: a function of per-device blocks, mapped over a device mesh.

Each argument is split into blocks along the mesh axes its `in_specs` entry
names; the function runs once per mesh position on that position's blocks,
with collectives (`lax.psum`, `all_gather`, `axis_index`, ...) over the mesh
axis names; the results are put together as `out_specs` says. A mesh axis an
output's spec does not name means the output is the same at every position
along it: with `check_vma` (the default) an output that varies along such an
axis raises `ValueError`.

On one process the map is a `vmap` per manual mesh axis (outermost first), so
`shard_map` composes with `jit`, `grad`, `vmap` and itself like any other
function. In a multi-process run (`jax.distributed.initialize` under an MPI
launcher) each process maps over its own devices only and collectives over
axes that span processes go through MPI (`_src/spmd.py`, `_src/spmd_collectives.py`); arguments split over
those axes are `ProcessShardedArray`s (`jax.make_array_from_process_local_data`)
or whole arrays every process holds."""
import math

from . import core
from ._src import distributed, spmd, spmd_collectives
from ._src.global_array import ProcessShardedArray, process_box
from ._src.util import wraps as _wraps
from ._vmap import vmap
from .sharding import AbstractMesh, Infer, Mesh, NamedSharding, PartitionSpec, get_mesh
from .tree_util import broadcast_prefix, tree_flatten, tree_map, tree_unflatten


def _is_spec(s):
    return s is None or isinstance(s, PartitionSpec)


def _dims(spec, ndim, what, manual, where):
    """Per array dimension, the tuple of mesh axes `spec` splits it over."""
    entries = () if spec is None else tuple(spec)
    if len(entries) > ndim:
        raise ValueError(
            f"shard_map {what} entry {spec} has length {len(entries)}, but {where} has rank "
            f"{ndim}: entries in {what} must be no longer than the number of axes of the value "
            f"(for rank-0 values use P())")
    out = []
    seen = set()
    for e in entries + (None,) * (ndim - len(entries)):
        if e is None or e is PartitionSpec.UNCONSTRAINED:
            out.append(())
            continue
        names = tuple(e) if isinstance(e, tuple) else (e,)
        for n in names:
            if n not in manual:
                raise ValueError(
                    f"shard_map {what} argument must refer to an axis marked as manual "
                    f"({frozenset(manual)}), but:\n\n  {what} refers to {n!r}\n\n"
                    f"Check the {what} values passed to shard_map.")
            if n in seen:
                raise ValueError(f"shard_map {what} entry {spec} names mesh axis {n!r} twice")
            seen.add(n)
        out.append(names)
    return out


def _infer(x, mesh):
    if isinstance(x, ProcessShardedArray):
        return x.sharding.spec
    s = getattr(x, "sharding", None) if isinstance(x, core.ArrayImpl) else None
    if isinstance(s, NamedSharding) and s.mesh == mesh:
        return s.spec
    return PartitionSpec()


def _mesh_box(mesh):
    """Per axis (size, local extent, offset); the whole mesh on one process."""
    if isinstance(mesh, Mesh) and distributed.multi_process():
        return process_box(mesh, distributed.process_index())
    return {a: (s, s, 0) for a, s in zip(mesh.axis_names, mesh.axis_sizes)}


def _to_blocks(x, dims, box, order, local):
    """`x` as [local extent of each mesh axis it is split over, in `order`] +
    block shape; `local`: `x` already holds only this process's part."""
    from . import lax
    from . import numpy as jnp
    shape = core.get_aval(x).shape
    new_shape, pos, cut = [], {}, []
    for n, names in zip(shape, dims):
        if not names:
            new_shape.append(n)
            continue
        exts = [box[a][1] if local else box[a][0] for a in names]
        b = n // math.prod(exts)
        for a, e in zip(names, exts):
            pos[a] = len(new_shape)
            new_shape.append(e)
            size, ext, off = box[a]
            if not local and ext < size:
                cut.append((len(new_shape) - 1, off, off + ext))
        new_shape.append(b)
    if not pos:
        return x
    y = jnp.reshape(x, new_shape)
    for axis, lo, hi in cut:
        y = lax.slice_in_dim(y, lo, hi, axis=axis)
    front = [pos[a] for a in order if a in pos]
    rest = [i for i in range(len(new_shape)) if i not in set(front)]
    perm = front + rest
    return y if perm == list(range(len(perm))) else jnp.transpose(y, perm)


def _from_blocks(y, order, dims):
    """Inverse of `_to_blocks` for this process: [extent per axis in `order`] +
    block shape -> the array of this process's part."""
    from . import numpy as jnp
    if not order:
        return y
    shape = core.get_aval(y).shape
    k = len(order)
    perm, out_shape = [], []
    for d, names in enumerate(dims):
        perm.extend(order.index(a) for a in names)
        perm.append(k + d)
        out_shape.append(math.prod(shape[order.index(a)] for a in names) * shape[k + d])
    if perm != list(range(len(perm))):
        y = jnp.transpose(y, perm)
    return jnp.reshape(y, out_shape)


def _replication_error(fname, mesh, spec, axes):
    names = ", ".join(repr(a) for a in axes)
    return ValueError(
        f"shard_map applied to the function {fname!r} was given out_specs which require "
        f"replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
        f"{tuple(mesh.axis_names)}.\n\nout_specs is {spec} which implies that the corresponding "
        f"output value is replicated across mesh axis {names}, but it varies along it.\n\n"
        f"Check if these output values are meant to be replicated over those mesh axes. If not, "
        f"consider revising the corresponding out_specs entries. If so, consider disabling the "
        f"check by passing the check_vma=False argument to `jax.shard_map`.")


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma=True):
    """Maps `f` over the blocks of its arguments on the devices of `mesh`.

    Args:
      f: the per-block function (positional arguments; pytrees of arrays).
      out_specs: a `PartitionSpec` per output (a pytree prefix of the outputs):
        which mesh axes each output dimension is concatenated over; an axis not
        named means the output is replicated along it.
      in_specs: a `PartitionSpec` per argument (a pytree prefix of the
        arguments), or `jax.sharding.Infer` (the default: from the arguments'
        shardings, `P()` for an array with none).
      mesh: a `Mesh` (or `AbstractMesh`); default the current mesh
        (`jax.set_mesh`, `jax.sharding.use_mesh`, `with mesh:`).
      axis_names: the manual mesh axes (default all); the others are not
        mapped (the function sees whole arrays along them).
      check_vma: raise `ValueError` when an output varies along a mesh axis
        its spec leaves out (off: such an output is taken from position 0).

    Without `f`, returns a decorator.

    >>> import numpy as np, microjax_rs as jax, microjax_rs.numpy as jnp
    >>> from microjax_rs.sharding import Mesh, PartitionSpec as P
    >>> jax.config.update("jax_num_cpu_devices", 4)
    >>> mesh = Mesh(np.array(jax.devices()), ("x",))
    >>> total = jax.shard_map(lambda b: jax.lax.psum(b.sum(), "x"), mesh=mesh,
    ...                       in_specs=P("x"), out_specs=P())
    >>> float(total(jnp.arange(8.0)))
    28.0
    >>> jax.config.update("jax_num_cpu_devices", -1)
    """
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got {f} "
                        f"of type {type(f)}.")
    fname = getattr(f, "__name__", type(f).__name__)

    @_wraps(f)
    def shard_mapped(*args, **kwargs):
        if kwargs:
            raise TypeError(f"shard_map'd function {fname!r} takes its arguments positionally "
                            f"(in_specs match them); got keyword arguments {sorted(kwargs)}")
        m = mesh if mesh is not None else get_mesh()
        if m is None:
            raise ValueError("shard_map requires a mesh: pass mesh= or call it inside "
                             "`jax.set_mesh(mesh)` / `jax.sharding.use_mesh(mesh)`")
        if not isinstance(m, (Mesh, AbstractMesh)):
            raise TypeError(f"shard_map requires mesh to be a Mesh or AbstractMesh, got {type(m)}")
        names = tuple(m.axis_names)
        sizes = dict(zip(names, m.axis_sizes))
        manual = set(axis_names) if axis_names else set(names)
        if not manual <= set(names):
            raise ValueError(f"shard_map axis_names {sorted(manual)} must be axes of the mesh "
                             f"{names}")
        order = [a for a in names if a in manual]
        box = _mesh_box(m)
        layout = spmd.AxisLayout(m, box, distributed.process_index()) if any(
            box[a][1] < box[a][0] for a in order) else None
        spanning = sorted(layout.spanning & manual) if layout else []

        leaves, in_tree = tree_flatten(args, is_leaf=lambda v: isinstance(v, ProcessShardedArray))
        if in_specs is Infer:
            specs = [_infer(x, m) for x in leaves]
        else:
            try:
                specs = broadcast_prefix(in_specs if not isinstance(in_specs, list) else tuple(in_specs),
                                         args, is_leaf=_is_spec)
            except ValueError as e:
                raise ValueError(f"shard_map in_specs {in_specs!r} must be a pytree prefix of the "
                                 f"arguments {in_tree}: {e}") from None
        blocked, used = [], []
        for i, (x, spec) in enumerate(zip(leaves, specs)):
            held_local = isinstance(x, ProcessShardedArray)
            if held_local:
                if layout is None:
                    raise ValueError("shard_map: a ProcessShardedArray argument needs a mesh "
                                     "whose axes span the processes holding it")
                gshape, val = x.shape, x._local
            else:
                val = x if isinstance(x, (core.ArrayImpl, core.Tracer)) else core.to_array(x)
                gshape = core.get_aval(val).shape
            dims = _dims(spec, len(gshape), "in_specs", manual, f"args[{i}] of shape {gshape}")
            for d, (n, axes) in enumerate(zip(gshape, dims)):
                k = math.prod(sizes[a] for a in axes)
                if axes and n % k:
                    raise ValueError(
                        f"shard_map applied to the function {fname!r} was given argument arrays "
                        f"with axis sizes that are not evenly divisible by the corresponding mesh "
                        f"axis sizes:\n\nThe mesh given has shape {tuple(m.axis_sizes)} with "
                        f"corresponding axis names {names}.\n\nargs[{i}] of shape {gshape} "
                        f"corresponds to in_specs of value {spec}, which maps array axis {d} (of "
                        f"size {n}) to mesh axes {axes} (of total size {k}), but {k} does not "
                        f"evenly divide {n}")
            axes_used = {a for t in dims for a in t}
            if layout is not None:
                # Shares of the cotangent of what is replicated over processes sum on the way out.
                rep = [a for a in spanning if not (held_local and a in axes_used)]
                val = spmd_collectives.broadcast_in(val, layout, rep)
            blocked.append(_to_blocks(val, dims, box, order, held_local))
            used.append(axes_used)

        def body(*blocks):
            return f(*tree_unflatten(in_tree, list(blocks)))

        out_spec_tree = out_specs if not isinstance(out_specs, list) else tuple(out_specs)
        fn = body
        for a in reversed(order):
            in_axes = tuple(0 if a in u else None for u in used)
            out_axes = tree_map(
                lambda s, a=a: 0 if (not check_vma or (s is not None and a in _spec_names(s)))
                else None,
                out_spec_tree, is_leaf=_is_spec)
            fn = vmap(fn, in_axes=in_axes, out_axes=out_axes, axis_name=a, axis_size=box[a][1])
        try:
            if layout is not None:
                with spmd.tracing(layout):
                    outs = fn(*blocked)
            else:
                outs = fn(*blocked)
        except ValueError as e:
            if "out_axes is None" in str(e):
                raise _replication_error(fname, m, out_specs, order) from None
            raise

        out_leaves, out_tree = tree_flatten(outs)
        try:
            ospecs = broadcast_prefix(out_spec_tree, outs, is_leaf=_is_spec)
        except ValueError as e:
            raise ValueError(f"shard_map out_specs {out_specs!r} must be a pytree prefix of the "
                             f"outputs {out_tree}: {e}") from None
        results = []
        for j, (y, spec) in enumerate(zip(out_leaves, ospecs)):
            named = _spec_names(spec)
            present = [a for a in order if a in named or not check_vma]
            nd = core.get_aval(y).ndim - len(present)
            dims = _dims(spec, nd, "out_specs", manual, f"output {j} (of block rank {nd})")
            if not check_vma:
                from . import numpy as jnp
                for k in reversed(range(len(present))):
                    if present[k] not in named:
                        y = jnp.take(y, 0, axis=k)
                present = [a for a in present if a in named]
                if layout is not None:
                    y = spmd_collectives.first_of(y, layout, [a for a in spanning if a not in named])
            y = _from_blocks(y, present, dims)
            if layout is None:
                results.append(y)
                continue
            y = spmd_collectives.share_out(y, layout, [a for a in spanning if a not in named])
            if any(a in named for a in spanning):
                lshape = core.get_aval(y).shape
                gshape = tuple(n * math.prod(box[a][0] // box[a][1] for a in axes)
                               for n, axes in zip(lshape, dims))
                results.append(ProcessShardedArray(y, gshape, core.get_aval(y).dtype_name,
                                                   NamedSharding(m, spec if spec is not None
                                                                 else PartitionSpec())))
            else:
                results.append(y)
        return tree_unflatten(out_tree, results)

    return shard_mapped


def _spec_names(spec):
    out = set()
    for e in (() if spec is None else tuple(spec)):
        if e is None or e is PartitionSpec.UNCONSTRAINED:
            continue
        out.update(e if isinstance(e, tuple) else (e,))
    return out
