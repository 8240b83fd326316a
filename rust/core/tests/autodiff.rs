//! Autodiff against the reference interpreter: JVPs against central finite
//! differences, VJPs against JVPs (`<c, J t> = <J^T c, t>`), linearize
//! against JVP, second order (JVP of JVP, VJP of the VJP's backward program)
//! for every differentiable primitive, plus hand-computed derivatives,
//! symbolic zeros, DCE, integer inputs and pjit nesting.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::ir::typecheck::typecheck;
use microjax::prims::{Clamp, Cumulative, IntegerPow, Pjit, Reduce, SelectN, StopGradient};
use microjax::transforms::{jvp_jaxpr, transpose_jaxpr, vjp_jaxpr};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, CmpOp, DType, HostArray, Primitive,
    ReduceOp, UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::autodiff::{
    assert_close_vec, bin, check_all, close, eqn, lit, pjit, rand_arr, run, un,
};
use common::{
    broadcast_in_dim, build, dot_general, f64_arc, f64s, f64v, iota, reduce, reshape, squeeze,
    transpose, Rng,
};

// ------------------------------------------------------- per primitive

#[test]
fn unary_primitives() {
    for (i, &op) in UnaryOp::ALL.iter().enumerate() {
        if !op.accepts(DType::F64) {
            continue;
        }
        let f = build(&[f64v(&[4])], |b, x| vec![un(b, op, &x[0])]);
        let mut rng = Rng::new(100 + i as u64);
        // Inside each op's domain: positive and away from 0 (log, sqrt, and
        // the kinks of abs/sign), below 1 for asin/acos/atanh/erf_inv, above
        // 1 for acosh; away from the integers for floor/ceil.
        let mut v = match op {
            UnaryOp::Asin | UnaryOp::Acos | UnaryOp::Atanh | UnaryOp::ErfInv => {
                rng.vec(4, 0.1, 0.8)
            }
            UnaryOp::Acosh => rng.vec(4, 1.2, 2.5),
            UnaryOp::Floor | UnaryOp::Ceil => rng.vec(4, 0.2, 0.8),
            _ => rng.vec(4, 0.3, 1.7),
        };
        if matches!(
            op,
            UnaryOp::Abs
                | UnaryOp::Sign
                | UnaryOp::Neg
                | UnaryOp::Sin
                | UnaryOp::Asin
                | UnaryOp::Acos
                | UnaryOp::Atanh
                | UnaryOp::ErfInv
                | UnaryOp::Atan
                | UnaryOp::Sinh
                | UnaryOp::Cosh
                | UnaryOp::Asinh
                | UnaryOp::Erf
                | UnaryOp::Cbrt
                | UnaryOp::Tan
                | UnaryOp::Square
                | UnaryOp::Floor
                | UnaryOp::Ceil
                | UnaryOp::Expm1
                | UnaryOp::Exp2
        ) {
            v[1] = -v[1];
            v[3] = -v[3];
        }
        check_all(&f, &[f64_arc(&[4], v)], 7 + i as u64);
    }
}

#[test]
fn unary_derivative_values() {
    // d/dx of each op at 0.5, by hand.
    let x = 0.5f64;
    let s = 1.0 / (1.0 + (-x).exp());
    let cases: Vec<(UnaryOp, f64)> = vec![
        (UnaryOp::Neg, -1.0),
        (UnaryOp::Exp, x.exp()),
        (UnaryOp::Log, 1.0 / x),
        (UnaryOp::Sin, x.cos()),
        (UnaryOp::Cos, -x.sin()),
        (UnaryOp::Tanh, 1.0 - x.tanh().powi(2)),
        (UnaryOp::Logistic, s * (1.0 - s)),
        (UnaryOp::Sqrt, 0.5 / x.sqrt()),
        (UnaryOp::Abs, 1.0),
        (UnaryOp::Sign, 0.0),
    ];
    for (op, want) in cases {
        let f = build(&[f64v(&[])], |b, xs| vec![un(b, op, &xs[0])]);
        let v = vjp_jaxpr(&f, &[true]).unwrap();
        let outs = run(&v.fwd, &[f64_arc(&[], vec![x])]);
        let mut bargs = outs[1..].to_vec();
        bargs.push(f64_arc(&[], vec![1.0]));
        let g = run(&v.bwd, &bargs);
        assert!(close(f64s(&g[0])[0], want, 1e-14), "{op:?}");
    }
}

#[test]
fn binary_primitives() {
    for (i, &op) in BinaryOp::ALL.iter().enumerate() {
        // Not differentiable (nextafter, polygamma in m) or not on floats.
        if !op.accepts(DType::F64) || matches!(op, BinaryOp::Nextafter | BinaryOp::Polygamma) {
            continue;
        }
        let mut rng = Rng::new(200 + i as u64);
        // Same shapes.
        let f = build(&[f64v(&[3]), f64v(&[3])], |b, x| {
            vec![bin(b, op, &x[0], &x[1])]
        });
        let x = f64_arc(&[3], rng.vec(3, 0.5, 1.5));
        let y = f64_arc(&[3], rng.vec(3, 0.5, 1.5));
        check_all(&f, &[x.clone(), y.clone()], 11 + i as u64);
        // Rank-0 operand against an array, on either side.
        let s = f64_arc(&[], vec![rng.uniform(0.5, 1.5)]);
        let f = build(&[f64v(&[]), f64v(&[3])], |b, x| {
            vec![bin(b, op, &x[0], &x[1])]
        });
        check_all(&f, &[s.clone(), y.clone()], 21 + i as u64);
        let f = build(&[f64v(&[3]), f64v(&[])], |b, x| {
            vec![bin(b, op, &x[0], &x[1])]
        });
        check_all(&f, &[x.clone(), s.clone()], 31 + i as u64);
        // One operand a literal.
        let f = build(&[f64v(&[3])], |b, x| vec![bin(b, op, &x[0], &lit(1.25))]);
        check_all(&f, std::slice::from_ref(&x), 41 + i as u64);
    }
}

#[test]
fn max_min_ties_share_equally() {
    for op in [BinaryOp::Max, BinaryOp::Min] {
        let f = build(&[f64v(&[2]), f64v(&[2])], |b, x| {
            vec![bin(b, op, &x[0], &x[1])]
        });
        let (jf, _) = jvp_jaxpr(&f, &[true, true], false).unwrap();
        let x = f64_arc(&[2], vec![1.0, 2.0]);
        let y = f64_arc(&[2], vec![1.0, 3.0]);
        let tx = f64_arc(&[2], vec![1.0, 10.0]);
        let ty = f64_arc(&[2], vec![3.0, 100.0]);
        let out = run(&jf, &[x, y, tx, ty]);
        let want = if op == BinaryOp::Max {
            [2.0, 100.0]
        } else {
            [2.0, 10.0]
        };
        assert_eq!(f64s(&out[1]), want);
    }
}

#[test]
fn pow_special_cases() {
    // d/dx x^y = y x^(y-1) as written for a float exponent: NaN at x = y = 0
    // (JAX 0.10.2); d/dy 0^y uses log(1) = 0.
    let f = build(&[f64v(&[2]), f64v(&[2])], |b, x| {
        vec![bin(b, BinaryOp::Pow, &x[0], &x[1])]
    });
    let (jf, _) = jvp_jaxpr(&f, &[true, true], false).unwrap();
    let x = f64_arc(&[2], vec![0.0, 2.0]);
    let y = f64_arc(&[2], vec![0.0, 3.0]);
    let tx = f64_arc(&[2], vec![1.0, 1.0]);
    let ty = f64_arc(&[2], vec![0.0, 1.0]);
    let out = run(&jf, &[x.clone(), y.clone(), tx, ty.clone()]);
    let t = f64s(&out[1]);
    assert!(t[0].is_nan());
    assert!(close(t[1], 3.0 * 4.0 + 2f64.ln() * 8.0, 1e-14));
    // The exponent's tangent alone: 0 at x = 0.
    let (jy, _) = jvp_jaxpr(&f, &[false, true], false).unwrap();
    let out = run(&jy, &[x, y, f64_arc(&[2], vec![1.0, 1.0])]);
    let t = f64s(&out[1]);
    assert_eq!(t[0], 0.0);
    assert!(close(t[1], 2f64.ln() * 8.0, 1e-14));
}

#[test]
fn comparisons_and_select_n() {
    for (i, &op) in CmpOp::ALL.iter().enumerate() {
        let f = build(&[f64v(&[4]), f64v(&[4])], |b, x| {
            let p = eqn(b, Primitive::Compare(op), &[x[0].clone(), x[1].clone()]);
            let s = un(b, UnaryOp::Sin, &x[0]);
            let c = bin(b, BinaryOp::Mul, &x[0], &x[1]);
            vec![eqn(b, Primitive::SelectN(SelectN), &[p.clone(), s, c]), p]
        });
        // Distinct values: finite differences must not cross a tie.
        let x = f64_arc(&[4], vec![0.1, 0.7, -0.4, 1.3]);
        let y = f64_arc(&[4], vec![0.5, 0.2, -0.3, 1.2]);
        check_all(&f, &[x, y], 300 + i as u64);
        // The bool output gets no tangent.
        let (_, nz) = jvp_jaxpr(&f, &[true, true], false).unwrap();
        assert_eq!(nz, vec![true, false]);
    }
}

#[test]
fn select_n_int_predicate_and_scalar_predicate() {
    // int32 predicate (an integer input) selecting among three cases.
    let f = build(
        &[Aval::new(vec![4], DType::I32), f64v(&[4]), f64v(&[4])],
        |b, x| {
            let e = un(b, UnaryOp::Exp, &x[1]);
            vec![eqn(
                b,
                Primitive::SelectN(SelectN),
                &[x[0].clone(), x[1].clone(), e, x[2].clone()],
            )]
        },
    );
    let p = Arc::new(HostArray::new(vec![4], Buffer::I32(vec![0, 1, 2, 1].into())).unwrap());
    let mut rng = Rng::new(5);
    check_all(
        &f,
        &[
            p,
            rand_arr(&mut rng, &[4], -1.0, 1.0),
            rand_arr(&mut rng, &[4], -1.0, 1.0),
        ],
        5,
    );
    // Scalar bool predicate; only the second case is differentiated.
    let f = build(&[f64v(&[3])], |b, x| {
        let p = eqn(b, Primitive::Compare(CmpOp::Gt), &[lit(1.0), lit(0.0)]);
        let z = b.zeros(&f64v(&[3])).unwrap();
        vec![eqn(b, Primitive::SelectN(SelectN), &[p, z, x[0].clone()])]
    });
    check_all(&f, &[rand_arr(&mut rng, &[3], -1.0, 1.0)], 6);
}

#[test]
fn integer_pow() {
    for (i, y) in [-2, 0, 1, 2, 3, 5].into_iter().enumerate() {
        let f = build(&[f64v(&[3])], |b, x| {
            vec![eqn(
                b,
                Primitive::IntegerPow(IntegerPow { y }),
                &[x[0].clone()],
            )]
        });
        let x = f64_arc(&[3], vec![0.7, -1.2, 1.5]);
        check_all(&f, &[x], 400 + i as u64);
    }
}

#[test]
fn convert_element_type() {
    // float -> int -> float has a zero derivative; float -> float is linear.
    let f = build(&[f64v(&[3])], |b, x| {
        let i = eqn(b, common::convert(DType::I32), &[x[0].clone()]);
        let back = eqn(b, common::convert(DType::F64), std::slice::from_ref(&i));
        let y = bin(b, BinaryOp::Mul, &x[0], &back);
        vec![y, i]
    });
    let x = f64_arc(&[3], vec![1.3, 2.6, -0.4]);
    check_all(&f, &[x], 9);
    let (jf, nz) = jvp_jaxpr(&f, &[true], false).unwrap();
    assert_eq!(nz, vec![true, false]);
    typecheck(&jf).unwrap();

    // f64 -> f32 -> f64: tangent goes through the same conversion.
    let f = build(&[f64v(&[2])], |b, x| {
        let s = eqn(b, common::convert(DType::F32), &[x[0].clone()]);
        let s = un(b, UnaryOp::Sin, &s);
        vec![eqn(b, common::convert(DType::F64), &[s])]
    });
    let (jf, _) = jvp_jaxpr(&f, &[true], false).unwrap();
    let out = run(
        &jf,
        &[
            f64_arc(&[2], vec![0.25, 1.0]),
            f64_arc(&[2], vec![1.0, 2.0]),
        ],
    );
    let t = f64s(&out[1]);
    assert!((t[0] - 0.25f64.cos()).abs() < 1e-6);
    assert!((t[1] - 2.0 * 1.0f64.cos()).abs() < 1e-6);
    let v = vjp_jaxpr(&f, &[true]).unwrap();
    let fo = run(&v.fwd, &[f64_arc(&[2], vec![0.25, 1.0])]);
    let mut bargs = fo[1..].to_vec();
    bargs.push(f64_arc(&[2], vec![1.0, 2.0]));
    let g = f64s(&run(&v.bwd, &bargs)[0]);
    assert!((g[0] - 0.25f64.cos()).abs() < 1e-6);
    assert!((g[1] - 2.0 * 1.0f64.cos()).abs() < 1e-6);
}

#[test]
fn structural_primitives() {
    let mut rng = Rng::new(77);
    let cases: Vec<(Vec<usize>, Primitive)> = vec![
        (vec![3, 1], broadcast_in_dim(&[2, 3, 4], &[1, 2])),
        (vec![], broadcast_in_dim(&[2, 2], &[])),
        (vec![1, 3], broadcast_in_dim(&[1, 3], &[0, 1])),
        (vec![2, 3], reshape(&[3, 2])),
        (vec![2, 3], reshape(&[6])),
        (vec![2, 3, 4], transpose(&[2, 0, 1])),
        (vec![2, 1, 3, 1], squeeze(&[1, 3])),
        (vec![2, 3, 4], reduce(ReduceOp::Sum, &[0, 2])),
        (vec![2, 3], reduce(ReduceOp::Sum, &[])),
        (vec![3, 4], reduce(ReduceOp::Max, &[1])),
        (vec![3, 4], reduce(ReduceOp::Max, &[0, 1])),
    ];
    for (i, (shape, p)) in cases.into_iter().enumerate() {
        // Square the result so the VJP has a non-trivial residual.
        let f = build(&[f64v(&shape)], |b, x| {
            let y = eqn(b, p.clone(), &[x[0].clone()]);
            vec![bin(b, BinaryOp::Mul, &y, &y)]
        });
        let x = rand_arr(&mut rng, &shape, -1.0, 1.0);
        check_all(&f, &[x], 500 + i as u64);
    }
}

#[test]
fn broadcast_and_reduce_transposes() {
    // Transpose of broadcast_in_dim sums over the new and expanded axes.
    let f = build(&[f64v(&[3, 1])], |b, x| {
        vec![eqn(
            b,
            broadcast_in_dim(&[2, 3, 4], &[1, 2]),
            &[x[0].clone()],
        )]
    });
    let t = transpose_jaxpr(&f, &[true]).unwrap();
    let ct: Vec<f64> = (0..24).map(|i| i as f64).collect();
    let out = f64s(&run(&t, &[f64_arc(&[2, 3, 4], ct.clone())])[0]);
    let mut want = vec![0.0; 3];
    for i in 0..2 {
        for j in 0..3 {
            for k in 0..4 {
                want[j] += ct[i * 12 + j * 4 + k];
            }
        }
    }
    assert_eq!(out, want);
    assert_eq!(t.out_avals().unwrap()[0].shape, vec![3, 1]);
    // Transpose of reduce_sum broadcasts back.
    let f = build(&[f64v(&[2, 3])], |b, x| {
        vec![eqn(b, reduce(ReduceOp::Sum, &[1]), &[x[0].clone()])]
    });
    let t = transpose_jaxpr(&f, &[true]).unwrap();
    let out = f64s(&run(&t, &[f64_arc(&[2], vec![5.0, 7.0])])[0]);
    assert_eq!(out, vec![5.0, 5.0, 5.0, 7.0, 7.0, 7.0]);
}

#[test]
fn reduce_max_ties_share_equally() {
    let f = build(&[f64v(&[4])], |b, x| {
        vec![eqn(b, reduce(ReduceOp::Max, &[0]), &[x[0].clone()])]
    });
    let v = vjp_jaxpr(&f, &[true]).unwrap();
    let fo = run(&v.fwd, &[f64_arc(&[4], vec![1.0, 3.0, 3.0, 2.0])]);
    let mut bargs = fo[1..].to_vec();
    bargs.push(f64_arc(&[], vec![1.0]));
    assert_eq!(f64s(&run(&v.bwd, &bargs)[0]), vec![0.0, 0.5, 0.5, 0.0]);
}

#[test]
fn dot_general_variants() {
    let mut rng = Rng::new(88);
    let cases: Vec<(Vec<usize>, Vec<usize>, Primitive)> = vec![
        // matmul
        (vec![2, 3], vec![3, 4], dot_general(&[1], &[0], &[], &[])),
        // matvec, vecvec, outer product
        (vec![2, 3], vec![3], dot_general(&[1], &[0], &[], &[])),
        (vec![3], vec![3], dot_general(&[0], &[0], &[], &[])),
        (vec![2], vec![3], dot_general(&[], &[], &[], &[])),
        // contraction over the first lhs axis and the last rhs axis
        (vec![3, 2], vec![4, 3], dot_general(&[0], &[1], &[], &[])),
        // batch dims (not leading, unsorted) and two contracting dims
        (
            vec![3, 2, 4, 5],
            vec![5, 4, 2, 3, 6],
            dot_general(&[2, 3], &[1, 0], &[1, 0], &[2, 3]),
        ),
        (
            vec![2, 3, 4],
            vec![2, 4, 5],
            dot_general(&[2], &[1], &[0], &[0]),
        ),
    ];
    for (i, (ls, rs, p)) in cases.into_iter().enumerate() {
        let f = build(&[f64v(&ls), f64v(&rs)], |b, x| {
            let y = eqn(b, p.clone(), &[x[0].clone(), x[1].clone()]);
            vec![un(b, UnaryOp::Tanh, &y)]
        });
        let l = rand_arr(&mut rng, &ls, -1.0, 1.0);
        let r = rand_arr(&mut rng, &rs, -1.0, 1.0);
        check_all(&f, &[l, r], 600 + i as u64);
    }
}

/// The cotangents of a matrix product come out in their operands' layouts
/// without a transpose: `ct · w^T` for the left operand, `x^T · ct` (the
/// product taken with the operands swapped) for the right one; with the
/// contraction on the left operand's first axis the right operand's
/// cotangent `x · ct` is direct too. Values are checked by `check_all`.
#[test]
fn dot_general_cotangents_need_no_transpose() {
    let mut rng = Rng::new(89);
    let cases: Vec<(Vec<usize>, Vec<usize>, Primitive)> = vec![
        (vec![5, 3], vec![3, 4], dot_general(&[1], &[0], &[], &[])),
        (vec![3, 5], vec![3, 4], dot_general(&[0], &[0], &[], &[])),
        (
            vec![2, 5, 3],
            vec![2, 3, 4],
            dot_general(&[2], &[1], &[0], &[0]),
        ),
    ];
    for (i, (ls, rs, p)) in cases.into_iter().enumerate() {
        let f = build(&[f64v(&ls), f64v(&rs)], |b, x| {
            let y = eqn(b, p.clone(), &[x[0].clone(), x[1].clone()]);
            vec![un(b, UnaryOp::Tanh, &y)]
        });
        let v = vjp_jaxpr(&f, &[true, true]).unwrap();
        let transposes = v
            .bwd
            .jaxpr
            .eqns
            .iter()
            .filter(|e| matches!(e.prim, Primitive::Transpose(_)))
            .count();
        assert_eq!(transposes, 0, "case {i}: {}", v.bwd);
        let l = rand_arr(&mut rng, &ls, -1.0, 1.0);
        let r = rand_arr(&mut rng, &rs, -1.0, 1.0);
        check_all(&f, &[l, r], 700 + i as u64);
    }
}

#[test]
fn iota_and_consts() {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(f64v(&[3])).unwrap());
    let c = Atom::Var(
        b.add_const(f64_arc(&[3], vec![0.5, -1.0, 2.0]), false)
            .unwrap(),
    );
    let io = eqn(&mut b, iota(DType::F64, &[3], 0), &[]);
    let y = bin(&mut b, BinaryOp::Mul, &x, &io);
    let y = bin(&mut b, BinaryOp::Mul, &y, &c);
    let y = un(&mut b, UnaryOp::Sin, &y);
    let f = b.build(vec![y]).unwrap();
    check_all(&f, &[f64_arc(&[3], vec![0.3, 0.6, 0.9])], 12);
    // The gradient: cos(x*i*c) * i * c.
    let v = vjp_jaxpr(&f, &[true]).unwrap();
    let xv = [0.3, 0.6, 0.9];
    let cv = [0.5, -1.0, 2.0];
    let fo = run(&v.fwd, &[f64_arc(&[3], xv.to_vec())]);
    let mut bargs = fo[1..].to_vec();
    bargs.push(f64_arc(&[3], vec![1.0; 3]));
    let g = f64s(&run(&v.bwd, &bargs)[0]);
    for k in 0..3 {
        let a = k as f64 * cv[k];
        assert!(close(g[k], (xv[k] * a).cos() * a, 1e-14));
    }
}

#[test]
fn pjit_nesting() {
    let inner = build(&[f64v(&[3]), f64v(&[3])], |b, x| {
        let s = un(b, UnaryOp::Sin, &x[0]);
        let p = bin(b, BinaryOp::Mul, &s, &x[1]);
        vec![p, x[0].clone()]
    });
    let middle = build(&[f64v(&[3]), f64v(&[3])], |b, x| {
        let e = un(b, UnaryOp::Exp, &x[1]);
        let outs = pjit(b, inner.clone(), &[x[0].clone(), e]);
        let t = un(b, UnaryOp::Tanh, &outs[0]);
        vec![t, outs[1].clone()]
    });
    let f = build(&[f64v(&[3]), f64v(&[3])], |b, x| {
        let outs = pjit(b, middle.clone(), &[x[0].clone(), x[1].clone()]);
        let s = bin(b, BinaryOp::Add, &outs[0], &x[1]);
        let r = eqn(b, reduce(ReduceOp::Sum, &[0]), &[s]);
        vec![r, outs[1].clone()]
    });
    let mut rng = Rng::new(3);
    let x = rand_arr(&mut rng, &[3], -1.0, 1.0);
    let y = rand_arr(&mut rng, &[3], -1.0, 1.0);
    check_all(&f, &[x.clone(), y.clone()], 13);
    // The transformed programs keep the nesting.
    let v = vjp_jaxpr(&f, &[true, true]).unwrap();
    let has_pjit = |j: &ClosedJaxpr| {
        j.jaxpr
            .eqns
            .iter()
            .any(|e| matches!(e.prim, Primitive::Pjit(Pjit { .. })))
    };
    assert!(has_pjit(&v.fwd));
    assert!(has_pjit(&v.bwd));
    let (jf, _) = jvp_jaxpr(&f, &[true, false], false).unwrap();
    assert!(has_pjit(&jf));
    // A pjit differentiated only in some inputs.
    check_all(&middle, &[x, y], 14);
}

// ------------ stop_gradient, products at zeros, scans, reductions, clamp

#[test]
fn stop_gradient_has_zero_derivative() {
    let f = build(&[f64v(&[3])], |b, x| {
        let s = eqn(b, Primitive::StopGradient(StopGradient), &[x[0].clone()]);
        vec![bin(b, BinaryOp::Mul, &s, &x[0])]
    });
    let (jf, _) = jvp_jaxpr(&f, &[true], false).unwrap();
    let x = f64_arc(&[3], vec![1.0, 2.0, -3.0]);
    let t = f64_arc(&[3], vec![1.0, 1.0, 1.0]);
    let out = run(&jf, &[x, t]);
    // d/dx [stop(x) * x] = stop(x)
    assert_eq!(f64s(&out[1]), vec![1.0, 2.0, -3.0]);
    assert!(transpose_jaxpr(&f, &[true]).is_err());
}

#[test]
fn reduce_prod_and_cumprod_exact_at_zeros() {
    use microjax::prims::CumOp;
    // d/dx_i prod(x) = prod of the others, including at zeros.
    let f = build(&[f64v(&[4])], |b, x| {
        vec![eqn(b, reduce(ReduceOp::Prod, &[0]), &[x[0].clone()])]
    });
    let v = vjp_jaxpr(&f, &[true]).unwrap();
    for (xs, want) in [
        (vec![2.0, 3.0, 0.0, 5.0], vec![0.0, 0.0, 30.0, 0.0]),
        (vec![2.0, 0.0, 0.0, 5.0], vec![0.0, 0.0, 0.0, 0.0]),
        (vec![2.0, 3.0, 4.0, 5.0], vec![60.0, 40.0, 30.0, 24.0]),
    ] {
        let outs = run(&v.fwd, &[f64_arc(&[4], xs)]);
        let mut bargs = outs[1..].to_vec();
        bargs.push(f64_arc(&[], vec![1.0]));
        let g = run(&v.bwd, &bargs);
        assert_close_vec(&f64s(&g[0]), &want, 1e-14, "reduce_prod grad");
    }
    // cumprod: J[i][j] = prod_{k<=i, k!=j} x_k; check J^T 1 at a zero.
    let f = build(&[f64v(&[3])], |b, x| {
        vec![eqn(
            b,
            Primitive::Cumulative(Cumulative {
                op: CumOp::Prod,
                axis: 0,
                reverse: false,
            }),
            &[x[0].clone()],
        )]
    });
    let v = vjp_jaxpr(&f, &[true]).unwrap();
    let outs = run(&v.fwd, &[f64_arc(&[3], vec![2.0, 0.0, 3.0])]);
    let mut bargs = outs[1..].to_vec();
    bargs.push(f64_arc(&[3], vec![1.0, 1.0, 1.0]));
    let g = run(&v.bwd, &bargs);
    // y = (x0, x0 x1, x0 x1 x2): grads (1 + x1 + x1 x2, x0 + x0 x2, x0 x1)
    assert_close_vec(&f64s(&g[0]), &[1.0, 8.0, 0.0], 1e-14, "cumprod grad");
}

#[test]
fn scans_prod_min_and_clamp_full_check() {
    use microjax::prims::CumOp;
    let mut rng = Rng::new(901);
    for op in [
        CumOp::Sum,
        CumOp::Prod,
        CumOp::Max,
        CumOp::Min,
        CumOp::Logsumexp,
    ] {
        for reverse in [false, true] {
            let f = build(&[f64v(&[2, 4])], |b, x| {
                vec![eqn(
                    b,
                    Primitive::Cumulative(Cumulative {
                        op,
                        axis: 1,
                        reverse,
                    }),
                    &[x[0].clone()],
                )]
            });
            check_all(&f, &[rand_arr(&mut rng, &[2, 4], 0.5, 2.0)], 77);
        }
    }
    for op in [ReduceOp::Prod, ReduceOp::Min] {
        let f = build(&[f64v(&[3, 4])], |b, x| {
            vec![eqn(
                b,
                Primitive::Reduce(Reduce { op, axes: vec![0] }),
                &[x[0].clone()],
            )]
        });
        check_all(&f, &[rand_arr(&mut rng, &[3, 4], 0.5, 2.0)], 78);
    }
    // clamp with a scalar lower bound and an array upper bound.
    let f = build(&[f64v(&[]), f64v(&[6]), f64v(&[6])], |b, x| {
        vec![eqn(b, Primitive::Clamp(Clamp), x)]
    });
    let xs = [
        f64_arc(&[], vec![-0.5]),
        f64_arc(&[6], vec![-1.0, -0.2, 0.3, 0.9, 1.7, 0.1]),
        f64_arc(&[6], vec![0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
    ];
    check_all(&f, &xs, 79);
}
