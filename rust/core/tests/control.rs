//! Control flow from Rust: `cond`, `while` and `scan` built with the
//! `Builder`, run natively, differentiated (JVP against finite differences,
//! VJP against JVP), batched (against a per-example loop), printed and
//! parsed back.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::interp::eval_closed;
use microjax::ir::canonical::{canonical, parse, ParseLimits};
use microjax::prims::control::{ControlFlow, Scan};
use microjax::transforms::{batch_jaxpr, jvp_jaxpr, vjp_jaxpr};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, DType, HostArray, Primitive, UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::{doubling_while, f64_arc, f64s, f64v};

fn scalar_i32(v: i32) -> Arc<HostArray> {
    Arc::new(HostArray::new(vec![], Buffer::I32(vec![v].into())).unwrap())
}

/// Body `(w ; c ; x) -> (sin(c * w) + x ; c * x)` of a scan over `[n]`.
fn body() -> ClosedJaxpr {
    let mut b = Builder::new();
    let w = Atom::Var(b.add_input(f64v(&[])).unwrap());
    let c = Atom::Var(b.add_input(f64v(&[])).unwrap());
    let x = Atom::Var(b.add_input(f64v(&[])).unwrap());
    let cw = b.binary(BinaryOp::Mul, c.clone(), w).unwrap();
    let s = b.unary(UnaryOp::Sin, cw).unwrap();
    let next = b.binary(BinaryOp::Add, s, x.clone()).unwrap();
    let y = b.binary(BinaryOp::Mul, c, x).unwrap();
    b.build(vec![next, y]).unwrap()
}

/// `(w, c0, xs) -> (c_final, ys)`: one scan equation.
fn scan_program(n: usize) -> ClosedJaxpr {
    let mut b = Builder::new();
    let w = Atom::Var(b.add_input(f64v(&[])).unwrap());
    let c = Atom::Var(b.add_input(f64v(&[])).unwrap());
    let xs = Atom::Var(b.add_input(f64v(&[n])).unwrap());
    let scan = Primitive::Control(ControlFlow::Scan(Scan {
        jaxpr: Arc::new(body()),
        length: n,
        reverse: false,
        num_consts: 1,
        num_carry: 1,
        linear: vec![false; 3],
        unroll: 1,
    }));
    let outs = b.add_eqn(scan, vec![w, c, xs], None).unwrap();
    b.build(outs.into_iter().map(Atom::Var).collect()).unwrap()
}

fn scan_reference(w: f64, c0: f64, xs: &[f64]) -> (f64, Vec<f64>) {
    let mut c = c0;
    let mut ys = Vec::new();
    for &x in xs {
        ys.push(c * x);
        c = (c * w).sin() + x;
    }
    (c, ys)
}

#[test]
fn scan_runs_natively_and_round_trips_as_text() {
    let prog = scan_program(4);
    let xs = vec![0.5, -1.0, 2.0, 0.25];
    let out = eval_closed(
        &prog,
        &[
            f64_arc(&[], vec![0.7]),
            f64_arc(&[], vec![1.2]),
            f64_arc(&[4], xs.clone()),
        ],
    )
    .unwrap();
    let (c, ys) = scan_reference(0.7, 1.2, &xs);
    assert!((f64s(&out[0])[0] - c).abs() < 1e-12);
    for (g, w) in f64s(&out[1]).iter().zip(&ys) {
        assert!((g - w).abs() < 1e-12);
    }
    let text = canonical(&prog);
    assert_eq!(parse(&text, &ParseLimits::default()).unwrap(), prog);
    let shown = microjax::ir::display::display(&prog);
    assert!(
        shown.contains("scan[") && shown.contains("num_carry=1"),
        "{shown}"
    );
}

#[test]
fn scan_jvp_matches_finite_differences_and_vjp_matches_jvp() {
    let n = 4;
    let prog = scan_program(n);
    let (w, c0) = (0.7, 1.2);
    let xs = vec![0.5, -1.0, 2.0, 0.25];
    let args = || {
        vec![
            f64_arc(&[], vec![w]),
            f64_arc(&[], vec![c0]),
            f64_arc(&[n], xs.clone()),
        ]
    };
    let (jj, out_nz) = jvp_jaxpr(&prog, &[true, true, true], false).unwrap();
    assert_eq!(out_nz, vec![true, true]);
    let (tw, tc) = (0.3, -0.8);
    let txs = vec![0.1, 0.2, -0.3, 0.4];
    let mut ins = args();
    ins.extend([
        f64_arc(&[], vec![tw]),
        f64_arc(&[], vec![tc]),
        f64_arc(&[n], txs.clone()),
    ]);
    let out = eval_closed(&jj, &ins).unwrap();
    let eps = 1e-6;
    let shifted = |s: f64| {
        let xs2: Vec<f64> = xs.iter().zip(&txs).map(|(x, t)| x + s * t).collect();
        scan_reference(w + s * tw, c0 + s * tc, &xs2)
    };
    let (cp, yp) = shifted(eps);
    let (cm, ym) = shifted(-eps);
    let fd_c = (cp - cm) / (2.0 * eps);
    assert!(
        (f64s(&out[2])[0] - fd_c).abs() < 1e-6,
        "{} vs {fd_c}",
        f64s(&out[2])[0]
    );
    for (k, g) in f64s(&out[3]).iter().enumerate() {
        assert!((g - (yp[k] - ym[k]) / (2.0 * eps)).abs() < 1e-6);
    }
    // <ct, J t> = <J^T ct, t>
    let vjp = vjp_jaxpr(&prog, &[true, true, true]).unwrap();
    let fwd = eval_closed(&vjp.fwd, &args()).unwrap();
    let (ct_c, ct_y) = (0.9, vec![1.0, -2.0, 0.5, 3.0]);
    let mut bins: Vec<Arc<HostArray>> = fwd[2..].to_vec();
    bins.extend([f64_arc(&[], vec![ct_c]), f64_arc(&[n], ct_y.clone())]);
    let g = eval_closed(&vjp.bwd, &bins).unwrap();
    let lhs = ct_c * f64s(&out[2])[0]
        + ct_y
            .iter()
            .zip(f64s(&out[3]))
            .map(|(a, b)| a * b)
            .sum::<f64>();
    let rhs = tw * f64s(&g[0])[0]
        + tc * f64s(&g[1])[0]
        + txs.iter().zip(f64s(&g[2])).map(|(a, b)| a * b).sum::<f64>();
    assert!((lhs - rhs).abs() < 1e-10, "{lhs} vs {rhs}");
}

/// `(x: f64[], limit: i32[]) -> (i, x * 2^i)` doubling while `i < limit`.
fn while_program() -> ClosedJaxpr {
    doubling_while(f64v(&[]))
}

#[test]
fn while_runs_differentiates_forward_and_batches_a_per_member_predicate() {
    let prog = while_program();
    let out = eval_closed(&prog, &[f64_arc(&[], vec![1.5]), scalar_i32(3)]).unwrap();
    assert_eq!(f64s(&out[1]), vec![12.0]);
    let (jj, nz) = jvp_jaxpr(&prog, &[true, false], false).unwrap();
    assert_eq!(nz, vec![false, true]);
    let out = eval_closed(
        &jj,
        &[
            f64_arc(&[], vec![1.5]),
            scalar_i32(3),
            f64_arc(&[], vec![1.0]),
        ],
    )
    .unwrap();
    assert_eq!(f64s(out.last().unwrap()), vec![8.0]);
    // reverse mode: JAX's error
    let err = vjp_jaxpr(&prog, &[true, false]).unwrap_err().to_string();
    assert!(
        err.contains("Reverse-mode differentiation does not work"),
        "{err}"
    );
    // batched limit: members stop after different trip counts
    let batched = batch_jaxpr(&prog, &[Some(0), Some(0)], 3, &[Some(0), Some(0)]).unwrap();
    let lims = Arc::new(HostArray::new(vec![3], Buffer::I32(vec![0, 2, 5].into())).unwrap());
    let out = eval_closed(&batched, &[f64_arc(&[3], vec![1.0, 1.0, 0.5]), lims]).unwrap();
    assert_eq!(f64s(&out[1]), vec![1.0, 4.0, 16.0]);
}

/// `(k: i32[], x) -> cond(k, [x + 1, x * x, -x])`.
fn cond_program() -> ClosedJaxpr {
    let branch = |op: &dyn Fn(&mut Builder, Atom) -> Atom| {
        let mut b = Builder::new();
        let x = Atom::Var(b.add_input(f64v(&[2])).unwrap());
        let y = op(&mut b, x);
        Arc::new(b.build(vec![y]).unwrap())
    };
    let branches = vec![
        branch(&|b, x| {
            b.binary(BinaryOp::Add, x, Builder::lit(DType::F64, 1.0))
                .unwrap()
        }),
        branch(&|b, x| b.binary(BinaryOp::Mul, x.clone(), x).unwrap()),
        branch(&|b, x| b.unary(UnaryOp::Neg, x).unwrap()),
    ];
    let mut b = Builder::new();
    let k = Atom::Var(b.add_input(Aval::new(vec![], DType::I32)).unwrap());
    let x = Atom::Var(b.add_input(f64v(&[2])).unwrap());
    let outs = b
        .add_eqn(
            Primitive::Control(ControlFlow::Cond { branches }),
            vec![k, x],
            None,
        )
        .unwrap();
    b.build(outs.into_iter().map(Atom::Var).collect()).unwrap()
}

#[test]
fn cond_selects_clamps_differentiates_and_batches() {
    let prog = cond_program();
    let x = || f64_arc(&[2], vec![3.0, -2.0]);
    let run = |k: i32| f64s(&eval_closed(&prog, &[scalar_i32(k), x()]).unwrap()[0]);
    assert_eq!(run(0), vec![4.0, -1.0]);
    assert_eq!(run(1), vec![9.0, 4.0]);
    assert_eq!(run(2), vec![-3.0, 2.0]);
    assert_eq!(run(-5), run(0));
    assert_eq!(run(9), run(2));
    let vjp = vjp_jaxpr(&prog, &[false, true]).unwrap();
    let fwd = eval_closed(&vjp.fwd, &[scalar_i32(1), x()]).unwrap();
    let mut bins: Vec<Arc<HostArray>> = fwd[1..].to_vec();
    bins.push(f64_arc(&[2], vec![1.0, 1.0]));
    let g = eval_closed(&vjp.bwd, &bins).unwrap();
    assert_eq!(f64s(g.last().unwrap()), vec![6.0, -4.0]);
    // a per-member index runs every branch and selects
    let batched = batch_jaxpr(&prog, &[Some(0), Some(0)], 3, &[Some(0)]).unwrap();
    let ks = Arc::new(HostArray::new(vec![3], Buffer::I32(vec![2, 0, 1].into())).unwrap());
    let xs = f64_arc(&[3, 2], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = eval_closed(&batched, &[ks, xs]).unwrap();
    assert_eq!(f64s(&out[0]), vec![-1.0, -2.0, 4.0, 5.0, 25.0, 36.0]);
}

#[test]
fn malformed_control_flow_is_a_typed_error() {
    let prog = cond_program();
    // operand of the wrong shape
    let err = eval_closed(&prog, &[scalar_i32(0), f64_arc(&[3], vec![0.0; 3])]);
    assert!(err.is_err());
    // a scan whose xs are shorter than its length
    let mut b = Builder::new();
    let w = Atom::Var(b.add_input(f64v(&[])).unwrap());
    let c = Atom::Var(b.add_input(f64v(&[])).unwrap());
    let xs = Atom::Var(b.add_input(f64v(&[3])).unwrap());
    let scan = Primitive::Control(ControlFlow::Scan(Scan {
        jaxpr: Arc::new(body()),
        length: 4,
        reverse: false,
        num_consts: 1,
        num_carry: 1,
        linear: vec![],
        unroll: 1,
    }));
    let e = b
        .add_eqn(scan, vec![w, c, xs], None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("leading axis of the scan length 4"), "{e}");
}
