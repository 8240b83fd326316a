"""Packing boolean values into the bits of uint8 arrays and back
(jnp.packbits / jnp.unpackbits)."""
from .lax_numpy import arange, asarray, concatenate, moveaxis, ravel, reshape, zeros
from .reductions import sum as _sum
from .ufuncs import bitwise_and, right_shift
from .util import _arr, _aval, _canon_axis, _is_bool, _is_int


def _bit_order(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    return bitorder


def _bit_axis(a, axis, bitorder):
    """Checks `bitorder`; `a` flattened when `axis` is None, and the axis made non-negative."""
    _bit_order(bitorder)
    if axis is None:
        return ravel(a), 0
    return a, _canon_axis(axis, _aval(a).ndim)


def packbits(a, axis=None, bitorder="big"):
    """Packs the truth values of `a` (integer or bool) into uint8, eight per
    byte along `axis` (the flattened array when None), zero-padded."""
    a = _arr(a)
    if not (_is_int(a) or _is_bool(a)):
        raise TypeError("Expected an input array of integer or boolean data type")
    a, axis = _bit_axis(a, axis, bitorder)
    bits = moveaxis(a != 0, axis, -1).astype("uint8")
    n = _aval(bits).shape[-1]
    pad = -n % 8
    if pad:
        bits = concatenate([bits, zeros(_aval(bits).shape[:-1] + (pad,), "uint8")], axis=-1)
    bits = reshape(bits, _aval(bits).shape[:-1] + ((n + pad) // 8, 8))
    weights = [128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128]
    packed = _sum(bits * asarray(weights, dtype="uint8"), axis=-1, dtype="uint8")
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the uint8 array `a` as a uint8 array of 0 / 1, eight per
    byte along `axis` (the flattened array when None); `count` keeps that
    many (negative: drops that many from the end; more: zero-pads)."""
    a = _arr(a)
    if _aval(a).dtype_name != "uint8":
        raise TypeError("Expected an input array of unsigned byte data type")
    a, axis = _bit_axis(a, axis, bitorder)
    moved = moveaxis(a, axis, -1)
    shifts = arange(7, -1, -1, dtype="uint8") if bitorder == "big" else arange(8, dtype="uint8")
    bits = bitwise_and(right_shift(moved[..., None], shifts), asarray(1, dtype="uint8"))
    bits = reshape(bits, _aval(moved).shape[:-1] + (_aval(moved).shape[-1] * 8,))
    if count is not None:
        total = _aval(bits).shape[-1]
        count = int(count)
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = concatenate([bits, zeros(_aval(bits).shape[:-1] + (keep - total,), "uint8")], axis=-1)
    return moveaxis(bits, -1, axis)
