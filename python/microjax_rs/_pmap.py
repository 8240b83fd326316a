"""`pmap` (JAX's signature and semantics) on the vmap machinery.

The mapped axis must fit the available devices (the CPU devices, `jax.devices("cpu")`), as
in JAX; the whole map then runs as one jitted, vmapped program on the host.
Multi-device execution comes with the GPU executors.

In a multi-process run (`jax.distributed.initialize` under an MPI launcher)
each process maps over its own devices, as in JAX: its arguments' mapped axis
is its local share and its outputs are its devices' values, while collectives
over `axis_name` span the same axis of every process (the axis's size is the
process count times the local size; `axis_index` counts every process's
devices in process order). Every process must map the same size."""

from .api import _num_cpu_devices, jit
from ._src import distributed, spmd
from ._vmap import mapped_axis_size, vmap
from ._src.util import wraps as _wraps


def _static_positions(static_broadcasted_argnums, nargs):
    nums = static_broadcasted_argnums
    if isinstance(nums, int):
        nums = (nums,)
    out = set()
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(f"pmap static_broadcasted_argnums {i} is out of range for {nargs} "
                             f"positional arguments")
        out.add(i % nargs)
    return out


def _with_statics(fun, statics, nargs):
    """`fun` of the dynamic positional arguments, the static ones fixed."""
    def call(*dyn_args, **kwargs):
        it = iter(dyn_args)
        return fun(*[statics[i] if i in statics else next(it) for i in range(nargs)], **kwargs)

    return call


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(), global_arg_shapes=None):
    """Parallel map of `fun` over the leading (or `in_axes`) axis of its
    arguments, with collectives over `axis_name`."""
    if not callable(fun):
        raise TypeError(f"pmap requires a callable, got {fun!r}")
    if global_arg_shapes is not None:
        raise NotImplementedError("pmap global_arg_shapes is not supported")
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend!r}: microjax_rs runs on 'cpu'")
    compiled = {}

    def mapped(args, kwargs):
        """The jitted vmap for these arguments' statics and the dynamic arguments."""
        statics = _static_positions(static_broadcasted_argnums, len(args))
        dyn = tuple(a for i, a in enumerate(args) if i not in statics)
        axes = in_axes
        if isinstance(axes, list):
            axes = tuple(axes)
        if isinstance(axes, tuple) and statics:
            if len(axes) != len(args):
                raise ValueError(f"pmap in_axes must have one entry per positional argument, got "
                                 f"{len(axes)} for {len(args)}")
            axes = tuple(a for i, a in enumerate(axes) if i not in statics)
        size = mapped_axis_size(axes, dyn, kwargs, axis_size)
        available = len(devices) if devices is not None else _num_cpu_devices()  # pmap runs on the host
        if size > available:
            raise ValueError(f"compiling computation that requires {size} logical devices, but only "
                             f"{available} XLA devices are available (num_replicas={size})")
        static_vals = tuple((i, args[i]) for i in sorted(statics))
        key = (static_vals, len(args))
        try:
            hash(key)
        except TypeError:
            raise ValueError("Non-hashable static arguments are not supported by pmap") from None
        layout = _process_layout(axis_name, size) if devices is None else None
        if layout is not None:
            key = key + (size,)
        f = compiled.get(key)
        if f is None:
            body = vmap(_with_statics(fun, dict(static_vals), len(args)), in_axes=axes,
                        out_axes=out_axes, axis_name=axis_name, axis_size=axis_size)
            if layout is not None:
                body = _across_processes(body, layout)
            f = compiled[key] = jit(body)
        return f, dyn

    @_wraps(fun)
    def pmap_f(*args, **kwargs):
        f, dyn = mapped(args, kwargs)
        return f(*dyn, **kwargs)

    def lower(*args, **kwargs):
        """Ahead-of-time lowering (`jax.pmap(f).lower(*args)`): the `Lowered`
        of the mapped program; its `compile()` takes the dynamic arguments."""
        f, dyn = mapped(args, kwargs)
        return f.lower(*dyn, **kwargs)

    pmap_f.lower = lower
    return pmap_f


def _process_layout(axis_name, size):
    """In a multi-process run, the layout that makes `axis_name` span the
    processes (each holding `size` positions of it), for the outermost map
    only; None otherwise."""
    if axis_name is None or not distributed.multi_process() or spmd.current() is not None:
        return None
    import numpy as np

    from . import _devices
    from .sharding import Mesh
    count, me = distributed.process_count(), distributed.process_index()
    per = {}
    for d in _devices.devices():
        per.setdefault(d.process_index, []).append(d)
    devs = [d for p in range(count) for d in per.get(p, [])[:size]]
    if len(devs) != count * size:
        raise ValueError(f"pmap over {size} devices per process needs that many devices in every "
                         f"process ({[len(per.get(p, [])) for p in range(count)]} available)")
    mesh = Mesh(np.array(devs), (axis_name,))
    return spmd.AxisLayout(mesh, {axis_name: (count * size, size, me * size)}, me)


def _across_processes(body, layout):
    """`body` traced with its collectives over the layout's axis spanning the processes."""
    def traced(*args, **kwargs):
        with spmd.tracing(layout):
            return body(*args, **kwargs)

    return traced
