"""Indexing. This slice supports indexing concrete arrays (through NumPy) and
basic integer/slice indexing of traced arrays with unit steps, built from
reshape/transpose-free primitives is not available yet: traced indexing
arrives with the gather/slice primitives (numpy-surface issue)."""
import numpy as np

from .. import core


def getitem(x, idx):
    if type(x) is core.ArrayImpl and core.current_trace() is None:
        if isinstance(idx, core.Tracer) or (
            isinstance(idx, tuple) and any(isinstance(i, core.Tracer) for i in idx)
        ):
            raise NotImplementedError("indexing with traced indices is not supported yet")
        idx = _concrete_index(idx)
        out = np.asarray(x)[idx]
        return core.to_array(np.asarray(out), weak_type=x.weak_type and np.ndim(out) == 0)
    raise NotImplementedError(
        "indexing a traced array needs the slice/gather primitives, which arrive with the "
        "numpy-surface issue; use lax/jnp ops instead for now"
    )


def _concrete_index(idx):
    if isinstance(idx, tuple):
        return tuple(_concrete_index(i) for i in idx)
    if type(idx) is core.ArrayImpl:
        return np.asarray(idx)
    return idx


class AtIndexer:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtRef(self.x, idx)


class _AtRef:
    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def _apply(self, fn):
        if type(self.x) is not core.ArrayImpl or core.current_trace() is not None:
            raise NotImplementedError("x.at[...] on traced arrays arrives with the scatter primitives")
        arr = np.array(self.x)
        fn(arr, _concrete_index(self.idx))
        return core.to_array(arr)

    def get(self, **kw):
        return getitem(self.x, self.idx)

    def set(self, y, **kw):
        def f(a, i):
            a[i] = np.asarray(y)
        return self._apply(f)

    def add(self, y, **kw):
        def f(a, i):
            np.add.at(a, i, np.asarray(y))
        return self._apply(f)

    def multiply(self, y, **kw):
        def f(a, i):
            np.multiply.at(a, i, np.asarray(y))
        return self._apply(f)
