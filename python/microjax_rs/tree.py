"""The ``jax.tree`` namespace: short aliases of ``tree_util`` functions.

``import microjax_rs as jax; jax.tree.map(f, tree)`` etc.
"""

if __package__:
    from . import tree_util as _tu
else:  # loaded standalone (no parent package), with tree_util.py importable
    import tree_util as _tu  # type: ignore[no-redef]

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]


def all(tree, *, is_leaf=None):  # noqa: A001 - JAX's name
    """Alias of ``tree_util.tree_all``: ``all`` of the leaves."""
    return _tu.tree_all(tree, is_leaf=is_leaf)


def flatten(tree, is_leaf=None):
    """Alias of ``tree_util.tree_flatten``: ``(leaves, treedef)``."""
    return _tu.tree_flatten(tree, is_leaf)


def flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """Alias of ``tree_util.tree_flatten_with_path``."""
    return _tu.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)


def leaves(tree, is_leaf=None):
    """Alias of ``tree_util.tree_leaves``."""
    return _tu.tree_leaves(tree, is_leaf)


def leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """Alias of ``tree_util.tree_leaves_with_path``."""
    return _tu.tree_leaves_with_path(tree, is_leaf, is_leaf_takes_path)


def map(f, tree, *rest, is_leaf=None):  # noqa: A001 - JAX's name
    """Alias of ``tree_util.tree_map``."""
    return _tu.tree_map(f, tree, *rest, is_leaf=is_leaf)


def map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """Alias of ``tree_util.tree_map_with_path``: ``f(key_path, x, *ys)``."""
    return _tu.tree_map_with_path(
        f, tree, *rest, is_leaf=is_leaf, is_leaf_takes_path=is_leaf_takes_path
    )


def reduce(function, tree, initializer=_tu._NO_INITIALIZER, is_leaf=None):
    """Alias of ``tree_util.tree_reduce``."""
    return _tu.tree_reduce(function, tree, initializer, is_leaf)


def structure(tree, is_leaf=None):
    """Alias of ``tree_util.tree_structure``."""
    return _tu.tree_structure(tree, is_leaf)


def transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Alias of ``tree_util.tree_transpose``."""
    return _tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def unflatten(treedef, leaves):
    """Alias of ``tree_util.tree_unflatten``."""
    return _tu.tree_unflatten(treedef, leaves)


def broadcast(prefix_tree, full_tree, is_leaf=None):
    """Alias of ``tree_util.tree_broadcast``."""
    return _tu.tree_broadcast(prefix_tree, full_tree, is_leaf)


def reduce_associative(operation, tree, *, identity=_tu._NO_INITIALIZER, is_leaf=None):
    """Alias of ``tree_util.tree_reduce_associative``."""
    return _tu.tree_reduce_associative(operation, tree, identity=identity, is_leaf=is_leaf)


def static(**kwargs):
    """A `dataclasses.field` marked static (``metadata={'static': True}``):
    with ``tree_util.register_dataclass`` the field is aux data, not a
    child. Takes `dataclasses.field`'s arguments."""
    import dataclasses

    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
