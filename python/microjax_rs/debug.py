"""`jax.debug`: printing, logging, callbacks and breakpoints that run inside
transformed code."""
import logging
import string

import numpy as np

from ._callback import debug_callback as callback
from .core import Tracer as _Tracer
from ._debugger import breakpoint  # noqa: A004 - JAX's name
from ._src.effects import DebugEffect, OrderedDebugEffect  # noqa: F401

_logger = logging.getLogger(__name__)


class _FormatChecker(string.Formatter):
    """Checks that a format string uses every argument it is given (JAX's
    ValueError otherwise), without formatting anything."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        unused = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused keyword arguments to `jax.debug.print`: {unused}. You may be passing "
                             f"an f-string (i.e, `f\"{{x}}\"`) into `jax.debug.print` and instead should "
                             f"pass in a regular string.")


def _caller_record(level):
    """A log record located at the first caller outside microjax_rs."""
    import os
    import sys

    from ._debugger import _PACKAGE_DIR

    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame = frame.f_back
    file_name, line_no = ("(unknown file)", 0) if frame is None else (frame.f_code.co_filename, frame.f_lineno)
    return _logger.makeRecord(_logger.name, level, file_name, line_no, "", (), None)


def _emit(fmt, args, kwargs, *, ordered, skip_format_check, record):
    if not skip_format_check:
        _FormatChecker().format(fmt, *args, **kwargs)
    has_placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] is not None
    options = np.get_printoptions()

    def show(*a, **k):
        import builtins
        import copy

        if has_placeholders:
            with np.printoptions(**options):
                msg = fmt.format(*a, **k)
        else:
            msg = " ".join((fmt, *(str(x) for x in a)))
        if record is None:
            builtins.print(msg)
        else:
            rec = copy.copy(record)
            rec.msg = msg
            _logger.handle(rec)

    callback(show, *args, ordered=ordered, **kwargs)


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9, max_width=80,
                       color_map=None):
    """Prints how an array of `shape` (1-d or 2-d) is laid out by `sharding`:
    a grid of boxes, one per distinct piece, each labelled with the devices
    holding it ("CPU 0,1"), sized as JAX sizes them (`scale`, `min_width`,
    `max_width`). The picture is JAX's uncoloured one: `use_color` and
    `color_map` are accepted and ignored."""
    import builtins

    from ._src.debugging import render_sharding

    builtins.print(render_sharding(tuple(shape), sharding, scale, min_width, max_width), end="")


def inspect_array_sharding(value, *, callback):
    """Calls `callback(sharding)` for every array leaf of `value`. A concrete
    array's sharding is the one `device_put` gave it; a traced value (under
    `jit`) is laid out on the default device, which the callback receives at
    trace time (JAX calls it when the program is compiled)."""
    from . import _devices
    from .sharding import SingleDeviceSharding
    from .tree_util import tree_leaves

    for leaf in tree_leaves(value):
        sharding = getattr(leaf, "sharding", None) if not isinstance(leaf, _Tracer) else None
        if sharding is None:
            sharding = SingleDeviceSharding(_devices.default_device_object(), memory_kind="device")
        callback(sharding)


def visualize_array_sharding(arr, **kwargs):
    """`visualize_sharding(arr.shape, arr.sharding, **kwargs)`: prints the
    layout of `arr` over its devices (see `visualize_sharding`)."""
    inspect_array_sharding(arr, callback=lambda sharding: visualize_sharding(arr.shape, sharding, **kwargs))
def _print_or_log(use_logging, fmt, args, kwargs, ordered, skip_format_check):
    def emit(fmt, *a, **k):
        record = _caller_record(logging.INFO) if use_logging else None
        _emit(fmt, a, k, ordered=ordered, skip_format_check=skip_format_check, record=record)

    if fmt is not None:
        emit(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}")
    return emit


def print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,  # noqa: A001 - JAX's name
          _use_logging=False, **kwargs):
    """`jax.debug.print("x = {x}", x=x)`: formats with `str.format` on the
    runtime values (NumPy arrays, under the NumPy print options of the call),
    eagerly, under `jit`, `vmap` (once per member), `grad` (primal values)
    and in loop bodies (each iteration). Every argument must be used by the
    format (ValueError otherwise) unless `skip_format_check`, with which a
    format without placeholders prints its positional arguments after it.
    `print(ordered=...)` with no format returns the printing function (JAX's
    two-call form). `partitioned` is accepted (no sharding here)."""
    return _print_or_log(_use_logging, fmt, args, kwargs, ordered, skip_format_check)


def log(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False, _use_logging=True,
        **kwargs):
    """`jax.debug.log`: `jax.debug.print`, but the message goes to the
    `logging` logger "microjax_rs.debug" (JAX's is "jax._src.debugging") at
    level INFO, as a record located at the line that called `log` (made when
    traced), handed to the logger's handlers when the program runs (as in
    JAX, without the logger's level check)."""
    return _print_or_log(_use_logging, fmt, args, kwargs, ordered, skip_format_check)


def plan_stats(fun, *args, **kwargs):
    """What the compiled CPU executor makes of `fun` on `args` (a
    microjax_rs extension, not a JAX function): traces `fun` as `jit` would,
    compiles the program, runs it once and returns a dict with

    * `eqns`, `eqns_simplified`: equations before and after inlining, CSE,
      identity removal and DCE;
    * `fusion_groups`, `fused_eqns`: elementwise groups run as one pass, and
      the equations inside them; `typed_groups`: groups whose members are
      all float32 (or all float64) ops with slice kernels, run without any
      per-chunk allocation; `steps`: what a run walks;
    * `peak_bytes`: most bytes of arrays the run held at once (arguments,
      intermediates and outputs, each buffer once); `arg_bytes`,
      `out_bytes`: bytes of the arguments and of the results.
    """
    from . import api, core
    from .tree_util import tree_leaves

    closed = api.make_jaxpr(lambda *a: fun(*a, **kwargs))(*args)
    leaves = [core.to_array(x) for x in tree_leaves(args)]
    return dict(closed._handle.plan_stats(leaves))


def compile_cache_stats():
    """Counters of the structural compile cache the un-jitted transforms
    run their programs through (a microjax_rs extension): `hits`, `misses`,
    `compiles`, `compile_failures`, `evictions`, `interpreted_runs`,
    `compiled_runs`, `entries`, `capacity`. The first sighting of a program
    (and input signature and config) is interpreted, the second compiles."""
    from . import _core

    return dict(_core.compile_cache_stats())


def compile_cache_clear():
    """Empties the structural compile cache and zeroes its counters."""
    from . import _core

    _core.compile_cache_clear()


def jit_cache_stats():
    """State of `jit`'s trace cache (a microjax_rs extension): `entries`
    (traces held, all functions together), `fast_entries` (of those, the
    ones a call with array arguments reaches without entering Python),
    `capacity` (`microjax_jit_cache_size`, default 4096), `evictions`
    (since start) and `functions` (wrapped functions the cache holds a weak
    key for). `jax.clear_caches()` empties it."""
    from . import _trace_cache

    return _trace_cache.stats()


def buffer_pool_stats():
    """Counters of the host buffer pool (a microjax_rs extension): `hits`,
    `misses` (fused-pass outputs served from the pool or freshly
    allocated), `returned`, `evicted`, `held_bytes`, `held_buffers`,
    `cap_bytes`, `min_pooled_bytes`."""
    from . import _core

    return dict(_core.buffer_pool_stats())


def buffer_pool_clear():
    """Frees what the host buffer pool holds and zeroes its counters."""
    from . import _core

    _core.buffer_pool_clear()


__all__ = ["DebugEffect", "OrderedDebugEffect", "breakpoint", "buffer_pool_clear", "buffer_pool_stats", "callback", "compile_cache_clear",
           "compile_cache_stats", "inspect_array_sharding", "jit_cache_stats", "log", "plan_stats", "print",
           "visualize_array_sharding", "visualize_sharding"]
