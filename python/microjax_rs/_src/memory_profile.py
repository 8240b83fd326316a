"""The device memory profile (`jax.profiler.device_memory_profile`): a
gzipped pprof `Profile` protocol buffer of the live arrays.

JAX's profile has one sample per allocation site (the Python stack that made
each buffer), sample types `allocations/count` and `space/bytes`, and labels
`kind` (`buffer`) and `device` (`cpu:0`). The arrays here record no
allocation stack, so the profile groups the live arrays by type: one sample
per (type, device), its one-frame stack a function named by the type
(`f32[1000,1000]`), valued (number of arrays, their bytes), with JAX's
labels. The live arrays are those held by Python objects (found through the
garbage collector's view of containers and instances, and the running
threads' local variables); `pprof` reads the result
(`pprof -top profile.prof`).
"""
import gc
import gzip

from ..core import ArrayImpl


def live_arrays():
    """The distinct arrays referenced from Python objects the garbage
    collector tracks (module globals, instances, containers) and from the
    local variables of the running threads' frames."""
    import sys

    seen, out = set(), []

    def add(ref):
        if type(ref) is ArrayImpl and id(ref) not in seen and not ref.is_deleted():
            seen.add(id(ref))
            out.append(ref)

    for obj in gc.get_objects():
        for ref in gc.get_referents(obj):
            add(ref)
    for frame in sys._current_frames().values():
        while frame is not None:
            for ref in frame.f_locals.values():
                add(ref)
            frame = frame.f_back
    return out


# ---- protocol buffer encoding (the wire format of the fields pprof reads)


def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _int_field(field, value):
    return _varint(field << 3) + _varint(value)


def _bytes_field(field, data):
    return _varint((field << 3) | 2) + _varint(len(data)) + data


def _packed(field, values):
    return _bytes_field(field, b"".join(_varint(v) for v in values))


class _Strings:
    """pprof's string table (index 0 is the empty string)."""

    def __init__(self):
        self.table, self.index = [""], {"": 0}

    def __call__(self, s):
        if s not in self.index:
            self.index[s] = len(self.table)
            self.table.append(s)
        return self.index[s]


def _device_label(x):
    try:
        dev = next(iter(x.devices()))
        return f"{dev.platform}:{dev.id}"
    except Exception:
        return "cpu:0"


def pprof_profile(arrays):
    """The pprof `Profile` message (uncompressed bytes) of `arrays` (see
    the module doc)."""
    from .. import core

    groups = {}
    for x in arrays:
        key = (core.get_aval(x).str_short(), _device_label(x))
        count, nbytes = groups.get(key, (0, 0))
        groups[key] = (count + 1, nbytes + int(x.nbytes))
    s = _Strings()
    msg = bytearray()
    for typ, unit in (("allocations", "count"), ("space", "bytes")):
        msg += _bytes_field(1, _int_field(1, s(typ)) + _int_field(2, s(unit)))
    kind, device, buffer = s("kind"), s("device"), s("buffer")
    functions, locations = [], []
    for i, ((typ, dev), (count, nbytes)) in enumerate(sorted(groups.items()), start=1):
        labels = (_bytes_field(3, _int_field(1, kind) + _int_field(2, buffer))
                  + _bytes_field(3, _int_field(1, device) + _int_field(2, s(dev))))
        msg += _bytes_field(2, _packed(1, [i]) + _packed(2, [count, nbytes]) + labels)
        locations.append(_bytes_field(4, _int_field(1, i) + _bytes_field(4, _int_field(1, i))))
        name = s(typ)
        functions.append(_bytes_field(5, _int_field(1, i) + _int_field(2, name) + _int_field(3, name)))
    msg += b"".join(locations) + b"".join(functions)
    for text in s.table:
        msg += _bytes_field(6, text.encode("utf-8"))
    return bytes(msg)


def device_memory_profile():
    """The gzipped pprof profile of the live arrays."""
    return gzip.compress(pprof_profile(live_arrays()))
