"""The shared parts of the operator table: dtypes and tolerances, the
argument makers, the record types (`Case`, `OpErr`, `OpRecord`), resolving a
record's dotted name on `microjax_rs`, and the inputs, expected result and
tolerance of one case (see the package docstring for the conventions).
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
        np.dtype("complex128"): np.dtype("complex64"),
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
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.uniform(lo, hi, size=shape) + 1j * rng.uniform(lo, hi, size=shape)).astype(dtype)
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


def full_int_range(rng, shapes, dtype):
    if np.dtype(dtype) == np.dtype(bool):
        return [rng.integers(0, 2, size=tuple(s)).astype(bool) for s in shapes]
    info = np.iinfo(dtype)
    return [rng.integers(info.min, info.max, size=tuple(s), endpoint=True).astype(dtype) for s in shapes]


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


def case_triples(*items) -> tuple:
    """Cases from (shapes, static args, static kwargs) triples."""
    return tuple(Case(tuple(s), tuple(a), dict(kw)) for s, a, kw in items)


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
def pick_output(k: int) -> Callable[[Callable], Callable]:
    """An `adapt`: output `k` of a function returning several arrays."""

    def adapt(fn):
        def picked(*a, **kw):
            return fn(*a, **kw)[k]

        return picked

    return adapt


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
    if a.dtype == np.complex64:
        return a.astype(np.complex128)
    return a


def reference(rec: OpRecord, dtype_name: str, arrays, args, kwargs, x64: bool) -> np.ndarray:
    """The expected result (value and exact dtype) of one case."""
    with np.errstate(all="ignore"):
        raw = np.asarray(rec.ref(*arrays, *args, **kwargs))
    if rec.out_dtype is not None:
        want = np.dtype(rec.out_dtype(np_dtype(dtype_name), x64))
    else:
        want = canonicalize_dtype(raw.dtype, x64)
    if rec.upcast and any(is_float(np.asarray(a).dtype) or np.asarray(a).dtype.kind == "c" for a in arrays):
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


# ----------------------------------------------------------------- expected dtypes


def _inexact_out(dt: np.dtype, x64: bool) -> np.dtype:
    """jnp transcendental of an int/bool input: JAX's default float type."""
    return canonicalize_dtype(dt, x64) if is_float(dt) else default_float(x64)


def canonical_out(dt: np.dtype, x64: bool) -> np.dtype:
    """The input dtype, canonicalized (functions keeping their input's dtype)."""
    return canonicalize_dtype(dt, x64)


def default_int_out(dt: np.dtype, x64: bool) -> np.dtype:
    """Integer-valued results (argmax, count_nonzero, ...): JAX's default int."""
    return np.dtype("int64") if x64 else np.dtype("int32")


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

# ----------------------------------------------------------------- dtype lists

F = ("float32", "float64", "float16")
F32_F64 = ("float32", "float64")
FI = ("float32", "float64", "int32")
NUM = ("float32", "float64", "float16", "int32")
BITWISE = ("int32", "uint8", "int8", "uint32", "bool")
INTS = ("int32", "uint8", "int8", "uint32")
