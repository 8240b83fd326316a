"""Typed PRNG key arrays through array functions.

A function decorated with `keys_through` that receives a typed key array
(or a key dtype) hands the call to the handler the key array type
registered: shape operations then run on the keys' uint32 data, mapped over
the trailing key-data axes, and give key arrays back. The key array type is
defined in `random`, a layer above numpy and lax; it registers here.
"""
import functools

# The types that route a call to the handler (none until `random` registers).
_TYPES = ()
_HANDLER = None


def register(types, handler):
    """Calls with an argument of one of `types` (or a list / tuple holding
    one) go to `handler(fn, args, kwargs)`."""
    global _TYPES, _HANDLER
    _TYPES, _HANDLER = tuple(types), handler


def _routes(values):
    types = _TYPES
    for a in values:
        if isinstance(a, types):
            return True
        if type(a) in (list, tuple):
            for b in a:
                if isinstance(b, types):
                    return True
    return False


def keys_through(fn):
    """`fn`, which also takes typed key arrays (and key dtypes)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if _TYPES and (_routes(args) or (kwargs and _routes(kwargs.values()))):
            return _HANDLER(fn, args, kwargs)
        return fn(*args, **kwargs)

    return wrapped
