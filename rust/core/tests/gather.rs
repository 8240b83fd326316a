//! The gather/scatter family: kernels against hand-computed values in every
//! mode, JVPs against finite differences, VJPs against JVPs
//! (`<c, J t> = <J^T c, t>`), vmap against a per-example loop, and the
//! shape errors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::prims::gather::{Mode, ScatterOp};
use microjax::prims::{DynamicSlice, DynamicUpdateSlice};
use microjax::transforms::{batch_jaxpr, jvp_jaxpr};
use microjax::{Atom, Aval, Buffer, Builder, ClosedJaxpr, DType, HostArray, Primitive, Scalar};
use std::sync::Arc;

use crate::common;
use common::gather::{gather_p, scatter_p, take_rows};
use common::kernels::i32_array;
use common::rules::{check_jvp_vjp, check_vmap};
use common::{eval, f64a, f64s, squared, Rng};

// ------------------------------------------------------------- helpers

/// `x.at[idx].op(u)` along axis 0 of a 1-d operand.
fn scatter_1d(op: ScatterOp, mode: Mode) -> Primitive {
    scatter_p(op, &[], &[0], &[0], &[], &[], mode, false)
}

fn run1(p: Primitive, args: &[&HostArray]) -> HostArray {
    eval(&p, args).unwrap().pop().unwrap()
}

/// JVP vs central differences and VJP vs JVP for `f(x, idx, [u])`, where
/// the f64 inputs are differentiated.
fn check_ad(f: &ClosedJaxpr, xs: &[Arc<HostArray>], seed: u64) {
    let nz: Vec<bool> = xs.iter().map(|x| x.dtype() == DType::F64).collect();
    check_jvp_vjp(f, xs, &nz, seed);
}

fn iota_f64(shape: &[usize]) -> HostArray {
    let n: usize = shape.iter().product();
    f64a(shape, (0..n).map(|i| i as f64).collect())
}

// ------------------------------------------------------------- kernels

#[test]
fn gather_takes_rows_in_each_mode() {
    let x = iota_f64(&[3, 3]);
    let idx = i32_array(&[2, 1], vec![2, 0]);
    let y = run1(take_rows(3, Mode::FillOrDrop), &[&x, &idx]);
    assert_eq!(y.shape(), &[2, 3]);
    assert_eq!(f64s(&y), vec![6., 7., 8., 0., 1., 2.]);
    let oob = i32_array(&[2, 1], vec![3, -1]);
    let filled = f64s(&run1(take_rows(3, Mode::FillOrDrop), &[&x, &oob]));
    assert!(filled.iter().all(|v| v.is_nan()));
    let clipped = f64s(&run1(take_rows(3, Mode::Clip), &[&x, &oob]));
    assert_eq!(clipped, vec![6., 7., 8., 0., 1., 2.]);
    let promised = f64s(&run1(take_rows(3, Mode::PromiseInBounds), &[&x, &oob]));
    assert_eq!(promised, clipped);
    // A user fill value, and the integer default (the dtype's minimum).
    let Primitive::Gather(mut g) = take_rows(3, Mode::FillOrDrop) else {
        unreachable!()
    };
    g.fill_value = Some(Scalar::Float(-1.0));
    let y = f64s(&run1(Primitive::Gather(g), &[&x, &oob]));
    assert_eq!(y, vec![-1.0; 6]);
    let xi = i32_array(&[3, 1], vec![4, 5, 6]);
    let yi = run1(take_rows(1, Mode::FillOrDrop), &[&xi, &oob]);
    assert_eq!(yi.buffer(), &Buffer::I32(vec![i32::MIN, i32::MIN].into()));
}

#[test]
fn gather_windows_and_batching_dims() {
    // 2-d windows at (row, col) starts: x[3x4], windows 2x2, one clipped.
    let x = iota_f64(&[3, 4]);
    let idx = i32_array(&[2, 2], vec![0, 1, 2, 3]);
    let p = gather_p(&[1, 2], &[], &[0, 1], &[], &[], &[2, 2], Mode::Clip);
    let y = run1(p, &[&x, &idx]);
    assert_eq!(y.shape(), &[2, 2, 2]);
    assert_eq!(f64s(&y), vec![1., 2., 5., 6., 6., 7., 10., 11.]);
    // Batching dims: y[b] = x[b, idx[b]].
    let x = iota_f64(&[2, 3]);
    let idx = i32_array(&[2, 1], vec![2, 1]);
    let p = gather_p(&[], &[1], &[1], &[0], &[0], &[1, 1], Mode::FillOrDrop);
    assert_eq!(f64s(&run1(p, &[&x, &idx])), vec![2., 4.]);
    // Offset dims interleaved with batch dims: out[i, col, j].
    let x = iota_f64(&[4, 2]);
    let idx = i32_array(&[2, 3, 1], vec![0, 1, 2, 3, 0, 1]);
    let p = gather_p(&[1], &[0], &[0], &[], &[], &[1, 2], Mode::FillOrDrop);
    let y = run1(p, &[&x, &idx]);
    assert_eq!(y.shape(), &[2, 2, 3]);
    assert_eq!(
        f64s(&y),
        vec![0., 2., 4., 1., 3., 5., 6., 0., 2., 7., 1., 3.]
    );
}

#[test]
fn scatters_combine_duplicates_and_drop_or_clip() {
    let x = f64a(&[4], vec![1., 1., 1., 1.]);
    let idx = i32_array(&[4, 1], vec![1, 1, 3, 7]);
    let u = f64a(&[4], vec![2., 3., 4., 5.]);
    // (op, mode, result) on x = 1s, duplicate index 1 and out-of-bounds 7.
    let set = vec![1., 3., 1., 4.];
    let cases = [
        (ScatterOp::Add, Mode::FillOrDrop, vec![1., 6., 1., 5.]),
        (ScatterOp::Add, Mode::Clip, vec![1., 6., 1., 10.]),
        (ScatterOp::Set, Mode::FillOrDrop, set.clone()),
        (ScatterOp::Set, Mode::PromiseInBounds, set),
        (ScatterOp::Mul, Mode::FillOrDrop, vec![1., 6., 1., 4.]),
    ];
    for (op, mode, want) in cases {
        let got = f64s(&run1(scatter_1d(op, mode), &[&x, &idx, &u]));
        assert_eq!(got, want, "{op:?} {mode:?}");
    }
    let xi = i32_array(&[4], vec![5, 5, 5, 5]);
    let ui = i32_array(&[4], vec![9, 2, 7, 0]);
    let min = run1(
        scatter_1d(ScatterOp::Min, Mode::FillOrDrop),
        &[&xi, &idx, &ui],
    );
    assert_eq!(min.buffer(), &Buffer::I32(vec![5, 2, 5, 5].into()));
    let max = run1(
        scatter_1d(ScatterOp::Max, Mode::FillOrDrop),
        &[&xi, &idx, &ui],
    );
    assert_eq!(max.buffer(), &Buffer::I32(vec![5, 9, 5, 7].into()));
    // Bool scatter-add is `or`.
    let xb = HostArray::new(vec![2], Buffer::Bool(vec![false, false].into())).unwrap();
    let ib = i32_array(&[1, 1], vec![1]);
    let ub = HostArray::new(vec![1], Buffer::Bool(vec![true].into())).unwrap();
    let yb = run1(
        scatter_1d(ScatterOp::Add, Mode::FillOrDrop),
        &[&xb, &ib, &ub],
    );
    assert_eq!(yb.buffer(), &Buffer::Bool(vec![false, true].into()));
}

#[test]
fn scatter_rows_with_batching_dims() {
    // x[b, idx[b]] += u[b]
    let x = f64a(&[2, 3], vec![0.; 6]);
    let idx = i32_array(&[2, 1], vec![2, 0]);
    let u = f64a(&[2], vec![5., 7.]);
    let p = scatter_p(
        ScatterOp::Add,
        &[],
        &[1],
        &[1],
        &[0],
        &[0],
        Mode::FillOrDrop,
        false,
    );
    assert_eq!(
        f64s(&run1(p, &[&x, &idx, &u])),
        vec![0., 0., 5., 7., 0., 0.]
    );
    // Row windows: x[idx[i], :] += u[i, :]
    let x = f64a(&[3, 2], vec![0.; 6]);
    let idx = i32_array(&[2, 1], vec![2, 2]);
    let u = f64a(&[2, 2], vec![1., 2., 3., 4.]);
    let p = scatter_p(
        ScatterOp::Add,
        &[1],
        &[0],
        &[0],
        &[],
        &[],
        Mode::FillOrDrop,
        false,
    );
    assert_eq!(
        f64s(&run1(p, &[&x, &idx, &u])),
        vec![0., 0., 0., 0., 4., 6.]
    );
}

#[test]
fn shape_errors_name_the_primitive_and_shapes() {
    let x = iota_f64(&[3, 3]);
    let bad_idx = f64a(&[2, 1], vec![0., 1.]);
    let err = eval(&take_rows(3, Mode::Clip), &[&x, &bad_idx]).unwrap_err();
    assert!(err.to_string().contains("gather"), "{err}");
    let idx = i32_array(&[2, 2], vec![0; 4]);
    let err = eval(&take_rows(3, Mode::Clip), &[&x, &idx]).unwrap_err();
    assert!(err.to_string().contains("(3, 3) and (2, 2)"), "{err}");
    let too_big = gather_p(&[1], &[0], &[0], &[], &[], &[1, 4], Mode::Clip);
    let idx = i32_array(&[2, 1], vec![0; 2]);
    assert!(eval(&too_big, &[&x, &idx]).is_err());
    let u = f64a(&[3], vec![0.; 3]);
    let err = eval(&scatter_1d(ScatterOp::Add, Mode::Clip), &[&u, &idx, &u]).unwrap_err();
    assert!(err.to_string().contains("scatter-add"), "{err}");
}

// ------------------------------------------------------------- autodiff

#[test]
fn gather_jvp_and_transpose() {
    let mut rng = Rng(11);
    let idx = Arc::new(i32_array(&[4, 1], vec![2, 0, 2, 5]));
    for mode in [Mode::FillOrDrop, Mode::Clip] {
        let p = take_rows(3, mode);
        let f = squared(
            &p,
            &[
                Aval::new(vec![3, 3], DType::F64),
                Aval::new(vec![4, 1], DType::I32),
            ],
        );
        let x = rng.f64s(&[3, 3]);
        if mode == Mode::FillOrDrop {
            // The filled row is NaN; differentiate through in-bounds rows only.
            let inb = Arc::new(i32_array(&[4, 1], vec![2, 0, 2, 1]));
            check_ad(&f, &[x, inb], 3);
        } else {
            check_ad(&f, &[x, idx.clone()], 4);
        }
    }
    let p = gather_p(&[], &[1], &[1], &[0], &[0], &[1, 1], Mode::Clip);
    let f = squared(
        &p,
        &[
            Aval::new(vec![2, 3], DType::F64),
            Aval::new(vec![2, 1], DType::I32),
        ],
    );
    check_ad(
        &f,
        &[rng.f64s(&[2, 3]), Arc::new(i32_array(&[2, 1], vec![2, 2]))],
        5,
    );
}

#[test]
fn scatter_jvps_and_transposes() {
    let mut rng = Rng(21);
    let idx = Arc::new(i32_array(&[4, 1], vec![1, 1, 3, 7]));
    let avals = [
        Aval::new(vec![4], DType::F64),
        Aval::new(vec![4, 1], DType::I32),
        Aval::new(vec![4], DType::F64),
    ];
    for (k, op) in [
        ScatterOp::Add,
        ScatterOp::Set,
        ScatterOp::Min,
        ScatterOp::Max,
    ]
    .into_iter()
    .enumerate()
    {
        for mode in [Mode::FillOrDrop, Mode::Clip] {
            let f = squared(&scatter_1d(op, mode), &avals);
            check_ad(
                &f,
                &[rng.f64s(&[4]), idx.clone(), rng.f64s(&[4])],
                30 + k as u64,
            );
        }
    }
    // Unique indices: scatter is linear and scatter-mul differentiates in
    // both operands.
    let unique = Arc::new(i32_array(&[3, 1], vec![2, 0, 3]));
    let avals = [
        Aval::new(vec![4], DType::F64),
        Aval::new(vec![3, 1], DType::I32),
        Aval::new(vec![3], DType::F64),
    ];
    for op in [ScatterOp::Set, ScatterOp::Mul] {
        let p = scatter_p(op, &[], &[0], &[0], &[], &[], Mode::FillOrDrop, true);
        let f = squared(&p, &avals);
        check_ad(&f, &[rng.f64s(&[4]), unique.clone(), rng.f64s(&[3])], 40);
    }
}

#[test]
fn scatter_mul_updates_gradient_needs_unique_indices() {
    let f = squared(
        &scatter_1d(ScatterOp::Mul, Mode::FillOrDrop),
        &[
            Aval::new(vec![4], DType::F64),
            Aval::new(vec![2, 1], DType::I32),
            Aval::new(vec![2], DType::F64),
        ],
    );
    let err = jvp_jaxpr(&f, &[true, false, true], true).unwrap_err();
    assert!(err.to_string().contains("unique_indices"), "{err}");
}

// ------------------------------------------------------------- vmap

#[test]
fn gather_vmap_every_batching_combination() {
    let p = take_rows(2, Mode::FillOrDrop);
    let n = 3;
    let xb = iota_f64(&[n, 4, 2]);
    let x = iota_f64(&[4, 2]);
    let ib = i32_array(&[n, 2, 1], vec![0, 3, 1, 1, 5, 2]);
    let i = i32_array(&[2, 1], vec![3, 0]);
    check_vmap(&p, &[xb.clone(), i.clone()], &[true, false], n);
    check_vmap(&p, &[x.clone(), ib.clone()], &[false, true], n);
    check_vmap(&p, &[xb.clone(), ib.clone()], &[true, true], n);
    // A gather that already has batching dims.
    let p = gather_p(&[], &[1], &[1], &[0], &[0], &[1, 1], Mode::Clip);
    let xb = iota_f64(&[n, 2, 3]);
    let ib = i32_array(&[n, 2, 1], vec![0, 2, 1, 1, 2, 0]);
    check_vmap(&p, &[xb, ib], &[true, true], n);
}

#[test]
fn scatter_vmap_every_batching_combination() {
    let n = 2;
    for op in [ScatterOp::Add, ScatterOp::Set, ScatterOp::Max] {
        let p = scatter_1d(op, Mode::FillOrDrop);
        let xb = iota_f64(&[n, 4]);
        let x = iota_f64(&[4]);
        let ib = i32_array(&[n, 3, 1], vec![0, 0, 3, 2, 9, 1]);
        let i = i32_array(&[3, 1], vec![1, 3, 1]);
        let ub = f64a(&[n, 3], vec![5., 6., 7., 8., 9., 10.]);
        let u = f64a(&[3], vec![1., 2., 3.]);
        for (args, batched) in [
            (vec![xb.clone(), i.clone(), u.clone()], [true, false, false]),
            (vec![x.clone(), i.clone(), ub.clone()], [false, false, true]),
            (vec![x.clone(), ib.clone(), u.clone()], [false, true, false]),
            (vec![xb.clone(), ib.clone(), ub.clone()], [true, true, true]),
        ] {
            check_vmap(&p, &args, &batched, n);
        }
    }
}

#[test]
fn dynamic_slices_with_batched_starts_become_gather_and_scatter() {
    let n = 3;
    let xb = iota_f64(&[n, 5]);
    let ib = i32_array(&[n], vec![-2, 2, 9]);
    let p = Primitive::DynamicSlice(DynamicSlice {
        slice_sizes: vec![2],
    });
    check_vmap(&p, &[xb.clone(), ib.clone()], &[true, true], n);
    check_vmap(&p, &[iota_f64(&[5]), ib.clone()], &[false, true], n);
    let ub = f64a(&[n, 2], vec![-1., -2., -3., -4., -5., -6.]);
    check_vmap(
        &Primitive::DynamicUpdateSlice(DynamicUpdateSlice),
        &[xb, ub, ib.clone()],
        &[true, true, true],
        n,
    );
    // The batched program holds one gather, not a selection per start.
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![5], DType::F64)).unwrap());
    let i = Atom::Var(b.add_input(Aval::new(vec![], DType::I32)).unwrap());
    let y = b.add_eqn1(p, vec![x, i]).unwrap();
    let prog = b.build(vec![y]).unwrap();
    let bj = batch_jaxpr(&prog, &[None, Some(0)], n, &[Some(0)]).unwrap();
    let names: Vec<&str> = bj.jaxpr.eqns.iter().map(|e| e.prim.name()).collect();
    assert_eq!(
        names.iter().filter(|n| **n == "gather").count(),
        1,
        "{names:?}"
    );
    assert!(!names.contains(&"select_n"), "{names:?}");
}

// ------------------------------------------------------------- printing

#[test]
fn display_shows_dimension_numbers_and_mode_as_jax() {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![4, 3], DType::F32)).unwrap());
    let i = Atom::Var(b.add_input(Aval::new(vec![2, 1], DType::I32)).unwrap());
    let y = b.add_eqn1(take_rows(3, Mode::Clip), vec![x, i]).unwrap();
    let j = b.build(vec![y]).unwrap();
    let text = microjax::ir::display::display(&j);
    assert!(
        text.contains(
            "dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), \
             start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())"
        ),
        "{text}"
    );
    assert!(text.contains("mode=GatherScatterMode.CLIP"), "{text}");
    assert!(text.contains("slice_sizes=(1, 3)"), "{text}");
}
