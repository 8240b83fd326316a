"""Records of the contractions: `lax.dot_general` (contracting and batch
dimensions, empty axes) and `jnp.dot` / `jnp.matmul`.
"""
import numpy as np

from ._record import ACCUM_TOL, Case, OpRecord, cases_from_shapes, is_float, uniform

# ----------------------------------------------------------------- references


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


_DOT_GENERAL_CASES = (
    Case(((3, 4), (4, 5)), (), {"dimension_numbers": (((1,), (0,)), ((), ()))}),
    Case(((4,), (4,)), (), {"dimension_numbers": (((0,), (0,)), ((), ()))}),
    Case(((3,), (4,)), (), {"dimension_numbers": (((), ()), ((), ()))}),
    Case(((4, 3), (4, 5)), (), {"dimension_numbers": (((0,), (0,)), ((), ()))}),
    Case(((2, 3, 4), (2, 4, 5)), (), {"dimension_numbers": (((2,), (1,)), ((0,), (0,)))}),
    Case(((0, 4), (4, 5)), (), {"dimension_numbers": (((1,), (0,)), ((), ()))}),
    Case(((3, 0), (0, 5)), (), {"dimension_numbers": (((1,), (0,)), ((), ()))}),
)


def _product(name, ref, cases):
    """A record of a product of two operands drawn from [-2, 2] (accumulation tolerance)."""
    return OpRecord(name=name, ref=ref, args_maker=uniform(-2.0, 2.0), dtypes=("float32", "float64", "int32"),
                    cases=cases, tol=ACCUM_TOL)


RECORDS: tuple = (
    _product("lax.dot_general", _dot_general, _DOT_GENERAL_CASES),
    # ---- jax.numpy
    _product("numpy.dot", np.dot, cases_from_shapes(
        [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((), (3, 4)), ((0, 4), (4, 5))])),
    _product("numpy.matmul", np.matmul, cases_from_shapes([
        ((3, 4), (4, 5)),
        ((4,), (4, 5)),
        ((3, 4), (4,)),
        ((4,), (4,)),
        ((2, 3, 4), (4, 5)),
        ((2, 3, 4), (2, 4, 5)),
        ((1, 3, 4), (2, 4, 5)),
    ])),
)
