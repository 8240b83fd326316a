"""The device objects (`jax.Device`, `CpuDevice`, `CudaDevice`): plain
descriptions of a device. They sit below everything that selects a device
or runs on one (`config` checks `jax_default_device` against `Device`; host
arrays report their `CpuDevice`); `_devices.py` has the device API."""


class Device:
    """Base class of the device objects (`jax.Device`)."""

    platform = None
    device_kind = None
    process_index = 0
    client = None

    def __init__(self, id=0, process_index=0):
        self.id = id
        self.process_index = process_index

    def __eq__(self, other):
        return type(other) is type(self) and other.id == self.id

    def __hash__(self):
        return hash((self.platform, self.id))

    def __repr__(self):
        return f"{type(self).__name__}(id={self.id})"


class CpuDevice(Device):
    """A CPU device (JAX's `CpuDevice`): host memory, every map runs here."""

    def memory_stats(self):
        """Host memory of the process, as JAX's `Device.memory_stats()`:
        `bytes_in_use` (live now), `peak_bytes_in_use` (the most live at
        once) and, when `microjax_max_live_bytes` is set, `bytes_limit`.
        Every allocation of the extension is counted (arrays, kernel
        scratch, compiled programs), not Python objects."""
        from microjax_rs import _core
        stats = _core.live_memory_stats()
        if stats["bytes_in_use"] is None:
            return None
        return {k: v for k, v in stats.items() if v is not None}

    platform = "cpu"
    device_kind = "cpu"


class CudaDevice(Device):
    """A CUDA GPU (JAX's `CudaDevice`): platform "gpu", `device_kind` the
    GPU's name, `compute_capability` as "major.minor"."""

    platform = "gpu"

    def __init__(self, id, info, process_index=0, local_hardware_id=None):
        super().__init__(id, process_index)
        # The CUDA ordinal within its process (JAX's `local_hardware_id`).
        self.local_hardware_id = id if local_hardware_id is None else local_hardware_id
        self.device_kind = str(info.get("name", "gpu"))
        cc = info.get("compute_capability")
        self.compute_capability = ".".join(map(str, cc)) if isinstance(cc, (tuple, list)) else cc
        self._memory_bytes = info.get("memory_bytes")

    def memory_stats(self):
        return {"bytes_limit": self._memory_bytes}
