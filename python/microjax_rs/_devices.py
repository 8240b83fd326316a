"""Devices and platform selection (JAX's `jax.devices`, `device_put`, ...).

Two platforms: "cpu" (always built in: every array is an `ArrayImpl` in host
memory) and "gpu" (CUDA), present when the binding reports GPUs through
`_core.gpu_device_count()`. The GPU entry points of the binding are looked
up by name, so this module works with a binding built without them (no GPU).

Which platforms are used, in priority order: `config.update("jax_platforms",
"cpu")`, else the environment variable `MICROJAX_PLATFORM`, else JAX's
`JAX_PLATFORMS` (a comma-separated list of "cpu", "gpu", "cuda"), else every
present platform with the GPU first (as JAX). The default device is the
`jax.default_device(...)` context's, else `config.jax_default_device`, else
the first device of the first platform.
"""
import contextlib
import operator
import os
import threading

import numpy as np

from . import _core, _lru, core
from .config import config
from .core import ArrayImpl, Tracer
from ._src import program_flags as _program_flags, traceback_util as _traceback_util
from .tree_util import _tree_map_data
from ._src.device_types import CpuDevice, CudaDevice, Device  # noqa: F401  (jax.Device)
from ._src import array as _array_placement
from ._src.numpy import array_methods as _array_methods

_GPU_NAMES = ("gpu", "cuda")


def _binding(name):
    """A GPU entry point of the binding, or None when it was built without."""
    return getattr(_core, name, None)


# --------------------------------------------------------------- platforms


_GPU_COUNT = []  # probed once: the probe looks for the CUDA libraries (ms)


def gpu_count():
    """GPUs the binding can use (0 without a GPU build, driver or device)."""
    if not _GPU_COUNT:
        f = _binding("gpu_device_count")
        if f is not None:
            from ._src import cuda_libs
            cuda_libs.preload()  # toolkit / pip-package libraries off the loader's path
        _GPU_COUNT.append(int(f()) if f is not None else 0)
    return _GPU_COUNT[0]


_GPU_DEVICES = {}


def local_gpu_rows(local_device_ids=None):
    """`(CUDA ordinal, device info)` of each GPU this process uses: those
    `local_device_ids` names (`jax.distributed.initialize`), else all."""
    n = gpu_count()
    if n == 0:
        return []  # `local_device_ids` selects GPUs; a CPU-only process has none
    ids = range(n) if local_device_ids is None else local_device_ids
    rows = []
    for i in ids:
        if not 0 <= int(i) < n:
            raise ValueError(f"local_device_ids: no GPU {i} in this process ({n} present)")
        rows.append((int(i), dict(_binding("gpu_device_info")(int(i)))))
    return rows


def _default_gpu_ordinal():
    """The CUDA ordinal of the default device when it is a GPU, else None."""
    if gpu_count() == 0:
        return None
    dev = default_device_object()
    return dev.local_hardware_id if dev.platform == "gpu" else None


def _gpu_devices():
    """The GPUs of every process of the run, process-major (as JAX numbers
    them): one process's own from the binding, a multi-process run's from
    the table `distributed.initialize` gathered. `local_hardware_id` is
    the CUDA ordinal within the device's process."""
    from ._src import distributed
    table = distributed.gpu_table()
    if table is None:
        table = [[(i, None) for i in range(gpu_count())]]
    out = []
    for p, rows in enumerate(table):
        for ordinal, info in rows:
            key = (len(out), p, ordinal)
            dev = _GPU_DEVICES.get(key)
            if dev is None:
                if info is None:
                    info = dict(_binding("gpu_device_info")(ordinal))
                dev = _GPU_DEVICES[key] = CudaDevice(len(out), info, process_index=p,
                                                     local_hardware_id=ordinal)
            out.append(dev)
    return out


def _num_cpu_devices():
    n = config.jax_num_cpu_devices
    if n is not None and int(n) > 0:
        return int(n)
    for flag in os.environ.get("XLA_FLAGS", "").split():
        if flag.startswith("--xla_force_host_platform_device_count="):
            try:
                return max(1, int(flag.split("=", 1)[1]))
            except ValueError:
                pass
    return 1


def _requested_platforms():
    """The platform list the user asked for (canonical names), or None."""
    spec = config.jax_platforms
    if spec is None:
        spec = os.environ.get("MICROJAX_PLATFORM") or os.environ.get("JAX_PLATFORMS")
    if not spec:
        return None
    out = []
    for name in str(spec).split(","):
        name = name.strip().lower()
        name = "gpu" if name in _GPU_NAMES else name
        if name and name not in out:
            out.append(name)
    return out


def _platforms():
    """The platforms in use, highest priority first."""
    requested = _requested_platforms()
    if requested is None:
        return (["gpu"] if gpu_count() > 0 else []) + ["cpu"]
    for name in requested:
        if name == "gpu" and gpu_count() == 0:
            from ._src import cuda_libs
            raise RuntimeError(
                "Unable to initialize backend 'gpu': no CUDA device is present "
                "(set JAX_PLATFORMS='' or MICROJAX_PLATFORM=cpu to use the CPU). "
                f"CUDA libraries: {cuda_libs.report()}")
        if name not in ("cpu", "gpu"):
            raise RuntimeError(
                f"Unable to initialize backend '{name}': unknown platform "
                "(microjax_rs has 'cpu' and 'gpu')")
    return requested


def _platform_devices(platform):
    if platform == "gpu":
        return _gpu_devices()
    from ._src import distributed
    n = _num_cpu_devices()
    # Every process of a multi-process run has `n` CPU devices; device ids are
    # process-major (process p's devices are p*n ... p*n+n-1), as JAX's.
    return [CpuDevice(p * n + i, process_index=p)
            for p in range(distributed.process_count()) for i in range(n)]


def _resolve_backend(backend):
    """The canonical platform for `backend` (None: the default one)."""
    present = _platforms()
    if backend is None:
        return present[0]
    if not isinstance(backend, str):
        backend = getattr(backend, "platform", backend)
    name = str(backend).lower()
    if name in _GPU_NAMES:
        if "gpu" not in present:
            raise RuntimeError(
                f"Unknown backend: '{backend}' requested, but no platforms that are instances "
                f"of {backend} are present. Platforms present are: " + ",".join(present))
        return "gpu"
    if name not in present:
        raise RuntimeError(f"Unknown backend {backend}")
    return name


def devices(backend=None):
    """The devices of `backend` ("cpu", "gpu"/"cuda"; None: the default
    platform) of every process of the run. CPU: one device per process unless
    `jax_num_cpu_devices` or XLA_FLAGS asks for more."""
    return _platform_devices(_resolve_backend(backend))


def device_count(backend=None):
    """Number of devices of ``backend`` (default: the default backend) of every process of the
    run."""
    return len(devices(backend))


def local_devices(process_index=None, backend=None):
    """The devices of ``backend`` attached to process ``process_index`` (default: this
    process), as a list."""
    from ._src import distributed
    p = distributed.process_index() if process_index is None else int(process_index)
    return [d for d in devices(backend) if d.process_index == p]


def local_device_count(backend=None):
    """Number of devices of ``backend`` attached to this process."""
    return len(local_devices(backend=backend))


def default_backend():
    """The platform of the default device: "gpu" when a GPU is present and
    not excluded, else "cpu"."""
    return _resolve_backend(None)


# ------------------------------------------------------------ default device

_LOCAL = threading.local()


def _check_local(device, what):
    from ._src import distributed
    if device.process_index != distributed.process_index():
        raise ValueError(f"{what}: {device} belongs to process {device.process_index}; this is "
                         f"process {distributed.process_index()} (only its own devices are "
                         "addressable)")


def _check_device(device, what):
    if not isinstance(device, Device):
        raise TypeError(f"{what}: expected a Device, got {type(device).__name__}: {device!r}")


def _configured_default():
    stack = getattr(_LOCAL, "stack", None)
    if stack:
        return stack[-1]
    return config.jax_default_device


def default_device_object():
    """The device computations and `device_put(x)` use by default."""
    dev = _configured_default()
    if dev is None or isinstance(dev, str):
        # As JAX: the first of this process's devices.
        return local_devices(backend=dev)[0]
    return dev


@contextlib.contextmanager
def default_device(device):
    """`with jax.default_device(d):` makes `d` (a Device, a platform name,
    or None for the usual choice) the default device on this thread."""
    if device is not None and not isinstance(device, str):
        _check_device(device, "default_device")
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    stack.append(device)
    _core.bump_epoch()
    try:
        yield
    finally:
        stack.pop()
        _core.bump_epoch()


# ------------------------------------------------------------- GPU arrays


class GpuArray:
    """An array resident in one GPU's memory (wraps the binding's
    `GpuBuffer`). `np.asarray` and `device_get` copy it back to the host;
    `device_put(x, cpu_device)` gives a host `Array`. Its operators and
    eager jnp/lax functions of it run on its GPU, results staying there."""

    def __init__(self, buf, device):
        self._buf = buf
        self._device = device
        self._aval = (tuple(buf.shape), str(buf.dtype), bool(getattr(buf, "weak_type", False)))

    @property
    def shape(self):
        return self._aval[0]

    @property
    def dtype(self):
        from . import dtypes

        return dtypes.np_dtype(self._aval[1])  # float0 and bfloat16 have no NumPy name

    @property
    def dtype_name(self):
        return self._aval[1]

    @property
    def weak_type(self):
        return self._aval[2]

    @property
    def aval(self):
        return core.ShapedArray(self.shape, self.dtype_name, self.weak_type)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def device(self):
        return self._device

    def devices(self):
        return {self._device}

    @property
    def sharding(self):
        from .sharding import SingleDeviceSharding
        return SingleDeviceSharding(self._device, memory_kind="device")

    def block_until_ready(self):
        """Waits until the device has finished computing this array."""
        self._live().block_until_ready()
        return self

    def delete(self):
        """Frees the device memory (as `jit` donation does); later reads
        raise, shape and dtype stay readable."""
        self._buf = None

    def is_deleted(self):
        return self._buf is None

    def _live(self):
        if self._buf is None:
            dims = ",".join(map(str, self.shape))
            raise RuntimeError(f"Array has been deleted with shape={self.dtype_name}[{dims}].")
        return self._buf

    def to_host(self):
        """The array copied to host memory (an `Array`)."""
        return self._live().to_host()

    def __array__(self, dtype=None, copy=None):
        # The device memory cannot be viewed: the array is copied to the
        # host, and NumPy gets a read-only view of that copy (as JAX returns
        # its host value of a device array); `copy=True` gives a writable
        # array, `copy=False` with a dtype change raises NumPy's ValueError.
        host = np.asarray(self.to_host())
        return np.asarray(host, dtype=dtype) if copy is None else \
            np.asarray(host, dtype=dtype, copy=copy)

    def item(self, *args):
        """The element at `args` (all of a size-1 array) as a Python scalar, as `Array.item`."""
        return np.asarray(self).item(*args)

    def __repr__(self):
        return f"GpuArray({np.asarray(self)!r}, device={self._device!r})"

    __array_priority__ = 1000

    def __getattr__(self, name):
        # The jnp array methods and properties (x.max(), x.T, x.at[...]),
        # run eagerly: each primitive on the array's GPU.
        if name.startswith("__"):
            raise AttributeError(name)
        from ._src.numpy import array_methods as _array_methods

        return _array_methods.get_attribute(self, name)

    def __getitem__(self, idx):
        from ._src.numpy import array_methods as _array_methods

        return _array_methods.getitem_hook(self, idx)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        from ._src.numpy import array_methods as _array_methods

        return _array_methods.iter_hook(self)

    def _scalar(self):
        if self.size != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        return np.asarray(self).reshape(())[()]

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def __complex__(self):
        return complex(self._scalar())

    def __bool__(self):
        return bool(self._scalar())

    def __index__(self):
        if not np.issubdtype(self.dtype, np.integer):
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        return int(self._scalar())


# Operators of GpuArray: each a jitted function, so it runs where `jit` runs
# a call with a GpuArray argument (on its device). Eager jnp functions on a
# GpuArray reach `core.eval_primitive`, which runs each primitive on the
# device (`_eval_on_gpu`).
_JITTED = _lru.LRU("devices.jitted", 4096)  # key -> jitted function (operators, single primitives)


def _jitted(key, make):
    """The jitted `make()` cached under `key` (None: not cached)."""
    fn = _JITTED.get(key) if key is not None else None
    if fn is None:
        from . import api

        fn = api.jit(make())
        if key is not None:
            _JITTED[key] = fn
    return fn


def _operator(name, reflected=False):
    op = getattr(operator, name)
    return _jitted(("operator", name, reflected),
                   lambda: (lambda a, b: op(b, a)) if reflected else op)


def _install_gpu_operators():
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                 "lt", "le", "gt", "ge", "eq", "ne", "and_", "or_", "xor"):
        dunder = name.rstrip("_")
        setattr(GpuArray, f"__{dunder}__", lambda a, b, _n=name: _operator(_n)(a, b))
        if name not in ("lt", "le", "gt", "ge", "eq", "ne"):
            setattr(GpuArray, f"__r{dunder}__", lambda a, b, _n=name: _operator(_n, True)(a, b))
    for name in ("neg", "pos", "abs", "invert"):
        setattr(GpuArray, f"__{name}__", lambda a, _n=name: _operator(_n)(a))
    GpuArray.__hash__ = None
    GpuArray.__array_namespace__ = _array_methods.__array_namespace__


_install_gpu_operators()


# ------------------------------------------------------ eager ops on a GPU


def _eval_on_gpu(prim, args, params):
    """An eager primitive with a `GpuArray` operand: the primitive alone,
    jitted, so it runs on that array's GPU (host operands are copied there)
    and its results stay there. One jitted function per primitive and
    params (the jit cache then keys on the operand types)."""
    key = ("primitive", prim, tuple(sorted(params.items())))
    try:
        hash(key)
    except TypeError:  # unhashable params: not cached
        key = None
    return _jitted(key, lambda: lambda *xs: prim.bind(*xs, **params))(*args)




# ------------------------------------------------------------ jit on a GPU


def gpu_target(leaves):
    """The GPU a jitted call runs on: the device of its first `GpuArray`
    argument, else the default device when that is a GPU; None: the CPU."""
    for x in leaves:
        if type(x) is GpuArray:
            return x.device
    if gpu_count() == 0:
        return None
    dev = default_device_object()
    return dev if dev.platform == "gpu" else None


def run_on_gpu(closed, leaves, device):
    """Runs the program handle `closed` on `device`: arguments are copied
    there (those already on it stay), results stay there as GpuArrays."""
    bufs = [_to_gpu(x, device)._live() for x in leaves]
    ordinal = device.local_hardware_id
    return [GpuArray(b, device) for b in _binding("gpu_run")(closed, bufs, ordinal)]


core.register_device_array(GpuArray, _eval_on_gpu, run_on_gpu)


def _register_gpu_hooks():
    from ._src import distributed
    distributed.register_gpu_hooks(local_gpu_rows, _default_gpu_ordinal)


_register_gpu_hooks()


# ------------------------------------------------------------ device_put/get


def _to_host(x):
    if isinstance(x, GpuArray):
        return x.to_host()
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        with _program_flags.explicit_transfer():  # device_put: an explicit transfer
            return core.to_array(x)
    return x


def _to_gpu(x, device):
    if isinstance(x, GpuArray) and x.device == device:
        return x
    host = _to_host(x)
    if not isinstance(host, ArrayImpl):
        raise TypeError(f"device_put: {type(x).__name__} is not an array type")
    _check_local(device, "device_put")
    return GpuArray(_binding("gpu_put")(host, device.local_hardware_id), device)


def device_put(x, device=None):
    """Places every leaf of `x` on `device` (None: the default device; a
    `Device`, a platform name or a `Sharding`). On the CPU a leaf becomes an
    `Array`; on a GPU a `GpuArray`. Onto a CPU device other than the first,
    or a `NamedSharding` over CPU devices, the result is a new `Array`
    whose `sharding` / `addressable_shards` describe that placement (the
    values stay whole in host memory, see `_src/array.py`). Tracers are
    returned unchanged (inside a trace placement is the executor's
    choice)."""
    from .sharding import Sharding, SingleDeviceSharding

    sharding = None
    if device is None:
        device = default_device_object()
    elif isinstance(device, str):
        device = devices(device)[0]
    elif isinstance(device, SingleDeviceSharding):
        device = next(iter(device.device_set))
    elif isinstance(device, Sharding):
        sharding = device
        if any(d.platform != "cpu" for d in sharding.device_set):
            raise NotImplementedError("device_put: a sharding over GPU devices is not supported "
                                      "(place the array on one GPU)")
        # as JAX: the placed array's sharding names the memory it is in
        placed_as = sharding if sharding.memory_kind is not None else _with_memory_kind(sharding, "device")
    if sharding is None:
        _check_device(device, "device_put")

    def put(leaf):
        if isinstance(leaf, Tracer):
            return leaf
        if sharding is not None:
            host = _to_host(leaf)
            sharding.shard_shape(tuple(host.shape))  # JAX's ValueError for an uneven split
            return _array_placement.place(host, placed_as)
        if device.platform == "gpu":
            return _to_gpu(leaf, device)
        if device != CpuDevice(0):
            return _array_placement.place(_to_host(leaf), SingleDeviceSharding(device, memory_kind="device"))
        return _array_placement.unplaced(_to_host(leaf))

    return _tree_map_data(put, x)


def _with_memory_kind(sharding, kind):
    from .sharding import NamedSharding

    if isinstance(sharding, NamedSharding):
        return NamedSharding(sharding.mesh, sharding.spec, memory_kind=kind)
    return sharding


def _to_device(x):
    def to_device(device, stream=None):
        """A copy of the array on `device` (`stream` is accepted for the
        Array API and ignored)."""
        return device_put(x, device)
    return to_device


_array_methods.register_array_attribute("to_device", _to_device)


def _format(x):
    """`x.format`: its layout (row-major: axes major to minor) and sharding."""
    from .stages import Format, Layout

    return Format(Layout(tuple(range(x.ndim))), x.sharding)


_array_methods.register_array_attribute("format", _format)
_array_methods.register_array_attribute("traceback", _traceback_util.traceback_of)
_array_placement.install_array_attributes(_array_methods.register_array_attribute)


def device_get(x):
    """Every array leaf of `x` as a NumPy array in host memory."""
    def get(leaf):
        if isinstance(leaf, (ArrayImpl, GpuArray)):
            return np.asarray(leaf)
        return leaf

    return _tree_map_data(get, x)


def block_until_ready(x):
    """Waits for every array leaf of `x` (host arrays are always ready);
    returns `x`."""
    def wait(leaf):
        f = getattr(leaf, "block_until_ready", None)
        if f is not None and not isinstance(leaf, Tracer):
            f()
        return leaf

    _tree_map_data(wait, x)
    return x
