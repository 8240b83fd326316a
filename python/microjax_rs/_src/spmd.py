"""Which `shard_map` mesh axes span processes, while a body is traced.

Inside a multi-process `shard_map` body each process maps the function over
its own devices only (a `vmap` per mesh axis, of the axis's local extent).
A collective over an axis whose devices lie in several processes runs in two
steps: the collective over the local extent (the `vmap` batch rule), then the
core's collective between the processes that differ only in that axis's
coordinate (`_src/spmd_collectives.py`: MPI called from the compiled program).
"""
import contextlib
import math
import threading

from . import distributed

_LOCAL = threading.local()


class AxisLayout:
    """The mesh axes of one multi-process `shard_map` as this process sees them."""

    def __init__(self, mesh, box, process):
        self.mesh = mesh
        self.box = box  # axis -> (size, local extent, offset)
        self.process = process
        self.spanning = {a for a, (s, l, _) in box.items() if l < s}

    def size(self, a):
        return self.box[a][0]

    def offset(self, a):
        return self.box[a][2]

    def nprocs(self, axes):
        return math.prod(self.box[a][0] // self.box[a][1] for a in axes)

    def comm(self, axes):
        """The communicator of the processes whose devices differ from this
        process's only along `axes` (ranks ordered by their coordinates)."""
        axes = tuple(a for a in self.mesh.axis_names if a in set(axes))
        color = 0
        key = 0
        for a in self.mesh.axis_names:
            size, local, off = self.box[a]
            blocks = size // local
            if a in axes:
                key = key * blocks + off // local
            else:
                color = color * blocks + off // local
        # Cached by what determines the group (never by object ids, which
        # could be reused in one process and not another: a split is a
        # collective every process must make together).
        return distributed.split((self.mesh._identity(), axes, color, key), color, key)


def current():
    """The layout of the innermost multi-process `shard_map` being traced, or None."""
    stack = getattr(_LOCAL, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def tracing(layout):
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    stack.append(layout)
    try:
        yield
    finally:
        stack.pop()


def crossing(names):
    """The axes of `names` that span processes in the current layout."""
    lay = current()
    if lay is None:
        return lay, ()
    return lay, tuple(n for n in names if n in lay.spanning)
