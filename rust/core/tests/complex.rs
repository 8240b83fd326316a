//! complex64 / complex128: dtype facts, storage (bytes, equality), literals
//! in the display and canonical text, the binary export round trip, the
//! complex kernels against closed forms, and the typed errors of rules that
//! take no complex operands (JAX's TypeError texts).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::array::{C32, C64};
use microjax::export::{Determinism, Program};
use microjax::ir::canonical::{canonical, parse, ParseLimits};
use microjax::ir::display::display;
use microjax::prims::kernel::eval_one;
use microjax::prims::shape::abstract_eval;
use microjax::prims::{ConvertElementType, DotGeneral};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, CmpOp, DType, Error, HostArray, Literal,
    Primitive, ReduceOp, Scalar, UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::{dot_dims, reduce};

fn c64s(v: &[(f32, f32)]) -> HostArray {
    let z: Vec<C32> = v.iter().map(|&(re, im)| C32::new(re, im)).collect();
    HostArray::new(vec![v.len()], Buffer::C64(z.into())).unwrap()
}

fn c128v(v: &[(f64, f64)]) -> Vec<C64> {
    v.iter().map(|&(re, im)| C64::new(re, im)).collect()
}

fn c128s(v: &[(f64, f64)]) -> HostArray {
    HostArray::new(vec![v.len()], Buffer::C128(c128v(v).into())).unwrap()
}

fn run(p: Primitive, args: &[&HostArray]) -> microjax::Result<HostArray> {
    eval_one(&microjax::exec::ExecCtx::current_default(), &p, args)
}

fn as_c128(h: &HostArray) -> Vec<C64> {
    match h.buffer() {
        Buffer::C128(v) => v.to_vec(),
        other => panic!("expected complex128, got {:?}", other.dtype()),
    }
}

fn close(a: C64, b: C64) -> bool {
    (a - b).norm() <= 1e-12 * (1.0 + b.norm())
}

#[test]
fn dtype_names_sizes_and_kinds() {
    for (d, long, short, size) in [
        (DType::C64, "complex64", "c64", 8),
        (DType::C128, "complex128", "c128", 16),
    ] {
        assert_eq!(
            (d.name(), d.short_name(), d.itemsize()),
            (long, short, size)
        );
        assert_eq!(DType::from_name(long), Ok(d));
        assert_eq!(DType::from_name(short), Ok(d));
        assert_eq!(d.kind(), 'c');
        assert!(d.is_complex() && d.is_inexact() && !d.is_float() && !d.is_numeric());
    }
    assert_eq!(DType::C128.canonicalize(false), DType::C64);
    assert_eq!(DType::C128.canonicalize(true), DType::C128);
}

#[test]
fn bytes_round_trip_and_bitwise_equality() {
    let z = c64s(&[(1.5, -2.0), (f32::NAN, -0.0), (f32::INFINITY, 3.25)]);
    let bytes = z.buffer().to_le_bytes();
    assert_eq!(bytes.len(), 24);
    // Real part first, then the imaginary part, little-endian.
    assert_eq!(&bytes[..8], &[0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0]);
    let back = Buffer::from_le_bytes("test", DType::C64, 3, &bytes, true).unwrap();
    // NaN parts compare bitwise equal (the compile cache's equality).
    assert_eq!(&back, z.buffer());
    let w = c128s(&[(0.1, 0.2)]);
    let back =
        Buffer::from_le_bytes("test", DType::C128, 1, &w.buffer().to_le_bytes(), true).unwrap();
    assert_eq!(&back, w.buffer());
    assert!(Buffer::from_le_bytes("test", DType::C128, 2, &[0; 16], true).is_err());
    assert_eq!(
        Buffer::zeros(DType::C64, 2).unwrap(),
        c64s(&[(0.0, 0.0), (0.0, 0.0)]).into_buffer()
    );
}

/// `x * lit + lit2` over complex `x`.
fn affine(d: DType, a: Scalar, c: Scalar) -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![2], d)).unwrap());
    let m = b
        .binary(BinaryOp::Mul, x, Atom::Lit(Literal::new(a, d, false)))
        .unwrap();
    let y = b
        .binary(BinaryOp::Add, m, Atom::Lit(Literal::new(c, d, true)))
        .unwrap();
    b.build(vec![y]).unwrap()
}

#[test]
fn literals_print_as_python_complex_and_round_trip() {
    // JAX 0.10.2 prints `mul a (1+2j):c64[]` and `add c 3j:c64[]`.
    let j = affine(
        DType::C64,
        Scalar::Complex(1.0, 2.0),
        Scalar::Complex(0.0, 3.0),
    );
    let text = display(&j);
    assert!(text.contains("mul a (1+2j):c64[]"), "{text}");
    assert!(text.contains("add b 3j:c64[]"), "{text}");
    for d in [DType::C64, DType::C128] {
        for (a, c) in [
            (Scalar::Complex(0.1, -2.5), Scalar::Complex(f64::NAN, -0.0)),
            (Scalar::Complex(f64::INFINITY, 1e-300), Scalar::Float(2.0)),
        ] {
            let j = affine(d, a, c);
            let back = parse(&canonical(&j), &ParseLimits::default()).unwrap();
            assert_eq!(back, j, "{d}");
        }
    }
    // A complex64 literal whose parts are not f32 values keeps its bits.
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![], DType::C64)).unwrap());
    let odd = Literal {
        val: Scalar::Complex(0.1, 0.2),
        aval: Aval::new(vec![], DType::C64),
    };
    let y = b.binary(BinaryOp::Add, x, Atom::Lit(odd)).unwrap();
    let j = b.build(vec![y]).unwrap();
    let text = canonical(&j);
    assert!(text.contains("complex(0x"), "{text}");
    assert_eq!(parse(&text, &ParseLimits::default()).unwrap(), j);
}

#[test]
fn export_round_trip_with_complex_constants() {
    let mut b = Builder::new();
    let k = b
        .add_const(Arc::new(c128s(&[(1.0, -1.0), (0.5, 2.0)])), false)
        .unwrap();
    let x = Atom::Var(b.add_input(Aval::new(vec![2], DType::C128)).unwrap());
    let y = b.binary(BinaryOp::Mul, x, Atom::Var(k)).unwrap();
    let prog = b.build(vec![y]).unwrap();
    let bytes = Program::to_bytes(&prog, Determinism::Default, "complex").unwrap();
    let loaded = Program::from_bytes(&bytes).unwrap();
    let out = loaded.run(&[c128s(&[(2.0, 0.0), (0.0, 1.0)])]).unwrap();
    let got = as_c128(&out[0]);
    assert!(close(got[0], C64::new(2.0, -2.0)));
    assert!(close(got[1], C64::new(-2.0, 0.5)));
}

#[test]
fn arithmetic_and_transcendentals_match_closed_forms() {
    let x = c128s(&[(1.0, 2.0), (-0.5, 0.25)]);
    let y = c128s(&[(3.0, -1.0), (2.0, 2.0)]);
    let mul = as_c128(&run(Primitive::Binary(BinaryOp::Mul), &[&x, &y]).unwrap());
    assert!(close(mul[0], C64::new(5.0, 5.0)));
    let div = as_c128(&run(Primitive::Binary(BinaryOp::Div), &[&x, &y]).unwrap());
    assert!(close(div[0], C64::new(0.1, 0.7)));
    let exp = as_c128(&run(Primitive::Unary(UnaryOp::Exp), &[&x]).unwrap());
    let e = 1f64.exp();
    assert!(close(exp[0], C64::new(e * 2f64.cos(), e * 2f64.sin())));
    // log1p and expm1 keep their precision near zero.
    let tiny = c128s(&[(1e-10, 1e-10)]);
    let l = as_c128(&run(Primitive::Unary(UnaryOp::Log1p), &[&tiny]).unwrap());
    assert!(close(l[0], C64::new(1e-10, 1e-10)));
    let m = as_c128(&run(Primitive::Unary(UnaryOp::Expm1), &[&tiny]).unwrap());
    assert!(close(m[0], C64::new(1e-10, 1e-10)));
    // abs has the parts' dtype.
    let a = run(Primitive::Unary(UnaryOp::Abs), &[&c64s(&[(3.0, 4.0)])]).unwrap();
    assert_eq!(a.buffer(), &Buffer::F32(vec![5.0].into()));
    let s = as_c128(
        &run(
            Primitive::Unary(UnaryOp::Sign),
            &[&c128s(&[(3.0, 4.0), (0.0, 0.0)])],
        )
        .unwrap(),
    );
    assert!(close(s[0], C64::new(0.6, 0.8)) && s[1] == C64::new(0.0, 0.0));
}

#[test]
fn parts_conversions_and_reductions() {
    let x = c128s(&[(1.0, 2.0), (3.0, -4.0)]);
    let ctx_eval = |p: Primitive, args: &[&HostArray]| run(p, args).unwrap();
    let re = ctx_eval(Primitive::Real(microjax::prims::complex::Real), &[&x]);
    let im = ctx_eval(Primitive::Imag(microjax::prims::complex::Imag), &[&x]);
    assert_eq!(re.buffer(), &Buffer::F64(vec![1.0, 3.0].into()));
    assert_eq!(im.buffer(), &Buffer::F64(vec![2.0, -4.0].into()));
    let z = ctx_eval(
        Primitive::MakeComplex(microjax::prims::complex::MakeComplex),
        &[&re, &im],
    );
    assert_eq!(z, x);
    let conj = microjax::prims::complex::Conj {
        input_dtype: DType::C128,
    };
    let c = as_c128(&ctx_eval(Primitive::Conj(conj), &[&x]));
    assert_eq!(c, vec![C64::new(1.0, -2.0), C64::new(3.0, 4.0)]);
    // complex -> real keeps the real part; real -> complex has zero imaginary part.
    let to = |d| {
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: d,
            weak_type: false,
        })
    };
    assert_eq!(ctx_eval(to(DType::F64), &[&x]).buffer(), re.buffer());
    assert_eq!(
        ctx_eval(to(DType::I32), &[&x]).buffer(),
        &Buffer::I32(vec![1, 3].into())
    );
    assert_eq!(
        ctx_eval(to(DType::C128), &[&re]).buffer(),
        c128s(&[(1.0, 0.0), (3.0, 0.0)]).buffer()
    );
    let sum = as_c128(&ctx_eval(reduce(ReduceOp::Sum, &[0]), &[&x]));
    assert_eq!(sum, vec![C64::new(4.0, -2.0)]);
    let prod = as_c128(&ctx_eval(reduce(ReduceOp::Prod, &[0]), &[&x]));
    assert_eq!(prod, vec![C64::new(11.0, 2.0)]);
    let eq = ctx_eval(Primitive::Compare(CmpOp::Eq), &[&x, &x]);
    assert_eq!(eq.buffer(), &Buffer::Bool(vec![true, true].into()));
}

#[test]
fn dot_general_matches_the_naive_product() {
    // Sizes past the small-product threshold take gemm's complex kernel.
    for n in [3usize, 48] {
        let a: Vec<C64> = (0..n * n)
            .map(|i| C64::new((i % 7) as f64 - 3.0, (i % 5) as f64 * 0.5))
            .collect();
        let b: Vec<C64> = (0..n * n)
            .map(|i| C64::new((i % 3) as f64, 1.0 - (i % 4) as f64))
            .collect();
        let ha = HostArray::new(vec![n, n], Buffer::C128(a.clone().into())).unwrap();
        let hb = HostArray::new(vec![n, n], Buffer::C128(b.clone().into())).unwrap();
        let p = Primitive::DotGeneral(DotGeneral {
            dims: dot_dims(&[1], &[0], &[], &[]),
            preferred_element_type: None,
        });
        let got = as_c128(&run(p, &[&ha, &hb]).unwrap());
        for i in 0..n {
            for j in 0..n {
                let want: C64 = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
                assert!(close(got[i * n + j], want), "n={n} ({i},{j})");
            }
        }
    }
}

#[test]
fn ordering_rules_reject_complex_with_jax_text() {
    let c = Aval::new(vec![2], DType::C64);
    let err = abstract_eval(&Primitive::Compare(CmpOp::Lt), &[c.clone(), c.clone()]).unwrap_err();
    assert!(matches!(err, Error::DType { .. }));
    assert!(err.to_string().contains(
        "lt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are \
         subtypes of integer, floating, bool."
    ));
    let argmax = Primitive::Arg(microjax::prims::reduce::ArgReduce {
        op: microjax::prims::ArgOp::Argmax,
        axis: 0,
        index_dtype: DType::I32,
    });
    let err = abstract_eval(&argmax, std::slice::from_ref(&c)).unwrap_err();
    assert!(err.to_string().contains(
        "gt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are \
         subtypes of integer, floating, bool."
    ));
    let top_k = Primitive::Sort(microjax::prims::sort::SortOp::TopK { k: 1 });
    let err = abstract_eval(&top_k, std::slice::from_ref(&c)).unwrap_err();
    assert!(err
        .to_string()
        .contains("top_k is not compatible with complex inputs."));
    for p in [
        Primitive::Binary(BinaryOp::Rem),
        Primitive::Unary(UnaryOp::Floor),
        Primitive::Unary(UnaryOp::Erf),
        reduce(ReduceOp::And, &[0]),
    ] {
        let ins: Vec<Aval> = if p.name() == "rem" {
            vec![c.clone(), c.clone()]
        } else {
            vec![c.clone()]
        };
        assert!(
            matches!(abstract_eval(&p, &ins), Err(Error::DType { .. })),
            "{p}"
        );
    }
    let real = Aval::new(vec![2], DType::F32);
    let err = abstract_eval(&Primitive::Real(microjax::prims::complex::Real), &[real]).unwrap_err();
    assert!(err.to_string().contains(
        "real does not accept dtype float32. Accepted dtypes are subtypes of complexfloating."
    ));
}

#[test]
fn cuda_plans_fuse_complex_elementwise_work_and_run_reductions_and_parts_on_the_device() {
    use microjax::exec::cuda::codegen::{lowering, Lowering};
    use microjax::exec::cuda::{device_plan, kernel_sources, DeviceStep};
    // An elementwise group, a reduction, a product and a part extraction.
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![4, 4], DType::C64)).unwrap());
    let e = b.unary(UnaryOp::Exp, x.clone()).unwrap();
    let m = b.binary(BinaryOp::Mul, e, x.clone()).unwrap();
    let s = b
        .add_eqn1(reduce(ReduceOp::Sum, &[0]), vec![m.clone()])
        .unwrap();
    let p = b
        .add_eqn1(
            Primitive::DotGeneral(DotGeneral {
                dims: dot_dims(&[1], &[0], &[], &[]),
                preferred_element_type: None,
            }),
            vec![m, x.clone()],
        )
        .unwrap();
    let r = b
        .add_eqn1(Primitive::Real(microjax::prims::complex::Real), vec![x])
        .unwrap();
    let prog = b.build(vec![s, p, r]).unwrap();
    let steps = device_plan(&prog.jaxpr).unwrap();
    // exp and mul fuse into one kernel, the reduction is a kernel of its
    // own, the product is a cuBLAS complex GEMM, the part extraction a
    // one-member kernel.
    assert_eq!(steps.len(), 4, "{steps:?}");
    assert!(
        matches!(&steps[0], DeviceStep::Kernel { eqns, .. } if eqns == &vec![0, 1]),
        "{:?}",
        steps[0]
    );
    assert!(
        matches!(&steps[1], DeviceStep::Kernel { eqns, .. } if eqns == &vec![2]),
        "{:?}",
        steps[1]
    );
    assert!(
        matches!(&steps[2], DeviceStep::Gemm { eqn: 3, spec } if spec.dtype == DType::C64),
        "{:?}",
        steps[2]
    );
    assert!(
        matches!(&steps[3], DeviceStep::Kernel { eqns, .. } if eqns == &vec![4]),
        "{:?}",
        steps[3]
    );
    assert_eq!(kernel_sources(&prog).unwrap().len(), 3);
    for op in [UnaryOp::Exp, UnaryOp::Neg] {
        assert!(matches!(
            lowering(&Primitive::Unary(op), DType::C64, DType::C64),
            Lowering::Kernel
        ));
    }
}

/// JAX 0.10.2's complex max/min (recorded): `x` where it is lexicographically
/// greater (smaller), else `y`; a NaN part picks `y`.
#[test]
fn lexicographic_max_min_reductions_and_scans() {
    let nan = f64::NAN;
    let x = c128s(&[(nan, 0.0), (1.0, 0.0), (1.0, 2.0), (-0.0, 1.0), (2.0, 1.0)]);
    let y = c128s(&[(1.0, 0.0), (nan, 0.0), (1.0, 1.0), (0.0, 1.0), (1.0, 5.0)]);
    let max = as_c128(&run(Primitive::Binary(BinaryOp::Max), &[&x, &y]).unwrap());
    let min = as_c128(&run(Primitive::Binary(BinaryOp::Min), &[&x, &y]).unwrap());
    assert_eq!(max[0], C64::new(1.0, 0.0));
    assert!(max[1].re.is_nan());
    assert_eq!(
        &max[2..],
        &[C64::new(1.0, 2.0), C64::new(0.0, 1.0), C64::new(2.0, 1.0)]
    );
    assert!(max[3].re.is_sign_positive(), "equal values pick y");
    assert_eq!(
        &min[2..],
        &[C64::new(1.0, 1.0), C64::new(0.0, 1.0), C64::new(1.0, 5.0)]
    );
    // The fold from -inf keeps the order dependence: [nan, 1, 2] -> max 2, min 1.
    let v = c128s(&[(nan, 0.0), (1.0, 0.0), (2.0, 0.0)]);
    let rmax = as_c128(&run(reduce(ReduceOp::Max, &[0]), &[&v]).unwrap());
    let rmin = as_c128(&run(reduce(ReduceOp::Min, &[0]), &[&v]).unwrap());
    assert_eq!((rmax[0], rmin[0]), (C64::new(2.0, 0.0), C64::new(1.0, 0.0)));
    let empty = c128s(&[]);
    let e = as_c128(&run(reduce(ReduceOp::Max, &[0]), &[&empty]).unwrap());
    assert_eq!(e, vec![C64::new(f64::NEG_INFINITY, 0.0)]);
    let cummax = Primitive::Cumulative(microjax::prims::Cumulative {
        op: microjax::prims::CumOp::Max,
        axis: 0,
        reverse: false,
    });
    let s = c128s(&[(1.0, 0.0), (3.0, 0.0), (2.0, 1.0), (3.0, 5.0)]);
    let got = as_c128(&run(cummax, &[&s]).unwrap());
    let want = [(1.0, 0.0), (3.0, 0.0), (3.0, 0.0), (3.0, 5.0)];
    assert_eq!(got, c128v(&want));
}

/// Sort keys order complex values by real then imaginary part, each in the
/// float total order (NaN last, -0.0 == 0.0), stably.
#[test]
fn sort_orders_complex_keys_lexicographically() {
    let nan = f64::NAN;
    let x = c128s(&[
        (0.0, 0.0),
        (-0.0, 0.0),
        (nan, 0.0),
        (0.0, nan),
        (f64::NEG_INFINITY, 0.0),
        (1.0, -1.0),
        (1.0, nan),
    ]);
    let idx = HostArray::new(vec![7], Buffer::I32((0..7).collect::<Vec<i32>>().into())).unwrap();
    let sort = Primitive::Sort(microjax::prims::sort::SortOp::Sort {
        dimension: 0,
        is_stable: true,
        num_keys: 1,
    });
    let outs = microjax::prims::kernel::eval(
        &microjax::exec::ExecCtx::current_default(),
        &sort,
        &[&x, &idx],
    )
    .unwrap();
    assert_eq!(
        outs[1].buffer(),
        &Buffer::I32(vec![4, 0, 1, 3, 5, 6, 2].into())
    );
    let a = abstract_eval(&sort, &[Aval::new(vec![7], DType::C64)]).unwrap();
    assert_eq!(a[0].dtype, DType::C64);
}

/// XLA's complex clamp on the CPU (JAX 0.10.2, recorded): real parts only.
#[test]
fn clamp_compares_real_parts() {
    let lo = c128s(&[(0.0, 0.0); 4]);
    let hi = c128s(&[(1.0, 1.0); 4]);
    let x = c128s(&[(0.0, 5.0), (1.0, 2.0), (2.0, 0.0), (f64::NAN, 0.0)]);
    let got = as_c128(&run(Primitive::Clamp(microjax::prims::Clamp), &[&lo, &x, &hi]).unwrap());
    let want = [(0.0, 0.0), (1.0, 2.0), (1.0, 1.0), (1.0, 1.0)];
    assert_eq!(got, c128v(&want));
}

/// Complex division as XLA computes it (JAX 0.10.2, recorded): infinite
/// parts over a real divisor stay infinite, finite over infinite is zero.
#[test]
fn division_keeps_infinities_as_xla() {
    let inf = f64::INFINITY;
    let x = c128s(&[(inf, -inf), (1.0, 0.0), (1.0, 2.0), (3.0, -4.0), (inf, 1.0)]);
    let y = c128s(&[
        (3.0, 0.0),
        (0.0, 0.0),
        (inf, 1.0),
        (1e-300, 1e-300),
        (2.0, 0.0),
    ]);
    let q = as_c128(&run(Primitive::Binary(BinaryOp::Div), &[&x, &y]).unwrap());
    assert_eq!(q[0], C64::new(inf, -inf));
    assert!(q[1].re == inf && q[1].im.is_nan());
    assert_eq!(q[2], C64::new(0.0, 0.0));
    assert!(close(q[3], C64::new(-5e299, -3.5e300)));
    assert!(q[4].re == inf && q[4].im.is_nan());
}

#[test]
fn iota_of_complex_dtype() {
    let iota = Primitive::Iota(microjax::prims::Iota {
        dtype: DType::C128,
        shape: vec![3],
        dimension: 0,
    });
    let out = as_c128(&run(iota, &[]).unwrap());
    assert_eq!(
        out,
        vec![C64::new(0.0, 0.0), C64::new(1.0, 0.0), C64::new(2.0, 0.0)]
    );
}
