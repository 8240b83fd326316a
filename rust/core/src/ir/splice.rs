//! Splicing: appending a whole closed jaxpr to a builder in one call, with
//! its variables remapped. This is how a transformed program (the VJP of a
//! `grad`, the batched program of a `vmap`) joins an enclosing trace without
//! one Python `bind` per equation.

use super::builder::Builder;
use super::{Atom, ClosedJaxpr, Var};
use crate::error::{Error, Result};

/// Appends `j` to `b`, feeding `inputs` to its invars, and returns the atoms
/// its outputs map to (a literal output stays a literal).
pub fn splice(b: &mut Builder, j: &ClosedJaxpr, inputs: &[Atom]) -> Result<Vec<Atom>> {
    let jaxpr = &j.jaxpr;
    Error::check_count("splice", jaxpr.invars.len(), inputs.len())?;
    let mut env: Vec<Option<Atom>> = vec![None; jaxpr.avals.len()];
    for (v, a) in jaxpr.invars.iter().zip(inputs) {
        let want = jaxpr.aval(*v)?;
        let got = b.aval(a)?;
        if !want.same_type(&got) {
            return Err(Error::Typecheck(format!(
                "splice: input {} does not match parameter {}",
                got.short(),
                want.short()
            )));
        }
        bind(&mut env, *v, a.clone())?;
    }
    for (v, c) in jaxpr.constvars.iter().zip(&j.consts) {
        let weak = jaxpr.aval(*v)?.weak_type;
        let nv = b.add_const(c.clone(), weak)?;
        bind(&mut env, *v, Atom::Var(nv))?;
    }
    for eqn in &jaxpr.eqns {
        let ins = lookup_all(&env, &eqn.inputs)?;
        let outs = b.add_eqn(eqn.prim.clone(), ins, eqn.source.0.clone())?;
        for (old, new) in eqn.outputs.iter().zip(outs) {
            bind(&mut env, *old, Atom::Var(new))?;
        }
    }
    lookup_all(&env, &jaxpr.outvars)
}

/// Binds `v` to `a` in a variable-to-atom environment.
pub(crate) fn bind(env: &mut [Option<Atom>], v: Var, a: Atom) -> Result<()> {
    let slot = env
        .get_mut(v.index())
        .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))?;
    *slot = Some(a);
    Ok(())
}

/// What `a` stands for in a variable-to-atom environment.
pub(crate) fn lookup(env: &[Option<Atom>], a: &Atom) -> Result<Atom> {
    match a {
        Atom::Lit(_) => Ok(a.clone()),
        Atom::Var(v) => env
            .get(v.index())
            .and_then(|s| s.clone())
            .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0))),
    }
}

/// What each of `atoms` stands for in `env` ([`lookup`]).
pub(crate) fn lookup_all(env: &[Option<Atom>], atoms: &[Atom]) -> Result<Vec<Atom>> {
    atoms.iter().map(|a| lookup(env, a)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::interp::eval_closed;
    use crate::{Aval, BinaryOp, Buffer, DType, HostArray, Literal, Primitive, Scalar, UnaryOp};
    use std::sync::Arc;

    #[test]
    fn spliced_program_computes_the_same() {
        // inner: y = sin(x) * 2 + c
        let mut ib = Builder::new();
        let x = ib.add_input(Aval::new(vec![3], DType::F32)).unwrap();
        let c = ib
            .add_const(
                Arc::new(HostArray::new(vec![3], Buffer::F32(vec![1.0, 2.0, 3.0].into())).unwrap()),
                false,
            )
            .unwrap();
        let s = ib
            .add_eqn1(Primitive::Unary(UnaryOp::Sin), vec![Atom::Var(x)])
            .unwrap();
        let two = Atom::Lit(Literal::new(Scalar::Float(2.0), DType::F32, false));
        let m = ib
            .add_eqn1(Primitive::Binary(BinaryOp::Mul), vec![s, two])
            .unwrap();
        let y = ib
            .add_eqn1(Primitive::Binary(BinaryOp::Add), vec![m, Atom::Var(c)])
            .unwrap();
        let inner = ib.build(vec![y]).unwrap();

        // outer: z = neg(inner(neg(a)))
        let mut ob = Builder::new();
        let a = ob.add_input(Aval::new(vec![3], DType::F32)).unwrap();
        let na = ob
            .add_eqn1(Primitive::Unary(UnaryOp::Neg), vec![Atom::Var(a)])
            .unwrap();
        let outs = splice(&mut ob, &inner, &[na]).unwrap();
        let z = ob.add_eqn1(Primitive::Unary(UnaryOp::Neg), outs).unwrap();
        let outer = ob.build(vec![z]).unwrap();
        assert_eq!(outer.jaxpr.eqns.len(), 5);

        let arg =
            Arc::new(HostArray::new(vec![3], Buffer::F32(vec![0.5, -1.0, 2.0].into())).unwrap());
        let got = eval_closed(&outer, &[arg]).unwrap();
        let Buffer::F32(v) = got[0].buffer() else {
            panic!()
        };
        let want: Vec<f32> = [0.5f32, -1.0, 2.0]
            .iter()
            .zip([1.0f32, 2.0, 3.0])
            .map(|(x, c)| -((-x).sin() * 2.0 + c))
            .collect();
        for (g, w) in v.iter().zip(want) {
            assert!((g - w).abs() < 1e-6);
        }
    }

    #[test]
    fn splice_rejects_mismatched_inputs() {
        let mut ib = Builder::new();
        let x = ib.add_input(Aval::new(vec![3], DType::F32)).unwrap();
        let inner = ib.build(vec![Atom::Var(x)]).unwrap();
        let mut ob = Builder::new();
        let a = ob.add_input(Aval::new(vec![4], DType::F32)).unwrap();
        assert!(matches!(
            splice(&mut ob, &inner, &[Atom::Var(a)]),
            Err(Error::Typecheck(_))
        ));
        assert!(matches!(
            splice(&mut ob, &inner, &[]),
            Err(Error::Arity { .. })
        ));
    }
}
