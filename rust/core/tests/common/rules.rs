//! Rule checks of one primitive shared by the conv and gather test files:
//! JVP against central differences and VJP against JVP, vmap against a
//! per-example loop.
use super::{f64a, f64s, inner, Rng};
use microjax::exec::interp::eval_closed;
use microjax::ir::typecheck::typecheck;
use microjax::transforms::{batch_jaxpr, jvp_jaxpr, vjp_jaxpr};
use microjax::{Atom, Aval, Buffer, Builder, ClosedJaxpr, HostArray, Primitive};
use std::sync::Arc;

/// JVP vs central differences, then VJP vs JVP (`<c, J t> = <J^T c, t>`),
/// differentiating the inputs marked in `nz`.
pub fn check_jvp_vjp(f: &ClosedJaxpr, xs: &[Arc<HostArray>], nz: &[bool], seed: u64) {
    let mut rng = Rng(seed | 1);
    let ts: Vec<Arc<HostArray>> = xs
        .iter()
        .zip(nz)
        .filter(|(_, &z)| z)
        .map(|(x, _)| rng.f64s(x.shape()))
        .collect();
    let (jf, _) = jvp_jaxpr(f, nz, true).unwrap();
    typecheck(&jf).unwrap();
    let mut args = xs.to_vec();
    args.extend(ts.iter().cloned());
    let outs = eval_closed(&jf, &args).unwrap();
    let tan = f64s(&outs[1]);
    let h = 1e-6;
    let shifted = |s: f64| -> Vec<Arc<HostArray>> {
        let mut k = 0;
        xs.iter()
            .zip(nz)
            .map(|(x, &z)| {
                if !z {
                    return x.clone();
                }
                let t = f64s(&ts[k]);
                k += 1;
                let v = f64s(x).iter().zip(&t).map(|(a, b)| a + s * b).collect();
                Arc::new(f64a(x.shape(), v))
            })
            .collect()
    };
    let fp = f64s(&eval_closed(f, &shifted(h)).unwrap()[0]);
    let fm = f64s(&eval_closed(f, &shifted(-h)).unwrap()[0]);
    for (k, (t, (a, b))) in tan.iter().zip(fp.iter().zip(&fm)).enumerate() {
        let fd = (a - b) / (2.0 * h);
        assert!(
            (t - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
            "jvp[{k}] {t} vs fd {fd}"
        );
    }
    let v = vjp_jaxpr(f, nz).unwrap();
    typecheck(&v.bwd).unwrap();
    let fouts = eval_closed(&v.fwd, xs).unwrap();
    let c = rng.f64s(outs[1].shape());
    let mut bargs: Vec<_> = fouts[1..].to_vec();
    bargs.push(c.clone());
    let cts = eval_closed(&v.bwd, &bargs).unwrap();
    let lhs = inner(&f64s(&c), &tan);
    let rhs: f64 = cts
        .iter()
        .zip(&ts)
        .map(|(ct, t)| inner(&f64s(ct), &f64s(t)))
        .sum();
    assert!(
        (lhs - rhs).abs() <= 1e-10 * (1.0 + lhs.abs()),
        "<c, J t> = {lhs} but <J^T c, t> = {rhs}"
    );
}

/// Slice `k` of `a` along axis 0.
pub fn row(a: &HostArray, k: usize) -> HostArray {
    let shape = a.shape()[1..].to_vec();
    let n: usize = shape.iter().product();
    let buf = match a.buffer() {
        Buffer::F64(v) => Buffer::F64(v[k * n..(k + 1) * n].to_vec().into()),
        Buffer::I32(v) => Buffer::I32(v[k * n..(k + 1) * n].to_vec().into()),
        other => panic!("unexpected {:?}", other.dtype()),
    };
    HostArray::new(shape, buf).unwrap()
}

/// vmap over axis 0 of the inputs marked `batched` vs a per-example loop.
pub fn check_vmap(p: &Primitive, args: &[HostArray], batched: &[bool], n: usize) {
    let avals: Vec<Aval> = args
        .iter()
        .zip(batched)
        .map(|(a, &bt)| {
            let s = if bt {
                a.shape()[1..].to_vec()
            } else {
                a.shape().to_vec()
            };
            Aval::new(s, a.dtype())
        })
        .collect();
    let mut b = Builder::new();
    let xs: Vec<Atom> = avals
        .iter()
        .map(|a| Atom::Var(b.add_input(a.clone()).unwrap()))
        .collect();
    let y = b.add_eqn1(p.clone(), xs).unwrap();
    let prog = b.build(vec![y]).unwrap();
    let in_dims: Vec<Option<usize>> = batched.iter().map(|&bt| bt.then_some(0)).collect();
    let bj = batch_jaxpr(&prog, &in_dims, n, &[Some(0)]).unwrap();
    typecheck(&bj).unwrap();
    let shared: Vec<Arc<HostArray>> = args.iter().cloned().map(Arc::new).collect();
    let got = f64s(&eval_closed(&bj, &shared).unwrap()[0]);
    let mut want = Vec::new();
    for k in 0..n {
        let ex: Vec<Arc<HostArray>> = args
            .iter()
            .zip(batched)
            .map(|(a, &bt)| Arc::new(if bt { row(a, k) } else { a.clone() }))
            .collect();
        want.extend(f64s(&eval_closed(&prog, &ex).unwrap()[0]));
    }
    assert_eq!(got.len(), want.len(), "{p:?} batched {batched:?}");
    for (g, w) in got.iter().zip(&want) {
        assert!(
            g.to_bits() == w.to_bits() || (g - w).abs() < 1e-12,
            "{p:?} batched {batched:?}: {g} vs {w}"
        );
    }
}
