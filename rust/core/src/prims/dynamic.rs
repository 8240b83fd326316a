//! Primitives whose rules are given at run time by a [`RuleProvider`].
//!
//! Every other family is known at compile time, with all its rules in its
//! own file. This family is the one door for primitives defined by a program
//! using the crate (JAX's `Primitive("name")` with `def_impl`,
//! `def_abstract_eval`, `ad.primitive_jvps`, ...): a [`DynamicPrim`] holds the
//! primitive's name, its params and the provider that answers its rules.
//!
//! * shape rule and kernel: the provider computes them directly;
//! * jvp, transpose and batch: the provider returns a closed jaxpr for the
//!   operands' avals (and which tangents, cotangents or batch dims are
//!   present), which the family splices into the builder. A provider traces
//!   such a jaxpr once per pattern and may cache it.
//!
//! A provider may answer "no rule" (`Ok(None)`): the family then reports
//! JAX's `NotImplementedError` for that rule ([`Error::NotImplemented`]).
//!
//! A dynamic primitive cannot be rebuilt from its name and params alone (its
//! rules are not in the text): `from_params` never answers for it, so parsing
//! a program holding one reports `UnknownPrimitive`, and exporting one is an
//! [`Error::Unsupported`] (see [`holds_dynamic`]).

use super::family::{known_atoms, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::params::{Lookup, Param, ParamList};
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::splice::splice;
use crate::ir::{Atom, Aval, ClosedJaxpr, Effect, Jaxpr};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// An operand of a dynamic primitive being transposed, as the provider sees
/// it: a known value's type (it is an input of the transpose jaxpr) or a
/// linear operand's type (it gets a cotangent).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OperandType {
    Known(Aval),
    Linear(Aval),
}

/// A traced batching rule: the batched program (operands as given, batch
/// axes in place) and the batch dim of each of its outputs (`None`:
/// unbatched).
#[derive(Debug, Clone)]
pub struct BatchedRule {
    pub jaxpr: Arc<ClosedJaxpr>,
    pub out_dims: Vec<Option<usize>>,
}

/// The rules of dynamic primitives. Each method gets the primitive (its name
/// and params); `Ok(None)` means the provider has no such rule.
///
/// Rules that build programs return closed jaxprs with these signatures:
/// * `jvp`: `(primals..., tangents present in `tangents`...) -> (outputs...,
///   output tangents...)` (every output tangent instantiated);
/// * `transpose`: `(known operands..., cotangents present in `cts`...) ->
///   (cotangent of each linear operand...)` (zeros instantiated);
/// * `batch`: `(operands...) -> (outputs...)`, operands with their batch
///   axes as given.
pub trait RuleProvider: Send + Sync + std::fmt::Debug {
    /// Shape rule: output avals for operands of avals `ins`.
    fn abstract_eval(&self, prim: &DynamicPrim, ins: &[Aval]) -> Result<Option<Vec<Aval>>>;

    /// Eager implementation; `outs` are the shape rule's avals (the caller
    /// checks the results against them).
    fn kernel(
        &self, prim: &DynamicPrim, args: &[&HostArray], outs: &[Aval],
    ) -> Result<Option<Vec<HostArray>>>;

    /// JVP rule for primals of avals `primals` and tangents of avals
    /// `tangents` (`None`: symbolic zero).
    fn jvp(
        &self, prim: &DynamicPrim, primals: &[Aval], tangents: &[Option<Aval>],
    ) -> Result<Option<Arc<ClosedJaxpr>>>;

    /// Transpose rule for the operands `operands` and output cotangents of
    /// avals `cts` (`None`: zero; at least one present).
    fn transpose(
        &self, prim: &DynamicPrim, operands: &[OperandType], cts: &[Option<Aval>],
    ) -> Result<Option<Arc<ClosedJaxpr>>>;

    /// Batch rule for operands of avals `operands` (batched ones with their
    /// batch axis) with batch dims `dims`, mapped size `size`.
    fn batch(
        &self, prim: &DynamicPrim, operands: &[Aval], dims: &[Option<usize>], size: usize,
    ) -> Result<Option<BatchedRule>>;

    /// For a binding to recover its own provider type.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A primitive whose rules come from a [`RuleProvider`]. Equal (and hashed)
/// by name, params and provider identity.
#[derive(Debug, Clone)]
pub struct DynamicPrim {
    name: &'static str,
    params: Vec<(&'static str, Param)>,
    multiple_results: bool,
    provider: Arc<dyn RuleProvider>,
}

/// Names of dynamic primitives and of their params, kept for the life of the
/// process: rules and errors name primitives by `&'static str`. A program
/// defines few primitives, so this stays small.
static INTERNED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

/// The name table's lock if it is free now ([`crate::exec::fork`]).
pub fn try_hold() -> Option<impl Sized + 'static> {
    crate::exec::fork::try_guard(&INTERNED)
}

fn intern(s: &str) -> &'static str {
    let mut guard = match INTERNED.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    let set = guard.get_or_insert_with(HashSet::new);
    if let Some(hit) = set.get(s) {
        return hit;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    set.insert(leaked);
    leaked
}

impl DynamicPrim {
    /// A dynamic primitive `name` with `params`. The name of a built-in
    /// primitive is an [`Error::InvalidArgument`] (its rules are fixed).
    pub fn new(
        name: &str, params: Vec<(String, Param)>, multiple_results: bool,
        provider: Arc<dyn RuleProvider>,
    ) -> Result<DynamicPrim> {
        if super::Primitive::all_names().contains(&name) {
            return Err(Error::InvalidArgument(format!(
                "{name:?} is the name of a built-in primitive; a primitive with rules given at \
                 run time needs another name"
            )));
        }
        let mut params: Vec<(&'static str, Param)> =
            params.into_iter().map(|(k, v)| (intern(&k), v)).collect();
        params.sort_by(|a, b| a.0.cmp(b.0));
        Ok(DynamicPrim {
            name: intern(name),
            params,
            multiple_results,
            provider,
        })
    }

    /// The primitive's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The params, sorted by name.
    pub fn params(&self) -> &[(&'static str, Param)] {
        &self.params
    }

    /// The provider of the rules.
    pub fn provider(&self) -> &Arc<dyn RuleProvider> {
        &self.provider
    }

    fn missing(&self, what: &str) -> Error {
        Error::NotImplemented(format!("{what} for '{}' not implemented", self.name))
    }

    fn avals(b: &Builder, xs: &[Atom]) -> Result<Vec<Aval>> {
        xs.iter().map(|a| b.aval(a)).collect()
    }
}

impl PartialEq for DynamicPrim {
    fn eq(&self, other: &DynamicPrim) -> bool {
        self.name == other.name
            && self.multiple_results == other.multiple_results
            && Arc::ptr_eq(&self.provider, &other.provider)
            && self.params == other.params
    }
}

impl Eq for DynamicPrim {}

impl std::hash::Hash for DynamicPrim {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Param values are not `Hash` (floats); names and identity suffice
        // for a hash consistent with `==`.
        self.name.hash(state);
        std::ptr::hash(Arc::as_ptr(&self.provider).cast::<u8>(), state);
        for (k, _) in &self.params {
            k.hash(state);
        }
    }
}

/// Whether a program holds a dynamic primitive (also in a sub-jaxpr): such a
/// program has no text form that rebuilds it.
pub fn holds_dynamic(j: &Jaxpr) -> bool {
    fn param(p: &Param) -> bool {
        match p {
            Param::Jaxpr(sub) => holds_dynamic(&sub.jaxpr),
            Param::Tuple(items) => items.iter().any(param),
            _ => false,
        }
    }
    j.eqns.iter().any(|e| {
        matches!(e.prim, super::Primitive::Dynamic(_))
            || e.prim.params().iter().any(|(_, p)| param(p))
    })
}

/// The names of the dynamic primitives a program holds (also in
/// sub-jaxprs), for error messages.
pub fn dynamic_names(j: &Jaxpr) -> Vec<&'static str> {
    fn walk(j: &Jaxpr, out: &mut Vec<&'static str>) {
        for e in &j.eqns {
            if let super::Primitive::Dynamic(d) = &e.prim {
                if !out.contains(&d.name) {
                    out.push(d.name);
                }
            }
            for (_, p) in e.prim.params() {
                param(&p, out);
            }
        }
    }
    fn param(p: &Param, out: &mut Vec<&'static str>) {
        match p {
            Param::Jaxpr(sub) => walk(&sub.jaxpr, out),
            Param::Tuple(items) => items.iter().for_each(|x| param(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(j, &mut out);
    out
}

/// Checks a provider's jaxpr has `n` outputs.
/// The avals of the atoms present in `ts` (`None` where absent).
fn optional_avals(b: &Builder, ts: &[Option<Atom>]) -> Result<Vec<Option<Aval>>> {
    ts.iter()
        .map(|t| t.as_ref().map(|t| b.aval(t)).transpose())
        .collect()
}

fn check_outs(name: &'static str, outs: &[Atom], n: usize) -> Result<()> {
    if outs.len() == n {
        Ok(())
    } else {
        Err(Error::arity(name, n, outs.len()))
    }
}

impl Family for DynamicPrim {
    /// No name is known ahead of time.
    const NAMES: &'static [&'static str] = &[];

    fn name(&self) -> &'static str {
        self.name
    }

    fn multiple_results(&self) -> bool {
        self.multiple_results
    }

    /// The union of its sub-programs' effects (a ClosedJaxpr param, also
    /// inside a tuple): an equation running an effectful body is never
    /// removed or reordered.
    fn effect(&self) -> Effect {
        fn effectful(p: &Param) -> bool {
            match p {
                Param::Jaxpr(sub) => sub.jaxpr.effect() != Effect::None,
                Param::Tuple(items) => items.iter().any(effectful),
                _ => false,
            }
        }
        if self.params.iter().any(|(_, p)| effectful(p)) {
            Effect::OrderedIo
        } else {
            Effect::None
        }
    }

    fn params(&self) -> ParamList {
        self.params.clone()
    }

    /// A dynamic primitive is never rebuilt from text: its rules are not in
    /// its name and params.
    fn from_params(_name: &str, _params: &Lookup<'_>) -> Result<Option<DynamicPrim>> {
        Ok(None)
    }

    fn display_params(&self, _params: &mut ParamList) {}

    fn examples() -> Vec<DynamicPrim> {
        Vec::new()
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let outs = self
            .provider
            .abstract_eval(self, ins)?
            .ok_or_else(|| self.missing("Abstract evaluation"))?;
        if !self.multiple_results && outs.len() != 1 {
            return Err(Error::arity(self.name, 1, outs.len()));
        }
        Ok(outs)
    }

    fn kernel(
        &self, _ctx: &crate::exec::ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        self.provider
            .kernel(self, args, &outs)?
            .ok_or_else(|| self.missing("Evaluation rule"))
    }

    fn jvp(&self, b: &mut Builder, primals: &[Atom], tangents: &[Option<Atom>]) -> JvpOut {
        if tangents.iter().all(Option::is_none) {
            let outs = b.add_eqn(self.clone().into(), primals.to_vec(), None)?;
            let zeros = vec![None; outs.len()];
            return Ok((outs.into_iter().map(Atom::Var).collect(), zeros));
        }
        let avals = Self::avals(b, primals)?;
        let tangent_avals = optional_avals(b, tangents)?;
        let rule = self
            .provider
            .jvp(self, &avals, &tangent_avals)?
            .ok_or_else(|| self.missing("Differentiation rule"))?;
        let n = self.abstract_eval(&avals)?.len();
        let mut ins = primals.to_vec();
        ins.extend(tangents.iter().flatten().cloned());
        let mut outs = splice(b, &rule, &ins)?;
        check_outs(self.name, &outs, n.saturating_mul(2))?;
        let touts = outs.split_off(n);
        // Integer and bool outputs have no tangent (a symbolic zero).
        let touts = outs
            .iter()
            .zip(touts)
            .map(|(o, t)| Ok(b.aval(o)?.dtype.is_inexact().then_some(t)))
            .collect::<Result<Vec<_>>>()?;
        Ok((outs, touts))
    }

    fn transpose(
        &self, b: &mut Builder, cts: &[Option<Atom>], operands: &[Operand],
    ) -> TransposeOut {
        let types = operands
            .iter()
            .map(|op| match op {
                Operand::Known(a) => Ok(OperandType::Known(b.aval(a)?)),
                Operand::Linear(aval) => Ok(OperandType::Linear(aval.clone())),
            })
            .collect::<Result<Vec<_>>>()?;
        let ct_avals = optional_avals(b, cts)?;
        let rule = self
            .provider
            .transpose(self, &types, &ct_avals)?
            .ok_or_else(|| self.missing("Transpose rule (for reverse-mode differentiation)"))?;
        let mut ins = known_atoms(operands);
        ins.extend(cts.iter().flatten().cloned());
        let outs = splice(b, &rule, &ins)?;
        let n_linear = operands.iter().filter(|op| op.is_linear()).count();
        check_outs(self.name, &outs, n_linear)?;
        let mut it = outs.into_iter();
        Ok(operands
            .iter()
            .map(|op| if op.is_linear() { it.next() } else { None })
            .collect())
    }

    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], size: usize,
    ) -> BatchOut {
        let avals = Self::avals(b, operands)?;
        let rule = self
            .provider
            .batch(self, &avals, dims, size)?
            .ok_or_else(|| self.missing("Batching rule"))?;
        let outs = splice(b, &rule.jaxpr, operands)?;
        check_outs(self.name, &outs, rule.out_dims.len())?;
        for (o, d) in outs.iter().zip(&rule.out_dims) {
            if let Some(d) = d {
                let aval = b.aval(o)?;
                if aval.shape.get(*d) != Some(&size) {
                    return Err(Error::InvalidArgument(format!(
                        "{}: the batching rule gave batch dim {d} for an output of shape {:?}, \
                         which has no axis {d} of the mapped size {size}",
                        self.name, aval.shape
                    )));
                }
            }
        }
        Ok((outs, rule.out_dims))
    }
}
