"""`jax._src.config` at JAX's path: each option as a state object with a
`.value` (read from `microjax_rs.config`) that is also a context manager /
decorator setting the option for a block, as JAX's `config.enable_x64(True)`."""
import enum

from ..config import _OptionContext, config  # noqa: F401


_NO_DEFAULT = object()


class _State:
    """One `jax_*` option: `.value` reads it; calling it with a value gives a
    context manager (also a decorator) that sets it for a block. A boolean
    option called with no value is set to True, as JAX's bool states; other
    options need the value."""

    def __init__(self, option, doc=None, boolean=False):
        self.option = option
        self._boolean = boolean
        if doc is not None:
            self.__doc__ = f"Context manager for `{option}` config option.\n\n{doc}"

    @property
    def value(self):
        return config.read(self.option)

    def __call__(self, new_value=_NO_DEFAULT):
        if new_value is _NO_DEFAULT:
            if not self._boolean:
                name = self.option.removeprefix("jax_")
                raise TypeError(f"Context manager for {name} config option requires an argument "
                                f"representing the new value for the config option.")
            new_value = True
        return type(f"_{self.option}_context", (_OptionContext,), {"option": self.option})(new_value)

    def __bool__(self):
        return bool(self.value)


enable_x64 = _State("jax_enable_x64")
disable_jit = _State("jax_disable_jit")
debug_nans = _State("jax_debug_nans")
debug_infs = _State("jax_debug_infs")
numpy_rank_promotion = _State("jax_numpy_rank_promotion")
default_matmul_precision = _State("jax_default_matmul_precision")
default_prng_impl = _State("jax_default_prng_impl")
threefry_partitionable = _State("jax_threefry_partitionable")
log_compiles = _State("jax_log_compiles")
legacy_prng_key = _State("jax_legacy_prng_key")
enable_custom_prng = _State("jax_enable_custom_prng")
random_seed_offset = _State("jax_random_seed_offset")
explicit_x64_dtypes = _State("jax_explicit_x64_dtypes")
check_static_indices = _State("jax_check_static_indices")

# The program-level options: (option, boolean, description); each is a state
# named as the option without "jax_" (`jax.no_tracing`, ...).
_PROGRAM_STATES = (
    ("jax_no_tracing", True,
     "Disallow tracing for JIT compilation: a jit cache miss raises RuntimeError."),
    ("jax_no_execution", True,
     "Disallow JAX executions: running a jitted function or an eager primitive raises RuntimeError."),
    ("jax_explain_cache_misses", True,
     "Each time there is a miss on jit's tracing cache, log an explanation (logging, logger "
     "'jax._src.interpreters.partial_eval', at WARNING)."),
    ("jax_debug_key_reuse", True,
     "Turn on key reuse checking: typed PRNG keys (made with jax.random.key()) consumed twice (by a "
     "sampler, split, or a jitted function that consumes them) raise jax.errors.KeyReuseError."),
    ("jax_enable_checks", True,
     "Turn on invariant checking: every traced program is type-checked (jax.errors.JaxprTypeError). "
     "Makes things slower."),
    ("jax_thread_guard", True,
     "If True, an error is raised when a multi-process JAX operation is called from another thread "
     "than the one that set the guard. microjax_rs runs one process, which has no multi-process "
     "operations, so the flag is recorded only."),
    ("jax_array_garbage_collection_guard", False,
     "Select what happens when a jax.Array is freed by Python's cycle collector (it was held by a "
     "reference cycle) rather than by reference counting: 'allow' (and None) nothing, 'log' logs an "
     "error (logger 'jax._src.array') with where the array was made, 'fatal' prints it and aborts the "
     "process, as JAX."),
    ("jax_softmax_custom_jvp", True,
     "Use the custom_jvp rule of jax.nn.softmax (True) instead of differentiating its implementation "
     "(False, the default)."),
    ("jax_allow_f16_reductions", True,
     "If False, `reduce_sum` (lax.reduce_sum_p) on float16 or bfloat16 operands raises ValueError "
     "(jnp.sum is unaffected: it sums half precision in float32). Defaults to True."),
    ("jax2tf_associative_scan_reductions", True,
     "Lowering choice of jax2tf for the cumulative reductions. microjax_rs has no jax2tf, so the flag "
     "is recorded only (cumulative reductions always use the associative scan, JAX's CPU lowering)."),
    ("jax_transfer_guard_host_to_device", False,
     "Select the transfer guard level for host-to-device transfers: 'allow', 'log', 'disallow', "
     "'log_explicit' or 'disallow_explicit'."),
    ("jax_transfer_guard_device_to_device", False,
     "Select the transfer guard level for device-to-device transfers (one CPU device here: there are "
     "none to guard)."),
    ("jax_transfer_guard_device_to_host", False,
     "Select the transfer guard level for device-to-host transfers (on the CPU backend the array "
     "already is in host memory: nothing to guard, as JAX's CPU backend)."),
)
for _option, _boolean, _doc in _PROGRAM_STATES:
    globals()[_option.removeprefix("jax_")] = _State(_option, _doc, _boolean)

class transfer_guard:
    """`with jax.transfer_guard(level):` the transfer guard level of all
    three directions (and of `jax_transfer_guard`) inside the block; also a
    decorator."""

    _OPTIONS = ("jax_transfer_guard_host_to_device", "jax_transfer_guard_device_to_device",
                "jax_transfer_guard_device_to_host", "jax_transfer_guard")

    def __init__(self, new_val):
        from ..config import _check_optional_choice

        self.value = _check_optional_choice("jax_transfer_guard", new_val)

    def __enter__(self):
        self._saved = [config.read(o) for o in self._OPTIONS]
        for o in self._OPTIONS:
            config.update(o, self.value)
        return self

    def __exit__(self, *exc):
        for o, v in zip(self._OPTIONS, self._saved):
            if o == "jax_transfer_guard":  # restore without resetting the directions again
                config._values[o] = v
            else:
                config.update(o, v)
        return False

    __call__ = _OptionContext.__call__


class UserContext:
    """A jit-cache-sensitive context made by `jax.make_user_context`:
    `.value` reads it; `ctx(v)` is a context manager (also a decorator)
    setting it for a block. Traces made under one value are not reused
    under another: jitted functions re-trace when it changes."""

    def __init__(self, default_value):
        self._value = default_value

    @property
    def value(self):
        return self._value

    def __call__(self, new_value):
        return _UserContextSetting(self, new_value)


class _UserContextSetting:
    def __init__(self, ctx, value):
        self.ctx, self.new_value = ctx, value

    def _set(self, value):
        from .. import _core

        changed = value is not self.ctx._value
        self.ctx._value = value
        if changed:  # traces keyed on the old value must not be reused
            _core.bump_epoch()

    def __enter__(self):
        self._saved = self.ctx._value
        self._set(self.new_value)
        return self

    def __exit__(self, *exc):
        self._set(self._saved)
        return False

    def __call__(self, fun):
        import functools

        @functools.wraps(fun)
        def wrapped(*args, **kwargs):
            with _UserContextSetting(self.ctx, self.new_value):
                return fun(*args, **kwargs)

        return wrapped


def make_user_context(default_value=None):
    """Creates a `jax.jit` cache sensitive context: if its value changes,
    jitted functions called inside re-trace instead of reusing the traces
    made under the previous value.

    Example:
      >>> import microjax_rs as jax
      >>> my_context = jax.make_user_context(default_value=None)
      >>> with my_context(1):
      ...     my_context.value
      1
    """
    return UserContext(default_value)


class ExplicitX64Mode(enum.IntEnum):
    """Values of `explicit_x64_dtypes` (also given by their lower-case names)."""

    WARN = enum.auto()
    ERROR = enum.auto()
    ALLOW = enum.auto()


def parse_flags_with_absl():
    """JAX reads `--jax_*` command-line flags here; microjax_rs reads its
    options from the environment (`JAX_ENABLE_X64`, ...) at import."""
    return None
