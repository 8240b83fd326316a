"""`jax._src.array` at JAX's path: the concrete array type, `Shard`, and
where an array was placed.

microjax_rs keeps every array whole in host memory. `device_put(x, d)` onto
another CPU device, or onto a `NamedSharding` over several of them, returns
a new array object and records its placement here (keyed by the object,
dropped when it dies), so `x.sharding`, `x.devices()`, `x.addressable_shards`
and friends answer as JAX's do for that layout; each shard's data is the
matching slice. Results computed from a placed array are not placed (they
live on the default device).
"""
import weakref

from ..core import ArrayImpl  # noqa: F401

_PLACED = {}  # id(array) -> (weak reference to it, its sharding)


def _forget(key):
    def drop(_ref):
        _PLACED.pop(key, None)
    return drop


def placed_sharding(x):
    """The sharding `device_put` recorded for the array `x`, or None."""
    entry = _PLACED.get(id(x))
    if entry is not None and entry[0]() is x:
        return entry[1]
    return None


def place(x, sharding):
    """A new array with `x`'s values, recorded as laid out by `sharding`."""
    out = x.copy()  # a new object (the buffer is shared: arrays are immutable)
    key = id(out)
    _PLACED[key] = (weakref.ref(out, _forget(key)), sharding)
    return out


def unplaced(x):
    """`x` itself when nothing is recorded for it, else a fresh copy on the
    default device."""
    return x if placed_sharding(x) is None else x.copy()


class Shard:
    """One device's piece of an array: `device`, `index` (the tuple of
    slices it covers), `replica_id` (0 for the first device holding that
    piece, counting in mesh order) and `data` (the piece, an array on
    `device`)."""

    def __init__(self, device, sharding, global_shape, data):
        self._device = device
        self._sharding = sharding
        self._global_shape = tuple(global_shape)
        self._data_source = data

    @property
    def device(self):
        """The device holding this piece."""
        return self._device

    @property
    def index(self):
        """The tuple of slices of the whole array this piece covers."""
        return self._sharding.devices_indices_map(self._global_shape)[self._device]

    @property
    def replica_id(self):
        """How many devices before this one (in mesh order) hold the same piece."""
        return _replica_ids(self._sharding, self._global_shape)[self._device]

    @property
    def data(self):
        """The piece of the array this device holds (an array on `device`)."""
        from ..sharding import SingleDeviceSharding
        from .device_types import CpuDevice

        src = self._data_source
        index = self.index
        piece = src[index] if any(s != slice(None) for s in index) else src
        if self._device == CpuDevice(0):
            return unplaced(piece)
        own = SingleDeviceSharding(self._device, memory_kind="device")
        return piece if placed_sharding(piece) == own else place(piece, own)

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, "
                f"data={self.data})")


def _replica_ids(sharding, global_shape):
    """Per device, how many devices before it (in mesh order) hold the same
    piece."""
    seen = {}
    out = {}
    for device, index in sharding.devices_indices_map(global_shape).items():
        key = tuple((s.start, s.stop) for s in index)
        out[device] = seen.get(key, 0)
        seen[key] = out[device] + 1
    return out


def array_sharding(x):
    """`x.sharding`: what `device_put` recorded, else the default device's."""
    from ..sharding import SingleDeviceSharding
    from .device_types import CpuDevice

    return placed_sharding(x) or SingleDeviceSharding(CpuDevice(0), memory_kind="device")


def addressable_shards(x):
    """`x.addressable_shards`: one `Shard` per device of its sharding, in
    the sharding's device order."""
    sharding = array_sharding(x)
    shape = tuple(x.shape)
    return [Shard(d, sharding, shape, x) for d in sharding.devices_indices_map(shape)]


def addressable_data(x, index):
    """`x.addressable_data(i)`: the data of shard `i`; a fully replicated
    array answers with its whole value for any `i`, as JAX."""
    sharding = array_sharding(x)
    if sharding.is_fully_replicated:
        return Shard(next(iter(sharding.devices_indices_map(tuple(x.shape)))), sharding, x.shape, x).data
    return addressable_shards(x)[index].data


def _device(x):
    from .device_types import CpuDevice

    sharding = placed_sharding(x)
    if sharding is None:
        return CpuDevice(0)
    devices = sharding.device_set
    if len(devices) == 1:
        return next(iter(devices))
    return sharding  # JAX 0.10: `.device` of a multi-device array is its sharding


def install_array_attributes(register):
    """Adds the placement attributes of concrete arrays through `register(
    name, get)` (`array_methods.register_array_attribute`)."""
    register("sharding", array_sharding)
    register("device", _device)
    register("devices", lambda x: lambda: set(array_sharding(x).device_set))
    register("addressable_shards", addressable_shards)
    register("global_shards", addressable_shards)  # one process: every shard is addressable
    register("addressable_data", lambda x: lambda index: addressable_data(x, index))
    register("is_fully_addressable", lambda x: True)
    register("is_fully_replicated", lambda x: array_sharding(x).is_fully_replicated)
