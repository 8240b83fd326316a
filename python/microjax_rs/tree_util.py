"""Pytrees: JAX's ``jax.tree_util`` for microjax_rs.

A pytree is a nested structure of containers (tuples, lists, dicts, ``None``,
namedtuples, ``OrderedDict``, ``defaultdict``, registered dataclasses and any
registered custom node) whose non-container values are *leaves*.
``tree_flatten`` turns a pytree into a list of leaves plus a ``PyTreeDef``
describing the containers; ``tree_unflatten`` rebuilds it.

Semantics follow JAX: dict keys are sorted (and an unflattened dict comes back
in sorted key order), ``None`` is a node with no children, node types are
looked up by *exact* type (a ``dict`` subclass is a leaf unless registered;
a namedtuple is recognised structurally), ``is_leaf`` is consulted at every
level including the root, and treedefs compare equal when node types, aux data
and shapes are equal.

Implementation notes (contract for the rest of the package):

* This module imports only the standard library; it is loadable on its own.
* A ``PyTreeDef`` wraps an immutable *node*: ``None`` for a leaf, otherwise a
  3-tuple ``(node_type, aux_data, children)`` where ``children`` is a tuple of
  nodes.  Equality and hashing are the tuple's (the hash falls back to a
  structure-only hash if some aux data is unhashable).
* ``tree_flatten`` dispatches on ``type(x)`` through one dict lookup (a cache
  that also remembers leaf and namedtuple types), so flattening a tuple of
  three arrays costs about a microsecond.
"""

import collections
import dataclasses
import functools
import operator
import typing

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "broadcast_prefix",
    "default_registry",
    "flatten_one_level",
    "is_tree_node",
    "keystr",
    "prefix_errors",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_is_strict_leaf",
    "treedef_tuple",
]

_NoneType = type(None)
_object_new = object.__new__


# --------------------------------------------------------------------------
# Node kinds and the registry
# --------------------------------------------------------------------------


class _Kind:
    """Singleton marker for a built-in node kind (compared with ``is``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<pytree kind {self.name}>"


(
    _K_LEAF, _K_TUPLE, _K_LIST, _K_DICT, _K_NONE, _K_NAMEDTUPLE,
) = map(
    _Kind,
    (
        "leaf", "tuple", "list", "dict", "None", "namedtuple",
    ),
)


class _CustomNode:
    """A registered node type: how to flatten (with and without keys) and unflatten."""

    __slots__ = ("type", "flatten", "unflatten", "flatten_with_keys", "kind")

    def __init__(self, nodetype, flatten, unflatten, flatten_with_keys, kind="custom"):
        self.type = nodetype
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys
        self.kind = kind

    def __repr__(self):
        return f"<pytree node {self.type.__qualname__}>"


# Explicit registrations: type -> _CustomNode.
_registry = {}
# Dispatch cache: type -> _Kind singleton or _CustomNode.  Exact types only.
# Unknown types are classified once (leaf or namedtuple) and remembered.
_dispatch = {
    tuple: _K_TUPLE,
    list: _K_LIST,
    dict: _K_DICT,
    _NoneType: _K_NONE,
}
_dispatch_get = _dispatch.get
_BUILTIN_NODE_TYPES = (tuple, list, dict, _NoneType)


def _classify(t):
    """Slow path of the dispatch: classify an unseen type and cache it."""
    h = _registry.get(t)
    if h is None:
        if issubclass(t, tuple) and hasattr(t, "_fields"):
            h = _K_NAMEDTUPLE
        else:
            h = _K_LEAF
    # The cache holds strong references to types; stop growing it if a program
    # keeps creating new classes (correctness does not depend on caching).
    if len(_dispatch) < _DISPATCH_CACHE_LIMIT or h.__class__ is _CustomNode:
        _dispatch[t] = h
    return h


_DISPATCH_CACHE_LIMIT = 8192


class _Registry:
    """Stand-in for ``jax.tree_util.default_registry`` (there is only one)."""

    def __repr__(self):
        return "<microjax_rs default pytree registry>"

    def flatten(self, tree, leaf_predicate=None):
        return tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        return flatten_one_level(tree)


default_registry = _Registry()


def _sorted_dict_keys(d):
    """A dict node's keys in sorted order; keys that do not compare raise
    JAX's ValueError (the comparison's error as its cause)."""
    try:
        return sorted(d)
    except TypeError as e:
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Register ``nodetype`` as a pytree node.

    ``flatten_func(x) -> (children, aux_data)``;
    ``unflatten_func(aux_data, children) -> x`` (children arrive as a tuple);
    ``flatten_with_keys_func(x) -> (((key, child), ...), aux_data)`` is
    optional and only used for key paths (``FlattenedIndexKey`` otherwise).
    Registration is by exact type; registering a type twice raises ValueError.
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node expects a type, got {nodetype!r}")
    if nodetype in _registry or nodetype in _BUILTIN_NODE_TYPES:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _add_node(_CustomNode(nodetype, flatten_func, unflatten_func, flatten_with_keys_func))


def _add_node(entry):
    _registry[entry.type] = entry
    _dispatch[entry.type] = entry


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Register a node whose flatten function also names each child's key."""
    if flatten_func is None:

        def flatten_func(x, _fwk=flatten_with_keys):
            key_children, aux = _check_flatten_result(_fwk(x))
            return [c for _, c in key_children], aux

    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
    """Class decorator: register ``cls`` using its ``tree_flatten`` method and
    ``tree_unflatten`` classmethod."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: like ``register_pytree_node_class`` but uses
    ``tree_flatten_with_keys`` (and ``tree_flatten`` if the class defines one)."""
    flatten_func = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(
        cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten, flatten_func
    )
    return cls


def register_static(cls):
    """Register ``cls`` as a node with no children whose instance *is* the aux
    data (so it is static under ``jit``; instances must be hashable)."""
    register_pytree_node(cls, _static_flatten, _static_unflatten)
    return cls


def _static_flatten(x):
    return (), x


def _static_unflatten(aux, _children):
    return aux


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass (or a plain class with the given fields) as a node.

    ``data_fields`` are children (pytrees), ``meta_fields`` are static aux data.
    When both are omitted the class must be a dataclass: fields with
    ``metadata={'static': True}`` are meta, the other ``init=True`` fields are
    data.  Usable as ``@register_dataclass`` or
    ``@functools.partial(register_dataclass, data_fields=..., meta_fields=...)``
    or ``@register_dataclass(data_fields=..., meta_fields=...)``.  Rebuilding
    calls ``nodetype(**fields)``.
    """
    if nodetype is None:
        return functools.partial(
            register_dataclass,
            data_fields=data_fields,
            meta_fields=meta_fields,
            drop_fields=drop_fields,
        )
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when"
                f" nodetype is not a dataclass. Got nodetype={nodetype!r}"
            )
        data_fields, meta_fields = [], []
        for f in dataclasses.fields(nodetype):
            if not f.init or f.name in drop_fields:
                continue
            (meta_fields if f.metadata.get("static", False) else data_fields).append(f.name)
    elif data_fields is None or meta_fields is None:
        raise TypeError(
            "register_dataclass: data_fields and meta_fields must both be specified"
            f" when either is specified. Got data_fields={data_fields!r}"
            f" meta_fields={meta_fields!r}."
        )
    data_fields = tuple(data_fields)
    meta_fields = tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        given = set(data_fields) | set(meta_fields)
        if given != init_fields:
            msg = (
                "data_fields and meta_fields must include all dataclass fields with"
                " ``init=True`` and only them."
            )
            missing = init_fields - given
            unexpected = given - init_fields
            if missing:
                msg += f" Missing fields: {missing}."
            if unexpected:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    overlap = set(data_fields) & set(meta_fields)
    if overlap:
        raise ValueError(f"register_dataclass: fields {overlap} are both data and meta fields.")

    getters_data = operator.attrgetter(*data_fields) if data_fields else None
    getters_meta = operator.attrgetter(*meta_fields) if meta_fields else None
    n_data, n_meta = len(data_fields), len(meta_fields)

    def flatten(x):
        if n_data == 0:
            data = ()
        elif n_data == 1:
            data = (getters_data(x),)
        else:
            data = getters_data(x)
        if n_meta == 0:
            meta = ()
        elif n_meta == 1:
            meta = (getters_meta(x),)
        else:
            meta = getters_meta(x)
        return data, meta

    keys = tuple(GetAttrKey(name) for name in data_fields)

    def flatten_with_keys(x):
        data, meta = flatten(x)
        return tuple(zip(keys, data)), meta

    def unflatten(meta, data):
        kwargs = dict(zip(meta_fields, meta))
        kwargs.update(zip(data_fields, data))
        return nodetype(**kwargs)

    if nodetype in _registry or nodetype in _BUILTIN_NODE_TYPES:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _add_node(_CustomNode(nodetype, flatten, unflatten, flatten_with_keys, kind="dataclass"))
    return nodetype


# --------------------------------------------------------------------------
# Key paths
# --------------------------------------------------------------------------


class _KeyBase:
    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _value(self):
        return getattr(self, self.__match_args__[0])

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._value() == other._value()

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __reduce__(self):
        return (type(self), (self._value(),))

    def __repr__(self):
        field = self.__match_args__[0]
        return f"{type(self).__name__}({field}={self._value()!r})"


class SequenceKey(_KeyBase):
    """Key of a tuple/list child: ``str`` is ``[idx]``."""

    __slots__ = ("idx",)
    __match_args__ = ("idx",)

    def __init__(self, idx):
        object.__setattr__(self, "idx", idx)

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(_KeyBase):
    """Key of a dict child: ``str`` is ``[repr(key)]``."""

    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key):
        object.__setattr__(self, "key", key)

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(_KeyBase):
    """Key of an attribute child (namedtuple field, dataclass field): ``.name``."""

    __slots__ = ("name",)
    __match_args__ = ("name",)

    def __init__(self, name):
        object.__setattr__(self, "name", name)

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_KeyBase):
    """Key of a child of a node registered without keys: ``[<flat index i>]``."""

    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key):
        object.__setattr__(self, "key", key)

    def __str__(self):
        return f"[<flat index {self.key}>]"


def _simple_keystr(k):
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, (DictKey, FlattenedIndexKey)):
        return str(k.key)
    if isinstance(k, GetAttrKey):
        return str(k.name)
    return str(k)


def keystr(keys, *, simple=False, separator=""):
    """Render a key path: ``keystr((SequenceKey(0), DictKey('a')))`` is
    ``"[0]['a']"``; with ``simple=True, separator='/'`` it is ``"0/a"``."""
    fn = _simple_keystr if simple else str
    return separator.join([fn(k) for k in keys])


# --------------------------------------------------------------------------
# Flattening
# --------------------------------------------------------------------------


def _check_flatten_result(r):
    if not isinstance(r, tuple) or len(r) != 2:
        raise ValueError(
            "The to_iterable function for a custom PyTree node should return a"
            f" (children, aux_data) tuple, got {r!r}"
        )
    try:
        iter(r[0])
    except TypeError:
        raise ValueError(
            "The to_iterable function for a custom PyTree node should return a"
            f" (children, aux_data) tuple where 'children' is iterable, got {r!r}"
        ) from None
    return r


_NONE_NODE = (_NoneType, None, ())


def _flat(x, lapp, _get=_dispatch.get, _LEAF=_K_LEAF):
    """Flatten ``x``: leaves go to ``lapp`` (a list's ``append``); returns the
    node (``None`` for a leaf)."""
    t = type(x)
    h = _get(t) or _classify(t)
    if h is _LEAF:
        lapp(x)
        return None
    return _flat_node(x, t, h, lapp)


def _flat_node(
    x,
    t,
    h,
    lapp,
    _TUPLE=_K_TUPLE,
    _LIST=_K_LIST,
    _DICT=_K_DICT,
    _NONE=_K_NONE,
    _NT=_K_NAMEDTUPLE,
):
    """Node of a non-leaf ``x`` of type ``t`` and handler ``h``."""
    if h is _TUPLE or h is _LIST or h is _NT:
        return (t, None, _flat_seq(x, lapp))
    if h is _DICT:
        keys = _sorted_dict_keys(x)
        return (dict, tuple(keys), _flat_seq([x[k] for k in keys], lapp))
    if h is _NONE:
        return _NONE_NODE
    children, aux = _check_flatten_result(h.flatten(x))
    return (t, aux, _flat_seq(children, lapp))


def _flat_seq(xs, lapp, _get=_dispatch.get, _LEAF=_K_LEAF):
    """Tuple of the nodes of the children ``xs`` (leaf test inlined: most
    children are leaves, and a call per leaf is the main cost)."""
    ch = []
    cap = ch.append
    for c in xs:
        tc = type(c)
        hc = _get(tc) or _classify(tc)
        if hc is _LEAF:
            lapp(c)
            cap(None)
        else:
            cap(_flat_node(c, tc, hc, lapp))
    return tuple(ch)


def _flat_is_leaf(x, leaves, is_leaf):
    """``_flat`` honoring an ``is_leaf`` predicate at every level."""
    if is_leaf(x):
        leaves.append(x)
        return None
    t = type(x)
    h = _dispatch.get(t) or _classify(t)
    if h is _K_LEAF:
        leaves.append(x)
        return None
    if h is _K_TUPLE or h is _K_LIST:
        return (t, None, tuple([_flat_is_leaf(c, leaves, is_leaf) for c in x]))
    if h is _K_DICT:
        keys = _sorted_dict_keys(x)
        return (dict, tuple(keys), tuple([_flat_is_leaf(x[k], leaves, is_leaf) for k in keys]))
    if h is _K_NONE:
        return _NONE_NODE
    if h is _K_NAMEDTUPLE:
        return (t, None, tuple([_flat_is_leaf(c, leaves, is_leaf) for c in x]))
    children, aux = _check_flatten_result(h.flatten(x))
    return (t, aux, tuple([_flat_is_leaf(c, leaves, is_leaf) for c in children]))


def _collect(
    x,
    lapp,
    _get=_dispatch.get,
    _LEAF=_K_LEAF,
    _TUPLE=_K_TUPLE,
    _LIST=_K_LIST,
    _DICT=_K_DICT,
    _NONE=_K_NONE,
    _NT=_K_NAMEDTUPLE,
):
    """Leaves only (no treedef): the fast path of ``tree_leaves``."""
    t = type(x)
    h = _get(t) or _classify(t)
    if h is _LEAF:
        lapp(x)
        return
    if h is _TUPLE or h is _LIST or h is _NT:
        children = x
    elif h is _DICT:
        children = [x[k] for k in _sorted_dict_keys(x)]
    elif h is _NONE:
        return
    else:
        children = _check_flatten_result(h.flatten(x))[0]
    for c in children:
        tc = type(c)
        if (_get(tc) or _classify(tc)) is _LEAF:
            lapp(c)
        else:
            _collect(c, lapp)


def _node_children_with_keys(x, h):
    """(list of (key, child), aux) for a non-leaf value x of handler h."""
    if h is _K_TUPLE or h is _K_LIST:
        return [(SequenceKey(i), c) for i, c in enumerate(x)], None
    if h is _K_DICT:
        keys = _sorted_dict_keys(x)
        return [(DictKey(k), x[k]) for k in keys], tuple(keys)
    if h is _K_NONE:
        return [], None
    if h is _K_NAMEDTUPLE:
        return [(GetAttrKey(f), c) for f, c in zip(type(x)._fields, x)], None
    if h.flatten_with_keys is not None:
        key_children, aux = _check_flatten_result(h.flatten_with_keys(x))
        return list(key_children), aux
    children, aux = _check_flatten_result(h.flatten(x))
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux


def _flat_path(x, path, out, is_leaf, is_leaf_takes_path):
    """Append (path, leaf) pairs to ``out``; return x's node."""
    if is_leaf is not None and (is_leaf(path, x) if is_leaf_takes_path else is_leaf(x)):
        out.append((path, x))
        return None
    t = type(x)
    h = _dispatch.get(t) or _classify(t)
    if h is _K_LEAF:
        out.append((path, x))
        return None
    key_children, aux = _node_children_with_keys(x, h)
    return (
        t,
        aux,
        tuple([_flat_path(c, path + (k,), out, is_leaf, is_leaf_takes_path) for k, c in key_children]),
    )


def tree_flatten(tree, is_leaf=None):
    """Flatten ``tree`` into ``(leaves, treedef)``.

    ``is_leaf(x) -> bool`` (optional) is called on every subtree, root
    included; where it is true the subtree is one leaf.
    """
    leaves = []
    if is_leaf is None:
        # _flat inlined for the root (this is on every jit call's path).
        t = type(tree)
        h = _dispatch_get(t) or _classify(t)
        if h is _K_LEAF:
            leaves.append(tree)
            node = None
        else:
            node = _flat_node(tree, t, h, leaves.append)
    else:
        node = _flat_is_leaf(tree, leaves, is_leaf)
    td = _object_new(PyTreeDef)
    td._node = node
    td._num_leaves = len(leaves)
    return leaves, td


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree``, in flatten order."""
    leaves = []
    if is_leaf is None:
        _collect(tree, leaves.append)
    else:
        _flat_is_leaf(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree, is_leaf=None):
    """The ``PyTreeDef`` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_unflatten(treedef, leaves):
    """Rebuild a pytree of structure ``treedef`` from an iterable of leaves."""
    return treedef.unflatten(leaves)


def _flatten_with_path_data(tree):
    """``tree_flatten_with_path`` down to the leaves transformations see (a
    typed key array contributes its data)."""
    out = []
    node = _flat_path(tree, (), out, None, False)
    return out, _make_treedef(node, len(out))


def _keys_as_leaves(is_leaf, is_leaf_takes_path):
    """`is_leaf` for the public path functions: a typed key array is one leaf
    (as `tree_map`), besides what the caller's `is_leaf` marks."""
    if not _ARRAY_NODES:
        return is_leaf, is_leaf_takes_path
    if is_leaf is None:
        return (lambda p, x: type(x) in _ARRAY_NODES), True
    if is_leaf_takes_path:
        return (lambda p, x, user=is_leaf: type(x) in _ARRAY_NODES or user(p, x)), True
    return (lambda p, x, user=is_leaf: type(x) in _ARRAY_NODES or user(x)), True


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """Like ``tree_flatten`` but the leaves come as ``(key_path, leaf)`` pairs;
    a typed key array is one leaf (as in JAX)."""
    out = []
    node = _flat_path(tree, (), out, *_keys_as_leaves(is_leaf, is_leaf_takes_path))
    return out, _make_treedef(node, len(out))


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """``[(key_path, leaf), ...]`` in flatten order; a typed key array is one leaf."""
    out = []
    _flat_path(tree, (), out, *_keys_as_leaves(is_leaf, is_leaf_takes_path))
    return out


def flatten_one_level(tree):
    """Flatten one level: ``(children_list, aux_data)``; ValueError for a leaf."""
    t = type(tree)
    h = _dispatch.get(t) or _classify(t)
    if h is _K_LEAF:
        raise ValueError(f"can't tree-flatten type: {t}")
    if h is _K_TUPLE or h is _K_LIST or h is _K_NAMEDTUPLE:
        return list(tree), None
    if h is _K_DICT:
        keys = _sorted_dict_keys(tree)
        return [tree[k] for k in keys], tuple(keys)
    if h is _K_NONE:
        return [], None
    children, aux = _check_flatten_result(h.flatten(tree))
    return list(children), aux


def flatten_one_level_with_keys(tree):
    """Flatten one level: ``([(key, child), ...], aux_data)``; ValueError for a leaf."""
    t = type(tree)
    h = _dispatch.get(t) or _classify(t)
    if h is _K_LEAF:
        raise ValueError(f"can't tree-flatten type: {t}")
    return _node_children_with_keys(tree, h)


# --------------------------------------------------------------------------
# PyTreeDef
# --------------------------------------------------------------------------


def _build(node, nxt):
    """Rebuild a value from ``node``, drawing leaves with ``nxt()``."""
    if node is None:
        return nxt()
    t, aux, ch = node
    children = [nxt() if c is None else _build(c, nxt) for c in ch]
    if t is tuple:
        return tuple(children)
    if t is list:
        return children
    if t is dict:
        return dict(zip(aux, children))
    if t is _NoneType:
        return None
    h = _dispatch.get(t) or _classify(t)
    if h is _K_NAMEDTUPLE:
        return t(*children)
    if h.__class__ is _CustomNode:
        return h.unflatten(aux, tuple(children))
    raise TypeError(f"PyTreeDef node type {t} is no longer a registered pytree node")


def _count_leaves(node):
    if node is None:
        return 1
    return sum([_count_leaves(c) for c in node[2]])


def _count_nodes(node):
    if node is None:
        return 1
    return 1 + sum([_count_nodes(c) for c in node[2]])


def _strip_aux(node):
    """Structure with aux data replaced by a hashable stand-in (for hashing)."""
    if node is None:
        return None
    t, aux, ch = node
    try:
        hash(aux)
    except TypeError:
        aux = type(aux).__name__
    return (t, aux, tuple([_strip_aux(c) for c in ch]))


def _node_str(node):
    if node is None:
        return "*"
    t, aux, ch = node
    if t is tuple:
        if len(ch) == 1:
            return f"({_node_str(ch[0])},)"
        return "(" + ", ".join([_node_str(c) for c in ch]) + ")"
    if t is list:
        return "[" + ", ".join([_node_str(c) for c in ch]) + "]"
    if t is dict:
        return "{" + ", ".join([f"{k!r}: {_node_str(c)}" for k, c in zip(aux, ch)]) + "}"
    if t is _NoneType:
        return "None"
    inner = ", ".join([_node_str(c) for c in ch])
    if (_dispatch.get(t) or _classify(t)) is _K_NAMEDTUPLE:
        return f"CustomNode(namedtuple[{t.__name__}], [{inner}])"
    return f"CustomNode({t.__name__}[{aux}], [{inner}])"


def _compose(node, inner):
    if node is None:
        return inner
    t, aux, ch = node
    return (t, aux, tuple([_compose(c, inner) for c in ch]))


class _MismatchError(Exception):
    """Internal: a flatten_up_to mismatch, with the key path built on the way out."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg
        self.path = []


def _up_to(node, x, out):
    """Append to ``out`` the subtrees of ``x`` found at the leaves of ``node``."""
    if node is None:
        out.append(x)
        return
    t, aux, ch = node
    if t is tuple or t is list:
        if not isinstance(x, t):
            raise _MismatchError(f"Expected {t.__name__}, got {x!r}.")
        if len(x) != len(ch):
            what = "Tuple" if t is tuple else "List"
            raise _MismatchError(
                f"{what} arity mismatch: {len(x)} != {len(ch)}; {t.__name__}: {x!r}."
            )
        children = x
    elif t is dict:
        if not isinstance(x, dict):
            raise _MismatchError(f"Expected dict, got {x!r}.")
        keys = _sorted_dict_keys(x)
        if len(keys) != len(aux) or tuple(keys) != aux:
            raise _MismatchError(f"Dict key mismatch; expected keys: {list(aux)!r}; dict: {x!r}.")
        children = [x[k] for k in keys]
    elif t is _NoneType:
        if x is not None:
            raise _MismatchError(f"Expected None, got {x!r}.")
        return
    else:
        h = _dispatch.get(t) or _classify(t)
        if h is _K_NAMEDTUPLE:
            if not (isinstance(x, tuple) and hasattr(type(x), "_fields")):
                raise _MismatchError(f"Expected named tuple, got {x!r}.")
            if type(x) is not t:
                raise _MismatchError(
                    f"Named tuple type mismatch: expected type: {t!r}, got type: {type(x)!r}."
                )
            if len(x) != len(ch):
                raise _MismatchError(
                    f"Named tuple arity mismatch: {len(x)} != {len(ch)}; tuple: {x!r}."
                )
            children = x
        else:
            if type(x) is not t:
                raise _MismatchError(
                    f"Custom node type mismatch; expected type: {t!r}; value: {x!r}."
                )
            children, x_aux = _check_flatten_result(h.flatten(x))
            children = list(children)
            if len(children) != len(ch):
                raise _MismatchError(
                    f"Custom type arity mismatch: {len(children)} != {len(ch)}; value: {x!r}."
                )
            if not (x_aux is aux or x_aux == aux):
                raise _MismatchError(
                    f"Mismatch custom node data: {x_aux!r} != {aux!r}; value: {x!r}."
                )
    i = 0
    try:
        for n, c in zip(ch, children):
            if n is None:
                out.append(c)
            else:
                _up_to(n, c, out)
            i += 1
    except _MismatchError as e:
        e.path.append(_child_key(t, aux, i, x))
        raise


def _child_key(t, aux, i, x):
    """The key of child ``i`` of a node (only used to report errors)."""
    if t is tuple or t is list:
        return SequenceKey(i)
    if t is dict:
        return DictKey(aux[i])
    h = _dispatch.get(t) or _classify(t)
    if h is _K_NAMEDTUPLE:
        return GetAttrKey(t._fields[i])
    try:
        key_children, _ = _node_children_with_keys(x, h)
        return key_children[i][0]
    except Exception:  # a broken flatten_with_keys must not mask the real error
        return FlattenedIndexKey(i)


def _make_treedef(node, num_leaves):
    td = _object_new(PyTreeDef)
    td._node = node
    td._num_leaves = num_leaves
    return td


def _flatten_up_to(node, xs):
    out = []
    try:
        _up_to(node, xs, out)
    except _MismatchError as e:
        msg = e.msg
        if e.path:
            msg += f" (at key path {keystr(tuple(reversed(e.path)))})"
        raise ValueError(msg) from None
    return out


class PyTreeDef:
    """The structure of a pytree (everything but its leaves).

    Immutable, hashable, comparable with ``==``; ``repr`` is JAX's
    (``PyTreeDef((*, {'a': *, 'b': [*, *]}))``).
    """

    __slots__ = ("_node", "_num_leaves", "_num_nodes", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("PyTreeDef objects are created by tree_flatten / tree_structure")

    # -- construction helpers -------------------------------------------------
    @staticmethod
    def _from_node(node):
        return _make_treedef(node, _count_leaves(node))

    @staticmethod
    def from_node_data_and_children(registry, node_data, children):
        """Build a treedef from ``node_data`` (``(type, aux)`` as returned by
        ``node_data()``) and a sequence of child treedefs.  ``registry`` is
        accepted for JAX compatibility and ignored."""
        del registry
        t, aux = node_data
        if t is dict:
            aux = tuple(aux)
        nodes = tuple(c._node for c in children)
        if t is _NoneType or t is tuple or t is list:
            aux = None
        node = (t, aux, nodes)
        return _make_treedef(node, sum(c._num_leaves for c in children))

    # -- properties ------------------------------------------------------------
    @property
    def num_leaves(self):
        return self._num_leaves

    @property
    def num_nodes(self):
        try:
            return self._num_nodes
        except AttributeError:
            n = _count_nodes(self._node)
            self._num_nodes = n
            return n

    def node_data(self):
        """``None`` for a leaf, else ``(node_type, aux_data)`` (dict keys as a list)."""
        node = self._node
        if node is None:
            return None
        t, aux, _ = node
        if t is dict:
            return (t, list(aux))
        return (t, aux)

    def children(self):
        """The child treedefs of the root node (``[]`` for a leaf)."""
        node = self._node
        if node is None:
            return []
        return [_make_treedef(c, _count_leaves(c)) for c in node[2]]

    # -- operations ----------------------------------------------------------
    def unflatten(self, leaves):
        """Rebuild a pytree of this structure from an iterable of leaves."""
        if type(leaves) is not list:
            leaves = list(leaves)
        n = self._num_leaves
        if len(leaves) != n:
            if len(leaves) < n:
                raise ValueError(
                    f"Too few leaves for PyTreeDef; expected {n}, got {len(leaves)}."
                )
            raise ValueError(f"Too many leaves for PyTreeDef; expected {n}, got {len(leaves)}.")
        return _build(self._node, iter(leaves).__next__)

    def flatten_up_to(self, xs):
        """Flatten ``xs`` only down to this treedef's leaves: returns the list of
        subtrees of ``xs`` found where this treedef has leaves.  ``xs`` must have
        this treedef as a structural prefix, else ValueError naming the mismatch
        and its key path."""
        return _flatten_up_to(self._node, xs)

    def compose(self, inner):
        """The treedef obtained by replacing each leaf of self with ``inner``."""
        return _make_treedef(_compose(self._node, inner._node), self._num_leaves * inner._num_leaves)

    def walk(self, f_node, f_leaf, leaves):
        """Post-order walk: leaves are mapped with ``f_leaf`` (identity if None);
        each node calls ``f_node(tuple_of_child_results, node_data)``."""
        nxt = iter(leaves).__next__

        def go(node):
            if node is None:
                leaf = nxt()
                return leaf if f_leaf is None else f_leaf(leaf)
            t, aux, ch = node
            res = tuple(go(c) for c in ch)
            return f_node(res, list(aux) if t is dict else aux)

        return go(self._node)

    # -- dunder ------------------------------------------------------------------
    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not PyTreeDef:
            return NotImplemented
        return self._num_leaves == other._num_leaves and self._node == other._node

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        # Not cached: hashing the node tuple is cheap next to the flatten that
        # produced it, and caching would cost a slot store on every flatten.
        try:
            return hash(self._node)
        except TypeError:  # some aux data is unhashable
            return hash(_strip_aux(self._node))

    def __repr__(self):
        return f"PyTreeDef({_node_str(self._node)})"

    __str__ = __repr__

    def __reduce__(self):
        return (PyTreeDef._from_node, (self._node,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def treedef_is_leaf(treedef):
    """True if ``treedef`` has a single node: a leaf, ``None`` or an empty
    container (JAX's definition; see ``treedef_is_strict_leaf``)."""
    return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef):
    """True only for the leaf treedef ``*``."""
    return treedef._node is None


def treedef_children(treedef):
    """The treedefs of the children of `treedef`'s root node, in order."""
    return treedef.children()


def treedef_tuple(treedefs):
    """The treedef of a tuple whose children have the given treedefs."""
    treedefs = tuple(treedefs)
    node = (tuple, None, tuple([t._node for t in treedefs]))
    return _make_treedef(node, sum([t._num_leaves for t in treedefs]))


def all_leaves(iterable, is_leaf=None):
    """True if every element of ``iterable`` is a leaf (``None`` is not)."""
    if is_leaf is None:
        for x in iterable:
            t = type(x)
            if (_dispatch.get(t) or _classify(t)) is not _K_LEAF:
                return False
        return True
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(leaves, items))


# --------------------------------------------------------------------------
# Mapping, reducing, transposing
# --------------------------------------------------------------------------


# Node types that stand for one array (typed PRNG key arrays, registered by
# `random`): transformations flatten them to their data, but `tree_map` hands
# them whole to its function, as JAX's key arrays are leaves.
_ARRAY_NODES = set()


def _register_array_node(nodetype):
    _ARRAY_NODES.add(nodetype)


def _is_array_node(x):
    return type(x) in _ARRAY_NODES


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` leafwise.  ``f(x, *ys)`` where ``x`` ranges over the leaves of
    ``tree`` and ``ys`` over the corresponding subtrees of each tree in
    ``rest`` (each must have ``tree``'s structure as a prefix, else ValueError).
    A typed key array is one leaf."""
    if _ARRAY_NODES:
        is_leaf = _is_array_node if is_leaf is None else \
            (lambda x, user=is_leaf: _is_array_node(x) or user(x))
    return _tree_map_data(f, tree, *rest, is_leaf=is_leaf)


def _tree_map_data(f, tree, *rest, is_leaf=None):
    """``tree_map`` over the leaves transformations see (a typed key array
    contributes its data)."""
    leaves = []
    node = _flat(tree, leaves.append) if is_leaf is None else _flat_is_leaf(tree, leaves, is_leaf)
    if not rest:
        return _build(node, iter([f(x) for x in leaves]).__next__)
    others = [_flatten_up_to(node, r) for r in rest]
    return _build(node, iter([f(*xs) for xs in zip(leaves, *others)]).__next__)


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """Like ``tree_map`` but calls ``f(key_path, x, *ys)``; a typed key array
    is one leaf."""
    out = []
    node = _flat_path(tree, (), out, *_keys_as_leaves(is_leaf, is_leaf_takes_path))
    if not rest:
        return _build(node, iter([f(p, x) for p, x in out]).__next__)
    others = [_flatten_up_to(node, r) for r in rest]
    return _build(node, iter([f(p, x, *ys) for (p, x), *ys in zip(out, *others)]).__next__)


class _NoInitializer:
    def __repr__(self):
        return "<no initializer>"


_NO_INITIALIZER = _NoInitializer()


def tree_reduce(function, tree, initializer=_NO_INITIALIZER, is_leaf=None):
    """``functools.reduce(function, tree_leaves(tree), [initializer])``."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation, tree, *, identity=_NO_INITIALIZER, is_leaf=None):
    """Reduces the leaves with an associative `operation` as a balanced tree
    of calls (the halves of the leaf list, split at ``len // 2``, reduced
    separately and then combined), so its depth is logarithmic. `identity`
    is the result for a tree without leaves (then required)."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_INITIALIZER:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def reduce(xs):
        if len(xs) == 1:
            return xs[0]
        mid = len(xs) // 2
        return operation(reduce(xs[:mid]), reduce(xs[mid:]))

    return reduce(leaves)


def is_tree_node(typ):
    """Whether instances of the type `typ` are pytree nodes (not leaves):
    tuples, lists, dicts, None, namedtuples and registered types."""
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node: expected a type, got {type(typ).__name__}")
    kind = _dispatch.get(typ)
    return (kind if kind is not None else _classify(typ)) is not _K_LEAF


def tree_all(tree, *, is_leaf=None):
    """``all(tree_leaves(tree))``."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turn a tree of structure ``outer`` of trees of structure ``inner`` into a
    tree of structure ``inner`` of trees of structure ``outer``.  If
    ``inner_treedef`` is None it is inferred from the first outer leaf."""
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not first:
            raise ValueError("tree_transpose: cannot infer inner_treedef of an empty outer tree")
        inner_treedef = tree_structure(first[0])
    flat, treedef = tree_flatten(pytree_to_transpose)
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    columns = [flat[j::inner_size] for j in range(inner_size)] if outer_size else None
    if columns is None:
        subtrees = [outer_treedef.unflatten([]) for _ in range(inner_size)]
    else:
        subtrees = [outer_treedef.unflatten(col) for col in columns]
    return inner_treedef.unflatten(subtrees)


def broadcast_prefix(prefix_tree, full_tree, is_leaf=None):
    """Leaves of ``prefix_tree`` each repeated once per leaf of the matching
    subtree of ``full_tree`` (``is_leaf`` applies to ``prefix_tree``).  Raises
    ValueError if ``prefix_tree`` is not a prefix of ``full_tree``."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = prefix_def.flatten_up_to(full_tree)
    result = []
    for x, sub in zip(prefix_leaves, subtrees):
        result.extend([x] * len(tree_leaves(sub)))
    return result


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """Broadcast ``prefix_tree`` to the structure of ``full_tree``."""
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree, is_leaf))


# --------------------------------------------------------------------------
# Prefix errors (for in_axes / out_axes style prefix trees)
# --------------------------------------------------------------------------


def prefix_errors(prefix_tree, full_tree, is_leaf=None):
    """All the ways ``prefix_tree`` fails to be a prefix of ``full_tree``.

    Returns a list of callables ``err(name) -> ValueError`` (``name`` is how
    the prefix tree is called in the message, e.g. ``"in_axes"``); an empty
    list means ``prefix_tree`` is a valid prefix.
    """
    return list(_prefix_error((), prefix_tree, full_tree, is_leaf))


def _prefix_error(key_path, prefix_tree, full_tree, is_leaf):
    if is_leaf is not None and is_leaf(prefix_tree):
        return
    t = type(prefix_tree)
    h = _dispatch.get(t) or _classify(t)
    if h is _K_LEAF:
        return
    ks = keystr(key_path)
    if type(full_tree) is not t:
        ft = type(full_tree)
        yield lambda name: ValueError(
            f"pytree structure error: different types at key path\n"
            f"    {name}{ks}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {t}\n"
            f"but at the same key path the full pytree has a subtree of different type\n"
            f"    {ft}."
        )
        return
    p_items, p_aux = _node_children_with_keys(prefix_tree, h)
    f_items, f_aux = _node_children_with_keys(full_tree, h)
    if h is _K_TUPLE or h is _K_LIST:
        if len(p_items) != len(f_items):
            np_, nf = len(p_items), len(f_items)
            yield lambda name: ValueError(
                f"pytree structure error: different lengths of {t.__name__} at key path\n"
                f"    {name}{ks}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type "
                f"{t.__name__} of length {np_}, but the full pytree has a subtree of the "
                f"same type but of length {nf}."
            )
            return
    elif len(p_items) != len(f_items):
        p_keys = [k for k, _ in p_items]
        f_keys = [k for k, _ in f_items]
        try:
            diff = set(p_keys).symmetric_difference(f_keys)
        except TypeError:
            diff = set()
        diff_str = " ".join(sorted(_simple_keystr(k) for k in diff))

        def err(name):
            msg = (
                f"pytree structure error: different numbers of pytree children at key path\n"
                f"    {name}{ks}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type\n"
                f"    {t}\n"
                f"with {len(p_keys)} child keys\n"
                f"    {' '.join(_simple_keystr(k) for k in p_keys)}\n"
                f"but at the same key path the full pytree has a subtree of the same "
                f"type but with {len(f_keys)} child keys\n"
                f"    {' '.join(_simple_keystr(k) for k in f_keys)}\n"
            )
            if diff_str:
                msg += f"so the symmetric difference on key sets is\n    {diff_str}\n"
            return ValueError(msg)

        yield err
        return
    if not (p_aux is f_aux or p_aux == f_aux):
        yield lambda name: ValueError(
            f"pytree structure error: different pytree metadata at key path\n"
            f"    {name}{ks}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {t}\n"
            f"with metadata\n"
            f"    {p_aux!r}\n"
            f"but at the same key path the full pytree has a subtree of the same "
            f"type but with different metadata\n"
            f"    {f_aux!r}"
        )
        return
    for (k, pc), (_, fc) in zip(p_items, f_items):
        yield from _prefix_error(key_path + (k,), pc, fc, is_leaf)


# --------------------------------------------------------------------------
# Built-in registrations: OrderedDict, defaultdict, Partial
# --------------------------------------------------------------------------


def _odict_flatten(d):
    return tuple(d.values()), tuple(d.keys())


def _odict_flatten_with_keys(d):
    return tuple((DictKey(k), v) for k, v in d.items()), tuple(d.keys())


def _odict_unflatten(keys, values):
    return collections.OrderedDict(zip(keys, values))


register_pytree_node(
    collections.OrderedDict, _odict_flatten, _odict_unflatten, _odict_flatten_with_keys
)


def _ddict_flatten(d):
    keys = tuple(sorted(d))
    return tuple([d[k] for k in keys]), (d.default_factory, keys)


def _ddict_flatten_with_keys(d):
    keys = tuple(sorted(d))
    return tuple([(DictKey(k), d[k]) for k in keys]), (d.default_factory, keys)


def _ddict_unflatten(aux, values):
    factory, keys = aux
    return collections.defaultdict(factory, zip(keys, values))


register_pytree_node(
    collections.defaultdict, _ddict_flatten, _ddict_unflatten, _ddict_flatten_with_keys
)


class _HashableCallableShim:
    """Wraps a ``functools.partial`` used as ``Partial.func``.

    ``functools.partial(p, ...)`` with ``p`` a partial merges ``p``'s arguments
    into the new object; ``Partial`` must not do that, because exactly its own
    arguments are its pytree leaves.  The shim hashes and compares like the
    wrapped partial so the func (aux data) is a stable jit cache key.
    """

    __slots__ = ("partial", "func", "args", "keywords")

    def __init__(self, partial):
        self.partial = partial

    def __call__(self, *args, **kwargs):
        return self.partial(*args, **kwargs)

    def __hash__(self):
        return hash(self.partial)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            return self.partial == other.partial
        return self.partial == other

    def __repr__(self):
        return repr(self.partial)


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its positional and keyword
    arguments are children (leaves), its ``func`` is static aux data.  So a
    ``Partial`` can be passed to and returned from ``jit``-compiled functions;
    ``func`` must be hashable (functions are)."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            original = func
            shim = _HashableCallableShim(original)
            out = super().__new__(cls, shim, *args, **kw)
            shim.func = original.func
            shim.args = original.args
            shim.keywords = original.keywords
            return out
        return super().__new__(cls, func, *args, **kw)


def _partial_flatten(p):
    return (p.args, p.keywords), p.func


def _partial_unflatten(func, children):
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)


# A key path entry is one of the key classes; a key path is a tuple of them
# (the types `tree_flatten_with_path` returns, for annotations).
KeyEntry = typing.TypeVar("KeyEntry", bound=typing.Any)
KeyPath = typing.Tuple[KeyEntry, ...]
