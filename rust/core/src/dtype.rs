//! Element types and their names (JAX's promotion lattice: [`crate::promote`]).

use crate::error::{Error, Result};

/// Element type of an array. 64-bit types exist in the IR; the Python layer
/// canonicalizes them to 32-bit unless x64 is enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    /// Complex with f32 real and imaginary parts (`num_complex::Complex<f32>`).
    C64,
    /// Complex with f64 parts (`num_complex::Complex<f64>`).
    C128,
    /// Tangent type of integer/boolean primals: carries no data.
    Float0,
    /// Threefry PRNG key (two uint32 words per key element).
    Key,
}

/// Every dtype, for tests and tables.
pub const ALL_DTYPES: [DType; 17] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
    DType::Float0,
    DType::Key,
];

impl DType {
    /// NumPy-style name (`float32`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
            DType::Float0 => "float0",
            DType::Key => "key<fry>",
        }
    }

    /// Short name used in jaxpr text (`f32`).
    pub fn short_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C64 => "c64",
            DType::C128 => "c128",
            DType::Float0 => "float0",
            DType::Key => "key<fry>",
        }
    }

    /// Parse either the long or the short name.
    pub fn from_name(name: &str) -> Result<DType> {
        for d in ALL_DTYPES {
            if d.name() == name || d.short_name() == name {
                return Ok(d);
            }
        }
        match name {
            "bool_" => Ok(DType::Bool),
            _ => Err(Error::InvalidArgument(format!("unknown dtype {name:?}"))),
        }
    }

    /// Bytes per element (float0 stores nothing; a key element is two u32).
    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 | DType::Key => 8,
            DType::C128 => 16,
            DType::Float0 => 0,
        }
    }

    /// NumPy's kind character: `b` bool, `i` signed, `u` unsigned, `f`
    /// float, `c` complex, `V` the data-less float0 and the opaque key type.
    pub fn kind(self) -> char {
        match self {
            DType::Bool => 'b',
            d if d.is_signed_int() => 'i',
            d if d.is_unsigned_int() => 'u',
            d if d.is_float() => 'f',
            d if d.is_complex() => 'c',
            _ => 'V',
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// complex64 or complex128.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// Floating or complex (NumPy's `inexact`): the dtypes that carry
    /// tangents.
    pub fn is_inexact(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// The dtype of a complex type's real and imaginary parts (float32 for
    /// complex64, float64 for complex128); any other dtype itself.
    pub fn real_dtype(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            other => other,
        }
    }

    /// The complex type with parts of float dtype `self` (complex128 for
    /// float64, complex64 for the narrower floats); complex dtypes
    /// themselves; `None` for any other dtype.
    pub fn complex_dtype(self) -> Option<DType> {
        match self {
            DType::F64 | DType::C128 => Some(DType::C128),
            DType::F16 | DType::BF16 | DType::F32 | DType::C64 => Some(DType::C64),
            _ => None,
        }
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// Real numeric (int, float); complex, bool, float0 and keys are not.
    /// Rules that take complex operands say so with [`DType::is_complex`].
    pub fn is_numeric(self) -> bool {
        self.is_int() || self.is_float()
    }

    /// Bit width of an integer, float or complex type.
    pub fn bits(self) -> u32 {
        let bytes = u32::try_from(self.itemsize()).unwrap_or(0);
        bytes.saturating_mul(8)
    }

    /// The 32-bit counterpart of a 64-bit type (x64 disabled).
    pub fn canonicalize(self, x64: bool) -> DType {
        if x64 {
            return self;
        }
        match self {
            DType::I64 => DType::I32,
            DType::U64 => DType::U32,
            DType::F64 => DType::F32,
            DType::C128 => DType::C64,
            other => other,
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
