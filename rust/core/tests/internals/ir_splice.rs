//! Tests of `ir::splice`'s internals (reached through `microjax::internals`).

use microjax::exec::interp::eval_closed;
use microjax::internals::ir_splice::*;
use microjax::*;
use microjax::{Aval, BinaryOp, Buffer, DType, HostArray, Literal, Primitive, Scalar, UnaryOp};
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

    let arg = Arc::new(HostArray::new(vec![3], Buffer::F32(vec![0.5, -1.0, 2.0].into())).unwrap());
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
