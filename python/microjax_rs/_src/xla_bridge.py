"""`jax._src.xla_bridge` at JAX's path: the backends (platform clients).

JAX creates one client per platform on first use and keeps it in `_backends`
(after which the CPU device count is fixed). microjax_rs keeps no client:
`jax.devices()` reads `jax_num_cpu_devices` / `XLA_FLAGS` on every call, so
no backend is ever fixed and `_backends` stays empty (as JAX's is before
first use); `get_backend` builds a view of the platform when asked."""
from .. import _devices

_backends = {}


class Backend:
    """A platform's view: `platform`, its devices and counts."""

    def __init__(self, platform):
        self.platform = platform
        self.platform_version = "microjax_rs"

    def devices(self):
        return _devices.devices(self.platform)

    def local_devices(self):
        return _devices.devices(self.platform)

    def device_count(self):
        return len(self.devices())

    def local_device_count(self):
        return len(self.devices())

    def process_index(self):
        return 0

    def __repr__(self):
        return f"Backend(platform={self.platform!r})"


def canonicalize_platform(platform):
    """'cuda' -> 'gpu'; other names unchanged (lower case)."""
    return _devices._resolve_backend(platform) if platform is not None else None


def get_backend(platform=None):
    """The backend of `platform` (None: the default platform); JAX's errors for
    a missing or unknown platform."""
    return Backend(_devices._resolve_backend(platform))


def backends():
    """`{platform: Backend}` for every platform present."""
    return {p: Backend(p) for p in _devices._platforms()}


def default_backend():
    return _devices.default_backend()


__all__ = ["Backend", "backends", "default_backend", "get_backend"]
