"""`jax._src.sharding_impls` at JAX's path: the sharding classes and
`make_single_device_sharding`."""
from ..sharding import NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding  # noqa: F401


def make_single_device_sharding(device, memory_kind="device"):
    """The sharding of an array held whole by `device` (in its default
    memory, as the arrays `jax.device_put(x, device)` makes)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)
