"""Bounded caches: every Python-side cache keyed per function, per code
object, per program or per call site is an `LRU` of a fixed number of
entries, so a long-running process that keeps making new functions, new
lambdas or new shapes holds at most the sizes below.

=========================  =======  ==========================================
cache                      entries  key
=========================  =======  ==========================================
`jit` trace cache          4096     (function, options, call); Rust side,
                                    `_trace_cache.py`, config
                                    `microjax_jit_cache_size`
`core.internal_code`       4096     code object: whether it is this package's
`core.source_text`         16384    (code object, bytecode offset): the
                                    user call site's `file:line (function)`
`core.named_source`        16384    (source text, named scopes)
`api.runnable`             4096     traced program: the program run for it
`api.key_signatures`       4096     per jitted function, trace-cache key
                                    (with `jax_debug_key_reuse`)
`ad.*`, `vmap.batch`       512      program and mask: its transformed program
`devices.jitted`           4096     operator or primitive on a `GpuArray`
`grad.basis`               64       (shape, dtype): identity rows
`checkify_auto.jit`        64       checked sub-program
=========================  =======  ==========================================

`jax.clear_caches()` empties all of them (`clear_all`). Each is a true LRU:
a hit makes the entry the most recently used; an insert beyond the size
evicts the least recently used. Values are recomputed on a miss, so an
evicted entry only costs its recomputation. One exception:
`core.internal_code` is read for every frame between a staged equation and
the user's code, so its hits do not refresh the entry (an insert evicts the
oldest entry; a hot entry evicted that way costs one path check again).
"""
import weakref
from collections import OrderedDict

_MISSING = object()

# Every live cache, for `clear_all` and `sizes` (weakly: a per-function
# cache goes with its function).
_ALL = weakref.WeakSet()


class LRU:
    """A mapping of at most `maxsize` entries, least recently used evicted
    first. `name` says what it caches (`sizes()` reports by it)."""

    __slots__ = ("_d", "maxsize", "name", "__weakref__")

    # Hot paths may read `data` (the OrderedDict, least recent first)
    # directly: `hit = c.data.get(k)`, then `c.data.move_to_end(k)` on a
    # hit; inserts go through `c[k] = v` (which evicts).
    data = property(lambda self: self._d)

    def __init__(self, name, maxsize):
        if maxsize < 1:
            raise ValueError(f"LRU {name}: maxsize must be positive, got {maxsize}")
        self._d = OrderedDict()
        self.maxsize = maxsize
        self.name = name
        _ALL.add(self)

    def get(self, key, default=None):
        """The value under `key` (now the most recently used), or `default`."""
        d = self._d
        hit = d.get(key, _MISSING)
        if hit is _MISSING:
            return default
        d.move_to_end(key)
        return hit

    def __setitem__(self, key, value):
        d = self._d
        d[key] = value
        d.move_to_end(key)
        if len(d) > self.maxsize:
            d.popitem(last=False)

    def __contains__(self, key):
        return key in self._d

    def __len__(self):
        return len(self._d)

    def __bool__(self):
        return bool(self._d)

    def pop(self, key, default=None):
        return self._d.pop(key, default)

    def clear(self):
        self._d.clear()

    def __repr__(self):
        return f"LRU({self.name!r}, {len(self._d)}/{self.maxsize})"


def cached(cache, key, make):
    """`cache`'s value under `key`, made by `make()` and stored on a miss."""
    hit = cache.get(key, _MISSING)
    if hit is _MISSING:
        hit = cache[key] = make()
    return hit


def clear_all():
    """Empties every cache made here."""
    for cache in list(_ALL):
        cache.clear()


def sizes():
    """`{name: (entries, maxsize)}` of the live caches (per-function caches
    of one name summed)."""
    out = {}
    for cache in list(_ALL):
        n, m = out.get(cache.name, (0, 0))
        out[cache.name] = (n + len(cache), m + cache.maxsize)
    return out
