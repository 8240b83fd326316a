"""microjax_rs: JAX's programming model on a Rust core.

    import microjax_rs as jax
    import microjax_rs.numpy as jnp

    f = jax.jit(lambda x, w, b: jnp.tanh(x @ w + b))
    print(jax.make_jaxpr(f)(x, w, b))
"""
import abc as _abc
import os as _os

if _os.environ.get("MICROJAX_RS_CORE"):
    def _load_core(path):
        """The extension built at `path` as `microjax_rs._core` (a developer
        build: `make test` runs the suite on its `ci`-profile build this way,
        leaving the package's own release build in place)."""
        import importlib.util
        import sys

        spec = importlib.util.spec_from_file_location(__name__ + "._core", path)
        if spec is None:
            raise ImportError(f"MICROJAX_RS_CORE={path!r} is not an extension module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)

    _load_core(_os.environ["MICROJAX_RS_CORE"])
    del _load_core

from . import _core
from . import _fork  # noqa: F401  (the os.register_at_fork handlers)
from .config import config
from . import dtypes, errors, tree_util, core
from .core import Tracer as _Tracer


class Array(_abc.ABC):
    """The array type (`isinstance(x, jax.Array)` holds for concrete arrays,
    on any device, and tracers)."""


Array.register(_core.ArrayImpl)
Array.register(_Tracer)

from ._devices import GpuArray as _GpuArray  # noqa: E402

Array.register(_GpuArray)  # an array on a GPU is a jax.Array too

from . import lax, numpy  # noqa: E402
from ._src.numpy import array_methods as _array_methods  # noqa: E402

_array_methods.install_hooks()  # operators and methods of arrays and tracers

numpy.ndarray = Array
from . import tree  # noqa: E402
from .api import (  # noqa: E402
    ShapeDtypeStruct,
    Device,
    block_until_ready,
    clear_caches,
    default_backend,
    default_device,
    device_count,
    device_get,
    device_put,
    devices,
    disable_jit,
    eval_shape,
    jit,
    local_device_count,
    local_devices,
    effects_barrier,
    make_jaxpr,
    make_mesh,
    named_call,
    named_scope,
    process_count,
    process_index,
    process_indices,
)
from ._grad import (  # noqa: E402
    checkpoint,
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    remat,
    value_and_grad,
    vjp,
)
from ._vmap import vmap  # noqa: E402
from ._pmap import pmap  # noqa: E402
from ._shard_map import shard_map  # noqa: E402
from .sharding import set_mesh  # noqa: E402
from . import distributed  # noqa: E402
from ._src.global_array import make_array_from_callback, make_array_from_process_local_data  # noqa: E402,F401
from . import custom_batching, custom_derivatives  # noqa: E402
from . import dlpack, export  # noqa: E402
from . import ad_checkpoint  # noqa: E402
from .ad_checkpoint import checkpoint_policies  # noqa: E402
from . import extend  # noqa: E402
from . import debug, experimental  # noqa: E402
from ._callback import pure_callback  # noqa: E402
from .custom_derivatives import closure_convert, custom_gradient, custom_jvp, custom_vjp  # noqa: E402
from .tree_util import Partial  # noqa: E402
from . import random  # noqa: E402
from . import ops  # noqa: E402
from . import nn  # noqa: E402  (`jax.nn` without a separate import, as JAX)
from . import image  # noqa: E402
from . import profiler, sharding, stages, typing  # noqa: E402
from .sharding import NamedSharding, P  # noqa: E402
from ._src.array import Shard  # noqa: E402
from .core import get_aval as typeof  # noqa: E402  (jax.typeof: the abstract value)
from ._src.indexing import ds  # noqa: E402  (jax.ds: a slice with a traced start)
from .core import ensure_compile_time_eval  # noqa: E402
from .config import (  # noqa: E402
    check_tracer_leaks, checking_leaks, debug_infs, debug_nans, default_matmul_precision, enable_x64, log_compiles, numpy_dtype_promotion,
    numpy_rank_promotion,
    debug_infs, debug_nans, default_matmul_precision, default_prng_impl, enable_custom_prng, enable_x64,
    legacy_prng_key, log_compiles, numpy_dtype_promotion, numpy_rank_promotion, threefry_partitionable,
)
from ._src.config import (  # noqa: E402
    allow_f16_reductions, array_garbage_collection_guard, debug_key_reuse, enable_checks, explain_cache_misses,
    jax2tf_associative_scan_reductions, make_user_context, no_execution, no_tracing, softmax_custom_jvp,
    thread_guard, transfer_guard, transfer_guard_device_to_device, transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from ._src.program_api import fwd_and_bwd, live_arrays, print_environment_info  # noqa: E402
from .dtypes import float0  # noqa: E402
from ._jax_alias import install_as_jax, is_installed_as_jax, uninstall_as_jax  # noqa: E402
from types import SimpleNamespace as _SimpleNamespace  # noqa: E402

# `jax.ad`: the markers of which cotangents `vjp_fn.with_refs(...)` computes.
ad = _SimpleNamespace(DontWant=_grad.DontWant, DidntWant=_grad.DidntWant, GradRef=_grad.GradRef,
                      GradValue=_grad.GradValue)
# `jax.memory`: memory spaces (`jax.typeof(x).memory_space`).
memory = _SimpleNamespace(Space=core.MemorySpace)

# The Cargo workspace version, compiled into the extension: the wheel's
# version (maturin reads Cargo.toml) and this one have a single source.
__version__: str = getattr(_core, "__version__", "0+unknown")

__all__ = [
    "Array", "ShapeDtypeStruct", "block_until_ready", "clear_caches", "config", "core", "device_count",
    "device_get", "device_put", "devices", "disable_jit", "dtypes", "errors", "eval_shape",
    "jit", "lax", "local_devices", "make_jaxpr", "numpy", "tree", "tree_util",
    "grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "jacobian",
    "hessian", "vmap", "custom_jvp", "custom_vjp", "custom_gradient", "custom_derivatives", "custom_batching",
    "linear_transpose", "checkpoint", "remat", "pmap", "local_device_count", "process_count",
    "process_index", "random", "pure_callback", "debug", "experimental", "export",
    "Device", "default_backend", "default_device", "nn", "image",
    "profiler", "sharding", "typing", "NamedSharding", "P", "Shard", "typeof", "ensure_compile_time_eval",
    "numpy_dtype_promotion", "numpy_rank_promotion", "named_scope", "named_call", "stages", "log_compiles", "enable_x64", "default_matmul_precision",
    "debug_nans", "debug_infs", "check_tracer_leaks", "checking_leaks",
    "debug_nans", "debug_infs", "default_prng_impl", "legacy_prng_key", "enable_custom_prng",
    "threefry_partitionable",
    "effects_barrier", "make_mesh",
    "install_as_jax", "uninstall_as_jax", "is_installed_as_jax", "ds", "ad", "memory",
    "allow_f16_reductions", "array_garbage_collection_guard", "debug_key_reuse", "enable_checks",
    "explain_cache_misses", "jax2tf_associative_scan_reductions", "make_user_context", "no_execution",
    "no_tracing", "softmax_custom_jvp", "thread_guard", "transfer_guard", "transfer_guard_device_to_device",
    "transfer_guard_device_to_host", "transfer_guard_host_to_device", "fwd_and_bwd", "live_arrays",
    "print_environment_info", "float0", "shard_map", "set_mesh", "distributed", "process_indices",
    "make_array_from_callback", "make_array_from_process_local_data",
]
