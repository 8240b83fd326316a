"""`jax._src.random.threefry2x32` at JAX's path: the Threefry-2x32 hash
(`threefry_2x32`, `threefry2x32_p`) and the key functions of JAX's default
implementation on the data of one key."""
from ...random import _prng
from ...random._prng import threefry2x32_p, threefry_2x32  # noqa: F401

threefry_prng_impl = _prng.prngs["threefry2x32"]
threefry_seed = threefry_prng_impl.seed
threefry_split = threefry_prng_impl.split
threefry_fold_in = threefry_prng_impl.fold_in
threefry_random_bits = threefry_prng_impl.random_bits
