//! Generic parameter values and the one place that maps each primitive's
//! params to and from them. The display/canonical printers, the parser, the
//! structural hash and the Python binding all go through here, so a new
//! param is written once.

use super::{DotDims, Primitive, RoundingMethod};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::ClosedJaxpr;
use std::sync::Arc;

/// A parameter value as Python sees it (`eqn.params[...]`).
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    DType(DType),
    /// A tuple of ints (axes, shapes, permutations).
    Ints(Vec<i64>),
    Tuple(Vec<Param>),
    Jaxpr(Arc<ClosedJaxpr>),
    /// A host function (`pure_callback`'s `callback`); not printable as text.
    Callback(super::callback::HostCallback),
    /// A value of the host program a dynamic primitive carries as it is
    /// (JAX's params may be any Python object); equal by identity, not
    /// printable as text.
    Opaque(Opaque),
}

/// A host-program value the core carries without looking inside (the
/// Python binding wraps a Python object).
pub trait OpaqueValue: Send + Sync + std::fmt::Debug {
    /// The value's identity: two handles on the same value answer the same
    /// (the Python object's address, held alive by the handle).
    fn identity(&self) -> usize;
    /// The value as printed in a program listing.
    fn describe(&self) -> String;
    /// For a binding to recover its own type.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A shared [`OpaqueValue`]; equal (and hashed) by the value's identity.
#[derive(Debug, Clone)]
pub struct Opaque(pub Arc<dyn OpaqueValue>);

impl PartialEq for Opaque {
    fn eq(&self, other: &Opaque) -> bool {
        self.0.identity() == other.0.identity()
    }
}

impl Eq for Opaque {}

impl std::hash::Hash for Opaque {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.identity().hash(state);
    }
}

impl Param {
    /// The ints of an int list or of a tuple of ints. The error names the
    /// first tuple entry that is not an int, or is `None` when the param is
    /// no list at all.
    pub(crate) fn int_list(&self) -> std::result::Result<Vec<i64>, Option<&Param>> {
        match self {
            Param::Ints(v) => Ok(v.clone()),
            Param::Tuple(v) => v
                .iter()
                .map(|x| match x {
                    Param::Int(i) => Ok(*i),
                    other => Err(Some(other)),
                })
                .collect(),
            _ => Err(None),
        }
    }
}

/// `list` as dimension numbers: an error of `prim`'s param `key` names the
/// first negative entry.
pub(crate) fn nonnegative(
    prim: &'static str, key: &'static str, list: Vec<i64>,
) -> Result<Vec<usize>> {
    list.into_iter()
        .map(|i| {
            usize::try_from(i).map_err(|_| Error::param(prim, key, format!("negative value {i}")))
        })
        .collect()
}

pub(crate) fn ints(v: &[usize]) -> Param {
    Param::Ints(
        v.iter()
            .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
            .collect(),
    )
}

/// Named params of one primitive, in JAX's order.
pub type ParamList = Vec<(&'static str, Param)>;

/// A value a declared param struct field may hold (`declare_params!`):
/// how it shows as a [`Param`] and how it is read back from one.
pub trait ParamField: Sized {
    /// The value as Python and the printers see it.
    fn to_param(&self) -> Param;
    /// Reads `key` (which must be present) from `p`.
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<Self>;
}

impl ParamField for usize {
    fn to_param(&self) -> Param {
        Param::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<usize> {
        p.dim(key)
    }
}

impl ParamField for i32 {
    fn to_param(&self) -> Param {
        Param::Int(i64::from(*self))
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<i32> {
        let v = p.int(key)?;
        i32::try_from(v).map_err(|_| Error::param(p.prim(), key, format!("{v} out of range")))
    }
}

impl ParamField for bool {
    fn to_param(&self) -> Param {
        Param::Bool(*self)
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<bool> {
        match p.need(key)? {
            Param::Bool(b) => Ok(*b),
            other => Err(p.bad(key, "a bool", other)),
        }
    }
}

impl ParamField for String {
    fn to_param(&self) -> Param {
        Param::Str(self.clone())
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<String> {
        match p.need(key)? {
            Param::Str(s) => Ok(s.clone()),
            other => Err(p.bad(key, "a string", other)),
        }
    }
}

impl ParamField for DType {
    fn to_param(&self) -> Param {
        Param::DType(*self)
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<DType> {
        p.dtype(key)
    }
}

impl ParamField for Vec<usize> {
    fn to_param(&self) -> Param {
        ints(self)
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<Vec<usize>> {
        p.dims(key)
    }
}

/// `pad`'s `((lo, hi, interior), ...)`.
impl ParamField for Vec<(i64, i64, i64)> {
    fn to_param(&self) -> Param {
        Param::Tuple(
            self.iter()
                .map(|&(lo, hi, int)| Param::Ints(vec![lo, hi, int]))
                .collect(),
        )
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<Vec<(i64, i64, i64)>> {
        p.padding_config(key)
    }
}

/// `dot_general`'s `((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`.
impl ParamField for DotDims {
    fn to_param(&self) -> Param {
        Param::Tuple(vec![
            Param::Tuple(vec![ints(&self.lhs_contract), ints(&self.rhs_contract)]),
            Param::Tuple(vec![ints(&self.lhs_batch), ints(&self.rhs_batch)]),
        ])
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<DotDims> {
        p.dot_dims(key)
    }
}

/// `lax.RoundingMethod` as its integer value.
impl ParamField for RoundingMethod {
    fn to_param(&self) -> Param {
        Param::Int(match self {
            RoundingMethod::AwayFromZero => 0,
            RoundingMethod::ToNearestEven => 1,
        })
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<RoundingMethod> {
        match p.need(key)? {
            Param::Int(0) => Ok(RoundingMethod::AwayFromZero),
            Param::Int(1) => Ok(RoundingMethod::ToNearestEven),
            other => Err(p.bad(key, "0 or 1", other)),
        }
    }
}

impl ParamField for Arc<ClosedJaxpr> {
    fn to_param(&self) -> Param {
        Param::Jaxpr(self.clone())
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<Arc<ClosedJaxpr>> {
        p.jaxpr(key)
    }
}

/// Absent and `None` read as `None`.
impl<T: ParamField> ParamField for Option<T> {
    fn to_param(&self) -> Param {
        self.as_ref().map_or(Param::None, ParamField::to_param)
    }
    fn read(p: &Lookup<'_>, key: &'static str) -> Result<Option<T>> {
        match p.get(key) {
            None | Some(Param::None) => Ok(None),
            Some(_) => T::read(p, key).map(Some),
        }
    }
}

/// Reads `key`, or `default` when it is absent or `None`.
pub fn read_or<T: ParamField>(p: &Lookup<'_>, key: &'static str, default: T) -> Result<T> {
    match p.get(key) {
        None | Some(Param::None) => Ok(default),
        Some(_) => T::read(p, key),
    }
}

/// Declares a primitive's param struct once; the declaration gives it
/// `Debug`/`Clone`/`Eq`/`Hash` (the structural hash and equality of
/// equations), `to_params` (what Python, the printers and the exporter see,
/// in the declared order) and `read` (what `bind(**params)` and the parser
/// give back). Entries, in JAX's param order:
///
/// * `field: Type,` — a param named like the field, required;
/// * `field: Type = default,` — absent or `None` reads as `default`;
/// * `field: Type as key,` — a required param named `key`;
/// * `const name = value,` — a param JAX shows that this primitive fixes
///   (`precision=None`); shown, accepted and ignored when read;
/// * `@name field: Op,` — not a param: the op of a family that shares
///   params across names (`reduce_sum`/`reduce_max`), read from the
///   primitive's name with `Op::from_name`.
#[macro_export]
macro_rules! declare_params {
    ($(#[$m:meta])* pub struct $S:ident { $($body:tt)* }) => {
        $crate::declare_params!(@parse [$(#[$m])*] $S [] [] $($body)*);
    };
    (@parse $attrs:tt $S:ident [$($fields:tt)*] [$($entries:tt)*]
        const $k:ident = $v:expr, $($rest:tt)*) => {
        $crate::declare_params!(@parse $attrs $S [$($fields)*] [$($entries)* (const $k $v)] $($rest)*);
    };
    (@parse $attrs:tt $S:ident [$($fields:tt)*] [$($entries:tt)*]
        @name $(#[$fm:meta])* $f:ident : $t:ty, $($rest:tt)*) => {
        $crate::declare_params!(@parse $attrs $S
            [$($fields)* ([$(#[$fm])*] $f [name] $t)] [$($entries)*] $($rest)*);
    };
    (@parse $attrs:tt $S:ident [$($fields:tt)*] [$($entries:tt)*]
        $(#[$fm:meta])* $f:ident : $t:ty as $k:ident, $($rest:tt)*) => {
        $crate::declare_params!(@parse $attrs $S
            [$($fields)* ([$(#[$fm])*] $f [required $k] $t)] [$($entries)* (field $f $k)] $($rest)*);
    };
    (@parse $attrs:tt $S:ident [$($fields:tt)*] [$($entries:tt)*]
        $(#[$fm:meta])* $f:ident : $t:ty = $d:expr, $($rest:tt)*) => {
        $crate::declare_params!(@parse $attrs $S
            [$($fields)* ([$(#[$fm])*] $f [default $f $d] $t)] [$($entries)* (field $f $f)] $($rest)*);
    };
    (@parse $attrs:tt $S:ident [$($fields:tt)*] [$($entries:tt)*]
        $(#[$fm:meta])* $f:ident : $t:ty, $($rest:tt)*) => {
        $crate::declare_params!(@parse $attrs $S
            [$($fields)* ([$(#[$fm])*] $f [required $f] $t)] [$($entries)* (field $f $f)] $($rest)*);
    };
    (@parse [$($attrs:tt)*] $S:ident [$(([$($fm:tt)*] $f:ident $how:tt $t:ty))*] [$($entries:tt)*]) => {
        $($attrs)*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $S {
            $($($fm)* pub $f: $t,)*
        }

        impl $S {
            /// The params JAX shows, in JAX's order.
            pub fn to_params(&self) -> $crate::prims::params::ParamList {
                vec![$($crate::declare_params!(@emit self $entries)),*]
            }

            /// Reads the params `p` gives (the op, if any, from its name).
            pub fn read(p: &$crate::prims::params::Lookup<'_>) -> $crate::error::Result<$S> {
                Ok($S {
                    $($f: $crate::declare_params!(@read p $f $t $how),)*
                })
            }
        }
    };
    (@emit $self:ident (const $k:ident $v:expr)) => {
        (stringify!($k), $v)
    };
    (@emit $self:ident (field $f:ident $k:ident)) => {
        (stringify!($k), $crate::prims::params::ParamField::to_param(&$self.$f))
    };
    (@read $p:ident $f:ident $t:ty [required $k:ident]) => {
        <$t as $crate::prims::params::ParamField>::read($p, stringify!($k))?
    };
    (@read $p:ident $f:ident $t:ty [default $k:ident $d:expr]) => {
        $crate::prims::params::read_or::<$t>($p, stringify!($k), $d)?
    };
    (@read $p:ident $f:ident $t:ty [name]) => {
        <$t>::from_name($p.name()).ok_or_else(|| {
            $crate::error::Error::UnknownPrimitive($p.name().to_string())
        })?
    };
}

/// Typed access to a param list, with errors naming the primitive.
pub struct Lookup<'a> {
    name: &'a str,
    params: &'a [(String, Param)],
}

impl<'a> Lookup<'a> {
    /// The params given for primitive `name`.
    pub fn new(name: &'a str, params: &'a [(String, Param)]) -> Lookup<'a> {
        Lookup { name, params }
    }

    /// The primitive's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The raw list.
    pub fn list(&self) -> &'a [(String, Param)] {
        self.params
    }

    pub(crate) fn prim(&self) -> &'static str {
        Primitive::all_names()
            .into_iter()
            .find(|n| *n == self.name)
            .unwrap_or("primitive")
    }

    pub(crate) fn get(&self, key: &'static str) -> Option<&Param> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(crate) fn need(&self, key: &'static str) -> Result<&Param> {
        self.get(key)
            .ok_or_else(|| Error::param(self.prim(), key, "missing"))
    }

    pub(crate) fn bad(&self, key: &'static str, want: &str, got: &Param) -> Error {
        Error::param(self.prim(), key, format!("expected {want}, got {got:?}"))
    }

    pub(crate) fn int(&self, key: &'static str) -> Result<i64> {
        match self.need(key)? {
            Param::Int(i) => Ok(*i),
            other => Err(self.bad(key, "an int", other)),
        }
    }

    pub(crate) fn dim(&self, key: &'static str) -> Result<usize> {
        let i = self.int(key)?;
        usize::try_from(i)
            .map_err(|_| Error::param(self.prim(), key, format!("negative value {i}")))
    }

    fn to_dims(&self, key: &'static str, p: &Param) -> Result<Vec<usize>> {
        let list = p
            .int_list()
            .map_err(|bad| self.bad(key, "a tuple of ints", bad.unwrap_or(p)))?;
        nonnegative(self.prim(), key, list)
    }

    pub(crate) fn dims(&self, key: &'static str) -> Result<Vec<usize>> {
        let p = self.need(key)?;
        self.to_dims(key, p)
    }

    pub(crate) fn opt_bool(&self, key: &'static str) -> Result<Option<bool>> {
        match self.get(key) {
            None | Some(Param::None) => Ok(None),
            Some(Param::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.bad(key, "a bool", other)),
        }
    }

    pub(crate) fn dtype(&self, key: &'static str) -> Result<DType> {
        match self.need(key)? {
            Param::DType(d) => Ok(*d),
            Param::Str(s) => DType::from_name(s),
            other => Err(self.bad(key, "a dtype", other)),
        }
    }

    pub(crate) fn opt_str(&self, key: &'static str) -> Result<Option<String>> {
        match self.get(key) {
            None | Some(Param::None) => Ok(None),
            Some(Param::Str(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.bad(key, "a string", other)),
        }
    }

    pub(crate) fn jaxpr(&self, key: &'static str) -> Result<Arc<ClosedJaxpr>> {
        match self.need(key)? {
            Param::Jaxpr(j) => Ok(j.clone()),
            other => Err(self.bad(key, "a closed jaxpr", other)),
        }
    }

    /// A tuple of closed jaxprs (`cond`'s branches).
    pub(crate) fn jaxprs(&self, key: &'static str) -> Result<Vec<Arc<ClosedJaxpr>>> {
        match self.need(key)? {
            Param::Tuple(v) => v
                .iter()
                .map(|x| match x {
                    Param::Jaxpr(j) => Ok(j.clone()),
                    other => Err(self.bad(key, "a tuple of closed jaxprs", other)),
                })
                .collect(),
            Param::Jaxpr(j) => Ok(vec![j.clone()]),
            other => Err(self.bad(key, "a tuple of closed jaxprs", other)),
        }
    }

    /// An optional tuple of bools (`scan`'s `linear`).
    pub(crate) fn opt_bools(&self, key: &'static str) -> Result<Option<Vec<bool>>> {
        match self.get(key) {
            None | Some(Param::None) => Ok(None),
            Some(Param::Tuple(v)) => v
                .iter()
                .map(|x| match x {
                    Param::Bool(b) => Ok(*b),
                    other => Err(self.bad(key, "a tuple of bools", other)),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(Param::Ints(v)) if v.is_empty() => Ok(Some(Vec::new())),
            Some(other) => Err(self.bad(key, "a tuple of bools", other)),
        }
    }

    fn pair<'p>(&self, key: &'static str, p: &'p Param) -> Result<(&'p Param, &'p Param)> {
        match p {
            Param::Tuple(v) => match v.as_slice() {
                [a, b] => Ok((a, b)),
                _ => Err(self.bad(key, "a pair", p)),
            },
            other => Err(self.bad(key, "a pair", other)),
        }
    }

    /// `((lo, hi, interior), ...)`: signed ints, interior >= 0.
    pub(crate) fn padding_config(&self, key: &'static str) -> Result<Vec<(i64, i64, i64)>> {
        let p = self.need(key)?;
        let entries: Vec<&Param> = match p {
            Param::Tuple(v) => v.iter().collect(),
            Param::Ints(v) if v.is_empty() => Vec::new(),
            other => return Err(self.bad(key, "a tuple of (lo, hi, interior) triples", other)),
        };
        entries
            .into_iter()
            .map(|e| {
                let trip = e.int_list().map_err(|bad| match bad {
                    Some(x) => self.bad(key, "an int", x),
                    None => self.bad(key, "a (lo, hi, interior) triple", e),
                })?;
                match trip.as_slice() {
                    [lo, hi, int] if *int >= 0 => Ok((*lo, *hi, *int)),
                    _ => Err(self.bad(key, "a (lo, hi, interior >= 0) triple", e)),
                }
            })
            .collect()
    }

    pub(crate) fn dot_dims(&self, key: &'static str) -> Result<DotDims> {
        let (contract, batch) = self.pair(key, self.need(key)?)?;
        let (lc, rc) = self.pair(key, contract)?;
        let (lb, rb) = self.pair(key, batch)?;
        Ok(DotDims {
            lhs_contract: self.to_dims(key, lc)?,
            rhs_contract: self.to_dims(key, rc)?,
            lhs_batch: self.to_dims(key, lb)?,
            rhs_batch: self.to_dims(key, rb)?,
        })
    }
}
