//! End-to-end autodiff: grad of programs, symbolic zeros, DCE, int inputs, errors, MLP layers.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::prims::{BroadcastInDim, ConvertElementType, IntegerPow, Pjit};
use microjax::transforms::{
    dce_closed, dce_jaxpr, dce_owned, jvp_jaxpr, linearize_jaxpr, transpose_jaxpr, vjp_jaxpr,
};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, DType, HostArray, Primitive, ReduceOp,
    UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::autodiff::{bin, check_all, close, eqn, lit, pjit, rand_arr, run, un};
use common::{broadcast_in_dim, build, dot_general, f64_arc, f64s, f64v, reduce, Rng};

// ----------------------------------------------------------- end to end

/// f(x) = 3x^3 + 2x^2 + 2x
fn cubic() -> ClosedJaxpr {
    build(&[f64v(&[])], |b, x| {
        let x3 = eqn(
            b,
            Primitive::IntegerPow(IntegerPow { y: 3 }),
            &[x[0].clone()],
        );
        let a = bin(b, BinaryOp::Mul, &lit(3.0), &x3);
        let x2 = eqn(
            b,
            Primitive::IntegerPow(IntegerPow { y: 2 }),
            &[x[0].clone()],
        );
        let c = bin(b, BinaryOp::Mul, &x2, &lit(2.0));
        let d = bin(b, BinaryOp::Mul, &lit(2.0), &x[0]);
        let s = bin(b, BinaryOp::Add, &a, &c);
        vec![bin(b, BinaryOp::Add, &s, &d)]
    })
}

/// grad f as one program: fwd and bwd as pjits with a unit cotangent.
fn grad_program(f: &ClosedJaxpr) -> ClosedJaxpr {
    let v = vjp_jaxpr(f, &[true]).unwrap();
    build(&[f64v(&[])], |b, x| {
        let outs = pjit(b, v.fwd.clone(), &[x[0].clone()]);
        let mut ins = outs[1..].to_vec();
        ins.push(lit(1.0));
        pjit(b, v.bwd.clone(), &ins)
    })
}

#[test]
fn grad_and_second_derivative_of_cubic() {
    let f = cubic();
    let g = grad_program(&f);
    let two = f64_arc(&[], vec![2.0]);
    assert_eq!(f64s(&run(&g, std::slice::from_ref(&two))[0]), vec![46.0]);
    let (jg, nz) = jvp_jaxpr(&g, &[true], false).unwrap();
    assert_eq!(nz, vec![true]);
    let out = run(&jg, &[two.clone(), f64_arc(&[], vec![1.0])]);
    assert_eq!(f64s(&out[0]), vec![46.0]);
    assert_eq!(f64s(&out[1]), vec![40.0]);
    // grad of grad (reverse over reverse) agrees.
    let gg = grad_program(&g);
    assert_eq!(f64s(&run(&gg, std::slice::from_ref(&two))[0]), vec![40.0]);
    // Third derivative: 18.
    let ggg = grad_program(&gg);
    assert_eq!(f64s(&run(&ggg, &[two])[0]), vec![18.0]);
}

#[test]
fn symbolic_zeros() {
    // The output does not depend on y.
    let f = build(&[f64v(&[3]), f64v(&[3])], |b, x| {
        vec![un(b, UnaryOp::Sin, &x[0])]
    });
    // JVP in y only: no tangent, and no tangent equations.
    let (jf, nz) = jvp_jaxpr(&f, &[false, true], false).unwrap();
    assert_eq!(nz, vec![false]);
    assert_eq!(jf.jaxpr.eqns.len(), 1);
    assert_eq!(jf.jaxpr.outvars.len(), 1);
    // Instantiated: a zero tangent.
    let (jf, nz) = jvp_jaxpr(&f, &[false, true], true).unwrap();
    assert_eq!(nz, vec![true]);
    let out = run(
        &jf,
        &[
            f64_arc(&[3], vec![1.0; 3]),
            f64_arc(&[3], vec![1.0; 3]),
            f64_arc(&[3], vec![1.0; 3]),
        ],
    );
    assert_eq!(f64s(&out[1]), vec![0.0; 3]);
    // VJP: the cotangent of y is an instantiated zero that reads nothing.
    let v = vjp_jaxpr(&f, &[true, true]).unwrap();
    let fo = run(
        &v.fwd,
        &[f64_arc(&[3], vec![0.5; 3]), f64_arc(&[3], vec![2.0; 3])],
    );
    let mut bargs = fo[1..].to_vec();
    bargs.push(f64_arc(&[3], vec![1.0; 3]));
    let cts = run(&v.bwd, &bargs);
    assert_eq!(f64s(&cts[1]), vec![0.0; 3]);
    assert!(close(f64s(&cts[0])[0], 0.5f64.cos(), 1e-15));
    // The zero is a single broadcast of a literal.
    let y_out = &v.bwd.jaxpr.outvars[1];
    let producer = v
        .bwd
        .jaxpr
        .eqns
        .iter()
        .find(|e| Some(&Atom::Var(e.outputs[0])) == Some(y_out))
        .unwrap();
    assert!(matches!(
        producer.prim,
        Primitive::BroadcastInDim(BroadcastInDim { .. })
    ));
    assert!(matches!(producer.inputs[0], Atom::Lit(_)));
    // A linear map independent of its input: transpose gives zeros.
    let t = transpose_jaxpr(&f, &[false, true]).unwrap();
    let out = run(
        &t,
        &[f64_arc(&[3], vec![1.0; 3]), f64_arc(&[3], vec![1.0; 3])],
    );
    assert_eq!(f64s(&out[0]), vec![0.0; 3]);
}

#[test]
fn dce_removes_unused_equations() {
    let f = build(&[f64v(&[3]), f64v(&[3]), f64v(&[3])], |b, x| {
        let a = un(b, UnaryOp::Sin, &x[0]);
        let _dead = un(b, UnaryOp::Exp, &a);
        let c = un(b, UnaryOp::Cos, &x[1]);
        let d = bin(b, BinaryOp::Mul, &a, &lit(2.0));
        vec![d, c]
    });
    assert_eq!(f.jaxpr.eqns.len(), 4);
    let (g, used) = dce_jaxpr(&f, &[true, true]).unwrap();
    assert_eq!(g.jaxpr.eqns.len(), 3);
    assert_eq!(used, vec![true, true, false]);
    assert_eq!(g.jaxpr.invars.len(), 2);
    let (g, used) = dce_jaxpr(&f, &[true, false]).unwrap();
    assert_eq!(g.jaxpr.eqns.len(), 2);
    assert_eq!(used, vec![true, false, false]);
    let out = run(&g, &[f64_arc(&[3], vec![0.5; 3])]);
    assert_eq!(f64s(&out[0]), vec![2.0 * 0.5f64.sin(); 3]);
    // DCE prunes inside pjit too.
    let outer = build(&[f64v(&[3]), f64v(&[3]), f64v(&[3])], |b, x| {
        let outs = pjit(b, f.clone(), x);
        vec![outs[0].clone()]
    });
    let (g, used) = dce_jaxpr(&outer, &[true]).unwrap();
    assert_eq!(used, vec![true, false, false]);
    let Primitive::Pjit(Pjit { jaxpr, .. }) = &g.jaxpr.eqns[0].prim else {
        panic!()
    };
    assert_eq!(jaxpr.jaxpr.eqns.len(), 2);
    assert_eq!(g.jaxpr.eqns[0].inputs.len(), 1);
}

#[test]
fn dce_of_an_owned_program_equals_dce_of_a_borrowed_one() {
    // `dce_owned` moves equations and avals out of a program it owns;
    // the result is the one `dce_closed` copies out (dense numbering, the
    // dead `exp` and its aval gone), whether or not the program is shared.
    let f = build(&[f64v(&[3]), f64v(&[2])], |b, x| {
        let a = un(b, UnaryOp::Sin, &x[0]);
        let _dead = un(b, UnaryOp::Exp, &a);
        let c = un(b, UnaryOp::Cos, &x[1]);
        vec![bin(b, BinaryOp::Mul, &a, &lit(2.0)), c]
    });
    let borrowed = dce_closed(&f).unwrap();
    assert_eq!(borrowed.jaxpr.eqns.len(), 3);
    assert_eq!(borrowed.jaxpr.avals.len(), 5);
    let shared = dce_owned(f.clone()).unwrap();
    let fresh = f.jaxpr.as_ref().clone();
    let owned = dce_owned(ClosedJaxpr::new(fresh, f.consts.clone())).unwrap();
    assert_eq!(owned, borrowed);
    assert_eq!(shared, borrowed);
    let x = [f64_arc(&[3], vec![0.5; 3]), f64_arc(&[2], vec![0.25; 2])];
    let (want, got) = (run(&f, &x), run(&owned, &x));
    assert_eq!(f64s(&got[0]), f64s(&want[0]));
    assert_eq!(f64s(&got[1]), f64s(&want[1]));
    // A variable bound by two equations is a malformed program.
    let mut twice = f.jaxpr.as_ref().clone();
    let first = twice.eqns[0].outputs[0];
    twice.eqns[2].outputs[0] = first;
    let err = dce_owned(ClosedJaxpr::new(twice, vec![])).unwrap_err();
    assert!(err.to_string().contains("bound twice"), "{err}");
}

#[test]
fn int_inputs() {
    // f(x, n) = x * convert(n) + sin(x)
    let f = build(&[f64v(&[3]), Aval::new(vec![3], DType::I32)], |b, x| {
        let nf = eqn(
            b,
            Primitive::ConvertElementType(ConvertElementType {
                new_dtype: DType::F64,
                weak_type: false,
            }),
            &[x[1].clone()],
        );
        let p = bin(b, BinaryOp::Mul, &x[0], &nf);
        let s = un(b, UnaryOp::Sin, &x[0]);
        vec![bin(b, BinaryOp::Add, &p, &s), x[1].clone()]
    });
    let n = Arc::new(HostArray::new(vec![3], Buffer::I32(vec![1, -2, 3].into())).unwrap());
    let x = f64_arc(&[3], vec![0.1, 0.2, 0.3]);
    check_all(&f, &[x.clone(), n.clone()], 15);
    // Asking for a tangent of the int input: a float0 tangent input and a
    // float0 cotangent output.
    let (jf, nz) = jvp_jaxpr(&f, &[true, true], true).unwrap();
    assert_eq!(nz, vec![true, true]);
    let ins = jf.in_avals().unwrap();
    assert_eq!(ins[3].dtype, DType::Float0);
    assert_eq!(jf.out_avals().unwrap()[3].dtype, DType::Float0);
    let v = vjp_jaxpr(&f, &[true, true]).unwrap();
    let outs = v.bwd.out_avals().unwrap();
    assert_eq!(outs[0].dtype, DType::F64);
    assert_eq!(outs[1].dtype, DType::Float0);
    let fo = run(&v.fwd, &[x, n]);
    let mut bargs = fo[2..].to_vec();
    bargs.push(f64_arc(&[3], vec![1.0; 3]));
    bargs.push(Arc::new(HostArray::zeros(vec![3], DType::Float0).unwrap()));
    let cts = run(&v.bwd, &bargs);
    let g = f64s(&cts[0]);
    for (k, (xv, nv)) in [(0.1f64, 1.0), (0.2, -2.0), (0.3, 3.0)].iter().enumerate() {
        assert!(close(g[k], nv + xv.cos(), 1e-15));
    }
    assert_eq!(cts[1].dtype(), DType::Float0);
}

#[test]
fn half_precision_tangents_keep_their_dtype() {
    for dt in [DType::F16, DType::BF16, DType::F32] {
        let f = build(&[Aval::new(vec![2], dt)], |b, x| {
            let s = un(b, UnaryOp::Sin, &x[0]);
            vec![bin(b, BinaryOp::Mul, &s, &Builder::lit(dt, 3.0))]
        });
        let (jf, _) = jvp_jaxpr(&f, &[true], false).unwrap();
        assert_eq!(jf.in_avals().unwrap()[1].dtype, dt);
        assert_eq!(jf.out_avals().unwrap()[1].dtype, dt);
        let v = vjp_jaxpr(&f, &[true]).unwrap();
        assert_eq!(v.bwd.out_avals().unwrap()[0].dtype, dt);
    }
}

#[test]
fn transposing_nonlinear_programs_is_an_error() {
    let f = build(&[f64v(&[3])], |b, x| vec![un(b, UnaryOp::Sin, &x[0])]);
    let e = transpose_jaxpr(&f, &[true]).unwrap_err();
    assert!(e.to_string().contains("sin"), "{e}");
    let f = build(&[f64v(&[3])], |b, x| {
        vec![bin(b, BinaryOp::Mul, &x[0], &x[0])]
    });
    assert!(transpose_jaxpr(&f, &[true]).is_err());
    // Linear in one input, the other known: fine.
    let f = build(&[f64v(&[3]), f64v(&[3])], |b, x| {
        let s = un(b, UnaryOp::Sin, &x[0]);
        vec![bin(b, BinaryOp::Mul, &s, &x[1])]
    });
    let t = transpose_jaxpr(&f, &[false, true]).unwrap();
    let out = run(
        &t,
        &[f64_arc(&[3], vec![0.5; 3]), f64_arc(&[3], vec![2.0; 3])],
    );
    assert_eq!(f64s(&out[0]), vec![2.0 * 0.5f64.sin(); 3]);
}

#[test]
fn bad_arguments_are_errors() {
    let f = build(&[f64v(&[3])], |b, x| vec![un(b, UnaryOp::Sin, &x[0])]);
    assert!(jvp_jaxpr(&f, &[true, true], false).is_err());
    assert!(vjp_jaxpr(&f, &[]).is_err());
    assert!(transpose_jaxpr(&f, &[]).is_err());
    assert!(dce_jaxpr(&f, &[]).is_err());
}

#[test]
fn composite_mlp_layer() {
    // loss(W, x, b) = sum(tanh(x @ W + b)^2) / max(x)
    let f = build(&[f64v(&[3, 4]), f64v(&[2, 3]), f64v(&[4])], |b, x| {
        let h = eqn(
            b,
            dot_general(&[1], &[0], &[], &[]),
            &[x[1].clone(), x[0].clone()],
        );
        let bb = eqn(b, broadcast_in_dim(&[2, 4], &[1]), &[x[2].clone()]);
        let h = bin(b, BinaryOp::Add, &h, &bb);
        let a = un(b, UnaryOp::Tanh, &h);
        let a2 = eqn(b, Primitive::IntegerPow(IntegerPow { y: 2 }), &[a]);
        let s = eqn(b, reduce(ReduceOp::Sum, &[0, 1]), &[a2]);
        let m = eqn(b, reduce(ReduceOp::Max, &[0, 1]), &[x[1].clone()]);
        vec![bin(b, BinaryOp::Div, &s, &m)]
    });
    let mut rng = Rng::new(42);
    let w = rand_arr(&mut rng, &[3, 4], -1.0, 1.0);
    let x = rand_arr(&mut rng, &[2, 3], 0.2, 1.0);
    let bias = rand_arr(&mut rng, &[4], -1.0, 1.0);
    check_all(&f, &[w, x, bias], 16);
}

/// Every primitive of a program (recursing into pjit).
fn prim_names(j: &ClosedJaxpr, out: &mut Vec<&'static str>) {
    for e in &j.jaxpr.eqns {
        out.push(e.prim.name());
        if let Primitive::Pjit(Pjit { jaxpr, .. }) = &e.prim {
            prim_names(jaxpr, out);
        }
    }
}

fn mlp_like() -> ClosedJaxpr {
    build(&[f64v(&[3, 4]), f64v(&[2, 3])], |b, x| {
        let h = eqn(
            b,
            dot_general(&[1], &[0], &[], &[]),
            &[x[1].clone(), x[0].clone()],
        );
        let inner = build(&[f64v(&[2, 4])], |b, y| {
            let t = un(b, UnaryOp::Tanh, &y[0]);
            let m = eqn(b, reduce(ReduceOp::Max, &[1]), std::slice::from_ref(&t));
            let e = un(b, UnaryOp::Exp, &m);
            vec![e, t]
        });
        let outs = pjit(b, inner, &[h]);
        let l = un(b, UnaryOp::Log, &outs[0]);
        let mx = bin(b, BinaryOp::Max, &outs[1], &lit(0.1));
        vec![l, mx]
    })
}

#[test]
fn tangent_part_is_linear_and_reads_only_residuals() {
    let f = mlp_like();
    let lin = linearize_jaxpr(&f, &[true, true]).unwrap();
    let mut names = Vec::new();
    prim_names(&lin.tangent, &mut names);
    let linear = [
        "mul",
        "div",
        "add",
        "sub",
        "neg",
        "reduce_sum",
        "broadcast_in_dim",
        "reshape",
        "transpose",
        "squeeze",
        "convert_element_type",
        "dot_general",
        "select_n",
        "pjit",
    ];
    for n in &names {
        assert!(linear.contains(n), "non-linear {n} in the tangent part");
    }
    // Everything non-linear was evaluated in the primal part.
    let mut pnames = Vec::new();
    prim_names(&lin.primal, &mut pnames);
    for n in ["tanh", "exp", "log", "reduce_max", "eq"] {
        assert!(pnames.contains(&n), "{n} missing from the primal part");
    }
    assert!(lin.num_res > 0);
    let mut rng = Rng::new(21);
    let w = rand_arr(&mut rng, &[3, 4], -1.0, 1.0);
    let x = rand_arr(&mut rng, &[2, 3], -1.0, 1.0);
    check_all(&f, &[w, x], 22);
}

#[test]
fn transformed_programs_round_trip_through_canonical_text() {
    use microjax::ir::canonical::{canonical, parse_with_consts, ParseLimits};
    let rt = |j: &ClosedJaxpr| {
        let text = canonical(j);
        let back = parse_with_consts(&text, j.consts.clone(), &ParseLimits::default()).unwrap();
        assert_eq!(&back, j, "{text}");
    };
    let f = mlp_like();
    let (jf, _) = jvp_jaxpr(&f, &[true, false], true).unwrap();
    rt(&jf);
    let v = vjp_jaxpr(&f, &[true, true]).unwrap();
    rt(&v.fwd);
    rt(&v.bwd);
    // float0 zeros for an integer output.
    let g = build(&[f64v(&[3]), Aval::new(vec![3], DType::I32)], |b, x| {
        vec![un(b, UnaryOp::Sin, &x[0]), x[1].clone()]
    });
    let (jg, _) = jvp_jaxpr(&g, &[true, false], true).unwrap();
    rt(&jg);
    let v = vjp_jaxpr(&g, &[true, true]).unwrap();
    rt(&v.bwd);
}
