//! Generic parameter values and the one place that maps each primitive's
//! params to and from them. The display/canonical printers, the parser, the
//! structural hash and the Python binding all go through here, so a new
//! param is written once.

use super::{ArgOp, CumOp, DotDims, Primitive, ReduceOp, RoundingMethod};
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
}

fn ints(v: &[usize]) -> Param {
    Param::Ints(
        v.iter()
            .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
            .collect(),
    )
}

/// Named params of one primitive, in JAX's order.
pub type ParamList = Vec<(&'static str, Param)>;

impl Primitive {
    /// Display adjustments of core primitives' params (none: the families
    /// that print params differently answer through their impl).
    pub(super) fn core_display_params(&self, _params: &mut ParamList) {}

    /// The params of a core primitive (families answer through their impl).
    pub(super) fn core_params(&self) -> ParamList {
        match self {
            Primitive::Unary(_) | Primitive::Binary(_) | Primitive::Compare(_) => Vec::new(),
            Primitive::SelectN
            | Primitive::StopGradient
            | Primitive::IsFinite
            | Primitive::Clamp => Vec::new(),
            Primitive::Round { rounding_method } => vec![(
                "rounding_method",
                Param::Int(match rounding_method {
                    RoundingMethod::AwayFromZero => 0,
                    RoundingMethod::ToNearestEven => 1,
                }),
            )],
            Primitive::Arg {
                axis, index_dtype, ..
            } => vec![
                ("axes", ints(&[*axis])),
                ("index_dtype", Param::DType(*index_dtype)),
            ],
            Primitive::Cumulative { axis, reverse, .. } => vec![
                ("axis", Param::Int(i64::try_from(*axis).unwrap_or(i64::MAX))),
                ("reverse", Param::Bool(*reverse)),
            ],
            Primitive::IntegerPow { y } => vec![("y", Param::Int(i64::from(*y)))],
            Primitive::ConvertElementType {
                new_dtype,
                weak_type,
            } => vec![
                ("new_dtype", Param::DType(*new_dtype)),
                ("weak_type", Param::Bool(*weak_type)),
            ],
            Primitive::BroadcastInDim {
                shape,
                broadcast_dimensions,
            } => vec![
                ("shape", ints(shape)),
                ("broadcast_dimensions", ints(broadcast_dimensions)),
            ],
            Primitive::Reshape { new_sizes } => {
                vec![("new_sizes", ints(new_sizes)), ("dimensions", Param::None)]
            }
            Primitive::Transpose { permutation } => vec![("permutation", ints(permutation))],
            Primitive::Squeeze { dimensions } => vec![("dimensions", ints(dimensions))],
            Primitive::Reduce { axes, .. } => vec![("axes", ints(axes))],
            Primitive::DotGeneral {
                dims,
                preferred_element_type,
            } => vec![
                (
                    "dimension_numbers",
                    Param::Tuple(vec![
                        Param::Tuple(vec![ints(&dims.lhs_contract), ints(&dims.rhs_contract)]),
                        Param::Tuple(vec![ints(&dims.lhs_batch), ints(&dims.rhs_batch)]),
                    ]),
                ),
                ("precision", Param::None),
                (
                    "preferred_element_type",
                    preferred_element_type.map_or(Param::None, Param::DType),
                ),
            ],
            Primitive::Iota {
                dtype,
                shape,
                dimension,
            } => vec![
                ("dtype", Param::DType(*dtype)),
                ("shape", ints(shape)),
                (
                    "dimension",
                    Param::Int(i64::try_from(*dimension).unwrap_or(i64::MAX)),
                ),
            ],
            Primitive::Rev { dimensions } => vec![("dimensions", ints(dimensions))],
            Primitive::Slice {
                start_indices,
                limit_indices,
                strides,
            } => vec![
                ("start_indices", ints(start_indices)),
                ("limit_indices", ints(limit_indices)),
                ("strides", strides.as_ref().map_or(Param::None, |s| ints(s))),
            ],
            Primitive::Concatenate { dimension } => vec![(
                "dimension",
                Param::Int(i64::try_from(*dimension).unwrap_or(i64::MAX)),
            )],
            Primitive::Pad { padding_config } => vec![(
                "padding_config",
                Param::Tuple(
                    padding_config
                        .iter()
                        .map(|&(lo, hi, int)| Param::Ints(vec![lo, hi, int]))
                        .collect(),
                ),
            )],
            Primitive::DynamicSlice { slice_sizes } => {
                vec![("slice_sizes", ints(slice_sizes))]
            }
            Primitive::DynamicUpdateSlice => Vec::new(),
            Primitive::Threefry2x32(f) => super::Family::params(f),
            Primitive::Gather(f) => super::Family::params(f),
            Primitive::Scatter(f) => super::Family::params(f),
            Primitive::Custom(f) => super::Family::params(f),
            Primitive::Control(f) => super::Family::params(f),
            Primitive::Callback(f) => super::Family::params(f),
            Primitive::Sort(f) => super::Family::params(f),
            Primitive::Linalg(f) => super::Family::params(f),
            Primitive::Conv(f) => super::Family::params(f),
            Primitive::Window(f) => super::Family::params(f),
            Primitive::Dynamic(f) => super::Family::params(f),
            Primitive::Collective(f) => super::Family::params(f),
            Primitive::Checkpoint { jaxpr, prevent_cse } => vec![
                ("differentiated", Param::Bool(false)),
                ("jaxpr", Param::Jaxpr(jaxpr.clone())),
                ("policy", Param::None),
                ("prevent_cse", Param::Bool(*prevent_cse)),
            ],
            Primitive::Pjit { jaxpr, name } => vec![
                ("jaxpr", Param::Jaxpr(jaxpr.clone())),
                ("name", Param::Str(name.clone())),
            ],
        }
    }

    /// Rebuilds a core primitive from its name and params (families are
    /// tried first, by [`Primitive::from_params`]).
    pub(super) fn core_from_params(name: &str, p: &Lookup<'_>) -> Result<Primitive> {
        if let Some(op) = ReduceOp::from_name(name) {
            return Ok(Primitive::Reduce {
                op,
                axes: p.dims("axes")?,
            });
        }
        if let Some(op) = ArgOp::from_name(name) {
            let axes = p.dims("axes")?;
            let [axis] = axes.as_slice() else {
                return Err(Error::param(
                    op.name(),
                    "axes",
                    format!("expected exactly one axis, got {axes:?}"),
                ));
            };
            return Ok(Primitive::Arg {
                op,
                axis: *axis,
                index_dtype: p.dtype("index_dtype")?,
            });
        }
        if let Some(op) = CumOp::from_name(name) {
            return Ok(Primitive::Cumulative {
                op,
                axis: p.dim("axis")?,
                reverse: p.opt_bool("reverse")?.unwrap_or(false),
            });
        }
        Ok(match name {
            "stop_gradient" => Primitive::StopGradient,
            "is_finite" => Primitive::IsFinite,
            "clamp" => Primitive::Clamp,
            "round" => Primitive::Round {
                rounding_method: match p.get("rounding_method") {
                    None | Some(Param::None) => RoundingMethod::AwayFromZero,
                    Some(Param::Int(0)) => RoundingMethod::AwayFromZero,
                    Some(Param::Int(1)) => RoundingMethod::ToNearestEven,
                    Some(other) => return Err(p.bad("rounding_method", "0 or 1", other)),
                },
            },
            "integer_pow" => {
                let y = p.int("y")?;
                Primitive::IntegerPow {
                    y: i32::try_from(y).map_err(|_| {
                        Error::param("integer_pow", "y", format!("{y} out of range"))
                    })?,
                }
            }
            "select_n" => Primitive::SelectN,
            "convert_element_type" => Primitive::ConvertElementType {
                new_dtype: p.dtype("new_dtype")?,
                weak_type: p.opt_bool("weak_type")?.unwrap_or(false),
            },
            "broadcast_in_dim" => Primitive::BroadcastInDim {
                shape: p.dims("shape")?,
                broadcast_dimensions: p.dims("broadcast_dimensions")?,
            },
            "reshape" => Primitive::Reshape {
                new_sizes: p.dims("new_sizes")?,
            },
            "transpose" => Primitive::Transpose {
                permutation: p.dims("permutation")?,
            },
            "squeeze" => Primitive::Squeeze {
                dimensions: p.dims("dimensions")?,
            },
            "dot_general" => Primitive::DotGeneral {
                dims: p.dot_dims("dimension_numbers")?,
                preferred_element_type: p.opt_dtype("preferred_element_type")?,
            },
            "iota" => Primitive::Iota {
                dtype: p.dtype("dtype")?,
                shape: p.dims("shape")?,
                dimension: p.dim("dimension")?,
            },
            "rev" => Primitive::Rev {
                dimensions: p.dims("dimensions")?,
            },
            "slice" => Primitive::Slice {
                start_indices: p.dims("start_indices")?,
                limit_indices: p.dims("limit_indices")?,
                strides: match p.get("strides") {
                    None | Some(Param::None) => None,
                    Some(_) => Some(p.dims("strides")?),
                },
            },
            "concatenate" => Primitive::Concatenate {
                dimension: p.dim("dimension")?,
            },
            "pad" => Primitive::Pad {
                padding_config: p.padding_config("padding_config")?,
            },
            "dynamic_slice" => Primitive::DynamicSlice {
                slice_sizes: p.dims("slice_sizes")?,
            },
            "dynamic_update_slice" => Primitive::DynamicUpdateSlice,
            "checkpoint" => Primitive::Checkpoint {
                jaxpr: p.jaxpr("jaxpr")?,
                prevent_cse: p.opt_bool("prevent_cse")?.unwrap_or(true),
            },
            "pjit" => Primitive::Pjit {
                jaxpr: p.jaxpr("jaxpr")?,
                name: p.opt_str("name")?.unwrap_or_default(),
            },
            other => return Err(Error::UnknownPrimitive(other.to_string())),
        })
    }
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

    /// The raw list.
    pub fn list(&self) -> &'a [(String, Param)] {
        self.params
    }

    fn prim(&self) -> &'static str {
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
        let list: Vec<i64> = match p {
            Param::Ints(v) => v.clone(),
            Param::Tuple(v) if v.is_empty() => Vec::new(),
            Param::Tuple(v) => v
                .iter()
                .map(|x| match x {
                    Param::Int(i) => Ok(*i),
                    other => Err(self.bad(key, "a tuple of ints", other)),
                })
                .collect::<Result<_>>()?,
            other => return Err(self.bad(key, "a tuple of ints", other)),
        };
        list.into_iter()
            .map(|i| {
                usize::try_from(i)
                    .map_err(|_| Error::param(self.prim(), key, format!("negative value {i}")))
            })
            .collect()
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

    pub(crate) fn opt_dtype(&self, key: &'static str) -> Result<Option<DType>> {
        match self.get(key) {
            None | Some(Param::None) => Ok(None),
            Some(_) => self.dtype(key).map(Some),
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
    fn padding_config(&self, key: &'static str) -> Result<Vec<(i64, i64, i64)>> {
        let p = self.need(key)?;
        let entries: Vec<&Param> = match p {
            Param::Tuple(v) => v.iter().collect(),
            Param::Ints(v) if v.is_empty() => Vec::new(),
            other => return Err(self.bad(key, "a tuple of (lo, hi, interior) triples", other)),
        };
        entries
            .into_iter()
            .map(|e| {
                let trip: Vec<i64> = match e {
                    Param::Ints(v) => v.clone(),
                    Param::Tuple(v) => v
                        .iter()
                        .map(|x| match x {
                            Param::Int(i) => Ok(*i),
                            other => Err(self.bad(key, "an int", other)),
                        })
                        .collect::<Result<_>>()?,
                    other => return Err(self.bad(key, "a (lo, hi, interior) triple", other)),
                };
                match trip.as_slice() {
                    [lo, hi, int] if *int >= 0 => Ok((*lo, *hi, *int)),
                    _ => Err(self.bad(key, "a (lo, hi, interior >= 0) triple", e)),
                }
            })
            .collect()
    }

    fn dot_dims(&self, key: &'static str) -> Result<DotDims> {
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
