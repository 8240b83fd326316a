"""`jax._src.traceback_util` at JAX's path: which source files count as
library internals when a traced equation or an error is attributed to user
code. Libraries built on JAX (equinox, ...) register their own files."""
import sys
import weakref

from .. import core as _core


def register_exclusion(path):
    """Treat frames of files under `path` as internal: equation source info
    (`make_jaxpr`'s locations, tracer error messages) skips them."""
    _core.exclude_source_path(path)


def include_filename(filename):
    """Whether frames of `filename` are user code (not excluded)."""
    return not _core.is_excluded_source(filename)


def include_frame(f):
    """Whether frame `f` is user code (its file is not excluded)."""
    return include_filename(f.f_code.co_filename)


__all__ = ["Frame", "Traceback", "include_filename", "include_frame", "register_exclusion"]


# ----------------------------------------------------------------------------
# Array.traceback


class Frame:
    """One frame of a Traceback: `file_name`, `function_name`, `line_num`."""

    __slots__ = ("file_name", "function_name", "line_num", "function_start_line")

    def __init__(self, file_name, function_name, line_num, function_start_line):
        self.file_name = file_name
        self.function_name = function_name
        self.line_num = line_num
        self.function_start_line = function_start_line

    def __repr__(self):
        return f"{self.function_name};{self.file_name}:{self.line_num}"


class Traceback:
    """Where an array was made: `frames` (innermost first), printed one
    `file:line (function)` a line, as JAX's Traceback."""

    def __init__(self, raw):
        self._raw = raw  # ((code object, line), ...): Frames are made when read
        self._frames = None

    @property
    def frames(self):
        if self._frames is None:
            self._frames = [Frame(code.co_filename, code.co_qualname, line, code.co_firstlineno)
                            for code, line in self._raw]
        return self._frames

    @classmethod
    def get_traceback(cls, depth=1, limit=None):
        """The stack from `depth` frames up (at most `limit` frames)."""
        f = sys._getframe(depth)
        raw = []
        while f is not None and (limit is None or len(raw) < limit):
            raw.append((f.f_code, f.f_lineno))
            f = f.f_back
        return cls(raw)

    def __str__(self):
        return "\n".join(f"{fr.file_name}:{fr.line_num} ({fr.function_name})" for fr in self.frames)

    def as_python_traceback(self):
        """The frames as a `traceback.StackSummary` (innermost last)."""
        import traceback

        return traceback.StackSummary.from_list(
            [(fr.file_name, fr.line_num, fr.function_name, None) for fr in reversed(self.frames)])


# id(array) -> (weak reference, Traceback) for the arrays whose creation was
# recorded; weak reference -> id, to drop the entry when the array dies.
_CREATED = {}
_IDS = {}


def _died(ref):
    key = _IDS.pop(id(ref), None)
    if key is not None and _CREATED.get(key, (None,))[0] is ref:
        del _CREATED[key]


def record_creation(arrays, depth=2):
    """Records where `arrays` were made: the frame `depth` levels above the
    caller (called by `jit`'s Python call path for its results, with the
    frame of the user's call). One frame only: walking (and so
    materializing) the whole stack on every call would slow the call path."""
    tb = None
    for a in arrays:
        try:
            ref = weakref.ref(a, _died)
        except TypeError:
            continue
        if tb is None:
            tb = Traceback.get_traceback(depth + 1, limit=1)
        key = id(a)
        _CREATED[key] = (ref, tb)
        _IDS[id(ref)] = key


def traceback_of(x):
    """`x.traceback`: the recorded creation Traceback of `x`, or None."""
    hit = _CREATED.get(id(x))
    if hit is not None and hit[0]() is x:
        return hit[1]
    return None

