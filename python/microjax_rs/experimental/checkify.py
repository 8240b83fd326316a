"""`jax.experimental.checkify`: runtime value checks (`check`) made visible
as an `Error` value by `checkify(f)`.

What is here, and how it differs from JAX's functionalizing transform:

* `check(pred, msg, *fmt_args, **fmt_kwargs)` outside `checkify` raises
  `JaxRuntimeError` when `pred` is false: at once for a concrete `pred`, when
  the program runs for a traced one. (JAX refuses to stage a check outside
  `checkify` with a `ValueError`; here a staged check is the same program
  inside and outside `checkify`, so `jit`'s trace cache can share it.)
* `checkify(f, errors=user_checks)(*args)` returns `(error, out)`. Inside it,
  each `check` becomes an ordered host callback (`jax.debug.callback`), so
  checks inside `jit`, `vmap`, `grad`, `cond` branches and loop bodies run
  with the values the program computes, in program order, and the first
  failing one is reported, with its formatted message and location. The
  wrapped function must be called outside any transform (`checkify(jit(f))`,
  not `jit(checkify(f))`): the `Error` it returns is a concrete value, not a
  traced one.
* Only user checks exist (`errors=user_checks`); the automatic NaN,
  division and index checks (`nan_checks`, `div_checks`, `index_checks`)
  raise `NotImplementedError`.
"""
import threading

import numpy as np

from .. import core as _core
from .._callback import debug_callback as _debug_callback
from .._src.traceback_util import include_filename as _include_filename
from ..tree_util import register_pytree_node_class


class JaxException(Exception):
    """Base of the error categories."""


class FailedCheckError(JaxException):
    """A user `check` failed."""


class NaNError(JaxException):
    """A NaN was produced (automatic check)."""


class OOBError(JaxException):
    """An out-of-bounds index (automatic check)."""


class DivisionByZeroError(JaxException):
    """A division by zero (automatic check)."""


ErrorCategory = type
user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


class JaxRuntimeError(ValueError):
    """Raised by `check_error` / `Error.throw` (and an eager failing `check`)."""


@register_pytree_node_class
class Error:
    """The outcome of a checkified call: the first failed check's message, or none."""

    def __init__(self, message=None):
        self._message = message

    def get(self):
        """The failed check's message (with its location), or None."""
        return self._message

    def get_exception(self):
        """A `JaxRuntimeError` for the failed check, or None."""
        return None if self._message is None else JaxRuntimeError(self._message)

    def throw(self):
        """Raise `JaxRuntimeError` if a check failed."""
        if self._message is not None:
            raise JaxRuntimeError(self._message)

    def tree_flatten(self):
        return (), self._message

    @classmethod
    def tree_unflatten(cls, message, children):
        return cls(message)

    def __str__(self):
        return "Error(no failures)" if self._message is None else f"Error({self._message})"

    __repr__ = __str__


class _Context(threading.local):
    def __init__(self):
        self.stack = []  # one [first failure message or None] cell per active checkify


_ctx = _Context()

def _location():
    import sys
    f = sys._getframe(2)
    while f is not None and not _include_filename(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return ""
    return f" (check failed at {f.f_code.co_filename}:{f.f_lineno} ({f.f_code.co_name}))"


def _is_traced(tree):
    from ..tree_util import tree_leaves
    return any(isinstance(x, _core.Tracer) for x in tree_leaves(tree))


def _check_pred(pred):
    shape = np.shape(pred)
    dtype = getattr(pred, "dtype", None)
    is_bool = isinstance(pred, (bool, np.bool_)) or (dtype is not None and np.dtype(dtype) == np.bool_)
    if not is_bool or shape != ():
        raise TypeError(f"check takes a scalar pred as argument, got {pred}")


def check(pred, msg, *fmt_args, **fmt_kwargs):
    """Check that `pred` holds; if not, the error is `msg.format(*fmt_args,
    **fmt_kwargs)` (see the module doc for when it is raised)."""
    _check_pred(pred)
    if not isinstance(msg, str):
        raise TypeError(f"check takes a string as msg argument, got {msg!r}")
    from ..tree_util import tree_leaves
    from .. import Array
    for leaf in tree_leaves((fmt_args, fmt_kwargs)):
        if not isinstance(leaf, (Array, np.ndarray, np.generic)):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                f"{leaf!r} of type {type(leaf)}.")
    where = _location()

    def record(pred, args, kwargs):
        if np.all(pred):
            return
        message = msg.format(*args, **kwargs) + where
        if not _ctx.stack:
            raise JaxRuntimeError(message)
        cell = _ctx.stack[-1]
        if cell[0] is None:
            cell[0] = message

    if _is_traced((pred, fmt_args, fmt_kwargs)):
        # Decided when the program runs, by the checkify active then (a
        # traced program is cached independently of checkify).
        _debug_callback(record, pred, fmt_args, fmt_kwargs, ordered=True)
    else:
        record(np.asarray(pred), fmt_args, fmt_kwargs)
    return None


def checkify(f, errors=user_checks):
    """`checkify(f)(*args, **kwargs) -> (Error, out)`: run `f`, collecting the
    first failed `check` (user checks only)."""
    errors = frozenset(errors)
    unsupported = errors - user_checks
    if unsupported:
        names = sorted(e.__name__ for e in unsupported)
        raise NotImplementedError(
            f"checkify: automatic checks {names} are not implemented in microjax_rs; "
            "only user checks (checkify.user_checks) are")

    def checked(*args, **kwargs):
        if _core.current_trace() is not None or _is_traced((args, kwargs)):
            raise NotImplementedError(
                "checkify(f) must be called outside jit/vmap/grad in microjax_rs "
                "(use checkify(jit(f)), not jit(checkify(f)))")
        cell = [None]
        _ctx.stack.append(cell)
        try:
            out = f(*args, **kwargs)
        finally:
            _ctx.stack.pop()
        if errors & user_checks:
            return Error(cell[0]), out
        return Error(None), out

    return checked


def check_error(error):
    """Raise `JaxRuntimeError` if `error` records a failed check."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    error.throw()


__all__ = [
    "DivisionByZeroError", "Error", "ErrorCategory", "FailedCheckError", "JaxException",
    "JaxRuntimeError", "NaNError", "OOBError", "all_checks", "automatic_checks", "check",
    "check_error", "checkify", "div_checks", "float_checks", "index_checks", "nan_checks",
    "user_checks",
]
