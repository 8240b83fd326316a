"""Docstrings of the elementwise `lax` functions, which `lax/__init__.py` makes
with a few factories (`_unary`, `_binary`, `_with_accuracy`, `_nary`): one
table of what each primitive computes, and `elementwise(name)` to build the
docstring from it."""

# primitive name: (what it computes, arity)
TABLE = {
    "add": ("Elementwise sum ``x + y``.", 2),
    "sub": ("Elementwise difference ``x - y``.", 2),
    "mul": ("Elementwise product ``x * y``.", 2),
    "div": ("Elementwise quotient ``x / y``; integer division rounds towards zero (C semantics).", 2),
    "rem": ("Elementwise remainder of ``x / y`` with the sign of ``x`` (C ``fmod`` semantics).", 2),
    "pow": ("Elementwise power ``x ** y`` (floating point; see ``integer_pow`` for a static integer "
            "exponent).", 2),
    "max": ("Elementwise maximum; NaN if either operand is NaN.", 2),
    "min": ("Elementwise minimum; NaN if either operand is NaN.", 2),
    "eq": ("Elementwise ``x == y``, as a boolean array.", 2),
    "ne": ("Elementwise ``x != y``, as a boolean array.", 2),
    "lt": ("Elementwise ``x < y``, as a boolean array.", 2),
    "le": ("Elementwise ``x <= y``, as a boolean array.", 2),
    "gt": ("Elementwise ``x > y``, as a boolean array.", 2),
    "ge": ("Elementwise ``x >= y``, as a boolean array.", 2),
    "atan2": ("Elementwise quadrant-aware inverse tangent of ``x / y``, within [-pi, pi].", 2),
    "nextafter": ("Elementwise next representable floating-point value after ``x`` towards ``y``.", 2),
    "polygamma": ("Elementwise polygamma function: the ``x``-th derivative of digamma, at ``y``.", 2),
    "and": ("Elementwise bitwise and (logical and for booleans).", 2),
    "or": ("Elementwise bitwise or (logical or for booleans).", 2),
    "xor": ("Elementwise bitwise exclusive or (logical xor for booleans).", 2),
    "shift_left": ("Elementwise left shift ``x << y`` of integers.", 2),
    "shift_right_logical": ("Elementwise logical right shift of integers (zeros shifted in).", 2),
    "shift_right_arithmetic": ("Elementwise arithmetic right shift of integers (the sign bit shifted in).", 2),
    "neg": ("Elementwise negation ``-x``.", 1),
    "abs": ("Elementwise absolute value.", 1),
    "sign": ("Elementwise sign: -1, 0 or 1 (NaN for NaN).", 1),
    "not": ("Elementwise bitwise not (logical not for booleans).", 1),
    "floor": ("Elementwise floor of a floating-point array.", 1),
    "ceil": ("Elementwise ceiling of a floating-point array.", 1),
    "is_finite": ("Elementwise test that a floating-point value is neither infinite nor NaN (boolean result).",
                  1),
    "exp": ("Elementwise natural exponential ``e**x``.", 1),
    "exp2": ("Elementwise base-2 exponential ``2**x``.", 1),
    "expm1": ("Elementwise ``exp(x) - 1``, accurate near 0.", 1),
    "log": ("Elementwise natural logarithm.", 1),
    "log1p": ("Elementwise ``log(1 + x)``, accurate near 0.", 1),
    "sqrt": ("Elementwise square root.", 1),
    "rsqrt": ("Elementwise reciprocal square root ``1 / sqrt(x)``.", 1),
    "cbrt": ("Elementwise real cube root.", 1),
    "square": ("Elementwise square ``x * x``.", 1),
    "logistic": ("Elementwise logistic sigmoid ``1 / (1 + exp(-x))``.", 1),
    "sin": ("Elementwise sine (radians).", 1),
    "cos": ("Elementwise cosine (radians).", 1),
    "tan": ("Elementwise tangent (radians).", 1),
    "asin": ("Elementwise inverse sine.", 1),
    "acos": ("Elementwise inverse cosine.", 1),
    "atan": ("Elementwise inverse tangent.", 1),
    "sinh": ("Elementwise hyperbolic sine.", 1),
    "cosh": ("Elementwise hyperbolic cosine.", 1),
    "tanh": ("Elementwise hyperbolic tangent.", 1),
    "asinh": ("Elementwise inverse hyperbolic sine.", 1),
    "acosh": ("Elementwise inverse hyperbolic cosine.", 1),
    "atanh": ("Elementwise inverse hyperbolic tangent.", 1),
    "erf": ("Elementwise error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``.", 1),
    "erfc": ("Elementwise complementary error function ``1 - erf(x)``, accurate for large ``x``.", 1),
    "erf_inv": ("Elementwise inverse error function (on (-1, 1); +-inf at +-1).", 1),
    "lgamma": ("Elementwise log of the absolute value of the gamma function.", 1),
    "digamma": ("Elementwise digamma function, the derivative of ``lgamma``.", 1),
    "bessel_i0e": ("Elementwise exponentially scaled modified Bessel function of order 0, "
                   "``exp(-|x|) * I0(x)``.", 1),
    "bessel_i1e": ("Elementwise exponentially scaled modified Bessel function of order 1, "
                   "``exp(-|x|) * I1(x)``.", 1),
    "population_count": ("Elementwise number of set bits of an integer array.", 1),
    "clz": ("Elementwise number of leading zero bits of an integer array.", 1),
}

_OPERANDS = {
    1: "x: an array or scalar.",
    2: ("x, y: arrays (or scalars) of one shape and dtype; lax does not broadcast or promote,\n"
        "    but a Python scalar takes the other operand's dtype (weakly typed)."),
}


def elementwise(name, accuracy=False):
    """The docstring of the elementwise lax function of primitive `name`;
    `accuracy`: the function takes the `accuracy=` keyword."""
    summary, arity = TABLE[name]
    lines = [summary, "", "Args:", "  " + _OPERANDS[arity]]
    if accuracy:
        lines += ["  accuracy: None, an ``AccuracyMode`` or a ``Tolerance``; accepted, and the result is",
                  "    the same for every setting (the kernels are within 2 ulp)."]
    lines += ["", "The result has the operands' shape and dtype" +
              (" (boolean for comparisons)." if name in ("eq", "ne", "lt", "le", "gt", "ge", "is_finite")
               else ".")]
    return "\n".join(lines)
