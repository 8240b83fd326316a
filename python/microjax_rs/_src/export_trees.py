"""The pytree structures of an exported function's arguments and results, as
`Exported.serialize()` writes them (JSON) and `deserialize` reads them.

Standard containers (tuple, list, dict with string keys, None) serialize as
they are. Any other node type needs a registration: `
register_pytree_node_serialization(nodetype, serialized_name=...,
serialize_auxdata=..., deserialize_auxdata=..., from_children=...)` or, for a
`collections.namedtuple`, `register_namedtuple_serialization(nodetype,
serialized_name=...)` (JAX's `jax.export` functions). Such a node is written
as its `serialized_name`, its auxiliary data as the bytes
`serialize_auxdata` gives (base64) and its children; reading it back calls
`deserialize_auxdata` and builds the node with `from_children(aux, children)`
(default: the unflatten function of its pytree registration), then takes the
structure of the result.
"""
import base64

from ..tree_util import _registry, tree_flatten

# type -> (serialized_name, serialize_auxdata); serialized_name -> (type, deserialize_auxdata, from_children)
_by_type = {}
_by_name = {}


def _register(nodetype, serialized_name, serialize_auxdata, deserialize_auxdata, from_children):
    if nodetype in _by_type:
        raise ValueError(f"Duplicate serialization registration for type `{nodetype}`. Previous registration "
                         f"was with serialized_name `{_by_type[nodetype][0]}`.")
    if serialized_name in _by_name:
        raise ValueError(f"Duplicate serialization registration for serialized_name `{serialized_name}`. "
                         f"Previous registration was for type `{_by_name[serialized_name][0]}`.")
    _by_type[nodetype] = (serialized_name, serialize_auxdata)
    _by_name[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_pytree_node_serialization(nodetype, *, serialized_name, serialize_auxdata, deserialize_auxdata,
                                       from_children=None):
    """Registers how a custom pytree node type is written by
    `Exported.serialize()` and read back by `deserialize` (JAX's
    `jax.export.register_pytree_node_serialization`): `serialize_auxdata(aux)
    -> bytes`, `deserialize_auxdata(bytes) -> aux`, and optionally
    `from_children(aux, children) -> node` (by default the node type's pytree
    registration builds it, so the type must be registered first). Returns
    `nodetype`; a type or a name registered twice raises ValueError."""
    if from_children is None:
        entry = _registry.get(nodetype)
        if entry is None:
            raise ValueError(f"If `from_children` is not present, you must call first"
                             f"`jax.tree_util.register_pytree_node` for `{nodetype}`")
        unflatten = entry.unflatten

        def from_children(aux, children):
            return unflatten(aux, tuple(children))
    return _register(nodetype, str(serialized_name), serialize_auxdata, deserialize_auxdata, from_children)


def register_namedtuple_serialization(nodetype, *, serialized_name):
    """Registers a `collections.namedtuple` type for `Exported.serialize()`
    (JAX's `jax.export.register_namedtuple_serialization`): it is written as
    `serialized_name` and its fields. Returns `nodetype`; ValueError for a
    type that is not a namedtuple."""
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")):
        raise ValueError("Use `jax.export.register_pytree_node_serialization` for types other than "
                         "`collections.namedtuple`.")
    return _register(nodetype, str(serialized_name), lambda aux: b"", lambda data: None,
                     lambda aux, children: nodetype(*children))


def encode_tree(treedef):
    """A JSON-able description of `treedef`; ValueError (JAX's message) for a
    node type without a serialization registration."""
    node = treedef.node_data()
    if node is None:
        return "*"
    t, aux = node
    children = [encode_tree(c) for c in treedef.children()]
    if t is type(None):
        return None
    if t is tuple:
        return {"t": children}
    if t is list:
        return {"l": children}
    if t is dict:
        if not all(isinstance(k, str) for k in aux):
            raise ValueError("export: dict keys of arguments and results must be strings")
        return {"d": [[k, c] for k, c in zip(aux, children)]}
    registration = _by_type.get(t)
    if registration is None:
        raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type `{t}`. Use "
                         f"`export.register_pytree_node_serialization` or "
                         f"`export.register_namedtuple_serialization`.")
    name, serialize_auxdata = registration
    data = serialize_auxdata(aux)
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"serialize_auxdata for `{t}` must return bytes, got {type(data)}")
    return {"c": name, "a": base64.b64encode(bytes(data)).decode("ascii"), "ch": children}


def decode_tree(desc):
    """The treedef that `encode_tree` described."""

    def build(d):
        if d == "*":
            return 0
        if d is None:
            return None
        if isinstance(d, dict) and "c" in d:
            name = d["c"]
            if name not in _by_name:
                raise ValueError(f"Cannot deserialize PyTreeDef with an unregistered serialized_name "
                                 f"`{name}`: register its type with `export.register_pytree_node_serialization` "
                                 f"or `export.register_namedtuple_serialization`.")
            _, deserialize_auxdata, from_children = _by_name[name]
            aux = deserialize_auxdata(base64.b64decode(d["a"]))
            return from_children(aux, [build(c) for c in d["ch"]])
        if isinstance(d, dict) and len(d) == 1:
            (tag, items), = d.items()
            if tag == "t":
                return tuple(build(c) for c in items)
            if tag == "l":
                return [build(c) for c in items]
            if tag == "d":
                return {k: build(v) for k, v in items}
        raise ValueError(f"export: malformed pytree description {d!r}")

    return tree_flatten(build(desc))[1]
