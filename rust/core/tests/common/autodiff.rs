//! Autodiff check harness: finite-difference JVP, VJP against JVP, linearize, second order.
use super::{f64_arc, f64s, inner, Rng};
use microjax::exec::interp::eval_closed;
use microjax::ir::typecheck::typecheck;
use microjax::prims::Pjit;
use microjax::transforms::{jvp_jaxpr, linearize_jaxpr, value_and_grad_jaxpr, vjp_jaxpr};
use microjax::{
    Atom, Aval, BinaryOp, Builder, ClosedJaxpr, DType, Error, HostArray, Primitive, Scalar, UnaryOp,
};
use std::sync::Arc;

pub fn rand_arr(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> Arc<HostArray> {
    let n = shape.iter().product();
    f64_arc(shape, rng.vec(n, lo, hi))
}

pub fn is_f64(a: &HostArray) -> bool {
    a.dtype() == DType::F64
}

pub fn run(j: &ClosedJaxpr, args: &[Arc<HostArray>]) -> Vec<Arc<HostArray>> {
    eval_closed(j, args).unwrap()
}

pub fn un(b: &mut Builder, op: UnaryOp, x: &Atom) -> Atom {
    b.unary(op, x.clone()).unwrap()
}

pub fn bin(b: &mut Builder, op: BinaryOp, x: &Atom, y: &Atom) -> Atom {
    b.binary(op, x.clone(), y.clone()).unwrap()
}

pub fn eqn(b: &mut Builder, p: Primitive, ins: &[Atom]) -> Atom {
    b.add_eqn1(p, ins.to_vec()).unwrap()
}

pub fn lit(v: f64) -> Atom {
    Builder::lit(DType::F64, v)
}

pub fn pjit(b: &mut Builder, j: ClosedJaxpr, ins: &[Atom]) -> Vec<Atom> {
    b.add_eqn(
        Primitive::Pjit(Pjit {
            jaxpr: Arc::new(j),
            name: "inner".into(),
        }),
        ins.to_vec(),
        None,
    )
    .unwrap()
    .into_iter()
    .map(Atom::Var)
    .collect()
}

pub fn axpy(x: &Arc<HostArray>, t: Option<&Arc<HostArray>>, h: f64) -> Arc<HostArray> {
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

pub fn close(a: f64, b: f64, rtol: f64) -> bool {
    (a - b).abs() <= rtol * (1.0 + a.abs().max(b.abs()))
}

pub fn assert_close_vec(got: &[f64], want: &[f64], rtol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(close(*g, *w, rtol), "{what}[{i}]: got {g}, want {w}");
    }
}

/// Random tangents for the f64 inputs (None for the others).
pub fn rand_tangents(rng: &mut Rng, xs: &[Arc<HostArray>]) -> Vec<Option<Arc<HostArray>>> {
    xs.iter()
        .map(|x| is_f64(x).then(|| rand_arr(rng, x.shape(), -1.0, 1.0)))
        .collect()
}

/// Value for an input of the given aval: random for f64, zeros otherwise.
pub fn rand_for(rng: &mut Rng, aval: &Aval) -> Arc<HostArray> {
    if aval.dtype == DType::F64 {
        rand_arr(rng, &aval.shape, -1.0, 1.0)
    } else {
        Arc::new(HostArray::zeros(aval.shape.clone(), aval.dtype).unwrap())
    }
}

/// JVP tangents of `f` at `xs` along `ts` (one per output; None for
/// non-f64 outputs).
pub fn jvp_eval(
    f: &ClosedJaxpr, xs: &[Arc<HostArray>], ts: &[Option<Arc<HostArray>>],
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
pub fn check_jvp(f: &ClosedJaxpr, xs: &[Arc<HostArray>], rng: &mut Rng) {
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

/// Typechecks a split program (`forward` then `backward`), runs `forward` on
/// `xs` and checks it returns the `primal` outputs followed by `num_res`
/// residuals; returns all its outputs.
fn run_forward_half(
    (forward, backward): (&ClosedJaxpr, &ClosedJaxpr), num_res: usize, xs: &[Arc<HostArray>],
    primal: &[Arc<HostArray>], what: &str,
) -> Vec<Arc<HostArray>> {
    typecheck(forward).unwrap();
    typecheck(backward).unwrap();
    let outs = run(forward, xs);
    let m = primal.len();
    assert_eq!(outs.len(), m + num_res);
    for k in 0..m {
        assert_eq!(outs[k].as_ref(), primal[k].as_ref(), "{what} {k}");
    }
    outs
}

/// VJP against JVP via `<c, J t> = <J^T c, t>`, linearize against JVP, and
/// the forward program against the primal.
pub fn check_vjp(f: &ClosedJaxpr, xs: &[Arc<HostArray>], rng: &mut Rng) {
    let nz: Vec<bool> = xs.iter().map(|x| is_f64(x)).collect();
    let m = f.jaxpr.outvars.len();
    let primal = run(f, xs);
    // linearize
    let lin = linearize_jaxpr(f, &nz).unwrap();
    let louts = run_forward_half(
        (&lin.primal, &lin.tangent),
        lin.num_res,
        xs,
        &primal,
        "linearize primal",
    );
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
    let fouts = run_forward_half((&v.fwd, &v.bwd), v.num_res, xs, &primal, "vjp fwd primal");
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
pub fn check_value_and_grad(
    f: &ClosedJaxpr, xs: &[Arc<HostArray>], nz: &[bool], residuals: &[Arc<HostArray>],
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
pub fn check_all(f: &ClosedJaxpr, xs: &[Arc<HostArray>], seed: u64) {
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
