"""Typed PRNG key arrays through array functions.

A function decorated with `keys_through` that receives a typed key array
(or a key dtype) hands the call to the handler the key array type
registered: shape operations then run on the keys' uint32 data, mapped over
the trailing key-data axes, and give key arrays back. The key array type is
defined in `random`, a layer above numpy and lax; it registers here.
"""
import functools

# [(types that route a call to the handler, handler(fn, args, kwargs))]
_HANDLERS = []


def register(types, handler):
    _HANDLERS[:] = [(tuple(types), handler)]


def _routes(types, args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, types):
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(b, types) for b in a):
            return True
    return False


def keys_through(fn):
    """`fn`, which also takes typed key arrays (and key dtypes)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if _HANDLERS:
            types, handler = _HANDLERS[0]
            if _routes(types, args, kwargs):
                return handler(fn, args, kwargs)
        return fn(*args, **kwargs)

    return wrapped
