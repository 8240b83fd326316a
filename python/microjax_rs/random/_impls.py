"""JAX's other PRNG implementations, bit for bit with JAX 0.10.2:
Threefry-4x32 (20 rounds), Philox-2x32 and Philox-4x32 (10 rounds, Random123's
constants), and the `rbg` / `unsafe_rbg` pair built on XLA's bit generator
(`lax.rng_bit_generator`, Philox on the CPU).

Every function takes the uint32 data of ONE key; `_prng` maps batched keys.
The counters of `split` and `random_bits` are the row-major element index of
the requested shape as a 64-bit number split into (high, low) words, as the
partitionable Threefry scheme.

One difference remains: under `vmap` over rbg / unsafe_rbg keys, JAX's
batching rule of `rng_bit_generator` draws every row from the first key's
state; here each key draws its own bits (as the unbatched calls do).
"""
import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from . import _prng
from ._prng import PRNGImpl, register_prng

_THREEFRY4_ROTATIONS = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20))
_SKEIN_PARITY = 0x1BD11BDA
_PHILOX2_M = 0xD256D193
_PHILOX4_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def _u32(v):
    return jnp.asarray(np.uint32(v & 0xFFFFFFFF))


def _words(*xs):
    """uint32 arrays of `xs`, broadcast to one shape."""
    xs = [jnp.asarray(x) for x in xs]
    shape = np.broadcast_shapes(*(jnp.shape(x) for x in xs))
    return [jnp.broadcast_to(x, shape) for x in xs]


def _rotl(x, d):
    return lax.bitwise_or(lax.shift_left(x, _u32(d)), lax.shift_right_logical(x, _u32(32 - d)))


def threefry4x32(k0, k1, k2, k3, x0, x1, x2, x3):
    """The Threefry-4x32 block function (20 rounds) of the key words and the
    counter words (broadcast together); four uint32 outputs."""
    k0, k1, k2, k3, x0, x1, x2, x3 = _words(k0, k1, k2, k3, x0, x1, x2, x3)
    parity = lax.bitwise_xor(lax.bitwise_xor(lax.bitwise_xor(k0, k1), lax.bitwise_xor(k2, k3)),
                             jnp.broadcast_to(_u32(_SKEIN_PARITY), jnp.shape(k0)))
    ks = [k0, k1, k2, k3, parity]
    x = [lax.add(x0, ks[0]), lax.add(x1, ks[1]), lax.add(x2, ks[2]), lax.add(x3, ks[3])]
    for rnd in range(20):
        r0, r1 = _THREEFRY4_ROTATIONS[rnd % 8]
        # Even rounds mix (0, 1) and (2, 3); odd rounds (0, 3) and (2, 1).
        a, b = (1, 3) if rnd % 2 == 0 else (3, 1)
        x[0] = lax.add(x[0], x[a])
        x[a] = lax.bitwise_xor(x[0], _rotl(x[a], r0))
        x[2] = lax.add(x[2], x[b])
        x[b] = lax.bitwise_xor(x[2], _rotl(x[b], r1))
        if rnd % 4 == 3:
            j = rnd // 4
            x = [lax.add(x[i], ks[(i + 1 + j) % 5]) for i in range(4)]
            x[3] = lax.add(x[3], _u32(1 + j))
    return tuple(x)


def philox2x32(k0, x0, x1):
    """The Philox-2x32 block function (10 rounds) of key word `k0` and counter
    `(x0, x1)`; two uint32 outputs."""
    k0, x0, x1 = _words(k0, x0, x1)
    m = _u32(_PHILOX2_M)
    for rnd in range(10):
        if rnd:
            k0 = lax.add(k0, _u32(_PHILOX_W[0]))
        hi, lo = lax.mulhi(m, x0), lax.mul(m, x0)
        x0, x1 = lax.bitwise_xor(lax.bitwise_xor(hi, x1), k0), lo
    return x0, x1


def philox4x32(k0, k1, x0, x1, x2, x3):
    """The Philox-4x32 block function (10 rounds) of key `(k0, k1)` and
    counter `(x0, x1, x2, x3)`; four uint32 outputs."""
    k0, k1, x0, x1, x2, x3 = _words(k0, k1, x0, x1, x2, x3)
    m0, m1 = (_u32(m) for m in _PHILOX4_M)
    for rnd in range(10):
        if rnd:
            k0, k1 = lax.add(k0, _u32(_PHILOX_W[0])), lax.add(k1, _u32(_PHILOX_W[1]))
        hi0, lo0 = lax.mulhi(m0, x0), lax.mul(m0, x0)
        hi1, lo1 = lax.mulhi(m1, x2), lax.mul(m1, x2)
        x0, x1, x2, x3 = (lax.bitwise_xor(lax.bitwise_xor(hi1, x1), k0), lo1,
                          lax.bitwise_xor(lax.bitwise_xor(hi0, x3), k1), lo0)
    return x0, x1, x2, x3


def _bits_of(words, wide, bit_width):
    """Random bits of `bit_width` from output words: 64-bit values join the
    `wide` pair (high, low); narrower ones are the xor of all the words."""
    dtype = _prng._UINT[bit_width]
    if bit_width == 64:
        hi, lo = (lax.convert_element_type(w, dtype) for w in wide)
        return lax.bitwise_or(lax.shift_left(hi, jnp.asarray(32, dtype)), lo)
    out = words[0]
    for w in words[1:]:
        out = lax.bitwise_xor(out, w)
    return out if bit_width == 32 else lax.convert_element_type(out, dtype)


def _zeros(shape):
    return jnp.zeros(shape, "uint32")


# Threefry-4x32: seed words hashed under key (hi, lo, 0, 0); split counters in
# words 2-3, bit counters in words 0-1, fold-in data in word 3.


def _threefry4_seed(seed):
    words = _prng._seed_words(seed, "key")
    z = _u32(0)
    return jnp.stack(threefry4x32(words[0], words[1], z, z, z, z, z, z))


def _threefry4_split(data, shape):
    hi, lo = _prng._iota_2x32(shape)
    z = _zeros(shape)
    return jnp.stack(threefry4x32(data[0], data[1], data[2], data[3], z, z, hi, lo), axis=len(shape))


def _threefry4_fold_in(data, x):
    z = _u32(0)
    return jnp.stack(threefry4x32(data[0], data[1], data[2], data[3], z, z, z, x))


def _threefry4_bits(data, bit_width, shape):
    hi, lo = _prng._iota_2x32(shape)
    z = _zeros(shape)
    o = threefry4x32(data[0], data[1], data[2], data[3], hi, lo, z, z)
    return _bits_of(o, (lax.bitwise_xor(o[0], o[2]), lax.bitwise_xor(o[1], o[3])), bit_width)


# Philox-2x32: a one-word key; the seed is word 0 of the seed words hashed under key 0.


def _philox2_seed(seed):
    words = _prng._seed_words(seed, "key")
    return jnp.reshape(philox2x32(_u32(0), words[0], words[1])[0], (1,))


def _philox2_split(data, shape):
    hi, lo = _prng._iota_2x32(shape)
    return jnp.expand_dims(philox2x32(data[0], hi, lo)[0], len(shape))


def _philox2_fold_in(data, x):
    return jnp.reshape(philox2x32(data[0], _u32(0), x)[0], (1,))


def _philox2_bits(data, bit_width, shape):
    hi, lo = _prng._iota_2x32(shape)
    o = philox2x32(data[0], hi, lo)
    return _bits_of(o, o, bit_width)


# Philox-4x32: a two-word key; split counters in words 2-3, bit counters in
# words 0-1, fold-in data in word 3.


def _philox4_seed(seed):
    words = _prng._seed_words(seed, "key")
    z = _u32(0)
    return jnp.stack(philox4x32(z, z, words[0], words[1], z, z)[:2])


def _philox4_split(data, shape):
    hi, lo = _prng._iota_2x32(shape)
    z = _zeros(shape)
    return jnp.stack(philox4x32(data[0], data[1], z, z, hi, lo)[:2], axis=len(shape))


def _philox4_fold_in(data, x):
    z = _u32(0)
    return jnp.stack(philox4x32(data[0], data[1], z, z, z, x)[:2])


def _philox4_bits(data, bit_width, shape):
    hi, lo = _prng._iota_2x32(shape)
    z = _zeros(shape)
    o = philox4x32(data[0], data[1], hi, lo, z, z)
    return _bits_of(o, o[:2], bit_width)


# rbg / unsafe_rbg: four words, two Threefry-2x32 keys for split and fold-in
# (rbg) and the state of XLA's bit generator for bits.


def _rbg_seed(seed):
    words = _prng._seed_words(seed, "key")
    return jnp.concatenate([words, words])


def _rbg_split(data, shape):
    halves = [_prng._threefry_split(data[i:i + 2], shape) for i in (0, 2)]
    return jnp.concatenate(halves, axis=len(shape))


def _rbg_fold_in(data, x):
    return jnp.concatenate([_prng._threefry_fold_in(data[i:i + 2], x) for i in (0, 2)])


def _rbg_bits(data, bit_width, shape):
    return lax.rng_bit_generator(data, shape, dtype=_prng._UINT[bit_width])[1]


def _unsafe_rbg_split(data, shape):
    # Ten rows of generator output per key, the first of each ten kept.
    num = math.prod(shape)
    _, rows = lax.rng_bit_generator(data, (10 * num, 4), dtype="uint32")
    return jnp.reshape(rows[::10], (*shape, 4))


def _unsafe_rbg_fold_in(data, x):
    seed = _rbg_seed(x)
    _, rows = lax.rng_bit_generator(seed, (10, 4), dtype="uint32")
    return lax.bitwise_xor(data, rows[-1])


for _impl in (
        PRNGImpl((1,), _philox2_seed, _philox2_split, _philox2_bits, _philox2_fold_in,
                 "philox2x32", "phx2"),
        PRNGImpl((2,), _philox4_seed, _philox4_split, _philox4_bits, _philox4_fold_in,
                 "philox4x32", "phx4"),
        PRNGImpl((4,), _rbg_seed, _rbg_split, _rbg_bits, _rbg_fold_in, "rbg", "rbg"),
        PRNGImpl((4,), _rbg_seed, _unsafe_rbg_split, _rbg_bits, _unsafe_rbg_fold_in,
                 "unsafe_rbg", "urbg"),
        PRNGImpl((4,), _threefry4_seed, _threefry4_split, _threefry4_bits, _threefry4_fold_in,
                 "threefry4x32", "fry4")):
    register_prng(_impl)

# `prngs` lists the implementations in JAX's order (JAX's parametrized tests
# number their cases by it).
_JAX_ORDER = ("philox2x32", "philox4x32", "threefry2x32", "rbg", "unsafe_rbg", "threefry4x32")
_prng.prngs.update({name: _prng.prngs.pop(name) for name in _JAX_ORDER})
