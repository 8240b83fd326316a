//! `threefry2x32`: Random123 known answers through the kernel, the shape
//! rule's errors, and vmap against a per-example loop.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::interp::eval_closed;
use microjax::prims::random::Threefry2x32;
use microjax::transforms::batch_jaxpr;
use microjax::{Atom, Aval, Builder, DType, HostArray, Primitive};
use std::sync::Arc;

use crate::common;
use common::kernels::u32_array;
use common::{eval, u32s};

#[test]
fn known_answers_through_the_kernel() {
    // Keys as rank-0 operands against counter arrays (one KAT per element).
    let k = u32_array(&[3], vec![0, u32::MAX, 0x1319_8a2e]);
    let k1 = u32_array(&[3], vec![0, u32::MAX, 0x0370_7344]);
    let x0 = u32_array(&[3], vec![0, u32::MAX, 0x243f_6a88]);
    let x1 = u32_array(&[3], vec![0, u32::MAX, 0x85a3_08d3]);
    let out = eval(&Primitive::Threefry2x32(Threefry2x32), &[&k, &k1, &x0, &x1]).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(u32s(&out[0]), vec![0x6b20_0159, 0x1cb9_96fc, 0xc492_3a9c]);
    assert_eq!(u32s(&out[1]), vec![0x99ba_4efe, 0xbb00_2be7, 0x483d_f7a0]);
    let zero = u32_array(&[], vec![0]);
    let ctr = u32_array(&[2], vec![0, 0]);
    let out = eval(
        &Primitive::Threefry2x32(Threefry2x32),
        &[&zero, &zero, &ctr, &ctr],
    )
    .unwrap();
    assert_eq!(u32s(&out[0]), vec![0x6b20_0159; 2]);
    assert_eq!(out[1].shape(), &[2]);
}

#[test]
fn shape_rule_rejects_bad_operands() {
    let u = Aval::new(vec![2], DType::U32);
    let p = Primitive::Threefry2x32(Threefry2x32);
    let abs = |ins: &[Aval]| microjax::prims::shape::abstract_eval(&p, ins);
    assert_eq!(
        abs(&[u.clone(), u.clone(), u.clone(), u.clone()])
            .unwrap()
            .len(),
        2
    );
    assert!(abs(&[u.clone(), u.clone(), u.clone()]).is_err());
    let i = Aval::new(vec![2], DType::I32);
    let msg = abs(&[u.clone(), u.clone(), u.clone(), i])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("threefry2x32") && msg.contains("uint32"),
        "{msg}"
    );
    let w = Aval::new(vec![3], DType::U32);
    assert!(abs(&[u.clone(), u.clone(), u, w]).is_err());
}

#[test]
fn vmap_matches_a_loop() {
    // f(k0, k1, x0, x1) with k0 batched as [n] and x1 batched at axis 1 of [3, n].
    let mut b = Builder::new();
    let k0 = b.add_input(Aval::new(vec![], DType::U32)).unwrap();
    let k1 = b.add_input(Aval::new(vec![], DType::U32)).unwrap();
    let x0 = b.add_input(Aval::new(vec![3], DType::U32)).unwrap();
    let x1 = b.add_input(Aval::new(vec![3], DType::U32)).unwrap();
    let outs = b
        .add_eqn(
            Primitive::Threefry2x32(Threefry2x32),
            vec![Atom::Var(k0), Atom::Var(k1), Atom::Var(x0), Atom::Var(x1)],
            None,
        )
        .unwrap();
    let j = b.build(outs.into_iter().map(Atom::Var).collect()).unwrap();
    let n = 4;
    let bj = batch_jaxpr(&j, &[Some(0), None, None, Some(1)], n, &[Some(0), Some(0)]).unwrap();
    let keys: Vec<u32> = (0..n as u32).map(|i| i * 7 + 1).collect();
    let x1s: Vec<u32> = (0..3 * n as u32).collect(); // [3, n] row-major
    let args = [
        u32_array(&[n], keys.clone()),
        u32_array(&[], vec![9]),
        u32_array(&[3], vec![5, 6, 7]),
        u32_array(&[3, n], x1s.clone()),
    ];
    let args: Vec<Arc<HostArray>> = args.into_iter().map(Arc::new).collect();
    let got = eval_closed(&bj, &args).unwrap();
    for (e, &key) in keys.iter().enumerate() {
        let col: Vec<u32> = (0..3).map(|r| x1s[r * n + e]).collect();
        let want = eval(
            &Primitive::Threefry2x32(Threefry2x32),
            &[
                &u32_array(&[], vec![key]),
                &u32_array(&[], vec![9]),
                &u32_array(&[3], vec![5, 6, 7]),
                &u32_array(&[3], col),
            ],
        )
        .unwrap();
        for k in 0..2 {
            assert_eq!(&u32s(&got[k])[e * 3..e * 3 + 3], u32s(&want[k]).as_slice());
        }
    }
}
