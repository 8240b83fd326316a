"""Convolution helpers of `jax.lax` built on `conv_general_dilated`:
`conv_transpose`, `conv_general_dilated_patches`, `conv_general_dilated_local`,
and the static shape helpers `conv_shape_tuple`, `conv_general_shape_tuple`,
`conv_transpose_shape_tuple`, `conv_general_permutations`,
`reduce_window_shape_tuple`."""
import math
from typing import Union

import numpy as np

from .. import core
from ._convolution import (
    ConvDimensionNumbers, _spec_permutations, conv_dimension_numbers, conv_general_dilated, padtype_to_pads,
)

# `None`, a `ConvDimensionNumbers`, or a triple of layout strings such as ('NHWC', 'HWIO', 'NHWC').
ConvGeneralDilatedDimensionNumbers = Union[tuple, ConvDimensionNumbers, None]


def _lax():
    from .. import lax

    return lax


def _strided_size(size, window, stride):
    return max(0, (int(size) - int(window)) // int(stride) + 1)


def _dilated(size, d):
    return 0 if size == 0 else 1 + int(d) * (int(size) - 1)


def conv_general_permutations(dimension_numbers):
    """`(lhs_perm, rhs_perm, out_perm)`: where batch/feature and the spatial
    axes are in each operand, from a triple of layout strings."""
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        raise TypeError(f"conv_general_permutations: expected three layout strings, got {dimension_numbers!r}")
    return _spec_permutations(tuple(dimension_numbers))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution whose operands are in the canonical
    (N, C, spatial...) / (O, I, spatial...) order."""
    lhs_shape, rhs_shape = tuple(int(d) for d in lhs_shape), tuple(int(d) for d in rhs_shape)
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    pads = [tuple(p) for p in pads]
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {len(lhs_shape) - 2}, "
                        f"got {len(pads)}.")
    padded = [d + lo + hi for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding dimension: "
                         f"got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    space = tuple(_strided_size(p, w, s) for p, w, s in zip(padded, rhs_shape[2:], strides))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (batch, rhs_shape[0]) + space


def _canonical(shape, perm):
    return tuple(int(shape[i]) for i in perm)


def _from_canonical(shape, perm):
    out = [0] * len(perm)
    for pos, axis in enumerate(perm):
        out[axis] = shape[pos]
    return tuple(out)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of `conv_general_dilated` (no dilation) for layout strings."""
    lp, rp, op = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(_canonical(lhs_shape, lp), _canonical(rhs_shape, rp), window_strides, padding)
    return _from_canonical(out, op)


def _transpose_pads(k, s, padding):
    """(lo, hi) padding of the dilated-input convolution that transposes a
    forward convolution with kernel size `k`, stride `s` and `padding`."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    elif isinstance(padding, (tuple, list)) and len(padding) == 2:
        lo, hi = k - int(padding[0]) - 1, k - int(padding[1]) - 1
        total = lo + hi
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return lo, total - lo


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of `conv_transpose` for layout strings."""
    lp, rp, op = conv_general_permutations(dimension_numbers)
    lt, rt = _canonical(lhs_shape, lp), _canonical(rhs_shape, rp)
    if isinstance(padding, str):
        padding = [_transpose_pads(k, s, padding) for k, s in zip(rt[2:], window_strides)]
    totals = [int(sum(p)) for p in padding]
    space = tuple((i - 1) * int(s) - k + 2 + p for i, k, s, p in zip(lt[2:], rt[2:], window_strides, totals))
    return _from_canonical((lt[0], rt[0]) + space, op)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None,
                              window_dilation=None):
    """The output shape of `reduce_window` with explicit `(lo, hi)` padding."""
    shape = tuple(int(d) for d in operand_shape)
    window = tuple(int(d) for d in window_dimensions)
    if base_dilation is not None:
        shape = tuple(_dilated(d, b) for d, b in zip(shape, base_dilation))
    if window_dilation is not None:
        window = tuple(_dilated(d, b) for d, b in zip(window, window_dilation))
    padded = [d + int(lo) + int(hi) for d, (lo, hi) in zip(shape, padding)]
    return tuple(_strided_size(p, w, s) for p, w, s in zip(padded, window, window_strides))


_DEFAULT_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                              5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None, transpose_kernel=False,
                   precision=None, preferred_element_type=None, use_consistent_padding=False):
    """Transposed ("deconvolution") convolution: the input dilated by `strides`
    and convolved with `rhs` (layouts default to channels-last, as JAX).
    'SAME'/'VALID' (or, with `use_consistent_padding`, explicit pairs) name the
    padding of the forward convolution being transposed; `transpose_kernel`
    flips the kernel's spatial axes and swaps its I/O axes (gradient of a conv)."""
    lax = _lax()
    lhs, rhs = lax._arr(lhs), lax._arr(rhs)
    lshape, rshape = tuple(core.get_aval(lhs).shape), tuple(core.get_aval(rhs).shape)
    ndim = len(lshape)
    if dimension_numbers is None:
        if ndim not in _DEFAULT_TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _DEFAULT_TRANSPOSE_LAYOUTS[ndim]
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    kernel_space = [rshape[i] for i in dn.rhs_spec[2:]]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndim - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_axis = [padding] * len(strides) if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = tuple(_transpose_pads(_dilated(k, r), int(s), p)
                     for k, r, s, p in zip(kernel_space, rhs_dilation, strides, per_axis))
    else:
        pads = padding
    if transpose_kernel:
        rhs = lax.rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = lax.transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, strides, rhs_dilation, dn,
                                precision=precision, preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a `filter_shape` window sees, as the
    feature axis of the output: channel `c * prod(filter_shape) + k` holds input
    channel `c` at window position `k` (row-major over `filter_shape`)."""
    lax = _lax()
    lhs = lax._arr(lhs)
    lshape = tuple(core.get_aval(lhs).shape)
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = conv_dimension_numbers(lshape, (1, 1) + filter_shape, dimension_numbers)
    size = math.prod(filter_shape)
    channels = lshape[dn.lhs_spec[1]]
    eye = np.eye(size, dtype=np.dtype(core.get_aval(lhs).dtype_name) if core.get_aval(lhs).dtype_name != "bfloat16"
                 else np.float32)
    kernel = np.broadcast_to(eye, (channels, size, size)).reshape((channels * size, 1) + filter_shape)
    # the kernel in the layout `dn.rhs_spec` asks for: axis rhs_spec[j] holds canonical axis j
    kernel = np.transpose(kernel, np.argsort(dn.rhs_spec))
    rhs = lax.convert_element_type(core.to_array(np.ascontiguousarray(kernel)), core.get_aval(lhs).dtype_name)
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
                                feature_group_count=channels, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None,
                               rhs_dilation=None, dimension_numbers=None, precision=None):
    """A locally connected (unshared-weight) convolution: `rhs` holds one
    kernel per output position. Its spatial axes are the output's, and its
    input-feature axis has `C * prod(filter_shape)` entries in the order of
    `conv_general_dilated_patches`' output features."""
    lax = _lax()
    lhs, rhs = lax._arr(lhs), lax._arr(rhs)
    lshape, rshape = tuple(core.get_aval(lhs).shape), tuple(core.get_aval(rhs).shape)
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation,
                                           rhs_dilation, dn, precision=precision)
    nsp = len(lshape) - 2
    p = lax.transpose(patches, dn.out_spec)   # (N, I, S...)
    r = lax.transpose(rhs, dn.rhs_spec)       # (O, I, S...)
    space = tuple(range(2, 2 + nsp))
    out = lax.dot_general(p, r, (((1,), (1,)), (space, space)), precision=precision)  # (S..., N, O)
    out = lax.transpose(out, (nsp, nsp + 1) + tuple(range(nsp)))  # (N, O, S...)
    return lax.transpose(out, tuple(np.argsort(dn.out_spec)))
