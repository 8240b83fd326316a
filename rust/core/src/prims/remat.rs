//! Rematerialization policies: which intermediate values of a `checkpoint`
//! callee reverse mode saves ([`RematPolicy`], Python's
//! `jax.checkpoint_policies`), and the `name` primitive that labels a value
//! for the name-based policies (`jax.ad_checkpoint.checkpoint_name`).
//!
//! `name` is the identity on values, tangents, cotangents and batches; it
//! only marks its output. The policy is read by `checkpoint`'s
//! partial-evaluation rule (`transforms::partial_eval`), which saves the
//! known values the policy accepts and recomputes the rest.

use super::batch::elementwise_rule;
use super::family::{BatchOut, Family, Operand, TransposeOut};
use super::params::{Lookup, Param, ParamField};
use super::transpose::single_ct;
use super::{DotGeneral, Primitive};
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::Atom;

const NAME: &str = "name";

/// Which values computed inside a `checkpoint` reverse mode saves for the
/// backward pass; everything else the backward pass recomputes from the
/// call's operands. A value is a candidate only when it can be computed
/// before the backward pass (it does not depend on the differentiated
/// inputs' tangents).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum RematPolicy {
    /// Save nothing (`nothing_saveable`, `checkpoint`'s default).
    #[default]
    Nothing,
    /// Save every value (`everything_saveable`).
    Everything,
    /// Save the results of `dot_general` (`dots_saveable`).
    Dots,
    /// Save the results of `dot_general` without batch dimensions
    /// (`dots_with_no_batch_dims_saveable`).
    DotsNoBatchDims,
    /// Save the values named by `checkpoint_name` with one of these names
    /// (`save_only_these_names`).
    OnlyNames(Vec<String>),
    /// Save the named values except those with these names
    /// (`save_any_names_but_these`).
    AllNamesBut(Vec<String>),
    /// Save every value except those named with these names
    /// (`save_anything_except_these_names`).
    AllBut(Vec<String>),
    /// Save what either policy saves (`save_from_both_policies`).
    Either(Box<RematPolicy>, Box<RematPolicy>),
}

impl RematPolicy {
    /// Whether the outputs of an equation of `prim` are saved.
    pub fn saves(&self, prim: &Primitive) -> bool {
        match self {
            RematPolicy::Nothing => false,
            RematPolicy::Everything => true,
            RematPolicy::Dots => matches!(prim, Primitive::DotGeneral(_)),
            RematPolicy::DotsNoBatchDims => matches!(
                prim,
                Primitive::DotGeneral(DotGeneral { dims, .. }) if dims.lhs_batch.is_empty()
            ),
            RematPolicy::OnlyNames(names) => {
                matches!(prim, Primitive::Name(CheckpointName { name }) if names.contains(name))
            }
            RematPolicy::AllNamesBut(names) => {
                matches!(prim, Primitive::Name(CheckpointName { name }) if !names.contains(name))
            }
            RematPolicy::AllBut(names) => {
                !matches!(prim, Primitive::Name(CheckpointName { name }) if names.contains(name))
            }
            RematPolicy::Either(a, b) => a.saves(prim) || b.saves(prim),
        }
    }

    fn names_param(tag: &str, names: &[String]) -> Param {
        Param::Tuple(vec![
            Param::Str(tag.to_string()),
            Param::Tuple(names.iter().cloned().map(Param::Str).collect()),
        ])
    }

    fn from_param(p: &Param) -> Option<RematPolicy> {
        let names = |p: &Param| -> Option<Vec<String>> {
            match p {
                Param::Tuple(v) => v
                    .iter()
                    .map(|s| match s {
                        Param::Str(s) => Some(s.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            }
        };
        Some(match p {
            Param::None => RematPolicy::Nothing,
            Param::Str(s) => match s.as_str() {
                "nothing_saveable" => RematPolicy::Nothing,
                "everything_saveable" => RematPolicy::Everything,
                "dots_saveable" => RematPolicy::Dots,
                "dots_with_no_batch_dims_saveable" => RematPolicy::DotsNoBatchDims,
                _ => return None,
            },
            Param::Tuple(v) => match v.as_slice() {
                [Param::Str(t), n] if t == "save_only_these_names" => {
                    RematPolicy::OnlyNames(names(n)?)
                }
                [Param::Str(t), n] if t == "save_any_names_but_these" => {
                    RematPolicy::AllNamesBut(names(n)?)
                }
                [Param::Str(t), n] if t == "save_anything_except_these_names" => {
                    RematPolicy::AllBut(names(n)?)
                }
                [Param::Str(t), a, b] if t == "save_from_both_policies" => RematPolicy::Either(
                    Box::new(RematPolicy::from_param(a)?),
                    Box::new(RematPolicy::from_param(b)?),
                ),
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// `checkpoint`'s `policy` param: `None` (save nothing), a policy's name,
/// `(name, (names...))` for the name-based policies, or
/// `("save_from_both_policies", a, b)`.
impl ParamField for RematPolicy {
    fn to_param(&self) -> Param {
        match self {
            RematPolicy::Nothing => Param::None,
            RematPolicy::Everything => Param::Str("everything_saveable".into()),
            RematPolicy::Dots => Param::Str("dots_saveable".into()),
            RematPolicy::DotsNoBatchDims => Param::Str("dots_with_no_batch_dims_saveable".into()),
            RematPolicy::OnlyNames(n) => RematPolicy::names_param("save_only_these_names", n),
            RematPolicy::AllNamesBut(n) => RematPolicy::names_param("save_any_names_but_these", n),
            RematPolicy::AllBut(n) => {
                RematPolicy::names_param("save_anything_except_these_names", n)
            }
            RematPolicy::Either(a, b) => Param::Tuple(vec![
                Param::Str("save_from_both_policies".into()),
                a.to_param(),
                b.to_param(),
            ]),
        }
    }

    fn read(p: &Lookup<'_>, key: &'static str) -> Result<RematPolicy> {
        let v = p.need(key)?;
        RematPolicy::from_param(v).ok_or_else(|| p.bad(key, "a checkpoint policy", v))
    }
}

crate::declare_params! {
    /// `name[name=...]`: the identity, marking its output for the
    /// name-based checkpoint policies.
    pub struct CheckpointName {
        name: String,
    }
}

impl Family for CheckpointName {
    crate::family_identity!(
        "name",
        example = CheckpointName {
            name: "hidden".into()
        }
    );

    // The operand as is.
    crate::identity_rules!(NAME);

    // Linear: the tangent is named too.
    crate::jvp_by!(crate::prims::jvp::jvp_linear);

    /// The cotangent passes through.
    fn transpose(&self, _b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        match ops {
            [Operand::Linear(_)] => Ok(vec![single_ct(NAME, cts)?]),
            [Operand::Known(_)] => Ok(vec![None]),
            _ => Err(Error::Arity {
                prim: NAME,
                expected: 1,
                got: ops.len(),
            }),
        }
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::Name(self.clone()), b, ins, dims, n)
    }
}
