//! Tests of `ir::rewire`'s internals (reached through `microjax::internals`).

use super::{arr, f32s};
use microjax::internals::ir_rewire::*;
use microjax::ir::builder::Builder;
use microjax::*;
use microjax::{BinaryOp, DType, HostArray};
use std::sync::Arc;

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
        microjax::exec::interp::eval_closed(j, args)
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
