//! Element types, their names, and JAX's type-promotion lattice.

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
    /// Tangent type of integer/boolean primals: carries no data.
    Float0,
    /// Threefry PRNG key (two uint32 words per key element).
    Key,
}

/// Every dtype, for tests and tables.
pub const ALL_DTYPES: [DType; 15] = [
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
            DType::Float0 => "float0",
            DType::Key => "key<fry>",
        }
    }

    /// Parse either the long or the short name. Complex names get the
    /// documented out-of-scope error.
    pub fn from_name(name: &str) -> Result<DType> {
        for d in ALL_DTYPES {
            if d.name() == name || d.short_name() == name {
                return Ok(d);
            }
        }
        match name {
            "bool_" => Ok(DType::Bool),
            "complex64" | "complex128" | "c64" | "c128" => Err(Error::Unsupported(format!(
                "complex dtypes are not supported by microjax_rs (got {name})"
            ))),
            _ => Err(Error::InvalidArgument(format!("unknown dtype {name:?}"))),
        }
    }

    /// Bytes per element (float0 stores nothing; a key element is two u32).
    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::Key => 8,
            DType::Float0 => 0,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
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

    /// Numeric (int, float); bool, float0 and keys are not.
    pub fn is_numeric(self) -> bool {
        self.is_int() || self.is_float()
    }

    /// Bit width of an integer or float type.
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
            other => other,
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A node of JAX's promotion lattice: a concrete dtype, or the weak Python
/// scalar kinds `i*` / `f*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Concrete(DType),
    WeakInt,
    WeakFloat,
}

/// Direct successors in JAX's lattice (b1 → i* → {u8, i8}; i* → f*; …).
fn successors(n: Node) -> &'static [Node] {
    use DType::*;
    use Node::*;
    match n {
        Concrete(Bool) => &[WeakInt],
        WeakInt => &[Concrete(U8), Concrete(I8), WeakFloat],
        Concrete(U8) => &[Concrete(I16), Concrete(U16)],
        Concrete(U16) => &[Concrete(I32), Concrete(U32)],
        Concrete(U32) => &[Concrete(I64), Concrete(U64)],
        Concrete(U64) => &[WeakFloat],
        Concrete(I8) => &[Concrete(I16)],
        Concrete(I16) => &[Concrete(I32)],
        Concrete(I32) => &[Concrete(I64)],
        Concrete(I64) => &[WeakFloat],
        WeakFloat => &[Concrete(BF16), Concrete(F16)],
        Concrete(BF16) | Concrete(F16) => &[Concrete(F32)],
        Concrete(F32) => &[Concrete(F64)],
        Concrete(F64) | Concrete(Float0) | Concrete(Key) => &[],
    }
}

/// All nodes reachable from `n` (including `n`), in breadth-first order.
fn upper_bounds(n: Node) -> Vec<Node> {
    let mut out = vec![n];
    let mut i = 0;
    while let Some(&cur) = out.get(i) {
        for &s in successors(cur) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        i = i.saturating_add(1);
    }
    out
}

fn node_of(dtype: DType, weak: bool) -> Node {
    match (weak, dtype) {
        (true, d) if d.is_int() => Node::WeakInt,
        (true, d) if d.is_float() => Node::WeakFloat,
        (_, d) => Node::Concrete(d),
    }
}

/// JAX's `promote_types` on (dtype, weak_type) pairs: the least upper bound in
/// the lattice; a weak result takes the default dtype of its kind
/// (`default_int`/`default_float`, already canonicalized by the caller).
pub fn promote(
    a: (DType, bool), b: (DType, bool), default_int: DType, default_float: DType,
) -> Result<(DType, bool)> {
    let na = node_of(a.0, a.1);
    let nb = node_of(b.0, b.1);
    if na == nb {
        return Ok((a.0, a.1 && b.1));
    }
    let ua = upper_bounds(na);
    let ub = upper_bounds(nb);
    let common: Vec<Node> = ua.iter().copied().filter(|n| ub.contains(n)).collect();
    // The least upper bound is the common bound every other common bound is above.
    let lub = common.iter().copied().find(|cand| {
        common
            .iter()
            .all(|other| upper_bounds(*cand).contains(other))
    });
    match lub {
        Some(Node::Concrete(d)) => Ok((d, false)),
        Some(Node::WeakInt) => Ok((default_int, true)),
        Some(Node::WeakFloat) => Ok((default_float, true)),
        None => Err(Error::InvalidArgument(format!(
            "no common dtype for {} and {}",
            a.0, b.0
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: (DType, bool), b: (DType, bool)) -> (DType, bool) {
        promote(a, b, DType::I32, DType::F32).unwrap_or((DType::Key, false))
    }

    #[test]
    fn lattice_matches_jax_table() {
        use DType::*;
        assert_eq!(p((F32, false), (F32, true)), (F32, false));
        assert_eq!(p((I32, false), (F32, true)), (F32, true));
        assert_eq!(p((BF16, false), (F16, false)), (F32, false));
        assert_eq!(p((U8, false), (I8, false)), (I16, false));
        assert_eq!(p((U64, false), (I64, false)), (F32, true));
        assert_eq!(p((I32, true), (U8, false)), (U8, false));
        assert_eq!(p((Bool, false), (I32, true)), (I32, true));
        assert_eq!(p((F16, false), (F32, true)), (F16, false));
        assert_eq!(p((I64, false), (F64, false)), (F64, false));
    }

    #[test]
    fn names_round_trip() {
        for d in ALL_DTYPES {
            assert_eq!(DType::from_name(d.name()), Ok(d));
            assert_eq!(DType::from_name(d.short_name()), Ok(d));
        }
        assert!(matches!(
            DType::from_name("complex64"),
            Err(Error::Unsupported(_))
        ));
    }
}
