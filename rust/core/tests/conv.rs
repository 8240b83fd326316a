//! `conv_general_dilated` and the windowed reductions: kernel values against
//! naive loops written here (strides, padding, both dilations, feature and
//! batch groups, layouts), shape errors, JVP against central differences,
//! VJP against JVP (both transposes), and vmap against a per-example loop.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::prims::conv::{ConvDims, ConvParams};
use microjax::prims::window::{Select, WindowOp, WindowParams, WindowReduce};
use microjax::prims::Transpose;
use microjax::{Atom, Aval, Buffer, Builder, DType, Error, HostArray, Primitive};
use std::sync::Arc;

use crate::common;
use common::rules::{check_jvp_vjp, check_vmap};
use common::{eval, f64a, f64s, f64v, squared, Rng};

fn conv_p(c: ConvParams) -> Primitive {
    Primitive::Conv(Box::new(c))
}

fn params(
    n: usize, strides: &[usize], padding: &[(i64, i64)], lhs_dil: &[usize], rhs_dil: &[usize],
    fg: usize, bg: usize,
) -> ConvParams {
    let mut c = ConvParams::simple(n);
    c.window_strides = strides.to_vec();
    c.padding = padding.to_vec();
    c.lhs_dilation = lhs_dil.to_vec();
    c.rhs_dilation = rhs_dil.to_vec();
    c.feature_group_count = fg;
    c.batch_group_count = bg;
    c
}

fn multi(dims: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &d in dims {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..d).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

fn flat(ix: &[usize], shape: &[usize]) -> usize {
    ix.iter().zip(shape).fold(0, |a, (&i, &s)| a * s + i)
}

/// Direct definition of the convolution in NC.../OI.../NC... layouts.
fn naive_conv(c: &ConvParams, x: &HostArray, w: &HostArray, out_shape: &[usize]) -> Vec<f64> {
    let (xs, ws) = (x.shape(), w.shape());
    let (xv, wv) = (f64s(x), f64s(w));
    let (fg, bg) = (c.feature_group_count, c.batch_group_count);
    let (n_out, o_total) = (out_shape[0], out_shape[1]);
    let cin = ws[1];
    let og = o_total / (fg * bg);
    let mut out = vec![0.0; out_shape.iter().product()];
    for n in 0..n_out {
        for o in 0..o_total {
            let g = o / og;
            let (gf, gb) = if fg > 1 { (g, 0) } else { (0, g) };
            for p in multi(&out_shape[2..]) {
                let mut acc = 0.0;
                for ci in 0..cin {
                    for k in multi(&ws[2..]) {
                        let mut ix = vec![gb * n_out + n, gf * cin + ci];
                        let mut ok = true;
                        for d in 0..k.len() {
                            let pos = (p[d] * c.window_strides[d] + k[d] * c.rhs_dilation[d])
                                as i64
                                - c.padding[d].0;
                            let ld = c.lhs_dilation[d] as i64;
                            if pos < 0 || pos % ld != 0 || pos / ld >= xs[d + 2] as i64 {
                                ok = false;
                                break;
                            }
                            ix.push((pos / ld) as usize);
                        }
                        if ok {
                            let mut wi = vec![o, ci];
                            wi.extend(&k);
                            acc += xv[flat(&ix, xs)] * wv[flat(&wi, ws)];
                        }
                    }
                }
                let mut oi = vec![n, o];
                oi.extend(&p);
                out[flat(&oi, out_shape)] = acc;
            }
        }
    }
    out
}

/// (params, lhs shape, rhs shape) configurations covering the geometry.
fn configs() -> Vec<(ConvParams, Vec<usize>, Vec<usize>)> {
    vec![
        (
            params(1, &[1], &[(0, 0)], &[1], &[1], 1, 1),
            vec![2, 3, 7],
            vec![4, 3, 3],
        ),
        (
            params(1, &[2], &[(2, 1)], &[1], &[2], 1, 1),
            vec![2, 2, 9],
            vec![3, 2, 3],
        ),
        (
            params(1, &[1], &[(-1, 2)], &[2], &[1], 1, 1),
            vec![1, 2, 5],
            vec![2, 2, 2],
        ),
        (
            params(2, &[1, 2], &[(1, 1), (0, 1)], &[1, 1], &[1, 1], 1, 1),
            vec![2, 3, 5, 6],
            vec![4, 3, 3, 2],
        ),
        (
            params(2, &[2, 1], &[(0, 0), (1, 0)], &[1, 2], &[2, 1], 1, 1),
            vec![1, 2, 6, 4],
            vec![2, 2, 2, 3],
        ),
        (
            params(2, &[1, 1], &[(1, 1), (1, 1)], &[1, 1], &[1, 1], 2, 1),
            vec![2, 4, 4, 4],
            vec![6, 2, 3, 3],
        ),
        (
            params(1, &[1], &[(1, 0)], &[1], &[1], 3, 1),
            vec![2, 3, 5],
            vec![3, 1, 2],
        ),
        (
            params(1, &[1], &[(0, 1)], &[1], &[1], 1, 2),
            vec![4, 3, 5],
            vec![4, 3, 2],
        ),
        (
            params(2, &[1, 1], &[(0, 0), (0, 0)], &[1, 1], &[1, 1], 1, 3),
            vec![3, 2, 3, 3],
            vec![3, 2, 2, 2],
        ),
    ]
}

#[test]
fn conv_matches_the_direct_definition() {
    let mut rng = Rng(7);
    for (c, ls, rs) in configs() {
        let (x, w) = (rng.f64s(&ls), rng.f64s(&rs));
        let p = conv_p(c.clone());
        let got = eval(&p, &[&x, &w]).unwrap().pop().unwrap();
        let want = naive_conv(&c, &x, &w, got.shape());
        for (g, w) in f64s(&got).iter().zip(&want) {
            assert!((g - w).abs() < 1e-12, "{c:?}: {g} vs {w}");
        }
    }
}

/// Windows wider than their output (the weight gradient's shape: a window
/// as large as the image, a 3x3 output), gathered along the window in row
/// tiles of several column chunks: plain, strided and dilated, with
/// feature and batch groups.
#[test]
fn wide_window_conv_matches_the_direct_definition() {
    let mut rng = Rng(8);
    let cases = [
        (
            params(2, &[1, 1], &[(1, 1), (1, 1)], &[1, 1], &[1, 1], 1, 1),
            vec![2, 6, 40, 40],
            vec![4, 6, 40, 40],
        ),
        (
            params(2, &[2, 1], &[(2, 1), (0, 1)], &[1, 1], &[2, 1], 2, 1),
            vec![3, 4, 37, 38],
            vec![4, 2, 17, 36],
        ),
        (
            params(2, &[1, 1], &[(1, 1), (1, 1)], &[2, 1], &[1, 1], 1, 2),
            vec![4, 3, 20, 40],
            vec![4, 3, 38, 40],
        ),
    ];
    for (c, ls, rs) in cases {
        let (x, w) = (rng.f64s(&ls), rng.f64s(&rs));
        let got = eval(&conv_p(c.clone()), &[&x, &w]).unwrap().pop().unwrap();
        let want = naive_conv(&c, &x, &w, got.shape());
        assert!(
            got.shape().iter().skip(2).all(|&d| d <= 4),
            "{:?}",
            got.shape()
        );
        for (g, w) in f64s(&got).iter().zip(&want) {
            assert!((g - w).abs() < 1e-10, "{c:?}: {g} vs {w}");
        }
    }
}

#[test]
fn conv_output_shapes_follow_jax() {
    // 3x3 SAME-style padding, stride 2: 32 -> 16; window larger than input: 0.
    let c = params(2, &[2, 2], &[(0, 1), (0, 1)], &[1, 1], &[1, 1], 1, 1);
    let out =
        microjax::prims::Family::abstract_eval(&c, &[f64v(&[2, 3, 32, 32]), f64v(&[8, 3, 3, 3])]);
    assert_eq!(out.unwrap()[0].shape, vec![2, 8, 16, 16]);
    let c = params(1, &[1], &[(0, 0)], &[1], &[1], 1, 1);
    let out = microjax::prims::Family::abstract_eval(&c, &[f64v(&[1, 1, 2]), f64v(&[1, 1, 3])]);
    assert_eq!(out.unwrap()[0].shape, vec![1, 1, 0]);
}

#[test]
fn conv_layouts_permute_the_same_values() {
    // NHWC / HWIO / NHWC against NCHW / OIHW / NCHW on transposed data.
    let mut rng = Rng(11);
    let c = params(2, &[1, 2], &[(1, 0), (1, 1)], &[1, 1], &[1, 1], 1, 1);
    let (x, w) = (rng.f64s(&[2, 3, 5, 4]), rng.f64s(&[4, 3, 2, 3]));
    let base = eval(&conv_p(c.clone()), &[&x, &w]).unwrap().pop().unwrap();
    let tr = |a: &HostArray, perm: Vec<usize>| {
        eval(&Primitive::Transpose(Transpose { permutation: perm }), &[a])
            .unwrap()
            .pop()
            .unwrap()
    };
    let (xt, wt) = (tr(&x, vec![0, 2, 3, 1]), tr(&w, vec![2, 3, 1, 0]));
    let mut c2 = c.clone();
    c2.dims = ConvDims {
        lhs_spec: vec![0, 3, 1, 2],
        rhs_spec: vec![3, 2, 0, 1],
        out_spec: vec![0, 3, 1, 2],
    };
    let got = eval(&conv_p(c2), &[&xt, &wt]).unwrap().pop().unwrap();
    assert_eq!(f64s(&got), f64s(&tr(&base, vec![0, 2, 3, 1])));
}

#[test]
fn conv_f32_and_int_dtypes() {
    let x = HostArray::new(vec![1, 1, 4], Buffer::F32(vec![1.0, 2.0, 3.0, 4.0].into())).unwrap();
    let w = HostArray::new(vec![1, 1, 2], Buffer::F32(vec![1.0, -1.0].into())).unwrap();
    let p = conv_p(ConvParams::simple(1));
    let got = eval(&p, &[&x, &w]).unwrap().pop().unwrap();
    assert_eq!(got.buffer(), &Buffer::F32(vec![-1.0, -1.0, -1.0].into()));
    let x = HostArray::new(vec![1, 1, 3], Buffer::I32(vec![1, 2, 3].into())).unwrap();
    let w = HostArray::new(vec![1, 1, 2], Buffer::I32(vec![2, 1].into())).unwrap();
    let got = eval(&p, &[&x, &w]).unwrap().pop().unwrap();
    assert_eq!(got.buffer(), &Buffer::I32(vec![4, 7].into()));
}

#[test]
fn conv_shape_errors_name_the_shapes() {
    let c = ConvParams::simple(1);
    let e = microjax::prims::Family::abstract_eval(&c, &[f64v(&[1, 4, 5]), f64v(&[2, 3, 2])])
        .unwrap_err();
    assert!(matches!(e, Error::Param { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("4 // 1 != 3") && msg.contains("(1, 4, 5)"),
        "{msg}"
    );
    let mut g = c.clone();
    g.feature_group_count = 3;
    let e = microjax::prims::Family::abstract_eval(&g, &[f64v(&[1, 4, 5]), f64v(&[3, 1, 2])])
        .unwrap_err();
    assert!(
        e.to_string().contains("must divide lhs feature dimension"),
        "{e}"
    );
    let e =
        microjax::prims::Family::abstract_eval(&c, &[f64v(&[1, 4, 5]), f64v(&[2, 4])]).unwrap_err();
    assert!(matches!(e, Error::Shape { .. }), "{e}");
    let f32a = Aval::new(vec![1, 1, 2], DType::F32);
    let e = microjax::prims::Family::abstract_eval(&c, &[f32a, f64v(&[1, 1, 2])]).unwrap_err();
    assert!(matches!(e, Error::DType { .. }), "{e}");
}

#[test]
fn conv_jvp_and_both_transposes() {
    let mut rng = Rng(3);
    for (i, (c, ls, rs)) in configs().into_iter().enumerate() {
        let f = squared(&conv_p(c), &[f64v(&ls), f64v(&rs)]);
        let xs = vec![rng.f64s(&ls), rng.f64s(&rs)];
        for nz in [[true, true], [true, false], [false, true]] {
            check_jvp_vjp(&f, &xs, &nz, 17 + i as u64);
        }
    }
}

fn stacked(rng: &mut Rng, n: usize, shape: &[usize]) -> HostArray {
    let mut s = vec![n];
    s.extend(shape);
    (*rng.f64s(&s)).clone()
}

#[test]
fn conv_vmap_every_batching_combination() {
    let mut rng = Rng(5);
    for (c, ls, rs) in configs() {
        let p = conv_p(c);
        for n in [0, 1, 3] {
            for batched in [[true, true], [true, false], [false, true]] {
                let l = if batched[0] {
                    stacked(&mut rng, n, &ls)
                } else {
                    (*rng.f64s(&ls)).clone()
                };
                let r = if batched[1] {
                    stacked(&mut rng, n, &rs)
                } else {
                    (*rng.f64s(&rs)).clone()
                };
                check_vmap(&p, &[l, r], &batched, n);
            }
        }
    }
}

// ----------------------------------------------------------------- windows

fn win(op: WindowReduce, w: WindowParams) -> Primitive {
    Primitive::Window(Box::new(WindowOp::Reduce { op, w }))
}

fn geometry(
    window: &[usize], strides: &[usize], padding: &[(i64, i64)], base: &[usize], wdil: &[usize],
) -> WindowParams {
    WindowParams {
        window_dimensions: window.to_vec(),
        window_strides: strides.to_vec(),
        padding: padding.to_vec(),
        base_dilation: base.to_vec(),
        window_dilation: wdil.to_vec(),
    }
}

/// Direct windowed reduction (padding and holes read `init`).
fn naive_window(w: &WindowParams, x: &HostArray, out: &[usize], op: WindowReduce) -> Vec<f64> {
    let (xs, xv) = (x.shape(), f64s(x));
    let init = match op {
        WindowReduce::Sum => 0.0,
        WindowReduce::Max => f64::NEG_INFINITY,
        WindowReduce::Min => f64::INFINITY,
    };
    multi(out)
        .into_iter()
        .map(|p| {
            let mut acc = init;
            for k in multi(&w.window_dimensions) {
                let mut ix = Vec::new();
                for d in 0..k.len() {
                    let pos = (p[d] * w.window_strides[d] + k[d] * w.window_dilation[d]) as i64
                        - w.padding[d].0;
                    let bd = w.base_dilation[d] as i64;
                    if pos < 0 || pos % bd != 0 || pos / bd >= xs[d] as i64 {
                        break;
                    }
                    ix.push((pos / bd) as usize);
                }
                let v = if ix.len() == k.len() {
                    xv[flat(&ix, xs)]
                } else {
                    init
                };
                acc = match op {
                    WindowReduce::Sum => acc + v,
                    WindowReduce::Max => acc.max(v),
                    WindowReduce::Min => acc.min(v),
                };
            }
            acc
        })
        .collect()
}

fn window_configs() -> Vec<(WindowParams, Vec<usize>)> {
    vec![
        (geometry(&[2], &[1], &[(0, 0)], &[1], &[1]), vec![6]),
        (geometry(&[3], &[2], &[(1, 2)], &[1], &[1]), vec![7]),
        (
            geometry(
                &[1, 2, 2],
                &[1, 2, 2],
                &[(0, 0), (0, 0), (0, 0)],
                &[1, 1, 1],
                &[1, 1, 1],
            ),
            vec![2, 4, 6],
        ),
        (
            geometry(&[2, 3], &[1, 1], &[(1, 0), (1, 1)], &[1, 1], &[1, 1]),
            vec![3, 4],
        ),
        (
            geometry(&[2, 2], &[1, 2], &[(0, 1), (1, 0)], &[2, 1], &[1, 2]),
            vec![3, 5],
        ),
    ]
}

#[test]
fn reduce_windows_match_the_direct_definition() {
    let mut rng = Rng(9);
    for (w, shape) in window_configs() {
        let x = rng.f64s(&shape);
        for op in [WindowReduce::Sum, WindowReduce::Max, WindowReduce::Min] {
            let got = eval(&win(op, w.clone()), &[&x]).unwrap().pop().unwrap();
            let want = naive_window(&w, &x, got.shape(), op);
            for (g, e) in f64s(&got).iter().zip(&want) {
                assert!((g - e).abs() < 1e-12, "{op:?} {w:?}: {g} vs {e}");
            }
        }
    }
}

#[test]
fn reduce_window_ad_and_vmap() {
    let mut rng = Rng(13);
    for (i, (w, shape)) in window_configs().into_iter().enumerate() {
        let undilated = w
            .base_dilation
            .iter()
            .chain(&w.window_dilation)
            .all(|&d| d == 1);
        for op in [WindowReduce::Sum, WindowReduce::Max, WindowReduce::Min] {
            let p = win(op, w.clone());
            let f = squared(&p, &[f64v(&shape)]);
            if op == WindowReduce::Sum || undilated {
                check_jvp_vjp(&f, &[rng.f64s(&shape)], &[true], 29 + i as u64);
            }
            for n in [0, 2] {
                check_vmap(&p, &[stacked(&mut rng, n, &shape)], &[true], n);
            }
        }
    }
}

#[test]
fn max_pool_gradient_goes_to_the_first_maximum() {
    // Windows of 2 with stride 1 over [1, 3, 3, 2]: the tie in window 1
    // selects the first 3.
    let x = Arc::new(f64a(&[4], vec![1.0, 3.0, 3.0, 2.0]));
    let w = geometry(&[2], &[1], &[(0, 0)], &[1], &[1]);
    let s = Primitive::Window(Box::new(WindowOp::SelectAndScatterAdd {
        select: Select::Ge,
        w: w.clone(),
    }));
    let src = f64a(&[3], vec![1.0, 10.0, 100.0]);
    let got = eval(&s, &[&src, &x]).unwrap().pop().unwrap();
    assert_eq!(f64s(&got), vec![0.0, 11.0, 100.0, 0.0]);
    let g = Primitive::Window(Box::new(WindowOp::SelectAndGatherAdd {
        select: Select::Le,
        w,
    }));
    let t = f64a(&[4], vec![1.0, 2.0, 3.0, 4.0]);
    let got = eval(&g, &[&t, &x]).unwrap().pop().unwrap();
    assert_eq!(f64s(&got), vec![1.0, 2.0, 4.0]);
}

#[test]
fn select_and_scatter_add_rules() {
    let mut rng = Rng(21);
    let w = geometry(&[2, 2], &[2, 1], &[(0, 1), (1, 0)], &[1, 1], &[1, 1]);
    let x = rng.f64s(&[4, 3]);
    let out = microjax::prims::window::reduced_shape("t", &w, &[4, 3]).unwrap();
    let s = Primitive::Window(Box::new(WindowOp::SelectAndScatterAdd {
        select: Select::Ge,
        w,
    }));
    let f = squared(&s, &[f64v(&out), f64v(&[4, 3])]);
    check_jvp_vjp(&f, &[rng.f64s(&out), x.clone()], &[true, false], 5);
    for batched in [[true, true], [true, false], [false, true]] {
        let a = if batched[0] {
            stacked(&mut rng, 2, &out)
        } else {
            (*rng.f64s(&out)).clone()
        };
        let b = if batched[1] {
            stacked(&mut rng, 2, &[4, 3])
        } else {
            (*rng.f64s(&[4, 3])).clone()
        };
        check_vmap(&s, &[a, b], &batched, 2);
    }
}

#[test]
fn window_errors() {
    let w = geometry(&[2], &[1], &[(0, 0)], &[1], &[1]);
    let e = microjax::prims::Family::abstract_eval(
        &WindowOp::Reduce {
            op: WindowReduce::Max,
            w: w.clone(),
        },
        &[f64v(&[2, 3])],
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::Param { .. }) && e.to_string().contains("(2, 3)"),
        "{e}"
    );
    let e = microjax::prims::Family::abstract_eval(
        &WindowOp::Reduce {
            op: WindowReduce::Sum,
            w: geometry(&[4], &[1], &[(0, 0)], &[1], &[1]),
        },
        &[f64v(&[2])],
    )
    .unwrap_err();
    assert!(matches!(e, Error::Shape { .. }), "{e}");
}

#[test]
fn display_and_canonical_text_of_conv_and_windows() {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(f64v(&[1, 2, 5])).unwrap());
    let w = Atom::Var(b.add_input(f64v(&[3, 2, 2])).unwrap());
    let mut c = ConvParams::simple(1);
    c.padding = vec![(-1, 2)];
    let y = b.add_eqn1(conv_p(c), vec![x, w]).unwrap();
    let g = geometry(
        &[1, 2, 2],
        &[1, 1, 2],
        &[(0, 0), (0, 0), (1, 0)],
        &[1, 1, 1],
        &[1, 1, 1],
    );
    let z = b.add_eqn1(win(WindowReduce::Max, g), vec![y]).unwrap();
    let j = b.build(vec![z]).unwrap();
    let text = microjax::ir::display::display(&j);
    assert!(
        text.contains(
            "dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), \
             out_spec=(0, 1, 2))"
        ),
        "{text}"
    );
    assert!(text.contains("padding=((-1, 2),)"), "{text}");
    assert!(
        text.contains("reduce_window_max[base_dilation=(1, 1, 1)"),
        "{text}"
    );
    let canon = microjax::ir::canonical::canonical(&j);
    let back = microjax::ir::canonical::parse(&canon, &Default::default()).unwrap();
    assert_eq!(back, j);
}
