"""`jax._src.config` at JAX's path: each option as a state object with a
`.value` (read from `microjax_rs.config`) that is also a context manager /
decorator setting the option for a block, as JAX's `config.enable_x64(True)`."""
import enum

from ..config import _OptionContext, config  # noqa: F401


class _State:
    """One `jax_*` option: `.value` reads it; calling it with a value gives a
    context manager (also a decorator) that sets it for a block."""

    def __init__(self, option):
        self.option = option

    @property
    def value(self):
        return config.read(self.option)

    def __call__(self, new_value):
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


class ExplicitX64Mode(enum.IntEnum):
    """Values of `explicit_x64_dtypes` (also given by their lower-case names)."""

    WARN = enum.auto()
    ERROR = enum.auto()
    ALLOW = enum.auto()


def parse_flags_with_absl():
    """JAX reads `--jax_*` command-line flags here; microjax_rs reads its
    options from the environment (`JAX_ENABLE_X64`, ...) at import."""
    return None
