"""Records of array creation and conversion: `lax.iota`, `jnp.zeros` /
`ones` / `arange`, and `jnp.array` / `jnp.asarray` of arrays, of 64-bit NumPy
arrays and of Python values.
"""
import numpy as np

from ._record import DTYPE, Case, OpRecord, cases_from_shapes, no_args, uniform

# ----------------------------------------------------------------- references


def _iota(dtype, size):
    return np.arange(size).astype(dtype)


RECORDS: tuple = (
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
