"""Tests for microjax_rs.tree_util and microjax_rs.tree (pytrees).

Runs without the compiled extension: if ``import microjax_rs`` fails, the two
modules are loaded from their files under a stand-in package.
"""

import collections
import copy
import dataclasses
import functools
import pickle
import re
import sys
import types

import pytest

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

try:
    from microjax_rs import tree, tree_util
except Exception:  # extension not built yet
    import importlib
    import pathlib

    _dir = pathlib.Path(__file__).resolve().parents[1] / "python" / "microjax_rs"
    _pkg = types.ModuleType("_mjx_pytree_standalone")
    _pkg.__path__ = [str(_dir)]  # submodules resolve here; __init__.py is not run
    sys.modules[_pkg.__name__] = _pkg
    tree_util = importlib.import_module(_pkg.__name__ + ".tree_util")
    tree = importlib.import_module(_pkg.__name__ + ".tree")

tu = tree_util
SequenceKey = tu.SequenceKey
DictKey = tu.DictKey
GetAttrKey = tu.GetAttrKey
FlattenedIndexKey = tu.FlattenedIndexKey


# ----------------------------------------------------------------------------
# Fixtures: node types defined at module level (so treedefs pickle)
# ----------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])
Point2 = collections.namedtuple("Point2", ["x", "y"])


class PointSub(Point):
    pass


class Box:
    """Custom node registered without keys: children (a, b), aux ``tag``."""

    def __init__(self, a, b, tag):
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other):
        return type(other) is Box and (self.a, self.b, self.tag) == (other.a, other.b, other.tag)

    def __repr__(self):
        return f"Box({self.a!r}, {self.b!r}, {self.tag!r})"


tu.register_pytree_node(Box, lambda o: ((o.a, o.b), o.tag), lambda tag, ch: Box(ch[0], ch[1], tag))


class KeyedBox(Box):
    """Registered with keys."""

    def __eq__(self, other):
        return type(other) is KeyedBox and (self.a, self.b, self.tag) == (other.a, other.b, other.tag)


tu.register_pytree_with_keys(
    KeyedBox,
    lambda o: (((GetAttrKey("a"), o.a), ("bee", o.b)), o.tag),
    lambda tag, ch: KeyedBox(ch[0], ch[1], tag),
)


@tu.register_pytree_node_class
class Special:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def tree_flatten(self):
        return (self.x, self.y), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __eq__(self, other):
        return type(other) is type(self) and (self.x, self.y) == (other.x, other.y)

    def __repr__(self):  # a stable test id (pytest-xdist workers must collect the same names)
        return f"{type(self).__name__}({self.x!r}, {self.y!r})"


@tu.register_pytree_with_keys_class
class SpecialKeys(Special):
    def tree_flatten_with_keys(self):
        return ((GetAttrKey("x"), self.x), (GetAttrKey("y"), self.y)), "meta"

    def tree_flatten(self):
        return (self.x, self.y), "meta"


@tu.register_dataclass
@dataclasses.dataclass
class DC:
    x: object
    y: object
    n: int = dataclasses.field(default=3, metadata={"static": True})


@functools.partial(tu.register_dataclass, data_fields=["w"], meta_fields=["name"])
@dataclasses.dataclass(frozen=True)
class Layer:
    w: object
    name: str


@tu.register_static
class StaticThing:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return type(other) is StaticThing and self.v == other.v

    def __hash__(self):
        return hash(("StaticThing", self.v))

    def __repr__(self):
        return f"StaticThing({self.v})"


class Opaque:
    """An unregistered class: a leaf."""


class BadNonTuple:
    pass


tu.register_pytree_node(BadNonTuple, lambda o: "hello", lambda a, c: BadNonTuple())


class BadNonIterable:
    pass


tu.register_pytree_node(BadNonIterable, lambda o: (7, 7), lambda a, c: BadNonIterable())


def _add3(a, b, c):
    return a + 10 * b + 100 * c


TREES = [
    None,
    (),
    [],
    {},
    1,
    (1, 2),
    (None,),
    [()],
    ((1, "foo"), ["bar", (3, None, 7)]),
    {"b": 2, "a": [1, (3, 4)], "c": None},
    [3, Point(x=(3, Point(x=3, y=None)), y={"baz": 34})],
    Box(1, [2, 3], "t"),
    KeyedBox({"k": 1}, 2, "t"),
    Special(2, 3.0),
    SpecialKeys(1, (2,)),
    DC(x=[1, 2], y={"a": 3}, n=4),
    Layer(w=(1, 2), name="dense"),
    StaticThing(5),
    collections.OrderedDict([("foo", 34), ("baz", 101), ("something", -42)]),
    collections.defaultdict(list, {"b": 2, "a": 1}),
    PointSub(x=1, y=2),
]


# ----------------------------------------------------------------------------
# flatten / unflatten / structure
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("t", TREES, ids=repr)
def test_roundtrip(t):
    leaves, td = tu.tree_flatten(t)
    back = tu.tree_unflatten(td, leaves)
    assert back == t
    assert type(back) is type(t)
    assert td.num_leaves == len(leaves)
    assert tu.tree_leaves(t) == leaves
    assert tu.tree_structure(t) == td
    assert hash(tu.tree_structure(t)) == hash(td)


@pytest.mark.parametrize("t", TREES, ids=repr)
def test_roundtrip_flatten_up_to_and_pickle(t):
    leaves, td = tu.tree_flatten(t)
    assert td.flatten_up_to(t) == leaves
    td2 = pickle.loads(pickle.dumps(td))
    assert td2 == td and hash(td2) == hash(td)
    assert td2.unflatten(leaves) == t
    assert copy.deepcopy(td) == td


def test_flatten_order_and_leaves():
    leaves, _ = tu.tree_flatten([0, ((1, 2), 3, (4, (5, 6, 7))), 8, 9])
    assert leaves == list(range(10))
    leaves, td = tu.tree_flatten({"b": 2, "a": 1, "c": {"b": 4, "a": 3}})
    assert leaves == [1, 2, 3, 4]
    assert str(td) == "PyTreeDef({'a': *, 'b': *, 'c': {'a': *, 'b': *}})"


def test_dict_unflatten_sorted_keys():
    d = {"b": 2, "a": 1, "c": {"z": 0, "y": 1}}
    leaves, td = tu.tree_flatten(d)
    back = tu.tree_unflatten(td, leaves)
    assert list(back) == ["a", "b", "c"]
    assert list(back["c"]) == ["y", "z"]
    # tree_map too returns sorted-key dicts
    assert list(tu.tree_map(lambda x: x, d)) == ["a", "b", "c"]


def test_unsortable_dict_keys():
    # JAX 0.10.2: ValueError, the comparison's TypeError as its cause
    with pytest.raises(ValueError, match="sorting pytree dictionary keys") as info:
        tu.tree_flatten({"a": 1, 2: "b"})
    assert isinstance(info.value.__cause__, TypeError)
    assert "'<' not supported" in str(info.value.__cause__)


def test_none_is_empty_node():
    assert tu.tree_leaves(None) == []
    assert tu.tree_leaves([None, 1, (None,)]) == [1]
    td = tu.tree_structure(None)
    assert td.num_leaves == 0 and td.num_nodes == 1
    assert str(td) == "PyTreeDef(None)"
    assert tu.tree_unflatten(td, []) is None
    assert tu.treedef_is_leaf(td) and not tu.treedef_is_strict_leaf(td)
    # tree_map skips None
    assert tu.tree_map(lambda x: x + 1, {"a": None, "b": 1}) == {"a": None, "b": 2}
    # is_leaf can make None a leaf
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tu.tree_map(lambda x: 0 if x is None else x, [None, 1], is_leaf=lambda x: x is None) == [0, 1]


def test_leaf_types():
    o = Opaque()
    for leaf in [1, 2.5, "s", b"b", o, 3 + 1j, object]:
        leaves, td = tu.tree_flatten(leaf)
        assert leaves == [leaf]
        assert str(td) == "PyTreeDef(*)"
        assert tu.treedef_is_strict_leaf(td) and tu.treedef_is_leaf(td)
        assert td.num_nodes == 1
        assert tu.tree_unflatten(td, [7]) == 7
    # exact-type dispatch: subclasses of builtin containers are leaves
    class MyDict(dict):
        pass

    class MyList(list):
        pass

    class MyTuple(tuple):  # a tuple subclass without _fields is not a namedtuple
        pass

    for v in [MyDict(a=1), MyList([1, 2]), MyTuple((1, 2))]:
        assert tu.tree_leaves(v) == [v]


def test_namedtuple():
    p = Point(1, (2, 3))
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    assert str(td) == "PyTreeDef(CustomNode(namedtuple[Point], [*, (*, *)]))"
    back = tu.tree_unflatten(td, [4, 5, 6])
    assert type(back) is Point and back == Point(4, (5, 6))
    # namedtuple types are part of the structure
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Point2(1, 2))
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))
    # a subclass of a namedtuple is a namedtuple node of its own type
    sub = tu.tree_map(lambda v: v * 2, PointSub(1, 2))
    assert type(sub) is PointSub and sub == (2, 4)


def test_ordered_dict_keeps_insertion_order():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, td = tu.tree_flatten(od)
    assert leaves == [1, 2]
    assert str(td) == "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"
    back = tu.tree_unflatten(td, [10, 20])
    assert type(back) is collections.OrderedDict
    assert list(back.items()) == [("b", 10), ("a", 20)]
    # key order is structure
    assert td != tu.tree_structure(collections.OrderedDict([("a", 1), ("b", 2)]))
    assert td != tu.tree_structure({"b": 1, "a": 2})


def test_defaultdict_keeps_factory():
    dd = collections.defaultdict(list, {"b": 2, "a": 1})
    leaves, td = tu.tree_flatten(dd)
    assert leaves == [1, 2]
    assert str(td) == "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"
    back = tu.tree_map(lambda v: v + 1, dd)
    assert type(back) is collections.defaultdict
    assert back.default_factory is list
    assert list(back.items()) == [("a", 2), ("b", 3)]
    assert back["missing"] == []
    assert td != tu.tree_structure(collections.defaultdict(int, {"b": 2, "a": 1}))


def test_custom_nodes():
    b = Box(1, [2, 3], "tag")
    leaves, td = tu.tree_flatten(b)
    assert leaves == [1, 2, 3]
    assert str(td) == "PyTreeDef(CustomNode(Box[tag], [*, [*, *]]))"
    assert tu.tree_unflatten(td, [4, 5, 6]) == Box(4, [5, 6], "tag")
    # aux data is part of the structure
    assert td != tu.tree_structure(Box(1, [2, 3], "other"))
    assert td == tu.tree_structure(Box(9, [8, 7], "tag"))
    s = Special(1, {"a": 2})
    assert tu.tree_leaves(s) == [1, 2]
    assert str(tu.tree_structure(s)) == "PyTreeDef(CustomNode(Special[None], [*, {'a': *}]))"
    assert tu.tree_map(lambda v: -v, s) == Special(-1, {"a": -2})


def test_register_duplicate_and_builtin():
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        tu.register_pytree_node(Box, lambda o: ((), None), lambda a, c: None)
    for t in (tuple, list, dict, type(None)):
        with pytest.raises(ValueError, match="Duplicate"):
            tu.register_pytree_node(t, lambda o: ((), None), lambda a, c: None)
    with pytest.raises(TypeError):
        tu.register_pytree_node("not a type", lambda o: ((), None), lambda a, c: None)


def test_register_after_seen_as_leaf():
    class Late:
        def __init__(self, v):
            self.v = v

    x = Late(3)
    assert tu.tree_leaves([x]) == [x]  # cached as a leaf type
    tu.register_pytree_node(Late, lambda o: ((o.v,), None), lambda a, c: Late(c[0]))
    assert tu.tree_leaves([x]) == [3]
    assert tu.tree_map(lambda v: v + 1, x).v == 4


def test_bad_flatten_functions():
    with pytest.raises(ValueError, match=r"should return a \(children, aux_data\) tuple, got 'hello'"):
        tu.tree_flatten(BadNonTuple())
    with pytest.raises(ValueError, match=r"where 'children' is iterable, got \(7, 7\)"):
        tu.tree_flatten([BadNonIterable()])
    with pytest.raises(ValueError, match="should return"):
        tu.tree_leaves(BadNonTuple())


def test_register_static():
    s = StaticThing(5)
    leaves, td = tu.tree_flatten([1, s])
    assert leaves == [1]
    assert str(td) == "PyTreeDef([*, CustomNode(StaticThing[StaticThing(5)], [])])"
    back = tu.tree_unflatten(td, [2])
    assert back[1] is s
    assert td != tu.tree_structure([1, StaticThing(6)])
    assert hash(td) == hash(tu.tree_structure([0, StaticThing(5)]))


# ----------------------------------------------------------------------------
# dataclasses
# ----------------------------------------------------------------------------


def test_dataclass_inferred_fields():
    d = DC(x=[1, 2], y={"a": 3}, n=7)
    leaves, td = tu.tree_flatten(d)
    assert leaves == [1, 2, 3]
    assert str(td) == "PyTreeDef(CustomNode(DC[(7,)], [[*, *], {'a': *}]))"
    back = tu.tree_unflatten(td, [4, 5, 6])
    assert back == DC(x=[4, 5], y={"a": 6}, n=7)
    assert td != tu.tree_structure(DC(x=[1, 2], y={"a": 3}, n=8))
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(d)[0]]
    assert paths == [".x[0]", ".x[1]", ".y['a']"]


def test_dataclass_explicit_fields_decorator_forms():
    lay = Layer(w=(1, 2), name="dense")
    assert tu.tree_leaves(lay) == [1, 2]
    assert str(tu.tree_structure(lay)) == "PyTreeDef(CustomNode(Layer[('dense',)], [(*, *)]))"
    assert tu.tree_map(lambda v: v * 10, lay) == Layer(w=(10, 20), name="dense")

    @tu.register_dataclass(data_fields=["a"], meta_fields=[])
    @dataclasses.dataclass
    class One:
        a: object

    assert tu.tree_leaves(One(a=[1, 2])) == [1, 2]
    assert str(tu.tree_structure(One(a=1))) == "PyTreeDef(CustomNode(One[()], [*]))"


def test_dataclass_plain_class_and_init_false():
    class Plain:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_dataclass(Plain, data_fields=["a"], meta_fields=["b"])
    p = tu.tree_map(lambda v: v + 1, Plain(1, "m"))
    assert (p.a, p.b) == (2, "m")

    @tu.register_dataclass
    @dataclasses.dataclass
    class WithDerived:
        x: int
        z: int = dataclasses.field(init=False, default=0)

        def __post_init__(self):
            self.z = 2 * self.x

    w = tu.tree_map(lambda v: v + 1, WithDerived(1))
    assert (w.x, w.z) == (2, 4)


def test_dataclass_errors():
    class NotDC:
        x: int

    with pytest.raises(TypeError, match="data_fields and meta_fields are required when nodetype is not a dataclass"):
        tu.register_dataclass(NotDC)
    with pytest.raises(TypeError, match=r"must both be specified when either is specified. Got data_fields=\['x'\] meta_fields=None"):
        tu.register_dataclass(NotDC, data_fields=["x"])

    @dataclasses.dataclass
    class Foo:
        x: int
        y: int

    with pytest.raises(ValueError, match=r"must include all dataclass fields.*Missing fields: \{'y'\}"):
        tu.register_dataclass(Foo, data_fields=["x"], meta_fields=[])
    with pytest.raises(ValueError, match=r"Unexpected fields: \{'z'\}"):
        tu.register_dataclass(Foo, data_fields=["x"], meta_fields=["y", "z"])
    tu.register_dataclass(Foo, data_fields=["x"], meta_fields=[], drop_fields=["y"])
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_dataclass(Foo, data_fields=["x", "y"], meta_fields=[])


# ----------------------------------------------------------------------------
# is_leaf
# ----------------------------------------------------------------------------


def test_is_leaf_every_level():
    x = [(1, 2), (3, 4), (5, 6)]
    assert tu.tree_leaves(x, is_leaf=lambda t: False) == [1, 2, 3, 4, 5, 6]
    assert tu.tree_leaves(x, is_leaf=lambda t: isinstance(t, tuple)) == x
    assert tu.tree_leaves(x, is_leaf=lambda t: isinstance(t, list)) == [x]
    assert tu.tree_leaves(x, is_leaf=lambda t: True) == [x]
    y = [[[(1,)], [[(2,)], {"a": (3,)}]]]
    leaves, td = tu.tree_flatten(y, is_leaf=lambda t: isinstance(t, tuple))
    assert leaves == [(1,), (2,), (3,)]
    assert td.num_leaves == 3
    assert tu.tree_unflatten(td, leaves) == y
    # inside custom nodes and namedtuples too
    z = Box(Point(1, 2), {"k": (3, 4)}, "t")
    assert tu.tree_leaves(z, is_leaf=lambda t: isinstance(t, tuple)) == [Point(1, 2), (3, 4)]
    assert tu.tree_structure(z, is_leaf=lambda t: isinstance(t, tuple)).num_leaves == 2


@pytest.mark.parametrize("t", TREES, ids=repr)
def test_roundtrip_is_leaf(t):
    leaves, td = tu.tree_flatten(t, is_leaf=lambda v: isinstance(v, tuple))
    assert tu.tree_unflatten(td, leaves) == t


# ----------------------------------------------------------------------------
# PyTreeDef
# ----------------------------------------------------------------------------


def test_treedef_repr():
    td = tu.tree_structure((1, {"a": 2, "b": [3, 4]}))
    assert repr(td) == "PyTreeDef((*, {'a': *, 'b': [*, *]}))"
    assert str(td) == repr(td)
    assert str(tu.tree_structure({})) == "PyTreeDef({})"
    assert str(tu.tree_structure((None,))) == "PyTreeDef((None,))"
    assert str(tu.tree_structure([()])) == "PyTreeDef([()])"
    assert str(tu.tree_structure(((1, "foo"), ["bar", (3, None, 7)]))) == (
        "PyTreeDef(((*, *), [*, (*, None, *)]))"
    )
    assert str(tu.tree_structure([3, Point(x=(3, Point(x=3, y=None)), y={"baz": 34})])) == (
        "PyTreeDef([*, CustomNode(namedtuple[Point], [(*, CustomNode(namedtuple[Point], "
        "[*, None])), {'baz': *}])])"
    )
    assert str(tu.tree_structure(SpecialKeys(1, 2))) == "PyTreeDef(CustomNode(SpecialKeys[meta], [*, *]))"


def test_treedef_equality_and_hash():
    a = tu.tree_structure((1, [2, 3], {"x": 4}))
    b = tu.tree_structure(("p", ["q", "r"], {"x": "s"}))
    assert a == b and not (a != b) and hash(a) == hash(b)
    assert {a: 1}[b] == 1
    for other in [
        (1, (2, 3), {"x": 4}),  # list vs tuple
        (1, [2, 3], {"y": 4}),  # dict keys
        (1, [2, 3, 5], {"x": 4}),  # arity
        (1, [2, None], {"x": 4}),  # None vs leaf
        [1, [2, 3], {"x": 4}],
    ]:
        assert a != tu.tree_structure(other)
    assert a != "PyTreeDef((*, [*, *], {'x': *}))"
    assert tu.tree_structure([1, (2,)]) != tu.tree_structure([[1], (2,)])


def test_treedef_unhashable_aux():
    class Holder:
        def __init__(self, v, meta):
            self.v, self.meta = v, meta

    tu.register_pytree_node(Holder, lambda o: ((o.v,), o.meta), lambda m, c: Holder(c[0], m))
    t1 = tu.tree_structure(Holder(1, [1, 2]))  # a list as aux data: unhashable
    t2 = tu.tree_structure(Holder(5, [1, 2]))
    t3 = tu.tree_structure(Holder(5, [1, 3]))
    assert t1 == t2 and hash(t1) == hash(t2)
    assert t1 != t3
    assert isinstance(hash(t3), int)


def test_treedef_properties_children_node_data():
    td = tu.tree_structure(((1, 2, 3), (4,), None))
    assert td.num_leaves == 4
    assert td.num_nodes == 8  # root, 2 tuples, 4 leaves, None
    c0, c1, c2 = td.children()
    assert c0 == tu.tree_structure((0, 0, 0))
    assert c1 == tu.tree_structure((7,))
    assert c2 == tu.tree_structure(None)
    assert tu.treedef_children(td) == td.children()
    assert tu.tree_structure(1).children() == []
    assert td.node_data() == (tuple, None)
    assert tu.tree_structure({"b": 1, "a": 2}).node_data() == (dict, ["a", "b"])
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure(Box(1, 2, "t")).node_data() == (Box, "t")


def test_treedef_tuple():
    t = ((1, 2, (3, 4)), (5,))
    leaves, td1 = tu.tree_flatten(t)
    td2 = tu.treedef_tuple(td1.children())
    assert td2 == td1
    assert td2.num_leaves == len(leaves) and td2.num_nodes == td1.num_nodes
    assert tu.tree_structure((3,)) == tu.treedef_tuple((tu.tree_structure(3),))
    assert tu.treedef_tuple([]) == tu.tree_structure(())
    assert tu.treedef_tuple([tu.tree_structure([1, 2]), tu.tree_structure(None)]).unflatten("ab") == (["a", "b"], None)


def test_treedef_from_node_data_and_children():
    td = tu.tree_structure({"a": [1, 2], "b": 3})
    rebuilt = tu.PyTreeDef.from_node_data_and_children(tu.default_registry, td.node_data(), td.children())
    assert rebuilt == td


def test_unflatten_wrong_number_of_leaves():
    td = tu.tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 3, got 2"):
        td.unflatten([1, 2])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 3, got 4"):
        tu.tree_unflatten(td, [1, 2, 3, 4])
    # any iterable works
    assert td.unflatten(iter([7, 8, 9])) == (7, [8, 9])
    assert td.unflatten(x for x in "abc") == ("a", ["b", "c"])


def test_treedef_constructor_is_private():
    with pytest.raises(TypeError):
        tu.PyTreeDef()


def test_compose():
    outer = tu.tree_structure((1, [2]))
    inner = tu.tree_structure({"a": 1, "b": 2})
    c = outer.compose(inner)
    assert c == tu.tree_structure(({"a": 0, "b": 0}, [{"a": 0, "b": 0}]))
    assert c.num_leaves == 4
    assert c.num_nodes == (outer.num_nodes - outer.num_leaves) + inner.num_nodes * outer.num_leaves


def test_walk():
    d = {"b": 2, "a": 1, "c": {"b": 2, "a": 1}}
    leaves, td = tu.tree_flatten(d)
    nodes, datas, seen = [], [], []

    def f_node(children, data):
        nodes.append(children)
        datas.append(data)
        return sum(children)

    def f_leaf(x):
        seen.append(x)
        return 10 * x

    assert td.walk(f_node, f_leaf, leaves) == 60
    assert seen == [1, 2, 1, 2]
    assert nodes == [(10, 20), (10, 20, 30)]
    assert datas == [["a", "b"], ["a", "b", "c"]]


# ----------------------------------------------------------------------------
# flatten_up_to
# ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "t, xs, expected",
    [
        ([(1, 2), None, Point(x=3, y=7)], [({"foo": 7}, (3, 4)), None, Point(x=(11, 9), y=None)],
         [{"foo": 7}, (3, 4), (11, 9), None]),
        ([1], [{"a": 7}], [{"a": 7}]),
        ((1, 2), ({"a": 7}, {"a": 8}), [{"a": 7}, {"a": 8}]),
        ({"a": 1, "b": (2, 3)}, {"a": [7], "b": ([8], (9,))}, [[7], [8], (9,)]),
        (None, None, []),
        (1, {"anything": [1, 2]}, [{"anything": [1, 2]}]),
        (Box(1, 2, "t"), Box([1], (2,), "t"), [[1], (2,)]),
    ],
)
def test_flatten_up_to(t, xs, expected):
    assert tu.tree_structure(t).flatten_up_to(xs) == expected


@pytest.mark.parametrize(
    "t, xs, msg",
    [
        ([1, 2], [7], "List arity mismatch: 1 != 2; list: [7]."),
        ((1,), (7, 8), "Tuple arity mismatch: 2 != 1; tuple: (7, 8)."),
        ({"a": 1}, {"a": 7, "b": 8}, "Dict key mismatch; expected keys: ['a']; dict: {'a': 7, 'b': 8}."),
        ({"a": 1}, {"b": 7}, "Dict key mismatch; expected keys: ['a']; dict: {'b': 7}."),
        ([1], {"a": 7}, "Expected list, got {'a': 7}."),
        ([1], (7,), "Expected list, got (7,)."),
        ((1,), [7], "Expected tuple, got [7]."),
        ({"a": 1}, (7,), "Expected dict, got (7,)."),
        ([[1]], [7], "Expected list, got 7. (at key path [0])"),
        ({"a": (1,)}, {"a": [7]}, "Expected tuple, got [7]. (at key path ['a'])"),
        ([{"a": [1, 2]}], [{"a": [1]}], "List arity mismatch: 1 != 2; list: [1]. (at key path [0]['a'])"),
        ([Point(x=1, y=2)], [(1, 2)], "Expected named tuple, got (1, 2)."),
        ([Point(x=1, y=2)], [Point2(x=1, y=2)], "Named tuple type mismatch"),
        (Point(x=[1], y=2), Point(x=[1, 2], y=2), "(at key path .x)"),
        ([Box(1, 2, "t")], [(1, 2)], "Custom node type mismatch"),
        (Box(1, 2, "t"), Box(1, 2, "u"), "Mismatch custom node data: 'u' != 't'"),
        (Box(1, [2], "t"), Box(1, 2, "t"), "Expected list, got 2. (at key path [<flat index 1>])"),
        (KeyedBox(1, [2], "t"), KeyedBox(1, 2, "t"), "(at key path bee)"),
        (None, [2], "Expected None, got [2]."),
        ((None, 1), (1, 1), "Expected None, got 1. (at key path [0])"),
    ],
)
def test_flatten_up_to_errors(t, xs, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        tu.tree_structure(t).flatten_up_to(xs)


# ----------------------------------------------------------------------------
# tree_map and friends
# ----------------------------------------------------------------------------


def test_tree_map_single_and_multi():
    assert tu.tree_map(lambda x: x * 2, {"a": [1, 2], "b": (3, None)}) == {"a": [2, 4], "b": (6, None)}
    x = ((1, 2), (3, 4, 5))
    y = (([3], None), ({"foo": "bar"}, 7, [5, 6]))
    assert tu.tree_map(lambda *xs: tuple(xs), x, y) == (
        ((1, [3]), (2, None)),
        ((3, {"foo": "bar"}), (4, 7), (5, [5, 6])),
    )
    assert tu.tree_map(_add3, [1, {"k": 2}], [3, {"k": 4}], [5, {"k": 6}]) == [531, {"k": 642}]
    # is_leaf only applies to the first tree
    out = tu.tree_map(lambda *xs: tuple(xs), ((1, 2), [3, 4, 5]), (([3], None), ({"foo": "bar"}, 7, [5, 6])),
                      is_leaf=lambda n: isinstance(n, list))
    assert out == (((1, [3]), (2, None)), ([3, 4, 5], ({"foo": "bar"}, 7, [5, 6])))
    # custom nodes in both trees
    assert tu.tree_map(lambda a, b: a + b, Box(1, [2], "t"), Box(10, [20], "t")) == Box(11, [22], "t")


def test_tree_map_mismatch_errors():
    with pytest.raises(ValueError, match=re.escape("Tuple arity mismatch: 3 != 2")):
        tu.tree_map(lambda a, b: a, (1, 2), (1, 2, 3))
    with pytest.raises(ValueError, match=re.escape("Dict key mismatch; expected keys: ['a', 'b']")):
        tu.tree_map(lambda a, b: a, {"a": 1, "b": 2}, {"a": 1, "c": 2})
    with pytest.raises(ValueError, match=re.escape("Expected list, got (1, 2). (at key path ['w'])")):
        tu.tree_map(lambda a, b: a, {"w": [1, 2]}, {"w": (1, 2)})
    with pytest.raises(ValueError, match="Custom node type mismatch"):
        tu.tree_map(lambda a, b: a, Box(1, 2, "t"), Special(1, 2))
    # the error is from the second tree, whichever position it is in
    with pytest.raises(ValueError, match="Expected None"):
        tu.tree_map(lambda a, b, c: a, [None], [None], [1])


def test_tree_map_prefix_semantics():
    # `rest` trees may be deeper than `tree` at its leaves
    assert tu.tree_map(lambda a, b: (a, b), [1, 2], [[10, 11], {"x": 3}]) == [(1, [10, 11]), (2, {"x": 3})]
    # ...but not shallower
    with pytest.raises(ValueError):
        tu.tree_map(lambda a, b: (a, b), [[1, 2], 3], [4, 5])


def test_tree_reduce_and_all():
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, {"z": 3})]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [1, 2], 100) == 103
    assert tu.tree_reduce(lambda a, b: a + b, [], 5) == 5
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])
    out = tu.tree_reduce(lambda a, b: a + b, [(1, 2), [(3, 4), (5, 6)]], is_leaf=lambda l: isinstance(l, tuple))
    assert out == (1, 2, 3, 4, 5, 6)
    assert tu.tree_all([True, {"a": (True, 1)}])
    assert not tu.tree_all([True, {"a": (True, 0)}])
    assert tu.tree_all([])
    assert tu.tree_all([True, (False,)], is_leaf=lambda x: isinstance(x, tuple))


def test_all_leaves():
    assert tu.all_leaves([1, "a", Opaque()])
    assert not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([None])
    for t in TREES:
        assert tu.all_leaves(tu.tree_leaves(t))
        if tu.tree_structure(t).num_leaves != 1 or tu.tree_structure(t).num_nodes != 1:
            assert not tu.all_leaves([t])
    assert tu.all_leaves([(1, 2)], is_leaf=lambda x: isinstance(x, tuple))
    assert not tu.all_leaves([[1, 2]], is_leaf=lambda x: isinstance(x, tuple))


def test_tree_transpose():
    outer = tu.tree_structure([0, 0, 0])
    inner = tu.tree_structure((0, 0))
    obj = [(1, 2), (3, 4), (5, 6)]
    assert tu.tree_transpose(outer, inner, obj) == ([1, 3, 5], [2, 4, 6])
    # inferred inner treedef
    nested = {"a": [1, {"k": 2}], "b": [3, {"k": 4}]}
    assert tu.tree_transpose(tu.tree_structure({"a": 0, "b": 0}), None, nested) == [
        {"a": 1, "b": 3},
        {"k": {"a": 2, "b": 4}},
    ]
    # with custom nodes on the outside
    out = tu.tree_transpose(tu.tree_structure(Box(0, 0, "t")), tu.tree_structure([0, 0]), Box([1, 2], [3, 4], "t"))
    assert out == [Box(1, 3, "t"), Box(2, 4, "t")]
    # empty outer tree
    assert tu.tree_transpose(tu.tree_structure(()), inner, ()) == ((), ())
    with pytest.raises(TypeError, match="Mismatch"):
        tu.tree_transpose(tu.tree_structure({"a": 1, "b": 2, "c": 3}), tu.tree_structure([1, 2]),
                          {"a": [1, 2], "b": [3, 4]})


def test_broadcast():
    assert tu.broadcast_prefix((1, 2), ([10, 11], {"a": 3, "b": 4})) == [1, 1, 2, 2]
    assert tu.tree_broadcast((1, 2), ([10, 11], {"a": 3})) == ([1, 1], {"a": 2})
    assert tu.tree_broadcast(0, {"a": [1, 2]}) == {"a": [0, 0]}
    with pytest.raises(ValueError, match="Tuple arity mismatch"):
        tu.broadcast_prefix((1, 2), (1, 2, 3))


def test_flatten_one_level():
    assert tu.flatten_one_level([1, (2, 3)]) == ([1, (2, 3)], None)
    assert tu.flatten_one_level({"b": 1, "a": [2]}) == ([[2], 1], ("a", "b"))
    assert tu.flatten_one_level(Point((), [None])) == ([(), [None]], None)
    assert tu.flatten_one_level(None) == ([], None)
    assert tu.flatten_one_level(Box(1, 2, "t")) == ([1, 2], "t")
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level(1)


# ----------------------------------------------------------------------------
# key paths
# ----------------------------------------------------------------------------


def test_key_classes():
    k = SequenceKey(1)
    assert (str(k), repr(k), k.idx) == ("[1]", "SequenceKey(idx=1)", 1)
    assert k == SequenceKey(idx=1) and hash(k) == hash(SequenceKey(1))
    k = DictKey("foo")
    assert (str(k), repr(k), k.key) == ("['foo']", "DictKey(key='foo')", "foo")
    assert str(DictKey(3)) == "[3]"
    assert k == DictKey(key="foo") and hash(k) == hash(DictKey("foo"))
    k = GetAttrKey("bar")
    assert (str(k), repr(k), k.name) == (".bar", "GetAttrKey(name='bar')", "bar")
    assert k == GetAttrKey(name="bar") and hash(k) == hash(GetAttrKey("bar"))
    k = FlattenedIndexKey(1)
    assert (str(k), repr(k), k.key) == ("[<flat index 1>]", "FlattenedIndexKey(key=1)", 1)
    assert k == FlattenedIndexKey(1) and hash(k) == hash(FlattenedIndexKey(1))
    assert k != SequenceKey(1) and hash(k) != hash(SequenceKey(1))
    assert DictKey(1) != SequenceKey(1)
    for key in [SequenceKey(1), DictKey("foo"), GetAttrKey("bar"), FlattenedIndexKey(1)]:
        assert pickle.loads(pickle.dumps(key)) == key
        with pytest.raises(AttributeError):
            key.idx = 5


def test_key_pattern_matching():
    # written without the `match` statement so the file parses on Python 3.9
    assert SequenceKey.__match_args__ == ("idx",)
    assert DictKey.__match_args__ == ("key",)
    assert GetAttrKey.__match_args__ == ("name",)
    assert FlattenedIndexKey.__match_args__ == ("key",)
    if sys.version_info >= (3, 10):
        ns = {}
        exec(
            "def m(k):\n"
            "    match k:\n"
            "        case SequenceKey(idx=i): return ('seq', i)\n"
            "        case DictKey(key=i): return ('dict', i)\n"
            "        case GetAttrKey(name=i): return ('attr', i)\n"
            "        case FlattenedIndexKey(i): return ('flat', i)\n",
            {"SequenceKey": SequenceKey, "DictKey": DictKey, "GetAttrKey": GetAttrKey,
             "FlattenedIndexKey": FlattenedIndexKey},
            ns,
        )
        assert ns["m"](SequenceKey(2)) == ("seq", 2)
        assert ns["m"](DictKey("a")) == ("dict", "a")
        assert ns["m"](GetAttrKey("n")) == ("attr", "n")
        assert ns["m"](FlattenedIndexKey(4)) == ("flat", 4)


def test_flatten_with_path_builtins():
    x = (1, {"b": 3, "a": 2}, None, [4])
    flat, td = tu.tree_flatten_with_path(x)
    assert flat == [
        ((SequenceKey(0),), 1),
        ((SequenceKey(1), DictKey("a")), 2),
        ((SequenceKey(1), DictKey("b")), 3),
        ((SequenceKey(3), SequenceKey(0)), 4),
    ]
    assert td == tu.tree_structure(x)
    assert tu.tree_leaves_with_path(x) == flat
    assert tu.tree_flatten_with_path(5) == ([((), 5)], tu.tree_structure(5))


def test_flatten_with_path_custom_and_keystr():
    t = [Point(12, {"cin": [1, 4], "bar": None}), "end"]
    strs = [f"{tu.keystr(kp)}: {x}" for kp, x in tu.tree_flatten_with_path(t)[0]]
    assert strs == ["[0].x: 12", "[0].y['cin'][0]: 1", "[0].y['cin'][1]: 4", "[1]: end"]

    t = [KeyedBox(12, {"foo": SpecialKeys(2, 3), "bar": None}, "c"), 5]
    flat, td = tu.tree_flatten_with_path(t)
    assert flat == [
        ((SequenceKey(0), GetAttrKey("a")), 12),
        ((SequenceKey(0), "bee", DictKey("foo"), GetAttrKey("x")), 2),
        ((SequenceKey(0), "bee", DictKey("foo"), GetAttrKey("y")), 3),
        ((SequenceKey(1),), 5),
    ]
    assert td == tu.tree_structure(t)
    assert tu.keystr(flat[1][0]) == "[0]bee['foo'].x"

    # registered without keys: FlattenedIndexKey; static: no children
    flat, _ = tu.tree_flatten_with_path(Box(1, [2], "t"))
    assert [tu.keystr(p) for p, _ in flat] == ["[<flat index 0>]", "[<flat index 1>][0]"]
    assert tu.tree_flatten_with_path(StaticThing(1))[0] == []
    # special class without keys is not a leaf
    assert len(tu.tree_flatten_with_path(Special([1, 2], [3, 4]))[0]) == 4


def test_flatten_with_path_dict_flavours():
    d = collections.defaultdict(int, {"b": 2, "a": 1, "c": {"b": 2, "a": 1}})
    flat, td = tu.tree_flatten_with_path(d)
    assert flat == [((DictKey("a"),), 1), ((DictKey("b"),), 2),
                    ((DictKey("c"), DictKey("a")), 1), ((DictKey("c"), DictKey("b")), 2)]
    assert td == tu.tree_structure(d)
    od = collections.OrderedDict({"b": 2, "a": 1})
    flat, td = tu.tree_flatten_with_path(od)
    assert flat == [((DictKey("b"),), 2), ((DictKey("a"),), 1)]
    assert list(tu.tree_unflatten(td, [l for _, l in flat]).keys()) == ["b", "a"]


def test_keystr_options():
    path = (SequenceKey(0), DictKey("w"), GetAttrKey("b"), FlattenedIndexKey(2))
    assert tu.keystr(path) == "[0]['w'].b[<flat index 2>]"
    assert tu.keystr(path, simple=True, separator="/") == "0/w/b/2"
    assert tu.keystr(path, separator="|") == "[0]|['w']|.b|[<flat index 2>]"
    assert tu.keystr(()) == ""
    with pytest.raises(TypeError):
        tu.keystr(path, True)  # keyword-only options


def test_flatten_with_path_is_leaf():
    x = {"a": (1, 2), "b": [3, (4, 5)]}
    flat, td = tu.tree_flatten_with_path(x, is_leaf=lambda v: isinstance(v, tuple))
    assert flat == [((DictKey("a"),), (1, 2)), ((DictKey("b"), SequenceKey(0)), 3),
                    ((DictKey("b"), SequenceKey(1)), (4, 5))]
    assert td.num_leaves == 3
    flat = tu.tree_leaves_with_path(x, is_leaf=lambda p, v: len(p) == 1, is_leaf_takes_path=True)
    assert flat == [((DictKey("a"),), (1, 2)), ((DictKey("b"),), [3, (4, 5)])]


def test_tree_map_with_path():
    t = [{i: i for i in range(5)}]
    out = tu.tree_map_with_path(lambda kp, v: v - kp[1].key + kp[0].idx, t)
    assert out == [{i: 0 for i in range(5)}]
    a = [Box(12, {"cin": [1, 4], "bar": None}, "c"), 5]
    b = [Box(2, {"cin": [2, 2], "bar": None}, "c"), 2]
    assert tu.tree_map_with_path(lambda kp, x, y: x + y, a, b) == tu.tree_map(lambda x, y: x + y, a, b)
    out = tu.tree_map_with_path(lambda kp, x: tu.keystr(kp), {"p": [0, Point(1, 2)]})
    assert out == {"p": ["['p'][0]", Point("['p'][1].x", "['p'][1].y")]}
    out = tu.tree_map_with_path(lambda kp, *xs: (kp[0].idx, *xs), ((1, 2), [3, 4, 5]),
                                (([3], 0), ([0], 7, [5, 6])), is_leaf=lambda n: isinstance(n, list))
    assert out == (((0, 1, [3]), (0, 2, 0)), (1, [3, 4, 5], ([0], 7, [5, 6])))
    with pytest.raises(ValueError, match="Tuple arity mismatch"):
        tu.tree_map_with_path(lambda kp, x, y: x, (1,), (1, 2))


# ----------------------------------------------------------------------------
# prefix errors
# ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prefix, full, expected",
    [
        ((1, 2), [1, 2], "pytree structure error: different types at key path\n    in_axes\n"),
        (((1,), (2,)), ([3], (4,)), "different types at key path\n    in_axes[0]\n"),
        ((1,), (2, 3), "different lengths of tuple at key path\n    in_axes\n"),
        ([[1]], [[2, 3]], "different lengths of list at key path\n    in_axes[0]\n"),
        ({"hi": 1}, {"hi": 2, "bye": 3}, "different numbers of pytree children at key path\n    in_axes\n"),
        ({"a": 1}, {"a": 2, "b": 3}, "so the symmetric difference on key sets is\n    b"),
        ({1: 2}, {3: 4}, "different pytree metadata at key path\n    in_axes\n"),
        ([{1: 2}], [{3: 4}], "different pytree metadata at key path\n    in_axes[0]\n"),
        (Special(1, [2]), Special(3, 4), "different types at key path\n    in_axes[<flat index 1>]\n"),
        ({"{oops}": []}, {"{oops}": [{}]}, "different lengths of list at key path\n    in_axes['{oops}']\n"),
        (None, 3, "different types at key path\n    in_axes\n"),
    ],
)
def test_prefix_errors(prefix, full, expected):
    errs = tu.prefix_errors(prefix, full)
    assert len(errs) == 1
    err = errs[0]("in_axes")
    assert isinstance(err, ValueError)
    assert expected in str(err)


def test_prefix_errors_multiple_and_none():
    e1, e2 = tu.prefix_errors(((1,), (2,)), ([3], [4]))
    assert "in_axes[0]" in str(e1("in_axes")) and "in_axes[1]" in str(e2("in_axes"))
    assert tu.prefix_errors((1, 2), ((11, 12, 13), 2)) == []
    assert tu.prefix_errors(0, {"a": [1]}) == []
    assert tu.prefix_errors(None, None) == []
    assert tu.prefix_errors([(1, 2)], [(3,)], is_leaf=lambda x: isinstance(x, tuple)) == []


# ----------------------------------------------------------------------------
# Partial
# ----------------------------------------------------------------------------


def _dummy(*args, **kwargs):
    return args, kwargs


def test_partial_is_a_pytree():
    p = tu.Partial(_dummy, 1, 2, x=3)
    assert p(4, y=5) == ((1, 2, 4), {"x": 3, "y": 5})
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    assert str(td) == f"PyTreeDef(CustomNode(Partial[{_dummy!r}], [(*, *), {{'x': *}}]))"
    q = tu.tree_unflatten(td, [10, 20, 30])
    assert isinstance(q, tu.Partial) and isinstance(q, functools.partial)
    assert (q.func, q.args, q.keywords) == (_dummy, (10, 20), {"x": 30})
    # func is static: equal funcs give equal, hashable treedefs; different funcs differ
    assert td == tu.tree_structure(tu.Partial(_dummy, "a", "b", x="c"))
    assert hash(td) == hash(tu.tree_structure(tu.Partial(_dummy, 0, 0, x=0)))
    assert td != tu.tree_structure(tu.Partial(print, 1, 2, x=3))
    doubled = tu.tree_map(lambda v: 2 * v, p)
    assert doubled() == ((2, 4), {"x": 6})
    assert tu.tree_leaves(tu.Partial(_dummy)) == []


def test_partial_does_not_merge_with_functools_partial():
    def f(a, b, c):
        return a + 10 * b + 100 * c

    g = functools.partial(f, 2)
    h = tu.Partial(g, 3)
    assert h.args == (3,)
    assert h(4) == 432
    assert tu.tree_leaves(h) == [3]
    fun = functools.partial(print, 1)
    p1, p2 = tu.Partial(fun, 2), tu.Partial(fun, 2)
    assert fun == p1.func and p1.func == fun and p1.func == p2.func
    assert hash(p1.func) == hash(p2.func)
    assert tu.tree_structure(p1) == tu.tree_structure(p2)
    # roundtrip keeps it callable and unmerged
    r = tu.tree_map(lambda v: v + 1, h)
    assert r.args == (4,) and r(4) == 2 + 40 + 400


# ----------------------------------------------------------------------------
# jax.tree namespace
# ----------------------------------------------------------------------------


def test_tree_namespace_aliases():
    obj = [1, 2, (3, 4)]
    il = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tree.flatten(obj) == tu.tree_flatten(obj)
    assert tree.flatten(obj, is_leaf=il) == tu.tree_flatten(obj, is_leaf=il)
    assert tree.leaves(obj, is_leaf=il) == [1, 2, (3, 4)]
    assert tree.structure(obj) == tu.tree_structure(obj)
    assert tree.structure(obj, is_leaf=il).num_leaves == 3
    leaves, td = tree.flatten(obj)
    assert tree.unflatten(td, leaves) == obj
    assert tree.map(lambda x: x * 2, obj) == [2, 4, (6, 8)]
    assert tree.map(lambda x, y: x + y, obj, [5, 6, (7, 8)]) == [6, 8, (10, 12)]
    assert tree.map(lambda x: len(x) if isinstance(x, tuple) else x, obj, is_leaf=il) == [1, 2, 2]
    assert tree.reduce(lambda a, b: a + b, obj) == 10
    assert tree.reduce(lambda a, b: a + b, obj, 5) == 15
    assert tree.reduce(lambda a, b: a + b, [(1, 2), (3, 4)], is_leaf=il) == (1, 2, 3, 4)
    assert tree.all([True, True, (True, False)]) is False
    assert tree.all([True, True, (True, False)], is_leaf=il) is True
    outer, inner = tu.tree_structure(["*", "*", "*"]), tu.tree_structure(("*", "*"))
    assert tree.transpose(outer, inner, [(1, 2), (3, 4), (5, 6)]) == ([1, 3, 5], [2, 4, 6])
    assert tree.flatten_with_path(obj) == tu.tree_flatten_with_path(obj)
    assert tree.flatten_with_path(obj, is_leaf=il) == tu.tree_flatten_with_path(obj, is_leaf=il)
    assert tree.leaves_with_path(obj) == tu.tree_leaves_with_path(obj)
    f = lambda kp, x, y: (sum(k.idx for k in kp), x + y)  # noqa: E731
    assert tree.map_with_path(f, obj, [5, 6, (7, 8)]) == [(0, 6), (1, 8), ((2, 10), (3, 12))]
    assert tree.map_with_path(f, obj, [5, 6, (7, 8)], is_leaf=il) == [(0, 6), (1, 8), (2, (3, 4, 7, 8))]
    assert tree.broadcast(1, [2, {"a": 3}]) == [1, {"a": 1}]


def test_large_tree_flatten_and_map():
    big = [{"w": i, "b": (i, i)} for i in range(2000)]
    leaves, td = tu.tree_flatten(big)
    assert len(leaves) == 6000
    out = tu.tree_map(lambda a, b: a + b, big, big)
    assert out[7] == {"w": 14, "b": (14, 14)}


# ---------------------------------------------------------------- associative reduce, node query, static fields

def test_tree_reduce_associative_is_balanced():
    # JAX 0.10.2: the halves split at len // 2.
    assert tree_util.tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5]) == ((1, 2), (3, (4, 5)))
    assert tree.reduce_associative(lambda a, b: a + b, {"a": 1, "b": [2, 3]}) == 6
    assert tree.reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tree_util.tree_reduce_associative(lambda a, b: a + b, [])


def test_is_tree_node():
    Point = collections.namedtuple("Point", "x y")
    for t in (list, tuple, dict, type(None), Point, collections.OrderedDict, collections.defaultdict,
              tree_util.Partial):
        assert tree_util.is_tree_node(t), t
    for t in (int, float, str, object):
        assert not tree_util.is_tree_node(t), t
    with pytest.raises(TypeError):
        tree_util.is_tree_node([1])


def test_tree_static_field_is_aux_data():
    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        op: str = tree.static(default="add")

    leaves, treedef = tree.flatten(Op(1.0))
    assert leaves == [1.0]
    assert tree.unflatten(treedef, [2.0]) == Op(2.0, "add")
    f = dataclasses.fields(Op)[1]
    assert f.metadata["static"] is True and f.default == "add"
