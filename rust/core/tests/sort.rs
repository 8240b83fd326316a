//! `sort`, `top_k` and `bitcast_convert_type`: kernel values (total order of
//! floats, stability, lexicographic keys, every dtype), shape errors, and the
//! AD rules (transpose identity `<ct, f(x)> = <f^T(ct), x>`, VJP against JVP,
//! batching against a per-example loop).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::interp::eval_closed;
use microjax::prims::sort::SortOp;
use microjax::transforms::batch::batch_jaxpr;
use microjax::transforms::{jvp_jaxpr, transpose_jaxpr, vjp_jaxpr};
use microjax::{Atom, Aval, Buffer, Builder, ClosedJaxpr, DType, Error, HostArray, Primitive};

use crate::common;
use common::{arc, build, eval, f32s, f64s, host, i32s, inner};

fn sort_p(dimension: usize, num_keys: usize) -> Primitive {
    Primitive::Sort(SortOp::Sort {
        dimension,
        is_stable: true,
        num_keys,
    })
}

fn top_k_p(k: usize) -> Primitive {
    Primitive::Sort(SortOp::TopK { k })
}

fn bitcast_p(new_dtype: DType) -> Primitive {
    Primitive::Sort(SortOp::BitcastConvertType { new_dtype })
}

fn run(p: &Primitive, args: &[HostArray]) -> Vec<HostArray> {
    let refs: Vec<&HostArray> = args.iter().collect();
    eval(p, &refs).unwrap()
}

#[test]
fn floats_sort_in_total_order_with_equal_zeros_and_nans_last() {
    let x = vec![
        1.0f32,
        f32::NAN,
        -0.0,
        f32::NEG_INFINITY,
        0.0,
        -f32::NAN,
        -2.0,
        f32::INFINITY,
        -0.0,
    ];
    let iota: Vec<i32> = (0..9).collect();
    let outs = run(&sort_p(0, 1), &[host(&[9], x), host(&[9], iota)]);
    let v = f32s(&outs[0]);
    let want = [f32::NEG_INFINITY, -2.0, -0.0, 0.0, -0.0, 1.0, f32::INFINITY];
    for (g, w) in v.iter().zip(want) {
        assert_eq!(g.to_bits(), w.to_bits(), "{v:?}");
    }
    assert!(v[7].is_nan() && v[8].is_nan());
    // Stable: equal zeros and the two NaNs keep their input order.
    assert_eq!(i32s(&outs[1]), vec![3, 6, 2, 4, 8, 0, 7, 1, 5]);
}

#[test]
fn every_dtype_sorts_ascending() {
    let cases: Vec<(Buffer, Buffer)> = vec![
        (
            vec![3i8, i8::MIN, -1, i8::MAX, 0].into(),
            vec![i8::MIN, -1, 0, 3, i8::MAX].into(),
        ),
        (
            vec![5i64, i64::MIN, i64::MAX, -7].into(),
            vec![i64::MIN, -7, 5, i64::MAX].into(),
        ),
        (
            vec![u64::MAX, 0u64, 1 << 63, 7].into(),
            vec![0u64, 7, 1 << 63, u64::MAX].into(),
        ),
        (vec![200u8, 3, 255, 0].into(), vec![0u8, 3, 200, 255].into()),
        (
            vec![true, false, true, false].into(),
            vec![false, false, true, true].into(),
        ),
        (
            vec![2.5f64, -1e300, 1e-300, -0.5].into(),
            vec![-1e300, -0.5, 1e-300, 2.5].into(),
        ),
        (
            vec![
                half::f16::from_f32(2.0),
                half::f16::NEG_INFINITY,
                half::f16::from_f32(-1.0),
            ]
            .into(),
            vec![
                half::f16::NEG_INFINITY,
                half::f16::from_f32(-1.0),
                half::f16::from_f32(2.0),
            ]
            .into(),
        ),
        (
            vec![half::bf16::from_f32(1.0), half::bf16::from_f32(-3.0)].into(),
            vec![half::bf16::from_f32(-3.0), half::bf16::from_f32(1.0)].into(),
        ),
    ];
    for (x, want) in cases {
        let n = x.len();
        let out = run(&sort_p(0, 1), &[host(&[n], x)]);
        assert_eq!(out[0].buffer(), &want);
    }
}

#[test]
fn two_keys_sort_lexicographically_and_carry_payload() {
    let k0 = vec![1i32, 0, 1, 0, 1];
    let k1 = vec![5.0f32, 9.0, 2.0, 9.0, 5.0];
    let pay = vec![10i32, 11, 12, 13, 14];
    let outs = run(
        &sort_p(0, 2),
        &[host(&[5], k0), host(&[5], k1), host(&[5], pay)],
    );
    assert_eq!(i32s(&outs[0]), vec![0, 0, 1, 1, 1]);
    assert_eq!(f32s(&outs[1]), vec![9.0, 9.0, 2.0, 5.0, 5.0]);
    assert_eq!(i32s(&outs[2]), vec![11, 13, 12, 10, 14]);
    // num_keys = 1: only the first operand orders (ties stay in input order).
    let outs = run(
        &sort_p(0, 1),
        &[
            host(&[5], vec![1i32, 0, 1, 0, 1]),
            host(&[5], vec![5.0f32, 9.0, 2.0, 9.0, 5.0]),
        ],
    );
    assert_eq!(f32s(&outs[1]), vec![9.0, 9.0, 5.0, 2.0, 5.0]);
}

#[test]
fn sorts_along_any_axis() {
    // [[3, 1, 2], [0, 5, -1]]
    let x = vec![3.0f32, 1.0, 2.0, 0.0, 5.0, -1.0];
    let rows = run(&sort_p(1, 1), &[host(&[2, 3], x.clone())]);
    assert_eq!(f32s(&rows[0]), vec![1.0, 2.0, 3.0, -1.0, 0.0, 5.0]);
    let cols = run(&sort_p(0, 1), &[host(&[2, 3], x)]);
    assert_eq!(f32s(&cols[0]), vec![0.0, 1.0, -1.0, 3.0, 5.0, 2.0]);
    // Middle axis of a rank-3 array and an empty axis.
    let y: Vec<i32> = vec![4, 1, 3, 2, 0, 5, 9, 6];
    let out = run(&sort_p(1, 1), &[host(&[2, 2, 2], y)]);
    assert_eq!(i32s(&out[0]), vec![3, 1, 4, 2, 0, 5, 9, 6]);
    let e = run(&sort_p(0, 1), &[host(&[0], Vec::<f32>::new())]);
    assert_eq!(e[0].shape(), &[0]);
}

#[test]
fn sort_rejects_bad_operands() {
    let a = Aval::new(vec![3], DType::F32);
    let b = Aval::new(vec![4], DType::F32);
    let shape = microjax::prims::shape::abstract_eval;
    assert!(matches!(
        shape(&sort_p(0, 1), &[a.clone(), b]),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        shape(&sort_p(1, 1), std::slice::from_ref(&a)),
        Err(Error::Param { .. })
    ));
    assert!(matches!(
        shape(&sort_p(0, 2), std::slice::from_ref(&a)),
        Err(Error::Param { .. })
    ));
    assert!(matches!(
        shape(&sort_p(0, 1), &[]),
        Err(Error::Arity { .. })
    ));
    let k = Aval::new(vec![3], DType::Key);
    assert!(matches!(
        shape(&sort_p(0, 1), &[k]),
        Err(Error::DType { .. })
    ));
    assert!(matches!(
        shape(&top_k_p(4), std::slice::from_ref(&a)),
        Err(Error::Param { .. })
    ));
    let s = Aval::new(vec![], DType::F32);
    assert!(matches!(shape(&top_k_p(0), &[s]), Err(Error::Shape { .. })));
}

#[test]
fn top_k_largest_first_ties_by_lower_index() {
    let x = vec![1.0f32, 3.0, f32::NAN, 3.0, -1.0, 3.0, 0.0, 2.0];
    let outs = run(&top_k_p(3), &[host(&[2, 4], x)]);
    assert_eq!(outs[0].shape(), &[2, 3]);
    let v = f32s(&outs[0]);
    assert!(v[0].is_nan());
    assert_eq!(&v[1..], &[3.0, 3.0, 3.0, 2.0, 0.0]);
    assert_eq!(i32s(&outs[1]), vec![2, 1, 3, 1, 3, 2]);
    let ints = run(&top_k_p(2), &[host(&[4], vec![i8::MIN, 5, i8::MAX, 5])]);
    assert_eq!(ints[0].buffer(), &Buffer::I8(vec![i8::MAX, 5].into()));
    assert_eq!(i32s(&ints[1]), vec![2, 1]);
}

#[test]
fn bitcast_all_width_combinations() {
    // f32 1.0 = 0x3f800000, little-endian bytes 00 00 80 3f.
    let one = host(&[1], vec![1.0f32]);
    let bytes = run(&bitcast_p(DType::U8), std::slice::from_ref(&one));
    assert_eq!(bytes[0].shape(), &[1, 4]);
    assert_eq!(
        bytes[0].buffer(),
        &Buffer::U8(vec![0, 0, 0x80, 0x3f].into())
    );
    let back = run(&bitcast_p(DType::F32), &[bytes[0].clone()]);
    assert_eq!(back[0], one);
    let same = run(&bitcast_p(DType::I32), std::slice::from_ref(&one));
    assert_eq!(same[0].buffer(), &Buffer::I32(vec![0x3f80_0000].into()));
    let halves = run(&bitcast_p(DType::U16), &[one]);
    assert_eq!(halves[0].buffer(), &Buffer::U16(vec![0, 0x3f80].into()));
    let d = host(&[], vec![-2.0f64]);
    let words = run(&bitcast_p(DType::I32), std::slice::from_ref(&d));
    assert_eq!(words[0].shape(), &[2]);
    assert_eq!(run(&bitcast_p(DType::F64), &[words[0].clone()])[0], d);
    let h = run(&bitcast_p(DType::I16), &[host(&[1], vec![half::f16::ONE])]);
    assert_eq!(h[0].buffer(), &Buffer::I16(vec![0x3c00].into()));
    let b = run(&bitcast_p(DType::U16), &[host(&[1], vec![half::bf16::ONE])]);
    assert_eq!(b[0].buffer(), &Buffer::U16(vec![0x3f80].into()));
    // Every pair of numeric dtypes round-trips through the shape rule.
    for from in microjax::dtype::ALL_DTYPES {
        for to in microjax::dtype::ALL_DTYPES {
            // A narrower source needs a trailing axis of the width ratio.
            let last = match (from.itemsize(), to.itemsize()) {
                (f, t) if f > 0 && f < t => t / f,
                _ => 3,
            };
            let aval = Aval::new(vec![2, last], from);
            let r = microjax::prims::shape::abstract_eval(&bitcast_p(to), &[aval]);
            let numeric = from.is_numeric() && to.is_numeric();
            assert_eq!(
                r.is_ok(),
                numeric || (from == DType::Bool && to == DType::Bool),
                "{from} -> {to}: {r:?}"
            );
        }
    }
    let bad = Aval::new(vec![3], DType::U8);
    assert!(matches!(
        microjax::prims::shape::abstract_eval(&bitcast_p(DType::F32), &[bad]),
        Err(Error::Param { .. })
    ));
}

// ------------------------------------------------------------- AD rules

fn multi(b: &mut Builder, p: Primitive, ins: &[Atom]) -> Vec<Atom> {
    b.add_eqn(p, ins.to_vec(), None)
        .unwrap()
        .into_iter()
        .map(Atom::Var)
        .collect()
}

#[test]
fn transpose_of_sort_payload_is_its_adjoint() {
    // f(x) = sort(keys, x)[1] with known keys (ties included), axis 1 of [2, 4].
    let keys = vec![3.0, 1.0, 3.0, -2.0, 0.5, 0.5, f64::NAN, -1.0];
    let x = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let ct = vec![0.3, -1.0, 2.0, 0.7, 1.5, -0.25, 4.0, 3.0];
    let av = Aval::new(vec![2, 4], DType::F64);
    let f = build(&[av.clone(), av], |b, xs| {
        vec![multi(b, sort_p(1, 1), xs)[1].clone()]
    });
    let fx = f64s(
        &eval_closed(
            &f,
            &[
                arc(host(&[2, 4], keys.clone())),
                arc(host(&[2, 4], x.clone())),
            ],
        )
        .unwrap()[0],
    );
    assert_eq!(fx, vec![4.0, 2.0, 1.0, 3.0, 8.0, 5.0, 6.0, 7.0]);
    let t = transpose_jaxpr(&f, &[false, true]).unwrap();
    let out = eval_closed(
        &t,
        &[arc(host(&[2, 4], keys)), arc(host(&[2, 4], ct.clone()))],
    )
    .unwrap();
    let ftct = f64s(out.last().unwrap());
    assert!((inner(&ct, &fx) - inner(&ftct, &x)).abs() < 1e-12);
}

/// `<J^T c, t>` from the VJP equals `<c, J t>` from the JVP.
fn check_vjp_against_jvp(f: &ClosedJaxpr, x: &[f64], shape: &[usize], t: &[f64], c: &[f64]) {
    let (jf, _) = jvp_jaxpr(f, &[true], true).unwrap();
    let outs = eval_closed(
        &jf,
        &[arc(host(shape, x.to_vec())), arc(host(shape, t.to_vec()))],
    )
    .unwrap();
    let jt = f64s(&outs[1]);
    let v = vjp_jaxpr(f, &[true]).unwrap();
    let fo = eval_closed(&v.fwd, &[arc(host(shape, x.to_vec()))]).unwrap();
    let out_shape = fo[0].shape().to_vec();
    let mut bargs = fo[1..].to_vec();
    bargs.push(arc(host(&out_shape, c.to_vec())));
    let g = f64s(&eval_closed(&v.bwd, &bargs).unwrap()[0]);
    assert!((inner(&g, t) - inner(c, &jt)).abs() < 1e-12, "{g:?} {jt:?}");
}

#[test]
fn sort_and_top_k_vjp_match_jvp() {
    let x = vec![0.5, -1.0, 2.0, 0.5, 3.0, -4.0];
    let t = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let av = Aval::new(vec![2, 3], DType::F64);
    let sort1 = build(std::slice::from_ref(&av), |b, xs| {
        vec![multi(b, sort_p(0, 1), xs)[0].clone()]
    });
    check_vjp_against_jvp(&sort1, &x, &[2, 3], &t, &[1.0, -2.0, 0.5, 3.0, 1.0, 2.0]);
    let topk = build(std::slice::from_ref(&av), |b, xs| {
        vec![multi(b, top_k_p(2), xs)[0].clone()]
    });
    check_vjp_against_jvp(&topk, &x, &[2, 3], &t, &[1.0, -2.0, 0.5, 3.0]);
    // The tangent of top_k is the tangent at the selected positions.
    let (jf, _) = jvp_jaxpr(&topk, &[true], true).unwrap();
    let outs = eval_closed(
        &jf,
        &[arc(host(&[2, 3], x.clone())), arc(host(&[2, 3], t.clone()))],
    )
    .unwrap();
    assert_eq!(f64s(&outs[0]), vec![2.0, 0.5, 3.0, 0.5]);
    assert_eq!(f64s(&outs[1]), vec![3.0, 1.0, 5.0, 4.0]);
}

#[test]
fn batched_sort_and_top_k_match_per_example() {
    let xs = [vec![3.0f32, 1.0, 2.0], vec![0.0, -5.0, 7.0]];
    let av = Aval::new(vec![3], DType::F32);
    let sort1 = build(std::slice::from_ref(&av), |b, x| multi(b, sort_p(0, 1), x));
    let topk = build(std::slice::from_ref(&av), |b, x| multi(b, top_k_p(2), x));
    for f in [sort1, topk] {
        // Batched at the last axis: [3, 2].
        let stacked: Vec<f32> = (0..3).flat_map(|i| [xs[0][i], xs[1][i]]).collect();
        let nout = f.out_avals().unwrap().len();
        let bj = batch_jaxpr(&f, &[Some(1)], 2, &vec![Some(0); nout]).unwrap();
        let got = eval_closed(&bj, &[arc(host(&[3, 2], stacked))]).unwrap();
        for (e, x) in xs.iter().enumerate() {
            let want = eval_closed(&f, &[arc(host(&[3], x.clone()))]).unwrap();
            for (g, w) in got.iter().zip(&want) {
                let n = w.size();
                let flat: Vec<HostArray> = vec![(**g).clone()];
                let row = match flat[0].buffer() {
                    Buffer::F32(v) => Buffer::F32(v[e * n..(e + 1) * n].to_vec().into()),
                    Buffer::I32(v) => Buffer::I32(v[e * n..(e + 1) * n].to_vec().into()),
                    other => panic!("{:?}", other.dtype()),
                };
                assert_eq!(&row, w.buffer());
            }
        }
    }
}

#[test]
fn params_round_trip_through_canonical_text_and_display() {
    use microjax::ir::canonical::{canonical, parse, ParseLimits};
    use microjax::ir::display::display;
    let a = Aval::new(vec![2, 3], DType::F32);
    let i = Aval::new(vec![2, 3], DType::I32);
    let j = build(&[a.clone(), i, a], |b, xs| {
        let mut outs = multi(
            b,
            Primitive::Sort(SortOp::Sort {
                dimension: 1,
                is_stable: false,
                num_keys: 2,
            }),
            xs,
        );
        outs.extend(multi(b, top_k_p(2), &xs[..1]));
        outs.extend(multi(b, bitcast_p(DType::U16), &xs[..1]));
        outs
    });
    let text = canonical(&j);
    let back = parse(&text, &ParseLimits::default()).unwrap();
    assert_eq!(back, j, "{text}");
    let shown = display(&j);
    assert!(
        shown.contains("sort[dimension=1 is_stable=False num_keys=2]"),
        "{shown}"
    );
    assert!(shown.contains("top_k[k=2]"), "{shown}");
    assert!(
        shown.contains("bitcast_convert_type[new_dtype=uint16]"),
        "{shown}"
    );
    assert_eq!(j.out_avals().unwrap()[5].shape, vec![2, 3, 2]);
}
