"""`jax.numpy` for microjax_rs: NumPy's API with JAX's dtype rules
(float32 default, weak Python scalars, promotion lattice in Rust) built on
the lax primitives, so every function works eagerly and under every trace.

This module only re-exports; the implementation is in `microjax_rs._src.numpy`,
one module per subject. `ndarray` (= `microjax_rs.Array`) is set by the
package's `__init__`."""
# Modules this namespace has always exposed.
import builtins  # noqa: F401

from .. import core, lax  # noqa: F401
from ..core import ArrayImpl, Tracer  # noqa: F401

# array construction, shapes, joining
from .._src.numpy.lax_numpy import (  # noqa: F401
    arange, array, asarray, astype, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays,
    broadcast_shapes, broadcast_to, column_stack, concat, concatenate, copy, dstack, e, empty,
    empty_like, expand_dims, eye, flip, fliplr, flipud, from_dlpack, full, full_like, hstack, identity, indices,
    inf, iscomplexobj, isrealobj, isscalar, matrix_transpose, meshgrid, moveaxis, nan, ndim,
    newaxis, ones, ones_like, pi, ravel, reshape, rollaxis, rot90, row_stack, shape, size, squeeze,
    stack, swapaxes, tile, transpose, tri, tril, triu, vander, vstack, zeros, zeros_like,
)

# the array API standard's version and inspection object
from .._src.numpy.array_api_metadata import __array_api_version__, __array_namespace_info__  # noqa: F401

# scalar types and dtype queries
from .._src.numpy.scalar_types import (  # noqa: F401
    bfloat16, bool_, can_cast, complexfloating, dtype, finfo, float16, float32, float64, float_,
    floating, generic, iinfo, inexact, int16, int32, int64, int8, int_, integer, isdtype,
    issubdtype, number, promote_types, result_type, signedinteger, uint16, uint32, uint64, uint8,
    unsignedinteger,
)

# elementwise functions
from .._src.numpy.ufuncs import (  # noqa: F401
    abs, absolute, acos, acosh, add, angle, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh,
    around, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert, bitwise_not, bitwise_or,
    bitwise_xor, cbrt, ceil, clip, conj, conjugate, copysign, cos, cosh, deg2rad, degrees, divide,
    divmod, equal, exp, exp2, expm1, fix, float_power, floor, floor_divide, fmax, fmin, fmod,
    greater, greater_equal, heaviside, hypot, imag, invert, isclose, isfinite, isinf, isnan,
    isneginf, isposinf, ldexp, left_shift, less, less_equal, log, log10, log1p, log2, logaddexp,
    logaddexp2, logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod, modf,
    multiply, nan_to_num, negative, not_equal, positive, pow, power, rad2deg, radians, real,
    reciprocal, remainder, right_shift, rint, round, sign, signbit, sin, sinc, sinh, sqrt, square,
    subtract, tan, tanh, true_divide, trunc, where_,
)

# take, diagonals, select
from .._src.numpy.indexing import (  # noqa: F401
    diag, diagflat, diagonal, fill_diagonal, piecewise, put_along_axis, ravel_multi_index, select,
    take, take_along_axis, unravel_index,
)

# reductions, cumulative sums, differences
from .._src.numpy.reductions import (  # noqa: F401
    all, allclose, alltrue, amax, amin, any, argmax, argmin, array_equal, array_equiv, average,
    count_nonzero, cumprod, cumsum, cumulative_prod, cumulative_sum, diff, ediff1d, max, mean, min,
    nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd, nansum,
    nanvar, prod, product, ptp, sometrue, std, sum, trace, var,
)

# split, repeat, roll, pad
from .._src.numpy.manipulation import (  # noqa: F401
    array_split, dsplit, hsplit, pad, repeat, roll, split, vsplit,
)

# sorting, searching, counting, order statistics
from .._src.numpy.vectorize import vectorize  # noqa: F401,E402
from .._src.numpy.io import load, save, savez  # noqa: F401,E402

from .._src.numpy.sorting import (  # noqa: F401
    argpartition, argsort, argwhere, bincount, flatnonzero, interp, lexsort, median, nanmedian,
    nanpercentile, nanquantile, nonzero, partition, percentile, quantile, searchsorted, sort, sort_complex,
    where,
)

# unique
from .._src.numpy.setops import (  # noqa: F401
    unique, unique_counts, unique_values,
)

# evenly spaced values
from .._src.numpy.array_creation import (  # noqa: F401
    geomspace, linspace, logspace,
)

# products and convolutions
from .._src.numpy.tensor_contractions import (  # noqa: F401
    convolve, correlate, cross, dot, inner, kron, matmul, outer, tensordot, vdot, vecdot,
)

# einsum
from .._src.numpy.einsum import (  # noqa: F401
    einsum, einsum_path,
)

from . import fft, linalg  # noqa: E402,F401

# append / insert / delete, block, unstack, resize, trim_zeros
from .._src.numpy.manipulation import (  # noqa: F401,E402
    append, block, delete, insert, permute_dims, resize, trim_zeros, unstack,
)

# index tricks, triangle and diagonal indices
from .._src.numpy.index_tricks import (  # noqa: F401,E402
    c_, diag_indices, diag_indices_from, index_exp, ix_, mask_indices, mgrid, ogrid, r_, s_,
    tril_indices, tril_indices_from, triu_indices, triu_indices_from,
)

# set operations beyond unique
from .._src.numpy.setops import (  # noqa: F401,E402
    intersect1d, isin, setdiff1d, setxor1d, union1d, unique_all, unique_inverse,
)

# choose, compress, extract, place, put
from .._src.numpy.indexing import (  # noqa: F401,E402
    choose, compress, extract, place, put,
)

# histograms and binning
from .._src.numpy.histogram import (  # noqa: F401,E402
    digitize, histogram, histogram2d, histogram_bin_edges, histogramdd,
)

# covariance and correlation
from .._src.numpy.statistics import corrcoef, cov  # noqa: F401,E402

# higher-order array functions
from .._src.numpy.vectorize import apply_along_axis, apply_over_axes, fromfunction  # noqa: F401,E402

# arrays from bytes / text, printing
from .._src.numpy.io import (  # noqa: F401,E402
    array_repr, array_str, frombuffer, fromfile, fromiter, fromstring, get_printoptions, iterable,
    printoptions, set_printoptions,
)
# the jnp functions that are `jnp.ufunc` objects, and ufunc construction
from .._src.numpy.ufunc_api import (  # noqa: F401,E402
    add, bitwise_and, bitwise_or, bitwise_xor, frompyfunc, logaddexp, logaddexp2, logical_and, logical_or,
    logical_xor, maximum, minimum, multiply, negative, subtract, ufunc,
)

# more elementwise functions, scalar type names, constants
from .._src.numpy.ufuncs import (  # noqa: F401,E402
    bitwise_count, bitwise_left_shift, bitwise_right_shift, fabs, frexp, gcd, i0, iscomplex, isreal, lcm,
    nextafter, spacing,
)
from .._src.numpy.scalar_types import bool, character, double, flexible, object_, single, uint  # noqa: F401,E402,A004
from .._src.numpy.scalar_types import cdouble, complex64, complex128, complex_, csingle  # noqa: F401,E402
from .._src.numpy.scalar_types import (  # noqa: F401,E402
    float4_e2m1fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
    float8_e5m2fnuz, float8_e8m0fnu, float6_e2m3fn, float6_e3m2fn, int1, int2, int4, uint1, uint2, uint4,
)
from .._src.numpy.lax_numpy import euler_gamma  # noqa: F401,E402

# polynomials, window functions, numerical calculus, bit packing, matrix-vector products
from .._src.numpy.polynomial import (  # noqa: F401,E402
    poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, polyval, roots,
)
from .._src.numpy.window_functions import bartlett, blackman, hamming, hanning, kaiser  # noqa: F401,E402
from .._src.numpy.numerical_calculus import gradient, trapezoid, unwrap  # noqa: F401,E402
from .._src.numpy.bit_packing import packbits, unpackbits  # noqa: F401,E402
from .._src.numpy.tensor_contractions import matvec, vecmat  # noqa: F401,E402
