"""`jax_debug_key_reuse`: typed PRNG keys consumed twice raise KeyReuseError.

With the option on (`jax.debug_key_reuse(True)` or
`config.update("jax_debug_key_reuse", True)`), every typed key array
(`jax.random.key`) carries consumption flags, one per key (a NumPy bool
array of the key shape plus a trailing axis of 1, so that a key taken by
basic indexing, `keys[0]`, shares its flag with the array it came from):

* a sampler (`normal`, `uniform`, `bits`, ...) and `split` consume their
  key: a key already consumed raises `KeyReuseError`, worded as JAX's
  ("Previously-consumed key passed to jit-compiled function at index 0";
  for `split`, "... random_split ..."; indexing a consumed key, "... slice
  ...");
* inside a trace (`jit`, `grad`, `vmap`) the same rule applies to the
  traced keys, worded as JAX's check of the traced program ("In jit,
  argument 0 is already consumed.");
* a jitted function records, when traced, which of its key arguments it
  consumes; calling it consumes those arguments, so passing a consumed key
  to it raises ("... passed to jit-compiled function at index i") — a
  jitted function that only passes a key through does not consume it;
* `fold_in`, `key_data`, `key_impl` and `clone` do not consume (`clone`
  gives a fresh key), as JAX. Raw uint32 keys are not tracked, as JAX.
"""
import numpy as np

from ..config import config
from ..errors import KeyReuseError

_SEE = "\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.KeyReuseError"

# The typed key array type (`random` registers it: it is a layer above).
KEY_TYPES = ()

# jax.random functions that read a key without consuming it.
NOT_CONSUMING = frozenset({"fold_in", "key_data", "key_impl", "clone"})


def enabled():
    return config.read("jax_debug_key_reuse")


def _flags(key):
    flags = key._consumed
    if flags is None:
        flags = key._consumed = np.zeros(tuple(key.shape) + (1,), dtype=bool)
    return flags


def _traced(key):
    from ..core import Tracer

    return isinstance(key._base, Tracer)


def _error(consumer, traced, index=0):
    if traced:
        return KeyReuseError(f"In {consumer}, argument {index} is already consumed.{_SEE}")
    where = "jit-compiled function" if consumer == "jit" else consumer
    return KeyReuseError(f"Previously-consumed key passed to {where} at index {index}{_SEE}")


def consume(key, consumer, index=0):
    """Marks every key of the typed key array `key` consumed by `consumer`
    ("jit" for samplers and jitted functions, "random_split"); raises
    KeyReuseError if one already was."""
    flags = _flags(key)
    if flags.any():
        raise _error(consumer, _traced(key), index)
    flags[...] = True


def fresh(key):
    """A new key object over the same data, with its own (clear) flags."""
    return key._wrap(key._base)


def index(key, idx, sub):
    """`sub = key[idx]` (a new key object): raises if the keys taken were
    consumed, and links `sub`'s flags to them (basic indexing: a view)."""
    try:
        taken = _flags(key)[idx]
    except (IndexError, TypeError, ValueError):  # traced or advanced indices: not linked
        return sub
    if taken.any():
        raise _error("slice", _traced(key))
    if taken.base is not None:  # a view: consuming `sub` marks these keys of `key`
        sub._consumed = taken
    return sub


# ----------------------------------------------------------------------------
# jit: which key arguments a traced function consumes


def key_arguments(tree):
    """The typed key arrays among the leaves of `tree` (in flattening order),
    as (position, key) with position the key's index among all leaves when
    keys count as leaves."""
    from ..tree_util import tree_leaves

    leaves = tree_leaves(tree, is_leaf=lambda x: isinstance(x, KEY_TYPES))
    return [(i, x) for i, x in enumerate(leaves) if isinstance(x, KEY_TYPES)]


def recording(fun, signature):
    """`fun`, which appends to the list `signature` the positions of the key
    arguments it consumed (read when tracing ends)."""

    def traced(*args, **kwargs):
        keys = key_arguments((args, kwargs))
        out = fun(*args, **kwargs)
        signature.extend(pos for pos, k in keys if k._consumed is not None and k._consumed.any())
        return out

    return traced


def consume_arguments(args, kwargs, signature, traced=False):
    """A jitted call with `signature` (the key positions it consumes)
    consumes those key arguments."""
    if not signature:
        return
    wanted = set(signature)
    for pos, k in key_arguments((args, kwargs)):
        if pos in wanted:
            flags = _flags(k)
            if flags.any():
                raise _error("jit", traced or _traced(k), pos)
            flags[...] = True
