"""`jax._src.indexing` at JAX's path: `Slice`, a slice given by a start
index (static or traced) and a static size, and `ds` (`jax.ds`) that makes
one. `x[ds(i, n)]` reads `n` elements from `i` as `lax.dynamic_slice` does
(a negative start counts from the end once; the window is moved back inside
the array when it would run past the end); with a stride, the elements
`i, i + stride, ...` are gathered, each index clamped into range."""
import numbers


class Slice:
    """A slice with a start index (int or traced scalar), a size (int) and a
    stride (int, default 1); an index entry like a Python slice."""

    def __init__(self, start, size, stride=1):
        self.start, self.size, self.stride = start, size, stride

    @property
    def is_dynamic_start(self):
        return not isinstance(self.start, numbers.Integral)

    @property
    def is_dynamic_size(self):
        return not isinstance(self.size, numbers.Integral)

    @classmethod
    def from_slice(cls, slc, size):
        """The `Slice` that `slc` (a Python slice) selects from an axis of length `size`."""
        start, stop, step = slc.indices(size)
        if step < 1:
            raise ValueError(f"slice must have a positive step, got {slc}")
        return cls(start, max(len(range(start, stop, step)), 0), step)

    def tree_flatten(self):
        return (self.start, self.size), (self.stride,)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)

    def _key(self):
        return (id(self.start) if self.is_dynamic_start else self.start, self.size, self.stride)

    def __eq__(self, other):
        return isinstance(other, Slice) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Slice(start={self.start}, size={self.size}, stride={self.stride})"


def ds(start, size=None, stride=None):
    """`Slice(start, size, stride)`, with the builtin slice's shorthands:
    `ds(None)` is `:` and `ds(j)` is `:j`."""
    if start is None:
        return slice(None, None, None)
    if stride is None:
        stride = 1
    if size is None:
        start, size = 0, start
    return Slice(start, size, stride)


dslice = ds
