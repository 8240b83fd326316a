"""Image resampling (`jax.image.resize` / `scale_and_translate`): each
resized axis is contracted with a (input, output) weight matrix built from the
method's kernel, stretched by the scale when antialiasing a downsample."""
import enum
import math

import numpy as np

from .. import numpy as jnp
from .._src.numpy.util import _arr, _aval, _promote_dtypes_inexact


def _lanczos(radius):
    def kernel(x):
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
        return jnp.where(x > radius, 0.0, out)

    return kernel


def _keys_cubic(x):
    """Keys' cubic kernel with a = -0.5."""
    out = (1.5 * x - 2.5) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(x):
    """The cubic kernel of OpenCV / PyTorch, a = -0.75."""
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


_AREA = object()


class ResizeMethod(enum.Enum):
    """The resampling methods of `resize` and `scale_and_translate`."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s):
        names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR", "trilinear": "LINEAR",
                 "triangle": "LINEAR", "lanczos3": "LANCZOS3", "lanczos5": "LANCZOS5", "cubic": "CUBIC",
                 "bicubic": "CUBIC", "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
                 "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"')
        return ResizeMethod[names[s]]


_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (None, _AREA),
}


def _normalize(weights):
    total = jnp.sum(weights, axis=0, keepdims=True)
    ok = jnp.abs(total) > 1000.0 * float(np.finfo(np.float32).eps)
    return jnp.where(ok, jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)


def _weight_matrix(input_size, output_size, scale, translation, kernel, antialias, edge_padding, radius):
    """The (input_size, output_size) resampling weights of one axis."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = (jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    if edge_padding:
        if antialias:
            k = math.ceil(radius * max(1.0 / float(scale), 1.0))
        else:
            k = radius
    else:
        k = 0
    expanded = jnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is _AREA:
        left_out = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        right_out = left_out + inv_scale
        left_in = jnp.arange(input_size, dtype=dtype)
        right_in = left_in + 1.0
        weights = jnp.maximum(0.0, jnp.minimum(right_out[None, :], right_in[:, None])
                              - jnp.maximum(left_out[None, :], left_in[:, None]))
    else:
        weights = kernel(jnp.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale)
    if edge_padding:
        # fold the padded rows onto the clamped edge rows: one-hot(clamped index) contracted with the weights
        clamped = jnp.clip(expanded.astype(jnp.int32), 0, input_size - 1)
        onehot = (clamped[None, :] == jnp.arange(input_size)[:, None]).astype(weights.dtype)
        return _normalize(onehot @ weights)
    weights = _normalize(weights)
    inside = (sample_f >= -0.5) & (sample_f <= input_size - 0.5)
    return jnp.where(inside[None, :], weights, 0)


def _scale_and_translate(x, shape, spatial_dims, scale, translation, kernel, antialias, edge_padding, radius):
    in_shape = _aval(x).shape
    for i, d in enumerate(spatial_dims):
        d = d % len(in_shape)
        w = _weight_matrix(in_shape[d], shape[d], scale[i], translation[i], kernel, antialias, edge_padding,
                           radius).astype(x.dtype)
        x = jnp.moveaxis(jnp.tensordot(x, w, axes=([d], [0]), precision="highest"), -1, d)
    return x


def _method(method):
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise ValueError(f'Unknown resize method "{method}"')
    return method


def _shape(shape, ndim, image_shape):
    shape = tuple(int(d) for d in shape)
    if len(shape) != ndim:
        raise ValueError(f"shape must have length equal to the number of dimensions of x;  {shape} vs "
                         f"{image_shape}")
    return shape


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True,
                        precision=None):
    """Resamples `image` to `shape` along `spatial_dims`: output pixel centre
    y maps to input (y + 0.5 - translation) / scale - 0.5; `scale` and
    `translation` may be traced."""
    image = _arr(image)
    shape = _shape(shape, _aval(image).ndim, _aval(image).shape)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for scale_and_translate.")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    (image,) = _promote_dtypes_inexact(image)
    scale, translation = _promote_dtypes_inexact(_arr(scale), _arr(translation))
    spatial_dims = tuple(spatial_dims)
    if len(spatial_dims) == 0:
        return image
    n = len(spatial_dims)
    scale = [scale[i] for i in range(n)]
    translation = [translation[i] for i in range(n)]
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, kernel, antialias, edge_padding,
                                radius)


def _resize_nearest(x, shape):
    in_shape = _aval(x).shape
    for d in range(len(in_shape)):
        m, n = in_shape[d], shape[d]
        if m == n:
            continue
        offsets = np.floor(((np.arange(n, dtype=np.float32) + 0.5) * np.float32(m) / np.float32(n))
                           .astype(np.float32)).astype(np.int32)
        x = jnp.take(x, jnp.asarray(offsets), axis=d)
    return x


def resize(image, shape, method, antialias=True, precision=None):
    """`image` resampled to `shape` (every axis whose size changes) with
    `method`: nearest, linear, cubic, cubic-pytorch, lanczos3, lanczos5 or
    area; `antialias` widens the kernel when downsampling."""
    image = _arr(image)
    shape = _shape(shape, _aval(image).ndim, _aval(image).shape)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = _promote_dtypes_inexact(image)
    in_shape = _aval(image).shape
    spatial_dims = tuple(i for i in range(len(shape)) if in_shape[i] != shape[i])
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    scale = [1.0 if shape[d] == 0 else shape[d] / in_shape[d] for d in spatial_dims]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    translation = [0.0] * len(spatial_dims)
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, kernel, antialias, edge_padding,
                                radius)
