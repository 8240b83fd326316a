"""dtype handling: names, canonicalization (64-bit → 32-bit unless x64),
weak types of Python scalars, and promotion (the lattice lives in Rust).
The per-dtype facts come from the Rust core (`_src.tables`)."""
import numpy as np

from . import _core
from ._src.tables import CANONICAL_32, COMPLEX_NAMES, FLOAT_NAMES, INEXACT_NAMES, INT_NAMES, KINDS

# bfloat16 comes from ml_dtypes, a dependency of the package. Should it be
# missing, asking for bfloat16 raises this (it never falls back to float32).
_NO_ML_DTYPES = ("bfloat16 needs the ml_dtypes package, a dependency of microjax_rs "
                 "(pip install ml_dtypes)")

try:
    import ml_dtypes as _ml_dtypes

    # JAX's `jax.dtypes.bfloat16` is the scalar type (`isinstance(x,
    # bfloat16)`, `bfloat16(1.0)`); `_BFLOAT16` is its NumPy dtype.
    bfloat16 = _ml_dtypes.bfloat16
    _BFLOAT16 = np.dtype(bfloat16)
except Exception:  # pragma: no cover - a broken install
    _ml_dtypes = None
    bfloat16 = _BFLOAT16 = None

float0 = np.dtype([("float0", np.void, 0)])


class extended:
    """Abstract base of dtypes outside NumPy's lattice (JAX's `dtypes.extended`)."""


class prng_key(extended):
    """Abstract dtype of typed PRNG keys: `jnp.issubdtype(key.dtype, dtypes.prng_key)`."""

# Every dtype of the core but the PRNG key type (keys have no NumPy dtype).
_SUPPORTED = frozenset(n for n, k in KINDS.items() if k != "V") | {"float0"}
_PY_SCALARS = (bool, int, float, complex)


def x64_enabled():
    return _core.get_x64()


_NAME_CACHE = {}


def dtype_name(dtype):
    """Our name for any dtype-like (np.float32, 'float32', jnp.float32, np.dtype)."""
    try:
        hit = _NAME_CACHE.get(dtype)
    except TypeError:
        hit = None
    if hit is not None:
        return hit
    name = _dtype_name_slow(dtype)
    if dtype not in (int, float) and len(_NAME_CACHE) < 1024:
        try:
            _NAME_CACHE[dtype] = name
        except TypeError:
            pass
    return name


def _dtype_name_slow(dtype):
    if dtype is None:
        raise TypeError("dtype must not be None here")
    if isinstance(dtype, str):
        name = dtype
    elif dtype is bool:
        name = "bool"
    elif dtype is int:
        name = default_int_name()
    elif dtype is float:
        name = default_float_name()
    elif dtype is complex:
        name = default_complex_name()
    else:
        d = getattr(dtype, "dtype", dtype)
        if d is None:  # a jnp scalar type without a NumPy dtype (bfloat16 when ml_dtypes is absent)
            d = getattr(dtype, "__name__", dtype)
        try:
            nd = np.dtype(d)
            name = "float0" if nd == float0 else nd.name
        except TypeError:
            name = getattr(dtype, "__name__", str(dtype))
    if name == "bool_":
        name = "bool"
    if name == "bfloat16" and bfloat16 is None:
        raise TypeError(_NO_ML_DTYPES)
    if name not in _SUPPORTED:
        raise TypeError(f"dtype {name!r} is not supported by microjax_rs")
    return name


def canonical_name(name):
    """64-bit names map to 32-bit ones unless x64 is enabled."""
    if not _core.get_x64():
        return CANONICAL_32.get(name, name)
    return name


def check_user_dtype_supported(dtype, fun_name=None):
    """Warns (or raises, as `jax_explicit_x64_dtypes` says) when `dtype` is a
    64-bit dtype that x64 being off truncates to 32 bits, as JAX."""
    name = dtype_name(dtype)
    narrow = canonical_name(name)
    if narrow == name:
        return
    from .config import config

    mode = config.read("jax_explicit_x64_dtypes")
    where = f" in {fun_name}" if fun_name else ""
    msg = (f"Explicitly requested dtype {name}{where} is not available, and will be truncated to "
           f"dtype {narrow}. To enable more dtypes, set the jax_enable_x64 configuration option or "
           "the JAX_ENABLE_X64 shell environment variable.")
    if mode == "error":
        raise ValueError(msg)
    if mode == "warn":
        import warnings

        warnings.warn(msg, UserWarning, stacklevel=3)


# JAX's narrow dtypes (ml_dtypes' sub-byte integers, 8- and 4-bit floats):
# microjax_rs names them but makes no arrays of them.
NARROW_NAMES = frozenset(("int1", "int2", "int4", "uint1", "uint2", "uint4", "float4_e2m1fn", "float6_e2m3fn",
                          "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
                          "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
                          "float8_e5m2fnuz", "float8_e8m0fnu"))


def narrow_dtype(dtype):
    """The NumPy dtype of `dtype` if it is one of JAX's narrow dtypes, else None."""
    d = getattr(dtype, "dtype", dtype)
    if isinstance(d, str) or (isinstance(d, type) and issubclass(d, np.generic)) or isinstance(d, np.dtype):
        try:
            nd = np.dtype(d)
        except TypeError:
            return None
        return nd if nd.name in NARROW_NAMES else None
    return None


def canonicalize_dtype(dtype):
    """The dtype arrays of `dtype` get (64-bit → 32-bit unless x64); `None`
    is NumPy's default (float64, so float32 with x64 off), and a narrow
    dtype (int4, float8_*) is its own canonical dtype, as JAX."""
    if dtype is None:
        return np_dtype(canonical_name("float64"))
    narrow = narrow_dtype(dtype)
    if narrow is not None:
        return narrow
    return np_dtype(canonical_name(dtype_name(dtype)))


def default_int_name():
    return "int64" if _core.get_x64() else "int32"


def default_float_name():
    return "float64" if _core.get_x64() else "float32"


def default_complex_name():
    return "complex128" if _core.get_x64() else "complex64"


_NP_CACHE = {}


def np_dtype(name):
    d = _NP_CACHE.get(name)
    if d is None:
        if name == "bfloat16":
            if bfloat16 is None:
                raise TypeError(_NO_ML_DTYPES)
            d = _BFLOAT16
        elif name == "float0":
            d = float0
        else:
            d = np.dtype(name)
        _NP_CACHE[name] = d
    return d


class TypePromotionError(ValueError):
    """JAX's error for a promotion the `jax_numpy_dtype_promotion` mode
    forbids. microjax_rs implements the standard mode only, in which every
    pair of dtypes promotes, so it raises this for no input."""


def itemsize_bits(dtype):
    """The size of one element of `dtype` in bits (bool: 8)."""
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    narrow = narrow_dtype(dtype)
    if narrow is not None:  # int4: 4 bits, float8_e5m2: 8 bits
        return int(_ml_dtypes.iinfo(narrow).bits if "int" in narrow.name else _ml_dtypes.finfo(narrow).bits)
    return np.dtype(np_dtype(dtype_name(dtype)) if not isinstance(dtype, np.dtype) else dtype).itemsize * 8


def scalar_type_of(x):
    """The Python scalar type (`bool`, `int`, `float` or `complex`) of the
    kind of `x`'s dtype; `x` is a scalar or an array."""
    kind = np.dtype(np_dtype(dtype_name(getattr(x, "dtype", None) or _py_dtype(x)))).kind
    if kind == "b":
        return bool
    if kind in "iu":
        return int
    if kind == "f" or kind == "V":  # V: bfloat16 and the other ml_dtypes floats
        return float
    if kind == "c":
        return complex
    raise TypeError(f"Invalid scalar value {x}")


def _py_dtype(x):
    t = type(x)
    if t in (bool, int, float, complex):
        return {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}[t]
    return np.asarray(x).dtype


def is_weak_scalar(x):
    """Python int/float/complex are weakly typed; bool is not (as JAX)."""
    return type(x) in (int, float, complex)


def scalar_type_name(x):
    """dtype name a Python scalar becomes."""
    t = type(x)
    if t is bool:
        return "bool"
    if t is int:
        return default_int_name()
    if t is float:
        return default_float_name()
    if t is complex:
        return default_complex_name()
    raise TypeError(f"not a Python scalar: {x!r}")


_BFLOAT16_PARENTS = (np.floating, np.inexact, np.number, np.generic)


def issubdtype(a, b):
    """`jax.dtypes.issubdtype`, with JAX's extensions of NumPy's rule: a PRNG
    key dtype is a subtype of `jax.dtypes.prng_key` (and `extended`), of
    itself and of `np.generic` only; bfloat16 is a floating type."""
    a_type = getattr(a, "type", None)
    if isinstance(a_type, type) and issubclass(a_type, extended):
        if isinstance(b, type) and issubclass(b, extended):
            return issubclass(a_type, b)
        return a == b or b is np.generic
    if isinstance(b, type) and issubclass(b, extended):
        return False
    name = dtype_name(a)
    if name == "bfloat16" and b in _BFLOAT16_PARENTS:
        return True
    return np.issubdtype(np_dtype(name), b)


def is_float_name(name):
    return name in FLOAT_NAMES


def is_complex_name(name):
    return name in COMPLEX_NAMES


def real_dtype_name(name):
    """The dtype name of the real and imaginary parts of complex `name`
    (float32 for complex64); any other name unchanged."""
    if not is_complex_name(name):
        return name
    return np.empty((), np_dtype(name)).real.dtype.name


def is_inexact_name(name):
    """Floating or complex: the dtypes that carry tangents."""
    return name in INEXACT_NAMES


def is_int_name(name):
    return name in INT_NAMES


def promote(pairs, canonical=True):
    """JAX's `result_type` over (dtype_name, weak) pairs → (dtype_name, weak);
    `canonical=False`: the lattice's answer without x64 canonicalization
    (`promote_types`)."""
    return _core.result_type(list(pairs), canonical)


class finfo:
    def __init__(self, dtype):
        name = dtype_name(dtype)
        info = np.finfo(np_dtype(name))
        self.dtype = np.dtype(info.dtype)
        self.bits = info.bits
        self.eps = info.eps
        self.max = info.max
        self.min = info.min
        self.tiny = info.tiny
        self.smallest_normal = info.tiny
        self.resolution = info.resolution


def iinfo(dtype):
    return np.iinfo(np_dtype(dtype_name(dtype)))


def result_type(*args, return_weak_type_flag=False):
    """`jax.dtypes.result_type`: JAX's promotion of arrays, scalars and dtypes
    (weak Python scalars lose to arrays); with `return_weak_type_flag`, also
    whether the result is weakly typed."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    from .core import get_aval
    pairs = []
    for a in args:
        if a is None or isinstance(a, (str, type, np.dtype)):
            pairs.append((canonical_name(dtype_name(a)), False))
        elif type(a) in _PY_SCALARS:
            pairs.append((scalar_type_name(a), is_weak_scalar(a)))
        else:
            aval = get_aval(a)
            pairs.append((aval.dtype_name, aval.weak_type))
    name, weak = promote(pairs)
    dt = np_dtype(name)
    return (dt, bool(weak)) if return_weak_type_flag else dt
