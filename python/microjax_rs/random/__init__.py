"""`jax.random`: JAX's PRNG implementations and their samplers.

Keys are either raw `uint32[..., *key_shape]` arrays (`PRNGKey`) or typed key
arrays (`key`), a `PRNGKeyArray` whose one pytree leaf is that same raw data
(the implementation is its static part), so typed keys pass through `jit`,
`vmap` and `grad` like any pytree. The implementations are JAX's, bit for
bit: threefry2x32 (the default, on the Rust `threefry2x32` primitive),
threefry4x32, philox2x32, philox4x32, rbg and unsafe_rbg; pick one with
`key(seed, impl=name)` or `jax.default_prng_impl(name)` /
`jax_default_prng_impl`. Draws follow JAX's algorithms and key consumption
under JAX's current defaults (`jax_threefry_partitionable`).

Modules: `_prng` (keys, the implementation registry, Threefry-2x32, bits and the basic samplers: uniform,
normal, randint, bernoulli, categorical, choice, permutation, ...) and
`_distributions` (the gamma family, poisson / binomial / multinomial and the
closed-form transforms), `_impls` (the other implementations).
"""
from . import _distributions, _impls, _keyops, _prng
from ._distributions import (
    ball,
    beta,
    binomial,
    cauchy,
    chisquare,
    clone,
    dirichlet,
    double_sided_maxwell,
    f,
    gamma,
    generalized_normal,
    geometric,
    key_dtype,
    laplace,
    loggamma,
    logistic,
    lognormal,
    maxwell,
    multinomial,
    orthogonal,
    pareto,
    poisson,
    random_gamma_p,
    rayleigh,
    t,
    triangular,
    wald,
    weibull_min,
)
from ._prng import (
    KeyDType,
    PRNGKey,
    PRNGKeyArray,
    bernoulli,
    bits,
    categorical,
    choice,
    exponential,
    fold_in,
    gumbel,
    key,
    key_data,
    key_impl,
    multivariate_normal,
    normal,
    permutation,
    rademacher,
    randint,
    shuffle,
    split,
    threefry2x32_p,
    threefry_2x32,
    truncated_normal,
    uniform,
    wrap_key_data,
)

__all__ = list(_prng.__all__) + list(_distributions.__all__)

from .. import Array as _Array  # noqa: E402

_Array.register(PRNGKeyArray)  # a typed key array is a jax.Array, as JAX's
