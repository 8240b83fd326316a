"""`jax.export`: custom pytree nodes in an exported function's arguments and
results, serialized through `register_pytree_node_serialization` /
`register_namedtuple_serialization`; `SymbolicScope` and `is_symbolic_dim`.
Messages and exception types as JAX 0.10.2's (recorded from it)."""
import collections

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import export


class Pair:
    def __init__(self, a, b, tag):
        self.a, self.b, self.tag = a, b, tag


jax.tree_util.register_pytree_node(Pair, lambda p: ((p.a, p.b), p.tag), lambda tag, ch: Pair(*ch, tag))


class Unserialized:
    def __init__(self, a):
        self.a = a


jax.tree_util.register_pytree_node(Unserialized, lambda p: ((p.a,), None), lambda _, ch: Unserialized(*ch))

Point = collections.namedtuple("Point", "x y")
Plain = collections.namedtuple("Plain", "v")


def _bump(p):
    return Pair(p.a * 2, p.b + 1, p.tag + "!")


def test_custom_node_round_trip():
    arg = Pair(jnp.ones(2), jnp.float32(1.0), "x")
    exp = export.export(jax.jit(_bump))(arg)
    # recorded from JAX 0.10.2: serialize() without a registration raises
    with pytest.raises(ValueError, match=r"Cannot serialize PyTreeDef containing an unregistered type "
                                         r"`<class '.*Pair'>`. Use `export.register_pytree_node_serialization` "
                                         r"or `export.register_namedtuple_serialization`."):
        exp.serialize()
    # the exported function itself works without one
    assert exp.call(arg).tag == "x!"
    assert export.register_pytree_node_serialization(
        Pair, serialized_name="tests.Pair", serialize_auxdata=lambda tag: tag.encode(),
        deserialize_auxdata=lambda data: data.decode()) is Pair
    back = export.deserialize(exp.serialize())
    assert back.in_tree == exp.in_tree and back.out_tree == exp.out_tree
    out = back.call(arg)
    assert type(out) is Pair and out.tag == "x!"
    np.testing.assert_array_equal(out.a, [2.0, 2.0])
    assert float(out.b) == 2.0
    # also under jit and grad
    np.testing.assert_array_equal(jax.jit(lambda p: back.call(p).a)(arg), [2.0, 2.0])
    g = jax.grad(lambda b: back.call(Pair(jnp.ones(2), b, "x")).b)(jnp.float32(1.0))
    assert float(g) == 1.0


def test_duplicate_registrations_as_jax():
    class Twice:
        pass
    jax.tree_util.register_pytree_node(Twice, lambda t: ((), None), lambda _, ch: Twice())
    export.register_pytree_node_serialization(Twice, serialized_name="tests.Twice",
                                              serialize_auxdata=lambda _: b"", deserialize_auxdata=lambda _: None)
    with pytest.raises(ValueError, match=r"Duplicate serialization registration for type `<class '.*Twice'>`. "
                                         r"Previous registration was with serialized_name `tests.Twice`."):
        export.register_pytree_node_serialization(Twice, serialized_name="tests.Twice2",
                                                  serialize_auxdata=lambda _: b"", deserialize_auxdata=lambda _: None)

    class Other:
        pass
    jax.tree_util.register_pytree_node(Other, lambda t: ((), None), lambda _, ch: Other())
    with pytest.raises(ValueError, match=r"Duplicate serialization registration for serialized_name "
                                         r"`tests.Twice`. Previous registration was for type"):
        export.register_pytree_node_serialization(Other, serialized_name="tests.Twice",
                                                  serialize_auxdata=lambda _: b"", deserialize_auxdata=lambda _: None)


def test_unregistered_pytree_type_needs_from_children():
    class Loose:
        pass
    with pytest.raises(ValueError, match="If `from_children` is not present, you must call first"):
        export.register_pytree_node_serialization(Loose, serialized_name="tests.Loose",
                                                  serialize_auxdata=lambda _: b"", deserialize_auxdata=lambda _: None)


def test_from_children_builds_the_node():
    class Box:
        def __init__(self, v):
            self.v = v
    jax.tree_util.register_pytree_node(Box, lambda b: ((b.v,), None), lambda _, ch: Box(*ch))
    built = []

    def from_children(aux, children):
        built.append(aux)
        return Box(*children)
    export.register_pytree_node_serialization(Box, serialized_name="tests.Box", serialize_auxdata=lambda _: b"aux",
                                              deserialize_auxdata=lambda data: data.decode(),
                                              from_children=from_children)
    exp = export.deserialize(export.export(jax.jit(lambda b: Box(b.v + 1)))(Box(jnp.ones(1))).serialize())
    assert "aux" in built
    out = exp.call(Box(jnp.ones(1)))
    assert type(out) is Box
    np.testing.assert_array_equal(out.v, [2.0])


def test_namedtuple_round_trip():
    exp = export.export(jax.jit(lambda p: Point(p.y, p.x)))(Point(jnp.float32(1.0), jnp.ones(2)))
    with pytest.raises(ValueError, match=r"unregistered type `<class '.*Point'>`"):
        exp.serialize()
    assert export.register_namedtuple_serialization(Point, serialized_name="tests.Point") is Point
    out = export.deserialize(exp.serialize()).call(Point(jnp.float32(1.0), jnp.ones(2)))
    # recorded from JAX 0.10.2: Point(x=Array([1., 1.]), y=Array(1.))
    assert type(out) is Point
    np.testing.assert_array_equal(out.x, [1.0, 1.0])
    assert float(out.y) == 1.0
    with pytest.raises(ValueError, match="Use `jax.export.register_pytree_node_serialization` for types other "
                                         "than `collections.namedtuple`."):
        export.register_namedtuple_serialization(Pair, serialized_name="tests.NotANamedtuple")


def test_nested_nodes_and_unregistered_results():
    export.register_namedtuple_serialization(Plain, serialized_name="tests.Plain")
    exp = export.export(jax.jit(lambda d: {"p": [Plain(d["v"] * 3)], "none": None}))({"v": jnp.ones(2)})
    out = export.deserialize(exp.serialize()).call({"v": jnp.ones(2)})
    assert out["none"] is None and type(out["p"][0]) is Plain
    np.testing.assert_array_equal(out["p"][0].v, [3.0, 3.0])
    bad = export.export(jax.jit(lambda x: Unserialized(x)))(jnp.ones(1))
    with pytest.raises(ValueError, match="unregistered type"):
        bad.serialize()


# ---------------------------------------------------------------- symbolic dimensions


def test_is_symbolic_dim():
    (a,) = export.symbolic_shape("a")
    # recorded from JAX 0.10.2: True False False False
    assert export.is_symbolic_dim(a)
    assert not export.is_symbolic_dim(3)
    assert not export.is_symbolic_dim(np.int32(3))
    assert not export.is_symbolic_dim("a")


def test_symbolic_scope():
    scope = export.SymbolicScope(["a >= 2", "b <= 2*a + 1"])
    dims = export.symbolic_shape("a, b, 3", scope=scope)
    assert dims[2] == 3 and dims[0].scope is scope and dims[1].scope is scope
    text = str(scope)
    assert text.startswith(f"{id(scope)} created at ") and "test_export_pytree_serialization.py" in text
    assert text.endswith(" with constraints:\n  a >= 2\n  b <= 2*a + 1")
    assert "with constraints" not in str(export.SymbolicScope())
    # a shape without a scope gets a new one holding its constraints
    (c,) = export.symbolic_shape("c", constraints=["c >= 1"])
    assert c.scope is not scope and c.scope._explicit_constraints == ("c >= 1",)
    specs = export.symbolic_args_specs((np.zeros((2, 3)), np.zeros((4,))), ("n, 3", "n"), constraints=["n >= 1"])
    assert specs[0].shape[0].scope is specs[1].shape[0].scope


def test_symbolic_scope_errors_as_jax():
    with pytest.raises(ValueError, match="Cannot specify both a `scope` and `constraints`."):
        export.symbolic_shape("a", scope=export.SymbolicScope(), constraints=["a >= 1"])
    with pytest.raises(ValueError, match="The symbolic constraints should be a sequence of strings. Got 'a >= 2'"):
        export.SymbolicScope("a >= 2")
    with pytest.raises(ValueError, match="syntax error in symbolic constraint"):
        export.SymbolicScope(["a >== 2"])
    with pytest.raises(ValueError, match="syntax error in symbolic constraint"):
        export.SymbolicScope(["a"])
