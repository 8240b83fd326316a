//! Rewiring a closed jaxpr's signature without touching its equations:
//! choosing, reordering and adding inputs (unused ones included), turning
//! consts into inputs, and choosing or reordering outputs. Higher-order
//! rules use these to give several sub-jaxprs one common signature (the
//! branches of a `cond`) or to put a transformed body's inputs in the order
//! its loop primitive expects.

use super::{Atom, Aval, ClosedJaxpr, Jaxpr, Var};
use crate::error::{Error, Result};
use std::sync::Arc;

/// Where an input of the rewired jaxpr comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum InputSource {
    /// Input `i` of the original jaxpr.
    Invar(usize),
    /// Const `i` of the original jaxpr, now passed as an input.
    Const(usize),
    /// A new input the program does not read.
    Unused(Aval),
}

fn fresh(avals: &mut Vec<Aval>, aval: Aval) -> Result<Var> {
    let id = u32::try_from(avals.len()).map_err(|_| Error::Limit("too many variables".into()))?;
    avals.push(aval);
    Ok(Var(id))
}

/// Variable `i` of `vars` (the jaxpr's `what` list), marked taken in
/// `taken`; an error when out of range or taken before.
fn claim(vars: &[Var], taken: &mut [bool], what: &str, i: usize) -> Result<Var> {
    let v = vars.get(i).ok_or_else(|| bad_index(what, i))?;
    let slot = taken.get_mut(i).ok_or_else(|| bad_index(what, i))?;
    if *slot {
        return Err(Error::InvalidArgument(format!(
            "rewire_inputs: {what} {i} named twice"
        )));
    }
    *slot = true;
    Ok(*v)
}

/// The jaxpr whose inputs are `spec`. Every original input must appear
/// exactly once; consts named by `Const` leave the const list.
pub fn rewire_inputs(j: &ClosedJaxpr, spec: &[InputSource]) -> Result<ClosedJaxpr> {
    let jx = &j.jaxpr;
    let mut avals = jx.avals.clone();
    let mut invars = Vec::with_capacity(spec.len());
    let mut seen = vec![false; jx.invars.len()];
    let mut hoisted = vec![false; jx.constvars.len()];
    for s in spec {
        match s {
            InputSource::Invar(i) => invars.push(claim(&jx.invars, &mut seen, "input", *i)?),
            InputSource::Const(i) => invars.push(claim(&jx.constvars, &mut hoisted, "const", *i)?),
            InputSource::Unused(aval) => invars.push(fresh(&mut avals, aval.clone())?),
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(Error::InvalidArgument(format!(
            "rewire_inputs: input {i} of the jaxpr is not named"
        )));
    }
    let mut constvars = Vec::new();
    let mut consts = Vec::new();
    for ((v, c), h) in jx.constvars.iter().zip(&j.consts).zip(&hoisted) {
        if !h {
            constvars.push(*v);
            consts.push(c.clone());
        }
    }
    Ok(ClosedJaxpr {
        jaxpr: Arc::new(Jaxpr {
            avals,
            constvars,
            invars,
            eqns: jx.eqns.clone(),
            outvars: jx.outvars.clone(),
        }),
        consts,
    })
}

/// The jaxpr with its consts as leading inputs, and the const values.
pub fn consts_to_inputs(j: &ClosedJaxpr) -> Result<(ClosedJaxpr, Vec<Arc<crate::HostArray>>)> {
    let mut spec: Vec<InputSource> = (0..j.jaxpr.constvars.len())
        .map(InputSource::Const)
        .collect();
    spec.extend((0..j.jaxpr.invars.len()).map(InputSource::Invar));
    Ok((rewire_inputs(j, &spec)?, j.consts.clone()))
}

/// Inputs reordered: input `k` of the result is input `order[k]`.
pub fn permute_inputs(j: &ClosedJaxpr, order: &[usize]) -> Result<ClosedJaxpr> {
    let spec: Vec<InputSource> = order.iter().map(|&i| InputSource::Invar(i)).collect();
    rewire_inputs(j, &spec)
}

/// Output `k` of the result is output `order[k]` of `j` (outputs may be
/// dropped or repeated).
pub fn select_outputs(j: &ClosedJaxpr, order: &[usize]) -> Result<ClosedJaxpr> {
    let jx = &j.jaxpr;
    let outvars = order
        .iter()
        .map(|&i| {
            jx.outvars
                .get(i)
                .cloned()
                .ok_or_else(|| bad_index("output", i))
        })
        .collect::<Result<Vec<Atom>>>()?;
    Ok(ClosedJaxpr {
        jaxpr: Arc::new(Jaxpr {
            avals: jx.avals.clone(),
            constvars: jx.constvars.clone(),
            invars: jx.invars.clone(),
            eqns: jx.eqns.clone(),
            outvars,
        }),
        consts: j.consts.clone(),
    })
}

fn bad_index(what: &str, i: usize) -> Error {
    Error::InvalidArgument(format!("rewire: no {what} {i}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::test_vectors::{arr, f32s};
    use crate::ir::builder::Builder;
    use crate::{BinaryOp, DType, HostArray};

    /// `(x, y) -> x - y * c` with a const `c`.
    fn program() -> ClosedJaxpr {
        let mut b = Builder::new();
        let c = b.add_const(arr(&[10.0, 20.0]), false).unwrap();
        let x = b.add_input(Aval::new(vec![2], DType::F32)).unwrap();
        let y = b.add_input(Aval::new(vec![2], DType::F32)).unwrap();
        let m = b.binary(BinaryOp::Mul, Atom::Var(y), Atom::Var(c)).unwrap();
        let s = b.binary(BinaryOp::Sub, Atom::Var(x), m).unwrap();
        b.build(vec![s, Atom::Var(x)]).unwrap()
    }

    #[test]
    fn rewired_programs_compute_the_same_values() {
        let p = program();
        let (x, y) = (arr(&[1.0, 2.0]), arr(&[3.0, 4.0]));
        let run = |j: &ClosedJaxpr, args: &[Arc<HostArray>]| {
            crate::exec::interp::eval_closed(j, args)
                .unwrap()
                .iter()
                .map(|a| f32s(a))
                .collect::<Vec<_>>()
        };
        let want = run(&p, &[x.clone(), y.clone()]);
        assert_eq!(want[0], vec![1.0 - 30.0, 2.0 - 80.0]);

        let swapped = permute_inputs(&p, &[1, 0]).unwrap();
        assert_eq!(run(&swapped, &[y.clone(), x.clone()]), want);

        let (hoisted, consts) = consts_to_inputs(&p).unwrap();
        assert!(hoisted.consts.is_empty());
        let mut args = consts.clone();
        args.extend([x.clone(), y.clone()]);
        assert_eq!(run(&hoisted, &args), want);

        let padded = rewire_inputs(
            &p,
            &[
                InputSource::Unused(Aval::new(vec![5], DType::I32)),
                InputSource::Invar(0),
                InputSource::Invar(1),
            ],
        )
        .unwrap();
        let pad = Arc::new(HostArray::zeros(vec![5], DType::I32).unwrap());
        assert_eq!(run(&padded, &[pad, x.clone(), y.clone()]), want);

        let flipped = select_outputs(&p, &[1, 0, 1]).unwrap();
        let got = run(&flipped, &[x, y]);
        assert_eq!(got, vec![want[1].clone(), want[0].clone(), want[1].clone()]);
    }

    #[test]
    fn bad_specs_are_errors() {
        let p = program();
        assert!(rewire_inputs(&p, &[InputSource::Invar(0)]).is_err());
        assert!(permute_inputs(&p, &[0, 0]).is_err());
        assert!(permute_inputs(&p, &[0, 2]).is_err());
        assert!(select_outputs(&p, &[7]).is_err());
    }
}
