//! Program builders shared by the batching test files.
use microjax::prims::Pjit;
use microjax::{
    Atom, Aval, Buffer, Builder, ClosedJaxpr, DType, HostArray, Literal, Primitive, Scalar,
};
use std::sync::Arc;

/// One equation of `prim` applied to fresh inputs of `avals`.
pub fn single(prim: Primitive, avals: &[Aval]) -> ClosedJaxpr {
    let mut b = Builder::new();
    let ins: Vec<Atom> = avals
        .iter()
        .map(|a| Atom::Var(b.add_input(a.clone()).unwrap()))
        .collect();
    let outs: Vec<Atom> = b
        .add_eqn(prim, ins, None)
        .unwrap()
        .into_iter()
        .map(Atom::Var)
        .collect();
    b.build(outs).unwrap()
}

pub fn call(b: &mut Builder, sub: ClosedJaxpr, ins: Vec<Atom>) -> Vec<Atom> {
    b.add_eqn(
        Primitive::Pjit(Pjit {
            jaxpr: Arc::new(sub),
            name: "f".into(),
        }),
        ins,
        None,
    )
    .unwrap()
    .into_iter()
    .map(Atom::Var)
    .collect()
}

pub fn lit_f32(v: f64) -> Atom {
    Atom::Lit(Literal::new(Scalar::Float(v), DType::F32, true))
}

pub fn arange(shape: &[usize]) -> Arc<HostArray> {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| (i as f32) * 0.5 - 1.0).collect();
    Arc::new(HostArray::new(shape.to_vec(), Buffer::F32(v.into())).unwrap())
}
