"""Docstrings of the elementwise jnp functions (`ufuncs`, `ufunc_api`).

Most elementwise functions are made by a few factories, so their text lives
in one table here: what the function computes, its arity and its dtype rule.
`doc(name)` builds the full docstring; `apply(namespace)` gives it to every
function of the namespace that has no docstring of its own (or only the
factory's generic one)."""
import textwrap as _textwrap

# The dtype rule of each kind of elementwise function.
_DTYPE_RULES = {
    "F": ("Integer and boolean inputs are promoted to the default float dtype (float32, or float64 "
          "with x64 enabled); floating inputs keep their dtype."),
    "S": ("The result has the inputs' promoted dtype (JAX's promotion rules: a Python scalar is weakly "
          "typed and does not widen an array's dtype)."),
    "B": "The result is boolean; the inputs may have any dtype.",
    "I": "Integer and boolean inputs only (a float input raises TypeError); the result keeps the promoted dtype.",
}

# name: (what it computes, arity, dtype rule, optional note)
TABLE = {
    # arithmetic
    "add": ("Elementwise sum ``x1 + x2``.", 2, "S", "For booleans this is logical or, as in NumPy."),
    "subtract": ("Elementwise difference ``x1 - x2``.", 2, "S", "Boolean inputs raise TypeError, as in JAX."),
    "multiply": ("Elementwise product ``x1 * x2``.", 2, "S", "For booleans this is logical and."),
    "true_divide": ("Elementwise true division ``x1 / x2``.", 2, "F", "Also exported as ``jnp.divide``."),
    "floor_divide": ("Elementwise floor division ``x1 // x2`` (the quotient rounded towards -inf).", 2, "S",
                     "Integer division by zero gives the result XLA gives (no exception)."),
    "remainder": ("Elementwise remainder of ``x1 // x2``, with the sign of the divisor ``x2``.", 2, "S",
                  "Also exported as ``jnp.mod``; integer ``x % 0`` follows XLA."),
    "fmod": ("Elementwise C-style remainder of ``x1 / x2``, with the sign of the dividend ``x1``.", 2, "S"),
    "divmod": ("Elementwise ``(x1 // x2, x1 % x2)`` as a pair of arrays.", 2, "S"),
    "power": ("Elementwise ``x1 ** x2``.", 2, "S",
              "Integer exponents of integer bases use repeated squaring; also exported as ``jnp.pow``."),
    "float_power": ("Elementwise ``x1 ** x2`` computed in floating point.", 2, "F"),
    "negative": ("Elementwise negation ``-x``.", 1, "S", "Boolean inputs raise TypeError, as in JAX."),
    "positive": ("Elementwise unary plus ``+x`` (a copy of ``x`` with its promoted dtype).", 1, "S"),
    "absolute": ("Elementwise absolute value ``|x|``.", 1, "S",
                 "Also exported as ``jnp.abs``; ``grad(jnp.abs)(0.)`` is 1, as in JAX."),
    "sign": ("Elementwise sign of ``x``: -1, 0 or 1 (NaN for NaN).", 1, "S"),
    "square": ("Elementwise square ``x * x``.", 1, "S",
               "Differs from JAX: a boolean input raises TypeError here (JAX returns int32)."),
    "sqrt": ("Elementwise non-negative square root.", 1, "F", "Negative inputs give NaN."),
    "cbrt": ("Elementwise real cube root (negative for negative ``x``).", 1, "F"),
    "reciprocal": ("Elementwise reciprocal ``1 / x``.", 1, "F"),
    "maximum": ("Elementwise maximum of ``x1`` and ``x2``; NaN if either is NaN.", 2, "S"),
    "minimum": ("Elementwise minimum of ``x1`` and ``x2``; NaN if either is NaN.", 2, "S"),
    "fmax": ("Elementwise maximum that ignores NaN (NaN only where both inputs are NaN).", 2, "S"),
    "fmin": ("Elementwise minimum that ignores NaN (NaN only where both inputs are NaN).", 2, "S"),
    "heaviside": ("Elementwise Heaviside step: 0 for ``x1 < 0``, ``x2`` for ``x1 == 0``, 1 for ``x1 > 0``.",
                  2, "F"),
    "copysign": ("Elementwise ``|x1|`` with the sign of ``x2``.", 2, "F"),
    "hypot": ("Elementwise hypotenuse ``sqrt(x1**2 + x2**2)``, computed without overflow.", 2, "F"),
    # comparisons
    "equal": ("Elementwise ``x1 == x2``.", 2, "B"),
    "not_equal": ("Elementwise ``x1 != x2``.", 2, "B"),
    "less": ("Elementwise ``x1 < x2``.", 2, "B"),
    "less_equal": ("Elementwise ``x1 <= x2``.", 2, "B"),
    "greater": ("Elementwise ``x1 > x2``.", 2, "B"),
    "greater_equal": ("Elementwise ``x1 >= x2``.", 2, "B"),
    # exponents and logarithms
    "exp": ("Elementwise natural exponential ``e**x``.", 1, "F"),
    "exp2": ("Elementwise base-2 exponential ``2**x``.", 1, "F"),
    "expm1": ("Elementwise ``exp(x) - 1``, accurate for small ``x``.", 1, "F"),
    "log": ("Elementwise natural logarithm.", 1, "F", "Zero gives -inf and negative inputs NaN."),
    "log2": ("Elementwise base-2 logarithm.", 1, "F"),
    "log10": ("Elementwise base-10 logarithm.", 1, "F"),
    "log1p": ("Elementwise ``log(1 + x)``, accurate for small ``x``.", 1, "F"),
    "logaddexp": ("Elementwise ``log(exp(x1) + exp(x2))`` without overflow.", 2, "F"),
    "logaddexp2": ("Elementwise ``log2(2**x1 + 2**x2)`` without overflow.", 2, "F"),
    # trigonometric and hyperbolic
    "sin": ("Elementwise sine (radians).", 1, "F"),
    "cos": ("Elementwise cosine (radians).", 1, "F"),
    "tan": ("Elementwise tangent (radians).", 1, "F"),
    "arcsin": ("Elementwise inverse sine, in radians within [-pi/2, pi/2].", 1, "F",
               "Also exported as ``jnp.asin``."),
    "arccos": ("Elementwise inverse cosine, in radians within [0, pi].", 1, "F", "Also exported as ``jnp.acos``."),
    "arctan": ("Elementwise inverse tangent, in radians within [-pi/2, pi/2].", 1, "F",
               "Also exported as ``jnp.atan``."),
    "arctan2": ("Elementwise angle of the point ``(x2, x1)``: the quadrant-aware inverse tangent of "
                "``x1 / x2``, within [-pi, pi].", 2, "F", "Also exported as ``jnp.atan2``."),
    "sinh": ("Elementwise hyperbolic sine.", 1, "F"),
    "cosh": ("Elementwise hyperbolic cosine.", 1, "F"),
    "tanh": ("Elementwise hyperbolic tangent.", 1, "F"),
    "arcsinh": ("Elementwise inverse hyperbolic sine.", 1, "F", "Also exported as ``jnp.asinh``."),
    "arccosh": ("Elementwise inverse hyperbolic cosine (NaN below 1).", 1, "F", "Also exported as ``jnp.acosh``."),
    "arctanh": ("Elementwise inverse hyperbolic tangent (NaN outside [-1, 1]).", 1, "F",
                "Also exported as ``jnp.atanh``."),
    "deg2rad": ("Elementwise conversion of angles from degrees to radians.", 1, "F",
                "Also exported as ``jnp.radians``."),
    "rad2deg": ("Elementwise conversion of angles from radians to degrees.", 1, "F",
                "Also exported as ``jnp.degrees``."),
    "sinc": ("Elementwise normalized sinc ``sin(pi x) / (pi x)``, with the value 1 at 0.", 1, "F",
             "Its derivatives at 0 are finite, as in JAX."),
    # floating-point classification
    "isnan": ("Elementwise test for NaN.", 1, "B"),
    "isinf": ("Elementwise test for positive or negative infinity.", 1, "B"),
    "isposinf": ("Elementwise test for positive infinity.", 1, "B"),
    "isneginf": ("Elementwise test for negative infinity.", 1, "B"),
    "isfinite": ("Elementwise test for a finite value (neither infinite nor NaN).", 1, "B"),
    "signbit": ("Elementwise test of the sign bit (True for negative values and -0.0).", 1, "B"),
    # rounding
    "floor": ("Elementwise floor: the largest integer value not above ``x``.", 1, "S",
              "Integer and boolean inputs are returned unchanged."),
    "ceil": ("Elementwise ceiling: the smallest integer value not below ``x``.", 1, "S",
             "Integer and boolean inputs are returned unchanged."),
    "trunc": ("Elementwise truncation towards zero.", 1, "S", "Also exported as ``jnp.fix``."),
    "rint": ("Elementwise rounding to the nearest integer value, ties to even.", 1, "F"),
    "modf": ("Elementwise split of ``x`` into fractional and integral parts, both with the sign of ``x``; "
             "returns the pair ``(fractional, integral)``.", 1, "F"),
    # logical and bitwise
    "logical_not": ("Elementwise logical negation (nonzero values are True).", 1, "B"),
    "logical_and": ("Elementwise logical and of the truth values of ``x1`` and ``x2``.", 2, "B"),
    "logical_or": ("Elementwise logical or of the truth values of ``x1`` and ``x2``.", 2, "B"),
    "logical_xor": ("Elementwise logical exclusive or of the truth values of ``x1`` and ``x2``.", 2, "B"),
    "bitwise_and": ("Elementwise bitwise and ``x1 & x2``.", 2, "I"),
    "bitwise_or": ("Elementwise bitwise or ``x1 | x2``.", 2, "I"),
    "bitwise_xor": ("Elementwise bitwise exclusive or ``x1 ^ x2``.", 2, "I"),
    "invert": ("Elementwise bitwise not ``~x`` (logical not for booleans).", 1, "I",
               "Also exported as ``jnp.bitwise_not`` and ``jnp.bitwise_invert``."),
    "left_shift": ("Elementwise left shift ``x1 << x2``.", 2, "I",
                   "Boolean inputs raise TypeError; also exported as ``jnp.bitwise_left_shift``."),
    "right_shift": ("Elementwise right shift ``x1 >> x2`` (arithmetic for signed integers).", 2, "I",
                    "Boolean inputs raise TypeError; also exported as ``jnp.bitwise_right_shift``."),
    # complex parts
    "conjugate": ("Elementwise complex conjugate; for real inputs this returns ``x`` unchanged.", 1, "S",
                  "Also exported as ``jnp.conj``."),
    "real": ("Elementwise real part (a real dtype for complex input); for real inputs this returns ``x`` unchanged.", 1, "S"),
    "imag": ("Elementwise imaginary part (a real dtype for complex input); for real inputs an array of zeros.", 1, "S"),
}

def doc(name):
    """The docstring of the elementwise function `name` (a key of TABLE)."""
    summary, arity, rule, *note = TABLE[name]
    if arity == 1:
        args = "x: an array or scalar."
    else:
        args = "x1, x2: arrays or scalars, broadcast against each other."
    shape = "An array of ``x``'s shape. " if arity == 1 else "An array of the operands' broadcast shape. "
    returns = _textwrap.fill(shape + _DTYPE_RULES[rule], 90, initial_indent="  ", subsequent_indent="  ")
    lines = [summary, "", "Args:", "  " + args, "", "Returns:", returns, "",
             f"Counterpart of ``numpy.{name}``; works eagerly and under jit and vmap"
             + ("." if rule in "BI" else ", and is differentiable (grad, jvp).")]
    if note:
        lines += ["", note[0]]
    return "\n".join(lines)


def _needs_doc(fn):
    text = getattr(fn, "__doc__", None)
    return not text or not text.strip() or text.startswith("Elementwise `")


def apply(namespace):
    """Set the table's docstring on each function of `namespace` (a module's
    globals) named in TABLE that has no docstring of its own."""
    for name in TABLE:
        fn = namespace.get(name)
        if fn is not None and _needs_doc(fn):
            fn.__doc__ = doc(name)
