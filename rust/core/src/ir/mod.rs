//! The IR: typed variables, literals, equations in A-normal form, jaxprs.
//!
//! Variables are indices into the owning jaxpr's `avals` table, so a jaxpr is
//! a plain value (cheap to clone, compare, hash, print and parse). Builders
//! create them; transforms produce new jaxprs rather than mutating shared ones.

pub mod builder;
pub mod canonical;
pub mod display;
pub mod hash;
pub mod rewire;
pub mod splice;
pub mod typecheck;

use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::prims::Primitive;
use half::{bf16, f16};
use std::sync::Arc;

/// Abstract value: shape, dtype and JAX's weak-type bit.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Aval {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub weak_type: bool,
}

impl Aval {
    pub fn new(shape: Vec<usize>, dtype: DType) -> Aval {
        Aval {
            shape,
            dtype,
            weak_type: false,
        }
    }

    pub fn weak(shape: Vec<usize>, dtype: DType, weak_type: bool) -> Aval {
        Aval {
            shape,
            dtype,
            weak_type,
        }
    }

    pub fn scalar(dtype: DType) -> Aval {
        Aval::new(Vec::new(), dtype)
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn size(&self) -> Result<usize> {
        crate::array::checked_size(&self.shape)
    }

    /// Same shape and dtype (weak type ignored), what operands must agree on.
    pub fn same_type(&self, other: &Aval) -> bool {
        self.shape == other.shape && self.dtype == other.dtype
    }

    /// JAX's short form: `f32[3,4]`.
    pub fn short(&self) -> String {
        let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        format!("{}[{}]", self.dtype.short_name(), dims.join(","))
    }
}

/// A variable of a jaxpr: an index into its `avals` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub u32);

impl Var {
    pub fn index(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

/// A scalar value, wide enough to hold any dtype's element exactly.
#[derive(Debug, Clone, Copy)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    /// A complex value: real and imaginary parts.
    Complex(f64, f64),
}

impl PartialEq for Scalar {
    /// Bitwise for floats so NaN literals compare equal to themselves
    /// (needed for `parse(canonical(j)) == j` and the structural hash).
    fn eq(&self, other: &Scalar) -> bool {
        match (self, other) {
            (Scalar::Bool(a), Scalar::Bool(b)) => a == b,
            (Scalar::Int(a), Scalar::Int(b)) => a == b,
            (Scalar::UInt(a), Scalar::UInt(b)) => a == b,
            (Scalar::Float(a), Scalar::Float(b)) => a.to_bits() == b.to_bits(),
            (Scalar::Complex(a, b), Scalar::Complex(c, d)) => {
                a.to_bits() == c.to_bits() && b.to_bits() == d.to_bits()
            }
            _ => false,
        }
    }
}
impl Eq for Scalar {}

impl std::hash::Hash for Scalar {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match *self {
            Scalar::Bool(b) => (0u8, u64::from(b)).hash(state),
            Scalar::Int(i) => (1u8, i).hash(state),
            Scalar::UInt(u) => (2u8, u).hash(state),
            Scalar::Float(f) => (3u8, f.to_bits()).hash(state),
            Scalar::Complex(re, im) => (4u8, re.to_bits(), im.to_bits()).hash(state),
        }
    }
}

/// Conversions of a scalar to one element type: a complex value converts
/// to a real type through its real part (as `convert_element_type` does);
/// any value converts to a complex type with a zero imaginary part.
impl Scalar {
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Int(i) => i as f64,
            Scalar::UInt(u) => u as f64,
            Scalar::Float(f) | Scalar::Complex(f, _) => f,
        }
    }

    /// Real and imaginary parts.
    pub fn as_complex(self) -> (f64, f64) {
        match self {
            Scalar::Complex(re, im) => (re, im),
            other => (other.as_f64(), 0.0),
        }
    }

    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => i64::from(b),
            Scalar::Int(i) => i,
            Scalar::UInt(u) => u as i64,
            Scalar::Float(f) | Scalar::Complex(f, _) => f as i64,
        }
    }

    pub fn as_u64(self) -> u64 {
        match self {
            Scalar::Bool(b) => u64::from(b),
            Scalar::Int(i) => i as u64,
            Scalar::UInt(u) => u,
            Scalar::Float(f) | Scalar::Complex(f, _) => f as u64,
        }
    }

    pub fn as_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::UInt(u) => u != 0,
            Scalar::Float(f) => f != 0.0,
            Scalar::Complex(re, im) => re != 0.0 || im != 0.0,
        }
    }

    /// The value rounded to `dtype` and stored back in canonical form
    /// (`Float` for float dtypes, `Int`/`UInt` for integers).
    pub fn cast(self, dtype: DType) -> Scalar {
        match dtype {
            DType::Bool => Scalar::Bool(self.as_bool()),
            DType::I8 => Scalar::Int(i64::from(self.as_i64() as i8)),
            DType::I16 => Scalar::Int(i64::from(self.as_i64() as i16)),
            DType::I32 => Scalar::Int(i64::from(self.as_i64() as i32)),
            DType::I64 => Scalar::Int(self.as_i64()),
            DType::U8 => Scalar::UInt(u64::from(self.as_u64() as u8)),
            DType::U16 => Scalar::UInt(u64::from(self.as_u64() as u16)),
            DType::U32 => Scalar::UInt(u64::from(self.as_u64() as u32)),
            DType::U64 => Scalar::UInt(self.as_u64()),
            DType::F16 => Scalar::Float(f16::from_f64(self.as_f64()).to_f64()),
            DType::BF16 => Scalar::Float(bf16::from_f64(self.as_f64()).to_f64()),
            DType::F32 => Scalar::Float(f64::from(self.as_f64() as f32)),
            DType::C64 => {
                let (re, im) = self.as_complex();
                Scalar::Complex(f64::from(re as f32), f64::from(im as f32))
            }
            DType::C128 => {
                let (re, im) = self.as_complex();
                Scalar::Complex(re, im)
            }
            DType::F64 | DType::Float0 | DType::Key => Scalar::Float(self.as_f64()),
        }
    }

    /// A buffer of `n` copies of this value converted to `dtype`.
    pub fn to_buffer(self, dtype: DType, n: usize) -> Result<Buffer> {
        use crate::array::budget::filled;
        let w = "full";
        Ok(match dtype {
            DType::Bool => Buffer::Bool(filled(w, dtype, self.as_bool(), n)?.into()),
            DType::I8 => Buffer::I8(filled(w, dtype, self.as_i64() as i8, n)?.into()),
            DType::I16 => Buffer::I16(filled(w, dtype, self.as_i64() as i16, n)?.into()),
            DType::I32 => Buffer::I32(filled(w, dtype, self.as_i64() as i32, n)?.into()),
            DType::I64 => Buffer::I64(filled(w, dtype, self.as_i64(), n)?.into()),
            DType::U8 => Buffer::U8(filled(w, dtype, self.as_u64() as u8, n)?.into()),
            DType::U16 => Buffer::U16(filled(w, dtype, self.as_u64() as u16, n)?.into()),
            DType::U32 => Buffer::U32(filled(w, dtype, self.as_u64() as u32, n)?.into()),
            DType::U64 => Buffer::U64(filled(w, dtype, self.as_u64(), n)?.into()),
            DType::F16 => Buffer::F16(filled(w, dtype, f16::from_f64(self.as_f64()), n)?.into()),
            DType::BF16 => Buffer::BF16(filled(w, dtype, bf16::from_f64(self.as_f64()), n)?.into()),
            DType::F32 => Buffer::F32(filled(w, dtype, self.as_f64() as f32, n)?.into()),
            DType::F64 => Buffer::F64(filled(w, dtype, self.as_f64(), n)?.into()),
            DType::C64 => {
                let (re, im) = self.as_complex();
                let z = crate::array::C32::new(re as f32, im as f32);
                Buffer::C64(filled(w, dtype, z, n)?.into())
            }
            DType::C128 => {
                let (re, im) = self.as_complex();
                let z = crate::array::C64::new(re, im);
                Buffer::C128(filled(w, dtype, z, n)?.into())
            }
            DType::Float0 => Buffer::Float0(n),
            DType::Key => {
                return Err(Error::InvalidArgument(
                    "a PRNG key cannot be made from a scalar".into(),
                ))
            }
        })
    }

    /// Element `i` of a buffer as a scalar (None when out of range).
    pub fn from_buffer(buf: &Buffer, i: usize) -> Option<Scalar> {
        Some(match buf {
            Buffer::Bool(v) => Scalar::Bool(*v.get(i)?),
            Buffer::I8(v) => Scalar::Int(i64::from(*v.get(i)?)),
            Buffer::I16(v) => Scalar::Int(i64::from(*v.get(i)?)),
            Buffer::I32(v) => Scalar::Int(i64::from(*v.get(i)?)),
            Buffer::I64(v) => Scalar::Int(*v.get(i)?),
            Buffer::U8(v) => Scalar::UInt(u64::from(*v.get(i)?)),
            Buffer::U16(v) => Scalar::UInt(u64::from(*v.get(i)?)),
            Buffer::U32(v) => Scalar::UInt(u64::from(*v.get(i)?)),
            Buffer::U64(v) => Scalar::UInt(*v.get(i)?),
            Buffer::F16(v) => Scalar::Float(v.get(i)?.to_f64()),
            Buffer::BF16(v) => Scalar::Float(v.get(i)?.to_f64()),
            Buffer::F32(v) => Scalar::Float(f64::from(*v.get(i)?)),
            Buffer::F64(v) => Scalar::Float(*v.get(i)?),
            Buffer::C64(v) => {
                let z = v.get(i)?;
                Scalar::Complex(f64::from(z.re), f64::from(z.im))
            }
            Buffer::C128(v) => {
                let z = v.get(i)?;
                Scalar::Complex(z.re, z.im)
            }
            Buffer::Float0(_) | Buffer::Key(_) => return None,
        })
    }
}

/// A scalar constant inlined in an equation (JAX prints `3.0:f32[]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Literal {
    pub val: Scalar,
    pub aval: Aval,
}

impl Literal {
    /// Literal of `dtype` (value rounded to it), rank 0.
    pub fn new(val: Scalar, dtype: DType, weak_type: bool) -> Literal {
        Literal {
            val: val.cast(dtype),
            aval: Aval::weak(Vec::new(), dtype, weak_type),
        }
    }

    pub fn to_array(&self) -> Result<HostArray> {
        HostArray::scalar(self.val, self.aval.dtype)
    }
}

/// An equation operand: a variable or an inline literal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Atom {
    Var(Var),
    Lit(Literal),
}

impl Atom {
    /// The variable this atom names (`None` for a literal).
    pub fn var(&self) -> Option<Var> {
        match self {
            Atom::Var(v) => Some(*v),
            Atom::Lit(_) => None,
        }
    }
}

/// Side effects of an equation. DCE, CSE and reordering keep effectful
/// equations in program order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Effect {
    /// Pure.
    #[default]
    None,
    /// Ordered host IO (`debug.print`, `io_callback`).
    OrderedIo,
}

/// Where an equation came from in the user's program (`file.py:12 (f)`).
pub type SourceInfo = Option<Arc<str>>;

/// One equation: `outs = prim[params] ins`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Eqn {
    pub prim: Primitive,
    pub inputs: Vec<Atom>,
    pub outputs: Vec<Var>,
    pub effect: Effect,
    /// Not part of equality or the structural hash.
    pub source: SourceInfoField,
}

/// Source info wrapper that is ignored by `==` and `Hash`, so two programs
/// traced from different lines still share a compile-cache entry.
#[derive(Debug, Clone, Default)]
pub struct SourceInfoField(pub SourceInfo);

impl PartialEq for SourceInfoField {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}
impl Eq for SourceInfoField {}
impl std::hash::Hash for SourceInfoField {
    fn hash<H: std::hash::Hasher>(&self, _state: &mut H) {}
}

/// A typed program: `{ lambda constvars ; invars . let eqns in outvars }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Jaxpr {
    /// Aval of every variable, indexed by `Var`.
    pub avals: Vec<Aval>,
    pub constvars: Vec<Var>,
    pub invars: Vec<Var>,
    pub eqns: Vec<Eqn>,
    pub outvars: Vec<Atom>,
}

impl Jaxpr {
    /// Aval of a variable (error for a malformed program).
    pub fn aval(&self, v: Var) -> Result<&Aval> {
        self.avals
            .get(v.index())
            .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))
    }

    /// Aval of an atom.
    pub fn atom_aval<'a>(&'a self, a: &'a Atom) -> Result<&'a Aval> {
        match a {
            Atom::Var(v) => self.aval(*v),
            Atom::Lit(l) => Ok(&l.aval),
        }
    }

    pub fn in_avals(&self) -> Result<Vec<Aval>> {
        self.invars.iter().map(|v| self.aval(*v).cloned()).collect()
    }

    pub fn out_avals(&self) -> Result<Vec<Aval>> {
        self.outvars
            .iter()
            .map(|a| self.atom_aval(a).cloned())
            .collect()
    }

    /// Effects of the whole program (sub-jaxpr effects lift to the caller).
    pub fn effect(&self) -> Effect {
        if self.eqns.iter().any(|e| e.effect != Effect::None) {
            Effect::OrderedIo
        } else {
            Effect::None
        }
    }
}

/// A jaxpr with values for its constvars.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedJaxpr {
    pub jaxpr: Arc<Jaxpr>,
    pub consts: Vec<Arc<HostArray>>,
}

impl Eq for ClosedJaxpr {}

impl std::hash::Hash for ClosedJaxpr {
    /// Hashes the program and the consts' avals; values take part in `==`.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.jaxpr.hash(state);
        for c in &self.consts {
            c.shape().hash(state);
            c.dtype().hash(state);
        }
    }
}

impl ClosedJaxpr {
    pub fn new(jaxpr: Jaxpr, consts: Vec<Arc<HostArray>>) -> ClosedJaxpr {
        ClosedJaxpr {
            jaxpr: Arc::new(jaxpr),
            consts,
        }
    }

    pub fn in_avals(&self) -> Result<Vec<Aval>> {
        self.jaxpr.in_avals()
    }

    pub fn out_avals(&self) -> Result<Vec<Aval>> {
        self.jaxpr.out_avals()
    }
}
