"""Global configuration with JAX's option names.

`config.update("jax_enable_x64", True)` turns on 64-bit types; the
environment variable `MICROJAX_ENABLE_X64=1` (or JAX's `JAX_ENABLE_X64=1`)
does the same at import. Every change bumps the config epoch, which is part
of every compile-cache key.
"""
import enum
import os

from . import _core
from ._src.device_types import Device


def _env_flag(*names):
    for n in names:
        v = os.environ.get(n)
        if v is not None:
            return v.strip().lower() in ("1", "true", "yes", "on")
    return False


def _byte_budget_setter(option, set_in_core):
    """The setter of a byte-budget option: an int in [1, 2**64) or None (the
    default), handed to the core's `set_in_core`."""
    def set_budget(value):
        if value is None:
            set_in_core(None)
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{option} must be an int or None, got {type(value).__name__}")
        if value <= 0 or value >= 2 ** 64:
            raise ValueError(
                f"{option} must be a positive number of bytes below 2**64, got {value}")
        set_in_core(value)
    return set_budget


_set_max_buffer_bytes = _byte_budget_setter(
    "microjax_max_buffer_bytes", _core.set_max_buffer_bytes)
_set_max_live_bytes = _byte_budget_setter(
    "microjax_max_live_bytes", _core.set_max_live_bytes)


def _set_determinism(value):
    if value not in ("default", "portable"):
        raise ValueError(
            f"microjax_determinism must be 'default' or 'portable', got {value!r}")
    _core.set_determinism(value)


def _check_default_device(value):
    if value is not None and not isinstance(value, (str, Device)):
        raise TypeError(
            f"jax_default_device must be a Device, a platform name or None, got "
            f"{type(value).__name__}")


def _check_count(name, value):
    """`value` of the option `name` must be an int (not a bool) >= 0."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


def _set_compile_cache_size(value):
    _check_count("microjax_compile_cache_size", value)
    _core.set_compile_cache_size(value)


def _set_jit_cache_size(value):
    _check_count("microjax_jit_cache_size", value)
    from . import _trace_cache

    _trace_cache.set_size(value)


def _set_buffer_pool_bytes(value):
    _check_count("microjax_buffer_pool_bytes", value)
    _core.set_buffer_pool_bytes(value)


# Options whose value is checked (and passed on to the core) before it is stored.
_CHECKED_OPTIONS = {
    "microjax_max_buffer_bytes": _set_max_buffer_bytes,
    "microjax_max_live_bytes": _set_max_live_bytes,
    "microjax_determinism": _set_determinism,
    "jax_default_device": _check_default_device,
    "microjax_compile_cache_size": _set_compile_cache_size,
    "microjax_jit_cache_size": _set_jit_cache_size,
    "microjax_buffer_pool_bytes": _set_buffer_pool_bytes,
}

# Options with a set of levels or None (JAX's optional enum options).
_TRANSFER_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_OPTIONAL_CHOICES = {
    "jax_transfer_guard": _TRANSFER_LEVELS,
    "jax_transfer_guard_host_to_device": _TRANSFER_LEVELS,
    "jax_transfer_guard_device_to_device": _TRANSFER_LEVELS,
    "jax_transfer_guard_device_to_host": _TRANSFER_LEVELS,
    "jax_array_garbage_collection_guard": ("allow", "log", "fatal"),
}


_TRANSFER_DIRECTIONS = ("jax_transfer_guard_host_to_device", "jax_transfer_guard_device_to_device",
                        "jax_transfer_guard_device_to_host")


def _check_optional_choice(name, value):
    allowed = _OPTIONAL_CHOICES[name]
    if value is not None and value not in allowed:
        raise ValueError(f"new enum value must be None or in {list(allowed)}, got {value} of type "
                         f"{type(value)}.")
    return value


# Boolean options stored as bool(value), as JAX's bool states do.
_BOOL_OPTIONS = frozenset({
    "jax_no_tracing", "jax_no_execution", "jax_explain_cache_misses", "jax_debug_key_reuse",
    "jax_enable_checks", "jax_thread_guard", "jax_softmax_custom_jvp", "jax_allow_f16_reductions",
    "jax2tf_associative_scan_reductions",
})

# Options that make eager calls and program runs take the Python paths
# (where they are enforced) while they are set.
_PYTHON_PATH_OPTIONS = ("jax_debug_nans", "jax_debug_infs", "jax_no_execution",
                        "jax_transfer_guard_host_to_device")

# Options that change nothing a trace records: updating them keeps jit's
# cached traces (the config epoch in their keys) valid.
_TRACE_INDEPENDENT = frozenset({
    "jax_log_compiles", "jax_debug_nans", "jax_debug_infs", "jax_no_tracing", "jax_no_execution",
    "jax_explain_cache_misses", "jax_thread_guard", "jax_array_garbage_collection_guard",
    "jax_transfer_guard", "jax_transfer_guard_host_to_device", "jax_transfer_guard_device_to_device",
    "jax_transfer_guard_device_to_host", "jax2tf_associative_scan_reductions",
})


# Options that take one of a set of values (the PRNG implementations are
# jax.random's, as JAX's option enumerates them).
_CHOICES = {
    "jax_default_prng_impl": ("threefry2x32", "threefry4x32", "philox2x32", "philox4x32", "rbg",
                              "unsafe_rbg"),
    "jax_legacy_prng_key": ("allow", "warn", "error"),
    "jax_explicit_x64_dtypes": ("warn", "error", "allow"),
    "jax_numpy_rank_promotion": ("allow", "warn", "raise"),
}


def _check_choice(name, value):
    allowed = _CHOICES[name]
    if isinstance(value, enum.Enum):
        value = value.name.lower()
    if value not in allowed:
        raise ValueError(f"Invalid value '{value}' for JAX flag {name}; expected one of {allowed}")
    return value


class Config:
    def __init__(self):
        self._values = {
            "jax_enable_x64": False,
            "jax_disable_jit": False,
            # Log each new top-level jit compilation (logger "jax._src.dispatch", WARNING).
            "jax_log_compiles": False,
            # Check results for NaN / Inf and raise FloatingPointError naming
            # the primitive (_src/nan_checks.py).
            "jax_debug_nans": False,
            "jax_debug_infs": False,
            # Report tracers that outlive their jit / vmap trace when it ends
            # (UnexpectedTracerError; _src/leak_checks.py).
            "jax_check_tracer_leaks": False,
            "jax_numpy_rank_promotion": "allow",
            "jax_default_matmul_precision": None,
            "jax_platforms": None,
            "jax_default_prng_impl": "threefry2x32",
            # Raw uint32 keys passed to jax.random: "allow", "warn" or "error".
            "jax_legacy_prng_key": "allow",
            # Accepted for JAX compatibility; typed keys are always available.
            "jax_enable_custom_prng": False,
            # Added to every seed jax.random.key / PRNGKey receives.
            "jax_random_seed_offset": 0,
            # An explicitly requested 64-bit dtype without x64: "warn" and
            # truncate to 32 bits, "error", or "allow" (not implemented here).
            "jax_explicit_x64_dtypes": "warn",
            # CPU devices `jax.devices()` lists (-1: XLA_FLAGS'
            # --xla_force_host_platform_device_count, else 1), as JAX's option.
            "jax_num_cpu_devices": -1,
            # Before each collective between processes, all processes compare
            # what they are about to run (operation, shape, dtype, axes) and
            # raise RuntimeError on a mismatch (also MICROJAX_COLLECTIVE_CHECKS=1).
            "microjax_collective_checks": False,
            "jax_threefry_partitionable": True,
            # Static integer indices out of bounds in `x[idx]` raise IndexError
            # (off: the gather clamps them, as JAX's default).
            "jax_check_static_indices": False,
            # Most bytes one buffer may take (None: the machine's physical
            # memory); a larger shape raises MemoryError before allocating.
            "microjax_max_buffer_bytes": None,
            # Most bytes of host memory live at once in the whole process,
            # kernel scratch and library workspaces included (None: no
            # bound): an operation whose buffers would exceed it raises
            # MemoryError before allocating; `jax.devices("cpu")[0]
            # .memory_stats()` reports the live and peak bytes.
            "microjax_max_live_bytes": None,
            # The device `device_put(x)` and computations use (None: the
            # first device of the default platform; see _devices.py).
            "jax_default_device": None,
            # "portable": fixed SIMD width (AVX2 at most), our own k-ordered
            # matmul instead of gemm, so results match across x86-64 CPUs
            # (rust/core/src/exec/determinism.rs); exported programs record it.
            "microjax_determinism": "default",
            # Entries of the structural compile cache the un-jitted
            # transforms run through (0 turns it off: always interpreted).
            "microjax_compile_cache_size": 512,
            # Traces `jit`'s trace cache keeps, all functions together (0
            # turns it off: every call traces); see _trace_cache.py.
            "microjax_jit_cache_size": 4096,
            # Most bytes the host buffer pool keeps for reuse by the
            # compiled executor (0 turns it off).
            "microjax_buffer_pool_bytes": 256 << 20,
            # Program-level checks and guards (_src/program_flags.py):
            # a jit cache miss raises RuntimeError; so does any execution.
            "jax_no_tracing": False,
            "jax_no_execution": False,
            # Log (WARNING, logger "jax._src.interpreters.partial_eval")
            # why each jit trace-cache miss missed.
            "jax_explain_cache_misses": False,
            # Typed PRNG keys consumed twice raise KeyReuseError.
            "jax_debug_key_reuse": False,
            # Extra invariant checks of traced programs (jaxpr type checks).
            "jax_enable_checks": False,
            # Multi-process guard; one process here, so nothing to guard.
            "jax_thread_guard": False,
            # An array freed by the cycle collector: None / "allow", "log"
            # (an error logged) or "fatal" (abort), as JAX.
            "jax_array_garbage_collection_guard": None,
            # Transfer guard levels: None (unset: "allow"), "allow", "log",
            # "disallow", "log_explicit", "disallow_explicit".
            "jax_transfer_guard": None,
            "jax_transfer_guard_host_to_device": None,
            "jax_transfer_guard_device_to_device": None,
            "jax_transfer_guard_device_to_host": None,
            # jax.nn.softmax differentiated by its custom JVP rule (True) or
            # by differentiating its implementation (False, JAX's default).
            "jax_softmax_custom_jvp": False,
            # False: lax.reduce_sum_p on float16/bfloat16 raises ValueError
            # (lax/_reductions.py).
            "jax_allow_f16_reductions": True,
            # jax2tf's lowering choice for cumulative reductions; no jax2tf
            # here, so recorded only.
            "jax2tf_associative_scan_reductions": False,
        }

    def update(self, name, value):
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        check_and_apply = _CHECKED_OPTIONS.get(name)
        if check_and_apply is not None:
            check_and_apply(value)
        elif name in _CHOICES:
            value = _check_choice(name, value)
        elif name in _OPTIONAL_CHOICES:
            value = _check_optional_choice(name, value)
        elif name in _BOOL_OPTIONS:
            value = bool(value)
        self._values[name] = value
        if name == "jax_array_garbage_collection_guard":
            from ._src import program_flags

            program_flags.set_garbage_collection_guard(value)
        if name == "jax_transfer_guard":  # sets the three directions, as JAX's global update
            for direction in _TRANSFER_DIRECTIONS:
                self._values[direction] = value
        if name in _PYTHON_PATH_OPTIONS or name in ("jax_numpy_rank_promotion", "jax_transfer_guard"):
            v = self._values
            self.debug_checks = bool(v["jax_debug_nans"] or v["jax_debug_infs"] or v["jax_no_execution"]
                                     or v["jax_transfer_guard_host_to_device"] not in (None, "allow"))
            # A running profiler trace or a rank-promotion check keeps the
            # Rust fast paths aside too.
            from ._src import profiling

            profiling._route_through_python()
        if name == "jax_enable_x64":
            _core.set_x64(bool(value))
        elif name not in _TRACE_INDEPENDENT:
            _core.bump_epoch()

    # Whether an option enforced on the Python paths is on (jax_debug_nans,
    # jax_debug_infs, jax_no_execution, a host-to-device transfer guard):
    # read on every eager call.
    debug_checks = False

    def parse_flags_with_absl(self):
        """JAX reads `--jax_*` command-line flags here; microjax_rs reads its
        options from the environment (`JAX_ENABLE_X64`, ...) at import."""
        return None

    def read(self, name):
        return self._values[name]

    def __getattr__(self, name):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(name)

    @property
    def x64_enabled(self):
        return self._values["jax_enable_x64"]


config = Config()
if _env_flag("MICROJAX_ENABLE_X64", "JAX_ENABLE_X64"):
    config.update("jax_enable_x64", True)
if _env_flag("JAX_DEBUG_NANS"):
    config.update("jax_debug_nans", True)
if _env_flag("JAX_DEBUG_INFS"):
    config.update("jax_debug_infs", True)
if _env_flag("JAX_CHECK_TRACER_LEAKS"):
    config.update("jax_check_tracer_leaks", True)
if _env_flag("JAX_DISABLE_JIT"):
    config.update("jax_disable_jit", True)


class _PromotionContext:
    """`with jax.numpy_dtype_promotion(mode)` / `jax.numpy_rank_promotion(mode)`."""

    def __init__(self, option, value, allowed, implemented):
        if value not in allowed:
            raise ValueError(f"Invalid value {value!r} for {option}; expected one of {allowed}")
        if value != implemented:
            raise NotImplementedError(
                f"{option}={value!r}: microjax_rs implements {implemented!r} only")
        self.option, self.value = option, value

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fun):
        """As a decorator: `fun` runs inside the context."""
        import functools

        @functools.wraps(fun)
        def wrapped(*args, **kwargs):
            with self:
                return fun(*args, **kwargs)

        return wrapped


def numpy_dtype_promotion(value):
    """JAX's context for the dtype promotion mode: 'standard' (JAX's lattice,
    the mode microjax_rs implements) or 'strict' (not implemented: raises
    NotImplementedError)."""
    return _PromotionContext("jax_numpy_dtype_promotion", value, ("standard", "strict"), "standard")


class numpy_rank_promotion:
    """JAX's context (also a decorator) for implicit rank promotion in
    `jax.numpy`'s binary functions and operators: 'allow' (NumPy's
    broadcasting), 'warn' (a UserWarning each time operands of different
    nonzero ranks broadcast) or 'raise' (JAX's ValueError)."""

    def __init__(self, value):
        self.value = _check_choice("jax_numpy_rank_promotion", value)

    def __enter__(self):
        self._saved = config.read("jax_numpy_rank_promotion")
        config.update("jax_numpy_rank_promotion", self.value)
        return self

    def __exit__(self, *exc):
        config.update("jax_numpy_rank_promotion", self._saved)
        return False

    __call__ = _PromotionContext.__call__


class _OptionContext:
    """Sets config option `option` to `value` inside a `with` block (also a
    decorator), restoring the previous value after it, as JAX's option
    contexts do."""

    option = None

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self._saved = config.read(self.option)
        config.update(self.option, self.value)
        return self

    def __exit__(self, *exc):
        config.update(self.option, self._saved)
        return False

    def __call__(self, fun):
        import functools

        @functools.wraps(fun)
        def wrapped(*args, **kwargs):
            with type(self)(self.value):
                return fun(*args, **kwargs)

        return wrapped


class log_compiles(_OptionContext):
    """`with jax.log_compiles():` log every new top-level `jit` compilation
    (at WARNING, logger "jax._src.dispatch", as JAX: "Compiling f with global
    shapes and types ..." and "Finished ... compilation of jit(f) in ... sec")."""

    option = "jax_log_compiles"

    def __init__(self, enable=True):
        super().__init__(bool(enable))


class enable_x64(_OptionContext):
    """`with jax.enable_x64():` 64-bit types inside the block
    (`jax.enable_x64(False)` turns them off), as `jax_enable_x64`. Arrays keep
    the dtype they were made with."""

    option = "jax_enable_x64"

    def __init__(self, new_val=True):
        super().__init__(bool(new_val))


class debug_nans(_OptionContext):
    """`with jax.debug_nans(True):` check results for NaN inside the block
    (`jax_debug_nans`); also a decorator."""

    option = "jax_debug_nans"

    def __init__(self, new_val=True):
        super().__init__(bool(new_val))


class debug_infs(_OptionContext):
    """`with jax.debug_infs(True):` check results for infinities inside the
    block (`jax_debug_infs`); also a decorator."""

    option = "jax_debug_infs"

    def __init__(self, new_val=True):
        super().__init__(bool(new_val))


class check_tracer_leaks(_OptionContext):
    """`with jax.check_tracer_leaks(True):` report tracers that escape a
    `jit` / `vmap` trace (stored in a global, a list, an object) when the
    trace ends, with UnexpectedTracerError (`jax_check_tracer_leaks`); also a
    decorator. Slow: each trace ends with a garbage collection."""

    option = "jax_check_tracer_leaks"
class default_prng_impl(_OptionContext):
    """`with jax.default_prng_impl(name):` keys made inside the block (and raw
    keys used there) are of PRNG implementation `name` (`jax_default_prng_impl`)."""

    option = "jax_default_prng_impl"


class legacy_prng_key(_OptionContext):
    """`with jax.legacy_prng_key(mode):` raw uint32 keys passed to jax.random
    are allowed ("allow"), warned about ("warn") or an error ("error")."""

    option = "jax_legacy_prng_key"


class enable_custom_prng(_OptionContext):
    """`with jax.enable_custom_prng(flag):` accepted for JAX compatibility
    (typed keys are always available)."""

    option = "jax_enable_custom_prng"

    def __init__(self, new_val=True):
        super().__init__(bool(new_val))


def checking_leaks():
    """`with jax.checking_leaks():` leak checking on inside the block
    (`check_tracer_leaks(True)`)."""
    return check_tracer_leaks(True)
class threefry_partitionable(_OptionContext):
    """`with jax.threefry_partitionable(flag):` Threefry's bits and splits
    follow the partitionable counter scheme (JAX's default) or the original
    one (`jax_threefry_partitionable`)."""

    option = "jax_threefry_partitionable"

    def __init__(self, new_val=True):
        super().__init__(bool(new_val))


def disable_x64():
    """`jax.experimental.disable_x64()`: `enable_x64(False)`."""
    return enable_x64(False)


_PRECISIONS = (None, "default", "bfloat16", "tensorfloat32", "float32", "high", "highest", "fastest",
               "ANY_F8_ANY_F8_F32", "BF16_BF16_F32", "TF32_TF32_F32", "F32_F32_F32", "F64_F64_F64")


class default_matmul_precision(_OptionContext):
    """`with jax.default_matmul_precision("float32"):` the precision of
    products and convolutions that name none (`jax_default_matmul_precision`).
    The CPU kernels compute every float product at its dtype's full
    precision whatever the setting, as XLA's CPU backend does."""

    option = "jax_default_matmul_precision"

    def __init__(self, precision):
        if precision not in _PRECISIONS:
            raise ValueError(f"jax_default_matmul_precision: invalid value {precision!r}; "
                             f"expected one of {_PRECISIONS}")
        super().__init__(precision)
