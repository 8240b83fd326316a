"""`lax.Precision`, `lax.DotAlgorithm`, `lax.DotAlgorithmPreset` and
`canonicalize_precision`: what the `precision=` argument of the matrix
products and convolutions accepts.

microjax_rs multiplies in the operand type on every device (as JAX does on
the CPU), so a precision changes no result; it is checked and normalized
the way JAX does (a bad value raises JAX's ValueError)."""
import enum
from typing import NamedTuple, Sequence, Union

import numpy as np


class Precision(enum.Enum):
    """`lax.Precision`: the accuracy asked of a matrix product's passes on
    accelerators. microjax_rs multiplies in the operand type on every device
    (as JAX on the CPU), so all three give the same result."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"bfloat16": cls.DEFAULT, "default": cls.DEFAULT, "fastest": cls.DEFAULT,
                 "tensorfloat32": cls.HIGH, "high": cls.HIGH, "bfloat16_3x": cls.HIGH,
                 "float32": cls.HIGHEST, "highest": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __str__(self):
        return self.name


class DotAlgorithm(NamedTuple):
    """An explicit dot-product algorithm (`lax.DotAlgorithm`): the storage
    types of the operands, the accumulation type, and the component counts
    of multi-pass algorithms. Accepted as `precision=`; microjax_rs
    computes in the operand type."""

    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


def _bf16():
    from .. import dtypes

    return dtypes.bfloat16


class DotAlgorithmPreset(enum.Enum):
    """Named dot-product algorithms (`lax.DotAlgorithmPreset`), accepted as
    `precision=` (or by name, e.g. `precision="F32_F32_F32"`). The name reads
    `<lhs type>_<rhs type>_<accumulation type>[_X<passes>]`."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __str__(self):
        return self.name

    @property
    def supported_lhs_types(self):
        """The operand types this algorithm takes (None: any)."""
        name = self.name
        if name == "DEFAULT" or name.startswith("ANY_"):
            return None
        if name.startswith("F16_"):
            return (np.float16,)
        if name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return (_bf16(), np.float32)
        if name.startswith("F64_"):
            return (np.float64,)
        return (np.float32,)

    @property
    def supported_rhs_types(self):
        return self.supported_lhs_types

    @property
    def accumulation_type(self):
        """The accumulation type (None: the operand type)."""
        name = self.name
        if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        acc = name.split("_")[2] if not name.startswith("ANY_") else "F32"
        return {"F16": np.float16, "BF16": _bf16(), "F32": np.float32, "F64": np.float64}[acc]

    def supported_output_types(self, lhs_dtype, rhs_dtype):
        """The result types this algorithm may produce (None: any)."""
        if self.name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        acc = self.accumulation_type
        return (acc,) if acc is not None else None


PrecisionLike = Union[None, str, Precision, tuple, DotAlgorithm, DotAlgorithmPreset]

# `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]

_STRINGS = ["highest", "float32", "high", "bfloat16_3x", "tensorfloat32", "default", "bfloat16", "fastest", None]


def _bad_precision(precision):
    return ValueError(
        "Precision argument must be one of:\n- None,\n"
        f"- a string in {_STRINGS},\n- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        f"- a lax.DotAlgorithm value;\nbut got {precision}.")


def canonicalize_precision(precision):
    """`precision=` in JAX's normal form: None, a pair of `Precision`s, a
    `DotAlgorithmPreset` or a `DotAlgorithm` (ValueError otherwise)."""
    if precision is None:
        return None
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision
    if isinstance(precision, str):
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
        try:
            p = Precision(precision)
        except ValueError:
            raise _bad_precision(precision) from None
        return (p, p)
    if isinstance(precision, Precision):
        return (precision, precision)
    if (isinstance(precision, (list, tuple)) and len(precision) == 2
            and all(isinstance(p, Precision) for p in precision)):
        return tuple(precision)
    if (isinstance(precision, (list, tuple)) and len(precision) == 2
            and all(isinstance(p, str) for p in precision)):
        try:
            return (Precision(precision[0]), Precision(precision[1]))
        except ValueError:
            raise _bad_precision(precision) from None
    raise _bad_precision(precision)
