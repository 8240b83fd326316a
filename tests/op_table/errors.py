"""Bad inputs of the operator table's records, by record name (`ERRORS`) and
generated per family, attached to the records by `with_errors`
(tests/test_op_table.py: test_errors checks each eagerly and under jit).
"""
import dataclasses

import numpy as np

import microjax_rs

from ._record import BINARY_SHAPES, BROADCAST_SHAPES, UNARY_SHAPES, OpErr, is_float, np_dtype


def _f32(*shape):
    return np.ones(shape, np.float32)


def _i32(*shape):
    return np.ones(shape, np.int32)


def _err(arrays, exc, match, **kwargs):
    return (OpErr(tuple(arrays), kwargs, exc, match),)


_AXIS2 = "axis 2 is out of bounds for array of dimension 2"
_KEY0 = np.zeros(2, np.uint32)

# record name -> bad inputs (called as the record calls its function)
ERRORS = {
    "lax.add": _err([_f32(3), _f32(4)], TypeError, "add: incompatible shapes for an elementwise op; got shapes (3,) and (4,)")
    + _err([_f32(3), _i32(3)], TypeError, "add: operands must have equal dtypes; got dtypes (float32, int32)"),
    "lax.mul": _err([_f32(2, 3), _f32(3, 2)], TypeError, "mul: incompatible shapes"),
    "lax.sin": _err([_i32(3)], TypeError, "sin: requires a floating operand; got dtypes (int32)"),
    "lax.reshape": _err([_f32(3, 4)], TypeError, "reshape must preserve the number of elements; got shapes (3, 4) and (5,)",
                        new_sizes=(5,)),
    "lax.transpose": _err([_f32(3, 4)], ValueError, "[0, 0] is not a permutation of the 2 axes", permutation=(0, 0)),
    "lax.dot_general": _err([_f32(3, 4), _f32(5, 6)], TypeError, "lhs axis 1 and rhs axis 0 differ in size",
                            dimension_numbers=(((1,), (0,)), ((), ()))),
    "lax.broadcast_in_dim": _err([_f32(3)], TypeError, "operand axis of size 3 cannot broadcast to output axis 1",
                                 shape=(2, 4), broadcast_dimensions=(1,)),
    "lax.reduce_sum": _err([_f32(3)], ValueError, "axis 1 out of range for rank 1", axes=(1,)),
    "lax.concatenate": _err([_f32(3, 2), _f32(4, 3)], TypeError, "operands must have equal shapes except along dimension 0",
                            dimension=0),
    "lax.squeeze": _err([_f32(3, 2)], ValueError, "cannot select an axis to squeeze out", dimensions=(0,)),
    "lax.select_n": _err([_f32(3), _f32(3), _f32(3)], TypeError, "predicate must be bool or int32"),
    "lax.pad": _err([_f32(5), np.float32(0)], TypeError, "needs one (lo, hi, interior) per operand axis",
                    padding_config=((1, 2, 0), (0, 0, 0))),
    "lax.cumsum": _err([_f32(3)], ValueError, "axis 2 out of range for rank 1", axis=2),
    "lax.rev": _err([_f32(5)], ValueError, "axis 1 out of range for rank 1", dimensions=(1,)),
    "lax.clamp": _err([_f32(2), _f32(3), _f32(3)], TypeError, "min and max must be scalars or have the shape of the operand"),
    "lax.shift_left": _err([_f32(3), _f32(3)], TypeError, "shift_left: unsupported operand dtype"),
    "lax.integer_pow": _err([_i32(3)], ValueError, "negative exponent -1 requires a floating operand", y=-1),
    "lax.argmax": _err([_f32(3)], ValueError, "axis 1 out of range for rank 1", axis=1, index_dtype=np.int32),
    "lax.dynamic_slice": (OpErr((_f32(5),), {}, TypeError, "slice_sizes must have one entry per operand axis",
                                args=((1,), (7,))),),
    "lax.full": (OpErr((), {}, TypeError, "not supported by microjax_rs", args=((2,), 1, "foo")),),
    "lax.linalg.cholesky": _err([_f32(3, 4)], ValueError, "cholesky requires square matrices"),
    "numpy.add": _err([_f32(3), _f32(4)], TypeError, "add got incompatible shapes for broadcasting: (3,), (4,)."),
    "numpy.matmul": _err([_f32(3, 4), _f32(5, 6)], TypeError, "matmul: contracting dimensions differ: (3, 4) @ (5, 6)"),
    "numpy.dot": _err([_f32(3, 4), _f32(5, 6)], TypeError, "differ in size; got shapes (3, 4) and (5, 6)"),
    "numpy.reshape": (OpErr((_f32(3, 4),), {}, TypeError, "cannot reshape array of shape (3, 4) (size 12) into shape (5,)",
                            args=((5,),)),),
    "numpy.sum": _err([_f32(3, 4)], ValueError, _AXIS2, axis=2),
    "numpy.mean": _err([_f32(3, 4)], ValueError, "axis -3 is out of bounds for array of dimension 2", axis=-3),
    "numpy.argmax": _err([_f32(3, 4)], ValueError, _AXIS2, axis=2),
    "numpy.sort": _err([_f32(3, 4)], ValueError, "axis 3 is out of bounds for array of dimension 2", axis=3),
    "numpy.concatenate": _err([_f32(3, 2), _f32(4, 3)], TypeError, "Cannot concatenate arrays with shapes that differ"),
    "numpy.stack": _err([_f32(3), _f32(4)], ValueError, "All input arrays must have the same shape"),
    "numpy.where": _err([np.ones(3, bool), _f32(3), _f32(4)], ValueError, "Incompatible shapes for broadcasting"),
    "numpy.swapaxes": (OpErr((_f32(3, 4),), {}, ValueError, _AXIS2, args=(0, 2)),),
    "numpy.moveaxis": (OpErr((_f32(3, 4),), {}, ValueError, _AXIS2, args=(0, 2)),),
    "numpy.expand_dims": (OpErr((_f32(3, 4),), {}, ValueError, "axis 3 is out of bounds for array of dimension 3",
                                args=(3,)),),
    "numpy.squeeze": _err([_f32(3, 4)], ValueError, "cannot select an axis to squeeze out", axis=0),
    "numpy.broadcast_to": (OpErr((_f32(3),), {}, ValueError, "Incompatible shapes for broadcasting: (3,) and (4,)",
                                 args=((4,),)),),
    "numpy.split": (OpErr((_f32(5),), {}, ValueError, "array split does not result in an equal division",
                          args=(2,)),),
    "numpy.cross": _err([_f32(4), _f32(4)], ValueError, "Dimension must be either 2 or 3 for cross product"),
    "numpy.einsum": _err([_f32(3, 4), _f32(5, 6)], ValueError, "label 'j' has sizes 4 and 5", subscripts="ij,jk->ik"),
    "numpy.tensordot": _err([_f32(3, 4), _f32(5, 6)], TypeError, "shape mismatch along contracted axes", axes=1),
    "numpy.fill_diagonal": (OpErr((_f32(3, 3),), {}, NotImplementedError, "needs inplace=False", args=(1.0,)),),
    "numpy.argwhere": (OpErr((_f32(3),), {}, microjax_rs.errors.ConcretizationTypeError,
                             "the size argument must be given (and static)", modes=("jit",)),),
    "numpy.linalg.inv": _err([_f32(3, 4)], ValueError, "last 2 dimensions of the array must be square, got shape (3, 4)"),
    "numpy.linalg.solve": _err([_f32(3, 3), _f32(4)], ValueError, "incompatible shapes a (3, 3) and b (4,)"),
    "nn.softmax": _err([_f32(3, 4)], ValueError, _AXIS2, axis=2),
    "scipy.linalg.solve_triangular": _err([_f32(3, 3), _f32(4)], TypeError, "triangular_solve: a must be [..., m, m]"),
    "random.split": _err([np.ones(3, np.uint32)], TypeError, "expected key_data.shape to end with (2,); got shape=(3,)"),
    "random.normal": _err([_KEY0], ValueError, "dtype argument to `normal` must be a float or complex dtype, got int32",
                          shape=(3,), dtype=np.int32),
    "random.uniform": _err([_KEY0], ValueError, "dtype argument to `uniform` must be a float dtype, got int32",
                           shape=(3,), dtype=np.int32),
    "random.randint": _err([_KEY0], TypeError, "randint only accepts integer dtypes, got float32",
                           shape=(3,), minval=0, maxval=5, dtype=np.float32),
}


# Bad inputs generated per family (checked like ERRORS): shape mismatches of
# elementwise binaries, integer operands of float-only lax functions, and an
# out-of-range `axis` for jnp functions that take one.
_BINARY = {c for c in BINARY_SHAPES}
_BROADCAST = set(BROADCAST_SHAPES)
_UNARY = {(s,) for s in UNARY_SHAPES}
# nn.glu and jnp.fft.hfft/ihfft index x.shape[axis] first: an IndexError, as JAX
_AXIS_ERROR_EXCLUDED = {"nn.glu", "numpy.fft.hfft", "numpy.fft.ihfft"}
# jnp functions that, as in JAX, leave operands of one rank to their lax
# primitive's broadcasting: incompatible shapes are its TypeError
# ("add got incompatible shapes for broadcasting: (3,), (4,).").
_PRIMITIVE_BROADCAST_ERROR = {
    "numpy.add", "numpy.subtract", "numpy.multiply", "numpy.divide", "numpy.true_divide",
    "numpy.maximum", "numpy.minimum", "numpy.equal", "numpy.not_equal", "numpy.less",
    "numpy.less_equal", "numpy.greater", "numpy.greater_equal", "numpy.logical_xor",
}


def _plain(rec):
    return bool(rec.dtypes) and bool(rec.cases) and not rec.cases[0].args and not rec.cases[0].kwargs


def _family_errors(rec):
    shapes = {c.shapes for c in rec.cases}
    dt = np_dtype(rec.dtypes[0]) if rec.dtypes else None
    if _plain(rec) and rec.dotted.startswith("lax.") and len(shapes) > 3 and shapes <= _BINARY:
        return _err([np.ones(3, dt), np.ones(4, dt)], TypeError, "incompatible shapes")
    if _plain(rec) and rec.name.startswith(("numpy.", "scipy.special.", "nn.")) and len(shapes) > 3 \
            and shapes <= _BROADCAST and all(len(s) == 2 for s in shapes):
        if rec.name in _PRIMITIVE_BROADCAST_ERROR:
            return _err([np.ones(3, dt), np.ones(4, dt)], TypeError,
                        "got incompatible shapes for broadcasting: (3,), (4,).")
        return _err([np.ones(3, dt), np.ones(4, dt)], ValueError, "Incompatible shapes for broadcasting")
    if _plain(rec) and rec.dotted.startswith("lax.") and shapes <= _UNARY \
            and all(is_float(np_dtype(d)) for d in rec.dtypes):
        return _err([_i32(3)], TypeError, "requires a floating operand")
    axis_cases = [c for c in rec.cases if "axis" in c.kwargs and len(c.shapes) == 1 and len(c.shapes[0]) == 2]
    if axis_cases and rec.path is None and rec.name.startswith(("numpy.", "nn.", "scipy.special.")) \
            and rec.name not in _AXIS_ERROR_EXCLUDED:
        case = axis_cases[0]
        return (OpErr((np.ones((3, 4), dt),), {**case.kwargs, "axis": 2}, ValueError, _AXIS2, args=case.args),)
    return ()


def with_errors(records):
    """`records` with their ERRORS entries and family errors attached."""
    unknown = set(ERRORS) - {rec.name for rec in records}
    assert not unknown, f"ERRORS names records that do not exist: {sorted(unknown)}"
    return tuple(dataclasses.replace(rec, errors=rec.errors + ERRORS.get(rec.name, ()) + _family_errors(rec))
                 for rec in records)
