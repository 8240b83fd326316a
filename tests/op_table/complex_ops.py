"""Records of the operators on complex64 / complex128 operands: the
complex-part primitives (`lax.real`, `lax.imag`, `lax.conj`, `lax.complex`,
`jnp.real`, `jnp.imag`, `jnp.conj`, `jnp.iscomplex`, `jnp.isreal`), and the
complex rows of the arithmetic, transcendental, comparison, reduction,
scan, data-movement and `dot_general` primitives. A record named
`lax.add[complex]` runs `lax.add` on complex inputs (its real rows are the
`elementwise` module's).
"""
import numpy as np

from ._record import (
    BINARY_SHAPES,
    UNARY_SHAPES,
    Case,
    OpErr,
    OpRecord,
    cases_from_shapes,
    uniform,
)

C = ("complex64", "complex128")
_ONES_C = np.ones(2, np.complex64)

# complex64 computes each part in float32: a few ulp of the modulus.
# (Real-valued results, `abs` and `real` of complex inputs, use the float rows.)
TOL = {"complex64": (2e-6, 2e-6), "complex128": (1e-13, 1e-13), "float32": (2e-6, 1e-6),
       "float64": (1e-13, 1e-14)}
TRANSCENDENTAL = {"complex64": (2e-5, 2e-6), "complex128": (1e-12, 1e-13), "float32": (1e-5, 1e-6),
                  "float64": (1e-12, 1e-13)}
ACCUM = {"complex64": (2e-5, 2e-5), "complex128": (1e-12, 1e-12), "float32": (1e-5, 1e-5),
         "float64": (1e-12, 1e-12)}


def _part_dtype(dt, x64):
    return np.dtype("float64") if (np.dtype(dt) == np.complex128 and x64) else np.dtype("float32")


def _same(dt, x64):
    return np.dtype(dt) if x64 or np.dtype(dt) == np.complex64 else np.dtype("complex64")


def _angle_out(dt, x64):
    """`jnp.angle`: the parts' dtype of complex input, the default float type of integers."""
    dt = np.dtype(dt)
    if dt.kind == "c":
        return _part_dtype(dt, x64)
    return dt if dt.kind == "f" and (x64 or dt.itemsize < 8) else np.dtype("float64" if x64 else "float32")


def _conj_out(dt, x64):
    """`lax.conj`: complex operands keep their dtype, real ones become complex."""
    if np.dtype(dt).kind == "c":
        return _same(dt, x64)
    return np.dtype("complex128") if (np.dtype(dt) == np.float64 and x64) else np.dtype("complex64")


def _unary(name, ref, tol=TRANSCENDENTAL, path=None, maker=None, shapes=UNARY_SHAPES, **kw):
    return OpRecord(
        name=f"{path or 'lax.' + name}[complex]",
        path=path or f"lax.{name}",
        ref=ref,
        args_maker=maker or uniform(-2.0, 2.0),
        dtypes=C,
        cases=cases_from_shapes([(s,) for s in shapes]),
        tol=tol,
        **kw,
    )


def _binary(name, ref, tol=TOL, maker=None, **kw):
    return OpRecord(
        name=f"lax.{name}[complex]",
        path=f"lax.{name}",
        ref=ref,
        args_maker=maker or uniform(-2.0, 2.0),
        dtypes=C,
        cases=cases_from_shapes(BINARY_SHAPES),
        tol=tol,
        **kw,
    )


def _sign(z):
    r = np.abs(z)
    return np.where(r == 0, 0, z / np.where(r == 0, 1, r))


def _log1p(z):
    return np.log(1 + z.astype(np.complex128)).astype(z.dtype)


def _pow(x, y):
    return np.power(x, y)


def _dot(a, b):
    return np.matmul(a, b)


def _reduce(fn):
    def ref(x, axes):
        return fn(x, axis=tuple(axes))

    return ref


RECORDS = (
    # ---- complex parts
    OpRecord(name="lax.real", ref=np.real, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), tol=TOL, out_dtype=_part_dtype,
             errors=(OpErr((np.ones(2, np.float32),), {}, TypeError,
                           "real does not accept dtype float32. Accepted dtypes are subtypes of complexfloating."),)),
    OpRecord(name="lax.imag", ref=np.imag, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), tol=TOL, out_dtype=_part_dtype),
    OpRecord(name="lax.conj", ref=np.conj, args_maker=uniform(), dtypes=C + ("float32",),
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), tol=TOL, out_dtype=_conj_out),
    OpRecord(name="lax.complex", ref=lambda x, y: x + 1j * y, args_maker=uniform(), dtypes=("float32", "float64"),
             cases=cases_from_shapes(BINARY_SHAPES), tol=TOL, out_dtype=_conj_out,
             errors=(OpErr((np.ones(2, np.int32), np.ones(2, np.int32)), {}, TypeError,
                           "complex does not accept dtype int32"),)),
    OpRecord(name="numpy.real[complex]", path="numpy.real", ref=np.real, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), tol=TOL, out_dtype=_part_dtype),
    OpRecord(name="numpy.imag[complex]", path="numpy.imag", ref=np.imag, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), tol=TOL, out_dtype=_part_dtype),
    OpRecord(name="numpy.conj[complex]", path="numpy.conj", ref=np.conj, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), tol=TOL),
    OpRecord(name="numpy.iscomplex[complex]", path="numpy.iscomplex", ref=np.iscomplex,
             args_maker=lambda rng, shapes, dt: [np.where(rng.integers(0, 2, size=shapes[0]) == 1,
                                                          1.5 + 0j, 2.0 - 1j).astype(dt)],
             dtypes=C, cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), differentiable=False),
    OpRecord(name="numpy.isreal[complex]", path="numpy.isreal", ref=np.isreal,
             args_maker=lambda rng, shapes, dt: [np.where(rng.integers(0, 2, size=shapes[0]) == 1,
                                                          1.5 + 0j, 2.0 - 1j).astype(dt)],
             dtypes=C, cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), differentiable=False),
    OpRecord(name="numpy.angle", ref=np.angle, args_maker=uniform(), dtypes=C + ("float32", "int32"),
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]) + cases_from_shapes([((5,),)], deg=True),
             tol=TRANSCENDENTAL, out_dtype=_angle_out, differentiable=False),
    # ---- arithmetic
    _binary("add", np.add),
    _binary("sub", np.subtract),
    _binary("mul", np.multiply),
    _binary("div", np.divide, tol=TRANSCENDENTAL),
    _binary("pow", _pow, tol={"complex64": (1e-4, 1e-5), "complex128": (1e-11, 1e-12)},
            maker=uniform(0.5, 2.0)),
    _binary("eq", np.equal),
    _binary("ne", np.not_equal),
    # Ordering comparisons and remainders of complex values: JAX's TypeError.
    *(OpRecord(name=f"lax.{op}[complex]", path=f"lax.{op}", ref=None, args_maker=uniform(), dtypes=C, cases=(),
               errors=(OpErr((_ONES_C, _ONES_C), {}, TypeError,
                             f"{op} does not accept dtype complex64 at position 0"),))
      for op in ("lt", "le", "gt", "ge")),
    OpRecord(name="lax.rem[complex]", path="lax.rem", ref=None, args_maker=uniform(), dtypes=C, cases=(),
             errors=(OpErr((_ONES_C, _ONES_C), {}, TypeError, "rem: unsupported operand dtype"),)),
    OpRecord(name="lax.floor[complex]", path="lax.floor", ref=None, args_maker=uniform(), dtypes=C, cases=(),
             errors=(OpErr((_ONES_C,), {}, TypeError, "floor: requires a floating operand"),)),
    _unary("neg", np.negative, tol=TOL),
    _unary("abs", np.abs, out_dtype=_part_dtype),
    _unary("sign", _sign),
    _unary("square", np.square),
    OpRecord(name="lax.integer_pow[complex]", path="lax.integer_pow", ref=lambda x, y: x ** y,
             args_maker=uniform(-1.5, 1.5), dtypes=C,
             cases=cases_from_shapes([((5,),), ((3, 4),)], y=3) + cases_from_shapes([((5,),)], y=-2),
             tol=TRANSCENDENTAL),
    # ---- transcendentals
    _unary("exp", np.exp),
    _unary("log", np.log),
    _unary("log1p", _log1p),
    _unary("expm1", np.expm1),
    _unary("sin", np.sin),
    _unary("cos", np.cos),
    _unary("tan", np.tan, maker=uniform(-1.0, 1.0)),
    _unary("tanh", np.tanh, maker=uniform(-1.0, 1.0)),
    _unary("sinh", np.sinh),
    _unary("cosh", np.cosh),
    _unary("sqrt", np.sqrt),
    _unary("rsqrt", lambda z: 1 / np.sqrt(z)),
    _unary("asin", np.arcsin, maker=uniform(-0.9, 0.9)),
    _unary("acos", np.arccos, maker=uniform(-0.9, 0.9)),
    _unary("atan", np.arctan, maker=uniform(-0.9, 0.9)),
    _unary("asinh", np.arcsinh, maker=uniform(-0.9, 0.9)),
    _unary("atanh", np.arctanh, maker=uniform(-0.9, 0.9)),
    _unary("exp", np.exp, path="numpy.exp"),
    _unary("sin", np.sin, path="numpy.sin"),
    # ---- reductions, scans, products
    OpRecord(name="lax.reduce_sum[complex]", path="lax.reduce_sum", ref=_reduce(np.sum), args_maker=uniform(),
             dtypes=C, cases=(Case(((3, 4),), ((0,),)), Case(((3, 4),), ((0, 1),)), Case(((2, 3, 4),), ((1,),))),
             tol=ACCUM),
    OpRecord(name="lax.reduce_prod[complex]", path="lax.reduce_prod", ref=_reduce(np.prod),
             args_maker=uniform(-1.2, 1.2), dtypes=C,
             cases=(Case(((3, 4),), ((0,),)), Case(((2, 3, 4),), ((2,),))), tol=ACCUM),
    OpRecord(name="lax.cumsum[complex]", path="lax.cumsum", ref=lambda x, axis: np.cumsum(x, axis=axis),
             args_maker=uniform(), dtypes=C, cases=cases_from_shapes([((3, 4),)], axis=1), tol=ACCUM),
    OpRecord(name="lax.cumprod[complex]", path="lax.cumprod", ref=lambda x, axis: np.cumprod(x, axis=axis),
             args_maker=uniform(-1.2, 1.2), dtypes=C, cases=cases_from_shapes([((3, 4),)], axis=0), tol=ACCUM),
    OpRecord(name="numpy.sum[complex]", path="numpy.sum", ref=np.sum, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([((3, 4),)]) + cases_from_shapes([((3, 4),)], axis=1), tol=ACCUM),
    OpRecord(name="numpy.matmul[complex]", path="numpy.matmul", ref=_dot, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 2)), ((40, 40), (40, 40))]),
             tol=ACCUM),
    *(OpRecord(name=f"{path}[complex]", path=path, ref=ref, args_maker=uniform(), dtypes=C,
               cases=cases_from_shapes([((3, 4), (3, 4)), ((4,), (2, 4))]), tol=ACCUM)
      for path, ref in (("numpy.vecdot", np.vecdot), ("numpy.linalg.vecdot", np.linalg.vecdot))),
    OpRecord(name="numpy.mean[complex]", path="numpy.mean", ref=np.mean, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([((3, 4),)]) + cases_from_shapes([((3, 4),)], axis=0), tol=ACCUM),
    OpRecord(name="numpy.var[complex]", path="numpy.var", ref=np.var, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([((3, 4),)]) + cases_from_shapes([((3, 4),)], axis=1), tol=ACCUM),
    OpRecord(name="numpy.linalg.norm[complex]", path="numpy.linalg.norm", ref=np.linalg.norm, args_maker=uniform(),
             dtypes=C, cases=cases_from_shapes([((5,),), ((3, 4),)]), tol=ACCUM),
    OpRecord(name="numpy.power[complex]", path="numpy.power", ref=np.power, args_maker=uniform(0.5, 2.0),
             dtypes=C, cases=cases_from_shapes([((5,), (5,)), ((3, 4), (3, 4))]),
             tol={"complex64": (1e-4, 1e-5), "complex128": (1e-11, 1e-12)}),
    *(OpRecord(name=f"numpy.{fn.__name__}[complex]", path=f"numpy.{fn.__name__}", ref=fn,
               args_maker=lambda rng, shapes, dt: [np.array([1 + 1j, np.inf, complex(0, np.nan), complex(-np.inf, 2),
                                                              3j], dt)],
               dtypes=C, cases=cases_from_shapes([((5,),)]), differentiable=False)
      for fn in (np.isfinite, np.isnan, np.isinf)),
    # ---- data movement
    OpRecord(name="lax.transpose[complex]", path="lax.transpose", ref=lambda x, p: np.transpose(x, p),
             args_maker=uniform(), dtypes=C, cases=(Case(((3, 4),), ((1, 0),)),), tol=TOL),
    OpRecord(name="numpy.reshape[complex]", path="numpy.reshape", ref=np.reshape, args_maker=uniform(),
             dtypes=C, cases=(Case(((3, 4),), ((2, 6),)),), tol=TOL),
    OpRecord(name="numpy.concatenate[complex]", path="numpy.concatenate",
             ref=lambda a, b: np.concatenate([a, b]), adapt=lambda f: (lambda a, b: f([a, b])),
             args_maker=uniform(), dtypes=C, cases=cases_from_shapes([((3, 2), (2, 2))]), tol=TOL),
    OpRecord(name="numpy.flip[complex]", path="numpy.flip", ref=np.flip, args_maker=uniform(), dtypes=C,
             cases=cases_from_shapes([((3, 4),)], axis=1), tol=TOL),
    OpRecord(name="numpy.pad[complex]", path="numpy.pad", ref=np.pad, args_maker=uniform(), dtypes=C,
             cases=(Case(((3, 2),), (((1, 2), (0, 1)),)),), tol=TOL),
    OpRecord(name="numpy.where[complex]", path="numpy.where", ref=np.where,
             args_maker=lambda rng, shapes, dt: [rng.integers(0, 2, size=shapes[0]).astype(bool),
                                                 *uniform()(rng, shapes[1:], dt)],
             dtypes=C, cases=cases_from_shapes([((3, 4), (3, 4), (3, 4))]), tol=TOL),
    OpRecord(name="numpy.take[complex]", path="numpy.take",
             ref=lambda x: np.take(x, [2, 0, 1], axis=0), adapt=lambda f: (lambda x: f(x, np.array([2, 0, 1]),
                                                                                         axis=0)),
             args_maker=uniform(), dtypes=C, cases=cases_from_shapes([((3, 4),)]), tol=TOL),
)
