"""`jit`'s trace cache, Python side.

One process-wide cache holds the traces of every jitted function. An entry
is keyed on

* the wrapped function, held weakly (equal functions share entries, so a
  bound method `obj.m` taken twice is one key; a `functools.partial` is
  keyed on the partial object itself), and the `jit` options (static and
  donated argument numbers and names);
* the call: the input pytree structure, the avals (shape, dtype, weak type)
  of its leaves, the values of the static arguments, the config epoch and
  the active named axes and the registered `context_keys`.

So a fresh `jit(f)` of the same `f` reuses the traces of the earlier ones,
and every entry of `f` is dropped when `f` is garbage-collected. A function
that cannot be referenced weakly or hashed keys on its `jit` object instead
(the entries go with that object).

Bounded: at most `microjax_jit_cache_size` entries in all (default 4096,
`config.update("microjax_jit_cache_size", n)`; 0 keeps nothing), the least
recently used — by either call path — evicted first. `clear_caches()`
empties it.

The Rust side (`_core.trace_cache_*`, `JitFunction`) keeps the entries'
recency, the bound and the fast path's index (a jitted call with only array
arguments finds its compiled program there without entering Python); this
module keeps the owner tokens and the traced programs, indexed by the
Python key, and forgets what the Rust side reports evicted.
"""
import weakref

from . import _core

DEFAULT_SIZE = 4096

# weakref(fun) -> {jit options: owner token}. A dict keyed on weak
# references (not a WeakKeyDictionary) so the callback can drop the
# owners' entries from the Rust side too.
_OWNERS = {}

# owner token -> {Python key: (entry id, trace)}.
_INDEX = {}


def _function_died(ref, owners=_OWNERS, index=_INDEX, drop=_core.trace_cache_drop_owner):
    # (Bound as defaults: the callback may run while the interpreter tears
    # this module down.)
    for owner in owners.pop(ref, {}).values():
        index.pop(owner, None)
        drop(owner)


def owner_of(fun, options):
    """The owner token of `fun` under `jit` options `options`, or None when
    `fun` cannot be referenced weakly or hashed (the caller keys on its
    `jit` object then)."""
    try:
        owners = _OWNERS.get(weakref.ref(fun))
    except TypeError:
        return None
    if owners is None:  # (setdefault: another thread may have registered it)
        owners = _OWNERS.setdefault(weakref.ref(fun, _function_died), {})
    owner = owners.get(options)
    if owner is None:
        owner = owners.setdefault(options, _core.trace_cache_new_owner())
    return owner


# Functions of no arguments whose hashable results join every key (the
# tracing context a program depends on beyond its arguments: a staged
# `checkify` makes the checks traced under it report into its run).
context_keys = []


def context_key():
    """The registered context of the trace being made now."""
    return tuple(f() for f in context_keys) if context_keys else ()


def lookup(owner, key):
    """The trace cached for `owner` under `key`, or None."""
    index = _INDEX.get(owner)
    hit = index.get(key) if index else None
    if hit is None:
        return None
    if not _core.trace_cache_touch(hit[0]):  # gone on the Rust side
        del index[key]
        return None
    return hit


def keys_of(owner):
    """The keys cached for `owner` (what a miss is explained against)."""
    return list(_INDEX.get(owner, ()))


# Traces added since start (each a miss of a jitted call's cache).
added = 0


def add(owner, key, trace):
    """Caches `trace` for `owner` under `key`; returns the entry id."""
    global added
    added += 1
    entry, evicted = _core.trace_cache_add(owner, key)
    _INDEX.setdefault(owner, {})[key] = (entry, trace)
    _forget(evicted)
    return entry


def _forget(evicted):
    for owner, key, entry in evicted:
        index = _INDEX.get(owner)
        if index is not None and index.get(key, (None,))[0] == entry:
            del index[key]
            if not index:
                del _INDEX[owner]


def drop_owner(owner):
    """Drops every entry of `owner` (a jitted function keyed on itself)."""
    _INDEX.pop(owner, None)
    _core.trace_cache_drop_owner(owner)


def clear():
    """Drops every entry (owners stay valid)."""
    _INDEX.clear()
    _core.trace_cache_clear()


def set_size(entries):
    """Sets the bound in entries, evicting the least recently used beyond it."""
    _forget(_core.trace_cache_set_capacity(entries))


def stats():
    """`entries` (traces held), `fast_entries` (of those, reachable by the
    fast path), `capacity`, `evictions` (since start) and `functions`
    (wrapped functions with a live weak key)."""
    out = dict(_core.trace_cache_stats())
    out["functions"] = len(_OWNERS)
    return out
