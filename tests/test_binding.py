"""Tests of the PyO3 binding `microjax_rs._core` on its own.

Only `microjax_rs._core` is used here (the Python layer may install hooks on
import; every test that depends on the hook table saves and restores it).
"""

import collections
import copy
import functools
import pickle

import numpy as np
import pytest

from microjax_rs import _core as C

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - optional dependency
    ml_dtypes = None

FLOAT0 = np.dtype([("float0", np.void, 0)])


# ----------------------------------------------------------------- fixtures
@pytest.fixture
def hooks():
    """Clears every hook for the test, restores the previous table after."""
    saved = dict(C.get_hooks())
    C.set_hooks({k: None for k in saved})
    try:
        yield
    finally:
        C.set_hooks(saved)


def _x64_set_to(on):
    prev = C.get_x64()
    C.set_x64(on)
    try:
        yield
    finally:
        C.set_x64(prev)


@pytest.fixture
def x64():
    yield from _x64_set_to(True)


@pytest.fixture
def no_x64():
    yield from _x64_set_to(False)


class Recorder:
    def __init__(self, result="hooked"):
        self.calls = []
        self.result = result

    def __call__(self, *args):
        self.calls.append(args)
        return self.result


class trace_active:
    def __enter__(self):
        C.trace_enter()

    def __exit__(self, *exc):
        C.trace_exit()


def arr(x, dtype=None, weak=False):
    return C.from_numpy(np.asarray(x, dtype=dtype), weak)


def check(result, expected, dtype, weak=False):
    assert isinstance(result, C.ArrayImpl)
    assert result.dtype == np.dtype(dtype), (result.dtype, dtype)
    assert result.dtype_name == np.dtype(dtype).name
    assert result.weak_type is weak
    got = np.asarray(result)
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(got, np.asarray(expected, dtype=dtype), rtol=1e-6)


# ---------------------------------------------------------- eager operators
@pytest.mark.usefixtures("no_x64")
class TestEagerOps:
    a_np = np.array([1.0, -2.0, 3.5, 4.0, 0.5, 6.0, -7.0, 8.0], np.float32)
    b_np = np.array([2.0, 2.0, -1.0, 0.5, 3.0, 1.5, 2.0, 4.0], np.float32)

    def test_arith_same_dtype(self):
        a, b = arr(self.a_np), arr(self.b_np)
        check(a + b, self.a_np + self.b_np, np.float32)
        check(a - b, self.a_np - self.b_np, np.float32)
        check(a * b, self.a_np * self.b_np, np.float32)
        check(a / b, self.a_np / self.b_np, np.float32)
        check(abs(a) ** b, np.abs(self.a_np) ** self.b_np, np.float32)

    def test_python_scalars_are_weak(self):
        a = arr(self.a_np)
        check(a + 1, self.a_np + 1, np.float32)
        check(a * 2.5, self.a_np * 2.5, np.float32)
        check(2.5 - a, 2.5 - self.a_np, np.float32)
        check(3 / a, 3 / self.a_np, np.float32)
        check(2.0 ** a, 2.0 ** self.a_np, np.float32)
        check(a ** 2, self.a_np**2, np.float32)
        check(abs(a) ** 0.5, np.abs(self.a_np) ** 0.5, np.float32)
        # A weak array with a weak scalar stays weak.
        w = arr(self.a_np, weak=True)
        check(w + 1.0, self.a_np + 1.0, np.float32, weak=True)
        check(w * 2, self.a_np * 2, np.float32, weak=True)
        # A weak array with a strong one takes the strong type.
        check(w + arr(self.b_np), self.a_np + self.b_np, np.float32)

    def test_promotion(self):
        i = arr([1, 2, 3], np.int32)
        check(i + 1.5, [2.5, 3.5, 4.5], np.float32, weak=True)
        check(i + 1, [2, 3, 4], np.int32)
        check(i * True, [1, 2, 3], np.int32)
        check(arr([1, 2], np.uint8) + arr([1, 2], np.int8), [2, 4], np.int16)
        check(arr([1, 2], np.int32) + arr([1, 2], np.float16), [2, 4], np.float16)
        check(arr([1.5], np.float16) + 1.25, [2.75], np.float16)
        check(arr([1, 2], np.uint8) + 3, [4, 5], np.uint8)
        check(arr([True, False]) + 1, [2, 1], np.int32, weak=True)
        check(arr([True, False]) * 2.0, [2.0, 0.0], np.float32, weak=True)
        # JAX's result_type canonicalizes: int64 is int32 with x64 disabled
        check(arr([1, 2], np.int32) + arr([1, 2], np.int64), [2, 4], np.int32)
        check(arr([1, 2], np.uint32) + arr([1, 2], np.int32), [2, 4], np.int32)
        if ml_dtypes is not None:
            check(
                arr([1, 2], ml_dtypes.bfloat16) + arr([1, 2], np.float16),
                [2, 4],
                np.float32,
            )

    def test_truediv_of_ints_is_float(self):
        i = arr([1, 2, 3], np.int32)
        check(i / 2, [0.5, 1.0, 1.5], np.float32)
        check(i / arr([2, 4, 6], np.int32), [0.5, 0.5, 0.5], np.float32)
        check(6 / i, [6.0, 3.0, 2.0], np.float32)
        check(arr(4, np.int32, weak=True) / 8, 0.5, np.float32, weak=True)

    def test_integer_wrap(self):
        check(arr([127, -128], np.int8) + 1, [-128, -127], np.int8)
        imax = np.iinfo(np.int32).max
        check(arr([imax], np.int32) + 1, [np.iinfo(np.int32).min], np.int32)
        check(arr([0], np.uint8) - arr([1], np.uint8), [255], np.uint8)
        check(arr([100], np.int8) * arr([3], np.int8), [44], np.int8)

    def test_integer_pow(self):
        i = arr([1, -2, 3], np.int32)
        check(i ** 3, [1, -8, 27], np.int32)
        check(i ** 0, [1, 1, 1], np.int32)
        f = arr([0.5, 2.0], np.float32, weak=True)
        check(f ** -2, [4.0, 0.25], np.float32, weak=True)

    def test_broadcasting(self):
        col = np.arange(3, dtype=np.float32).reshape(3, 1)
        row = np.arange(4, dtype=np.float32)
        check(arr(col) + arr(row), col + row, np.float32)
        check(arr(row) * arr(col), row * col, np.float32)
        m = np.arange(6, dtype=np.float32).reshape(2, 3)
        check(arr(m) - arr(np.float32(1.5)), m - 1.5, np.float32)
        check(arr(np.float32(10)) / arr(m + 1), 10 / (m + 1), np.float32)
        check(arr(m) < arr([1.0, 4.0, 2.0], np.float32), m < [1, 4, 2], np.bool_)
        one = np.ones((1, 1, 3), np.int32)
        check(arr(one) + arr(m.astype(np.int32)), one + m.astype(np.int32), np.int32)

    def test_comparisons(self):
        a, b = arr(self.a_np), arr(self.b_np)
        for op in ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"]:
            got = getattr(a, op)(b)
            check(got, getattr(self.a_np, op)(self.b_np), np.bool_)
        check(a > 2, self.a_np > 2, np.bool_)
        check(2 < a, 2 < self.a_np, np.bool_)
        check(arr([1, 2, 3], np.int32) == 2.0, [False, True, False], np.bool_)
        check(arr([1, 2], np.int32, weak=True) <= 1, [True, False], np.bool_)
        check(arr([True, False]) == True, [True, False], np.bool_)  # noqa: E712

    def test_unary(self):
        a = arr(self.a_np)
        check(-a, -self.a_np, np.float32)
        check(abs(a), np.abs(self.a_np), np.float32)
        pos = +a
        check(pos, self.a_np, np.float32)
        assert pos is not a
        w = arr([-3, 4], np.int32, weak=True)
        check(-w, [3, -4], np.int32, weak=True)
        check(abs(w), [3, 4], np.int32, weak=True)
        check(-arr([np.iinfo(np.int8).min], np.int8), [np.iinfo(np.int8).min], np.int8)

    def test_x64_defaults(self, x64):
        i = arr([1, 2], np.int64)
        check(i + 1, [2, 3], np.int64)
        check(C.scalar(1, "int64", True) + 1, 2, np.int64, weak=True)
        check(C.scalar(1, "int64", True) / 2, 0.5, np.float64, weak=True)
        check(arr([1, 2], np.int32) / 2, [0.5, 1.0], np.float64)
        check(arr([1.0], np.float64) * 3.0, [3.0], np.float64)


# ---------------------------------------------------------- slow path hooks
@pytest.mark.usefixtures("hooks", "no_x64")
class TestHooks:
    def test_non_fast_operands_go_to_hook(self):
        rec = Recorder()
        C.set_hooks({"binary": rec})
        a = arr([1.0, 2.0], np.float32)
        n = np.ones(2, np.float32)
        assert a + n == "hooked"
        assert n + a == "hooked"  # numpy defers (__array_priority__)
        assert a - "x" == "hooked"
        assert a * (2**40) == "hooked"  # does not fit the default int
        assert a + arr([1.0, 2.0, 3.0], np.float32) == "hooked"  # bad broadcast
        assert a + np.float32(1) == "hooked"  # not an exact Python scalar
        names = [(c[0], c[3]) for c in rec.calls]
        assert names == [
            ("add", False),
            ("add", True),
            ("sub", False),
            ("mul", False),
            ("add", False),
            ("add", False),
        ]
        assert rec.calls[0][1] is a and rec.calls[0][2] is n

    def test_trace_active_goes_to_hook(self):
        rec = Recorder()
        urec = Recorder("u")
        C.set_hooks({"binary": rec, "unary": urec})
        a = arr([1.0, 2.0], np.float32)
        with trace_active():
            assert a + a == "hooked"
            assert 2 * a == "hooked"
            assert (a < 1) == "hooked"
            assert -a == "u"
            assert abs(a) == "u"
            assert +a == "u"
        assert [c[0] for c in rec.calls] == ["add", "mul", "lt"]
        assert rec.calls[1][3] is True
        assert [c[0] for c in urec.calls] == ["neg", "abs", "pos"]
        assert isinstance(a + a, C.ArrayImpl)  # fast again after exit

    def test_hook_only_operators(self):
        rec = Recorder()
        urec = Recorder("inv")
        C.set_hooks({"binary": rec, "unary": urec})
        a = arr([1, 2], np.int32)
        assert a @ a == "hooked"
        assert a // 2 == "hooked"
        assert 7 % a == "hooked"
        assert a & 1 == "hooked"
        assert 1 | a == "hooked"
        assert a ^ a == "hooked"
        assert a << 1 == "hooked"
        assert 1 >> a == "hooked"
        assert ~a == "inv"
        got = [(c[0], c[3]) for c in rec.calls]
        assert got == [
            ("matmul", False),
            ("floordiv", False),
            ("mod", True),
            ("and", False),
            ("or", True),
            ("xor", False),
            ("lshift", False),
            ("rshift", True),
        ]
        assert urec.calls == [("invert", a)]

    def test_core_rejection_goes_to_hook(self):
        rec = Recorder()
        C.set_hooks({"binary": rec})
        b = arr([True, False])
        assert b + b == "hooked"  # add rejects bool; Python decides (logical or)
        assert arr([1, 2], np.int32) ** arr([1, 2], np.int32) == "hooked"

    def test_hook_may_return_notimplemented(self):
        C.set_hooks({"binary": lambda *a: NotImplemented})
        with pytest.raises(TypeError):
            arr([1.0]) + object()

    def test_without_hooks(self):
        a = arr([1.0, 2.0], np.float32)
        with pytest.raises(TypeError):
            a + object()
        assert np.asarray(a @ a).tolist() == 5.0  # one float dtype, rank <= 2: in the binding
        with pytest.raises(TypeError):
            arr([1, 2], np.int32) @ arr([1, 2], np.int32)  # the rest is the hook's
        with pytest.raises(TypeError):
            ~a
        with pytest.raises(TypeError, match="add"):
            arr([True]) + arr([False])  # the core's dtype error
        assert (a == None) is False  # noqa: E711  (identity fallback)
        with pytest.raises(AttributeError, match="sum"):
            a.sum()
        assert not hasattr(a, "reshape")

    def test_item_hooks(self):
        a = arr([1.0, 2.0], np.float32)
        C.set_hooks(
            {
                "getitem": lambda s, i: ("get", s, i),
                "iter": lambda s: iter(["it"]),
                "getattr": lambda s, n: ("attr", n),
                "repr": lambda s: "REPR",
                "str": lambda s: "STR",
                "format": lambda s, spec: "FMT" + spec,
            }
        )
        assert a[1:] == ("get", a, slice(1, None))
        assert list(a) == ["it"]
        assert a.sum == ("attr", "sum")
        assert a._private == ("attr", "_private")
        with pytest.raises(AttributeError):
            a.__array_interface__  # dunders never reach the hook
        np.testing.assert_array_equal(np.asarray(a), [1.0, 2.0])
        assert a.shape == (2,)  # real attributes never reach the hook
        assert repr(a) == "REPR"
        assert str(a) == "STR"
        assert f"{a:>8}" == "FMT>8"

    def test_getattr_hook_attribute_error_propagates(self):
        def ga(s, name):
            raise AttributeError(f"no {name}")

        C.set_hooks({"getattr": ga})
        a = arr([1.0])
        with pytest.raises(AttributeError, match="no foo"):
            a.foo
        assert not hasattr(a, "bar")

    def test_set_hooks_validation(self):
        with pytest.raises(ValueError):
            C.set_hooks({"nope": lambda: None})
        with pytest.raises(TypeError):
            C.set_hooks({"binary": 3})
        C.set_hooks({"binary": len})
        assert C.get_hooks()["binary"] is len
        C.set_hooks({"binary": None})
        assert C.get_hooks()["binary"] is None

    def test_fallback_repr_str_format(self):
        a = arr([1.0, 2.5], np.float32)
        assert repr(a) == "Array([1. , 2.5], dtype=float32)"
        assert repr(C.scalar(3, "int32", True)) == "Array(3, dtype=int32, weak_type=True)"
        assert str(a) == str(np.array([1.0, 2.5], np.float32))
        assert f"{C.scalar(2.5, 'float32', False):.2f}" == "2.50"
        with pytest.raises(TypeError):
            iter(C.scalar(1, "int32", False))


# ----------------------------------------------------- trace counter, config
def test_trace_counter_never_underflows():
    base = C.trace_depth()
    assert C.trace_enter() == base + 1
    assert C.trace_depth() == base + 1
    assert C.trace_exit() == base
    if base == 0:
        assert C.trace_exit() == 0
        assert C.trace_depth() == 0


def test_x64_and_epoch():
    prev = C.get_x64()
    try:
        e0 = C.config_epoch()
        C.set_x64(not prev)
        assert C.get_x64() is (not prev)
        e1 = C.config_epoch()
        assert e1 > e0
        C.set_x64(not prev)  # unchanged: no bump
        assert C.config_epoch() == e1
        assert C.bump_epoch() == e1 + 1
        assert C.config_epoch() == e1 + 1
    finally:
        C.set_x64(prev)


def test_result_type(no_x64):
    assert C.result_type([("int32", True), ("float32", True)]) == ("float32", True)
    assert C.result_type([("uint8", False), ("int8", False)]) == ("int16", False)
    assert C.result_type([("bool", False), ("int32", True)]) == ("int32", True)
    assert C.result_type([("float16", False), ("float32", True)]) == ("float16", False)
    assert C.result_type([("int64", True), ("float64", True)]) == ("float32", True)
    assert C.result_type([("float32", False)]) == ("float32", False)
    with pytest.raises(ValueError):
        C.result_type([])
    with pytest.raises(ValueError):
        C.result_type([("float33", False)])
    # Complex dtypes promote as JAX's lattice says (weak complex Python scalars).
    assert C.result_type([("complex64", False)]) == ("complex64", False)
    assert C.result_type([("int32", False), ("complex64", True)]) == ("complex64", True)
    with pytest.raises(ValueError):
        C.result_type([("complex32", False)])


def test_result_type_x64(x64):
    assert C.result_type([("int32", True), ("float32", True)]) == ("float64", True)
    assert C.result_type([("bool", False), ("int8", True)]) == ("int64", True)


def test_primitive_names():
    names = C.primitive_names()
    for n in ["add", "sin", "reduce_sum", "dot_general", "pjit", "convert_element_type"]:
        assert n in names
    assert len(names) == len(set(names))


# --------------------------------------------------------------- conversions
ALL_NP = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
]
if ml_dtypes is not None:
    ALL_NP.append(ml_dtypes.bfloat16)


@pytest.mark.parametrize("dt", ALL_NP, ids=lambda d: np.dtype(d).name)
def test_from_numpy_round_trip(dt):
    base = (np.arange(24).reshape(2, 3, 4) % 5).astype(dt)
    views = [
        base,
        base[:, ::2, 1:],  # strided
        base.transpose(2, 0, 1),  # non-contiguous
        np.asfortranarray(base),
        base[0, 0, 0],  # rank 0 (numpy scalar -> asarray)
        base[:0],  # empty
    ]
    for v in views:
        a = C.from_numpy(v)
        assert a.dtype == np.dtype(dt)
        assert a.dtype_name == np.dtype(dt).name
        assert a.shape == np.shape(v)
        assert a.ndim == np.ndim(v)
        assert a.size == np.size(v)
        assert a.itemsize == np.dtype(dt).itemsize
        assert a.nbytes == np.size(v) * np.dtype(dt).itemsize
        assert a.weak_type is False
        back = np.asarray(a)
        assert back.dtype == np.dtype(dt)
        np.testing.assert_array_equal(back, np.asarray(v))
        assert back.flags.c_contiguous


def test_from_numpy_weak_and_byteorder():
    a = C.from_numpy(np.arange(3, dtype=">f4"), True)
    assert a.weak_type is True
    assert a.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(a), [0, 1, 2])
    b = C.from_numpy([1, 2, 3])  # a list goes through numpy.asarray
    assert b.shape == (3,)


def test_from_numpy_unsupported():
    with pytest.raises(TypeError, match="complex256"):
        C.from_numpy(np.zeros(2, np.clongdouble))
    z = C.from_numpy(np.array([1 + 2j, -3j], np.complex64))
    assert z.dtype == np.complex64 and z.tolist() == [1 + 2j, -3j]
    with pytest.raises(TypeError, match="object"):
        C.from_numpy(np.array([object()], dtype=object))
    with pytest.raises(TypeError, match="<U1|str"):
        C.from_numpy(np.array(["a"]))


def test_float0():
    a = C.from_numpy(np.zeros((2, 3), FLOAT0))
    assert a.dtype == FLOAT0
    assert a.dtype_name == "float0"
    assert a.shape == (2, 3)
    assert a.itemsize == 0 and a.nbytes == 0
    back = np.asarray(a)
    assert back.dtype == FLOAT0 and back.shape == (2, 3)


def test_array_protocol_views_and_copies():
    src = np.arange(4, dtype=np.float32)
    a = C.from_numpy(src)
    src[0] = 100  # from_numpy copied
    # np.asarray: a read-only view of the array's memory (as JAX), kept alive by its base
    out = np.asarray(a)
    assert out[0] == 0 and not out.flags.writeable
    assert type(out.base).__name__ == "HostView"
    with pytest.raises(ValueError, match="read-only"):
        out[1] = 50
    assert np.shares_memory(out, np.asarray(a))
    a.delete()
    del a
    np.testing.assert_array_equal(out, [0, 1, 2, 3])  # the view keeps the memory
    a = C.from_numpy(np.arange(4, dtype=np.float32))
    # copy=True and np.array: a fresh, writable array each time
    c = np.asarray(a, copy=True)
    c[1] = 50
    assert c.flags.writeable and np.asarray(a)[1] == 1
    assert not np.shares_memory(np.array(a), np.asarray(a))
    assert np.array(a, dtype=np.int64).dtype == np.int64
    assert a.__array__(np.float64).dtype == np.float64
    assert a.__array__(None, True).dtype == np.float32
    assert np.asarray(a, dtype=np.float32, copy=False).base is not None
    with pytest.raises(ValueError, match="avoid copy"):
        np.asarray(a, dtype=np.float64, copy=False)


def test_scalar_conversions():
    f = C.scalar(2.75, "float32", False)
    i = C.scalar(-3, "int32", True)
    b = C.scalar(True, "bool", False)
    assert f.shape == () and f.ndim == 0 and f.size == 1
    assert f.item() == 2.75 and type(f.item()) is float
    assert i.item() == -3 and type(i.item()) is int
    assert b.item() is True
    assert float(f) == 2.75 and int(f) == 2 and bool(f) is True
    assert int(i) == -3 and float(i) == -3.0
    assert [10, 20, 30, 40][C.scalar(2, "int32", False)] == 30
    assert i.__index__() == -3
    with pytest.raises(TypeError):
        [1, 2][f]
    with pytest.raises(TypeError):
        b.__index__()
    with pytest.raises(TypeError):
        arr([1], np.int32).__index__()
    assert int(arr([7], np.int32)) == 7  # size-1, rank 1
    assert bool(arr([[0.0]], np.float32)) is False
    with pytest.raises(ValueError):
        bool(arr([1.0, 2.0]))
    with pytest.raises(ValueError):
        bool(arr(np.zeros(0)))
    with pytest.raises(ValueError):
        arr([1.0, 2.0]).item()
    with pytest.raises(TypeError):
        float(arr([1.0, 2.0]))
    with pytest.raises(ValueError):
        int(C.scalar(float("nan"), "float32", False))
    u = C.scalar(2**64 - 1, "uint64", False)
    assert u.item() == 2**64 - 1
    assert C.scalar(300, "uint8", False).item() == 300 % 256


def test_tolist_len_hash_setitem():
    m = np.arange(6, dtype=np.int16).reshape(2, 3)
    a = C.from_numpy(m)
    assert a.tolist() == m.tolist()
    assert len(a) == 2
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(C.scalar(1, "int32", False))
    with pytest.raises(TypeError, match="unhashable type: 'ArrayImpl'"):
        hash(a)
    with pytest.raises(TypeError, match="immutable"):
        a[0] = 1
    assert a.block_until_ready() is a
    c = a.copy()
    assert c is not a and c.tolist() == a.tolist() and c.dtype == a.dtype
    d = copy.deepcopy(a)
    assert d.tolist() == a.tolist()
    w = C.from_numpy(np.ones(2, np.float32), True)
    p = pickle.loads(pickle.dumps(w))
    assert p.tolist() == [1.0, 1.0] and p.weak_type is True
    assert C.ArrayImpl.__array_priority__ == 100


def test_scalar_and_full():
    s = C.scalar(1.5, "float16", True)
    assert s.dtype == np.float16 and s.weak_type and s.shape == ()
    f = C.full((2, 3), 7, "int8", False)
    np.testing.assert_array_equal(np.asarray(f), np.full((2, 3), 7, np.int8))
    assert C.full((0,), 1.0, "float32").shape == (0,)
    z = C.full((2,), True, "float32", False)
    assert z.tolist() == [1.0, 1.0]
    with pytest.raises(ValueError):
        C.scalar(1, "float33", False)
    with pytest.raises(TypeError):
        C.scalar("1", "float32", False)
    assert C.scalar(1, "complex64", False).item() == 1 + 0j
    assert C.scalar(1.5 - 2j, "complex128", True).item() == 1.5 - 2j


@pytest.mark.skipif(ml_dtypes is None, reason="needs ml_dtypes")
def test_bfloat16_values():
    v = np.array([1.0, -2.5, 3.140625], ml_dtypes.bfloat16)
    a = C.from_numpy(v)
    assert a.dtype == np.dtype(ml_dtypes.bfloat16)
    assert np.asarray(a).tolist() == v.tolist()
    assert C.scalar(1.5, "bfloat16", False).item() == 1.5


# ----------------------------------------------------------------- Prim
def test_prim_params_round_trip():
    p = C.Prim(
        "broadcast_in_dim",
        {"shape": (2, 3), "broadcast_dimensions": [1], "sharding": object()},
    )
    assert p.name == "broadcast_in_dim"
    assert p.multiple_results is False
    assert p.params() == {"shape": (2, 3), "broadcast_dimensions": (1,)}
    assert repr(p) == "broadcast_in_dim"
    q = C.Prim("broadcast_in_dim", p.params())
    assert p == q and hash(p) == hash(q) and not (p != q)
    assert p != C.Prim("broadcast_in_dim", {"shape": (2, 4), "broadcast_dimensions": (1,)})
    assert C.Prim("add", {}) == C.Prim("add")
    assert C.Prim("add") != C.Prim("sub")
    assert (C.Prim("add") == 3) is False

    c = C.Prim("convert_element_type", {"new_dtype": np.float16, "weak_type": True})
    assert c.params() == {"new_dtype": np.dtype("float16"), "weak_type": True}
    assert C.Prim("convert_element_type", {"new_dtype": np.dtype("int8")}).params()[
        "new_dtype"
    ] == np.dtype("int8")
    assert C.Prim("convert_element_type", {"new_dtype": "uint16"}).params()["new_dtype"] == np.uint16

    d = C.Prim(
        "dot_general",
        {
            "dimension_numbers": (((1,), (0,)), ((), ())),
            "precision": None,
            "preferred_element_type": None,
            "out_sharding": None,
        },
    )
    assert d.params()["dimension_numbers"] == (((1,), (0,)), ((), ()))
    assert C.Prim("dot_general", d.params()) == d
    assert C.Prim("integer_pow", {"y": 3}).params() == {"y": 3}
    r = C.Prim("reduce_sum", {"axes": (0, 2), "out_sharding": None})
    assert r.params() == {"axes": (0, 2)}
    it = C.Prim("iota", {"dtype": np.int32, "shape": (4,), "dimension": 0, "sharding": None})
    assert it.params()["dtype"] == np.dtype("int32")


def test_prim_errors():
    with pytest.raises(ValueError, match="nope"):
        C.Prim("nope", {})
    with pytest.raises(ValueError):
        C.Prim("reduce_sum", {})  # missing axes
    with pytest.raises(ValueError):
        C.Prim("reduce_sum", {"axes": (-1,)})
    with pytest.raises(ValueError):
        C.Prim("integer_pow", {"y": 2**40})
    with pytest.raises(TypeError):
        C.Prim("reduce_sum", {"axes": object()})  # a key the primitive reads


def test_prim_abstract_eval_and_apply():
    add = C.Prim("add")
    out = add.abstract_eval([((3,), "float32", True), ((3,), "float32", True)])
    assert out == [((3,), "float32", True)]
    assert add.abstract_eval([((3,), "float32", True), ((), "float32", False)]) == [
        ((3,), "float32", False)
    ]
    with pytest.raises(TypeError):
        add.abstract_eval([((3,), "float32", False), ((4,), "float32", False)])
    with pytest.raises(TypeError):
        add.abstract_eval([((3,), "float32", False), ((3,), "int32", False)])
    with pytest.raises(TypeError):
        add.abstract_eval([((3,), "float32", False)])

    x = np.array([1.0, 2.0, 3.0], np.float32)
    (r,) = add.apply([arr(x, weak=True), arr(x, weak=True)])
    check(r, x + x, np.float32, weak=True)
    (r,) = add.apply([arr(x), arr(np.float32(2), weak=True)])
    check(r, x + 2, np.float32)
    (r,) = C.Prim("reduce_sum", {"axes": (0,)}).apply([arr(x)])
    check(r, 6.0, np.float32)
    (r,) = C.Prim("sin").apply([arr(x)])
    check(r, np.sin(x), np.float32)
    (r,) = C.Prim("convert_element_type", {"new_dtype": np.int32, "weak_type": False}).apply(
        [arr([1.7, -2.2], np.float32)]
    )
    check(r, [1, -2], np.int32)
    big = np.arange(100_000, dtype=np.float32)  # GIL-released path
    (r,) = C.Prim("mul").apply([arr(big), arr(big)])
    check(r, big * big, np.float32)
    with pytest.raises(TypeError):
        add.apply([arr(x), arr([1.0, 2.0], np.float32)])
    with pytest.raises(TypeError):
        add.apply([arr(x)])


# ----------------------------------------------------- Builder, ClosedJaxpr
def build_sin_mul():
    b = C.Builder()
    x = b.add_input((3,), "float32", False)
    assert isinstance(x, int)
    cst = b.add_const(C.from_numpy(np.array([1.0, 2.0, 3.0], np.float32), True))
    ((s, shape, dn, weak),) = b.add_eqn(C.Prim("sin"), [x], "f.py:3 (f)")
    assert (shape, dn, weak) == ((3,), "float32", False)
    ((m, *_),) = b.add_eqn(C.Prim("mul"), [s, (2.0, "float32", True)], None)
    ((t, *_),) = b.add_eqn(C.Prim("add"), [m, cst])
    assert b.aval(t) == ((3,), "float32", False)
    assert b.aval(cst) == ((3,), "float32", True)
    assert b.num_eqns() == 3
    return b.build([t, s, (1, "int32", True)]), (x, cst, s, m, t)


def test_builder_run_structure_display():
    j, (x, cst, s, m, t) = build_sin_mul()
    assert isinstance(j, C.ClosedJaxpr)
    assert j.num_eqns() == 3
    assert j.in_avals() == [((3,), "float32", False)]
    assert j.out_avals() == [
        ((3,), "float32", False),
        ((3,), "float32", False),
        ((), "int32", True),
    ]
    (c,) = j.consts()
    assert c.weak_type is True and c.tolist() == [1.0, 2.0, 3.0]
    v = np.array([0.5, 1.0, -2.0], np.float32)
    outs = j.run([arr(v)])
    assert len(outs) == 3
    check(outs[0], np.sin(v) * 2 + [1, 2, 3], np.float32)
    check(outs[1], np.sin(v), np.float32)
    check(outs[2], 1, np.int32, weak=True)

    avals, constvars, invars, eqns, outvars = j.structure()
    assert constvars == [cst] and invars == [x]
    assert avals[t] == ((3,), "float32", False)
    assert [e[0].name for e in eqns] == ["sin", "mul", "add"]
    prim, ins, outs_, src, eff = eqns[1]
    assert isinstance(prim, C.Prim)
    assert ins == [s, (2.0, "float32", True)] and outs_ == [m]
    assert eqns[0][3] == "f.py:3 (f)" and src is None and eff == "none"
    assert outvars == [t, s, (1, "int32", True)]

    text = j.display()
    assert "sin" in text and "mul" in text and "lambda" in text
    assert str(j) == text
    canon = j.canonical()
    with pytest.raises(ValueError):
        C.parse(canon)  # constvars need their values
    j2 = C.parse(canon, j.consts())
    assert j2 == j and hash(j2) == hash(j) and not (j2 != j)
    assert j2.canonical() == canon
    j3 = C.parse(canon, [C.from_numpy(np.zeros(3, np.float32), True)])
    assert j3 != j and j3.run([arr(v)])[1].tolist() == outs[1].tolist()
    k = C.parse(identity3().canonical())
    assert k == identity3() and k.in_avals() == [((2,), "float32", False)] * 3
    with pytest.raises(ValueError):
        C.parse("this is not a jaxpr")


def test_boundary_records_read_by_field():
    j, (x, cst, s, m, t) = build_sin_mul()
    (a,) = j.in_avals()
    assert isinstance(a, C.Aval)
    assert (a.shape, a.dtype_name, a.weak_type) == ((3,), "float32", False)
    st = j.structure()
    assert isinstance(st, C.JaxprStructure)
    assert st.invars == [x] and st.constvars == [cst] and st.avals[t].shape == (3,)
    e = st.eqns[1]
    assert isinstance(e, C.Eqn)
    assert e.prim.name == "mul" and e.outputs == [m] and e.effect == "none" and e.source is None
    lit = e.inputs[1]
    assert isinstance(lit, C.Literal)
    assert (lit.value, lit.dtype_name, lit.weak_type) == (2.0, "float32", True)
    b = C.Builder()
    y = b.add_input((2,), "int32")
    (out,) = b.add_eqn(C.Prim("neg"), [y])
    assert isinstance(out, C.StagedVar)
    assert (out.shape, out.dtype_name, out.weak_type) == ((2,), "int32", False)
    assert b.aval(out.var) == C.Aval((2,), "int32", False)
    assert C.Aval((2,), "int32", False) != C.Aval((2,), "int32", True)
    assert hash(C.Aval((2,), "int32", False)) == hash(((2,), "int32", False))
    (total,) = b.add_eqn(C.Prim("add"), [out.var, C.Literal(1, "int32", True)])
    assert b.aval(total.var).shape == (2,)
    assert repr(C.Aval((), "float32", True)) == "Aval(shape=(), dtype_name='float32', weak_type=True)"
    with pytest.raises(TypeError):
        C.Prim("neg").abstract_eval([C.Aval((2,), 5, False)])


def test_trace_base_typed_fields():
    from microjax_rs import core

    t = core.StagingTrace("f")
    assert isinstance(t, C.TraceBase) and isinstance(t.builder, C.Builder)
    assert t.alive and t.record_source and not t.native
    assert t.captures == [] and t.known == {} and t.eqn_of == {}
    t.alive = False
    t.native = True
    assert not t.alive and t.native
    with pytest.raises(AttributeError):
        t.builder = C.Builder()
    assert core.StagingTrace("g").builder is not t.builder


def test_rewire_inputs_takes_input_sources():
    # Program: out = (input0 - const0) * input1, with const0 = [10, 20].
    b = C.Builder()
    x = b.add_input((2,), "float32", False)
    y = b.add_input((2,), "float32", False)
    c = b.add_const(arr([10.0, 20.0], np.float32))
    ((d, *_),) = b.add_eqn(C.Prim("sub"), [x, c])
    ((out, *_),) = b.add_eqn(C.Prim("mul"), [d, y])
    prog = b.build([out])
    S = C.InputSource
    # New order: the const first, then the inputs swapped, then an unused input.
    spec = [S.Const(0), S.Input(1), S.Input(0), S.Unused(C.Aval((3,), "int32", False))]
    rewired = prog.rewire_inputs(spec)
    assert [tuple(a) for a in rewired.in_avals()] == [
        ((2,), "float32", False), ((2,), "float32", False), ((2,), "float32", False),
        ((3,), "int32", False)]
    assert rewired.consts() == []
    (res,) = rewired.run([arr([1.0, 2.0], np.float32), arr([3.0, 4.0], np.float32),
                          arr([5.0, 7.0], np.float32), arr([0, 0, 0], np.int32)])
    assert res.tolist() == [(5.0 - 1.0) * 3.0, (7.0 - 2.0) * 4.0]
    assert isinstance(S.Input(2), S) and S.Input(2).index == 2
    with pytest.raises(TypeError):
        prog.rewire_inputs([("in", 0), ("in", 1)])
    with pytest.raises(ValueError, match="no input 5"):
        prog.rewire_inputs([S.Input(5), S.Input(1)])


def test_ad_records_are_staged_eqns():
    import microjax_rs as jax
    from microjax_rs import core
    from microjax_rs.interpreters import ad

    seen = {}

    def f(x):
        y = jax.numpy.sin(x) * 2.0
        seen["trace"] = core.current_trace()
        seen["y"] = y
        return y

    trace, closed, outs, aux, inputs = ad.trace_ad(
        lambda ts: ([f(ts[0])], None), [jax.numpy.float32(0.5)], "f")
    assert trace is seen["trace"] and not trace.alive and aux is None
    assert len(inputs) == 1 and float(inputs[0]) == 0.5
    records = list(trace.eqn_of.values())
    assert records and all(type(r) is C.StagedEqn for r in records)
    rec = trace.eqn_of[seen["y"]._var]
    assert rec.prim.name == "mul" and rec.outvars == (seen["y"]._var,)
    assert len(rec.args) == 2 and rec.params == {}
    prim, params, args, outvars = rec  # reads as its fields in order
    assert (prim, params, args, outvars) == (rec.prim, rec.params, rec.args, rec.outvars)
    # The lazily known value of the output is evaluated from the records.
    assert np.isclose(float(trace.known_value(seen["y"])), 2.0 * np.sin(0.5))


def test_trace_ad_restores_the_stack_on_errors():
    import microjax_rs as jax
    from microjax_rs import core
    from microjax_rs.interpreters import ad

    depth = C.trace_depth()
    stack = list(core._state.stack)

    def boom(ts):
        raise KeyError("inside the trace")

    with pytest.raises(KeyError, match="inside the trace"):
        ad.trace_ad(boom, [jax.numpy.float32(1.0)], "boom")
    assert C.trace_depth() == depth and core._state.stack == stack
    # The eager grad lane too (its output check raises inside the trace).
    with pytest.raises(TypeError, match="scalar-output"):
        jax.grad(lambda x: x * x)(jax.numpy.ones(3))
    assert C.trace_depth() == depth and core._state.stack == stack
    assert float(jax.grad(lambda x: x * x)(jax.numpy.float32(3.0))) == 6.0


def test_register_hooks_once_each():
    # Import registered every hook; a second registration and an unknown
    # name are errors, and the registered ones stay in use.
    with pytest.raises(RuntimeError, match="already registered"):
        C.register_hooks(to_atom=lambda *a: None)
    with pytest.raises(RuntimeError, match="already registered"):
        C.register_hooks(grad=(None, [], None, None))
    with pytest.raises(ValueError, match="unknown hook"):
        C.register_hooks(no_such_hook=print)
    import microjax_rs as jax

    assert float(jax.grad(lambda x: x * x)(3.0)) == 6.0


def test_builder_errors():
    b = C.Builder()
    x = b.add_input((3,), "float32")
    y = b.add_input((4,), "float32")
    with pytest.raises(TypeError):
        b.add_eqn(C.Prim("add"), [x, y])
    with pytest.raises(TypeError):
        b.add_eqn(C.Prim("add"), [x])
    with pytest.raises(ValueError):
        b.add_eqn(C.Prim("neg"), [99])
    with pytest.raises(ValueError):
        b.aval(99)
    with pytest.raises(TypeError):
        b.add_eqn(C.Prim("neg"), ["x"])
    with pytest.raises(ValueError):
        b.build([42])
    with pytest.raises(ValueError):
        b.add_input((2,), "notadtype")
    j = b.build([x])
    with pytest.raises(TypeError):
        j.run([])  # arity


def test_pjit_param_is_jaxpr_handle():
    j, _ = build_sin_mul()

    class Wrapper:
        _handle = j

    p = C.Prim("pjit", {"jaxpr": Wrapper(), "name": "f", "keep_unused": False, "inline": False})
    assert p.multiple_results is True
    params = p.params()
    assert isinstance(params["jaxpr"], C.ClosedJaxpr) and params["jaxpr"] == j
    assert params["name"] == "f"
    assert C.Prim("pjit", params) == p
    outs = p.apply([arr([0.0, 0.0, 0.0], np.float32)])
    assert [o.tolist() for o in outs[:2]] == [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]
    assert outs[2].weak_type is True
    assert p.abstract_eval([((3,), "float32", False)])[0] == ((3,), "float32", False)


# ----------------------------------------------------------------- JitFunction
def identity3():
    b = C.Builder()
    ids = [b.add_input((2,), "float32", False) for _ in range(3)]
    return b.build(ids)


def tree_of(example):
    """The treedef of `example` (the out_tree a jitted call records)."""
    from microjax_rs.tree_util import tree_structure

    return tree_structure(example)


LEAF = 0
TUPLE3 = (LEAF, LEAF, LEAF)


class TestJit:
    def make(self):
        calls = []

        def f(*args, **kwargs):
            calls.append((args, kwargs))
            return "fallback"

        return C.JitFunction(f), calls

    def test_hit_miss_and_specs(self):
        jf, calls = self.make()
        x = arr([1.0, 2.0], np.float32)
        y = arr([3.0, 4.0], np.float32)
        assert jf(x, y, x) == "fallback" and len(calls) == 1
        assert jf._cache_insert([x, y, x], identity3(), tree_of(TUPLE3)) is True
        assert jf._cache_size() == 1
        out = jf(x, y, y)
        assert len(calls) == 1
        assert isinstance(out, tuple) and len(out) == 3
        assert [o.tolist() for o in out] == [[1.0, 2.0], [3.0, 4.0], [3.0, 4.0]]
        assert all(isinstance(o, C.ArrayImpl) and not o.weak_type for o in out)
        # Misses: other shape, dtype, weak type, arity, kwargs, non-arrays.
        assert jf(x, y, arr([1.0, 2.0, 3.0], np.float32)) == "fallback"
        assert jf(x, y, arr([1, 2], np.int32)) == "fallback"
        assert jf(x, y, arr([1.0, 2.0], np.float32, weak=True)) == "fallback"
        assert jf(x, y) == "fallback"
        assert jf(x, y, x, k=1) == "fallback" and calls[-1][1] == {"k": 1}
        assert jf(x, y, np.ones(2, np.float32)) == "fallback"
        assert len(calls) == 7
        with trace_active():
            assert jf(x, y, x) == "fallback"
        assert len(calls) == 8
        assert isinstance(jf(x, x, x), tuple)

        # Leaves fill a dict in its treedef's (sorted) key order.
        spec = tree_of({"b": [LEAF, None], "a": (LEAF, LEAF)})
        jf._cache_insert([x, y, x], identity3(), spec)
        assert jf._cache_size() == 1  # same key replaced
        out = jf(x, y, x)
        assert list(out) == ["a", "b"]
        assert [o.tolist() for o in out["a"]] == [[1.0, 2.0], [3.0, 4.0]]
        assert out["b"][0].tolist() == [1.0, 2.0] and out["b"][1] is None

        b = C.Builder()
        i = b.add_input((2,), "float32", True)
        one = b.build([i])
        w = arr([5.0, 6.0], np.float32, weak=True)
        jf._cache_insert([w], one, tree_of(LEAF))
        r = jf(w)
        assert isinstance(r, C.ArrayImpl) and r.weak_type is True and r.tolist() == [5.0, 6.0]
        assert jf._cache_size() == 2
        jf._cache_clear()
        assert jf._cache_size() == 0
        assert jf(w) == "fallback"

    def test_epoch_change_misses(self):
        jf, calls = self.make()
        x = arr([1.0, 2.0], np.float32)
        jf._cache_insert([x, x, x], identity3(), tree_of(TUPLE3))
        assert isinstance(jf(x, x, x), tuple)
        C.bump_epoch()
        assert jf(x, x, x) == "fallback"
        jf._cache_insert([x, x, x], identity3(), tree_of(TUPLE3))
        assert isinstance(jf(x, x, x), tuple)

    def test_insert_validation(self):
        jf, _ = self.make()
        x = arr([1.0, 2.0], np.float32)
        with pytest.raises(ValueError):
            jf._cache_insert([x, x, x], identity3(), tree_of(LEAF))  # 1 leaf, 3 outputs
        with pytest.raises(ValueError):
            jf._cache_insert([x, x, x], identity3(), tree_of((LEAF, LEAF)))
        with pytest.raises(ValueError):
            jf._cache_insert([x, x], identity3(), tree_of(TUPLE3))
        with pytest.raises(ValueError):
            jf._cache_insert([x, x, arr([1, 2], np.int32)], identity3(), tree_of(TUPLE3))
        with pytest.raises(TypeError):
            jf._cache_insert([x, x, x], "not a jaxpr", tree_of(TUPLE3))
        with pytest.raises(AttributeError):  # not a treedef
            jf._cache_insert([x, x, x], identity3(), ("tuple", [-1, -1, -1]))
        # A node type the fast path does not rebuild (a namedtuple): nothing cached.
        triple = collections.namedtuple("triple", "a b c")
        assert jf._cache_insert([x, x, x], identity3(), tree_of(triple(LEAF, LEAF, LEAF))) is False
        assert jf._cache_size() == 0

    def test_wrapper_and_methods(self):
        def f(self_, v):
            return ("called", self_, v)

        jf = C.JitFunction(f)
        functools.update_wrapper(jf, f)
        assert jf.__name__ == "f" and jf.__wrapped__ is f
        assert "f" in repr(jf)

        class A:
            m = jf

        a = A()
        assert A.m is jf
        bound = a.m
        assert bound(3) == ("called", a, 3)
        assert jf.__get__(None, A) is jf
        with pytest.raises(TypeError):
            C.JitFunction(3)

    def test_program_with_computation(self):
        b = C.Builder()
        x = b.add_input((2,), "float32", False)
        ((y, *_),) = b.add_eqn(C.Prim("mul"), [x, x])
        prog = b.build([y, (2.0, "float32", True)])
        jf = C.JitFunction(lambda *a: "fallback")
        v = arr([3.0, -1.0], np.float32)
        jf._cache_insert([v], prog, tree_of([LEAF, LEAF]))
        out = jf(v)
        assert isinstance(out, list)
        check(out[0], [9.0, 1.0], np.float32)
        check(out[1], 2.0, np.float32, weak=True)
        big = arr(np.ones(50_000, np.float32))
        b = C.Builder()
        x = b.add_input((50_000,), "float32", False)
        ((y, *_),) = b.add_eqn(C.Prim("add"), [x, x])
        jf._cache_insert([big], b.build([y]), tree_of(LEAF))
        assert jf(big).tolist()[:2] == [2.0, 2.0]
