"""The device API (jax.devices, default_backend, device_put, default_device,
platform selection) without and, where one is present, with a GPU. Every GPU
test is skipped when the binding reports no GPU (`gpu_device_count()` is 0
or the binding was built without the CUDA entry points)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import _core
from microjax_rs._devices import CpuDevice, CudaDevice, GpuArray, gpu_count

import fake_gpu as fake_gpu_module

HAS_GPU = gpu_count() > 0  # a stand-in GPU counts (MICROJAX_FAKE_GPU=1)
REAL_GPU = _core.gpu_device_count() > 0 if hasattr(_core, "gpu_device_count") else False
no_gpu = pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU paths")
needs_gpu = pytest.mark.skipif(not REAL_GPU, reason="no GPU (gpu_device_count() is 0)")

NO_GPU_MSG = ("Unknown backend: '{0}' requested, but no platforms that are instances of {0} "
              "are present. Platforms present are: cpu")


@pytest.fixture
def restore_config():
    yield
    jax.config.update("jax_platforms", None)
    jax.config.update("jax_default_device", None)
    jax.config.update("jax_num_cpu_devices", -1)


# ------------------------------------------------------------------ CPU devices


def test_cpu_device_objects():
    (d,) = jax.devices("cpu")
    assert isinstance(d, jax.Device) and isinstance(d, CpuDevice)
    assert (d.platform, d.device_kind, d.id, d.process_index) == ("cpu", "cpu", 0, 0)
    assert repr(d) == "CpuDevice(id=0)"
    assert d == CpuDevice(0) and d != CpuDevice(1)
    assert len({d, CpuDevice(0), CpuDevice(1)}) == 2


def test_num_cpu_devices_option(restore_config):
    jax.config.update("jax_num_cpu_devices", 3)
    assert jax.devices("cpu") == [CpuDevice(0), CpuDevice(1), CpuDevice(2)]
    assert jax.device_count("cpu") == jax.local_device_count("cpu") == 3
    assert jax.local_devices(backend="cpu") == jax.devices("cpu")


@no_gpu
def test_without_gpu_the_default_is_the_cpu():
    assert jax.default_backend() == "cpu"
    assert jax.devices() == [CpuDevice(0)]
    assert jax.device_count() == 1


@no_gpu
@pytest.mark.parametrize("name", ["gpu", "cuda"])
def test_asking_for_a_missing_gpu_raises_jaxs_error(name):
    for f in (jax.devices, jax.device_count, jax.local_devices, jax.local_device_count):
        with pytest.raises(RuntimeError) as e:
            f(backend=name)
        assert str(e.value) == NO_GPU_MSG.format(name)


def test_unknown_backend_names_raise():
    with pytest.raises(RuntimeError, match="^Unknown backend tpu$"):
        jax.devices("tpu")
    with pytest.raises(RuntimeError, match="^Unknown backend metal$"):
        jax.device_count("metal")


# --------------------------------------------------------- platform selection


def test_jax_platforms_option_selects_the_cpu(restore_config):
    jax.config.update("jax_platforms", "cpu")
    assert jax.default_backend() == "cpu"
    assert jax.devices() == [CpuDevice(0)]
    with pytest.raises(RuntimeError) as e:
        jax.devices("gpu")
    assert str(e.value) == NO_GPU_MSG.format("gpu")


@no_gpu
def test_requiring_a_missing_gpu_platform_raises(restore_config):
    jax.config.update("jax_platforms", "cuda,cpu")
    with pytest.raises(RuntimeError, match="Unable to initialize backend 'gpu': no CUDA device"):
        jax.devices()
    jax.config.update("jax_platforms", "tpu")
    with pytest.raises(RuntimeError, match="Unable to initialize backend 'tpu': unknown platform"):
        jax.default_backend()


PLATFORM_SCRIPT = """
import microjax_rs as jax
print(jax.default_backend(), jax.devices())
try:
    jax.devices("gpu")
    print("gpu ok")
except RuntimeError as e:
    print("gpu error:", e)
"""


def _run(env_update):
    env = {k: v for k, v in os.environ.items() if k not in ("MICROJAX_PLATFORM", "JAX_PLATFORMS")}
    env.update(env_update)
    return subprocess.run([sys.executable, "-c", PLATFORM_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("var", ["MICROJAX_PLATFORM", "JAX_PLATFORMS"])
def test_environment_restricts_to_the_cpu(var):
    r = _run({var: "cpu"})
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    assert first == "cpu [CpuDevice(id=0)]"
    assert second == "gpu error: " + NO_GPU_MSG.format("gpu")


def test_microjax_platform_wins_over_jax_platforms():
    r = _run({"MICROJAX_PLATFORM": "cpu", "JAX_PLATFORMS": "cuda"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "cpu [CpuDevice(id=0)]"


@no_gpu
def test_environment_asking_for_a_missing_gpu_fails():
    r = _run({"MICROJAX_PLATFORM": "gpu"})
    assert r.returncode != 0
    assert "RuntimeError: Unable to initialize backend 'gpu': no CUDA device" in r.stderr


# ------------------------------------------------------------- default device


def test_default_device_context_and_option(restore_config):
    x = np.arange(3.0, dtype=np.float32)
    e0 = _core.config_epoch()
    with jax.default_device(CpuDevice(0)):
        assert _core.config_epoch() != e0  # part of every compile-cache key
        assert jax.device_put(x).devices() == {CpuDevice(0)}
    jax.config.update("jax_default_device", jax.devices("cpu")[0])
    assert jax.device_put(x).device == CpuDevice(0)
    jax.config.update("jax_default_device", "cpu")
    assert jax.device_put(x).device == CpuDevice(0)


def test_default_device_rejects_non_devices(restore_config):
    with pytest.raises(TypeError, match="default_device: expected a Device, got int: 3"):
        with jax.default_device(3):
            pass
    with pytest.raises(TypeError, match="jax_default_device must be a Device"):
        jax.config.update("jax_default_device", 1.5)


# ------------------------------------------------------- device_put / device_get


def test_device_put_over_a_pytree():
    tree = {"a": np.ones((2, 3), np.float32), "b": (np.int32(4), [2.5, True])}
    out = jax.device_put(tree, jax.devices("cpu")[0])
    assert set(out) == {"a", "b"}
    leaves = jax.tree_util.tree_leaves(out)
    assert all(isinstance(v, jax.Array) for v in leaves)
    np.testing.assert_array_equal(np.asarray(out["a"]), tree["a"])
    assert out["b"][0].dtype == np.int32 and int(out["b"][0]) == 4
    assert out["b"][1][0].weak_type and float(out["b"][1][0]) == 2.5
    assert bool(out["b"][1][1]) is True
    assert jax.device_put(tree, "cpu")["a"].device == CpuDevice(0)


@no_gpu
def test_device_put_keeps_arrays_and_rejects_bad_devices():
    x = jnp.arange(4.0)
    assert jax.device_put(x) is x
    with pytest.raises(TypeError, match="device_put: expected a Device, got int: 0"):
        jax.device_put(x, 0)


def test_array_placement_queries():
    x = jnp.ones((2, 2))
    assert x.devices() == {CpuDevice(0)}
    assert x.device == CpuDevice(0)


def test_device_get_copies_to_numpy():
    x = jnp.arange(3.0)
    got = jax.device_get({"x": x, "n": 3})
    assert isinstance(got["x"], np.ndarray) and got["n"] == 3
    # A read-only view of the array's memory, as JAX's.
    assert not got["x"].flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        got["x"][0] = 100.0
    np.testing.assert_array_equal(got["x"], [0.0, 1.0, 2.0])
    copy = np.asarray(x).copy()
    copy[1] = -1.0
    assert float(x[1]) == 1.0


def test_block_until_ready_returns_its_argument():
    tree = (jnp.ones(2), [jnp.zeros(3)], 7)
    out = jax.block_until_ready(tree)
    assert out is tree
    x = jnp.ones(2)
    assert x.block_until_ready() is x


def test_device_put_under_jit_passes_tracers_through():
    f = jax.jit(lambda x: jax.device_put(x) * 2.0)
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(3.0))), [0.0, 2.0, 4.0])
    g = jax.grad(lambda x: jnp.sum(jax.device_put(x) ** 2))
    np.testing.assert_array_equal(np.asarray(g(jnp.arange(3.0))), [0.0, 2.0, 4.0])


# ---------------------------------------------------------------- GPU paths


@needs_gpu
def test_gpu_devices_and_default_backend():
    gpus = jax.devices("gpu")
    assert gpus == jax.devices("cuda") and len(gpus) == _core.gpu_device_count()
    info = _core.gpu_device_info(0)
    d = gpus[0]
    assert isinstance(d, CudaDevice) and d.platform == "gpu" and d.id == 0
    assert repr(d) == "CudaDevice(id=0)" and d.device_kind == info["name"]
    assert jax.default_backend() == "gpu" and jax.devices()[0] == d
    assert d != CpuDevice(0) and hash(d) == hash(jax.devices("gpu")[0])


@needs_gpu
def test_device_put_to_the_gpu_and_back():
    d = jax.devices("gpu")[0]
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = jax.device_put({"x": x}, d)["x"]
    assert isinstance(g, GpuArray) and g.devices() == {d} and g.device == d
    assert g.shape == (3, 4) and g.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(g), x)
    np.testing.assert_array_equal(jax.device_get(g), x)
    back = jax.device_put(g, jax.devices("cpu")[0])
    assert back.devices() == {CpuDevice(0)}
    np.testing.assert_array_equal(np.asarray(back), x)
    assert jax.device_put(x).device == d  # the GPU is the default device


@needs_gpu
def test_environment_selects_the_cpu_over_a_present_gpu():
    r = _run({"MICROJAX_PLATFORM": "cpu"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "cpu [CpuDevice(id=0)]"


# ------------------------------------------------------- jit on the GPU


@needs_gpu
def test_jit_runs_on_the_default_gpu_and_keeps_results_there():
    d = jax.devices("gpu")[0]
    f = jax.jit(lambda x, w: jnp.tanh(x @ w + 1.0))
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    w = np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2)
    out = f(x, w)
    assert isinstance(out, GpuArray) and out.device == d
    want = np.tanh(x @ w + 1.0)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(f(out @ w.T[:2, :2], w[:2])), np.tanh(
        np.asarray(out) @ w.T[:2, :2] @ w[:2] + 1.0), rtol=1e-5, atol=1e-6)
    g = jax.device_put(x, d)
    np.testing.assert_allclose(np.asarray(g + g * 2.0), 3 * x, rtol=1e-6)
    with jax.default_device(jax.devices("cpu")[0]):
        assert type(f(x, w)) is _core.ArrayImpl


@pytest.fixture
def fake_gpu(monkeypatch):
    """One fake GPU (tests/fake_gpu.py): the routing to the GPU (which
    device, which program, what stays on the device) is checked on any
    machine; the real entry points are tested by the needs_gpu tests and
    tests/test_cuda.py. Yields the list of programs run."""
    runs = []
    fake_gpu_module.install(monkeypatch.setattr, runs)
    yield runs
    _core.bump_epoch()


def test_jit_routes_to_the_default_gpu(fake_gpu, restore_config):
    runs = fake_gpu
    (d,) = jax.devices("gpu")
    assert jax.default_backend() == "gpu" and d.device_kind == "Fake GPU"
    f = jax.jit(lambda x, y: {"s": jnp.sin(x) * y, "t": x.sum()})
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for call in range(3):  # never served by the CPU fast path while the GPU is default
        out = f(x, 2.0)
        assert isinstance(out["s"], GpuArray) and out["s"].device == d
        assert len(runs) == call + 1
    np.testing.assert_allclose(np.asarray(out["s"]), np.sin(x) * 2.0, rtol=1e-6)
    assert float(np.asarray(out["t"])) == 15.0
    # Results fed back stay on the device; their operators run there too.
    again = f(out["s"], 1.0)
    assert isinstance(again["s"], GpuArray) and len(runs) == 4
    total = out["s"] + out["s"] * 2.0
    assert isinstance(total, GpuArray) and len(runs) == 6
    np.testing.assert_allclose(np.asarray(total), 3 * np.sin(x) * 2.0, rtol=1e-6)
    assert isinstance(-out["s"], GpuArray) and isinstance(out["s"].sum(), GpuArray)
    np.testing.assert_allclose(np.asarray(out["s"].T), (np.sin(x) * 2.0).T, rtol=1e-6)
    # The CPU as default device: host arrays, no device runs.
    n = len(runs)
    with jax.default_device(jax.devices("cpu")[0]):
        host = f(x, 2.0)
        assert type(host["s"]) is _core.ArrayImpl and len(runs) == n
        # ... unless an argument lives on the GPU.
        assert isinstance(f(out["s"], 1.0)["s"], GpuArray) and len(runs) == n + 1
    jax.config.update("jax_platforms", "cpu")
    assert type(f(x, 2.0)["s"]) is _core.ArrayImpl and len(runs) == n + 1


def test_grad_inside_jit_runs_on_the_gpu(fake_gpu):
    runs = fake_gpu
    f = jax.jit(jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)))
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    g = f(x)
    assert isinstance(g, GpuArray) and len(runs) == 1
    t = np.tanh(x)
    np.testing.assert_allclose(np.asarray(g), 2 * t * (1 - t * t), rtol=1e-5)


# Eager jnp / lax / nn functions of a GpuArray: every primitive runs on the
# (fake) GPU, results stay there, values as on the CPU.
EAGER_ON_GPU = {
    "sin": jnp.sin,
    "add_scalar": lambda a: jnp.add(a, 1.5),
    "add_host": lambda a: a + np.arange(3, dtype=np.float32),
    "sum_axis": lambda a: jnp.sum(a, axis=1),
    "mean": jnp.mean,
    "where": lambda a: jnp.where(a > 0, a, 0.0),
    "matmul": lambda a: a @ a.T,
    "concatenate": lambda a: jnp.concatenate([a, a], axis=1),
    "softmax": lambda a: jax.nn.softmax(a, axis=-1),
    "cumsum": lambda a: jnp.cumsum(a, axis=0),
    "sort": lambda a: jnp.sort(a, axis=1),
    "take": lambda a: jnp.take(a, jnp.array([2, 0]), axis=1),
    "einsum": lambda a: jnp.einsum("ij,kj->ik", a, a),
    "norm": jnp.linalg.norm,
    "asarray_int": lambda a: jnp.asarray(a * 4, jnp.int32),
    "method_max": lambda a: a.max(axis=0),
    "property_T": lambda a: a.T,
    "getitem": lambda a: a[1, ::-1],
    "at_add": lambda a: a.at[:, 0].add(10.0),
    "iterate": lambda a: jnp.stack(list(a)),
    "cond": lambda a: jax.lax.cond(a.sum() > 0, jnp.sin, jnp.cos, a),
    "fori_loop": lambda a: jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0, a),
    # Un-jitted transforms: their programs run where the GpuArray is.
    "grad": jax.grad(lambda a: jnp.sum(jnp.sin(a) * a)),
    "value_and_grad": lambda a: jax.value_and_grad(lambda z: jnp.sum(jnp.tanh(z)))(a)[1],
    "vmap": jax.vmap(lambda r: r @ r + jnp.max(r)),
    "jvp": lambda a: jax.jvp(jnp.tanh, (a,), (a * 0.5,))[1],
    "vjp": lambda a: jax.vjp(jnp.sin, a)[1](a)[0],
    "jacrev": lambda a: jax.jacrev(lambda r: jnp.tanh(r) * 2.0)(a[0]),
    "jacfwd": lambda a: jax.jacfwd(lambda r: jnp.sin(r) * r)(a[1]),
    "hessian": lambda a: jax.hessian(lambda r: jnp.sum(r ** 3))(a[1]),
    "closure": lambda a: jax.grad(lambda w: jnp.sum(jnp.tanh(w * a)))(jnp.ones(3)),
}


@pytest.mark.parametrize("name", sorted(EAGER_ON_GPU))
def test_eager_functions_of_a_gpu_array_run_on_the_gpu(fake_gpu, name):
    runs = fake_gpu
    f = EAGER_ON_GPU[name]
    host = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    with jax.default_device(jax.devices("cpu")[0]):
        want = np.asarray(f(jnp.asarray(host)))
        assert not runs  # the reference ran on the host
    x = jax.device_put(host, jax.devices("gpu")[0])
    out = f(x)
    assert isinstance(out, GpuArray), type(out)
    assert runs, "nothing ran on the GPU"
    assert np.asarray(out).dtype == want.dtype
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6, atol=1e-6)


def test_gpu_array_python_protocols(fake_gpu):
    x = jax.device_put(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    assert isinstance(x, GpuArray) and len(x) == 2
    assert float(x.sum()) == 10.0 and int(x[1, 1]) == 4 and bool(x[0, 0])
    assert jnp.asarray(x) is x and x.weak_type is False
    assert [1, 2, 3][jax.device_put(np.int32(2))] == 3
    with pytest.raises(TypeError, match="length-1"):
        float(x)
    with pytest.raises(TypeError, match="integer arrays"):
        [0][x[0, 0]]
    with pytest.raises(AttributeError, match="no attribute 'frobnicate'"):
        x.frobnicate


def test_gpu_array_to_numpy_honours_copy(fake_gpu):
    x = jax.device_put(np.array([1.5, 2.5], np.float32))
    # As JAX: a read-only host value; copy=True a writable copy; a dtype
    # change without a copy is NumPy's ValueError.
    a = np.asarray(x)
    assert a.dtype == np.float32 and a.tolist() == [1.5, 2.5] and not a.flags.writeable
    b = np.array(x, copy=True)
    b[0] = 7.0
    assert b.flags.writeable and np.asarray(x).tolist() == [1.5, 2.5]
    assert not np.asarray(x, copy=False).flags.writeable
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError):
        np.asarray(x, dtype=np.float64, copy=False)


def test_gpu_devices_of_a_multi_process_run_are_global(fake_gpu, monkeypatch):
    from microjax_rs._src import distributed
    from microjax_rs._src.device_types import CudaDevice
    info = {"name": "Fake GPU", "compute_capability": (9, 0), "memory_bytes": 1 << 30}
    # Process 1 of 2, each using its CUDA device 0 (as initialize gathers it).
    monkeypatch.setattr(distributed.global_state, "gpu_table", [[(0, info)], [(0, info)]])
    monkeypatch.setattr(distributed.global_state, "process_id", 1)
    monkeypatch.setattr(distributed.global_state, "num_processes", 2)
    devs = jax.devices("gpu")
    assert [(type(d), d.id, d.process_index, d.local_hardware_id) for d in devs] == \
        [(CudaDevice, 0, 0, 0), (CudaDevice, 1, 1, 0)]
    assert jax.local_devices(backend="gpu") == [devs[1]]
    y = jax.device_put(np.float32(2.0))
    assert y.device == devs[1] and fake_gpu == []
    assert float(jax.jit(lambda v: v * 3)(y)) == 6.0 and len(fake_gpu) == 1
    with pytest.raises(ValueError, match="belongs to process 0"):
        jax.device_put(np.float32(1.0), devs[0])


def test_local_device_ids_select_this_process_gpus(fake_gpu):
    from microjax_rs import _devices
    from microjax_rs._src import distributed
    assert [ordinal for ordinal, _ in _devices.local_gpu_rows(None)] == [0]
    with pytest.raises(ValueError, match="no GPU 3"):
        _devices.local_gpu_rows([3])
    jax.distributed.initialize(local_device_ids=[0])
    try:
        assert [[o for o, _ in rows] for rows in distributed.gpu_table()] == [[0]]
        assert [(d.id, d.local_hardware_id) for d in jax.devices("gpu")] == [(0, 0)]
    finally:
        jax.distributed.shutdown()
    assert distributed.gpu_table() is None
