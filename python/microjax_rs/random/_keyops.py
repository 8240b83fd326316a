"""Array functions of typed key arrays (`jnp.reshape(keys, ...)`,
`keys.at[i].set(k)`, `lax.select(c, keys1, keys2)`, `jnp.zeros(shape,
dtype=key_dtype)`, ...), as JAX's key arrays: a shape operation runs on the
uint32 key data, mapped (vmap) over the trailing key-data axes, so it sees
arrays of the key shape, and its results are key arrays of the same
implementation. Registered with `_src.key_arrays`, which the decorated jnp
and lax functions consult."""
from .. import numpy as jnp
from .._src import key_arrays
from ..tree_util import tree_flatten, tree_map, tree_unflatten
from ._prng import KeyDType, PRNGKeyArray


def _is_key(x):
    return isinstance(x, PRNGKeyArray)


def _one_impl(keys):
    names = {k._impl.name for k in keys}
    if len(names) > 1:
        raise TypeError(f"cannot combine PRNG keys of implementations {sorted(names)}")
    return keys[0]._impl


def map_over_keys(fn, args, kwargs):
    """`fn(*args, **kwargs)` with every key array of `args` / `kwargs` replaced
    by its data, vmapped over the key-data axes; array results become keys."""
    from .._vmap import vmap

    leaves, tree = tree_flatten((args, kwargs), is_leaf=_is_key)
    at = [i for i, leaf in enumerate(leaves) if _is_key(leaf)]
    impl = _one_impl([leaves[i] for i in at])

    def on_data(*datas):
        filled = list(leaves)
        for i, d in zip(at, datas):
            filled[i] = d
        a, kw = tree_unflatten(tree, filled)
        return fn(*a, **kw)

    mapped = on_data
    for _ in impl.key_shape:
        mapped = vmap(mapped, in_axes=-1, out_axes=-1)
    out = mapped(*[leaves[i]._base for i in at])
    return tree_map(lambda o: PRNGKeyArray(impl, o), out)


def _dtype_arg(args, kwargs, position):
    if "dtype" in kwargs:
        return kwargs["dtype"]
    return args[position] if len(args) > position else None


def _create(fn, args, kwargs, position):
    """`jnp.zeros / ones / empty (shape, dtype)` and `jnp.full(shape, fill,
    dtype)` of a key dtype (or a key fill value): keys over uint32 data."""
    dtype = _dtype_arg(args, kwargs, position)
    fill = (kwargs.get("fill_value", args[1] if len(args) > 1 else None)
            if fn.__name__ == "full" else None)
    impl = dtype._impl if isinstance(dtype, KeyDType) else fill._impl
    shape = kwargs.get("shape", args[0] if args else ())
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    data_shape = shape + impl.key_shape
    if fn.__name__ != "full":
        return PRNGKeyArray(impl, fn(data_shape, dtype="uint32"))
    if _is_key(fill):
        return PRNGKeyArray(impl, jnp.broadcast_to(fill._base, data_shape))
    return PRNGKeyArray(impl, fn(data_shape, fill, dtype="uint32"))


def _without_key_dtype(fn, args, kwargs, position):
    """`jnp.array(keys, dtype=keys.dtype)`: the key dtype names the keys' own."""
    dtype = _dtype_arg(args, kwargs, position)
    if isinstance(dtype, KeyDType):
        kwargs = {k: v for k, v in kwargs.items() if k != "dtype"}
        args = args[:position]
        if not _is_key(args[0]) or args[0].dtype != dtype:
            raise TypeError(f"cannot convert to the key dtype {dtype}")
    return map_over_keys(fn, args, kwargs)


def _result_type(fn, args, kwargs):
    dts = [a.dtype if _is_key(a) else a for a in args]
    if all(isinstance(d, KeyDType) for d in dts) and len(set(dts)) == 1:
        return dts[0]
    raise TypeError(f"result_type does not accept key dtypes mixed with others: {dts}")


_SPECIAL = {
    "zeros": lambda fn, a, kw: _create(fn, a, kw, 1),
    "ones": lambda fn, a, kw: _create(fn, a, kw, 1),
    "empty": lambda fn, a, kw: _create(fn, a, kw, 1),
    "full": lambda fn, a, kw: _create(fn, a, kw, 2),
    "array": lambda fn, a, kw: _without_key_dtype(fn, a, kw, 1),
    "asarray": lambda fn, a, kw: _without_key_dtype(fn, a, kw, 1),
    "result_type": _result_type,
}


# The operands of functions combining arrays, which must all be keys.
_COMBINED = {
    "concatenate": lambda args: list(args[0]),
    "stack": lambda args: list(args[0]),
    "append": lambda args: list(args[:2]),
    "where": lambda args: list(args[1:3]),
    "select": lambda args: list(args[1:3]),
}


def _handle(fn, args, kwargs):
    special = _SPECIAL.get(fn.__name__)
    if special is not None:
        return special(fn, args, kwargs)
    combined = _COMBINED.get(fn.__name__)
    if combined is not None and not all(_is_key(x) for x in combined(args)):
        raise TypeError(f"jnp.{fn.__name__}: cannot mix typed PRNG key arrays with other arrays")
    return map_over_keys(fn, args, kwargs)


class _KeyIndexer:
    """`keys.at[idx]`: `.get(...)` and `.set(keys, ...)` on key arrays."""

    def __init__(self, keys, idx):
        self._keys, self._idx = keys, idx

    def get(self, **kwargs):
        idx = self._idx
        return map_over_keys(lambda d: d.at[idx].get(**kwargs), (self._keys,), {})

    def set(self, values, **kwargs):
        idx = self._idx
        return map_over_keys(lambda d, v: d.at[idx].set(v, **kwargs), (self._keys, values), {})


class KeyAt:
    """`keys.at`: indexed get / set of keys (`keys.at[i].set(k)`)."""

    def __init__(self, keys):
        self._keys = keys

    def __getitem__(self, idx):
        return _KeyIndexer(self._keys, idx)


key_arrays.register((PRNGKeyArray, KeyDType), _handle)
