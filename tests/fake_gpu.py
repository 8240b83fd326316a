"""A stand-in GPU for the Python routing: the binding's device entry points
replaced by host functions that record the programs they run. Used by the
`fake_gpu` fixture (tests/test_devices.py) and, for a whole-suite run with
the GPU as the default device on a machine without one, by
`MICROJAX_FAKE_GPU=1 pytest` (tests/conftest.py)."""
import numpy as np

from microjax_rs import _core, _devices


class FakeBuffer:
    """The binding's GpuBuffer interface over a host array."""

    def __init__(self, host, ordinal):
        self.host, self.ordinal = host, ordinal

    shape = property(lambda self: self.host.shape)
    dtype = property(lambda self: self.host.dtype_name)
    weak_type = property(lambda self: self.host.weak_type)

    def to_host(self):
        return self.host

    def block_until_ready(self):
        """Host arrays are always ready."""


def entry_points(runs):
    """The fake binding: one GPU; `gpu_run` appends each program to `runs`."""

    def device(ordinal):
        # The binding's error for an ordinal it does not have.
        if ordinal != 0:
            raise RuntimeError(f"no CUDA device {ordinal} (1 device(s) found)")

    def gpu_put(host, ordinal):
        device(ordinal)
        np.asarray(host)  # a deleted (donated) array raises, as the binding does
        return FakeBuffer(host, ordinal)

    def gpu_run(closed, bufs, ordinal):
        device(ordinal)
        assert all(type(b) is FakeBuffer and b.ordinal == ordinal for b in bufs)
        runs.append(closed)
        return [FakeBuffer(h, ordinal) for h in closed.run([b.host for b in bufs])]

    return {
        "gpu_device_count": lambda: 1,
        "gpu_device_info": lambda i: {"name": "Fake GPU", "compute_capability": (9, 0),
                                      "memory_bytes": 1 << 30, "ordinal": i},
        "gpu_put": gpu_put,
        "gpu_run": gpu_run,
    }


def install(setattr, runs):
    """Installs the fake binding through `setattr(obj, name, value)`
    (pytest's monkeypatch.setattr, or the builtin for a whole session)."""
    fake = entry_points(runs)
    setattr(_devices, "_binding", lambda name: fake.get(name))
    setattr(_devices, "_GPU_COUNT", [])
    setattr(_devices, "_GPU_DEVICES", {})
    _core.bump_epoch()
