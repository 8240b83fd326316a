//! Property tests (proptest) of the builder, the typechecker, the canonical
//! text and the executors:
//!
//! * random well-typed programs (elementwise, broadcast, reshape, transpose,
//!   reduce, dot, select, cumsum, convert chains over random shapes, 0-size
//!   axes included) always build, typecheck, print/parse back to an equal
//!   program with the same text, and run to the same bits in the compiled
//!   executor, the reference interpreter and as an exported program loaded
//!   back from bytes;
//! * random (mostly ill-typed) equations over every primitive family are
//!   accepted or rejected by the builder with a typed `Err`, never a panic;
//!   what the builder accepts also typechecks, round-trips and runs (or errs);
//! * corrupted programs (a wrong declared aval, a use before definition, a
//!   missing const) are rejected by `typecheck` with `Error::Typecheck`.
//!
//! The runner's seed is fixed (`RngSeed::Fixed`), so every run draws the same
//! cases; `PROPTEST_CASES` raises the count.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::dtype::ALL_DTYPES;
use microjax::exec::compiled::Compiled;
use microjax::exec::interp::eval_closed;
use microjax::export::{Determinism, Program};
use microjax::ir::canonical::{canonical, parse_with_consts, ParseLimits};
use microjax::ir::display::display;
use microjax::ir::typecheck::typecheck;
use microjax::prims::CumOp;
use microjax::prims::{
    BroadcastInDim, Concatenate, ConvertElementType, Cumulative, DynamicSlice, IntegerPow, Iota,
    Pad, Reduce, Reshape, Rev, SelectN, Slice, Squeeze, Transpose,
};
use microjax::{
    Atom, Aval, BinaryOp, Builder, ClosedJaxpr, CmpOp, DType, Error, HostArray, Primitive,
    ReduceOp, UnaryOp, Var,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use std::sync::Arc;

use crate::common;
use common::*;

/// Fixed seed, no regression files, `cases` unless `PROPTEST_CASES` says
/// otherwise.
fn config(cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0x6d6a_7072_6f70),
        failure_persistence: None,
        ..Config::default()
    }
}

// ------------------------------------------------ well-typed random programs

/// One step of a random program: `(kind, k)`; `k` picks the op and params.
type Step = (u8, u8);
const KINDS: u8 = 12;

/// Appends one step to `x` (of `shape`, updated in place). Every step is
/// valid by construction for any shape, so a failure is a bug.
fn step(b: &mut Builder, x: Atom, shape: &mut Vec<usize>, (kind, k): Step) -> Atom {
    let rank = shape.len();
    let ku = usize::from(k);
    let lit = |v: f64| Builder::lit(DType::F32, v);
    match kind {
        0 => {
            let ops = [
                UnaryOp::Sin,
                UnaryOp::Tanh,
                UnaryOp::Exp,
                UnaryOp::Neg,
                UnaryOp::Abs,
                UnaryOp::Logistic,
                UnaryOp::Square,
            ];
            b.unary(ops[ku % ops.len()], x).unwrap()
        }
        1 => {
            let ops = [BinaryOp::Add, BinaryOp::Mul, BinaryOp::Sub, BinaryOp::Max];
            b.binary(ops[ku % ops.len()], x, lit(f64::from(k) * 0.25 - 8.0))
                .unwrap()
        }
        2 => b.binary(BinaryOp::Mul, x.clone(), x).unwrap(),
        3 => {
            let m = ku % 3 + 1;
            let mut new = vec![m];
            new.extend_from_slice(shape);
            let y = b
                .add_eqn1(
                    Primitive::BroadcastInDim(BroadcastInDim {
                        shape: new.clone(),
                        broadcast_dimensions: (1..=rank).collect(),
                    }),
                    vec![x],
                )
                .unwrap();
            *shape = new;
            y
        }
        4 => {
            let n: usize = shape.iter().product();
            let new = if rank == 1 { vec![n, 1] } else { vec![n] };
            *shape = new.clone();
            b.add_eqn1(Primitive::Reshape(Reshape { new_sizes: new }), vec![x])
                .unwrap()
        }
        5 => {
            let permutation: Vec<usize> = (0..rank).rev().collect();
            let new = permutation.iter().map(|&p| shape[p]).collect();
            *shape = new;
            b.add_eqn1(Primitive::Transpose(Transpose { permutation }), vec![x])
                .unwrap()
        }
        6 if rank > 0 => {
            let ops = [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min];
            let axis = ku % rank;
            shape.remove(axis);
            b.add_eqn1(
                Primitive::Reduce(Reduce {
                    op: ops[ku % 3],
                    axes: vec![axis],
                }),
                vec![x],
            )
            .unwrap()
        }
        7 if rank > 0 => {
            let (m, p) = (shape[rank - 1], ku % 3 + 1);
            let w = b.add_const(data(&[m, p], u32::from(k)), false).unwrap();
            shape[rank - 1] = p;
            b.add_eqn1(
                dot_general(&[rank - 1], &[0], &[], &[]),
                vec![x, Atom::Var(w)],
            )
            .unwrap()
        }
        8 => {
            let p = b
                .add_eqn1(Primitive::Compare(CmpOp::Gt), vec![x.clone(), lit(0.0)])
                .unwrap();
            let n = b.unary(UnaryOp::Neg, x.clone()).unwrap();
            b.add_eqn1(Primitive::SelectN(SelectN), vec![p, x, n])
                .unwrap()
        }
        9 if rank > 0 => b
            .add_eqn1(
                Primitive::Cumulative(Cumulative {
                    op: [CumOp::Sum, CumOp::Max][ku % 2],
                    axis: ku % rank,
                    reverse: k & 4 != 0,
                }),
                vec![x],
            )
            .unwrap(),
        10 => {
            let i = b
                .add_eqn1(
                    Primitive::ConvertElementType(ConvertElementType {
                        new_dtype: DType::I32,
                        weak_type: false,
                    }),
                    vec![x],
                )
                .unwrap();
            b.add_eqn1(
                Primitive::ConvertElementType(ConvertElementType {
                    new_dtype: DType::F32,
                    weak_type: false,
                }),
                vec![i],
            )
            .unwrap()
        }
        11 if rank > 0 => {
            // a row constant broadcast along the leading axes
            let row = b
                .add_const(data(&shape[rank - 1..], u32::from(k) + 1), false)
                .unwrap();
            let r = b
                .add_eqn1(
                    Primitive::BroadcastInDim(BroadcastInDim {
                        shape: shape.clone(),
                        broadcast_dimensions: vec![rank - 1],
                    }),
                    vec![Atom::Var(row)],
                )
                .unwrap();
            b.binary(BinaryOp::Add, x, r).unwrap()
        }
        _ => b.unary(UnaryOp::Cos, x).unwrap(),
    }
}

/// The program of `steps` on one f32 input of `shape`; it returns the last
/// value and the first step's value.
fn program(shape: &[usize], steps: &[Step]) -> ClosedJaxpr {
    let mut b = Builder::new();
    let mut cur = shape.to_vec();
    let mut x = Atom::Var(b.add_input(f32v(shape)).unwrap());
    let mut first = None;
    for &s in steps {
        x = step(&mut b, x, &mut cur, s);
        first.get_or_insert_with(|| x.clone());
    }
    let mut outs = vec![x];
    outs.extend(first);
    b.build(outs).unwrap()
}

/// Printing, parsing back and printing again is the identity.
fn assert_round_trip(prog: &ClosedJaxpr) {
    let text = canonical(prog);
    let back = parse_with_consts(&text, prog.consts.clone(), &ParseLimits::default())
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(&back, prog, "{text}");
    assert_eq!(canonical(&back), text);
    let _ = display(prog);
}

fn same_bits(a: &[Arc<HostArray>], b: &[Arc<HostArray>]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.shape(), y.shape());
        assert_eq!(x.buffer(), y.buffer()); // bitwise for floats
    }
}

fn shapes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..5, 0..=3)
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec((0u8..KINDS, any::<u8>()), 1..10)
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn random_programs_typecheck_round_trip_and_agree(
        shape in shapes(), steps in steps(), seed in any::<u32>()
    ) {
        let prog = program(&shape, &steps);
        typecheck(&prog).unwrap();
        assert_round_trip(&prog);
        let args = [data(&shape, seed)];
        let want = eval_closed(&prog, &args).unwrap();
        let plan = Compiled::new(Arc::new(prog.clone())).unwrap();
        same_bits(&plan.run(&args).unwrap(), &want);
        // and again: buffers reused from the pool give the same bits
        same_bits(&plan.run(&args).unwrap(), &want);
        // exported and loaded back: the same program and bits
        let bytes = Program::to_bytes(&prog, Determinism::Default, "").unwrap();
        let loaded = Program::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&**loaded.jaxpr(), &prog);
        let outs = loaded.run(&[(*args[0]).clone()]).unwrap();
        same_bits(&outs.into_iter().map(Arc::new).collect::<Vec<_>>(), &want);
    }
}

// ------------------------------------------------- random (ill-typed) equations

fn aval_strategy() -> impl Strategy<Value = Aval> {
    // half of the operands f32, the rest of any dtype
    let dtype = prop_oneof![
        Just(DType::F32),
        (0..ALL_DTYPES.len()).prop_map(|d| ALL_DTYPES[d])
    ];
    (
        prop::collection::vec(0usize..4, 0..=3),
        dtype,
        any::<bool>(),
    )
        .prop_map(|(shape, dtype, weak)| {
            let mut a = Aval::new(shape, dtype);
            a.weak_type = weak;
            a
        })
}

fn small_vec(max_len: usize, max: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..=max, 0..=max_len)
}

/// Primitives with random (often invalid) params, plus one example of every
/// primitive (`Primitive::examples`).
fn prim_strategy() -> impl Strategy<Value = Primitive> {
    let examples = Primitive::examples();
    let n = examples.len();
    prop_oneof![
        (0..n).prop_map(move |i| examples[i].clone()),
        (small_vec(3, 4), 0..ReduceOp::ALL.len()).prop_map(|(axes, op)| Primitive::Reduce(
            Reduce {
                op: ReduceOp::ALL[op],
                axes
            }
        )),
        small_vec(4, 5).prop_map(|new_sizes| Primitive::Reshape(Reshape { new_sizes })),
        small_vec(4, 4).prop_map(|permutation| Primitive::Transpose(Transpose { permutation })),
        small_vec(3, 4).prop_map(|dimensions| Primitive::Squeeze(Squeeze { dimensions })),
        small_vec(3, 4).prop_map(|dimensions| Primitive::Rev(Rev { dimensions })),
        (small_vec(4, 4), small_vec(3, 4)).prop_map(|(shape, broadcast_dimensions)| {
            Primitive::BroadcastInDim(BroadcastInDim {
                shape,
                broadcast_dimensions,
            })
        }),
        (
            small_vec(2, 3),
            small_vec(2, 3),
            small_vec(1, 3),
            small_vec(1, 3)
        )
            .prop_map(|(lc, rc, lb, rb)| dot_general(&lc, &rc, &lb, &rb)),
        (
            small_vec(3, 4),
            small_vec(3, 5),
            prop::option::of(small_vec(3, 3))
        )
            .prop_map(
                |(start_indices, limit_indices, strides)| Primitive::Slice(Slice {
                    start_indices,
                    limit_indices,
                    strides
                })
            ),
        prop::collection::vec((-3i64..3, -3i64..3, -1i64..3), 0..=3)
            .prop_map(|padding_config| Primitive::Pad(Pad { padding_config })),
        (0usize..4).prop_map(|dimension| Primitive::Concatenate(Concatenate { dimension })),
        (0usize..4, any::<bool>()).prop_map(|(axis, reverse)| Primitive::Cumulative(Cumulative {
            op: CumOp::Sum,
            axis,
            reverse
        })),
        small_vec(3, 4)
            .prop_map(|slice_sizes| Primitive::DynamicSlice(DynamicSlice { slice_sizes })),
        (small_vec(3, 4), 0usize..4, 0..ALL_DTYPES.len()).prop_map(|(shape, dimension, d)| {
            Primitive::Iota(Iota {
                dtype: ALL_DTYPES[d],
                shape,
                dimension,
            })
        }),
        (-3i32..4).prop_map(|y| Primitive::IntegerPow(IntegerPow { y })),
    ]
}

/// Zeros for every input of `prog` (None if an aval has no zeros).
fn zeros_for(prog: &ClosedJaxpr) -> Option<Vec<Arc<HostArray>>> {
    prog.in_avals()
        .ok()?
        .iter()
        .map(|a| {
            HostArray::zeros(a.shape.clone(), a.dtype)
                .ok()
                .map(Arc::new)
        })
        .collect()
}

proptest! {
    #![proptest_config(config(10_000))]

    #[test]
    fn random_equations_are_accepted_or_rejected_with_a_typed_error(
        prim in prim_strategy(),
        ins in prop_oneof![
            prop::collection::vec(aval_strategy(), 1..=2),
            prop::collection::vec(aval_strategy(), 0..=4)
        ],
        uniform in 0u8..3,
    ) {
        // A third of the cases as drawn; the others share the first
        // operand's dtype (and shape), so more equations are well typed.
        let mut ins = ins;
        if let Some(first) = ins.first().cloned() {
            for a in ins.iter_mut().skip(1) {
                if uniform >= 1 {
                    a.dtype = first.dtype;
                }
                if uniform == 2 {
                    a.shape.clone_from(&first.shape);
                }
            }
        }
        let mut b = Builder::new();
        let atoms: Vec<Atom> = ins
            .iter()
            .map(|a| Atom::Var(b.add_input(a.clone()).unwrap()))
            .collect();
        let Ok(outs) = b.add_eqn(prim.clone(), atoms, None) else {
            return Ok(()); // a typed Err: rejected before anything runs
        };
        let prog = b.build(outs.into_iter().map(Atom::Var).collect()).unwrap();
        typecheck(&prog).unwrap();
        if !canonical(&prog).contains("host_callback_") {
            assert_round_trip(&prog);
        }
        if let Some(args) = zeros_for(&prog) {
            // Ok or a typed Err (an unbound axis name, a missing rule...).
            // The compiled plan fails only where the interpreter does; it may
            // succeed where the interpreter fails, as DCE drops an
            // effect-free equation with no outputs (`psum` of nothing).
            let want = eval_closed(&prog, &args);
            let got = Compiled::new(Arc::new(prog.clone())).and_then(|p| p.run(&args));
            match (got, want) {
                (Ok(g), Ok(w)) => same_bits(&g, &w),
                (Err(g), Ok(_)) => panic!("{} on {ins:?}: compiled {g:?}, interpreter Ok", prim.name()),
                (_, Err(_)) => {}
            }
        }
    }
}

// ------------------------------------------------------- corrupted programs

fn is_typecheck_err(r: microjax::Result<()>) -> bool {
    matches!(r, Err(Error::Typecheck(_)))
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn corrupted_programs_fail_typecheck(
        shape in shapes(), steps in steps(), pick in any::<prop::sample::Index>(),
        extra in 1usize..3,
    ) {
        let prog = program(&shape, &steps);
        let eqns = prog.jaxpr.eqns.len();
        let i = pick.index(eqns);
        // 1. an equation output declared with another shape
        let mut bad = prog.clone();
        let j = Arc::make_mut(&mut bad.jaxpr);
        let out = j.eqns[i].outputs[0];
        j.avals[out.index()].shape.push(extra);
        prop_assert!(is_typecheck_err(typecheck(&bad)));
        // 2. an operand read before it is defined (the last equation's output)
        let mut bad = prog.clone();
        let j = Arc::make_mut(&mut bad.jaxpr);
        let last: Var = *j.eqns[eqns - 1].outputs.last().unwrap();
        let first_eqn = &mut j.eqns[0];
        if let Some(a) = first_eqn.inputs.iter_mut().find(|a| matches!(a, Atom::Var(_))) {
            *a = Atom::Var(last);
            prop_assert!(is_typecheck_err(typecheck(&bad)));
        }
        // 3. a const missing (when the program has any)
        let mut bad = prog.clone();
        if bad.consts.pop().is_some() {
            prop_assert!(is_typecheck_err(typecheck(&bad)));
        }
        // 4. the text of a corrupted program is still parsed without a panic
        let text = canonical(&prog).replacen("f32[", "i32[", 1 + extra);
        let _ = parse_with_consts(&text, prog.consts.clone(), &ParseLimits::default());
    }
}
