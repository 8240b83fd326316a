//! Tests of `exec::interp`'s internals (reached through `microjax::internals`).

use super::{arr, f32s};
use microjax::internals::exec_interp::*;
use microjax::ir::builder::Builder;
use microjax::*;
use microjax::{BinaryOp, DType, Scalar, UnaryOp};
use std::sync::Arc;

/// `(sin(x) * 2 + y, x)`: literals, a freed temporary, an input output.
fn program() -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = b.add_input(Aval::new(vec![3], DType::F32)).unwrap();
    let y = b.add_input(Aval::new(vec![3], DType::F32)).unwrap();
    let s = b
        .add_eqn(Primitive::Unary(UnaryOp::Sin), vec![Atom::Var(x)], None)
        .unwrap();
    let two = Atom::Lit(microjax::ir::Literal::new(
        Scalar::Float(2.0),
        DType::F32,
        true,
    ));
    let m = b
        .add_eqn(
            Primitive::Binary(BinaryOp::Mul),
            vec![Atom::Var(s[0]), two],
            None,
        )
        .unwrap();
    let a = b
        .add_eqn(
            Primitive::Binary(BinaryOp::Add),
            vec![Atom::Var(m[0]), Atom::Var(y)],
            None,
        )
        .unwrap();
    b.build(vec![Atom::Var(a[0]), Atom::Var(x)]).unwrap()
}

#[test]
fn prepared_matches_eval_closed_and_reference_values() {
    let prog = Arc::new(program());
    let xs = [0.5f32, -1.0, 2.0];
    let ys = [1.0f32, 2.0, 3.0];
    let x = arr(&xs);
    let y = arr(&ys);
    let args = [x.clone(), y];
    let plain = eval_closed(&prog, &args).unwrap();
    let plan = Prepared::new(prog.clone()).unwrap();
    for _ in 0..3 {
        let again = plan.run(&args).unwrap();
        assert_eq!(again.len(), 2);
        assert_eq!(f32s(&again[0]), f32s(&plain[0]));
        assert_eq!(f32s(&again[1]), xs.to_vec());
    }
    let got = f32s(&plain[0]);
    for i in 0..3 {
        let want = xs[i].sin() * 2.0 + ys[i];
        assert!((got[i] - want).abs() <= 1e-6 * want.abs().max(1.0));
    }
    // The input returned as an output is shared, not copied.
    assert!(Arc::ptr_eq(&plain[1], &x));
}

#[test]
fn wrong_arity_is_an_error() {
    let prog = Arc::new(program());
    let plan = Prepared::new(prog).unwrap();
    let x = arr(&[0.0; 3]);
    assert!(matches!(plan.run(&[x]), Err(Error::Arity { .. })));
}
