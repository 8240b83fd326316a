"""`jax._src.traceback_util` at JAX's path: which source files count as
library internals when a traced equation or an error is attributed to user
code. Libraries built on JAX (equinox, ...) register their own files."""
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


__all__ = ["include_filename", "include_frame", "register_exclusion"]
