"""`jax.nn.initializers`: functions `init(key, shape, dtype)` returning
initial weights, drawing from `jax.random` exactly as JAX does (same keys,
same draws) so that values equal JAX's for the same key."""
import math as _math
from typing import Protocol as _Protocol, runtime_checkable as _runtime_checkable

import numpy as _np

from .. import numpy as jnp
from .. import random as _random
from .. import dtypes as _dt

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
    "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones", "orthogonal",
    "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]


@_runtime_checkable
class Initializer(_Protocol):
    """The protocol of an initializer: `init(key, shape, dtype=...) -> Array`."""

    def __call__(self, key, shape, dtype=None, out_sharding=None):
        raise NotImplementedError


def _dtype(dtype):
    return _dt.default_float_name() if dtype is None else dtype


def _no_sharding(out_sharding, name):
    if out_sharding is not None:
        raise NotImplementedError(f"nn.initializers.{name}: out_sharding is not supported by microjax_rs")


def _is_complex(dtype):
    return _np.issubdtype(_np.dtype(dtype) if not isinstance(dtype, str) or dtype != "bfloat16" else _np.float32,
                          _np.complexfloating)


def _check_real(dtype, name):
    if _is_complex(dtype):
        raise NotImplementedError(f"nn.initializers.{name}: complex dtypes are not supported by microjax_rs")


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (the key is ignored)."""
    _no_sharding(out_sharding, "zeros")
    return jnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (the key is ignored)."""
    _no_sharding(out_sharding, "ones")
    return jnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling arrays with `value` (the key is ignored)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, "constant")
        return jnp.full(shape, value, dtype=_dtype(dtype))

    return init


def _scaled_draws(draw, scale, dtype, name):
    """An initializer returning `draw(key, shape, dtype) * scale` in `dtype`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, name)
        dtype = _dtype(dtype)
        return draw(key, shape, dtype) * jnp.array(scale, dtype)

    return init


def uniform(scale=0.01, dtype=None):
    """An initializer drawing uniformly from [0, scale)."""
    return _scaled_draws(_random.uniform, scale, dtype, "uniform")


def normal(stddev=0.01, dtype=None):
    """An initializer drawing from a normal distribution of mean 0 and standard deviation `stddev`."""
    return _scaled_draws(_random.normal, stddev, dtype, "normal")


def truncated_normal(stddev=0.01, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing a standard normal truncated to [lower, upper], times `stddev`."""
    return _scaled_draws(lambda key, shape, dtype: _random.truncated_normal(key, lower, upper, shape, dtype),
                         stddev, dtype, "truncated_normal")


def _axis_size(shape, axes):
    if isinstance(axes, int):
        return shape[axes]
    return _math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the input / output sizes times the receptive field
    (the axes not named as input, output or batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor "
                         "with default in_axis. Must be at least 2D or specify in_axis explicitly.")
    in_size = _axis_size(shape, in_axis)
    out_size = _axis_size(shape, out_axis)
    batch_size = _axis_size(shape, batch_axis)
    receptive = _math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def _polar(key, radius, shape, dtype):
    """Complex samples `radius(u) * exp(i theta)`: `u` and the angle `theta`
    uniform (in [0, 1) and [0, 2 pi)) from the two halves of `split(key)`."""
    real = _np.empty((), _np.dtype(dtype)).real.dtype
    k_r, k_theta = _random.split(key)
    r = radius(_random.uniform(k_r, shape, real)).astype(dtype)
    theta = (2 * _np.pi * _random.uniform(k_theta, shape, real)).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_uniform(key, shape, dtype):
    """Uniform on the disc of radius sqrt(2) (variance 1): the radius is sqrt(2 u)."""
    return _polar(key, lambda u: jnp.sqrt(2 * u), shape, dtype)


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex standard normal (variance 1) conditioned on a modulus below
    `upper`: the inverse of the truncated Rayleigh distribution function."""
    return _polar(key, lambda u: jnp.sqrt(-jnp.log(1 - (1 - _np.exp(-upper ** 2)) * u)), shape, dtype)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """Draws with variance `scale / n`, n the fan in / out / average / geometric
    average (`mode`), from a normal truncated at 2 standard deviations, a
    normal, or a uniform interval (`distribution`)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding, "variance_scaling")
        shape = tuple(int(d) for d in shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        if distribution == "truncated_normal":
            if _is_complex(dtype):
                # 0.95311164380491208: the standard deviation of a complex standard normal
                # whose modulus is truncated at 2.
                stddev = jnp.sqrt(variance) / jnp.array(0.9531116438049121, dtype)
                return _complex_truncated_normal(key, 2, shape, dtype) * stddev
            # 0.87962566103423978: the standard deviation of a standard normal truncated to (-2, 2).
            stddev = jnp.sqrt(variance) / jnp.array(0.8796256610342398, dtype)
            return _random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return _random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            if _is_complex(dtype):
                return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
            return _random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def _specialization(name, scale, mode, distribution):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"`variance_scaling({scale}, {mode!r}, {distribution!r})` with the given axes and dtype.")
    return make


glorot_uniform = xavier_uniform = _specialization("glorot_uniform", 1.0, "fan_avg", "uniform")
glorot_normal = xavier_normal = _specialization("glorot_normal", 1.0, "fan_avg", "truncated_normal")
lecun_uniform = _specialization("lecun_uniform", 1.0, "fan_in", "uniform")
lecun_normal = _specialization("lecun_normal", 1.0, "fan_in", "truncated_normal")
he_uniform = kaiming_uniform = _specialization("he_uniform", 2.0, "fan_in", "uniform")
he_normal = kaiming_normal = _specialization("he_normal", 2.0, "fan_in", "truncated_normal")


def _random_orthogonal(key, n, m, dtype):
    """An n x m matrix with orthonormal rows or columns (the smaller side):
    Q of the QR of a normal draw, its columns signed by R's diagonal."""
    z = _random.normal(key, (max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, 0, -2, -1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of (scaled) matrices with orthonormal rows or columns;
    higher-rank shapes are flattened to (rows, shape[column_axis])."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError
        dtype = _dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_cols = shape[column_axis]
        n_rows = _math.prod(shape) // n_cols
        q = _random_orthogonal(key, n_rows, n_cols, dtype)
        q = jnp.reshape(q, tuple(_np.delete(_np.array(shape), column_axis).tolist()) + (n_cols,))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q

    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of 3D / 4D / 5D convolution kernels: zero except an
    orthogonal matrix at the spatial centre."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError
        dtype = _dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre].set(ortho)

    return init
