"""Records of array creation and conversion: `lax.iota`, `jnp.zeros` /
`ones` / `arange`, and `jnp.array` / `jnp.asarray` of arrays, of 64-bit NumPy
arrays and of Python values.
"""
import numpy as np

from ._record import DTYPE, Case, OpRecord, cases_from_shapes, no_args, uniform

# ----------------------------------------------------------------- references


def _iota(dtype, size):
    return np.arange(size).astype(dtype)


def _no_operand(name, ref, dtypes, cases, path=None):
    """A record of a function called with values only (no array operands); not differentiated."""
    return OpRecord(name=name, path=path, ref=ref, args_maker=no_args, dtypes=dtypes, cases=cases,
                    differentiable=False)


def _of_array(name, ref, *more_cases):
    """`jnp.array` / `jnp.asarray` of an array of each dtype: a matrix, a scalar, then `more_cases`."""
    return OpRecord(name=name, ref=ref, args_maker=uniform(), dtypes=("float32", "float64", "int32", "bool", "float16"),
                    cases=(Case(((3, 4),)), Case(((),)), *more_cases), upcast=False)


def _asarray_of_numpy64(kind, draw, dtype):
    """`jnp.asarray` of a 64-bit NumPy array drawn by `draw(rng, shape)`: `dtype` unless x64 is on."""
    return OpRecord(
        name=f"numpy.asarray[from_{kind}]",
        path="numpy.asarray",
        ref=np.asarray,
        args_maker=lambda rng, shapes, dtype: [draw(rng, s) for s in shapes],
        dtypes=(dtype,),
        cases=cases_from_shapes([((3,),), ((),)]),
        upcast=False,
        differentiable=False,
    )


RECORDS: tuple = (
    _no_operand("lax.iota", _iota, ("int32", "float32", "float64"), (
        Case((), (), {"dtype": DTYPE, "size": 5}),
        Case((), (), {"dtype": DTYPE, "size": 1}),
        Case((), (), {"dtype": DTYPE, "size": 0}),
    )),
    # ---- jax.numpy
    _no_operand("numpy.zeros", np.zeros, ("float32", "float64", "int32", "bool"), (
        Case((), ((2, 3),), {"dtype": DTYPE}),
        Case((), (5,), {"dtype": DTYPE}),
        Case((), ((),), {"dtype": DTYPE}),
        Case((), ((0, 3),), {"dtype": DTYPE}),
        Case((), ((2, 3),)),
    )),
    _no_operand("numpy.ones", np.ones, ("float32", "float64", "int32", "bool"), (
        Case((), ((2, 3),), {"dtype": DTYPE}),
        Case((), (5,), {"dtype": DTYPE}),
        Case((), ((),), {"dtype": DTYPE}),
        Case((), (3,)),
    )),
    _no_operand("numpy.arange", np.arange, ("int32", "float32", "float64"), (
        Case((), (5,)),
        Case((), (0,)),
        Case((), (2, 9, 3)),
        Case((), (1.0, 3.0, 0.5)),
        Case((), (6,), {"dtype": DTYPE}),
        Case((), (-3, 3), {"dtype": DTYPE}),
    )),
    _of_array("numpy.array", np.array, Case(((0,),)), Case(((3,),), (), {"dtype": np.dtype("float32")})),
    _no_operand("numpy.array[py]", np.array, ("float32",), (
        Case((), ([1, 2, 3],)),
        Case((), ([1.0, 2.5],)),
        Case((), ([[1, 2], [3, 4]],)),
        Case((), (3.0,)),
        Case((), (True,)),
        Case((), ([1, 2],), {"dtype": DTYPE}),
    ), path="numpy.array"),
    _of_array("numpy.asarray", np.asarray, Case(((5,),), (), {"dtype": np.dtype("int32")})),
    # 64-bit NumPy inputs become float32 / int32 unless x64 is on.
    _asarray_of_numpy64("f64", lambda rng, s: rng.uniform(-3, 3, size=s), "float32"),
    _asarray_of_numpy64("i64", lambda rng, s: rng.integers(-3, 3, size=s), "int32"),
    _no_operand("numpy.asarray[py]", np.asarray, ("float32",), (
        Case((), ([1, 2, 3],)),
        Case((), ([[0.5, 1.5]],)),
        Case((), (2,)),
    ), path="numpy.asarray"),
)
