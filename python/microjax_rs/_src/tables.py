"""What the Rust core knows of primitives and dtypes, read once at import.

The one Python owner of these facts: every other module imports them from
here, none keeps a copy. `_core.primitive_table()` gives, per primitive
name, `(multiple_results, differentiable, effect)`; `_core.dtype_table()`
gives, per dtype name, `(short name, NumPy kind, name with x64 disabled,
is float, bytes per element, explicit mantissa bits or None)`.
"""
from .. import _core

PRIMITIVES = _core.primitive_table()
DTYPES = _core.dtype_table()

# Primitives whose `bind` returns a list.
MULTIPLE_RESULTS = frozenset(name for name, (multi, _, _) in PRIMITIVES.items() if multi)

# Primitives whose outputs never carry a tangent (bool/int results,
# stop_gradient): AD runs them on known values instead of recording them.
NONDIFF_PRIMS = frozenset(name for name, (_, diff, _) in PRIMITIVES.items() if not diff)

# Dtype name -> the short name jaxprs print (`float32` -> `f32`).
SHORT_NAMES = {name: short for name, (short, *_) in DTYPES.items()}

# Dtype name -> NumPy kind character (`b`, `i`, `u`, `f`, `c`; `V` for float0 and keys).
KINDS = {name: kind for name, (_, kind, *_) in DTYPES.items()}

# Dtype name -> its canonical name with x64 disabled (`int64` -> `int32`).
CANONICAL_32 = {name: canon for name, (_, _, canon, *_) in DTYPES.items()}

# The floating dtype names (the differentiable ones).
FLOAT_NAMES = frozenset(name for name, (_, _, _, is_float, *_) in DTYPES.items() if is_float)

# Dtype name -> bytes per element (float0: 0).
ITEMSIZES = {name: size for name, (_, _, _, _, size, _) in DTYPES.items()}

# Real float dtype name -> its explicit mantissa bits (`float32` -> 23).
MANTISSA_BITS = {name: row[5] for name, row in DTYPES.items() if row[5] is not None}

# The half-precision float names (float16, bfloat16): JAX computes some
# reductions and special functions of these in float32.
HALF_FLOAT_NAMES = frozenset(name for name in FLOAT_NAMES if ITEMSIZES[name] == 2)

# The complex dtype names (complex64, complex128).
COMPLEX_NAMES = frozenset(name for name, kind in KINDS.items() if kind == "c")

# The inexact dtype names (floating or complex): the ones that carry tangents.
INEXACT_NAMES = FLOAT_NAMES | COMPLEX_NAMES

# The integer dtype names, signed and unsigned.
INT_NAMES = frozenset(name for name, kind in KINDS.items() if kind in ("i", "u"))
