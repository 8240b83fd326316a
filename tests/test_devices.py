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

HAS_GPU = gpu_count() > 0
no_gpu = pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU paths")
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no GPU (gpu_device_count() is 0)")

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
    got["x"][0] = 100.0
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])
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
