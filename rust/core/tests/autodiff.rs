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
    clippy::arithmetic_side_effects,
    clippy::type_complexity,
    clippy::needless_range_loop,
    clippy::cloned_ref_to_slice_refs
)]

use microjax::exec::interp::eval_closed;
use microjax::ir::typecheck::typecheck;
use microjax::transforms::{
    dce_jaxpr, jvp_jaxpr, linearize_jaxpr, transpose_jaxpr, value_and_grad_jaxpr, vjp_jaxpr,
};
use microjax::Error;
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, CmpOp, DType, HostArray, Primitive,
    ReduceOp, Scalar, UnaryOp,
};
use std::sync::Arc;

mod common;
use common::{build, dot_general, f64_arc, f64s, f64v, inner, Rng};

// ------------------------------------------------------------- helpers

fn rand_arr(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> Arc<HostArray> {
    let n = shape.iter().product();
    f64_arc(shape, rng.vec(n, lo, hi))
}

fn is_f64(a: &HostArray) -> bool {
    a.dtype() == DType::F64
}

fn run(j: &ClosedJaxpr, args: &[Arc<HostArray>]) -> Vec<Arc<HostArray>> {
    eval_closed(j, args).unwrap()
}

fn un(b: &mut Builder, op: UnaryOp, x: &Atom) -> Atom {
    b.unary(op, x.clone()).unwrap()
}

fn bin(b: &mut Builder, op: BinaryOp, x: &Atom, y: &Atom) -> Atom {
    b.binary(op, x.clone(), y.clone()).unwrap()
}

fn eqn(b: &mut Builder, p: Primitive, ins: &[Atom]) -> Atom {
    b.add_eqn1(p, ins.to_vec()).unwrap()
}

fn lit(v: f64) -> Atom {
    Builder::lit(DType::F64, v)
}

fn pjit(b: &mut Builder, j: ClosedJaxpr, ins: &[Atom]) -> Vec<Atom> {
    b.add_eqn(
        Primitive::Pjit {
            jaxpr: Arc::new(j),
            name: "inner".into(),
        },
        ins.to_vec(),
        None,
    )
    .unwrap()
    .into_iter()
    .map(Atom::Var)
    .collect()
}

fn axpy(x: &Arc<HostArray>, t: Option<&Arc<HostArray>>, h: f64) -> Arc<HostArray> {
    match t {
        Some(t) => {
            let v: Vec<f64> = f64s(x)
                .iter()
                .zip(f64s(t))
                .map(|(a, b)| a + h * b)
                .collect();
            f64_arc(x.shape(), v)
        }
        None => x.clone(),
    }
}

fn close(a: f64, b: f64, rtol: f64) -> bool {
    (a - b).abs() <= rtol * (1.0 + a.abs().max(b.abs()))
}

fn assert_close_vec(got: &[f64], want: &[f64], rtol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(close(*g, *w, rtol), "{what}[{i}]: got {g}, want {w}");
    }
}

/// Random tangents for the f64 inputs (None for the others).
fn rand_tangents(rng: &mut Rng, xs: &[Arc<HostArray>]) -> Vec<Option<Arc<HostArray>>> {
    xs.iter()
        .map(|x| is_f64(x).then(|| rand_arr(rng, x.shape(), -1.0, 1.0)))
        .collect()
}

/// Value for an input of the given aval: random for f64, zeros otherwise.
fn rand_for(rng: &mut Rng, aval: &Aval) -> Arc<HostArray> {
    if aval.dtype == DType::F64 {
        rand_arr(rng, &aval.shape, -1.0, 1.0)
    } else {
        Arc::new(HostArray::zeros(aval.shape.clone(), aval.dtype).unwrap())
    }
}

/// JVP tangents of `f` at `xs` along `ts` (one per output; None for
/// non-f64 outputs).
fn jvp_eval(
    f: &ClosedJaxpr,
    xs: &[Arc<HostArray>],
    ts: &[Option<Arc<HostArray>>],
) -> Vec<Option<Vec<f64>>> {
    let nz: Vec<bool> = xs.iter().map(|x| is_f64(x)).collect();
    let (jf, out_nz) = jvp_jaxpr(f, &nz, true).unwrap();
    assert!(out_nz.iter().all(|x| *x));
    typecheck(&jf).unwrap();
    let mut args = xs.to_vec();
    args.extend(ts.iter().flatten().cloned());
    let outs = run(&jf, &args);
    let m = f.jaxpr.outvars.len();
    assert_eq!(outs.len(), 2 * m);
    let primal = run(f, xs);
    for k in 0..m {
        assert_eq!(
            outs[k].as_ref(),
            primal[k].as_ref(),
            "jvp primal output {k}"
        );
    }
    outs[m..]
        .iter()
        .map(|o| is_f64(o).then(|| f64s(o)))
        .collect()
}

/// JVP against central finite differences along random directions.
fn check_jvp(f: &ClosedJaxpr, xs: &[Arc<HostArray>], rng: &mut Rng) {
    let h = 1e-6;
    for _ in 0..2 {
        let ts = rand_tangents(rng, xs);
        let tans = jvp_eval(f, xs, &ts);
        let plus: Vec<_> = xs
            .iter()
            .zip(&ts)
            .map(|(x, t)| axpy(x, t.as_ref(), h))
            .collect();
        let minus: Vec<_> = xs
            .iter()
            .zip(&ts)
            .map(|(x, t)| axpy(x, t.as_ref(), -h))
            .collect();
        let fp = run(f, &plus);
        let fm = run(f, &minus);
        for (k, tan) in tans.iter().enumerate() {
            let Some(tan) = tan else { continue };
            let fd: Vec<f64> = f64s(&fp[k])
                .iter()
                .zip(f64s(&fm[k]))
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect();
            assert_close_vec(
                tan,
                &fd,
                1e-6,
                &format!("jvp vs finite differences, output {k}"),
            );
        }
    }
}

/// VJP against JVP via `<c, J t> = <J^T c, t>`, linearize against JVP, and
/// the forward program against the primal.
fn check_vjp(f: &ClosedJaxpr, xs: &[Arc<HostArray>], rng: &mut Rng) {
    let nz: Vec<bool> = xs.iter().map(|x| is_f64(x)).collect();
    let m = f.jaxpr.outvars.len();
    let primal = run(f, xs);
    // linearize
    let lin = linearize_jaxpr(f, &nz).unwrap();
    typecheck(&lin.primal).unwrap();
    typecheck(&lin.tangent).unwrap();
    let louts = run(&lin.primal, xs);
    assert_eq!(louts.len(), m + lin.num_res);
    for k in 0..m {
        assert_eq!(
            louts[k].as_ref(),
            primal[k].as_ref(),
            "linearize primal {k}"
        );
    }
    let ts = rand_tangents(rng, xs);
    let tans = jvp_eval(f, xs, &ts);
    let mut targs: Vec<_> = louts[m..].to_vec();
    targs.extend(ts.iter().flatten().cloned());
    let ltans = run(&lin.tangent, &targs);
    assert_eq!(ltans.len(), m);
    for k in 0..m {
        if let Some(t) = &tans[k] {
            assert_close_vec(&f64s(&ltans[k]), t, 1e-12, "linearize tangent vs jvp");
        } else {
            assert_eq!(ltans[k].dtype(), DType::Float0);
        }
    }
    // vjp
    let v = vjp_jaxpr(f, &nz).unwrap();
    typecheck(&v.fwd).unwrap();
    typecheck(&v.bwd).unwrap();
    let fouts = run(&v.fwd, xs);
    assert_eq!(fouts.len(), m + v.num_res);
    for k in 0..m {
        assert_eq!(fouts[k].as_ref(), primal[k].as_ref(), "vjp fwd primal {k}");
    }
    let ct_avals = &v.bwd.in_avals().unwrap()[v.num_res..];
    assert_eq!(ct_avals.len(), m);
    let cs: Vec<Arc<HostArray>> = ct_avals.iter().map(|a| rand_for(rng, a)).collect();
    let mut bargs: Vec<_> = fouts[m..].to_vec();
    bargs.extend(cs.iter().cloned());
    let cts = run(&v.bwd, &bargs);
    assert_eq!(cts.len(), nz.iter().filter(|x| **x).count());
    let mut lhs = 0.0;
    for k in 0..m {
        if let Some(t) = &tans[k] {
            lhs += inner(&f64s(&cs[k]), t);
        }
    }
    let mut rhs = 0.0;
    for (ct, t) in cts.iter().zip(ts.iter().flatten()) {
        assert_eq!(ct.shape(), t.shape());
        rhs += inner(&f64s(ct), &f64s(t));
    }
    assert!(
        close(lhs, rhs, 1e-10),
        "<c, J t> = {lhs} but <J^T c, t> = {rhs}"
    );
    check_value_and_grad(f, xs, &nz, &fouts[m..], &v.bwd);
}

/// `value_and_grad_jaxpr` of a one-output program equals its fwd program's
/// output and the bwd program seeded with ones; other programs are rejected.
fn check_value_and_grad(
    f: &ClosedJaxpr,
    xs: &[Arc<HostArray>],
    nz: &[bool],
    residuals: &[Arc<HostArray>],
    bwd: &ClosedJaxpr,
) {
    let m = f.jaxpr.outvars.len();
    let vg = value_and_grad_jaxpr(f, nz);
    if m != 1 {
        assert!(matches!(vg, Err(Error::InvalidArgument(_))), "{m} outputs");
        return;
    }
    let out_aval = &f.jaxpr.out_avals().unwrap()[0];
    if out_aval.dtype != DType::F64 {
        return;
    }
    let vg = vg.unwrap();
    typecheck(&vg).unwrap();
    let got = run(&vg, xs);
    let n = out_aval.shape.iter().product();
    let ones = Scalar::Float(1.0).to_buffer(DType::F64, n).unwrap();
    let ones = Arc::new(HostArray::new(out_aval.shape.clone(), ones).unwrap());
    let mut bargs = residuals.to_vec();
    bargs.push(ones);
    let want_cts = run(bwd, &bargs);
    assert_eq!(got.len(), 1 + want_cts.len());
    assert_close_vec(&f64s(&got[0]), &f64s(&run(f, xs)[0]), 0.0, "value");
    for (g, w) in got[1..].iter().zip(&want_cts) {
        assert_close_vec(&f64s(g), &f64s(w), 1e-12, "grad vs bwd(ones)");
    }
}

/// First and second order checks of `f` at `xs`.
fn check_all(f: &ClosedJaxpr, xs: &[Arc<HostArray>], seed: u64) {
    let mut rng = Rng::new(seed);
    check_jvp(f, xs, &mut rng);
    check_vjp(f, xs, &mut rng);
    // Second order: the JVP program as a function of (primals, tangents).
    let nz: Vec<bool> = xs.iter().map(|x| is_f64(x)).collect();
    let (jf, _) = jvp_jaxpr(f, &nz, true).unwrap();
    let mut xs2 = xs.to_vec();
    xs2.extend(rand_tangents(&mut rng, xs).into_iter().flatten());
    check_jvp(&jf, &xs2, &mut rng);
    check_vjp(&jf, &xs2, &mut rng);
    // ... and the VJP's backward program as a function of (residuals, cts).
    let v = vjp_jaxpr(f, &nz).unwrap();
    let m = f.jaxpr.outvars.len();
    let fouts = run(&v.fwd, xs);
    let mut bargs: Vec<_> = fouts[m..].to_vec();
    for a in &v.bwd.in_avals().unwrap()[v.num_res..] {
        bargs.push(rand_for(&mut rng, a));
    }
    check_jvp(&v.bwd, &bargs, &mut rng);
    check_vjp(&v.bwd, &bargs, &mut rng);
}

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
        check_all(&f, &[x.clone()], 41 + i as u64);
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
    // d/dx x^0 = 0 (not NaN at x = 0); d/dy 0^y uses log(1) = 0.
    let f = build(&[f64v(&[2]), f64v(&[2])], |b, x| {
        vec![bin(b, BinaryOp::Pow, &x[0], &x[1])]
    });
    let (jf, _) = jvp_jaxpr(&f, &[true, true], false).unwrap();
    let x = f64_arc(&[2], vec![0.0, 2.0]);
    let y = f64_arc(&[2], vec![0.0, 3.0]);
    let tx = f64_arc(&[2], vec![1.0, 1.0]);
    let ty = f64_arc(&[2], vec![0.0, 1.0]);
    let out = run(&jf, &[x, y, tx, ty]);
    let t = f64s(&out[1]);
    assert_eq!(t[0], 0.0);
    assert!(close(t[1], 3.0 * 4.0 + 2f64.ln() * 8.0, 1e-14));
}

#[test]
fn comparisons_and_select_n() {
    for (i, &op) in CmpOp::ALL.iter().enumerate() {
        let f = build(&[f64v(&[4]), f64v(&[4])], |b, x| {
            let p = eqn(b, Primitive::Compare(op), &[x[0].clone(), x[1].clone()]);
            let s = un(b, UnaryOp::Sin, &x[0]);
            let c = bin(b, BinaryOp::Mul, &x[0], &x[1]);
            vec![eqn(b, Primitive::SelectN, &[p.clone(), s, c]), p]
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
                Primitive::SelectN,
                &[x[0].clone(), x[1].clone(), e, x[2].clone()],
            )]
        },
    );
    let p = Arc::new(HostArray::new(vec![4], Buffer::I32(vec![0, 1, 2, 1])).unwrap());
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
        vec![eqn(b, Primitive::SelectN, &[p, z, x[0].clone()])]
    });
    check_all(&f, &[rand_arr(&mut rng, &[3], -1.0, 1.0)], 6);
}

#[test]
fn integer_pow() {
    for (i, y) in [-2, 0, 1, 2, 3, 5].into_iter().enumerate() {
        let f = build(&[f64v(&[3])], |b, x| {
            vec![eqn(b, Primitive::IntegerPow { y }, &[x[0].clone()])]
        });
        let x = f64_arc(&[3], vec![0.7, -1.2, 1.5]);
        check_all(&f, &[x], 400 + i as u64);
    }
}

#[test]
fn convert_element_type() {
    // float -> int -> float has a zero derivative; float -> float is linear.
    let f = build(&[f64v(&[3])], |b, x| {
        let i = eqn(
            b,
            Primitive::ConvertElementType {
                new_dtype: DType::I32,
                weak_type: false,
            },
            &[x[0].clone()],
        );
        let back = eqn(
            b,
            Primitive::ConvertElementType {
                new_dtype: DType::F64,
                weak_type: false,
            },
            &[i.clone()],
        );
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
        let s = eqn(
            b,
            Primitive::ConvertElementType {
                new_dtype: DType::F32,
                weak_type: false,
            },
            &[x[0].clone()],
        );
        let s = un(b, UnaryOp::Sin, &s);
        vec![eqn(
            b,
            Primitive::ConvertElementType {
                new_dtype: DType::F64,
                weak_type: false,
            },
            &[s],
        )]
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
        (
            vec![3, 1],
            Primitive::BroadcastInDim {
                shape: vec![2, 3, 4],
                broadcast_dimensions: vec![1, 2],
            },
        ),
        (
            vec![],
            Primitive::BroadcastInDim {
                shape: vec![2, 2],
                broadcast_dimensions: vec![],
            },
        ),
        (
            vec![1, 3],
            Primitive::BroadcastInDim {
                shape: vec![1, 3],
                broadcast_dimensions: vec![0, 1],
            },
        ),
        (
            vec![2, 3],
            Primitive::Reshape {
                new_sizes: vec![3, 2],
            },
        ),
        (vec![2, 3], Primitive::Reshape { new_sizes: vec![6] }),
        (
            vec![2, 3, 4],
            Primitive::Transpose {
                permutation: vec![2, 0, 1],
            },
        ),
        (
            vec![2, 1, 3, 1],
            Primitive::Squeeze {
                dimensions: vec![1, 3],
            },
        ),
        (
            vec![2, 3, 4],
            Primitive::Reduce {
                op: ReduceOp::Sum,
                axes: vec![0, 2],
            },
        ),
        (
            vec![2, 3],
            Primitive::Reduce {
                op: ReduceOp::Sum,
                axes: vec![],
            },
        ),
        (
            vec![3, 4],
            Primitive::Reduce {
                op: ReduceOp::Max,
                axes: vec![1],
            },
        ),
        (
            vec![3, 4],
            Primitive::Reduce {
                op: ReduceOp::Max,
                axes: vec![0, 1],
            },
        ),
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
            Primitive::BroadcastInDim {
                shape: vec![2, 3, 4],
                broadcast_dimensions: vec![1, 2],
            },
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
        vec![eqn(
            b,
            Primitive::Reduce {
                op: ReduceOp::Sum,
                axes: vec![1],
            },
            &[x[0].clone()],
        )]
    });
    let t = transpose_jaxpr(&f, &[true]).unwrap();
    let out = f64s(&run(&t, &[f64_arc(&[2], vec![5.0, 7.0])])[0]);
    assert_eq!(out, vec![5.0, 5.0, 5.0, 7.0, 7.0, 7.0]);
}

#[test]
fn reduce_max_ties_share_equally() {
    let f = build(&[f64v(&[4])], |b, x| {
        vec![eqn(
            b,
            Primitive::Reduce {
                op: ReduceOp::Max,
                axes: vec![0],
            },
            &[x[0].clone()],
        )]
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

#[test]
fn iota_and_consts() {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(f64v(&[3])).unwrap());
    let c = Atom::Var(
        b.add_const(f64_arc(&[3], vec![0.5, -1.0, 2.0]), false)
            .unwrap(),
    );
    let io = eqn(
        &mut b,
        Primitive::Iota {
            dtype: DType::F64,
            shape: vec![3],
            dimension: 0,
        },
        &[],
    );
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
        let r = eqn(
            b,
            Primitive::Reduce {
                op: ReduceOp::Sum,
                axes: vec![0],
            },
            &[s],
        );
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
            .any(|e| matches!(e.prim, Primitive::Pjit { .. }))
    };
    assert!(has_pjit(&v.fwd));
    assert!(has_pjit(&v.bwd));
    let (jf, _) = jvp_jaxpr(&f, &[true, false], false).unwrap();
    assert!(has_pjit(&jf));
    // A pjit differentiated only in some inputs.
    check_all(&middle, &[x, y], 14);
}

// ----------------------------------------------------------- end to end

/// f(x) = 3x^3 + 2x^2 + 2x
fn cubic() -> ClosedJaxpr {
    build(&[f64v(&[])], |b, x| {
        let x3 = eqn(b, Primitive::IntegerPow { y: 3 }, &[x[0].clone()]);
        let a = bin(b, BinaryOp::Mul, &lit(3.0), &x3);
        let x2 = eqn(b, Primitive::IntegerPow { y: 2 }, &[x[0].clone()]);
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
    assert_eq!(f64s(&run(&g, &[two.clone()])[0]), vec![46.0]);
    let (jg, nz) = jvp_jaxpr(&g, &[true], false).unwrap();
    assert_eq!(nz, vec![true]);
    let out = run(&jg, &[two.clone(), f64_arc(&[], vec![1.0])]);
    assert_eq!(f64s(&out[0]), vec![46.0]);
    assert_eq!(f64s(&out[1]), vec![40.0]);
    // grad of grad (reverse over reverse) agrees.
    let gg = grad_program(&g);
    assert_eq!(f64s(&run(&gg, &[two.clone()])[0]), vec![40.0]);
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
    assert!(matches!(producer.prim, Primitive::BroadcastInDim { .. }));
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
    let Primitive::Pjit { jaxpr, .. } = &g.jaxpr.eqns[0].prim else {
        panic!()
    };
    assert_eq!(jaxpr.jaxpr.eqns.len(), 2);
    assert_eq!(g.jaxpr.eqns[0].inputs.len(), 1);
}

#[test]
fn int_inputs() {
    // f(x, n) = x * convert(n) + sin(x)
    let f = build(&[f64v(&[3]), Aval::new(vec![3], DType::I32)], |b, x| {
        let nf = eqn(
            b,
            Primitive::ConvertElementType {
                new_dtype: DType::F64,
                weak_type: false,
            },
            &[x[1].clone()],
        );
        let p = bin(b, BinaryOp::Mul, &x[0], &nf);
        let s = un(b, UnaryOp::Sin, &x[0]);
        vec![bin(b, BinaryOp::Add, &p, &s), x[1].clone()]
    });
    let n = Arc::new(HostArray::new(vec![3], Buffer::I32(vec![1, -2, 3])).unwrap());
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
        let bb = eqn(
            b,
            Primitive::BroadcastInDim {
                shape: vec![2, 4],
                broadcast_dimensions: vec![1],
            },
            &[x[2].clone()],
        );
        let h = bin(b, BinaryOp::Add, &h, &bb);
        let a = un(b, UnaryOp::Tanh, &h);
        let a2 = eqn(b, Primitive::IntegerPow { y: 2 }, &[a]);
        let s = eqn(
            b,
            Primitive::Reduce {
                op: ReduceOp::Sum,
                axes: vec![0, 1],
            },
            &[a2],
        );
        let m = eqn(
            b,
            Primitive::Reduce {
                op: ReduceOp::Max,
                axes: vec![0, 1],
            },
            &[x[1].clone()],
        );
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
        if let Primitive::Pjit { jaxpr, .. } = &e.prim {
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
            let m = eqn(
                b,
                Primitive::Reduce {
                    op: ReduceOp::Max,
                    axes: vec![1],
                },
                &[t.clone()],
            );
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

// ------------ stop_gradient, products at zeros, scans, reductions, clamp

#[test]
fn stop_gradient_has_zero_derivative() {
    let f = build(&[f64v(&[3])], |b, x| {
        let s = eqn(b, Primitive::StopGradient, &[x[0].clone()]);
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
        vec![eqn(
            b,
            Primitive::Reduce {
                op: ReduceOp::Prod,
                axes: vec![0],
            },
            &[x[0].clone()],
        )]
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
            Primitive::Cumulative {
                op: CumOp::Prod,
                axis: 0,
                reverse: false,
            },
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
                    Primitive::Cumulative {
                        op,
                        axis: 1,
                        reverse,
                    },
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
                Primitive::Reduce { op, axes: vec![0] },
                &[x[0].clone()],
            )]
        });
        check_all(&f, &[rand_arr(&mut rng, &[3, 4], 0.5, 2.0)], 78);
    }
    // clamp with a scalar lower bound and an array upper bound.
    let f = build(&[f64v(&[]), f64v(&[6]), f64v(&[6])], |b, x| {
        vec![eqn(b, Primitive::Clamp, x)]
    });
    let xs = [
        f64_arc(&[], vec![-0.5]),
        f64_arc(&[6], vec![-1.0, -0.2, 0.3, 0.9, 1.7, 0.1]),
        f64_arc(&[6], vec![0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
    ];
    check_all(&f, &xs, 79);
}
