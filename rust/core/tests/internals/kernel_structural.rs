//! Tests of `prims::kernel::structural`'s internals (reached through `microjax::internals`).

use microjax::internals::prims_kernel_structural::*;
use microjax::prims::{Concatenate, DynamicSlice, DynamicUpdateSlice, Pad, Rev, Slice};
use microjax::*;

#[test]
fn strided_gather_transposes_and_broadcasts() {
    let src: Vec<i32> = (0..6).collect(); // 2x3
    assert_eq!(
        strided_gather(&src, &[3, 2], &[1, 3]).unwrap(),
        vec![0, 3, 1, 4, 2, 5]
    );
    assert_eq!(
        strided_gather(&src[..3], &[2, 3], &[0, 1]).unwrap(),
        vec![0, 1, 2, 0, 1, 2]
    );
    assert!(strided_gather(&src, &[3, 3], &[1, 3]).is_err());
    assert_eq!(
        strided_gather(&src, &[0, 3], &[1, 3]).unwrap(),
        Vec::<i32>::new()
    );
}

#[test]
fn tiled_transpose_matches_naive() {
    for (r, c) in [(16, 16), (33, 70), (100, 17), (64, 64)] {
        let src: Vec<u32> = (0..(r * c) as u32).collect(); // r x c
        let got = strided_gather(&src, &[c, r], &[1, c]).unwrap();
        for i in 0..c {
            for j in 0..r {
                assert_eq!(got[i * r + j], src[j * c + i]);
            }
        }
    }
}

fn f32s(shape: &[usize], v: Vec<f32>) -> HostArray {
    HostArray::new(shape.to_vec(), Buffer::F32(v.into())).unwrap()
}

fn i32s(v: i32) -> HostArray {
    HostArray::new(vec![], Buffer::I32(vec![v].into())).unwrap()
}

fn run(p: microjax::prims::Primitive, args: &[&HostArray]) -> microjax::error::Result<HostArray> {
    microjax::prims::kernel::eval(&microjax::exec::ExecCtx::default(), &p, args)
        .map(|mut v| v.remove(0))
}

#[test]
fn slicing_kernels_match_hand_results() {
    use microjax::prims::Primitive;
    let x = f32s(&[2, 3], vec![0., 1., 2., 3., 4., 5.]);
    let r = run(
        Primitive::Rev(Rev {
            dimensions: vec![1],
        }),
        &[&x],
    )
    .unwrap();
    assert_eq!(
        r.buffer(),
        &Buffer::F32(vec![2., 1., 0., 5., 4., 3.].into())
    );
    let s = run(
        Primitive::Slice(Slice {
            start_indices: vec![0, 0],
            limit_indices: vec![2, 3],
            strides: Some(vec![1, 2]),
        }),
        &[&x],
    )
    .unwrap();
    assert_eq!(s.shape(), &[2, 2]);
    assert_eq!(s.buffer(), &Buffer::F32(vec![0., 2., 3., 5.].into()));
    // lo = -1 crops, interior 1 between columns, hi = 1 on the columns.
    let pv = f32s(&[], vec![9.]);
    let p = run(
        Primitive::Pad(Pad {
            padding_config: vec![(-1, 0, 0), (0, 1, 1)],
        }),
        &[&x, &pv],
    )
    .unwrap();
    assert_eq!(p.shape(), &[1, 6]);
    assert_eq!(
        p.buffer(),
        &Buffer::F32(vec![3., 9., 4., 9., 5., 9.].into())
    );
    let e = f32s(&[2, 0], vec![]);
    let c = run(
        Primitive::Concatenate(Concatenate { dimension: 1 }),
        &[&x, &e, &x],
    )
    .unwrap();
    assert_eq!(c.shape(), &[2, 6]);
    assert_eq!(
        c.buffer(),
        &Buffer::F32(vec![0., 1., 2., 0., 1., 2., 3., 4., 5., 3., 4., 5.].into())
    );
    // Start indices clamp into range, as XLA.
    let d = run(
        Primitive::DynamicSlice(DynamicSlice {
            slice_sizes: vec![1, 2],
        }),
        &[&x, &i32s(7), &i32s(-4)],
    )
    .unwrap();
    assert_eq!(d.buffer(), &Buffer::F32(vec![3., 4.].into()));
    let u = f32s(&[1, 2], vec![7., 8.]);
    let w = run(
        Primitive::DynamicUpdateSlice(DynamicUpdateSlice),
        &[&x, &u, &i32s(0), &i32s(5)],
    )
    .unwrap();
    assert_eq!(
        w.buffer(),
        &Buffer::F32(vec![0., 7., 8., 3., 4., 5.].into())
    );
}

#[test]
fn slicing_shape_errors_name_the_primitive() {
    use microjax::prims::Primitive;
    let x = f32s(&[2, 3], vec![0.; 6]);
    let bad = [
        (
            Primitive::Slice(Slice {
                start_indices: vec![0, 2],
                limit_indices: vec![2, 1],
                strides: None,
            }),
            vec![&x],
        ),
        (
            Primitive::Pad(Pad {
                padding_config: vec![(-3, 0, 0), (0, 0, 0)],
            }),
            vec![&x, &x],
        ),
        (
            Primitive::Rev(Rev {
                dimensions: vec![2],
            }),
            vec![&x],
        ),
        (
            Primitive::DynamicSlice(DynamicSlice {
                slice_sizes: vec![3, 1],
            }),
            vec![&x],
        ),
    ];
    for (p, args) in bad {
        let err = run(p.clone(), &args).unwrap_err();
        assert!(err.to_string().contains(p.name()), "{err}");
    }
    let y = f32s(&[3, 3], vec![0.; 9]);
    let err = run(
        Primitive::Concatenate(Concatenate { dimension: 1 }),
        &[&x, &y],
    )
    .unwrap_err();
    assert!(err.to_string().contains("concatenate"), "{err}");
}
