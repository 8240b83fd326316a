"""Elementwise functions (`jax.numpy` ufuncs): arithmetic and comparisons
(with a Rust fast path for eager operands), transcendental functions,
rounding, logical and bitwise operations, and the internal three-argument
`_where` the other modules select with."""
import builtins
import operator as _op

import numpy as _np

from ... import _core, core, dtypes as _dt, lax
from .. import profiling as _profiling
from . import _ufunc_docs
from ...config import config
from ...core import ArrayImpl, Tracer
from ...lax import _convolution
from .lax_numpy import full, zeros_like
from .scalar_types import finfo
from .util import (_EAGER_OPERANDS, _FLOAT_NAMES, _SCALARS, _and, _arr, _aval, _broadcast_shapes,
                   _broadcast_to_shape, _const, _inexact1, _is_bool, _is_float, _is_int, _not, _or, _promote,
                   _promote_dtypes, _promote_inexact, _promote_shapes)


# -- arithmetic and comparisons ------------------------------------------------

def _is_complex(a):
    return _dt.is_complex_name(_aval(a).dtype_name)


def _no_complex(a, exc, msg):
    """Raise `exc(msg)` where `a` is complex (functions JAX leaves undefined there)."""
    if _is_complex(a):
        raise exc(msg)


def _lax_rejects(prim, dtype_name):
    """JAX's message of a float-only lax primitive given a complex operand."""
    return f"{prim} does not accept dtype {dtype_name}. Accepted dtypes are subtypes of floating."


def _bool_subtract(a, b):
    raise TypeError("jnp.subtract is not defined for boolean arrays; use logical_xor or bitwise_xor")


# add and multiply of booleans are logical or / and (as NumPy and JAX).
_BOOL_BINARY = {"add": lambda a, b: lax.max(a, b), "multiply": lambda a, b: lax.min(a, b),
                "subtract": _bool_subtract}


def _complex_ordering(lax_fn):
    """An ordering comparison of complex operands as JAX's jnp orders them:
    lexicographically, by the real parts, then by the imaginary parts where
    the real parts are equal (a NaN part compares false)."""

    def fn(a, b):
        on_imag = lax_fn(lax.imag(a), lax.imag(b))
        on_real = lax_fn(lax.real(a), lax.real(b))
        return lax.select(lax.eq(lax.real(a), lax.real(b)), on_imag, on_real)

    return fn


_ORDERINGS = ("less", "less_equal", "greater", "greater_equal")


def _binary(lax_fn, inexact=False, doc=None, operator=None, eager=None):
    """A jnp binary function. Eagerly, with concrete operands and an
    operator the Rust fast path implements, it defers to that operator (which
    does promotion and broadcasting in Rust and falls back to `_slow`); with
    `eager` (a name `_core.eager_binary` takes) and no operator, to that."""

    bool_fn = _BOOL_BINARY.get(doc)
    complex_fn = _complex_ordering(lax_fn) if doc in _ORDERINGS else None
    prim_name = lax_fn.__name__  # names the primitive in broadcasting errors, as JAX
    fun_name = doc or prim_name  # names the function in rank-promotion errors, as JAX

    def slow(x1, x2):
        # Under a trace: two float tracers of one aval, or a float tracer and
        # a Python float, need no promotion or broadcasting; two float
        # tracers of one dtype need broadcasting only.
        if type(x1) is Tracer:
            a1 = x1.aval
            t2 = type(x2)
            if t2 is Tracer:
                a2 = x2.aval
                if a1.dtype_name in _FLOAT_NAMES and (a1 is a2 or (
                        a1.dtype_name == a2.dtype_name and a1.weak_type == a2.weak_type)):
                    if a1 is a2 or a1.shape == a2.shape:
                        return lax_fn(x1, x2)
                    return lax_fn(*_promote_shapes((x1, x2), prim_name, fun_name))
            elif t2 is float and a1.dtype_name in _FLOAT_NAMES:
                return lax_fn(x1, x2)
        elif type(x1) is float and type(x2) is Tracer and x2.aval.dtype_name in _FLOAT_NAMES:
            return lax_fn(x1, x2)
        a, b = (_promote_inexact if inexact else _promote)(x1, x2, op=prim_name, fun=fun_name)
        if bool_fn is not None and _aval(a).dtype_name == "bool":
            return bool_fn(a, b)
        if complex_fn is not None and _dt.is_complex_name(_aval(a).dtype_name):
            return complex_fn(a, b)
        return lax_fn(a, b)

    if operator is None and eager is not None:
        def fn(x1, x2, /):
            # NumPy operands as in the operator case below; either operand
            # may be the concrete array (the other a Python scalar).
            if type(x1) is _np.ndarray:
                x1 = core.to_array(x1)
            if type(x2) is _np.ndarray:
                x2 = core.to_array(x2)
            out = None
            if type(x1) is ArrayImpl and type(x2) in _EAGER_OPERANDS:
                out = _core.eager_binary(x1, x2, eager)
            elif type(x2) is ArrayImpl and type(x1) in _EAGER_OPERANDS:
                out = _core.eager_binary(x2, x1, eager, True)
            return slow(x1, x2) if out is None else out
    elif operator is None:
        fn = slow
    else:
        # No trace-stack test here: the Rust operator takes its fast path only
        # with no trace active (and no debug checks), else it calls `_slow`
        # through the binary hook, so the result is `slow`'s either way.
        def fn(x1, x2, /):
            # NumPy operands are arrays of their canonical dtype (not weak)
            # whatever the other operand: converted here, they take the fast path.
            if type(x1) is _np.ndarray:
                x1 = core.to_array(x1)
            if type(x2) is _np.ndarray:
                x2 = core.to_array(x2)
            if type(x1) is ArrayImpl and type(x2) in _EAGER_OPERANDS:
                return operator(x1, x2)
            return slow(x1, x2)

    fn.__name__ = doc or lax_fn.__name__
    fn._slow = slow
    return fn


add = _binary(lax.add, doc="add", operator=_op.add)
subtract = _binary(lax.sub, doc="subtract", operator=_op.sub)
multiply = _binary(lax.mul, doc="multiply", operator=_op.mul)
true_divide = divide = _binary(lax.div, inexact=True, doc="true_divide", operator=_op.truediv)
maximum = _binary(lax.max, doc="maximum", eager="max")
minimum = _binary(lax.min, doc="minimum", eager="min")
equal = _binary(lax.eq, doc="equal", operator=_op.eq)
not_equal = _binary(lax.ne, doc="not_equal", operator=_op.ne)
less = _binary(lax.lt, doc="less", operator=_op.lt)
less_equal = _binary(lax.le, doc="less_equal", operator=_op.le)
greater = _binary(lax.gt, doc="greater", operator=_op.gt)
greater_equal = _binary(lax.ge, doc="greater_equal", operator=_op.ge)

# `lax.reduce_window` lowers these as its add / max / min windows.
_convolution.register_monoid(add, "add")
_convolution.register_monoid(maximum, "max")
_convolution.register_monoid(minimum, "min")


def _unary(lax_fn, inexact=True, name=None):
    prim = lax._P[lax_fn.__name__]
    handle = prim.handle({})
    ok_dtypes = _FLOAT_NAMES if inexact else None

    def fn(x, /):
        tx = type(x)
        if tx is _np.ndarray:  # an array of its canonical dtype
            x = core.to_array(x)
            tx = type(x)
        if (tx is ArrayImpl and not core._state.stack and not config.debug_checks and not _profiling.ACTIVE
                and (ok_dtypes is None or x.dtype_name in ok_dtypes)):
            return handle.apply1(x)
        if tx is Tracer and x.aval.dtype_name in _FLOAT_NAMES:
            stack = core._state.stack
            if stack:  # nothing to promote: bind in the innermost trace
                return stack[-1].process_primitive(prim, (x,), {})
            return lax_fn(x)
        (a,) = (_promote_inexact if inexact else _promote)(x, op=lax_fn.__name__)
        return lax_fn(a)

    fn.__name__ = name or lax_fn.__name__
    fast = _core.FastUnary(handle, inexact, fn, prim)
    fast.__name__ = fast.__qualname__ = fn.__name__
    fast.__doc__ = _ufunc_docs.doc(fn.__name__)
    fast.__module__ = __name__
    fast.__wrapped__ = fn
    fast._slow = fn
    return fast


sin = _unary(lax.sin)
cos = _unary(lax.cos)
tanh = _unary(lax.tanh)
exp = _unary(lax.exp)
log = _unary(lax.log)
sqrt = _unary(lax.sqrt)
negative = _unary(lax.neg, inexact=False, name="negative")
absolute = abs = _unary(lax.abs, inexact=False, name="absolute")
sign = _unary(lax.sign, inexact=False, name="sign")


def positive(x, /):
    (a,) = _promote(x)
    return a


def square(x, /):
    (a,) = _promote(x)
    return lax.integer_pow(a, 2)


def _where(condition, x, y, /):
    """jnp.where(condition, x, y): promotion, broadcasting, select_n (the
    public `where`, in `sorting`, adds the one-argument form and key arrays)."""
    c = condition
    if _aval(c).dtype_name != "bool":
        c = not_equal(c, 0)
    a, b = _promote_dtypes(x, y)
    shape = _broadcast_shapes(*(_aval(v).shape for v in (c, a, b)))
    # select_n needs equal case shapes; a scalar predicate may stay scalar.
    a, b = _broadcast_to_shape(a, shape), _broadcast_to_shape(b, shape)
    if _aval(c).shape != ():
        c = _broadcast_to_shape(c, shape)
    return lax.select_n(c, b, a)


where_ = _where  # exported as jnp.where_ (an internal alias, not JAX API)


# -- exponents, logarithms, trigonometry ---------------------------------------

def _lax_inexact(lax_fn, name, doc=None, keyword=False):
    """The jnp function of an inexact lax unary: promotes to a float dtype, then `lax_fn`.
    `keyword`: the operand may also be passed as `x=` (and may be a list), as in
    jax.scipy.special; jnp's take it by position only."""
    if keyword:
        def fn(x):
            return lax_fn(_inexact1(_arr(x)))
    else:
        def fn(x, /):
            return lax_fn(_inexact1(x))
    fn.__name__ = name
    if doc is not None:
        fn.__doc__ = doc
    return fn


_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046

exp2 = _lax_inexact(lax.exp2, "exp2")
expm1 = _lax_inexact(lax.expm1, "expm1")
log1p = _lax_inexact(lax.log1p, "log1p")
tan = _lax_inexact(lax.tan, "tan")
sinh = _lax_inexact(lax.sinh, "sinh")
cosh = _lax_inexact(lax.cosh, "cosh")
arcsinh = _lax_inexact(lax.asinh, "arcsinh")
arccosh = _lax_inexact(lax.acosh, "arccosh")
arctanh = _lax_inexact(lax.atanh, "arctanh")
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def _nan_like(a):
    return lax.div(lax.sub(a, a), lax.sub(a, a))


def log2(x, /):
    a = _inexact1(x)
    return lax.div(lax.log(a), _LN2)


def log10(x, /):
    a = _inexact1(x)
    return lax.div(lax.log(a), _LN10)


def cbrt(x, /):
    return lax.cbrt(_inexact1(x))


def reciprocal(x, /):
    a = _inexact1(x)
    return lax.integer_pow(a, -1)


def deg2rad(x, /):
    return lax.mul(_inexact1(x), _np.pi / 180)


def rad2deg(x, /):
    return lax.mul(_inexact1(x), 180 / _np.pi)


radians, degrees = deg2rad, rad2deg


# -- floating-point classification ---------------------------------------------

def _float_test(x, test, parts=None, other=False):
    """The boolean `test(a)` of a float array ``x``; `other` everywhere for an integer or
    boolean one; for a complex one, `parts(test(real), test(imag))` when `parts` is given
    (NumPy's isnan/isinf/isfinite)."""
    a = _arr(x)
    if parts is not None and _dt.is_complex_name(_aval(a).dtype_name):
        return parts(test(lax.real(a)), test(lax.imag(a)))
    if not _is_float(a):
        return full(_aval(a).shape, other, "bool")
    return test(a)


def isnan(x, /):
    return _float_test(x, lambda a: lax.ne(a, a), lax.bitwise_or)


def isinf(x, /):
    return _float_test(x, lambda a: lax.eq(lax.abs(a), _np.inf), lax.bitwise_or)


def _no_complex_infs(a):
    _no_complex(a, ValueError, "isposinf/isneginf are not well defined for complex types")


def isposinf(x, /):
    _no_complex_infs(_arr(x))
    return _float_test(x, lambda a: lax.eq(a, _np.inf))


def isneginf(x, /):
    _no_complex_infs(_arr(x))
    return _float_test(x, lambda a: lax.eq(a, -_np.inf))


def isfinite(x, /):
    return _float_test(x, lax.is_finite, lax.bitwise_and, other=True)


def signbit(x, /):
    a = _arr(x)
    _no_complex(a, ValueError, f"jax.numpy.signbit is not well defined for {_aval(a).dtype_name}")
    if _is_bool(a) or _aval(a).dtype_name.startswith("uint"):
        return full(_aval(a).shape, False, "bool")
    if _is_int(a):
        return lax.lt(a, 0)
    bits = _SAME_WIDTH_INT.get(_aval(a).dtype_name)
    if bits is not None:
        # The sign bit itself: set for -0.0 and for a NaN with its sign set.
        return lax.lt(lax.bitcast_convert_type(a, bits), 0)
    # -0.0 has its sign bit set: 1/-0.0 = -inf.
    return _or(lax.lt(a, 0.0), lax.lt(lax.div(1.0, a), 0.0))


_SAME_WIDTH_INT = {"float16": "int16", "bfloat16": "int16", "float32": "int32", "float64": "int64"}


# -- miscellaneous math --------------------------------------------------------

def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """Elementwise ``arr`` limited to the interval ``[min, max]``.

    Args:
      arr: the array.
      min, max: the bounds (scalars or arrays broadcast with ``arr``); either may be None for
        no bound on that side.
      a, a_min, a_max: the older NumPy names of ``arr``, ``min`` and ``max`` (deprecated in JAX).

    Where ``min > max`` the result is ``max``, as in NumPy.
    """
    if arr is None:
        arr = a
    if a_min is not None:
        min = a_min
    if a_max is not None:
        max = a_max
    (x,) = _promote(arr)
    if builtins.any(v is not None and _is_complex(_arr(v)) for v in (x, min, max)):
        raise ValueError("Clip received a complex value either through the input or the min/max keywords. "
                         "Complex values have no ordering and cannot be clipped. Please convert to a real "
                         "value or array by taking the real or imaginary components via jax.numpy.real/imag.")
    if min is not None:
        x = maximum(min, x)
    if max is not None:
        x = minimum(max, x)
    return x


def hypot(x1, x2, /):
    a, b = _promote_inexact(x1, x2, fun="hypot")
    _no_complex(a, ValueError, "jnp.hypot is not well defined for complex-valued inputs. Please convert to "
                "real values first, such as by using abs(x)")
    a, b = lax.abs(a), lax.abs(b)
    big, small = lax.max(a, b), lax.min(a, b)
    safe_big = _where(lax.eq(big, 0.0), 1.0, big)
    r = lax.div(small, safe_big)
    out = lax.mul(big, lax.sqrt(lax.add(1.0, lax.mul(r, r))))
    return _where(lax.eq(big, 0.0), 0.0, _where(lax.eq(big, _np.inf), _np.inf, out))


def _logaddexp(x1, x2, base2):
    """`log(exp(x1) + exp(x2))`, base 2 where `base2`."""
    a, b = _promote_inexact(x1, x2, fun="logaddexp2" if base2 else "logaddexp")
    if _is_complex(a):
        return _complex_logaddexp(a, b, base2)
    amax = lax.max(a, b)
    delta = lax.sub(a, b)
    tail = lax.neg(lax.abs(delta))
    if base2:
        out = lax.add(amax, lax.div(log1p(exp2(tail)), _LN2))
    else:
        out = lax.add(amax, log1p(lax.exp(tail)))
    # Equal infinities: delta is nan, the answer is a + b (inf or -inf).
    return _where(lax.ne(delta, delta), lax.add(a, b), out)


def logaddexp(x1, x2, /):
    return _logaddexp(x1, x2, False)


def _complex_logaddexp(a, b, base2):
    """`log(exp(a) + exp(b))` (base 2 where `base2`) of complex values, as JAX
    computes it: the lexicographic larger value `m` plus
    `log1p(exp(a + b - 2m))`, the imaginary part wrapped into `[-w, w]`
    (`w = pi`, or `pi / ln 2` in base 2)."""
    m = lax.max(a, b)
    d = lax.sub(lax.add(a, b), lax.mul(m, 2.0))
    if base2:
        out = lax.add(m, lax.mul(log1p(exp2(d)), 1.0 / _LN2))
        w = _np.pi / _LN2
    else:
        out = lax.add(m, log1p(lax.exp(d)))
        w = _np.pi
    im = lax.imag(out)
    r = lax.rem(lax.add(im, w), 2 * w)
    r = _where(lax.lt(r, 0.0), lax.add(r, 2 * w), r)
    return lax.complex(lax.real(out), lax.sub(r, w))


def logaddexp2(x1, x2, /):
    return _logaddexp(x1, x2, True)


def sinc(x, /):
    a = _inexact1(x)
    is_zero = lax.eq(a, 0.0)
    safe = _where(is_zero, 1.0, a)
    pix = lax.mul(safe, _np.pi)
    # At 0, the second-order Taylor polynomial (exact value 1, correct first
    # and second derivatives under grad).
    pia = lax.mul(a, _np.pi)
    taylor = lax.sub(1.0, lax.div(lax.mul(pia, pia), 6.0))
    return _where(is_zero, taylor, lax.div(lax.sin(pix), pix))


def heaviside(x1, x2, /):
    a, b = _promote_inexact(x1, x2)
    return _where(lax.lt(a, 0.0), 0.0, _where(lax.gt(a, 0.0), 1.0, b))


def fmax(x1, x2, /):
    a, b = _promote(x1, x2, fun="greater")
    if not (_is_float(a) or _is_complex(a)):
        return lax.max(a, b)
    return _where(isnan(b), a, _where(isnan(a), b, lax.max(a, b)))


def fmin(x1, x2, /):
    a, b = _promote(x1, x2, fun="less")
    if not (_is_float(a) or _is_complex(a)):
        return lax.min(a, b)
    return _where(isnan(b), a, _where(isnan(a), b, lax.min(a, b)))


def float_power(x1, x2, /):
    a, b = _promote_inexact(x1, x2, fun="float_power")
    return lax.pow(a, b)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf`` / ``neginf`` (default: the
    dtype's largest and smallest finite values). Non-float inputs are returned unchanged;
    ``copy`` is accepted for NumPy compatibility.
    """
    a = _arr(x)
    if _is_complex(a):
        parts = (nan_to_num(lax.real(a), nan=nan, posinf=posinf, neginf=neginf),
                 nan_to_num(lax.imag(a), nan=nan, posinf=posinf, neginf=neginf))
        return lax.complex(*parts)
    if not _is_float(a):
        return a
    info = finfo(_aval(a).dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    out = _where(lax.ne(a, a), nan, a)
    out = _where(lax.eq(out, _np.inf), posinf, out)
    return _where(lax.eq(out, -_np.inf), neginf, out)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise test ``|a - b| <= atol + rtol * |b|``; infinities are close only to themselves and
    NaNs only to NaNs when ``equal_nan`` is true. Returns a boolean array.
    """
    a, b = _promote(a, b, fun="isclose")
    if not _is_float(a):
        if _is_bool(a):
            return lax.eq(a, b)
        a, b = _promote_inexact(a, b, fun="isclose")
    out = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    # Infinities are close only to themselves.
    both_inf = _and(isinf(a), isinf(b))
    out = _where(_or(isinf(a), isinf(b)), _and(both_inf, lax.eq(a, b)), out)
    if equal_nan:
        out = _or(out, _and(isnan(a), isnan(b)))
    return out


# -- logic and bits ------------------------------------------------------------

def logical_not(x, /):
    a = _arr(x)
    return _not(a if _is_bool(a) else lax.ne(a, _const(0, _aval(a).dtype_name)))


def _to_bool(x):
    a = _arr(x)
    return a if _is_bool(a) else not_equal(a, 0)


def logical_and(x1, x2, /):
    return _and(_to_bool(x1), _to_bool(x2))


def logical_or(x1, x2, /):
    return _or(_to_bool(x1), _to_bool(x2))


def logical_xor(x1, x2, /):
    return not_equal(_to_bool(x1), _to_bool(x2))


def _int_bitop(lax_fn, name):
    def fn(x1, x2, /):
        a, b = _promote(x1, x2)
        if _is_float(a):
            raise TypeError(f"{name} is only defined for integer and boolean types, got {_aval(a).dtype_name}")
        return lax_fn(a, b)
    fn.__name__ = name
    return fn


bitwise_and = _int_bitop(lax.bitwise_and, "bitwise_and")
bitwise_or = _int_bitop(lax.bitwise_or, "bitwise_or")
bitwise_xor = _int_bitop(lax.bitwise_xor, "bitwise_xor")


def invert(x, /):
    a = _arr(x)
    if _is_float(a):
        raise TypeError(f"invert is only defined for integer and boolean types, got {_aval(a).dtype_name}")
    if _is_bool(a):
        return _not(a)
    return lax.bitwise_not(a)


bitwise_not = bitwise_invert = invert


# -- rounding, division and powers ---------------------------------------------

def _rounded(x, reject, rule):
    """`rule(x)` for floating `x`; integer and boolean `x` come back unchanged, complex `x`
    raises TypeError with the message `reject(dtype name)`."""
    a = _arr(x)
    _no_complex(a, TypeError, reject(_aval(a).dtype_name))
    return rule(a) if _is_float(a) else a


def floor(x, /):
    return _rounded(x, lambda dt: _lax_rejects("floor", dt), lax.floor)


def ceil(x, /):
    return _rounded(x, lambda dt: _lax_rejects("ceil", dt), lax.ceil)


def trunc(x, /):
    return _rounded(
        x,
        lambda dt: f"lt does not accept dtype {dt} at position 0. Accepted dtypes "
        "at position 0 are subtypes of integer, floating, bool.",
        lambda a: _where(lax.lt(a, 0.0), ceil(a), floor(a)),
    )


fix = trunc


def round(a, decimals=0, out=None):
    """Elementwise rounding to ``decimals`` decimal places, ties to even.

    Args:
      a: the array.
      decimals: the number of decimals (negative rounds to tens, hundreds, ...).
      out: must be None.

    Integer inputs are returned unchanged for ``decimals >= 0``; negative ``decimals`` with integer
    inputs raise NotImplementedError. Also exported as ``jnp.around``.
    """
    x = _arr(a)
    if _is_complex(x):
        # Real and imaginary parts round separately (as JAX).
        return lax.complex(round(lax.real(x), decimals), round(lax.imag(x), decimals))
    if not _is_float(x):
        if decimals < 0:
            raise NotImplementedError("round of integers with negative decimals")
        return x

    def _r(v):
        return lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN)

    if decimals == 0:
        return _r(x)
    factor = 10.0 ** decimals
    return lax.div(_r(lax.mul(x, factor)), factor)


around = round


def rint(x, /):
    return round(_inexact1(x))


def floor_divide(x1, x2, /):
    a, b = _promote(x1, x2, fun="floor_divide")
    _no_complex(a, TypeError, "floor_divide does not support complex-valued inputs")
    if _is_float(a):
        return floor(lax.div(a, b))
    if _is_bool(a):
        raise TypeError("floor_divide is not defined for booleans")
    # Integer floor division from truncating division: one less where the
    # signs differ and the division is inexact. A zero divisor gives lax.div's
    # value (-1, all ones unsigned) less one for a nonzero dividend, as JAX.
    q = lax.div(a, b)
    name = _aval(a).dtype_name
    if name.startswith("uint"):
        return q
    r = lax.sub(a, lax.mul(q, b))
    zero = _const(0, name)
    adjust = _and(lax.ne(r, zero), lax.ne(lax.sign(a), lax.sign(b)))
    return _where(adjust, lax.sub(q, _const(1, name)), q)


def _no_complex_rem(a):
    _no_complex(a, TypeError, f"rem does not accept dtype {_aval(a).dtype_name} at position 0. Accepted dtypes "
                "at position 0 are subtypes of integer, floating.")


def remainder(x1, x2, /):
    a, b = _promote(x1, x2, fun="remainder")
    _no_complex_rem(a)
    if _is_bool(a):
        raise TypeError("remainder is not defined for booleans")
    if _is_float(a):
        r = lax.rem(a, b)
        zero = 0.0
    else:
        # An integer remainder by zero is 0 (JAX divides by one there).
        zero = _const(0, _aval(a).dtype_name)
        b = _where(lax.eq(b, zero), _const(1, _aval(a).dtype_name), b)
        r = lax.sub(a, lax.mul(lax.div(a, b), b))
    adjust = _and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(b, zero)))
    return _where(adjust, lax.add(r, b), r)


mod = remainder


def fmod(x1, x2, /):
    a, b = _promote(x1, x2, fun="fmod")
    _no_complex_rem(a)
    if _is_float(a):
        return lax.rem(a, b)
    # An integer fmod by zero is 0, as JAX.
    name = _aval(a).dtype_name
    b = _where(lax.eq(b, _const(0, name)), _const(1, name), b)
    return lax.sub(a, lax.mul(lax.div(a, b), b))


def divmod(x1, x2, /):
    return floor_divide(x1, x2), remainder(x1, x2)


def _int_power(base, exponent):
    """Integer power with an integer array exponent: square-and-multiply over
    the exponent's bits (unrolled; negative exponents give 0 except for ±1)."""
    name = _aval(base).dtype_name
    one = _const(1, name)
    zero = _const(0, name)
    bits = _np.dtype(name).itemsize * 8
    acc = lax.add(lax.mul(base, zero), one)
    acc = _broadcast_to_shape(acc, _broadcast_shapes(_aval(base).shape, _aval(exponent).shape))
    b = base
    e = exponent
    two = _const(2, name)
    for _ in range(bits):
        bit = lax.ne(lax.sub(e, lax.mul(lax.div(e, two), two)), zero)
        acc = _where(bit, lax.mul(acc, b), acc)
        b = lax.mul(b, b)
        e = lax.div(e, two)
    neg = lax.lt(exponent, zero) if not name.startswith("uint") else None
    if neg is not None:
        # x ** -n: 1 for x == 1, ±1 for x == -1, 0 otherwise (as JAX).
        minus_one = lax.neg(one)
        odd = lax.ne(lax.sub(exponent, lax.mul(lax.div(exponent, two), two)), zero)
        inv = _where(lax.eq(base, one), one,
                    _where(lax.eq(base, minus_one), _where(odd, minus_one, one), zero))
        acc = _where(neg, inv, acc)
    return acc


def power(x1, x2, /):
    if type(x2) is int and not isinstance(x1, _SCALARS):
        (a,) = _promote(x1)
        if x2 < 0 and not _dt.is_inexact_name(_aval(a).dtype_name):
            raise ValueError("Integers to negative integer powers are not allowed.")
        return lax.integer_pow(a, x2)
    a, b = _promote(x1, x2, fun="power")
    if _dt.is_inexact_name(_aval(a).dtype_name):
        return lax.pow(a, b)
    if _is_bool(a):
        raise TypeError("power is not defined for booleans")
    return _int_power(a, b)


pow = power


def copysign(x1, x2, /):
    a, b = _promote_inexact(x1, x2, fun="copysign")
    _no_complex(a, TypeError, "copysign does not support complex-valued inputs")
    return _where(signbit(b), lax.neg(lax.abs(a)), lax.abs(a))


def arctan2(x1, x2, /):
    a, b = _promote_inexact(x1, x2, fun="arctan2")
    return lax.atan2(a, b)


atan2 = arctan2


def arctan(x, /):
    return lax.atan(_inexact1(x))


def arcsin(x, /):
    return lax.asin(_inexact1(x))


def arccos(x, /):
    return lax.acos(_inexact1(x))


atan, asin, acos = arctan, arcsin, arccos


# -- complex parts ---------------------------------------------------------------

def conjugate(x, /):
    """The complex conjugate; real arrays are returned as they are (jnp.conjugate)."""
    x = _arr(x)
    return lax.conj(x) if _dt.is_complex_name(_aval(x).dtype_name) else x


conj = conjugate


def real(x, /):
    """The real part; real arrays are returned as they are (jnp.real)."""
    x = _arr(x)
    return lax.real(x) if _dt.is_complex_name(_aval(x).dtype_name) else x


def imag(x, /):
    """The imaginary part; zeros for real arrays (jnp.imag)."""
    x = _arr(x)
    return lax.imag(x) if _dt.is_complex_name(_aval(x).dtype_name) else zeros_like(x)


def angle(z, deg=False):
    """The argument of complex values, `atan2(imag, real)`; 0 or pi for
    real values (jnp.angle). `deg=True`: in degrees."""
    z = _arr(z)
    if _dt.is_complex_name(_aval(z).dtype_name):
        re, im = lax.real(z), lax.imag(z)
    else:
        re = _inexact1(z)
        im = zeros_like(re)
    a = lax.atan2(im, re)
    return lax.mul(a, lax._weak_like(180.0 / _np.pi, a)) if deg else a


def _left_right_shift(name):
    def fn(x1, x2, /):
        a, b = _promote(x1, x2)
        if not _is_int(a):
            raise TypeError(f"{name} is only defined for integer types")
        if name == "left_shift":
            lname = "shift_left"
        else:
            lname = "shift_right_logical" if _aval(a).dtype_name.startswith("uint") else "shift_right_arithmetic"
        return getattr(lax, lname)(a, b)
    fn.__name__ = name
    return fn


left_shift = _left_right_shift("left_shift")
right_shift = _left_right_shift("right_shift")


def modf(x, /):
    a = _inexact1(x)
    _no_complex(a, TypeError, f"ge does not accept dtype {_aval(a).dtype_name} at position 0. Accepted dtypes "
                "at position 0 are subtypes of integer, floating, bool.")
    t = trunc(a)
    return lax.sub(a, t), t


def ldexp(x1, x2, /):
    """x1 * 2**x2 (integer x2), exact over the whole exponent range: the
    power is applied in three factors so none of them overflows while the
    product is finite."""
    a = _inexact1(x1)
    e = _arr(x2)
    if not _is_int(e) or _is_complex(a):
        raise ValueError(f"ldexp not supported for input types ({_aval(_arr(x1)).dtype}, {_aval(e).dtype})")
    name = _aval(a).dtype_name
    info = finfo(name)
    # Beyond +-(max exponent - min exponent + mantissa bits) the result is inf / 0 anyway.
    limit = int(info.maxexp - info.minexp + info.nmant + 2)
    e = lax.convert_element_type(e, "int32") if _aval(e).dtype_name != "int32" else e
    e = clip(e, -limit, limit)
    third = floor_divide(e, 3)
    rest = lax.sub(e, lax.mul(third, _const(2, "int32")))
    p1 = exp2(lax.convert_element_type(third, name))
    p2 = exp2(lax.convert_element_type(rest, name))
    return multiply(multiply(multiply(a, p1), p1), p2)


# -- more elementwise functions: integer arithmetic, float decomposition, bits --

def fabs(x, /):
    """Absolute value as an inexact dtype (jnp.fabs)."""
    return lax.abs(_inexact1(x))


def _int_args(name, x1, x2):
    a, b = _promote(x1, x2)
    if not _is_int(a):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    return a, b


def _gcd_abs(a, b):
    """gcd of two non-negative integer arrays of one shape (Euclid's loop)."""
    zero = _const(0, _aval(a).dtype_name)

    def cond(state):
        return lax.reduce_or(lax.ne(state[1], zero), tuple(range(_aval(state[1]).ndim)))

    def body(state):
        x, y = state
        nonzero = lax.ne(y, zero)
        safe = _where(nonzero, y, _const(1, _aval(y).dtype_name))
        return _where(nonzero, y, x), _where(nonzero, lax.rem(x, safe), zero)

    return lax.while_loop(cond, body, (a, b))[0]


def gcd(x1, x2):
    """Greatest common divisor of integer arrays (jnp.gcd); gcd(0, 0) = 0."""
    a, b = _int_args("gcd", x1, x2)
    return _gcd_abs(lax.abs(a), lax.abs(b))


def lcm(x1, x2):
    """Least common multiple of integer arrays (jnp.lcm); 0 when either is 0."""
    a, b = _int_args("lcm", x1, x2)
    a, b = lax.abs(a), lax.abs(b)
    g = _gcd_abs(a, b)
    zero = _const(0, _aval(a).dtype_name)
    safe = _where(lax.eq(g, zero), _const(1, _aval(g).dtype_name), g)
    return _where(lax.eq(g, zero), zero, lax.mul(a, lax.div(b, safe)))


def frexp(x, /):
    """(mantissa, exponent) with x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1
    (jnp.frexp); 0, inf and nan give (x, 0). The exponent is int32."""
    a = _inexact1(x)
    _no_complex(a, TypeError, "frexp does not support complex-valued inputs")
    name = _aval(a).dtype_name
    special = _or(lax.eq(a, 0.0), _not(lax.is_finite(a)))
    safe = _where(special, _const(1, name), a)
    mag = lax.abs(safe)
    work = "float64" if name == "float64" else "float32"
    e = lax.convert_element_type(lax.add(lax.floor(log2(lax.convert_element_type(mag, work))), 1.0), "int32")
    m = ldexp(safe, lax.neg(e))
    # log2 may be one off next to powers of two: bring |m| into [0.5, 1).
    big = lax.ge(lax.abs(m), 1.0)
    m = _where(big, lax.mul(m, 0.5), m)
    e = _where(big, lax.add(e, _const(1, "int32")), e)
    small = lax.lt(lax.abs(m), 0.5)
    m = _where(small, lax.mul(m, 2.0), m)
    e = _where(small, lax.sub(e, _const(1, "int32")), e)
    return _where(special, a, m), _where(special, _const(0, "int32"), e)


def nextafter(x1, x2, /):
    """The next representable value after x1 towards x2 (jnp.nextafter)."""
    a, b = _promote_inexact(x1, x2, fun="nextafter")
    return lax.nextafter(a, b)


def spacing(x, /):
    """The distance from x to the next representable value away from zero,
    negative for negative x (jnp.spacing); nan for inf and nan."""
    a = _inexact1(x)
    _no_complex(a, ValueError, "jnp.spacing is not defined for complex inputs.")
    toward = _where(signbit(a), -_np.inf, _np.inf)
    out = lax.sub(lax.nextafter(a, lax.convert_element_type(toward, _aval(a).dtype_name)), a)
    return _where(lax.is_finite(a), out, _np.nan)


def bitwise_count(x, /):
    """The number of 1 bits in |x| (jnp.bitwise_count), as uint8."""
    a = _arr(x)
    name = _aval(a).dtype_name
    if _is_bool(a):
        return lax.convert_element_type(a, "uint8")
    if not _is_int(a):
        raise TypeError(f"population_count does not accept dtype {name}. "
                        "Accepted dtypes are subtypes of integer.")
    if not name.startswith("uint"):
        a = lax.abs(a)
    return lax.convert_element_type(lax.population_count(a), "uint8")


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def iscomplex(x):
    """Where the imaginary part is nonzero (false everywhere for real dtypes): jnp.iscomplex."""
    x = _arr(x)
    if not _dt.is_complex_name(_aval(x).dtype_name):
        return full(_aval(x).shape, False, "bool")
    return lax.ne(lax.imag(x), lax._weak_like(0, lax.imag(x)))


def isreal(x):
    """Where the imaginary part is zero (true everywhere for real dtypes): jnp.isreal."""
    x = _arr(x)
    if not _dt.is_complex_name(_aval(x).dtype_name):
        return full(_aval(x).shape, True, "bool")
    return lax.eq(lax.imag(x), lax._weak_like(0, lax.imag(x)))


# Modified Bessel function of the first kind, order 0. Below _I0_SWITCH the
# power series sum_k (x^2/4)^k / (k!)^2, above it the asymptotic expansion
# e^x / sqrt(2 pi x) * sum_k ((2k-1)!!)^2 / (k! (8x)^k); the derivative is
# the one of the evaluated expression (it approximates i1, 0 at x = 0).
_I0_SWITCH = 15.0


def _i0_series(q, terms):
    term = lax.add(lax.mul(q, 0.0), 1.0)
    total = term
    for k in range(1, terms):
        term = lax.mul(term, lax.div(q, float(k * k)))
        total = lax.add(total, term)
    return total


def _i0_asymptotic(x, terms):
    inv = lax.div(1.0, lax.mul(x, 8.0))
    term = lax.add(lax.mul(x, 0.0), 1.0)
    total = term
    for k in range(1, terms):
        term = lax.mul(term, lax.mul(inv, float((2 * k - 1) ** 2) / k))
        total = lax.add(total, term)
    # e^x / sqrt(2 pi x), as e^(x/2) * (e^(x/2) / sqrt(2 pi x)) to stay finite a little longer.
    half = lax.exp(lax.mul(x, 0.5))
    return lax.mul(lax.mul(half, lax.div(half, lax.sqrt(lax.mul(x, 2 * _np.pi)))), total)


def i0(x):
    """The modified Bessel function of the first kind of order 0 (jnp.i0)."""
    a = _inexact1(x)
    _no_complex(a, ValueError, f"Unsupported input type to jax.numpy.i0: {_aval(a).dtype_name}")
    name = _aval(a).dtype_name
    work = "float64" if name == "float64" else "float32"
    w = lax.abs(lax.convert_element_type(a, work))
    small = lax.le(w, _I0_SWITCH)
    ws = _where(small, w, 0.0)
    wl = _where(small, _I0_SWITCH + 1.0, w)
    series_terms, asym_terms = (45, 24) if work == "float64" else (32, 14)
    out = _where(small, _i0_series(lax.mul(lax.mul(ws, ws), 0.25), series_terms), _i0_asymptotic(wl, asym_terms))
    return lax.convert_element_type(out, name)


_ufunc_docs.apply(globals())
