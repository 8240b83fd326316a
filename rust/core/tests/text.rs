//! Jaxpr text and identity: the display printer (JAX's grammar), the
//! canonical printer and parser (exact round trip), the typechecker and the
//! structural hash. Parse errors, limits and fuzzing: `text_parser_errors.rs`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::ir::canonical::{canonical, parse, parse_with_consts, ParseLimits};
use microjax::ir::display::display;
use microjax::ir::hash::{
    lift_literals, lifted_key, same_lifted, structural_hash, structural_key, Fnv64,
};
use microjax::ir::typecheck::typecheck;
use microjax::prims::shape::abstract_eval;
use microjax::prims::{ConvertElementType, DotGeneral, IntegerPow, SelectN};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, CmpOp, DType, Effect, Error, HostArray,
    Jaxpr, Literal, Primitive, ReduceOp, Scalar, UnaryOp, Var,
};
use std::sync::Arc;

use crate::common;
use common::text::{av, bin, f32_array, lit, pjit, reduce_sum, roundtrip, sin_prog, un};
use common::{broadcast_in_dim, dot_dims, iota, reduce, reshape, squeeze, transpose};

// ------------------------------------------------------------------ display

#[test]
fn display_matches_jax_example() {
    let mut b = Builder::new();
    b.add_const(f32_array(&[3], vec![1.0, 2.0, 3.0]), false)
        .unwrap();
    let x = b.add_input(av(&[5, 3], DType::F32)).unwrap();
    b.add_input(av(&[], DType::F32)).unwrap();
    let d = b.add_eqn1(un(UnaryOp::Sin), vec![Atom::Var(x)]).unwrap();
    let e = b
        .add_eqn1(bin(BinaryOp::Mul), vec![d, lit(3.0, DType::F32)])
        .unwrap();
    let f = b.add_eqn1(reduce_sum(&[0, 1]), vec![e]).unwrap();
    let j = b.build(vec![f]).unwrap();
    let want = "\
{ lambda a:f32[3]; b:f32[5,3] c:f32[]. let
    d:f32[5,3] = sin b
    e:f32[5,3] = mul d 3.0:f32[]
    f:f32[] = reduce_sum[axes=(0, 1)] e
  in (f,) }";
    assert_eq!(display(&j), want);
    assert_eq!(j.to_string(), want);
}

#[test]
fn display_empty_and_one_line() {
    let j = Builder::new().build(vec![]).unwrap();
    assert_eq!(display(&j), "{ lambda ; . let  in () }");
    assert_eq!(
        display(&sin_prog(av(&[], DType::F32))),
        "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }"
    );
}

#[test]
fn display_pjit_nested_block() {
    let sub = sin_prog(av(&[3], DType::F32));
    let mut b = Builder::new();
    let x = b.add_input(av(&[3], DType::F32)).unwrap();
    let y = b.add_eqn1(pjit(sub, "f"), vec![Atom::Var(x)]).unwrap();
    let j = b.build(vec![y]).unwrap();
    let want = "\
{ lambda ; a:f32[3]. let
    b:f32[3] = pjit[
      name=f
      jaxpr={ lambda ; c:f32[3]. let d:f32[3] = sin c in (d,) }
    ] a
  in (b,) }";
    assert_eq!(display(&j), want);
}

#[test]
fn display_long_nested_block_breaks_lines() {
    let mut s = Builder::new();
    let x = s.add_input(av(&[3], DType::F32)).unwrap();
    let y = s.add_eqn1(un(UnaryOp::Sin), vec![Atom::Var(x)]).unwrap();
    let z = s.add_eqn1(un(UnaryOp::Cos), vec![y]).unwrap();
    let w = s
        .add_eqn1(bin(BinaryOp::Add), vec![z.clone(), lit(1.5, DType::F32)])
        .unwrap();
    let sub = s.build(vec![w, z]).unwrap();
    let mut b = Builder::new();
    let x = b.add_input(av(&[3], DType::F32)).unwrap();
    b.add_eqn(pjit(sub, "g"), vec![Atom::Var(x)], None).unwrap();
    let j = b.build(vec![Atom::Var(Var(1)), Atom::Var(Var(2))]).unwrap();
    let want = "\
{ lambda ; a:f32[3]. let
    b:f32[3] c:f32[3] = pjit[
      name=g
      jaxpr={ lambda ; d:f32[3]. let
          e:f32[3] = sin d
          f:f32[3] = cos e
          g:f32[3] = add f 1.5:f32[]
        in (g, f) }
    ] a
  in (b, c) }";
    assert_eq!(display(&j), want);
}

#[test]
fn display_literals() {
    let mut b = Builder::new();
    let x = b.add_input(av(&[2], DType::F32)).unwrap();
    let i = b.add_input(av(&[], DType::I32)).unwrap();
    let h = b.add_input(av(&[], DType::F16)).unwrap();
    let p = Atom::Lit(Literal::new(Scalar::Bool(true), DType::Bool, false));
    let y = b
        .add_eqn1(
            Primitive::SelectN(SelectN),
            vec![p, Atom::Var(x), Atom::Var(x)],
        )
        .unwrap();
    let k = b
        .add_eqn1(
            bin(BinaryOp::Add),
            vec![
                Atom::Var(i),
                Atom::Lit(Literal::new(Scalar::Int(-1), DType::I32, true)),
            ],
        )
        .unwrap();
    let m = b
        .add_eqn1(
            bin(BinaryOp::Max),
            vec![y, lit(f64::NEG_INFINITY, DType::F32)],
        )
        .unwrap();
    let n = b
        .add_eqn1(bin(BinaryOp::Mul), vec![Atom::Var(h), lit(0.1, DType::F16)])
        .unwrap();
    let q = b
        .add_eqn1(bin(BinaryOp::Mul), vec![m, lit(0.1, DType::F32)])
        .unwrap();
    let r = b
        .add_eqn1(bin(BinaryOp::Add), vec![q, lit(f64::NAN, DType::F32)])
        .unwrap();
    let s = b
        .add_eqn1(bin(BinaryOp::Add), vec![r, lit(1e-5, DType::F32)])
        .unwrap();
    let j = b.build(vec![s, k, n, lit(-0.0, DType::F64)]).unwrap();
    let want = "\
{ lambda ; a:f32[2] b:i32[] c:f16[]. let
    d:f32[2] = select_n True:bool[] a a
    e:i32[] = add b -1:i32[]
    f:f32[2] = max d -inf:f32[]
    g:f16[] = mul c 0.1:f16[]
    h:f32[2] = mul f 0.1:f32[]
    i:f32[2] = add h nan:f32[]
    j:f32[2] = add i 1e-05:f32[]
  in (j, e, g, -0.0:f64[]) }";
    assert_eq!(display(&j), want);
}

#[test]
fn display_param_families() {
    let mut b = Builder::new();
    let x = b.add_input(av(&[3, 2], DType::F32)).unwrap();
    let y = b.add_input(av(&[2, 4], DType::F32)).unwrap();
    let c = b
        .add_eqn1(
            Primitive::ConvertElementType(ConvertElementType {
                new_dtype: DType::F16,
                weak_type: false,
            }),
            vec![Atom::Var(x)],
        )
        .unwrap();
    let t = b.add_eqn1(transpose(&[1, 0]), vec![Atom::Var(x)]).unwrap();
    let r = b.add_eqn1(reshape(&[6]), vec![t]).unwrap();
    let bc = b
        .add_eqn1(broadcast_in_dim(&[1, 6], &[1]), vec![r])
        .unwrap();
    let sq = b.add_eqn1(squeeze(&[0]), vec![bc]).unwrap();
    let d = b
        .add_eqn1(
            Primitive::DotGeneral(DotGeneral {
                dims: dot_dims(&[1], &[0], &[], &[]),
                preferred_element_type: Some(DType::F32),
            }),
            vec![Atom::Var(x), Atom::Var(y)],
        )
        .unwrap();
    let io = b.add_eqn1(iota(DType::I32, &[3], 0), vec![]).unwrap();
    let p = b
        .add_eqn1(Primitive::IntegerPow(IntegerPow { y: 2 }), vec![sq])
        .unwrap();
    let lt = b
        .add_eqn1(Primitive::Compare(CmpOp::Lt), vec![p, lit(0.5, DType::F32)])
        .unwrap();
    let mx = b.add_eqn1(reduce(ReduceOp::Max, &[0]), vec![d]).unwrap();
    let j = b.build(vec![c, lt, mx, io]).unwrap();
    let want = "\
{ lambda ; a:f32[3,2] b:f32[2,4]. let
    c:f16[3,2] = convert_element_type[new_dtype=float16 weak_type=False] a
    d:f32[2,3] = transpose[permutation=(1, 0)] a
    e:f32[6] = reshape[dimensions=None new_sizes=(6,)] d
    f:f32[1,6] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(1, 6)] e
    g:f32[6] = squeeze[dimensions=(0,)] f
    h:f32[3,4] = dot_general[dimension_numbers=(([1], [0]), ([], [])) precision=None preferred_element_type=float32] a b
    i:i32[3] = iota[dimension=0 dtype=int32 shape=(3,)]
    j:f32[6] = integer_pow[y=2] g
    k:bool[6] = lt j 0.5:f32[]
    l:f32[4] = reduce_max[axes=(0,)] h
  in (c, k, l, i) }";
    assert_eq!(display(&j), want);
}

#[test]
fn display_names_past_z() {
    let mut b = Builder::new();
    let mut x = Atom::Var(b.add_input(av(&[], DType::F32)).unwrap());
    for _ in 0..30 {
        x = b.add_eqn1(un(UnaryOp::Neg), vec![x]).unwrap();
    }
    let j = b.build(vec![x]).unwrap();
    let text = display(&j);
    assert!(text.contains("\n    z:f32[] = neg y\n    ba:f32[] = neg z\n    bb:f32[] = neg ba\n"));
    assert!(text.ends_with("  in (be,) }"), "{text}");
}

// ------------------------------------------------------------------ canonical

#[test]
fn canonical_text_shape() {
    let mut b = Builder::new();
    let x = b.add_input(Aval::weak(vec![], DType::F32, true)).unwrap();
    let y = b
        .add_eqn1(bin(BinaryOp::Mul), vec![Atom::Var(x), lit(3.0, DType::F32)])
        .unwrap();
    let j = b.build(vec![y]).unwrap();
    let want = "\
microjax-jaxpr 1
{ lambda ; v0:f32[]{weak}. let
    v1:f32[]{weak} = mul v0 0x40400000:f32[]{weak}
  in (v1) }
";
    assert_eq!(canonical(&j), want);
    roundtrip(&j);
}

/// Operand lists tried for each primitive, per dtype: the first the shape
/// rule accepts is used.
fn candidate_operands(d: DType) -> Vec<Vec<Aval>> {
    vec![
        vec![],
        vec![av(&[2], d)],
        vec![av(&[1], d)],
        vec![av(&[2], d), av(&[2], d)],
        vec![av(&[2], d), av(&[], d)],
        vec![av(&[1], d), av(&[1], d)],
        vec![av(&[2], DType::Bool), av(&[2], d), av(&[2], d)],
        vec![av(&[], DType::I32), av(&[2], d), av(&[2], d), av(&[2], d)],
        vec![av(&[2, 3], d), av(&[3, 2], d)],
        vec![av(&[2, 3], d)],
        vec![av(&[2], d), av(&[2], DType::I32)],
        vec![av(&[2], d), av(&[2, 1], DType::I32), av(&[2], d)],
        vec![av(&[], d)],
        // clamp(min, x, max)
        vec![av(&[], d), av(&[2], d), av(&[], d)],
        // dynamic_slice(x, i), dynamic_update_slice(x, u, i)
        vec![av(&[2], d), av(&[], DType::I32)],
        vec![av(&[2], d), av(&[1], d), av(&[], DType::I32)],
        // threefry2x32(key0, key1, x0, x1)
        vec![av(&[2], d), av(&[], d), av(&[2], d), av(&[2], d)],
        // gather(x, idx), scatter*(x, idx, u)
        vec![av(&[2], d), av(&[2, 1], DType::I32)],
        vec![av(&[3], d), av(&[2, 1], DType::I32), av(&[2], d)],
        // cholesky / eigh (square), triangular_solve(a, b)
        vec![av(&[2, 2], d)],
        vec![av(&[2, 2], d), av(&[2, 3], d)],
        // conv_general_dilated(lhs, rhs), select_and_scatter_add(source, operand)
        vec![av(&[1, 1, 2], d), av(&[1, 1, 1], d)],
        vec![av(&[1], d), av(&[2], d)],
    ]
}

#[test]
fn canonical_round_trip_every_primitive() {
    let dtypes = [
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::F64,
        DType::I32,
        DType::I8,
        DType::U32,
        DType::U64,
        DType::Bool,
        DType::C64,
        DType::C128,
    ];
    let mut covered: Vec<&str> = Vec::new();
    let mut count = 0;
    for prim in Primitive::examples() {
        if matches!(prim, Primitive::Callback(_)) {
            // Host functions have no text form: printing works, parsing refuses.
            let mut b = Builder::new();
            let outs = b.add_eqn(prim.clone(), Vec::new(), None).unwrap();
            let j = b.build(outs.into_iter().map(Atom::Var).collect()).unwrap();
            let text = microjax::ir::canonical::canonical(&j);
            assert!(microjax::ir::canonical::parse(&text, &Default::default()).is_err());
            covered.push(prim.name());
            continue;
        }
        for &d in &dtypes {
            let Some(ins) = candidate_operands(d)
                .into_iter()
                .find(|ins| abstract_eval(&prim, ins).is_ok())
            else {
                continue;
            };
            // With variables only, then with scalar operands as weak literals.
            for literal_scalars in [false, true] {
                let mut b = Builder::new();
                let mut atoms = Vec::new();
                for a in &ins {
                    if literal_scalars && a.shape.is_empty() && a.dtype != DType::Key {
                        let v = if a.dtype == DType::Bool {
                            Scalar::Bool(true)
                        } else if a.dtype.is_complex() {
                            Scalar::Complex(1.0, -0.5)
                        } else {
                            Scalar::Float(1.0)
                        };
                        atoms.push(Atom::Lit(Literal::new(v, a.dtype, true)));
                    } else {
                        atoms.push(Atom::Var(b.add_input(a.clone()).unwrap()));
                    }
                }
                let outs = b.add_eqn(prim.clone(), atoms, None).unwrap();
                let j = b.build(outs.into_iter().map(Atom::Var).collect()).unwrap();
                roundtrip(&j);
                count += 1;
            }
            if !covered.contains(&prim.name()) {
                covered.push(prim.name());
            }
        }
    }
    let missing: Vec<&str> = Primitive::all_names()
        .into_iter()
        .filter(|n| !covered.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "no valid operands found for {missing:?}: extend candidate_operands"
    );
    assert!(count > 100, "{count}");
}

#[test]
fn canonical_round_trip_special_literals() {
    let floats = [
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.1,
        1e-40,
        5e-324,
        65504.0,
        1e30,
        -3.25,
    ];
    for d in [DType::F16, DType::BF16, DType::F32, DType::F64] {
        let mut b = Builder::new();
        let mut acc = Atom::Var(b.add_input(av(&[2], d)).unwrap());
        for (k, &v) in floats.iter().enumerate() {
            acc = b
                .add_eqn1(
                    bin(BinaryOp::Add),
                    vec![
                        acc,
                        Atom::Lit(Literal::new(Scalar::Float(v), d, k % 2 == 0)),
                    ],
                )
                .unwrap();
        }
        let j = b.build(vec![acc, lit(f64::NAN, d)]).unwrap();
        roundtrip(&j);
        // NaN payloads and the sign of zero survive.
        let back = parse(&canonical(&j), &ParseLimits::default()).unwrap();
        let Atom::Lit(l) = &back.jaxpr.eqns[1].inputs[1] else {
            panic!()
        };
        assert_eq!(l.val.as_f64().to_bits(), (-0.0f64).to_bits());
    }
    // Integers at the edges of every integer dtype, and bools.
    let ints: [(DType, Scalar); 10] = [
        (DType::I8, Scalar::Int(-128)),
        (DType::I8, Scalar::Int(127)),
        (DType::I16, Scalar::Int(-32768)),
        (DType::I32, Scalar::Int(i64::from(i32::MIN))),
        (DType::I64, Scalar::Int(i64::MIN)),
        (DType::U8, Scalar::UInt(255)),
        (DType::U16, Scalar::UInt(65535)),
        (DType::U32, Scalar::UInt(u64::from(u32::MAX))),
        (DType::U64, Scalar::UInt(u64::MAX)),
        (DType::Bool, Scalar::Bool(false)),
    ];
    for (d, v) in ints {
        let mut b = Builder::new();
        let x = b.add_input(av(&[3], d)).unwrap();
        let y = b
            .add_eqn1(
                bin(BinaryOp::Max),
                vec![Atom::Var(x), Atom::Lit(Literal::new(v, d, false))],
            )
            .unwrap();
        let j = b.build(vec![y]).unwrap();
        roundtrip(&j);
    }
    let text = canonical(
        &Builder::new()
            .build(vec![
                lit(0.1, DType::F16),
                lit(0.1, DType::BF16),
                lit(3.0, DType::F64),
                Atom::Lit(Literal::new(Scalar::Int(-7), DType::I32, false)),
                Atom::Lit(Literal::new(Scalar::Bool(true), DType::Bool, false)),
            ])
            .unwrap(),
    );
    assert!(
        text.contains(
            "in (0x2e66:f16[]{weak}, 0x3dcd:bf16[]{weak}, 0x4008000000000000:f64[]{weak}, -7:i32[], true:bool[])"
        ),
        "{text}"
    );
}

#[test]
fn canonical_round_trip_non_canonical_literals() {
    // Values a literal's dtype cannot hold exactly, or a Scalar kind other
    // than the dtype's, still round-trip (tagged spelling).
    let odd = [
        Literal {
            val: Scalar::Float(0.1),
            aval: Aval::scalar(DType::F32),
        },
        Literal {
            val: Scalar::Int(3),
            aval: Aval::scalar(DType::F32),
        },
        Literal {
            val: Scalar::UInt(300),
            aval: Aval::scalar(DType::U8),
        },
        Literal {
            val: Scalar::Float(2.0),
            aval: Aval::scalar(DType::I32),
        },
        Literal {
            val: Scalar::Bool(true),
            aval: Aval::scalar(DType::I8),
        },
        Literal {
            val: Scalar::Float(0.0),
            aval: Aval::scalar(DType::Float0),
        },
    ];
    let j = Builder::new()
        .build(odd.iter().cloned().map(Atom::Lit).collect())
        .unwrap();
    let text = canonical(&j);
    assert!(text.contains("float(0x3fb999999999999a):f32[]"), "{text}");
    assert!(text.contains("uint(300):u8[]"), "{text}");
    roundtrip(&j);
}

#[test]
fn canonical_round_trip_structure() {
    // Weak types everywhere, multiple outputs, literal outputs, effects,
    // a nested pjit with consts of every dtype, odd names, unbound avals and
    // vars not numbered in binding order.
    // (No NaN const: `HostArray`'s derived `==` is IEEE, so NaN != NaN.)
    let consts: Vec<Arc<HostArray>> = vec![
        f32_array(&[2], vec![1.5, f32::NEG_INFINITY]),
        Arc::new(HostArray::new(vec![3], Buffer::Bool(vec![true, false, true].into())).unwrap()),
        Arc::new(HostArray::new(vec![2], Buffer::I64(vec![i64::MIN, 7].into())).unwrap()),
        Arc::new(HostArray::new(vec![1], Buffer::U16(vec![65535].into())).unwrap()),
        Arc::new(
            HostArray::new(
                vec![2],
                Buffer::F16(vec![half::f16::from_f32(0.1), half::f16::NEG_INFINITY].into()),
            )
            .unwrap(),
        ),
        Arc::new(
            HostArray::new(
                vec![1],
                Buffer::BF16(vec![half::bf16::from_f32(-2.5)].into()),
            )
            .unwrap(),
        ),
        Arc::new(HostArray::new(vec![2, 1], Buffer::F64(vec![-0.0, 1e300].into())).unwrap()),
        Arc::new(HostArray::new(vec![1], Buffer::Key(vec![1, 2].into())).unwrap()),
        Arc::new(HostArray::new(vec![4], Buffer::Float0(4)).unwrap()),
        Arc::new(HostArray::new(vec![0, 3], Buffer::I8(vec![].into())).unwrap()),
    ];
    let mut s = Builder::new();
    for c in &consts {
        s.add_const(c.clone(), false).unwrap();
    }
    let x = s.add_input(Aval::weak(vec![2], DType::F32, true)).unwrap();
    let y = s
        .add_eqn1(bin(BinaryOp::Add), vec![Atom::Var(x), Atom::Var(Var(0))])
        .unwrap();
    let mut sub = s.build(vec![y.clone(), y]).unwrap();
    // An effectful equation inside.
    Arc::make_mut(&mut sub.jaxpr).eqns[0].effect = Effect::OrderedIo;
    let name = "we\"ird\\na\nme\t\u{1}é";
    let mut b = Builder::new();
    let x = b.add_input(Aval::weak(vec![2], DType::F32, true)).unwrap();
    let outs = b
        .add_eqn(pjit(sub, name), vec![Atom::Var(x)], None)
        .unwrap();
    assert_eq!(outs.len(), 2);
    let j = b
        .build(vec![
            Atom::Var(outs[1]),
            lit(2.0, DType::F32),
            Atom::Var(outs[0]),
            Atom::Var(x),
        ])
        .unwrap();
    assert_eq!(j.jaxpr.eqns[0].effect, Effect::OrderedIo);
    let text = canonical(&j);
    assert!(text.contains(" {io}"), "{text}");
    assert!(
        text.contains(" with [0x0000c03f000080ff, 0x010001, "),
        "{text}"
    );
    roundtrip(&j);

    // Unbound avals entries and non-sequential binding order survive.
    let jaxpr = Jaxpr {
        avals: vec![
            av(&[3], DType::F32),
            av(&[], DType::I32),
            av(&[3], DType::F32),
            av(&[7], DType::U8),
        ],
        constvars: vec![],
        invars: vec![Var(2), Var(1)],
        eqns: vec![microjax::Eqn {
            prim: un(UnaryOp::Cos),
            inputs: vec![Atom::Var(Var(2))],
            outputs: vec![Var(0)],
            effect: Effect::None,
            source: Default::default(),
        }],
        outvars: vec![Atom::Var(Var(0))],
    };
    let j = ClosedJaxpr::new(jaxpr, vec![]);
    let text = canonical(&j);
    assert!(text.contains("in (v0) unbound v3:u8[7] }"), "{text}");
    roundtrip(&j);
}

#[test]
fn canonical_top_level_consts_come_separately() {
    let mut b = Builder::new();
    let c = b
        .add_const(f32_array(&[3], vec![1.0, 2.0, 3.0]), true)
        .unwrap();
    let x = b.add_input(av(&[3], DType::F32)).unwrap();
    let y = b
        .add_eqn1(bin(BinaryOp::Add), vec![Atom::Var(c), Atom::Var(x)])
        .unwrap();
    let j = b.build(vec![y]).unwrap();
    let text = canonical(&j);
    assert!(
        text.contains("{ lambda v0:f32[3]{weak}; v1:f32[3]. let"),
        "{text}"
    );
    roundtrip(&j);
    let lim = ParseLimits::default();
    assert!(matches!(parse(&text, &lim), Err(Error::InvalidArgument(_))));
    let wrong = vec![f32_array(&[4], vec![0.0; 4])];
    assert!(matches!(
        parse_with_consts(&text, wrong, &lim),
        Err(Error::Typecheck(_))
    ));
}

// ------------------------------------------------------------------ typecheck

#[test]
fn typecheck_rejects_corrupted_jaxprs() {
    let mut b = Builder::new();
    let x = b.add_input(av(&[3], DType::F32)).unwrap();
    let y = b.add_eqn1(un(UnaryOp::Sin), vec![Atom::Var(x)]).unwrap();
    let z = b
        .add_eqn1(bin(BinaryOp::Mul), vec![y, lit(2.0, DType::F32)])
        .unwrap();
    let good = b.build(vec![z]).unwrap();
    typecheck(&good).unwrap();
    let corrupt = |f: &dyn Fn(&mut Jaxpr)| {
        let mut j = (*good.jaxpr).clone();
        f(&mut j);
        match typecheck(&ClosedJaxpr::new(j, vec![])) {
            Err(Error::Typecheck(m)) => m,
            other => panic!("expected a typecheck error, got {other:?}"),
        }
    };
    // Output aval disagrees with the shape rule.
    let m = corrupt(&|j| j.avals[1] = av(&[4], DType::F32));
    assert!(
        m.contains("equation 0") && m.contains("f32[4]") && m.contains("f32[3]"),
        "{m}"
    );
    let m = corrupt(&|j| j.avals[2] = av(&[3], DType::F16));
    assert!(m.contains("equation 1"), "{m}");
    // Use before definition.
    let m = corrupt(&|j| j.eqns.swap(0, 1));
    assert!(
        m.contains("equation 0") && m.contains("before it is bound"),
        "{m}"
    );
    // Bound twice.
    let m = corrupt(&|j| j.eqns[1].outputs = vec![Var(1)]);
    assert!(m.contains("bound twice"), "{m}");
    // Var outside the avals table.
    let m = corrupt(&|j| j.eqns[0].inputs = vec![Atom::Var(Var(9))]);
    assert!(m.contains("v9"), "{m}");
    // Unbound output.
    let m = corrupt(&|j| j.outvars = vec![Atom::Var(Var(2)), Atom::Var(Var(3))]);
    assert!(m.contains("output 1"), "{m}");
    // Arity.
    let m = corrupt(&|j| j.eqns[1].inputs.pop().map(|_| ()).unwrap());
    assert!(m.contains("equation 1") && m.contains("operands"), "{m}");
    // Non-scalar literal.
    let m = corrupt(&|j| {
        j.eqns[1].inputs[1] = Atom::Lit(Literal {
            val: Scalar::Float(1.0),
            aval: av(&[3], DType::F32),
        })
    });
    assert!(m.contains("non-scalar"), "{m}");

    // Consts: count and avals.
    let mut b = Builder::new();
    b.add_const(f32_array(&[2], vec![1.0, 2.0]), false).unwrap();
    let j = b.build(vec![Atom::Var(Var(0))]).unwrap();
    typecheck(&j).unwrap();
    let bad = ClosedJaxpr {
        jaxpr: j.jaxpr.clone(),
        consts: vec![f32_array(&[3], vec![0.0; 3])],
    };
    assert!(matches!(typecheck(&bad), Err(Error::Typecheck(m)) if m.contains("const 0")));
    let bad = ClosedJaxpr {
        jaxpr: j.jaxpr.clone(),
        consts: vec![],
    };
    assert!(matches!(typecheck(&bad), Err(Error::Typecheck(_))));

    // Sub-jaxprs are checked recursively, and their effects must lift.
    let mut sub = sin_prog(av(&[3], DType::F32));
    let mut b = Builder::new();
    let x = b.add_input(av(&[3], DType::F32)).unwrap();
    let y = b
        .add_eqn1(pjit(sub.clone(), "f"), vec![Atom::Var(x)])
        .unwrap();
    let outer = b.build(vec![y]).unwrap();
    typecheck(&outer).unwrap();
    Arc::make_mut(&mut sub.jaxpr).avals[1] = av(&[3], DType::I32);
    let mut broken = (*outer.jaxpr).clone();
    broken.eqns[0].prim = pjit(sub.clone(), "f");
    let e = typecheck(&ClosedJaxpr::new(broken, vec![]));
    assert!(
        matches!(&e, Err(Error::Typecheck(m)) if m.contains("param jaxpr")),
        "{e:?}"
    );
    let mut sub = sin_prog(av(&[3], DType::F32));
    Arc::make_mut(&mut sub.jaxpr).eqns[0].effect = Effect::OrderedIo;
    let mut quiet = (*outer.jaxpr).clone();
    quiet.eqns[0].prim = pjit(sub, "f");
    let e = typecheck(&ClosedJaxpr::new(quiet.clone(), vec![]));
    assert!(
        matches!(&e, Err(Error::Typecheck(m)) if m.contains("effects")),
        "{e:?}"
    );
    quiet.eqns[0].effect = Effect::OrderedIo;
    typecheck(&ClosedJaxpr::new(quiet, vec![])).unwrap();
}

// ------------------------------------------------------------------ hash

fn affine(scale: f64, shift: f64, d: DType) -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = b.add_input(av(&[4], d)).unwrap();
    let y = b
        .add_eqn1(bin(BinaryOp::Mul), vec![Atom::Var(x), lit(scale, d)])
        .unwrap();
    let y = b
        .add_eqn1(bin(BinaryOp::Add), vec![y, lit(shift, d)])
        .unwrap();
    let y = b.add_eqn1(reduce_sum(&[0]), vec![y]).unwrap();
    b.build(vec![y, lit(shift, d)]).unwrap()
}

#[test]
fn fnv_is_the_reference_fnv1a() {
    use std::hash::Hasher;
    let h = Fnv64::new();
    assert_eq!(h.finish(), 0xcbf2_9ce4_8422_2325);
    let mut h = Fnv64::new();
    h.write(b"a");
    assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
    let mut h = Fnv64::new();
    h.write(b"foobar");
    assert_eq!(h.finish(), 0x8594_4171_f739_67e8);
}

#[test]
fn hash_ignores_float_literal_values_only() {
    let a = affine(2.0, 1.0, DType::F32);
    let b = affine(-0.5, f64::NAN, DType::F32);
    assert_ne!(a, b);
    assert_ne!(structural_hash(&a), structural_hash(&b));
    let (ka, la) = structural_key(&a);
    let (kb, lb) = structural_key(&b);
    assert_eq!(ka, kb);
    // `shift` is read twice: lifted once (NaN by its bits, as equality).
    let vals = |ls: &[Literal]| ls.iter().map(|l| l.val.as_f64()).collect::<Vec<_>>();
    assert_eq!(vals(&la), vec![2.0, 1.0]);
    assert_eq!(lb.len(), 2);
    assert_eq!(lb[0].val, Scalar::Float(-0.5));
    assert!(lb[1].val.as_f64().is_nan());

    // Lifted programs are equal, typecheck, and take the literals first.
    let (pa, la2) = lift_literals(&a);
    let (pb, _) = lift_literals(&b);
    assert_eq!(la2, la);
    assert_eq!(pa, pb);
    typecheck(&pa).unwrap();
    let in_avals = pa.in_avals().unwrap();
    assert_eq!(in_avals.len(), 3);
    assert_eq!(in_avals[0], Aval::weak(vec![], DType::F32, true));
    assert_eq!(in_avals[2], av(&[4], DType::F32));
    assert_eq!(pa.out_avals().unwrap(), a.out_avals().unwrap());
    let no_lits = pa
        .jaxpr
        .eqns
        .iter()
        .flat_map(|e| &e.inputs)
        .chain(&pa.jaxpr.outvars)
        .all(|x| matches!(x, Atom::Var(_)));
    assert!(no_lits);
    // The lifted program has nothing left to lift.
    assert!(structural_key(&pa).1.is_empty());
    roundtrip(&pa);

    // Source info does not take part; a parsed copy hashes the same.
    let back = parse(&canonical(&a), &ParseLimits::default()).unwrap();
    assert_eq!(structural_key(&back).0, ka);
}

#[test]
fn lifted_key_agrees_with_lifting() {
    // `lifted_key`/`same_lifted` (the eager grad cache) must say "same"
    // exactly when the lifted programs are equal, with the literals of
    // `lift_literals` in its order.
    let a = affine(2.0, 1.0, DType::F32);
    let b = affine(-0.5, f64::NAN, DType::F32);
    let (ka, la) = lifted_key(&a);
    let (kb, lb) = lifted_key(&b);
    assert_eq!(ka, kb);
    assert!(same_lifted(&a, &b) && same_lifted(&b, &a) && same_lifted(&a, &a));
    assert_eq!(la, lift_literals(&a).1);
    assert_eq!(lb.len(), 2);
    let back = parse(&canonical(&a), &ParseLimits::default()).unwrap();
    assert!(same_lifted(&a, &back));
    assert_eq!(lifted_key(&back).0, ka);

    let mut variants = vec![affine(2.0, 1.0, DType::F16)];
    let mut sub = affine(2.0, 1.0, DType::F32);
    Arc::make_mut(&mut sub.jaxpr).eqns[0].prim = bin(BinaryOp::Sub);
    variants.push(sub);
    let mut io = affine(2.0, 1.0, DType::F32);
    Arc::make_mut(&mut io.jaxpr).eqns[0].effect = Effect::OrderedIo;
    variants.push(io);
    let mut weak = affine(2.0, 1.0, DType::F32);
    Arc::make_mut(&mut weak.jaxpr).avals[0].weak_type = true;
    variants.push(weak);
    let mut swapped = affine(2.0, 1.0, DType::F32);
    Arc::make_mut(&mut swapped.jaxpr).eqns[0].inputs.reverse();
    variants.push(swapped);
    for v in &variants {
        assert!(!same_lifted(&a, v) && !same_lifted(v, &a), "{v}");
        assert_ne!(lifted_key(v).0, ka, "{v}");
        assert_ne!(lift_literals(v).0, lift_literals(&a).0);
    }
    // A non-float literal is not lifted: its value stays in the key.
    let int_prog = |k: i64| {
        let mut b = Builder::new();
        let x = b.add_input(av(&[2], DType::I32)).unwrap();
        let k = Atom::Lit(Literal::new(Scalar::Int(k), DType::I32, true));
        let y = b
            .add_eqn1(bin(BinaryOp::Add), vec![Atom::Var(x), k])
            .unwrap();
        b.build(vec![y]).unwrap()
    };
    assert!(same_lifted(&int_prog(3), &int_prog(3)));
    assert!(!same_lifted(&int_prog(3), &int_prog(4)));
    assert_ne!(lifted_key(&int_prog(3)).0, lifted_key(&int_prog(4)).0);
    assert!(lifted_key(&int_prog(3)).1.is_empty());
}

#[test]
fn equal_literals_share_one_lifted_input() {
    // A constant read in many places is one input; programs whose
    // literals repeat in another pattern neither share a key nor a lifted
    // form (so one cached transform never serves both).
    let chain = |vals: &[f64]| {
        let mut b = Builder::new();
        let mut y = Atom::Var(b.add_input(av(&[3], DType::F32)).unwrap());
        for &v in vals {
            y = b
                .add_eqn1(bin(BinaryOp::Add), vec![y, lit(v, DType::F32)])
                .unwrap();
        }
        b.build(vec![y]).unwrap()
    };
    let many = chain(&[0.5; 1000]);
    let (lifted, lits) = lift_literals(&many);
    assert_eq!(lits.len(), 1);
    assert_eq!(lifted.in_avals().unwrap().len(), 2);
    typecheck(&lifted).unwrap();
    let (xyx, yxy, xyz) = (
        chain(&[1.0, 2.0, 1.0]),
        chain(&[3.0, 4.0, 3.0]),
        chain(&[1.0, 2.0, 3.0]),
    );
    let vals = |ls: Vec<Literal>| ls.iter().map(|l| l.val.as_f64()).collect::<Vec<_>>();
    assert_eq!(vals(lift_literals(&xyx).1), vec![1.0, 2.0]);
    assert_eq!(vals(lift_literals(&xyz).1), vec![1.0, 2.0, 3.0]);
    assert_eq!(vals(structural_key(&xyx).1), vec![1.0, 2.0]);
    assert_eq!(vals(lifted_key(&xyz).1), vec![1.0, 2.0, 3.0]);
    // Same pattern: one key, one lifted form.
    assert_eq!(structural_key(&xyx).0, structural_key(&yxy).0);
    assert_eq!(lifted_key(&xyx).0, lifted_key(&yxy).0);
    assert!(same_lifted(&xyx, &yxy));
    assert_eq!(lift_literals(&xyx).0, lift_literals(&yxy).0);
    // Another pattern: nothing shared.
    assert_ne!(structural_key(&xyx).0, structural_key(&xyz).0);
    assert_ne!(lifted_key(&xyx).0, lifted_key(&xyz).0);
    assert!(!same_lifted(&xyx, &xyz) && !same_lifted(&xyz, &xyx));
    assert_ne!(lift_literals(&xyx).0, lift_literals(&xyz).0);
    // 0.0 and -0.0 differ in bits, so they are two inputs.
    assert_eq!(lift_literals(&chain(&[0.0, -0.0])).1.len(), 2);
}

#[test]
fn hash_sees_structure() {
    let base = structural_key(&affine(2.0, 1.0, DType::F32)).0;
    // Literal dtype and weak type.
    assert_ne!(structural_key(&affine(2.0, 1.0, DType::F16)).0, base);
    let mut weak = affine(2.0, 1.0, DType::F32);
    Arc::make_mut(&mut weak.jaxpr).avals[0].weak_type = true;
    assert_ne!(structural_key(&weak).0, base);
    // Primitive, params, shapes.
    let mut other = affine(2.0, 1.0, DType::F32);
    Arc::make_mut(&mut other.jaxpr).eqns[0].prim = bin(BinaryOp::Sub);
    assert_ne!(structural_key(&other).0, base);
    let s1 = structural_key(&sin_prog(av(&[3], DType::F32))).0;
    let s2 = structural_key(&sin_prog(av(&[4], DType::F32))).0;
    let s3 = structural_key(&sin_prog(av(&[3, 1], DType::F32))).0;
    assert!(s1 != s2 && s2 != s3 && s1 != s3);
    let mut cos = sin_prog(av(&[3], DType::F32));
    Arc::make_mut(&mut cos.jaxpr).eqns[0].prim = un(UnaryOp::Cos);
    assert_ne!(structural_key(&cos).0, s1);
    // Effects.
    let mut io = sin_prog(av(&[3], DType::F32));
    Arc::make_mut(&mut io.jaxpr).eqns[0].effect = Effect::OrderedIo;
    assert_ne!(structural_key(&io).0, s1);
    // Integer literal values are part of the key (not lifted).
    let int_prog = |k: i64| {
        let mut b = Builder::new();
        let x = b.add_input(av(&[2], DType::I32)).unwrap();
        let y = b
            .add_eqn1(
                bin(BinaryOp::Add),
                vec![
                    Atom::Var(x),
                    Atom::Lit(Literal::new(Scalar::Int(k), DType::I32, true)),
                ],
            )
            .unwrap();
        b.build(vec![y]).unwrap()
    };
    let (k1, l1) = structural_key(&int_prog(1));
    let (k2, _) = structural_key(&int_prog(2));
    assert_ne!(k1, k2);
    assert!(l1.is_empty());
    // Literals inside sub-jaxprs are hashed by value.
    let with_sub = |v: f64| {
        let mut b = Builder::new();
        let x = b.add_input(av(&[4], DType::F32)).unwrap();
        let outs = b
            .add_eqn(
                pjit(affine(v, 0.0, DType::F32), "f"),
                vec![Atom::Var(x)],
                None,
            )
            .unwrap();
        b.build(vec![Atom::Var(outs[0])]).unwrap()
    };
    assert_ne!(
        structural_key(&with_sub(1.0)).0,
        structural_key(&with_sub(2.0)).0
    );
    assert_eq!(
        structural_key(&with_sub(1.0)).0,
        structural_key(&with_sub(1.0)).0
    );
    // Pjit names are structure too.
    let named = |n: &str| {
        let mut b = Builder::new();
        let x = b.add_input(av(&[3], DType::F32)).unwrap();
        let y = b
            .add_eqn1(pjit(sin_prog(av(&[3], DType::F32)), n), vec![Atom::Var(x)])
            .unwrap();
        b.build(vec![y]).unwrap()
    };
    assert_ne!(structural_key(&named("f")).0, structural_key(&named("g")).0);
}
