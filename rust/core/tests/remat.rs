//! `checkpoint` under saving policies: linearization saves exactly the
//! values the policy accepts (counted on the residuals) and the derivative
//! is the same under every policy.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::interp::eval_closed;
use microjax::prims::{Checkpoint, CheckpointName, RematPolicy};
use microjax::transforms::{linearize_jaxpr, vjp_jaxpr};
use microjax::{Atom, Buffer, ClosedJaxpr, Primitive, ReduceOp, UnaryOp};
use std::sync::Arc;

use crate::common;
use common::*;

/// `sum(tanh(name_h(sin(x @ w1)) @ w2))` on f64 `x[4]`, `w1[4,5]`, `w2[5,3]`.
fn mlp() -> ClosedJaxpr {
    build(&[f64v(&[4]), f64v(&[4, 5]), f64v(&[5, 3])], |b, x| {
        let d1 = b
            .add_eqn1(
                dot_general(&[0], &[0], &[], &[]),
                vec![x[0].clone(), x[1].clone()],
            )
            .unwrap();
        let s = b.unary(UnaryOp::Sin, d1).unwrap();
        let h = b
            .add_eqn1(
                Primitive::Name(CheckpointName {
                    name: "hidden".into(),
                }),
                vec![s],
            )
            .unwrap();
        let d2 = b
            .add_eqn1(dot_general(&[0], &[0], &[], &[]), vec![h, x[2].clone()])
            .unwrap();
        let t = b.unary(UnaryOp::Tanh, d2).unwrap();
        vec![b.add_eqn1(reduce(ReduceOp::Sum, &[0]), vec![t]).unwrap()]
    })
}

/// `mlp` inside one `checkpoint` equation saving by `policy`.
fn checkpointed(policy: RematPolicy) -> ClosedJaxpr {
    let callee = Arc::new(mlp());
    build(&[f64v(&[4]), f64v(&[4, 5]), f64v(&[5, 3])], |b, x| {
        let prim = Primitive::Checkpoint(Checkpoint {
            jaxpr: callee,
            policy,
            prevent_cse: true,
        });
        let outs = b.add_eqn(prim, x.to_vec(), None).unwrap();
        outs.into_iter().map(Atom::Var).collect()
    })
}

/// The residual shapes linearization in `x` only keeps.
fn residual_shapes(prog: &ClosedJaxpr) -> Vec<Vec<usize>> {
    let lin = linearize_jaxpr(prog, &[true, false, false]).unwrap();
    let outs = lin.primal.out_avals().unwrap();
    let mut shapes: Vec<Vec<usize>> = outs[outs.len() - lin.num_res..]
        .iter()
        .map(|a| a.shape.clone())
        .collect();
    shapes.sort();
    shapes
}

#[test]
fn each_policy_saves_what_it_names() {
    // Nothing: the differentiated input only (the weights are known
    // operands of the call, read again by the recomputation).
    let nothing = residual_shapes(&checkpointed(RematPolicy::Nothing));
    assert!(nothing.contains(&vec![4]) && !nothing.contains(&vec![3]));
    // Dots: both products (f64[5] and f64[3]).
    let dots = residual_shapes(&checkpointed(RematPolicy::Dots));
    assert!(dots.contains(&vec![5]) && dots.contains(&vec![3]));
    assert!(
        !dots.contains(&vec![4]),
        "with both products saved x is not needed: {dots:?}"
    );
    // The name: the hidden value, and x to recompute cos(x @ w1).
    let named = residual_shapes(&checkpointed(RematPolicy::OnlyNames(vec!["hidden".into()])));
    assert!(named.contains(&vec![5]) && named.contains(&vec![4]) && !named.contains(&vec![3]));
    // A name not used saves as much as nothing.
    let other = residual_shapes(&checkpointed(RematPolicy::OnlyNames(vec!["other".into()])));
    assert_eq!(other, nothing);
}

#[test]
fn every_policy_gives_the_same_gradient() {
    let args = [
        f64_arc(&[4], vec![0.1, -0.4, 0.7, 1.2]),
        f64_arc(&[4, 5], (0..20).map(|i| (i as f64 * 0.37).sin()).collect()),
        f64_arc(&[5, 3], (0..15).map(|i| (i as f64 * 0.53).cos()).collect()),
    ];
    let grad = |prog: &ClosedJaxpr| -> Vec<f64> {
        let v = vjp_jaxpr(prog, &[true, false, false]).unwrap();
        let fwd = eval_closed(&v.fwd, &args).unwrap();
        let mut bwd_in: Vec<Arc<microjax::HostArray>> = fwd[1..].to_vec();
        bwd_in.push(f64_arc(&[], vec![1.0]));
        let g = eval_closed(&v.bwd, &bwd_in).unwrap();
        match g[0].buffer() {
            Buffer::F64(v) => v.to_vec(),
            other => panic!("expected f64, got {:?}", other.dtype()),
        }
    };
    let want = grad(&mlp());
    for policy in [
        RematPolicy::Nothing,
        RematPolicy::Everything,
        RematPolicy::Dots,
        RematPolicy::DotsNoBatchDims,
        RematPolicy::OnlyNames(vec!["hidden".into()]),
        RematPolicy::AllNamesBut(vec!["hidden".into()]),
        RematPolicy::AllBut(vec!["hidden".into()]),
        RematPolicy::Either(
            Box::new(RematPolicy::Dots),
            Box::new(RematPolicy::OnlyNames(vec!["hidden".into()])),
        ),
    ] {
        let got = grad(&checkpointed(policy.clone()));
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "{policy:?}: {got:?} vs {want:?}"
            );
        }
    }
}

#[test]
fn policies_round_trip_through_params() {
    for policy in [
        RematPolicy::Nothing,
        RematPolicy::Dots,
        RematPolicy::AllBut(vec!["a".into(), "b".into()]),
        RematPolicy::Either(
            Box::new(RematPolicy::Everything),
            Box::new(RematPolicy::AllNamesBut(vec!["c".into()])),
        ),
    ] {
        let prim = Primitive::Checkpoint(Checkpoint {
            jaxpr: Arc::new(mlp()),
            policy: policy.clone(),
            prevent_cse: false,
        });
        let params: Vec<(String, microjax::prims::Param)> = prim
            .params()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(Primitive::from_params("checkpoint", &params).unwrap(), prim);
    }
    let mut bad: Vec<(String, microjax::prims::Param)> = Primitive::Checkpoint(Checkpoint {
        jaxpr: Arc::new(mlp()),
        policy: RematPolicy::Nothing,
        prevent_cse: true,
    })
    .params()
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (k, v) in &mut bad {
        if k == "policy" {
            *v = microjax::prims::Param::Str("save_everything_twice".into());
        }
    }
    let err = Primitive::from_params("checkpoint", &bad).unwrap_err();
    assert!(err.to_string().contains("policy"), "{err}");
}
