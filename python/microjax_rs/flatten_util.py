"""`jax.flatten_util`: a pytree of arrays as one flat vector and back."""
from . import lax
from . import numpy as jnp
from .tree_util import tree_flatten, tree_unflatten


def _dtype_of(x):
    return jnp.asarray(x).dtype


def ravel_pytree(pytree):
    """Ravel every leaf of `pytree` and concatenate them into one 1-D array of
    the leaves' promoted dtype. Returns `(flat, unravel)`, where `unravel(v)`
    rebuilds a pytree of `pytree`'s structure, leaf shapes and dtypes from a
    vector `v` of `flat`'s shape and dtype."""
    leaves, treedef = tree_flatten(pytree)
    from_dtypes = tuple(_dtype_of(leaf) for leaf in leaves)
    shapes = tuple(jnp.shape(leaf) for leaf in leaves)
    sizes = [int(jnp.size(leaf)) for leaf in leaves]
    if leaves:
        to_dtype = jnp.result_type(*from_dtypes)
        flat = jnp.concatenate([jnp.ravel(lax.convert_element_type(jnp.asarray(leaf), to_dtype))
                                for leaf in leaves])
    else:
        to_dtype = jnp.zeros(0).dtype
        flat = jnp.zeros(0, to_dtype)
    total = sum(sizes)

    def unravel(arr):
        shape = jnp.shape(arr)
        if shape != (total,):
            raise ValueError(
                f"The unravel function expected an array of shape {(total,)}, got shape {shape}.")
        arr_dtype = _dtype_of(arr)
        if arr_dtype != to_dtype:
            raise TypeError(
                f"unravel function given array of dtype {arr_dtype}, but expected dtype {to_dtype}")
        out, start = [], 0
        for shape_i, size, dtype in zip(shapes, sizes, from_dtypes):
            chunk = lax.slice(arr, (start,), (start + size,))
            out.append(lax.convert_element_type(jnp.reshape(chunk, shape_i), dtype))
            start += size
        return tree_unflatten(treedef, out)

    return flat, unravel


__all__ = ["ravel_pytree"]
