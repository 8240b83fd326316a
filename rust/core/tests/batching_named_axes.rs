//! vmap over named axes: collectives, named-axis gathers and index, grad under named vmap.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::interp::eval_closed;
use microjax::ir::typecheck::typecheck;
use microjax::prims::collective::{AllReduceOp, Collective};
use microjax::transforms::{batch_jaxpr, batch_jaxpr_named, vjp_jaxpr};
use microjax::{
    Atom, BinaryOp, Buffer, Builder, ClosedJaxpr, Error, HostArray, Primitive, UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::batching::{arange, call, lit_f32, single};
use common::{f32s, f32v};

// ------------------------------------------------------------- named axes

fn coll(c: Collective) -> Primitive {
    Primitive::Collective(c)
}

fn psum_over(axes: &[&str]) -> Primitive {
    coll(Collective::AllReduce {
        op: AllReduceOp::Sum,
        axes: axes.iter().map(|s| s.to_string()).collect(),
    })
}

/// `prog` (one input) batched over axis "i" of size `n` at 0, run on `x`.
fn run_named(prog: &ClosedJaxpr, x: Arc<HostArray>, n: usize) -> Vec<Arc<HostArray>> {
    let nout = prog.out_avals().unwrap().len();
    let ins = vec![Some(0); prog.in_avals().unwrap().len()];
    let batched = batch_jaxpr_named(prog, &ins, n, Some("i"), &vec![Some(0); nout]).unwrap();
    typecheck(&batched).unwrap();
    assert!(
        batched
            .jaxpr
            .eqns
            .iter()
            .all(|e| !matches!(e.prim, Primitive::Collective(_))),
        "collectives over the batched axis are eliminated"
    );
    let args = if ins.is_empty() { vec![] } else { vec![x] };
    eval_closed(&batched, &args).unwrap()
}

#[test]
fn reductions_over_the_named_axis() {
    let n = 4;
    let x = arange(&[n, 3]);
    let xs = f32s(&x);
    for (op, f) in [
        (
            AllReduceOp::Sum,
            (|a: f32, b: f32| a + b) as fn(f32, f32) -> f32,
        ),
        (AllReduceOp::Max, |a: f32, b: f32| a.max(b)),
        (AllReduceOp::Min, |a: f32, b: f32| a.min(b)),
    ] {
        let prim = coll(Collective::AllReduce {
            op,
            axes: vec!["i".into()],
        });
        let got = f32s(&run_named(&single(prim, &[f32v(&[3])]), x.clone(), n)[0]);
        for c in 0..3 {
            let want = (1..n).fold(xs[c], |acc, k| f(acc, xs[k * 3 + c]));
            for k in 0..n {
                assert_eq!(got[k * 3 + c], want, "{op:?} example {k} column {c}");
            }
        }
    }
}

#[test]
fn gathers_and_index_over_the_named_axis() {
    let n = 3;
    let x = arange(&[n, 2]);
    let xs = f32s(&x);
    for tiled in [false, true] {
        let prim = coll(Collective::AllGather {
            axis_name: "i".into(),
            all_gather_dimension: 0,
            axis_size: n,
            tiled,
        });
        let out = &run_named(&single(prim, &[f32v(&[2])]), x.clone(), n)[0];
        let want_shape = if tiled { vec![n, n * 2] } else { vec![n, n, 2] };
        assert_eq!(out.shape(), want_shape.as_slice());
        let got = f32s(out);
        for k in 0..n {
            assert_eq!(
                &got[k * n * 2..(k + 1) * n * 2],
                xs.as_slice(),
                "tiled {tiled}"
            );
        }
    }
    let idx = single(
        coll(Collective::AxisIndex {
            axis_name: "i".into(),
        }),
        &[],
    );
    let batched = batch_jaxpr_named(&idx, &[], n, Some("i"), &[Some(0)]).unwrap();
    let out = eval_closed(&batched, &[]).unwrap();
    assert_eq!(out[0].buffer(), &Buffer::I32(vec![0, 1, 2].into()));
}

#[test]
fn scatter_all_to_all_and_ppermute_over_the_named_axis() {
    let n = 3;
    // reduce_scatter: example j gets sum_k x_k[j, :].
    let x = arange(&[n, n, 2]);
    let xs = f32s(&x);
    let prim = coll(Collective::ReduceScatter {
        axis_name: "i".into(),
        scatter_dimension: 0,
        axis_size: n,
        tiled: false,
    });
    let got = f32s(&run_named(&single(prim, &[f32v(&[n, 2])]), x.clone(), n)[0]);
    for j in 0..n {
        for c in 0..2 {
            let want: f32 = (0..n).map(|k| xs[(k * n + j) * 2 + c]).sum();
            assert!((got[j * 2 + c] - want).abs() < 1e-5);
        }
    }
    // all_to_all (split 0, concat 1): example j gets x_k[j, c] at [0, k * 2 + c].
    let prim = coll(Collective::AllToAll {
        axis_name: "i".into(),
        split_axis: 0,
        concat_axis: 1,
        axis_size: n,
    });
    let out = &run_named(&single(prim, &[f32v(&[n, 2])]), x.clone(), n)[0];
    assert_eq!(out.shape(), &[n, 1, n * 2]);
    let got = f32s(out);
    for j in 0..n {
        for k in 0..n {
            for c in 0..2 {
                assert_eq!(got[j * n * 2 + k * 2 + c], xs[(k * n + j) * 2 + c]);
            }
        }
    }
    // ppermute: a shift by one; example 0 receives nothing (zeros).
    let perm: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
    let prim = coll(Collective::Ppermute {
        axis_name: "i".into(),
        perm,
    });
    let y = arange(&[n, 2]);
    let ys = f32s(&y);
    let got = f32s(&run_named(&single(prim, &[f32v(&[2])]), y, n)[0]);
    assert_eq!(&got[0..2], &[0.0, 0.0]);
    assert_eq!(&got[2..], &ys[..(n - 1) * 2]);
}

#[test]
fn collectives_over_another_axis_are_kept_and_unbound_axes_error() {
    let prog = single(psum_over(&["j"]), &[f32v(&[3])]);
    let batched = batch_jaxpr_named(&prog, &[Some(1)], 4, Some("i"), &[Some(0)]).unwrap();
    typecheck(&batched).unwrap();
    assert!(batched.jaxpr.eqns.iter().any(|e| e.prim.name() == "psum"));
    let err = eval_closed(&batched, &[arange(&[3, 4])]).unwrap_err();
    assert!(
        matches!(err, Error::UnboundAxis { ref axis, .. } if axis == "j"),
        "{err}"
    );
    // psum over ("i", "j") batched over "i": reduced here, kept for "j".
    let prog = single(psum_over(&["i", "j"]), &[f32v(&[3])]);
    let batched = batch_jaxpr_named(&prog, &[Some(0)], 4, Some("i"), &[Some(0)]).unwrap();
    let kept: Vec<_> = batched
        .jaxpr
        .eqns
        .iter()
        .filter_map(|e| match &e.prim {
            Primitive::Collective(Collective::AllReduce { axes, .. }) => Some(axes.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(kept, vec![vec!["j".to_string()]]);
    // axis_index of an unbatched pjit body is still batched (it names "i").
    let idx = single(
        coll(Collective::AxisIndex {
            axis_name: "i".into(),
        }),
        &[],
    );
    let mut b = Builder::new();
    let outs = call(&mut b, idx, vec![]);
    let prog = b.build(outs).unwrap();
    let batched = batch_jaxpr_named(&prog, &[], 3, Some("i"), &[Some(0)]).unwrap();
    let out = eval_closed(&batched, &[]).unwrap();
    assert_eq!(out[0].buffer(), &Buffer::I32(vec![0, 1, 2].into()));
    // Unnamed batching leaves a collective that names nothing batched unbound.
    let err = batch_jaxpr(&prog, &[], 3, &[Some(0)])
        .and_then(|j| eval_closed(&j, &[]))
        .unwrap_err();
    assert!(matches!(err, Error::UnboundAxis { .. }), "{err}");
}

/// vmap(grad(x / psum(x, 'i')), axis_name='i'): psum transposes to psum, so
/// each example's gradient is that of the sum over examples, 1/S - sum(x)/S^2 = 0;
/// for sin(x) * psum(x^2) it is cos(x_i) S2 + 2 x_i sum_k sin(x_k).
#[test]
fn grad_through_psum_under_named_vmap() {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(f32v(&[])).unwrap());
    let s = b.add_eqn1(psum_over(&["i"]), vec![x.clone()]).unwrap();
    let q = b.binary(BinaryOp::Div, x.clone(), s).unwrap();
    let ratio = b.build(vec![q]).unwrap();

    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(f32v(&[])).unwrap());
    let sq = b.binary(BinaryOp::Mul, x.clone(), x.clone()).unwrap();
    let s2 = b.add_eqn1(psum_over(&["i"]), vec![sq]).unwrap();
    let sx = b.unary(UnaryOp::Sin, x).unwrap();
    let y = b.binary(BinaryOp::Mul, sx, s2).unwrap();
    let sin_prog = b.build(vec![y]).unwrap();

    let xs = [0.5f32, -1.0, 2.0, 1.5];
    let x = Arc::new(HostArray::new(vec![4], Buffer::F32(xs.to_vec().into())).unwrap());
    for (prog, want) in [
        (ratio, [0.0f32; 4].to_vec()),
        (sin_prog, {
            let s2: f32 = xs.iter().map(|v| v * v).sum();
            let ss: f32 = xs.iter().map(|v| v.sin()).sum();
            xs.iter().map(|v| v.cos() * s2 + 2.0 * v * ss).collect()
        }),
    ] {
        let vjp = vjp_jaxpr(&prog, &[true]).unwrap();
        // grad(x) = bwd(residuals(x), 1.0)
        let mut b = Builder::new();
        let xv = Atom::Var(b.add_input(f32v(&[])).unwrap());
        let fo = call(&mut b, vjp.fwd.clone(), vec![xv]);
        let mut bwd_in: Vec<Atom> = fo[1..].to_vec();
        bwd_in.push(lit_f32(1.0));
        let g = call(&mut b, vjp.bwd.clone(), bwd_in);
        let grad = b.build(vec![g[0].clone()]).unwrap();
        let got = f32s(&run_named(&grad, x.clone(), 4)[0]);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-4, "got {got:?}, want {want:?}");
        }
    }
}

#[test]
fn collectives_display_as_jax() {
    let prog = single(psum_over(&["i", "j"]), &[f32v(&[3])]);
    let text = microjax::ir::display::display(&prog);
    assert!(
        text.contains("psum[axes=('i', 'j') axis_index_groups=None] a"),
        "{text}"
    );
    let idx = single(
        coll(Collective::AxisIndex {
            axis_name: "i".into(),
        }),
        &[],
    );
    assert!(microjax::ir::display::display(&idx).contains("axis_index[axis_name=i]"));
}
