"""`jax.lax` convolutions and windowed reductions: `conv_general_dilated`,
`conv`, `conv_with_general_padding`, `conv_dimension_numbers`,
`ConvDimensionNumbers`, `padtype_to_pads` and `reduce_window` (sum / max /
min monoids recognized from the computation and the init value, as JAX).
The primitives and all their rules are in Rust (`prims/conv.rs`,
`prims/window.rs`)."""
import math
import operator
from typing import NamedTuple, Sequence

import numpy as np

from .. import core, dtypes
from ..core import Primitive

(
    conv_general_dilated_p, reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p,
    select_and_scatter_add_p, select_and_gather_add_p,
) = map(
    Primitive,
    (
        "conv_general_dilated", "reduce_window_sum", "reduce_window_max",
        "reduce_window_min", "select_and_scatter_add", "select_and_gather_add",
    ),
)


class ConvDimensionNumbers(NamedTuple):
    """Where the batch, feature and spatial dimensions of each operand are:
    `lhs_spec = (batch, feature, *spatial)`, `rhs_spec = (out feature,
    in feature, *spatial)`, `out_spec = (batch, feature, *spatial)`."""
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


def _spec_permutations(specs):
    """('NCHW', 'OIHW', 'NCHW')-style strings -> index permutations; the
    spatial dimensions of every operand follow the rhs spec's order."""
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (spec, (a, b)) in enumerate(zip(specs, charpairs)):
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    lhs, rhs, out = specs
    if not set(lhs) - {"N", "C"} == set(rhs) - {"O", "I"} == set(out) - {"N", "C"}:
        raise TypeError("convolution dimension_numbers elements must each have the same set of "
                        f"spatial characters, got {specs}.")

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        spatial.sort(key=lambda i: rhs.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return tuple(perm(s, p) for s, p in zip(specs, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """`ConvDimensionNumbers` from `None` (NC..., OI..., NC...), a
    `ConvDimensionNumbers`, or a triple of layout strings such as
    `('NHWC', 'HWIO', 'NHWC')`."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                            f"{len(dimension_numbers)}.")
        if not all(isinstance(s, str) for s in dimension_numbers):
            if all(isinstance(s, (list, tuple)) for s in dimension_numbers):
                return ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))
            raise TypeError("convolution dimension_numbers elements must be strings, got "
                            f"{tuple(map(type, dimension_numbers))}.")
        for i, s in enumerate(dimension_numbers):
            if len(s) != len(lhs_shape):
                raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                                f"ndim of lhs and rhs, got {len(s)} for lhs and rhs shapes "
                                f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
        return ConvDimensionNumbers(*_spec_permutations(tuple(dimension_numbers)))
    raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                    f"{type(dimension_numbers)}.")


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit `(lo, hi)` pairs for 'VALID', 'SAME' or 'SAME_LOWER'."""
    if not isinstance(padding, str):
        return [tuple(p) for p in padding]
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID' or 'SAME', got {padding}.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-int(size) // int(stride))
        total = max((out - 1) * int(stride) + int(window) - int(size), 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def _shape(x):
    return tuple(core.get_aval(x).shape) if not hasattr(x, "shape") else tuple(x.shape)


def _dilate(size, d):
    return 0 if size == 0 else 1 + d * (size - 1)


def _arr(x):
    from . import _arr as arr
    return arr(x)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None):
    """General n-d convolution with strides, padding, dilations, layouts and
    groups (jax.lax.conv_general_dilated)."""
    from ._precision import canonicalize_precision

    canonicalize_precision(precision)
    lhs, rhs = _arr(lhs), _arr(rhs)
    lshape, rshape = _shape(lhs), _shape(rhs)
    dnums = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    nsp = len(lshape) - 2
    if lhs_dilation is None:
        lhs_dilation = (1,) * nsp
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution using "
                         "this op. Please either exactly specify the required padding or use "
                         "conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * nsp
    if isinstance(padding, str):
        lhs_sp = [lshape[i] for i in dnums.lhs_spec[2:]]
        rhs_sp = [rshape[i] for i in dnums.rhs_spec[2:]]
        window = [_dilate(k, r) for k, r in zip(rhs_sp, rhs_dilation)]
        padding = padtype_to_pads(lhs_sp, window, window_strides, padding)
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError("padding argument to conv_general_dilated should be a string or a "
                             f"sequence of (low, high) pairs, got {padding}") from e
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
    params = dict(
        window_strides=tuple(int(s) for s in window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding),
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation),
        dimension_numbers=tuple(tuple(int(i) for i in s) for s in dnums),
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        precision=None, preferred_element_type=preferred_element_type)
    lname, rname = core.get_aval(lhs).dtype_name, core.get_aval(rhs).dtype_name
    if lname == rname and dtypes.is_complex_name(lname):
        return _complex_conv(lhs, rhs, params)
    return conv_general_dilated_p.bind(lhs, rhs, **params)


def _complex_conv(lhs, rhs, params):
    """A complex convolution as four real ones of the parts:
    `(a + ib) * (c + id) = (ac - bd) + i(ad + bc)` (convolution is bilinear).
    A complex `preferred_element_type` names its parts' dtype."""
    from . import add, sub
    from ._complex import complex as make_complex, imag, real

    pet = params["preferred_element_type"]
    if pet is not None and dtypes.is_complex_name(dtypes.dtype_name(pet)):
        params = dict(params, preferred_element_type=np.dtype(dtypes.real_dtype_name(dtypes.dtype_name(pet))))
    a, b, c, d = real(lhs), imag(lhs), real(rhs), imag(rhs)

    def conv(x, y):
        return conv_general_dilated_p.bind(x, y, **params)

    return make_complex(sub(conv(a, c), conv(b, d)), add(conv(a, d), conv(b, c)))


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """NCHW/OIHW convolution without dilation (jax.lax.conv)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """NCHW/OIHW convolution with explicit dilations (jax.lax.conv_with_general_padding)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_params_view(params):
    params["dimension_numbers"] = ConvDimensionNumbers(*params["dimension_numbers"])
    return params


core._PARAM_VIEWS["conv_general_dilated"] = _conv_params_view


# ------------------------------------------------------------------ reduce_window


# Computations of the layers above that reduce_window treats as add / max / min
# (jnp.add, jnp.maximum and jnp.minimum register here).
_REGISTERED_MONOIDS = []


def register_monoid(computation, kind):
    """`reduce_window(..., computation)` lowers as the `kind` ('add', 'max'
    or 'min') window."""
    _REGISTERED_MONOIDS.append((computation, kind))


def _monoid(computation):
    """'add' / 'max' / 'min' for the computations JAX recognizes."""
    from . import add, max as lmax, min as lmin
    known = [(add, "add"), (operator.add, "add"), (lmax, "max"), (lmin, "min")] + _REGISTERED_MONOIDS
    for fn, kind in known:
        if computation is fn or computation == fn:
            return kind
    return None


def _extreme(dtype, high):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return math.inf if high else -math.inf
    if dt.kind == "b":
        return bool(high)
    info = np.iinfo(dt)
    return info.max if high else info.min


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding,
                  base_dilation=None, window_dilation=None):
    """Reduces every window of `operand` with `computation` (jax.lax.reduce_window).

    add, max and min (lax or jnp) with a concrete init value bind the window
    primitives; any other computation, or a pytree of operands, folds the
    window's elements with it (`lax._reductions`)."""
    from ._reductions import reduce_window_general

    single = not isinstance(operand, (tuple, list, dict))
    first = _arr(operand) if single else _arr(jax_leaves(operand)[0])
    shape = _shape(first)
    n = len(shape)
    window_dimensions = tuple(int(w) for w in window_dimensions)
    window_strides = tuple(int(s) for s in window_strides)
    base_dilation = (1,) * n if base_dilation is None else tuple(int(d) for d in base_dilation)
    window_dilation = (1,) * n if window_dilation is None else tuple(int(d) for d in window_dilation)
    if isinstance(padding, str):
        window = [_dilate(w, d) for w, d in zip(window_dimensions, window_dilation)]
        padding = padtype_to_pads(shape, window, window_strides, padding)
    padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    kind = _monoid(computation) if single else None
    if kind is not None and dtypes.is_complex_name(core.get_aval(first).dtype_name):
        if kind != "add":  # the lexicographic max/min: the general fold
            kind = None
        elif np.asarray(init_value).item() == 0:  # a sum: the parts' sums
            from ._complex import complex as make_complex, imag, real

            return make_complex(*(reduce_window(part(first), 0, computation, window_dimensions, window_strides,
                                                padding, base_dilation, window_dilation)
                                  for part in (real, imag)))
    try:
        init = np.asarray(init_value).item()
    except Exception:  # a traced init value
        kind = None
    if kind is None or (kind == "add" and init != 0):
        return reduce_window_general(operand, init_value, computation, window_dimensions, window_strides,
                                     padding, base_dilation, window_dilation)
    operand = first
    dtype = np.dtype(core.get_aval(operand).dtype_name if not hasattr(operand, "dtype")
                     else operand.dtype)
    params = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                  padding=padding, base_dilation=base_dilation, window_dilation=window_dilation)
    if kind == "add":
        return reduce_window_sum_p.bind(operand, **params)
    high = kind == "min"
    prim = reduce_window_min_p if high else reduce_window_max_p
    out = prim.bind(operand, **params)
    if init != _extreme(dtype, high):
        from . import max as lmax, min as lmin, _weak_like
        out = (lmin if high else lmax)(out, _weak_like(init, out))
    return out


def jax_leaves(tree):
    from ..tree_util import tree_leaves

    return tree_leaves(tree)


def _reduce_window_monoid(prim):
    def op(operand, window_dimensions, window_strides, padding, base_dilation=None,
           window_dilation=None):
        n = len(window_dimensions)
        return prim.bind(
            _arr(operand), window_dimensions=tuple(int(w) for w in window_dimensions),
            window_strides=tuple(int(s) for s in window_strides),
            padding=tuple((int(lo), int(hi)) for lo, hi in padding),
            base_dilation=(1,) * n if base_dilation is None else tuple(base_dilation),
            window_dilation=(1,) * n if window_dilation is None else tuple(window_dilation))

    op.__name__ = "_" + prim.name
    return op


_reduce_window_sum = _reduce_window_monoid(reduce_window_sum_p)
_reduce_window_max = _reduce_window_monoid(reduce_window_max_p)
_reduce_window_min = _reduce_window_monoid(reduce_window_min_p)


def _select_and_scatter_add(source, operand, select_prim, window_dimensions, window_strides,
                            padding):
    """Adds each window's `source` value at the position `select_prim`
    ('ge' max, 'le' min) selects in `operand` (the max-pool transpose)."""
    name = getattr(select_prim, "name", select_prim)
    return select_and_scatter_add_p.bind(
        _arr(source), _arr(operand), select_prim=name,
        window_dimensions=tuple(window_dimensions), window_strides=tuple(window_strides),
        padding=tuple(tuple(p) for p in padding))
