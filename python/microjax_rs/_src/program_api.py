"""Program-level API functions: `jax.live_arrays`, `jax.fwd_and_bwd`,
`jax.print_environment_info` and the creation tracebacks of `Array.traceback`."""
import gc
import operator
import platform as _platform
import sys
import weakref

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


# ----------------------------------------------------------------------------
# Array.traceback


class Frame:
    """One frame of a Traceback: `file_name`, `function_name`, `line_num`."""

    __slots__ = ("file_name", "function_name", "line_num", "function_start_line")

    def __init__(self, file_name, function_name, line_num, function_start_line):
        self.file_name = file_name
        self.function_name = function_name
        self.line_num = line_num
        self.function_start_line = function_start_line

    def __repr__(self):
        return f"{self.function_name};{self.file_name}:{self.line_num}"


class Traceback:
    """Where an array was made: `frames` (innermost first), printed one
    `file:line (function)` a line, as JAX's Traceback."""

    def __init__(self, raw):
        self._raw = raw  # ((code object, line), ...): Frames are made when read
        self._frames = None

    @property
    def frames(self):
        if self._frames is None:
            self._frames = [Frame(code.co_filename, code.co_qualname, line, code.co_firstlineno)
                            for code, line in self._raw]
        return self._frames

    @classmethod
    def get_traceback(cls, depth=1, limit=None):
        """The stack from `depth` frames up (at most `limit` frames)."""
        f = sys._getframe(depth)
        raw = []
        while f is not None and (limit is None or len(raw) < limit):
            raw.append((f.f_code, f.f_lineno))
            f = f.f_back
        return cls(raw)

    def __str__(self):
        return "\n".join(f"{fr.file_name}:{fr.line_num} ({fr.function_name})" for fr in self.frames)

    def as_python_traceback(self):
        """The frames as a `traceback.StackSummary` (innermost last)."""
        import traceback

        return traceback.StackSummary.from_list(
            [(fr.file_name, fr.line_num, fr.function_name, None) for fr in reversed(self.frames)])


# id(array) -> (weak reference, Traceback) for the arrays whose creation was
# recorded; weak reference -> id, to drop the entry when the array dies.
_CREATED = {}
_IDS = {}


def _died(ref):
    key = _IDS.pop(id(ref), None)
    if key is not None and _CREATED.get(key, (None,))[0] is ref:
        del _CREATED[key]


def record_creation(arrays, depth=2):
    """Records where `arrays` were made: the frame `depth` levels above the
    caller (called by `jit`'s Python call path for its results, with the
    frame of the user's call). One frame only: walking (and so
    materializing) the whole stack on every call would slow the call path."""
    tb = None
    for a in arrays:
        try:
            ref = weakref.ref(a, _died)
        except TypeError:
            continue
        if tb is None:
            tb = Traceback.get_traceback(depth + 1, limit=1)
        key = id(a)
        _CREATED[key] = (ref, tb)
        _IDS[id(ref)] = key


def traceback_of(x):
    """`x.traceback`: the recorded creation Traceback of `x`, or None."""
    hit = _CREATED.get(id(x))
    if hit is not None and hit[0]() is x:
        return hit[1]
    return None
