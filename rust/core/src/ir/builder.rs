//! Builder: appends equations to a jaxpr under construction, inferring output
//! avals through the shape rules so a bad operand is rejected at the point it
//! is used, with an error naming the primitive and the shapes.

use super::{
    Atom, Aval, ClosedJaxpr, Eqn, Jaxpr, Literal, Scalar, SourceInfo, SourceInfoField, Var,
};
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::prims::BroadcastInDim;
use crate::prims::{shape, BinaryOp, Primitive, Reduce, ReduceOp, UnaryOp};
use std::sync::Arc;

/// A jaxpr under construction. Constvars carry their values so `build`
/// returns a `ClosedJaxpr`.
#[derive(Debug, Clone, Default)]
pub struct Builder {
    avals: Vec<Aval>,
    constvars: Vec<Var>,
    consts: Vec<Arc<HostArray>>,
    invars: Vec<Var>,
    eqns: Vec<Eqn>,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    fn fresh(&mut self, aval: Aval) -> Result<Var> {
        let id = u32::try_from(self.avals.len())
            .map_err(|_| Error::Limit("too many variables".into()))?;
        self.avals.push(aval);
        Ok(Var(id))
    }

    /// A new input variable.
    pub fn add_input(&mut self, aval: Aval) -> Result<Var> {
        let v = self.fresh(aval)?;
        self.invars.push(v);
        Ok(v)
    }

    /// New inputs of avals `avals`, as atoms.
    pub fn add_inputs(&mut self, avals: Vec<Aval>) -> Result<Vec<Atom>> {
        avals
            .into_iter()
            .map(|a| self.add_input(a).map(Atom::Var))
            .collect()
    }

    /// A new constant input holding `value` (weak type from `weak_type`).
    pub fn add_const(&mut self, value: Arc<HostArray>, weak_type: bool) -> Result<Var> {
        let mut aval = value.aval();
        aval.weak_type = weak_type;
        let v = self.fresh(aval)?;
        self.constvars.push(v);
        self.consts.push(value);
        Ok(v)
    }

    /// Aval of an atom of this builder.
    pub fn aval(&self, a: &Atom) -> Result<Aval> {
        match a {
            Atom::Var(v) => self
                .avals
                .get(v.index())
                .cloned()
                .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0))),
            Atom::Lit(l) => Ok(l.aval.clone()),
        }
    }

    /// Appends `outs = prim ins`, returning the new output variables.
    pub fn add_eqn(
        &mut self, prim: Primitive, inputs: Vec<Atom>, source: SourceInfo,
    ) -> Result<Vec<Var>> {
        let in_avals = inputs
            .iter()
            .map(|a| self.aval(a))
            .collect::<Result<Vec<_>>>()?;
        let out_avals = shape::abstract_eval(&prim, &in_avals)?;
        let effect = prim.effect();
        let outputs = out_avals
            .into_iter()
            .map(|a| self.fresh(a))
            .collect::<Result<Vec<_>>>()?;
        self.eqns.push(Eqn {
            prim,
            inputs,
            outputs: outputs.clone(),
            effect,
            source: SourceInfoField(source),
        });
        Ok(outputs)
    }

    /// Convenience for single-output primitives.
    pub fn add_eqn1(&mut self, prim: Primitive, inputs: Vec<Atom>) -> Result<Atom> {
        let name = prim.name();
        let outs = self.add_eqn(prim, inputs, None)?;
        match outs.as_slice() {
            [v] => Ok(Atom::Var(*v)),
            _ => Err(Error::arity(name, 1, outs.len())),
        }
    }

    /// A literal atom.
    pub fn literal(lit: Literal) -> Atom {
        Atom::Lit(lit)
    }

    /// A rank-0 literal `value` of `dtype` (not weak).
    pub fn lit(dtype: DType, value: f64) -> Atom {
        Atom::Lit(Literal::new(Scalar::Float(value), dtype, false))
    }

    /// An array of `aval`'s shape and dtype filled with `value`: a literal
    /// for rank 0, else `broadcast_in_dim` of the literal.
    pub fn full(&mut self, aval: &Aval, value: f64) -> Result<Atom> {
        let l = Builder::lit(aval.dtype, value);
        if aval.shape.is_empty() {
            return Ok(l);
        }
        self.add_eqn1(
            Primitive::BroadcastInDim(BroadcastInDim {
                shape: aval.shape.clone(),
                broadcast_dimensions: Vec::new(),
            }),
            vec![l],
        )
    }

    /// Zeros of `aval` (float0 zeros for a float0 aval).
    pub fn zeros(&mut self, aval: &Aval) -> Result<Atom> {
        self.full(aval, 0.0)
    }

    /// `op x`.
    pub fn unary(&mut self, op: UnaryOp, x: Atom) -> Result<Atom> {
        self.add_eqn1(Primitive::Unary(op), vec![x])
    }

    /// `op x y`.
    pub fn binary(&mut self, op: BinaryOp, x: Atom, y: Atom) -> Result<Atom> {
        self.add_eqn1(Primitive::Binary(op), vec![x, y])
    }

    /// `op` reduction of `x` over `axes`.
    pub fn reduce(&mut self, op: ReduceOp, x: Atom, axes: Vec<usize>) -> Result<Atom> {
        self.add_eqn1(Primitive::Reduce(Reduce { op, axes }), vec![x])
    }

    /// The avals of every variable created so far, indexed by `Var`.
    pub fn avals(&self) -> &[Aval] {
        &self.avals
    }

    /// Equation `i` (in the order added).
    pub fn eqn(&self, i: usize) -> Option<&Eqn> {
        self.eqns.get(i)
    }

    pub fn num_eqns(&self) -> usize {
        self.eqns.len()
    }

    /// Gives `source` to every equation from index `start` on that has no
    /// source info yet (a transform rule emitting several equations for one
    /// user equation keeps the user's line on all of them).
    pub fn set_source_since(&mut self, start: usize, source: &SourceInfo) {
        if source.is_none() {
            return;
        }
        for e in self.eqns.iter_mut().skip(start) {
            if e.source.0.is_none() {
                e.source = SourceInfoField(source.clone());
            }
        }
    }

    /// Finishes the program with the given outputs.
    pub fn build(&self, outvars: Vec<Atom>) -> Result<ClosedJaxpr> {
        for a in &outvars {
            self.aval(a)?;
        }
        let jaxpr = Jaxpr {
            avals: self.avals.clone(),
            constvars: self.constvars.clone(),
            invars: self.invars.clone(),
            eqns: self.eqns.clone(),
            outvars,
        };
        Ok(ClosedJaxpr::new(jaxpr, self.consts.clone()))
    }

    /// [`Builder::build`] consuming the builder: its equations move into
    /// the program instead of being copied.
    pub fn finish(self, outvars: Vec<Atom>) -> Result<ClosedJaxpr> {
        for a in &outvars {
            self.aval(a)?;
        }
        let jaxpr = Jaxpr {
            avals: self.avals,
            constvars: self.constvars,
            invars: self.invars,
            eqns: self.eqns,
            outvars,
        };
        Ok(ClosedJaxpr::new(jaxpr, self.consts))
    }
}
