"""`pmap` (JAX's signature and semantics) on the vmap machinery.

The mapped axis must fit the available devices (the CPU devices, `jax.devices("cpu")`), as
in JAX; the whole map then runs as one jitted, vmapped program on the host.
Multi-device execution comes with the GPU executors."""

from .api import _num_cpu_devices, jit
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
        f = compiled.get(key)
        if f is None:
            f = compiled[key] = jit(vmap(_with_statics(fun, dict(static_vals), len(args)), in_axes=axes,
                                         out_axes=out_axes, axis_name=axis_name, axis_size=axis_size))
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
