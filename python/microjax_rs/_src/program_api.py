"""Program-level API functions: `jax.live_arrays`, `jax.fwd_and_bwd` and
`jax.print_environment_info`."""
import gc
import operator
import platform as _platform
import sys

import numpy as np

# ----------------------------------------------------------------------------
# live_arrays


def live_arrays(platform=None):
    """The live (not deleted) arrays, as a list, optionally only those on
    `platform` ("cpu", "gpu").

    Arrays are reference-counted Rust objects outside Python's cycle
    collector, so they are found through what holds them: every object the
    collector tracks (module globals, lists, dicts, objects' attributes,
    closures) and every running frame's local variables. An array held only
    by an object the collector does not track (say, only inside another
    extension's object) is not listed."""
    from .. import _core
    from .._devices import GpuArray

    kinds = {"cpu": (_core.ArrayImpl,), "gpu": (GpuArray,)}
    if platform is not None and platform not in kinds:
        raise RuntimeError(f"Unknown backend {platform}")
    wanted = kinds[platform] if platform is not None else (_core.ArrayImpl, GpuArray)
    found = {}

    def take(o):
        if isinstance(o, wanted) and id(o) not in found:
            try:
                if o.is_deleted():
                    return
            except AttributeError:
                pass
            found[id(o)] = o

    for holder in gc.get_objects():
        take(holder)
        for o in gc.get_referents(holder):
            take(o)
    for frame in sys._current_frames().values():
        while frame is not None:
            for o in list(frame.f_locals.values()):
                take(o)
            frame = frame.f_back
    return list(found.values())


# ----------------------------------------------------------------------------
# fwd_and_bwd


def _check_argnums(argnums, n):
    for i in argnums:
        if not -n <= i < n:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value greater than "
                f"or equal to -len(args) and less than len(args), but got value {i} for len(args) == {n}.")


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """The forward and backward pass of `fun` as two functions:
    `fwd(*primals)` returns `(primals_out, residuals)` (with `has_aux`,
    `(primals_out, residuals, aux)`), `bwd(residuals, cotangent)` the
    cotangents of the arguments `argnums` designates (one value for an int
    `argnums`, a tuple for a sequence), as `jax.vjp`'s function would. With
    `jitted` (the default) both are jitted, so `bwd` compiles once and is
    reused across iterations.

    The residuals are the primal arguments: `bwd` recomputes the forward
    pass it differentiates (the values are those of `jax.vjp`; memory holds
    the inputs rather than the intermediate values).

    Example:
      >>> import microjax_rs as jax
      >>> fwd, bwd = jax.fwd_and_bwd(lambda x, w: x * w, argnums=(0, 1))
      >>> y, res = fwd(2.0, 3.0)
      >>> bwd(res, 1.0)
      (Array(3., dtype=float32, weak_type=True), Array(2., dtype=float32, weak_type=True))
    """
    from .._grad import vjp
    from ..api import jit

    single = isinstance(argnums, int)
    nums = (operator.index(argnums),) if single else tuple(operator.index(i) for i in argnums)

    def fwd(*args):
        _check_argnums(nums, len(args))
        out = fun(*args)
        if has_aux:
            out, aux = out
            return out, args, aux
        return out, args

    def bwd(residuals, cotangent):
        args = list(residuals)
        where = [i % len(args) for i in nums]

        def of_diff_args(*diff):
            full = list(args)
            for i, d in zip(where, diff):
                full[i] = d
            out = fun(*full)
            return out[0] if has_aux else out

        _, vjp_fn = vjp(of_diff_args, *[args[i] for i in where])
        cts = vjp_fn(cotangent)
        return cts[0] if single else tuple(cts)

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd


# ----------------------------------------------------------------------------
# print_environment_info


def print_environment_info(return_string=False):
    """Prints (or, with `return_string`, returns) the versions and the
    devices: for bug reports, as JAX's."""
    from .. import __version__, devices, process_count

    devs = devices()
    kinds = sorted({d.platform for d in devs})
    info = "\n".join([
        f"jax:    microjax_rs {__version__} (JAX 0.10.2 API)",
        "jaxlib: microjax_rs._core (Rust)",
        f"numpy:  {np.__version__}",
        f"python: {sys.version}",
        f"device info: {'/'.join(kinds)}-{len(devs)}, {len(devs)} local devices",
        f"process_count: {process_count()}",
        f"platform: {_platform.uname()}",
    ])
    if return_string:
        return info
    print(info)
    return None
