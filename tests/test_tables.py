"""The primitive and dtype facts Python reads from the Rust core
(`microjax_rs._src.tables`), checked against what the system does: binding,
jaxpr printing, canonicalization, differentiation. Also JAX's promotion and
broadcasting, implemented once in the core, seen through eager operators,
`jnp`, `jit` and `vmap`."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import core, lax
from microjax_rs._src import tables
from microjax_rs.core import ArrayImpl, Tracer

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

# The dtypes arrays can have (float0 and PRNG keys are not array dtypes).
ARRAY_DTYPES = sorted(n for n, k in tables.KINDS.items() if k != "V")


# ----------------------------------------------------------------- primitives

def _programs():
    """Functions binding primitives of both kinds, with their arguments."""
    x = jnp.arange(6.0).reshape(2, 3)
    m = jnp.asarray([[4.0, 1.0], [1.0, 3.0]])

    @jax.custom_jvp
    def cj(v):
        return jnp.sin(v)

    cj.defjvp(lambda p, t: (jnp.sin(p[0]), jnp.cos(p[0]) * t[0]))

    return [
        (lambda v: jnp.sin(v) * 2.0 + v, x),
        (lambda v: jnp.sort(v, axis=-1), x),
        (lambda v: lax.top_k(v, 2), x),
        (lambda v: lax.cond(v.sum() > 0, lambda a: a + 1.0, lambda a: a - 1.0, v), x),
        (lambda v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, v))[1], x),
        (lambda v: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(3), v), x),
        (lambda v: jnp.linalg.qr(v), m),
        (lambda v: jnp.linalg.eigh(v), m),
        (lambda v: jnp.linalg.svd(v), m),
        (lambda v: jax.scipy.linalg.lu(v), m),
        (lambda v: jax.jit(lambda a: a * 3.0)(v), x),
        (lambda v: jax.checkpoint(lambda a: jnp.sin(a))(v), x),
        (lambda v: cj(v), x),
        (lambda v: jax.vmap(lambda r: lax.psum(r, "i"), axis_name="i")(v), x),
        (lambda v: jax.random.split(jax.random.PRNGKey(0)), x),
        (lambda v: jnp.argmax(v, axis=0) + (v > 1.0).sum(), x),
    ]


def test_multiple_results_primitives_bind_to_lists(monkeypatch):
    seen = {}
    bind = core.bind

    def recording_bind(prim, args, params):
        out = bind(prim, args, params)
        seen.setdefault(prim.name, set()).add(isinstance(out, (list, tuple)))
        return out

    monkeypatch.setattr(core, "bind", recording_bind)
    for f, arg in _programs():
        f(arg)  # eagerly
        jax.make_jaxpr(f)(arg)  # staged
    for name, kinds in seen.items():
        assert kinds == {name in tables.MULTIPLE_RESULTS}, (name, kinds)
    # the primitives JAX declares multiple_results (facts from JAX) that the
    # programs above bind, and single-result ones
    for name in ("sort", "top_k", "cond", "while", "scan", "qr", "eigh", "svd", "lu", "pjit",
                 "checkpoint", "custom_jvp_call", "psum", "threefry2x32"):
        assert seen.get(name) == {True}, name
    for name in ("mul", "add", "argmax", "gt", "reduce_sum", "broadcast_in_dim", "select_n"):
        assert seen.get(name) == {False}, name


def test_multiple_results_primitives_stage_their_output_count():
    # A staged equation with several outputs is of a multiple-results primitive.
    def eqns(j):
        for e in j.eqns:
            yield e
            for p in e.params.values():
                sub = getattr(p, "jaxpr", None)
                if sub is not None and hasattr(sub, "eqns"):
                    yield from eqns(sub)

    counted = 0
    for f, arg in _programs():
        for e in eqns(jax.make_jaxpr(f)(arg).jaxpr):
            if len(e.outvars) > 1:
                assert e.primitive.name in tables.MULTIPLE_RESULTS, e.primitive.name
                counted += 1
    assert counted >= 8


def test_non_differentiable_primitives_give_known_values_under_grad():
    # An equation of a non-differentiable primitive is not recorded by AD: its
    # value under grad is concrete (Python control flow on it works).
    probes = {
        "gt": lambda v: v > 0.0,
        "eq": lambda v: v == 1.0,
        "is_finite": lambda v: lax.is_finite(v),
        "argmax": lambda v: jnp.argmax(v),
        "stop_gradient": lambda v: lax.stop_gradient(v),
        "mul": lambda v: v * 2.0,
        "sin": lambda v: jnp.sin(v),
    }
    got = {}

    def f(v):
        for name, probe in probes.items():
            got[name] = probe(v)
        return v.sum()

    jax.grad(f)(jnp.arange(3.0))
    for name, value in got.items():
        if name in tables.NONDIFF_PRIMS:
            assert type(value) is ArrayImpl, name
        else:
            assert type(value) is Tracer, name
    assert {"gt", "eq", "is_finite", "argmax", "stop_gradient"} <= tables.NONDIFF_PRIMS
    assert not {"mul", "sin"} & tables.NONDIFF_PRIMS


def test_effects_of_callbacks():
    from microjax_rs._src.effects import debug_effect

    assert tables.PRIMITIVES["io_callback"][2] == "ordered_io"
    assert tables.PRIMITIVES["debug_callback"][2] == "ordered_io"
    assert tables.PRIMITIVES["add"][2] == "none"
    j = jax.make_jaxpr(lambda v: jax.debug.print("{}", v) or v)(jnp.ones(2))
    effects = {e.primitive.name: e.effects for e in j.jaxpr.eqns}
    # the jaxpr shows JAX's effect object, whose `kind` is the core's effect
    assert {e.kind for e in effects["debug_callback"]} == {tables.PRIMITIVES["debug_callback"][2]}
    assert effects["debug_callback"] == {debug_effect}


# ----------------------------------------------------------------- dtypes

@pytest.mark.parametrize("name", ARRAY_DTYPES)
def test_short_names_match_jaxpr_printing(name, x64):
    x = np.zeros((2,), dtype=jax.dtypes.np_dtype(name))
    text = str(jax.make_jaxpr(lambda v: v)(x))
    assert f"{tables.SHORT_NAMES[name]}[2]" in text, text
    assert core.get_aval(x).str_short() == f"{tables.SHORT_NAMES[name]}[2]"


@pytest.mark.parametrize("name", ARRAY_DTYPES)
def test_canonical_names_match_array_creation(name):
    x = np.zeros((2,), dtype=jax.dtypes.np_dtype(name))
    assert jnp.asarray(x).dtype.name == tables.CANONICAL_32[name]
    jax.config.update("jax_enable_x64", True)
    try:
        assert jnp.asarray(x).dtype.name == name
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("name", ARRAY_DTYPES)
def test_itemsizes_match_numpy(name, x64):
    assert tables.ITEMSIZES[name] == jax.dtypes.np_dtype(name).itemsize
    assert jnp.zeros((3,), dtype=jax.dtypes.np_dtype(name)).nbytes == 3 * tables.ITEMSIZES[name]


def test_half_float_names_accumulate_in_float32():
    assert tables.HALF_FLOAT_NAMES == {"float16", "bfloat16"}
    # 2560 ones: exact in a float32 accumulator (and in both result dtypes), not in a
    # half-precision one (2048 + 1 rounds to 2048).
    for name in sorted(tables.HALF_FLOAT_NAMES):
        x = jnp.ones((2560,), dtype=jax.dtypes.np_dtype(name))
        total = jnp.sum(x)
        assert total.dtype.name == name and float(total) == 2560.0


_KIND_OF = {"b": jnp.bool_, "i": jnp.signedinteger, "u": jnp.unsignedinteger, "f": jnp.floating,
            "c": jnp.complexfloating}


@pytest.mark.parametrize("name", ARRAY_DTYPES)
def test_kinds_and_float_names(name):
    assert [k for k, t in _KIND_OF.items() if jnp.issubdtype(jax.dtypes.np_dtype(name), t)] == [tables.KINDS[name]]
    x = jnp.ones((2,), dtype=jax.dtypes.np_dtype(name))
    if name in tables.FLOAT_NAMES:
        g = jax.grad(lambda v: v.astype(jnp.float32).sum())(x)
        np.testing.assert_array_equal(np.asarray(g, np.float32), np.ones(2, np.float32))
    elif name in tables.COMPLEX_NAMES:
        # A real-valued function of complex inputs (JAX: the real part's cotangent, 1+0j).
        g = jax.grad(lambda v: jnp.real(v).sum())(x)
        np.testing.assert_array_equal(np.asarray(g), np.ones(2, np.complex64))
    else:
        with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs|float"):
            jax.grad(lambda v: v.astype(jnp.float32).sum())(x)


# ----------------------------------------------------------------- promotion

_OPERANDS = {
    "bool": lambda: jnp.asarray([True, False]),
    "uint8": lambda: jnp.asarray([1, 2], jnp.uint8),
    "int8": lambda: jnp.asarray([1, 2], jnp.int8),
    "uint32": lambda: jnp.asarray([1, 2], jnp.uint32),
    "int32": lambda: jnp.asarray([1, 2], jnp.int32),
    "float16": lambda: jnp.asarray([1, 2], jnp.float16),
    "bfloat16": lambda: jnp.asarray([1, 2], jnp.bfloat16),
    "float32": lambda: jnp.asarray([1, 2], jnp.float32),
    "int": lambda: 3,
    "float": lambda: 2.5,
}

# (a, b) -> JAX's result dtype of `a + b` with x64 disabled (bool + bool: bool)
_JAX_SUMS = {
    ("bool", "bool"): "bool", ("bool", "uint8"): "uint8", ("bool", "int"): "int32",
    ("bool", "float"): "float32", ("uint8", "int8"): "int16", ("uint8", "int"): "uint8",
    ("uint8", "float"): "float32", ("int8", "int"): "int8", ("int8", "int32"): "int32",
    ("uint32", "uint8"): "uint32", ("uint32", "int32"): "int32", ("uint32", "int8"): "int32",
    ("int32", "float"): "float32", ("int32", "float16"): "float16",
    ("float16", "bfloat16"): "float32", ("float16", "float"): "float16", ("bfloat16", "int"): "bfloat16",
    ("bfloat16", "float"): "bfloat16", ("bfloat16", "float32"): "float32", ("float32", "int"): "float32",
}


@pytest.mark.parametrize("a,b", sorted(_JAX_SUMS))
def test_eager_jnp_and_jit_promote_alike(a, b):
    want = _JAX_SUMS[(a, b)]
    x, y = _OPERANDS[a](), _OPERANDS[b]()
    for u, v in ((x, y), (y, x)):
        got = {
            "operator": (u + v).dtype.name,
            "jnp.add": jnp.add(u, v).dtype.name,
            "jit": jax.jit(lambda p, q: p + q)(u, v).dtype.name,
            "result_type": jnp.result_type(u, v).name,
        }
        assert set(got.values()) == {want}, (a, b, got)


def test_weak_types_survive_promotion_with_python_scalars():
    x = jnp.asarray(1, jnp.int32) + 1.5
    assert x.dtype == jnp.float32 and x.weak_type
    y = jnp.asarray([1.0], jnp.bfloat16) * 2
    assert y.dtype == jnp.bfloat16 and not y.weak_type


def test_promote_types_is_not_canonicalized():
    # jnp.promote_types gives the lattice's answer; `a + b` computes in the
    # canonical (x64-disabled) result type
    assert jnp.promote_types(jnp.uint32, jnp.int32) == jnp.int64
    assert jnp.promote_types(jnp.uint8, jnp.int8) == jnp.int16
    assert jnp.result_type(jnp.uint32, jnp.int32) == jnp.int32


def test_uint64_with_int64_promotes_to_float(x64):
    # JAX's lattice: no integer type holds both
    assert jnp.promote_types(jnp.uint64, jnp.int64) == jnp.float64
    z = jnp.asarray([1], jnp.uint64) + jnp.asarray([1], jnp.int64)
    assert z.dtype == jnp.float64


# ----------------------------------------------------------------- broadcasting

_MSG = r"^add got incompatible shapes for broadcasting: \(3,\), \(4,\)\.$"


def test_incompatible_shapes_eager():
    with pytest.raises(TypeError, match=_MSG):
        jnp.ones(3) + jnp.ones(4)
    with pytest.raises(TypeError, match=_MSG):
        jnp.add(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError, match=r"^lt got incompatible shapes for broadcasting: \(2, 3\), \(2, 4\)\.$"):
        jnp.ones((2, 3)) < jnp.ones((2, 4))


def test_incompatible_shapes_jit():
    with pytest.raises(TypeError, match=_MSG):
        jax.jit(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError, match=r"^max got incompatible shapes for broadcasting: \(3,\), \(4,\)\.$"):
        jax.jit(jnp.maximum)(jnp.ones(3), jnp.ones(4))


def test_incompatible_shapes_vmap():
    with pytest.raises(TypeError, match=_MSG):
        jax.vmap(lambda a, b: a + b)(jnp.ones((2, 3)), jnp.ones((2, 4)))
    with pytest.raises(TypeError, match=_MSG):
        jax.vmap(jnp.add)(jnp.ones((2, 3)), jnp.ones((2, 4)))


def test_incompatible_shapes_of_different_ranks_and_broadcast_shapes():
    # JAX: operands of different ranks fail in jnp's rank promotion, a ValueError
    with pytest.raises(ValueError, match=r"^Incompatible shapes for broadcasting: shapes=\[\(3,\), \(2, 4\)\]$"):
        jnp.ones(3) + jnp.ones((2, 4))
    with pytest.raises(ValueError, match=r"^Incompatible shapes for broadcasting: shapes=\[\(3,\), \(4,\)\]$"):
        jnp.broadcast_shapes((3,), (4,))
    assert jnp.broadcast_shapes((3, 1), (4,), (2, 1, 1)) == (2, 3, 4)
    assert (jnp.ones((3, 1)) + jnp.ones(4)).shape == (3, 4)
