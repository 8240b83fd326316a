"""`lax.rng_bit_generator` and `lax.RandomAlgorithm`: XLA's counter-based
bit generators on a `uint32[4]` state, bit-exact with JAX 0.10.2 on the CPU.

The state is `(k0, k1, c_lo, c_hi)`: a 64-bit counter `c` and a key.
`RNG_DEFAULT` (Philox-4x32-10, as XLA's CPU backend) turns block `i` into
four words from the counter words `(c + i, k0, k1)` and key `(k0, k1)`;
`RNG_THREE_FRY` turns block `i` into two words with Threefry-2x32 of the
counter `c + i` under key `(k0, k1)` (rank-0 and rank-1 shapes; XLA lays
out higher ranks differently). The new state advances the counter by the
number of blocks. uint8 / uint16 values truncate one word each, uint64 values
join two (low word first), as XLA."""
import enum
import math

import numpy as np

from .. import core


class RandomAlgorithm(enum.IntEnum):
    """XLA's bit-generator algorithms (`RNG_DEFAULT` is Philox on the CPU)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def _lax():
    from .. import lax

    return lax


def _u32(v):
    return core.to_array(np.uint32(v & 0xFFFFFFFF), np.dtype("uint32"), weak_type=False)


def _counters(state, blocks):
    """Low and high words of `c + i` for i < blocks (64-bit counter)."""
    lax = _lax()
    i = lax.iota(np.uint32, blocks)
    lo = lax.add(lax.broadcast(state[2], (blocks,)), i)
    carry = lax.convert_element_type(lax.lt(lo, lax.broadcast(state[2], (blocks,))), np.uint32)
    hi = lax.add(lax.broadcast(state[3], (blocks,)), carry)
    return lo, hi


def _advance(state, blocks):
    lax = _lax()
    lo = lax.add(state[2], _u32(blocks))
    carry = lax.convert_element_type(lax.lt(lo, state[2]), np.uint32)
    hi = lax.add(state[3], carry)
    return lax.concatenate([lax.reshape(w, (1,)) for w in (state[0], state[1], lo, hi)], 0)


def _philox_blocks(state, blocks):
    lax = _lax()
    lo, hi = _counters(state, blocks)
    k0, k1 = (lax.broadcast(state[j], (blocks,)) for j in (0, 1))
    c = [lo, hi, k0, k1]
    m0, m1 = (lax.broadcast(_u32(m), (blocks,)) for m in _PHILOX_M)
    w0, w1 = (lax.broadcast(_u32(w), (blocks,)) for w in _PHILOX_W)
    for _ in range(10):
        hi0, lo0 = lax.mulhi(m0, c[0]), lax.mul(m0, c[0])
        hi1, lo1 = lax.mulhi(m1, c[2]), lax.mul(m1, c[2])
        c = [lax.bitwise_xor(lax.bitwise_xor(hi1, c[1]), k0), lo1,
             lax.bitwise_xor(lax.bitwise_xor(hi0, c[3]), k1), lo0]
        k0, k1 = lax.add(k0, w0), lax.add(k1, w1)
    return lax.reshape(lax.stack(c, axis=1), (4 * blocks,))


def _threefry_blocks(state, blocks):
    lax = _lax()
    lo, hi = _counters(state, blocks)
    k0, k1 = (lax.broadcast(state[j], (blocks,)) for j in (0, 1))
    a, b = lax.threefry2x32_p.bind(k0, k1, lo, hi)
    return lax.reshape(lax.stack([a, b], axis=1), (2 * blocks,))


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None):
    """`(new_key, bits)`: `bits` of `shape` (uint8 / 16 / 32 / 64) from the
    `uint32[4]` state `key`, and the advanced state."""
    lax = _lax()
    key = lax._arr(key)
    aval = core.get_aval(key)
    if aval.shape != (4,) or aval.dtype_name != "uint32":
        raise TypeError(f"rng_bit_generator: the key must be uint32[4], got {aval.dtype_name}{list(aval.shape)}")
    name = np.dtype(dtype).name
    if name not in ("uint8", "uint16", "uint32", "uint64"):
        raise TypeError(f"rng_bit_generator: unsupported dtype {name}")
    from .. import dtypes

    name = dtypes.canonical_name(name)
    shape = tuple(int(d) for d in shape)
    algorithm = RandomAlgorithm(algorithm)
    n = math.prod(shape)
    # Narrow values truncate one uint32 word each; a uint64 joins two (low word first).
    words = 2 * n if name == "uint64" else n
    state = [lax.index_in_dim(key, j, keepdims=False) for j in range(4)]
    if algorithm == RandomAlgorithm.RNG_THREE_FRY:
        if len(shape) > 1 or name != "uint32":
            raise NotImplementedError("rng_bit_generator: RNG_THREE_FRY supports uint32 bits of "
                                      "rank-0 and rank-1 shapes")
        blocks, make = -(-words // 2), _threefry_blocks
    else:
        blocks, make = -(-words // 4), _philox_blocks
    if blocks == 0:
        return key, lax.full(shape, 0, name)
    bits = lax.slice_in_dim(make(state, blocks), 0, words)
    if name == "uint64":
        pairs = lax.convert_element_type(lax.reshape(bits, (n, 2)), name)
        lo, hi = (lax.index_in_dim(pairs, j, axis=1, keepdims=False) for j in (0, 1))
        bits = lax.bitwise_or(lax.shift_left(hi, lax.full((), 32, name)), lo)
    elif name != "uint32":
        bits = lax.convert_element_type(bits, name)
    return _advance(state, blocks), lax.reshape(bits, shape)
