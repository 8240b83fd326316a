"""The operator table: one record per primitive / public function.

Every check in the project (eager values against NumPy, jit against eager,
and later grad / vmap) is driven from this table, so adding an operator to
microjax_rs means adding one record here.

A record names the microjax callable by a dotted path on the `microjax_rs`
package ("lax.add", "numpy.sin"), resolved lazily so that a missing function
fails its own tests instead of the whole module. The reference is a NumPy
callable with the *same signature*; it receives NumPy arrays.

A record's ``cases`` are (shapes, static positional args, static kwargs)
triples. Array arguments come first (made by ``args_maker`` from the case's
shapes and the dtype under test), then the static positional args, then the
static kwargs. The value ``DTYPE`` inside static args/kwargs is replaced by
the NumPy dtype under test (for creation functions such as ``zeros``).

Expected dtype: the NumPy reference's result dtype, canonicalized the way JAX
does (64-bit -> 32-bit unless x64 is on), unless the record gives
``out_dtype``. Expected values: the reference run on the inputs upcast to
float64 (float inputs only; integer/bool semantics such as wrapping stay in
their own dtype), cast to the expected dtype, compared with the per-dtype
tolerance.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import zlib
from typing import Any, Callable, Optional, Sequence

import numpy as np

try:  # bfloat16 is optional.
    import ml_dtypes

    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    ml_dtypes = None
    _BFLOAT16 = None


class _DtypeSentinel:
    def __repr__(self):
        return "DTYPE"


DTYPE = _DtypeSentinel()

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        if _BFLOAT16 is None:
            raise LookupError("bfloat16 needs ml_dtypes")
        return _BFLOAT16
    return np.dtype(name)


def is_float(dt) -> bool:
    dt = np.dtype(dt)
    return dt == _BFLOAT16 or np.issubdtype(dt, np.floating)


def canonicalize_dtype(dt, x64: bool) -> np.dtype:
    """JAX's canonical dtype: 64-bit types become 32-bit unless x64 is on."""
    dt = np.dtype(dt)
    if x64:
        return dt
    return {
        np.dtype("float64"): np.dtype("float32"),
        np.dtype("int64"): np.dtype("int32"),
        np.dtype("uint64"): np.dtype("uint32"),
    }.get(dt, dt)


def x64_enabled() -> bool:
    """Whether microjax_rs runs with 64-bit types (config `jax_enable_x64`)."""
    import microjax_rs

    return bool(microjax_rs.config.read("jax_enable_x64"))


def default_float(x64: bool) -> np.dtype:
    return np.dtype("float64") if x64 else np.dtype("float32")


# Tolerances (rtol, atol) per dtype name; integer and bool results are exact.
DEFAULT_TOL = {
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    "float32": (2e-6, 1e-6),
    "float64": (1e-13, 1e-14),
}
# Transcendental functions: a few ulp from a SIMD math library.
TRANSCENDENTAL_TOL = {
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-13),
}
# Sums and dot products: summation order differs from NumPy's pairwise sum.
ACCUM_TOL = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-12, 1e-12),
}


# ----------------------------------------------------------------- arg makers


def _rand(rng: np.random.Generator, shape, dtype: np.dtype, lo, hi):
    """Uniform values in [lo, hi) of `dtype` and `shape` (ints: [lo, hi))."""
    shape = tuple(shape)
    if dtype == np.dtype(bool):
        return rng.integers(0, 2, size=shape).astype(bool)
    if is_float(dtype):
        return rng.uniform(lo, hi, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    lo_i, hi_i = max(int(np.ceil(lo)), info.min), min(int(np.floor(hi)), info.max)
    return rng.integers(lo_i, hi_i, size=shape, endpoint=True).astype(dtype)


def uniform(lo=-3.0, hi=3.0):
    """Every array argument uniform in [lo, hi] (unsigned ints: clipped at 0)."""

    def make(rng, shapes, dtype):
        return [_rand(rng, s, dtype, lo, hi) for s in shapes]

    make.__name__ = f"uniform({lo}, {hi})"
    return make


def positive(lo=0.1, hi=4.0):
    return uniform(lo, hi)


def nonzero_second(lo=-5.0, hi=5.0):
    """Two arguments, the second with no zeros (divisors)."""

    def make(rng, shapes, dtype):
        a = _rand(rng, shapes[0], dtype, lo, hi)
        b = _rand(rng, shapes[1], dtype, 1, hi)
        if not np.issubdtype(dtype, np.unsignedinteger):
            sign = np.where(rng.integers(0, 2, size=b.shape) == 1, 1, -1).astype(dtype)
            b = (b * sign).astype(dtype)
        return [a, b]

    return make


def nonzero(lo=0.25, hi=3.0):
    """Values with |x| in [lo, hi], random sign."""

    def make(rng, shapes, dtype):
        out = []
        for s in shapes:
            mag = _rand(rng, s, dtype, lo, hi)
            sign = np.where(rng.integers(0, 2, size=tuple(s)) == 1, 1, -1).astype(dtype)
            out.append((mag * sign).astype(dtype))
        return out

    return make


def pred_and_cases(n_cases: int):
    """`select_n`/`where`: a predicate (bool for two cases, int32 otherwise) then cases."""

    def make(rng, shapes, dtype):
        pshape, *cshapes = shapes
        if n_cases == 2:
            pred = rng.integers(0, 2, size=tuple(pshape)).astype(bool)
        else:
            pred = rng.integers(0, n_cases, size=tuple(pshape)).astype(np.int32)
        return [pred] + [_rand(rng, s, dtype, -3, 3) for s in cshapes]

    return make


def no_args(rng, shapes, dtype):
    return []


# ----------------------------------------------------------------- records


@dataclasses.dataclass(frozen=True)
class Case:
    shapes: tuple = ()
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)

    def label(self) -> str:
        shapes = ",".join("x".join(map(str, s)) if s else "0d" for s in self.shapes)
        extra = [_fmt(a) for a in self.args] + [f"{k}={_fmt(v)}" for k, v in self.kwargs.items()]
        txt = f"({shapes})"
        if extra:
            txt += "|" + ",".join(extra)
        return txt.replace(" ", "")


def _fmt(value) -> str:
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    return repr(value)


def cases_from_shapes(shapes: Sequence[tuple], *args, **kwargs) -> tuple:
    return tuple(Case(tuple(s), tuple(args), dict(kwargs)) for s in shapes)


@dataclasses.dataclass(frozen=True)
class OpErr:
    """A bad input: `fn(*arrays, *args, **kwargs)` raises `exc` with `match`
    in its message, eagerly and under jit (the arrays are traced there)."""

    arrays: tuple
    kwargs: dict
    exc: type
    match: str
    args: tuple = ()
    # Where it is checked: eagerly and/or under jit (a data-dependent output
    # shape is only an error when traced).
    modes: tuple = ("eager", "jit")


@dataclasses.dataclass(frozen=True)
class OpRecord:
    name: str  # also the dotted path on microjax_rs unless `path` is given
    ref: Callable
    args_maker: Callable
    dtypes: tuple
    cases: tuple
    tol: dict = dataclasses.field(default_factory=lambda: DEFAULT_TOL)
    path: Optional[str] = None
    # Expected result dtype from (input dtype, x64) when NumPy's differs from JAX's.
    out_dtype: Optional[Callable[[np.dtype, bool], np.dtype]] = None
    # Compute float references in float64 (then cast); False: in the input dtype.
    upcast: bool = True
    # Metadata for the transform hooks (grad / vmap).
    differentiable: bool = True
    # Which argument positions are batched / differentiated by default.
    notes: str = ""
    # Adapts the resolved function to take the arrays positionally (e.g.
    # `lax.concatenate`, which takes a list).
    adapt: Optional[Callable[[Callable], Callable]] = None
    # Bad inputs and the exception each raises (tests/test_op_table.py: test_errors).
    errors: tuple = ()
    # For results with no NumPy reference (random draws): a predicate on the
    # values (raises AssertionError); `ref` then only gives shape and dtype.
    check: Optional[Callable[[np.ndarray], None]] = None

    @property
    def dotted(self) -> str:
        return self.path or self.name

    def resolve(self) -> Callable:
        fn = resolve(self.dotted)
        return self.adapt(fn) if self.adapt is not None else fn


@functools.lru_cache(maxsize=None)
def resolve(dotted: str) -> Callable:
    """`"lax.add"` -> `microjax_rs.lax.add` (imports submodules as needed)."""
    obj: Any = importlib.import_module("microjax_rs")
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
        else:
            obj = importlib.import_module("microjax_rs." + ".".join(parts[: i + 1]))
    return obj


def substitute_dtype(value, dtype: np.dtype):
    if value is DTYPE:
        return dtype
    if isinstance(value, tuple):
        return tuple(substitute_dtype(v, dtype) for v in value)
    if isinstance(value, list):
        return [substitute_dtype(v, dtype) for v in value]
    if isinstance(value, dict):
        return {k: substitute_dtype(v, dtype) for k, v in value.items()}
    return value


def case_seed(rec: OpRecord, dtype: str, case: Case) -> int:
    return zlib.crc32(f"{rec.name}|{dtype}|{case.label()}".encode())


def make_inputs(rec: OpRecord, dtype_name: str, case: Case):
    """(arrays, static args, static kwargs) for one test case, deterministic."""
    dt = np_dtype(dtype_name)
    rng = np.random.default_rng(case_seed(rec, dtype_name, case))
    arrays = rec.args_maker(rng, case.shapes, dt)
    args = substitute_dtype(case.args, dt)
    kwargs = substitute_dtype(case.kwargs, dt)
    return arrays, args, kwargs


def _upcast(a):
    a = np.asarray(a)
    if is_float(a.dtype) and a.dtype != np.float64:
        return a.astype(np.float64)
    return a


def reference(rec: OpRecord, dtype_name: str, arrays, args, kwargs, x64: bool) -> np.ndarray:
    """The expected result (value and exact dtype) of one case."""
    with np.errstate(all="ignore"):
        raw = np.asarray(rec.ref(*arrays, *args, **kwargs))
    if rec.out_dtype is not None:
        want = np.dtype(rec.out_dtype(np_dtype(dtype_name), x64))
    else:
        want = canonicalize_dtype(raw.dtype, x64)
    if rec.upcast and any(is_float(np.asarray(a).dtype) for a in arrays):
        with np.errstate(all="ignore"):
            value = np.asarray(rec.ref(*[_upcast(a) for a in arrays], *args, **kwargs))
    else:
        value = raw
    with np.errstate(all="ignore"):
        return value.astype(want)


def tolerance(rec: OpRecord, dtype: np.dtype):
    dt = np.dtype(dtype)
    name = "bfloat16" if dt == _BFLOAT16 else dt.name
    return rec.tol.get(name, (0.0, 0.0))


# ----------------------------------------------------------------- references


def _lax_div(a, b):
    if is_float(a.dtype):
        return a / b
    # C-style division: truncate toward zero.
    q = np.abs(a) // np.abs(b)
    return (q * np.sign(a) * np.sign(b)).astype(a.dtype)


def _logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def _integer_pow(x, y):
    if y >= 0:
        return (x**y).astype(x.dtype)
    return (1 / (x ** (-y))).astype(x.dtype)


def _select_n(pred, *cases):
    pred = np.asarray(pred)
    idx = pred.astype(np.int64)
    return np.choose(idx, np.broadcast_arrays(*cases)) if pred.ndim else cases[int(idx)].copy()


def _broadcast_in_dim(x, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape).copy()


def _squeeze(x, dimensions):
    return np.squeeze(x, axis=tuple(dimensions))


def _reduce_sum(x, axes):
    return np.sum(x, axis=tuple(axes), dtype=x.dtype)


def _reduce_max(x, axes):
    if is_float(x.dtype):
        init = -np.inf
    elif x.dtype == bool:
        init = False
    else:
        init = np.iinfo(x.dtype).min
    return np.max(x, axis=tuple(axes), initial=init)


def _dot_general(lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lhs_sub = [None] * lhs.ndim
    rhs_sub = [None] * rhs.ndim
    batch = []
    for i, j in zip(lb, rb):
        c = next(letters)
        lhs_sub[i] = rhs_sub[j] = c
        batch.append(c)
    for i, j in zip(lc, rc):
        c = next(letters)
        lhs_sub[i] = rhs_sub[j] = c
    lfree = []
    for i in range(lhs.ndim):
        if lhs_sub[i] is None:
            lhs_sub[i] = next(letters)
            lfree.append(lhs_sub[i])
    rfree = []
    for j in range(rhs.ndim):
        if rhs_sub[j] is None:
            rhs_sub[j] = next(letters)
            rfree.append(rhs_sub[j])
    spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(batch + lfree + rfree)}"
    out_dtype = np.result_type(lhs.dtype, rhs.dtype)
    if is_float(out_dtype):
        return np.einsum(spec, lhs, rhs)
    return np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64)).astype(out_dtype)


def _iota(dtype, size):
    return np.arange(size).astype(dtype)


def _inexact_out(dt: np.dtype, x64: bool) -> np.dtype:
    """jnp transcendental of an int/bool input: JAX's default float type."""
    return canonicalize_dtype(dt, x64) if is_float(dt) else default_float(x64)


# ----------------------------------------------------------------- shapes

UNARY_SHAPES = ((), (0,), (5,), (3, 4))
BINARY_SHAPES = (
    ((), ()),
    ((0,), (0,)),
    ((5,), (5,)),
    ((3, 4), (3, 4)),
    # rank-0 against an array: the operand contract allows it.
    ((), (3, 4)),
    ((3, 4), ()),
)
# Shapes for jnp functions that broadcast.
BROADCAST_SHAPES = BINARY_SHAPES + (
    ((3, 4), (4,)),
    ((3, 1), (1, 4)),
    ((2, 1, 4), (3, 1)),
    ((0, 4), (1, 4)),
)

F = ("float32", "float64", "float16")
F32_F64 = ("float32", "float64")
NUM = ("float32", "float64", "float16", "int32")
NUM_NO_F16 = ("float32", "float64", "int32")


def _unary_lax(name, ref, maker=None, dtypes=F, tol=TRANSCENDENTAL_TOL, **kw):
    return OpRecord(
        name=f"lax.{name}",
        ref=ref,
        args_maker=maker or uniform(),
        dtypes=dtypes,
        cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]),
        tol=tol,
        **kw,
    )


def _binary_lax(name, ref, maker=None, dtypes=NUM, **kw):
    return OpRecord(
        name=f"lax.{name}",
        ref=ref,
        args_maker=maker or uniform(),
        dtypes=dtypes,
        cases=cases_from_shapes(BINARY_SHAPES),
        **kw,
    )


def _unary_jnp(name, ref, maker=None, dtypes=("float32", "float64", "float16", "int32"), **kw):
    return OpRecord(
        name=f"numpy.{name}",
        ref=ref,
        args_maker=maker or uniform(),
        dtypes=dtypes,
        cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]),
        tol=TRANSCENDENTAL_TOL,
        out_dtype=_inexact_out,
        **kw,
    )


_DOT_GENERAL_CASES = (
    Case(((3, 4), (4, 5)), (), {"dimension_numbers": (((1,), (0,)), ((), ()))}),
    Case(((4,), (4,)), (), {"dimension_numbers": (((0,), (0,)), ((), ()))}),
    Case(((3,), (4,)), (), {"dimension_numbers": (((), ()), ((), ()))}),
    Case(((4, 3), (4, 5)), (), {"dimension_numbers": (((0,), (0,)), ((), ()))}),
    Case(((2, 3, 4), (2, 4, 5)), (), {"dimension_numbers": (((2,), (1,)), ((0,), (0,)))}),
    Case(((0, 4), (4, 5)), (), {"dimension_numbers": (((1,), (0,)), ((), ()))}),
    Case(((3, 0), (0, 5)), (), {"dimension_numbers": (((1,), (0,)), ((), ()))}),
)

OP_RECORDS: tuple = (
    # ---- lax: elementwise binary (equal dtypes; equal shapes or rank-0)
    _binary_lax("add", np.add),
    _binary_lax("sub", np.subtract),
    _binary_lax("mul", np.multiply),
    _binary_lax("div", _lax_div, maker=nonzero_second(), dtypes=NUM),
    _binary_lax("max", np.maximum, dtypes=NUM + ("bool",)),
    _binary_lax("min", np.minimum, dtypes=NUM + ("bool",)),
    _binary_lax("pow", np.power, maker=positive(0.5, 2.0), dtypes=F, tol=TRANSCENDENTAL_TOL),
    # ---- lax: comparisons -> bool
    _binary_lax("eq", np.equal, dtypes=NUM + ("bool",), differentiable=False),
    _binary_lax("ne", np.not_equal, dtypes=NUM + ("bool",), differentiable=False),
    _binary_lax("lt", np.less, differentiable=False),
    _binary_lax("le", np.less_equal, differentiable=False),
    _binary_lax("gt", np.greater, differentiable=False),
    _binary_lax("ge", np.greater_equal, differentiable=False),
    # ---- lax: elementwise unary
    _unary_lax("neg", np.negative, dtypes=NUM, tol=DEFAULT_TOL),
    _unary_lax("exp", np.exp),
    _unary_lax("log", np.log, maker=positive()),
    _unary_lax("sin", np.sin),
    _unary_lax("cos", np.cos),
    _unary_lax("tanh", np.tanh),
    _unary_lax("logistic", _logistic, maker=uniform(-6.0, 6.0)),
    _unary_lax("sqrt", np.sqrt, maker=positive(0.0, 9.0)),
    _unary_lax("abs", np.abs, dtypes=NUM, tol=DEFAULT_TOL),
    _unary_lax("sign", np.sign, dtypes=NUM, tol=DEFAULT_TOL, differentiable=False),
    OpRecord(
        name="lax.integer_pow",
        ref=_integer_pow,
        args_maker=uniform(-2.0, 2.0),
        dtypes=NUM,
        cases=cases_from_shapes([(s,) for s in UNARY_SHAPES], y=2)
        + cases_from_shapes([((5,),), ((3, 4),)], y=3)
        + cases_from_shapes([((3, 4),)], y=0)
        + cases_from_shapes([((3, 4),)], y=1),
    ),
    OpRecord(
        name="lax.integer_pow[neg]",
        path="lax.integer_pow",
        ref=_integer_pow,
        args_maker=nonzero(0.5, 2.0),
        dtypes=F,
        cases=cases_from_shapes([((5,),), ((3, 4),)], y=-2),
        tol=TRANSCENDENTAL_TOL,
    ),
    # ---- lax: select / conversion / structure
    OpRecord(
        name="lax.select_n",
        ref=_select_n,
        args_maker=pred_and_cases(2),
        dtypes=NUM + ("bool",),
        cases=cases_from_shapes([((), (), ()), ((5,), (5,), (5,)), ((3, 4), (3, 4), (3, 4)), ((), (3, 4), (3, 4)), ((0,), (0,), (0,))]),
    ),
    OpRecord(
        name="lax.select_n[3]",
        path="lax.select_n",
        ref=_select_n,
        args_maker=pred_and_cases(3),
        dtypes=("float32", "int32"),
        cases=cases_from_shapes([((5,), (5,), (5,), (5,)), ((3, 4), (3, 4), (3, 4), (3, 4))]),
    ),
    OpRecord(
        name="lax.convert_element_type",
        ref=lambda x, new_dtype: x.astype(new_dtype),
        args_maker=uniform(-5.0, 5.0),
        dtypes=("float32", "int32", "bool", "float16", "float64"),
        cases=tuple(
            Case((s,), (), {"new_dtype": np.dtype(t)})
            for s in UNARY_SHAPES
            for t in ("float32", "int32", "bool", "float16")
        ),
        upcast=False,
        notes="float -> int truncates toward zero (inputs stay in range)",
    ),
    OpRecord(
        name="lax.broadcast_in_dim",
        ref=_broadcast_in_dim,
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3,),), (), {"shape": (2, 3), "broadcast_dimensions": (1,)}),
            Case(((3,),), (), {"shape": (3, 2), "broadcast_dimensions": (0,)}),
            Case(((),), (), {"shape": (2, 3), "broadcast_dimensions": ()}),
            Case(((3, 1),), (), {"shape": (3, 4), "broadcast_dimensions": (0, 1)}),
            Case(((3, 4),), (), {"shape": (2, 3, 4), "broadcast_dimensions": (1, 2)}),
            Case(((3,),), (), {"shape": (0, 3), "broadcast_dimensions": (1,)}),
        ),
    ),
    OpRecord(
        name="lax.reshape",
        ref=lambda x, new_sizes: x.reshape(new_sizes),
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3, 4),), (), {"new_sizes": (12,)}),
            Case(((3, 4),), (), {"new_sizes": (2, 6)}),
            Case(((2, 3, 4),), (), {"new_sizes": (4, 6)}),
            Case(((),), (), {"new_sizes": (1, 1)}),
            Case(((1,),), (), {"new_sizes": ()}),
            Case(((0,),), (), {"new_sizes": (3, 0)}),
        ),
    ),
    OpRecord(
        name="lax.transpose",
        ref=lambda x, permutation: np.transpose(x, permutation).copy(),
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3, 4),), (), {"permutation": (1, 0)}),
            Case(((2, 3, 4),), (), {"permutation": (2, 0, 1)}),
            Case(((2, 3, 4),), (), {"permutation": (0, 1, 2)}),
            Case(((),), (), {"permutation": ()}),
            Case(((0, 3),), (), {"permutation": (1, 0)}),
        ),
    ),
    OpRecord(
        name="lax.squeeze",
        ref=_squeeze,
        args_maker=uniform(),
        dtypes=("float32", "int32"),
        cases=(
            Case(((1, 3, 1),), (), {"dimensions": (0, 2)}),
            Case(((3, 1),), (), {"dimensions": (1,)}),
            Case(((1,),), (), {"dimensions": (0,)}),
            Case(((3, 4),), (), {"dimensions": ()}),
        ),
    ),
    OpRecord(
        name="lax.reduce_sum",
        ref=_reduce_sum,
        args_maker=uniform(),
        dtypes=NUM,
        cases=(
            Case(((3, 4),), (), {"axes": (0,)}),
            Case(((3, 4),), (), {"axes": (1,)}),
            Case(((3, 4),), (), {"axes": (0, 1)}),
            Case(((2, 3, 4),), (), {"axes": (0, 2)}),
            Case(((5,),), (), {"axes": (0,)}),
            Case(((),), (), {"axes": ()}),
            Case(((0,),), (), {"axes": (0,)}),
            Case(((3, 4),), (), {"axes": ()}),
        ),
        tol=ACCUM_TOL,
    ),
    OpRecord(
        name="lax.reduce_max",
        ref=_reduce_max,
        args_maker=uniform(),
        dtypes=NUM,
        cases=(
            Case(((3, 4),), (), {"axes": (0,)}),
            Case(((3, 4),), (), {"axes": (1,)}),
            Case(((3, 4),), (), {"axes": (0, 1)}),
            Case(((5,),), (), {"axes": (0,)}),
            Case(((),), (), {"axes": ()}),
            Case(((0,),), (), {"axes": (0,)}),
        ),
    ),
    OpRecord(
        name="lax.dot_general",
        ref=_dot_general,
        args_maker=uniform(-2.0, 2.0),
        dtypes=("float32", "float64", "int32"),
        cases=_DOT_GENERAL_CASES,
        tol=ACCUM_TOL,
    ),
    OpRecord(
        name="lax.iota",
        ref=_iota,
        args_maker=no_args,
        dtypes=("int32", "float32", "float64"),
        cases=(
            Case((), (), {"dtype": DTYPE, "size": 5}),
            Case((), (), {"dtype": DTYPE, "size": 1}),
            Case((), (), {"dtype": DTYPE, "size": 0}),
        ),
        differentiable=False,
    ),
    # ---- jax.numpy
    _unary_jnp("sin", np.sin),
    _unary_jnp("exp", np.exp),
    _unary_jnp("tanh", np.tanh),
    OpRecord(
        name="numpy.sum",
        ref=np.sum,
        args_maker=uniform(),
        dtypes=("float32", "float64", "int32", "bool"),
        cases=(
            Case(((3, 4),)),
            Case(((3, 4),), (), {"axis": 0}),
            Case(((3, 4),), (), {"axis": 1}),
            Case(((3, 4),), (), {"axis": -1, "keepdims": True}),
            Case(((2, 3, 4),), (), {"axis": (0, 2)}),
            Case(((),)),
            Case(((0,),)),
            Case(((5,),)),
        ),
        tol=ACCUM_TOL,
    ),
    OpRecord(
        name="numpy.dot",
        ref=np.dot,
        args_maker=uniform(-2.0, 2.0),
        dtypes=("float32", "float64", "int32"),
        cases=cases_from_shapes([((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((), (3, 4)), ((0, 4), (4, 5))]),
        tol=ACCUM_TOL,
    ),
    OpRecord(
        name="numpy.matmul",
        ref=np.matmul,
        args_maker=uniform(-2.0, 2.0),
        dtypes=("float32", "float64", "int32"),
        cases=cases_from_shapes(
            [
                ((3, 4), (4, 5)),
                ((4,), (4, 5)),
                ((3, 4), (4,)),
                ((4,), (4,)),
                ((2, 3, 4), (4, 5)),
                ((2, 3, 4), (2, 4, 5)),
                ((1, 3, 4), (2, 4, 5)),
            ]
        ),
        tol=ACCUM_TOL,
    ),
    OpRecord(
        name="numpy.reshape",
        ref=np.reshape,
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3, 4),), ((12,),)),
            Case(((3, 4),), ((2, -1),)),
            Case(((3, 4),), ((4, 3),)),
            Case(((),), ((1,),)),
            Case(((0,),), ((0, 5),)),
        ),
    ),
    OpRecord(
        name="numpy.transpose",
        ref=np.transpose,
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3, 4),)),
            Case(((2, 3, 4),)),
            Case(((2, 3, 4),), ((1, 0, 2),)),
            Case(((5,),)),
            Case(((),)),
        ),
    ),
    OpRecord(
        name="numpy.where",
        ref=np.where,
        args_maker=pred_and_cases(2),
        dtypes=("float32", "float64", "int32", "bool"),
        cases=cases_from_shapes(
            [((5,), (5,), (5,)), ((3, 4), (3, 4), (3, 4)), ((3, 4), (), (3, 4)), ((3, 1), (1, 4), (3, 4)), ((), (), ())]
        ),
    ),
    OpRecord(
        name="numpy.maximum",
        ref=np.maximum,
        args_maker=uniform(),
        dtypes=NUM + ("bool",),
        cases=cases_from_shapes(BROADCAST_SHAPES),
    ),
    OpRecord(
        name="numpy.zeros",
        ref=np.zeros,
        args_maker=no_args,
        dtypes=("float32", "float64", "int32", "bool"),
        cases=(
            Case((), ((2, 3),), {"dtype": DTYPE}),
            Case((), (5,), {"dtype": DTYPE}),
            Case((), ((),), {"dtype": DTYPE}),
            Case((), ((0, 3),), {"dtype": DTYPE}),
            Case((), ((2, 3),)),
        ),
        differentiable=False,
    ),
    OpRecord(
        name="numpy.ones",
        ref=np.ones,
        args_maker=no_args,
        dtypes=("float32", "float64", "int32", "bool"),
        cases=(
            Case((), ((2, 3),), {"dtype": DTYPE}),
            Case((), (5,), {"dtype": DTYPE}),
            Case((), ((),), {"dtype": DTYPE}),
            Case((), (3,)),
        ),
        differentiable=False,
    ),
    OpRecord(
        name="numpy.arange",
        ref=np.arange,
        args_maker=no_args,
        dtypes=("int32", "float32", "float64"),
        cases=(
            Case((), (5,)),
            Case((), (0,)),
            Case((), (2, 9, 3)),
            Case((), (1.0, 3.0, 0.5)),
            Case((), (6,), {"dtype": DTYPE}),
            Case((), (-3, 3), {"dtype": DTYPE}),
        ),
        differentiable=False,
    ),
    OpRecord(
        name="numpy.array",
        ref=np.array,
        args_maker=uniform(),
        dtypes=("float32", "float64", "int32", "bool", "float16"),
        cases=(
            Case(((3, 4),)),
            Case(((),)),
            Case(((0,),)),
            Case(((3,),), (), {"dtype": np.dtype("float32")}),
        ),
        upcast=False,
    ),
    OpRecord(
        name="numpy.array[py]",
        path="numpy.array",
        ref=np.array,
        args_maker=no_args,
        dtypes=("float32",),
        cases=(
            Case((), ([1, 2, 3],)),
            Case((), ([1.0, 2.5],)),
            Case((), ([[1, 2], [3, 4]],)),
            Case((), (3.0,)),
            Case((), (True,)),
            Case((), ([1, 2],), {"dtype": DTYPE}),
        ),
        differentiable=False,
    ),
    OpRecord(
        name="numpy.asarray",
        ref=np.asarray,
        args_maker=uniform(),
        dtypes=("float32", "float64", "int32", "bool", "float16"),
        cases=(
            Case(((3, 4),)),
            Case(((),)),
            Case(((5,),), (), {"dtype": np.dtype("int32")}),
        ),
        upcast=False,
    ),
    # 64-bit NumPy inputs become float32 / int32 unless x64 is on.
    OpRecord(
        name="numpy.asarray[from_f64]",
        path="numpy.asarray",
        ref=np.asarray,
        args_maker=lambda rng, shapes, dtype: [rng.uniform(-3, 3, size=s) for s in shapes],
        dtypes=("float32",),
        cases=cases_from_shapes([((3,),), ((),)]),
        upcast=False,
        differentiable=False,
    ),
    OpRecord(
        name="numpy.asarray[from_i64]",
        path="numpy.asarray",
        ref=np.asarray,
        args_maker=lambda rng, shapes, dtype: [rng.integers(-3, 3, size=s) for s in shapes],
        dtypes=("int32",),
        cases=cases_from_shapes([((3,),), ((),)]),
        upcast=False,
        differentiable=False,
    ),
    OpRecord(
        name="numpy.asarray[py]",
        path="numpy.asarray",
        ref=np.asarray,
        args_maker=no_args,
        dtypes=("float32",),
        cases=(
            Case((), ([1, 2, 3],)),
            Case((), ([[0.5, 1.5]],)),
            Case((), (2,)),
        ),
        differentiable=False,
    ),
)

# ----------------------------------------------------------------- references (issue 3)

import math as _math


def _round_ref(x, rounding_method=0):
    if rounding_method == 0:
        return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(x.dtype)
    return np.round(x)


_erf_vec = np.vectorize(_math.erf, otypes=[np.float64])
_lgamma_vec = np.vectorize(_math.lgamma, otypes=[np.float64])


def _erf_ref(x):
    return _erf_vec(x).astype(x.dtype)


def _lgamma_ref(x):
    return _lgamma_vec(x).astype(x.dtype)


def _erf_inv_ref(y):
    """Newton's method on erf (|y| < 1)."""
    y64 = np.asarray(y, np.float64)
    x = np.zeros_like(y64)
    for _ in range(60):
        f = _erf_vec(x) - y64
        x = x - f / (2.0 / np.sqrt(np.pi) * np.exp(-x * x))
    return x.astype(np.asarray(y).dtype)


def _digamma_scalar(x):
    acc = 0.0
    if x < 0.5:
        acc -= np.pi / np.tan(np.pi * x)
        x = 1.0 - x
    while x < 20.0:
        acc -= 1.0 / x
        x += 1.0
    # asymptotic series: Bernoulli numbers B2..B12
    b = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)
    s = sum(bk / (2 * (k + 1)) * x ** (-2 * (k + 1)) for k, bk in enumerate(b))
    return acc + _math.log(x) - 0.5 / x - s


def _digamma_ref(x):
    return np.vectorize(_digamma_scalar, otypes=[np.float64])(x).astype(np.asarray(x).dtype)


def _polygamma_scalar(m, x):
    m = float(m)
    if m != int(m) or m < 0:
        return np.nan
    if m == 0:
        return _digamma_scalar(x)
    s = m + 1
    n = 40
    total = sum((x + k) ** -s for k in range(n))
    a = x + n
    # Euler-Maclaurin tail of sum_{k>=n} (x+k)^-s
    total += a ** (1 - s) / (s - 1) + 0.5 * a ** -s + s / 12 * a ** (-s - 1)
    total -= s * (s + 1) * (s + 2) / 720 * a ** (-s - 3)
    return (-1) ** (int(m) + 1) * _math.factorial(int(m)) * total


def _polygamma_ref(m, x):
    return np.vectorize(_polygamma_scalar, otypes=[np.float64])(m, x).astype(np.asarray(x).dtype)


def _bits(dt):
    return np.dtype(dt).itemsize * 8


def _shift_amount(x, y):
    """Shift amounts read as unsigned (as XLA): negative ones are over-wide."""
    return y.astype(x.dtype).view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)


def _shift_left(x, y):
    s = _shift_amount(x, y)
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    out = (u << np.minimum(s, 63)) & np.uint64((1 << _bits(x.dtype)) - 1)
    out = np.where(s >= _bits(x.dtype), 0, out)
    return out.astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)


def _shift_right_logical(x, y):
    s = _shift_amount(x, y)
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    out = np.where(s >= _bits(x.dtype), 0, u >> np.minimum(s, 63))
    return out.astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)


def _shift_right_arithmetic(x, y):
    s = _shift_amount(x, y)
    sx = x.view(np.dtype(f"i{x.dtype.itemsize}")).astype(np.int64)
    out = sx >> np.minimum(s, _bits(x.dtype) - 1).astype(np.int64)
    return out.astype(np.dtype(f"i{x.dtype.itemsize}")).view(x.dtype)


def _popcount(x):
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    out = np.zeros(u.shape, np.uint64)
    for b in range(_bits(x.dtype)):
        out += (u >> np.uint64(b)) & np.uint64(1)
    return out.astype(x.dtype)


def _clz(x):
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    n = _bits(x.dtype)
    out = np.full(u.shape, n, np.int64)
    for b in range(n):
        out = np.where((u >> np.uint64(b)) & np.uint64(1) == 1, n - 1 - b, out)
    return out.astype(x.dtype)


def _clamp(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


def _reduce_min(x, axes):
    if is_float(x.dtype):
        init = np.inf
    elif x.dtype == bool:
        init = True
    else:
        init = np.iinfo(x.dtype).max
    return np.min(x, axis=tuple(axes), initial=init)


def _reduce_prod(x, axes):
    return np.prod(x, axis=tuple(axes), dtype=x.dtype)


def _reduce_and(x, axes):
    if x.dtype == bool:
        return np.all(x, axis=tuple(axes))
    return np.bitwise_and.reduce(x, axis=tuple(axes), initial=x.dtype.type(-1) if x.dtype.kind == "i" else np.iinfo(x.dtype).max)


def _reduce_or(x, axes):
    if x.dtype == bool:
        return np.any(x, axis=tuple(axes))
    return np.bitwise_or.reduce(x, axis=tuple(axes), initial=x.dtype.type(0))


def _arg_ref(fn):
    def ref(x, axis, index_dtype):
        return fn(x, axis=axis).astype(index_dtype)

    return ref


def _scan_ref(fn):
    def ref(x, axis=0, reverse=False):
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis=axis), axis)
        return fn(x, axis=axis)

    return ref


def _cumsum_np(x, axis):
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumprod_np(x, axis):
    return np.cumprod(x, axis=axis, dtype=x.dtype)


def with_specials(lo=-3.0, hi=3.0):
    """Uniform values with some inf, -inf and NaN mixed in (floats)."""

    def make(rng, shapes, dtype):
        out = []
        for s in shapes:
            a = _rand(rng, s, dtype, lo, hi)
            if a.size and is_float(dtype):
                flat = a.reshape(-1)
                picks = rng.integers(0, 4, size=flat.shape)
                flat[picks == 1] = np.inf
                flat[picks == 2] = -np.inf
                flat[(picks == 3) & (rng.integers(0, 2, size=flat.shape) == 1)] = np.nan
            out.append(a)
        return out

    return make


def with_zeros(lo=-2.0, hi=2.0):
    """Uniform values with about a third of them exactly zero."""

    def make(rng, shapes, dtype):
        out = []
        for s in shapes:
            a = _rand(rng, s, dtype, lo, hi)
            a[rng.integers(0, 3, size=a.shape) == 0] = 0
            out.append(a)
        return out

    return make


def clamp_args(rng, shapes, dtype):
    lo, x, hi = shapes
    return [_rand(rng, lo, dtype, -2, 0), _rand(rng, x, dtype, -3, 3), _rand(rng, hi, dtype, 0, 2)]


def polygamma_args(rng, shapes, dtype):
    m = rng.integers(0, 4, size=tuple(shapes[0])).astype(dtype)
    return [m, _rand(rng, shapes[1], dtype, 0.3, 4.0)]


def shift_args(rng, shapes, dtype):
    x = _rand(rng, shapes[0], dtype, -100, 100)
    bits = np.dtype(dtype).itemsize * 8
    lo = -2 if np.dtype(dtype).kind == "i" else 0
    y = rng.integers(lo, bits + 3, size=tuple(shapes[1]), endpoint=True).astype(dtype)
    return [x, y]


def full_int_range(rng, shapes, dtype):
    if np.dtype(dtype) == np.dtype(bool):
        return [rng.integers(0, 2, size=tuple(s)).astype(bool) for s in shapes]
    info = np.iinfo(dtype)
    return [rng.integers(info.min, info.max, size=tuple(s), endpoint=True).astype(dtype) for s in shapes]


BITWISE = ("int32", "uint8", "int8", "uint32", "bool")
INTS = ("int32", "uint8", "int8", "uint32")
_RED_CASES = (
    Case(((3, 4),), (), {"axes": (0,)}),
    Case(((3, 4),), (), {"axes": (1,)}),
    Case(((3, 4),), (), {"axes": (0, 1)}),
    Case(((2, 3, 4),), (), {"axes": (0, 2)}),
    Case(((5,),), (), {"axes": (0,)}),
    Case(((),), (), {"axes": ()}),
    Case(((0,),), (), {"axes": (0,)}),
)
_ARG_CASES = (
    Case(((3, 4),), (), {"axis": 0, "index_dtype": np.dtype("int32")}),
    Case(((3, 4),), (), {"axis": 1, "index_dtype": np.dtype("int32")}),
    Case(((2, 3, 4),), (), {"axis": 1, "index_dtype": np.dtype("int32")}),
    Case(((5,),), (), {"axis": 0, "index_dtype": np.dtype("uint8")}),
    Case(((0, 4),), (), {"axis": 1, "index_dtype": np.dtype("int32")}),
)
_SCAN_CASES = (
    Case(((5,),), (), {"axis": 0}),
    Case(((3, 4),), (), {"axis": 0}),
    Case(((3, 4),), (), {"axis": 1}),
    Case(((3, 4),), (), {"axis": 1, "reverse": True}),
    Case(((2, 3, 4),), (), {"axis": 1, "reverse": True}),
    Case(((0, 3),), (), {"axis": 0}),
)


def _scan_lax(name, ref, dtypes, maker=None, **kw):
    return OpRecord(name=f"lax.{name}", ref=_scan_ref(ref), args_maker=maker or uniform(-2.0, 2.0),
                    dtypes=dtypes, cases=_SCAN_CASES, tol=ACCUM_TOL, **kw)


ISSUE3_RECORDS: tuple = (
    # ---- stop_gradient: identity on values (its zero derivative is checked in the AD tests)
    _unary_lax("stop_gradient", lambda x: x.copy(), dtypes=NUM + ("bool",), tol=DEFAULT_TOL,
               differentiable=False),
    # ---- elementwise unary (float)
    _unary_lax("floor", np.floor, tol=DEFAULT_TOL),
    _unary_lax("ceil", np.ceil, tol=DEFAULT_TOL),
    OpRecord(
        name="lax.round",
        ref=_round_ref,
        args_maker=uniform(-4.0, 4.0),
        dtypes=F,
        cases=cases_from_shapes([(s,) for s in UNARY_SHAPES])
        + cases_from_shapes([((5,),), ((3, 4),)], rounding_method=0)
        + cases_from_shapes([((5,),), ((3, 4),)], rounding_method=1),
    ),
    OpRecord(
        name="lax.round[halves]",
        path="lax.round",
        ref=_round_ref,
        args_maker=lambda rng, shapes, dtype: [np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5], dtype)],
        dtypes=F,
        cases=cases_from_shapes([((7,),)], rounding_method=0) + cases_from_shapes([((7,),)], rounding_method=1),
        differentiable=False,  # finite differences straddle the jumps at the halfway points
    ),
    _unary_lax("is_finite", np.isfinite, maker=with_specials(), differentiable=False, tol=DEFAULT_TOL),
    _unary_lax("exp2", np.exp2),
    _unary_lax("log1p", np.log1p, maker=uniform(-0.9, 3.0)),
    _unary_lax("expm1", np.expm1),
    _unary_lax("tan", np.tan, maker=uniform(-1.2, 1.2)),
    _unary_lax("asin", np.arcsin, maker=uniform(-0.95, 0.95)),
    _unary_lax("acos", np.arccos, maker=uniform(-0.95, 0.95)),
    _unary_lax("atan", np.arctan),
    _unary_lax("sinh", np.sinh),
    _unary_lax("cosh", np.cosh),
    _unary_lax("asinh", np.arcsinh),
    _unary_lax("acosh", np.arccosh, maker=uniform(1.05, 4.0)),
    _unary_lax("atanh", np.arctanh, maker=uniform(-0.95, 0.95)),
    _unary_lax("rsqrt", lambda x: 1.0 / np.sqrt(x), maker=positive(0.1, 4.0)),
    _unary_lax("cbrt", np.cbrt, maker=nonzero(0.25, 3.0)),
    _unary_lax("erf", _erf_ref),
    _unary_lax("erf_inv", _erf_inv_ref, maker=uniform(-0.95, 0.95)),
    _unary_lax("lgamma", _lgamma_ref, maker=positive(0.2, 5.0)),
    _unary_lax("digamma", _digamma_ref, maker=positive(0.2, 5.0)),
    _unary_lax("digamma[neg]", _digamma_ref, maker=uniform(-2.8, -2.2), path="lax.digamma"),
    _unary_lax("square", np.square, dtypes=NUM, tol=DEFAULT_TOL),
    # ---- elementwise unary (integer / bool)
    _unary_lax("bitwise_not", np.invert, maker=full_int_range, dtypes=BITWISE, differentiable=False),
    _unary_lax("population_count", _popcount, maker=full_int_range, dtypes=INTS, differentiable=False),
    _unary_lax("clz", _clz, maker=full_int_range, dtypes=INTS, differentiable=False),
    # ---- elementwise binary
    _binary_lax("rem", np.fmod, maker=nonzero_second(), dtypes=NUM),
    OpRecord(
        name="lax.rem[int_edge]",
        path="lax.rem",
        ref=lambda x, y: np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y))).astype(x.dtype),
        args_maker=lambda rng, shapes, dtype: [
            np.array([7, -7, 7, -7, 5, -5, np.iinfo(dtype).min], dtype),
            np.array([2, 2, -2, -2, 0, 0, -1], dtype),
        ],
        dtypes=("int32", "int8"),
        cases=cases_from_shapes([((7,), (7,))]),
        differentiable=False,
    ),
    _binary_lax("atan2", np.arctan2, dtypes=F, tol=TRANSCENDENTAL_TOL),
    _binary_lax("nextafter", np.nextafter, dtypes=("float32", "float64", "float16"), upcast=False,
                differentiable=False),
    _binary_lax("polygamma", _polygamma_ref, maker=polygamma_args, dtypes=F32_F64,
                tol=TRANSCENDENTAL_TOL, differentiable=False),
    _binary_lax("bitwise_and", np.bitwise_and, maker=full_int_range, dtypes=BITWISE, differentiable=False),
    _binary_lax("bitwise_or", np.bitwise_or, maker=full_int_range, dtypes=BITWISE, differentiable=False),
    _binary_lax("bitwise_xor", np.bitwise_xor, maker=full_int_range, dtypes=BITWISE, differentiable=False),
    _binary_lax("shift_left", _shift_left, maker=shift_args, dtypes=INTS, differentiable=False),
    _binary_lax("shift_right_logical", _shift_right_logical, maker=shift_args, dtypes=INTS,
                differentiable=False),
    _binary_lax("shift_right_arithmetic", _shift_right_arithmetic, maker=shift_args, dtypes=INTS,
                differentiable=False),
    OpRecord(
        name="lax.clamp",
        ref=_clamp,
        args_maker=clamp_args,
        dtypes=NUM,
        cases=cases_from_shapes([((), (), ()), ((), (3, 4), ()), ((3, 4), (3, 4), (3, 4)),
                                 ((), (5,), (5,)), ((5,), (5,), ()), ((), (0,), ())]),
    ),
    # ---- reductions
    OpRecord(name="lax.reduce_prod", ref=_reduce_prod, args_maker=uniform(-2.0, 2.0), dtypes=NUM,
             cases=_RED_CASES, tol=ACCUM_TOL),
    OpRecord(name="lax.reduce_prod[zeros]", path="lax.reduce_prod", ref=_reduce_prod,
             args_maker=with_zeros(), dtypes=F32_F64, cases=_RED_CASES, tol=ACCUM_TOL,
             # First derivatives at exact zeros are exact (Rust autodiff tests); second
             # derivatives there are not yet (they need the exclusive-cumprod form).
             differentiable=False),
    OpRecord(name="lax.reduce_min", ref=_reduce_min, args_maker=uniform(), dtypes=NUM + ("bool",),
             cases=_RED_CASES),
    OpRecord(name="lax.reduce_and", ref=_reduce_and, args_maker=full_int_range, dtypes=BITWISE,
             cases=_RED_CASES, differentiable=False),
    OpRecord(name="lax.reduce_or", ref=_reduce_or, args_maker=full_int_range, dtypes=BITWISE,
             cases=_RED_CASES, differentiable=False),
    OpRecord(name="lax.argmax", ref=_arg_ref(np.argmax), args_maker=uniform(), dtypes=NUM + ("bool",),
             cases=_ARG_CASES, differentiable=False),
    OpRecord(name="lax.argmin", ref=_arg_ref(np.argmin), args_maker=uniform(), dtypes=NUM + ("bool",),
             cases=_ARG_CASES, differentiable=False),
    OpRecord(name="lax.argmax[nan]", path="lax.argmax", ref=_arg_ref(np.argmax), args_maker=with_specials(),
             dtypes=F, cases=_ARG_CASES, differentiable=False),
    OpRecord(name="lax.argmin[nan]", path="lax.argmin", ref=_arg_ref(np.argmin), args_maker=with_specials(),
             dtypes=F, cases=_ARG_CASES, differentiable=False),
    _scan_lax("cumsum", _cumsum_np, NUM),
    _scan_lax("cumprod", _cumprod_np, NUM),
    _scan_lax("cumprod[zeros]", _cumprod_np, F32_F64, maker=with_zeros(), path="lax.cumprod",
              differentiable=False),  # as reduce_prod[zeros]
    _scan_lax("cummax", np.maximum.accumulate, NUM + ("bool",)),
    _scan_lax("cummin", np.minimum.accumulate, NUM + ("bool",)),
    _scan_lax("cumlogsumexp", np.logaddexp.accumulate, F),
)



# ---- slicing and data movement (rev, slice, concatenate, pad, dynamic_slice, dynamic_update_slice)
import builtins as _builtins  # noqa: E402  (`slice` is also a lax name)

SLICE_DTYPES = ("float32", "float64", "float16", "int32", "uint8", "bool")


def _slice_ref(x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(_builtins.slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_in_dim_ref(x, start_index, limit_index, stride=1, axis=0):
    idx = [_builtins.slice(None)] * x.ndim
    idx[axis] = _builtins.slice(start_index, limit_index, stride)
    return x[tuple(idx)]


def _pad_ref(x, pv, padding_config):
    out = np.asarray(x)
    for axis, (lo, hi, interior) in enumerate(padding_config):
        d = out.shape[axis]
        size = d + max(d - 1, 0) * interior
        shape = list(out.shape)
        shape[axis] = size
        grown = np.full(shape, pv, dtype=out.dtype)
        idx = [_builtins.slice(None)] * out.ndim
        idx[axis] = _builtins.slice(None, None, interior + 1)
        grown[tuple(idx)] = out
        # lo / hi: pad when positive, crop when negative
        widths = [(0, 0)] * out.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        grown = np.pad(grown, widths, constant_values=pv)
        idx = [_builtins.slice(None)] * out.ndim
        idx[axis] = _builtins.slice(max(-lo, 0), grown.shape[axis] - max(-hi, 0))
        out = grown[tuple(idx)]
    return out


def _clamped_starts(shape, start_indices, sizes):
    out = []
    for i, d, s in zip(start_indices, shape, sizes):
        i = int(i)
        if i < 0:
            i += d
        out.append(min(max(i, 0), d - s))
    return out


def _dynamic_slice_ref(x, start_indices, slice_sizes):
    starts = _clamped_starts(x.shape, start_indices, slice_sizes)
    return x[tuple(_builtins.slice(s, s + n) for s, n in zip(starts, slice_sizes))].copy()


def _dynamic_update_slice_ref(x, u, start_indices):
    starts = _clamped_starts(x.shape, start_indices, u.shape)
    out = np.array(x, copy=True)
    out[tuple(_builtins.slice(s, s + n) for s, n in zip(starts, u.shape))] = u
    return out


def _list_first(fn):
    return lambda *xs, **kw: fn(list(xs), **kw)


def operands_and_indices(n_operands: int, lo: int = -4, hi: int = 6):
    """`n_operands` arrays of the case dtype, then int32 scalar start
    indices in [lo, hi] (out-of-range ones exercise wrapping and clamping)."""

    def make(rng, shapes, dtype):
        arrays = [_rand(rng, s, dtype, -3.0, 3.0) for s in shapes[:n_operands]]
        idx = [np.int32(rng.integers(lo, hi, endpoint=True)) for _ in shapes[n_operands:]]
        return arrays + [np.asarray(i) for i in idx]

    make.__name__ = f"operands_and_indices({n_operands})"
    return make


def _traced_indices(n_operands: int):
    """`f(*operands, start_indices, ...)` called as `f(*operands, *indices, ...)`."""

    def adapt(fn):
        return lambda *xs, **kw: fn(*xs[:n_operands], tuple(xs[n_operands:]), **kw)

    return adapt


SLICE_RECORDS: tuple = (
    OpRecord(
        name="lax.rev",
        ref=lambda x, dimensions: np.flip(x, dimensions) if dimensions else x.copy(),
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,),), (), {"dimensions": (0,)}),
            Case(((3, 4),), (), {"dimensions": (1,)}),
            Case(((3, 4),), (), {"dimensions": (0, 1)}),
            Case(((2, 3, 4),), (), {"dimensions": (0, 2)}),
            Case(((0, 3),), (), {"dimensions": (0,)}),
            Case(((3,),), (), {"dimensions": ()}),
        ),
    ),
    OpRecord(
        name="lax.slice",
        ref=_slice_ref,
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,),), ((1,), (4,))),
            Case(((3, 4),), ((0, 1), (3, 4), (2, 2))),
            Case(((2, 3, 4),), ((1, 0, 1), (2, 3, 4), (1, 2, 3))),
            Case(((6,),), ((1,), (6,), (2,))),
            Case(((4,),), ((2,), (2,))),
            Case(((0, 3),), ((0, 0), (0, 2))),
            Case(((), ), ((), ())),
        ),
    ),
    OpRecord(
        name="lax.slice_in_dim",
        ref=_slice_in_dim_ref,
        args_maker=uniform(),
        dtypes=("float32", "int32"),
        cases=(
            Case(((3, 5),), (1, 4), {"axis": 1}),
            Case(((3, 5),), (0, 3, 2), {"axis": 0}),
            Case(((7,),), (None, -2), {}),
        ),
    ),
    OpRecord(
        name="lax.concatenate",
        ref=lambda *xs, dimension: np.concatenate(xs, axis=dimension),
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        adapt=_list_first,
        cases=(
            Case(((3,), (2,)), (), {"dimension": 0}),
            Case(((2, 3), (2, 1), (2, 4)), (), {"dimension": 1}),
            Case(((1, 3), (2, 3)), (), {"dimension": 0}),
            Case(((2, 0, 3), (2, 2, 3)), (), {"dimension": 1}),
            Case(((4,),), (), {"dimension": 0}),
        ),
    ),
    OpRecord(
        name="lax.pad",
        ref=_pad_ref,
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,), ()), ((((1, 2, 0),),))),
            Case(((5,), ()), ((((0, 0, 2),),))),
            Case(((3, 4), ()), ((((1, -1, 1), (-1, 2, 2)),))),
            Case(((2, 3, 2), ()), ((((0, 1, 0), (2, 0, 1), (-1, -1, 0)),))),
            Case(((0, 3), ()), ((((1, 1, 3), (0, 0, 0)),))),
            Case(((), ()), (((),))),
            Case(((4,), ()), ((((-2, -2, 0),),))),
        ),
    ),
    OpRecord(
        name="lax.dynamic_slice",
        ref=_dynamic_slice_ref,
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,),), ((1,), (3,))),
            Case(((3, 4),), ((1, 2), (2, 2))),
            Case(((3, 4),), ((2, 3), (2, 2))),  # clamped
            Case(((3, 4),), ((-1, -3), (1, 2))),  # negative indices count from the end
            Case(((2, 3, 4),), ((0, 1, 7), (2, 1, 3))),
            Case(((4,),), ((2,), (0,))),
            Case(((),), ((), ())),
        ),
        notes="start indices are static Python ints (batched indices need gather)",
    ),
    OpRecord(
        name="lax.dynamic_update_slice",
        ref=_dynamic_update_slice_ref,
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,), (2,)), ((1,),)),
            Case(((3, 4), (2, 2)), ((1, 2),)),
            Case(((3, 4), (2, 3)), ((5, -1),)),  # clamped
            Case(((2, 3, 4), (1, 3, 2)), ((1, 0, 1),)),
            Case(((4,), (0,)), ((2,),)),
            Case(((3,), (3,)), ((1,),)),
        ),
        notes="start indices are static Python ints (batched indices need scatter)",
    ),
    # Start indices as int32 array arguments: traced under jit, batched under vmap.
    OpRecord(
        name="lax.dynamic_slice[traced]",
        path="lax.dynamic_slice",
        ref=lambda x, *idx, slice_sizes: _dynamic_slice_ref(x, [int(i) for i in idx], slice_sizes),
        args_maker=operands_and_indices(1),
        dtypes=SLICE_DTYPES,
        adapt=_traced_indices(1),
        cases=(
            Case(((5,), ()), (), {"slice_sizes": (2,)}),
            Case(((3, 4), (), ()), (), {"slice_sizes": (2, 3)}),
            Case(((2, 3, 4), (), (), ()), (), {"slice_sizes": (1, 2, 2)}),
            Case(((4, 2), (), ()), (), {"slice_sizes": (0, 2)}),
        ),
    ),
    OpRecord(
        name="lax.dynamic_update_slice[traced]",
        path="lax.dynamic_update_slice",
        ref=lambda x, u, *idx: _dynamic_update_slice_ref(x, u, [int(i) for i in idx]),
        args_maker=operands_and_indices(2),
        dtypes=SLICE_DTYPES,
        adapt=_traced_indices(2),
        cases=(
            Case(((5,), (2,), ())),
            Case(((3, 4), (2, 2), (), ())),
            Case(((2, 3, 4), (1, 2, 3), (), (), ())),
            Case(((4,), (0,), ())),
        ),
    ),
    OpRecord(
        name="lax.dynamic_slice_in_dim",
        ref=lambda x, start, size, axis=0: _dynamic_slice_ref(
            x, [start if a == axis else 0 for a in range(x.ndim)],
            [size if a == axis else x.shape[a] for a in range(x.ndim)]),
        args_maker=uniform(),
        dtypes=("float32", "int32"),
        cases=(Case(((3, 5),), (3, 2), {"axis": 1}), Case(((4,),), (-1, 2), {})),
    ),
    OpRecord(
        name="lax.index_in_dim",
        ref=lambda x, index, axis=0, keepdims=True: np.take(x, [index] if keepdims else index, axis=axis),
        args_maker=uniform(),
        dtypes=("float32", "int32"),
        cases=(Case(((3, 5),), (2,), {"axis": 1}), Case(((3, 5),), (-1,), {"keepdims": False})),
    ),
)

OP_RECORDS = OP_RECORDS + ISSUE3_RECORDS + SLICE_RECORDS


# The Foundation slice: every name here must have a record (test_op_table checks it).
FOUNDATION = (
    "lax.add lax.sub lax.mul lax.div lax.neg lax.max lax.min lax.pow lax.integer_pow lax.exp lax.log "
    "lax.sin lax.cos lax.tanh lax.logistic lax.sqrt lax.abs lax.sign lax.eq lax.ne lax.lt lax.le lax.gt "
    "lax.ge lax.select_n lax.convert_element_type lax.broadcast_in_dim lax.reshape lax.transpose "
    "lax.squeeze lax.reduce_sum lax.reduce_max lax.dot_general lax.iota "
    "numpy.sin numpy.exp numpy.tanh numpy.sum numpy.dot numpy.matmul numpy.reshape numpy.transpose "
    "numpy.where numpy.maximum numpy.zeros numpy.ones numpy.arange numpy.array numpy.asarray"
).split()


# Records for jax.numpy functions beyond the Foundation slice live in
# op_table_jnp.py (it imports this module's helpers and defines JNP_RECORDS).
def _extended_records():
    try:
        from op_table_jnp import JNP_RECORDS
    except ImportError:
        return ()
    from op_table_sort import SORT_RECORDS
    return tuple(JNP_RECORDS) + tuple(SORT_RECORDS)


OP_RECORDS = OP_RECORDS + _extended_records()


# Records of the gather/scatter family live in op_table_gather.py.
def _gather_records():
    from op_table_gather import GATHER_RECORDS

    return tuple(GATHER_RECORDS)


OP_RECORDS = OP_RECORDS + _gather_records()


# Records of the linear-algebra family live in op_table_linalg.py.
def _linalg_records():
    from op_table_linalg import LINALG_RECORDS

    return tuple(LINALG_RECORDS)


OP_RECORDS = OP_RECORDS + _linalg_records()
# Records of convolutions and windowed reductions live in op_table_conv.py.
def _conv_records():
    from op_table_conv import CONV_RECORDS

    return tuple(CONV_RECORDS)


OP_RECORDS = OP_RECORDS + _conv_records()


# Records completing the public surface (aliases, random, the rest of numpy /
# lax / linalg), and the bad inputs of records by name, live in op_table_surface.py.
def _surface_records(existing):
    from op_table_surface import surface_records, with_errors

    return with_errors(existing + surface_records(existing))


OP_RECORDS = _surface_records(OP_RECORDS)


def all_cases(records=OP_RECORDS):
    """Every (record, dtype name, case) triple, in table order."""
    for rec in records:
        for dt in rec.dtypes:
            for case in rec.cases:
                yield rec, dt, case


def dtype_class(name: str) -> str:
    """float / int / uint / bool / complex: the tiers keep one dtype of each."""
    dt = np_dtype(name)
    if is_float(dt):
        return "float"
    return {"i": "int", "u": "uint", "b": "bool", "c": "complex"}[dt.kind]


def tier_dtypes(rec: OpRecord) -> tuple:
    """One dtype per class in the record's dtypes, float32 / int32 preferred."""
    chosen = {}
    for dt in sorted(rec.dtypes, key=lambda d: d not in ("float32", "int32", "uint32")):
        chosen.setdefault(dtype_class(dt), dt)
    return tuple(dt for dt in rec.dtypes if dt in chosen.values())


def tier_cases(full: bool, records=OP_RECORDS):
    """All (record, dtype, case) triples (full tier), or each record's cases
    for one dtype per dtype class (the CI tier)."""
    for rec in records:
        for dt in (rec.dtypes if full else tier_dtypes(rec)):
            for case in rec.cases:
                yield rec, dt, case


def case_id(rec: OpRecord, dtype: str, case: Case) -> str:
    return f"{rec.name}-{dtype}-{case.label()}"
