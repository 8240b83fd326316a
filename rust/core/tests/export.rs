//! Exported programs: round trip, validation order, limits, and a mutation
//! test (bit flips, truncations, splices of valid programs) asserting every
//! case loads and runs to `Ok` or a typed `Err`, never a panic.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::export::{Determinism, Limits, Program};
use microjax::{
    Atom, BinaryOp, Buffer, Builder, ClosedJaxpr, CmpOp, DType, Error, HostArray, Primitive,
    UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::{f32s, f32v, scan, while_loop, Rng};

/// `x -> sin(x) * c + sum-scan(x)` with a const `c` and a scan.
fn program() -> ClosedJaxpr {
    let mut body = Builder::new();
    let c = Atom::Var(body.add_input(f32v(&[])).unwrap());
    let x = Atom::Var(body.add_input(f32v(&[])).unwrap());
    let s = body.binary(BinaryOp::Add, c.clone(), x).unwrap();
    let body = body.build(vec![s.clone(), s]).unwrap();
    let mut b = Builder::new();
    let k = b
        .add_const(
            Arc::new(
                HostArray::new(vec![4], Buffer::F32(vec![1.0, 2.0, 3.0, 4.0].into())).unwrap(),
            ),
            false,
        )
        .unwrap();
    let x = Atom::Var(b.add_input(f32v(&[4])).unwrap());
    let sx = b.unary(UnaryOp::Sin, x.clone()).unwrap();
    let m = b.binary(BinaryOp::Mul, sx, Atom::Var(k)).unwrap();
    let outs = scan(
        &mut b,
        body,
        4,
        false,
        (0, 1),
        vec![Builder::lit(DType::F32, 0.0), x],
    );
    let y = b.binary(BinaryOp::Add, m, outs[1].clone()).unwrap();
    b.build(vec![y, outs[0].clone()]).unwrap()
}

/// `n -> count of doublings of 1 until > n` (a while loop).
fn while_program() -> ClosedJaxpr {
    let mut cb = Builder::new();
    let n = Atom::Var(cb.add_input(f32v(&[])).unwrap());
    let x = Atom::Var(cb.add_input(f32v(&[])).unwrap());
    let p = cb
        .add_eqn1(Primitive::Compare(CmpOp::Le), vec![x, n])
        .unwrap();
    let cond = cb.build(vec![p]).unwrap();
    let body = scalar_step(BinaryOp::Mul, 2.0);
    let mut b = Builder::new();
    let n = Atom::Var(b.add_input(f32v(&[])).unwrap());
    let outs = while_loop(
        &mut b,
        cond,
        body,
        (1, 0),
        vec![n, Builder::lit(DType::F32, 1.0)],
    );
    b.build(vec![outs[0].clone()]).unwrap()
}

#[test]
fn round_trip_runs_with_the_same_results() {
    let prog = program();
    let bytes = Program::to_bytes(&prog, Determinism::Portable, "{\"meta\": 1}").unwrap();
    let loaded = Program::from_bytes(&bytes).unwrap();
    assert_eq!(**loaded.jaxpr(), prog);
    assert_eq!(loaded.determinism(), Determinism::Portable);
    assert_eq!(loaded.metadata(), "{\"meta\": 1}");
    let x = HostArray::new(vec![4], Buffer::F32(vec![0.5, -1.0, 2.0, 0.0].into())).unwrap();
    let out = loaded.run(std::slice::from_ref(&x)).unwrap();
    let want = microjax::exec::interp::eval_closed(&prog, &[Arc::new(x)]).unwrap();
    assert_eq!(f32s(&out[0]), f32s(&want[0]));
    assert_eq!(f32s(&out[1]), vec![1.5]);
    // wrong input types are typed errors
    let bad = HostArray::new(vec![3], Buffer::F32(vec![0.0; 3].into())).unwrap();
    assert!(matches!(loaded.run(&[bad]), Err(Error::InvalidArgument(_))));
    assert!(matches!(loaded.run(&[]), Err(Error::Arity { .. })));
}

#[test]
fn header_and_version_are_checked_first() {
    let bytes = Program::to_bytes(&program(), Determinism::Default, "").unwrap();
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(matches!(
        Program::from_bytes(&bad),
        Err(Error::Format { offset: 0, .. })
    ));
    let mut newer = bytes.clone();
    newer[10] = 9; // minor version 9
    let e = Program::from_bytes(&newer).unwrap_err().to_string();
    assert!(e.contains("version 1.9"), "{e}");
    let mut major = bytes.clone();
    major[8] = 2;
    assert!(Program::from_bytes(&major).is_err());
    assert!(matches!(
        Program::from_bytes(&bytes[..5]),
        Err(Error::Format { .. })
    ));
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert!(matches!(
        Program::from_bytes(&trailing),
        Err(Error::Format { .. })
    ));
}

#[test]
fn the_text_length_field_is_where_the_format_constant_says() {
    // Tools that edit the text section (the fuzzer's text mutations) find
    // it through `TEXT_LEN_FIELD`; its text is the canonical program.
    let prog = program();
    let bytes = Program::to_bytes(&prog, Determinism::Default, "").unwrap();
    let field = microjax::export::TEXT_LEN_FIELD;
    let len = u64::from_le_bytes(bytes[field.clone()].try_into().unwrap()) as usize;
    let text = std::str::from_utf8(&bytes[field.end..field.end + len]).unwrap();
    assert_eq!(text, microjax::ir::canonical::canonical(&prog));
}

#[test]
fn limits_stop_loops_and_oversized_programs() {
    let prog = while_program();
    let bytes = Program::to_bytes(&prog, Determinism::Default, "").unwrap();
    let loaded = Program::from_bytes(&bytes).unwrap();
    let n = |v: f32| HostArray::new(vec![], Buffer::F32(vec![v].into())).unwrap();
    assert_eq!(f32s(&loaded.run(&[n(100.0)]).unwrap()[0]), vec![128.0]);
    let tight = loaded
        .with_limits(Limits {
            max_loop_iterations: 3,
            ..Limits::default()
        })
        .unwrap();
    assert!(matches!(tight.run(&[n(100.0)]), Err(Error::Limit(_))));
    assert_eq!(f32s(&tight.run(&[n(3.0)]).unwrap()[0]), vec![4.0]);
    // The step budget bounds the total work: 7 doublings take more steps
    // than 2, so a budget that admits the short run stops the long one.
    let fewest = |x: f32| {
        (1..10_000u64)
            .find(|&s| {
                let l = Limits {
                    max_steps: s,
                    ..Limits::default()
                };
                Program::from_bytes(&bytes)
                    .unwrap()
                    .with_limits(l)
                    .unwrap()
                    .run(&[n(x)])
                    .is_ok()
            })
            .unwrap()
    };
    let (short, long) = (fewest(3.0), fewest(100.0));
    assert!(long > short, "{short} {long}");
    let stepped = Program::from_bytes(&bytes)
        .unwrap()
        .with_limits(Limits {
            max_steps: short,
            ..Limits::default()
        })
        .unwrap();
    assert_eq!(f32s(&stepped.run(&[n(3.0)]).unwrap()[0]), vec![4.0]);
    assert!(matches!(stepped.run(&[n(100.0)]), Err(Error::Limit(_))));
    // an infinite loop (n = inf) stops at the limit
    assert!(matches!(
        tight.run(&[n(f32::INFINITY)]),
        Err(Error::Limit(_))
    ));
    let small = Limits {
        max_bytes: 8,
        ..Limits::default()
    };
    let e = Program::from_bytes(&Program::to_bytes(&program(), Determinism::Default, "").unwrap())
        .unwrap()
        .with_limits(small);
    assert!(matches!(e, Err(Error::Limit(_))));
}

/// `x -> x <op> c` on one f32 scalar.
fn scalar_step(op: BinaryOp, c: f64) -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(f32v(&[])).unwrap());
    let y = b.binary(op, x, Builder::lit(DType::F32, c)).unwrap();
    b.build(vec![y]).unwrap()
}

/// `x -> x + 1` carried through a `scan` of `length` steps (no xs, no ys).
fn counting_scan(length: usize) -> ClosedJaxpr {
    let body = scalar_step(BinaryOp::Add, 1.0);
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(f32v(&[])).unwrap());
    let outs = scan(&mut b, body, length, false, (0, 1), vec![x]);
    b.build(outs).unwrap()
}

#[test]
fn scan_steps_count_against_the_loop_limit() {
    let zero = HostArray::new(vec![], Buffer::F32(vec![0.0].into())).unwrap();
    let load = |length: usize, max: u64| {
        let bytes = Program::to_bytes(&counting_scan(length), Determinism::Default, "").unwrap();
        Program::from_bytes(&bytes)
            .unwrap()
            .with_limits(Limits {
                max_loop_iterations: max,
                ..Limits::default()
            })
            .unwrap()
    };
    assert_eq!(
        f32s(&load(5, 5).run(std::slice::from_ref(&zero)).unwrap()[0]),
        vec![5.0]
    );
    assert!(matches!(
        load(6, 5).run(std::slice::from_ref(&zero)),
        Err(Error::Limit(_))
    ));
    // A carry-only scan of 2^40 steps (hours of work) stops at the limit
    // instead of running.
    assert!(matches!(
        load(1 << 40, 10_000).run(std::slice::from_ref(&zero)),
        Err(Error::Limit(_))
    ));
}

#[test]
fn default_limits_stop_an_unbounded_scan_in_seconds() {
    // A carry-only scan of 2^31 steps under the default limits of a loaded
    // program: the loop budget (2^24 iterations) stops it.
    let zero = HostArray::new(vec![], Buffer::F32(vec![0.0].into())).unwrap();
    let bytes = Program::to_bytes(&counting_scan(1 << 31), Determinism::Default, "").unwrap();
    let p = Program::from_bytes(&bytes).unwrap();
    assert_eq!(p.limits(), &Limits::default());
    let start = std::time::Instant::now();
    let e = p.run(std::slice::from_ref(&zero)).unwrap_err();
    assert!(matches!(e, Error::Limit(_)), "{e}");
    assert!(e.to_string().contains("loop iterations"), "{e}");
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(
        Limits::default().max_loop_iterations,
        microjax::export::DEFAULT_MAX_LOOP_ITERATIONS
    );
}

#[test]
fn a_timeout_stops_a_run_and_a_token_cancels_it() {
    let zero = HostArray::new(vec![], Buffer::F32(vec![0.0].into())).unwrap();
    let bytes = Program::to_bytes(&counting_scan(1 << 40), Determinism::Default, "").unwrap();
    let p = Program::from_bytes(&bytes)
        .unwrap()
        .with_limits(Limits {
            max_loop_iterations: u64::MAX,
            timeout: Some(std::time::Duration::from_millis(50)),
            ..Limits::default()
        })
        .unwrap();
    let start = std::time::Instant::now();
    assert_eq!(
        p.run(std::slice::from_ref(&zero)).unwrap_err(),
        Error::DeadlineExceeded
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    // The deadline counts from the start of each run.
    let short = Program::from_bytes(
        &Program::to_bytes(&counting_scan(5), Determinism::Default, "").unwrap(),
    )
    .unwrap()
    .with_limits(Limits {
        timeout: Some(std::time::Duration::from_secs(60)),
        ..Limits::default()
    })
    .unwrap();
    assert_eq!(
        f32s(&short.run(std::slice::from_ref(&zero)).unwrap()[0]),
        vec![5.0]
    );
    // Cancelled from another thread.
    let p = p
        .with_limits(Limits {
            max_loop_iterations: u64::MAX,
            ..Limits::default()
        })
        .unwrap();
    let token = microjax::exec::CancelToken::new();
    let remote = token.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        remote.cancel();
    });
    assert_eq!(
        p.run_with_cancel(std::slice::from_ref(&zero), &token)
            .unwrap_err(),
        Error::Cancelled
    );
    canceller.join().unwrap();
}

#[test]
fn deep_nesting_is_a_typed_error_not_a_stack_overflow() {
    // A param nested a million levels deep inside otherwise valid text.
    let depth = 1_000_000;
    let text = format!(
        "microjax-jaxpr 1\n{{ lambda ; v0:f32[]. let v1:f32[] = pjit[jaxpr={}] v0 in (v1) }}\n",
        "[".repeat(depth)
    );
    let mut bytes = Vec::new();
    bytes.extend_from_slice(microjax::export::MAGIC);
    bytes.extend_from_slice(&1u16.to_le_bytes());
    bytes.extend_from_slice(&0u16.to_le_bytes());
    bytes.extend_from_slice(&[0, 0, 0, 0]);
    bytes.extend_from_slice(&(text.len() as u64).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&0u64.to_le_bytes());
    let e = Program::from_bytes(&bytes).unwrap_err();
    assert!(matches!(e, Error::Limit(_) | Error::Parse { .. }), "{e}");
}

fn run_zeros(p: &Program) {
    let inputs: Vec<HostArray> = p
        .in_avals()
        .iter()
        .map(|a| HostArray::zeros(a.shape.clone(), a.dtype))
        .collect::<Result<_, _>>()
        .unwrap_or_default();
    if inputs.len() == p.in_avals().len() {
        let _ = p.run(&inputs);
    }
}

#[test]
fn mutated_programs_never_panic() {
    let seeds: Vec<Vec<u8>> = [program(), while_program()]
        .iter()
        .map(|p| Program::to_bytes(p, Determinism::Default, "{}").unwrap())
        .collect();
    let cases: usize = std::env::var("MICROJAX_MUTATION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let limits = Limits {
        max_bytes: 1 << 20,
        max_loop_iterations: 1000,
        max_steps: 1_000_000,
        max_depth: 16,
        timeout: None,
    };
    // xorshift, so the mutation cases are reproducible.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut loaded, mut failed) = (0usize, 0usize);
    for _ in 0..cases {
        let base = &seeds[rng.below(seeds.len())];
        let mut m = base.clone();
        match rng.below(4) {
            0 => {
                for _ in 0..1 + rng.below(3) {
                    let i = rng.below(m.len());
                    m[i] ^= 1 << rng.below(8);
                }
            }
            1 => m.truncate(rng.below(m.len())),
            2 => {
                let other = &seeds[rng.below(seeds.len())];
                let cut = rng.below(m.len());
                let from = rng.below(other.len());
                m.truncate(cut);
                m.extend_from_slice(&other[from..]);
            }
            _ => {
                // a random byte in the text section, where the parser works
                let i = 24 + rng.below(m.len().saturating_sub(24));
                if i < m.len() {
                    let alphabet = b"{}[]()=:,. 0123456789abcdefv;\n";
                    m[i] = alphabet[rng.below(alphabet.len())];
                }
            }
        }
        match Program::from_bytes(&m).and_then(|p| p.with_limits(limits.clone())) {
            Ok(p) => {
                loaded += 1;
                run_zeros(&p);
            }
            Err(_) => failed += 1,
        }
    }
    assert_eq!(loaded + failed, cases);
    assert!(failed > cases / 2, "most mutations must be rejected");
}

/// Bytes in the export format around `prog`'s text, written without the
/// exporter's checks.
fn unchecked_bytes(prog: &ClosedJaxpr) -> Vec<u8> {
    let text = microjax::ir::canonical::canonical(prog);
    let mut bytes = Vec::new();
    bytes.extend_from_slice(microjax::export::MAGIC);
    bytes.extend_from_slice(&1u16.to_le_bytes());
    bytes.extend_from_slice(&0u16.to_le_bytes());
    bytes.extend_from_slice(&[0, 0, 0, 0]);
    bytes.extend_from_slice(&(text.len() as u64).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&0u64.to_le_bytes());
    bytes
}

/// `x -> sin(x)` on an f32 value of `rank` unit axes.
fn of_rank(rank: usize) -> ClosedJaxpr {
    let mut b = Builder::new();
    let shape: Vec<usize> = (0..rank).map(|_| 1).collect();
    let x = Atom::Var(b.add_input(f32v(&shape)).unwrap());
    let y = b.unary(UnaryOp::Sin, x).unwrap();
    b.build(vec![y]).unwrap()
}

/// `x -> x + 1` inside `depth` nested one-step scans.
fn nested_scans(depth: usize) -> ClosedJaxpr {
    let mut prog = scalar_step(BinaryOp::Add, 1.0);
    for _ in 0..depth {
        let mut b = Builder::new();
        let x = Atom::Var(b.add_input(f32v(&[])).unwrap());
        let outs = scan(&mut b, prog, 1, false, (0, 1), vec![x]);
        prog = b.build(outs).unwrap();
    }
    prog
}

#[test]
fn export_refuses_exactly_what_loading_refuses() {
    let max_rank = microjax::ir::canonical::ParseLimits::default().max_rank;
    let max_depth = Limits::default().max_depth;
    let cases = [
        (of_rank(max_rank), true),
        (of_rank(max_rank + 1), false),
        (nested_scans(max_depth), true),
        (nested_scans(max_depth + 1), false),
    ];
    for (prog, loadable) in cases {
        let exported = Program::to_bytes(&prog, Determinism::Default, "");
        let loaded = Program::from_bytes(&unchecked_bytes(&prog));
        assert_eq!(exported.is_ok(), loadable, "{exported:?}");
        assert_eq!(loaded.is_ok(), loadable, "{loaded:?}");
        match exported {
            Ok(bytes) => {
                let p = Program::from_bytes(&bytes).unwrap();
                run_zeros(&p);
            }
            Err(e) => {
                assert!(
                    matches!(&e, Error::Limit(m) if m.starts_with("export:") && m.contains("deserialize")),
                    "{e}"
                );
                assert!(matches!(loaded, Err(Error::Limit(_))));
                assert!(microjax::export::check_exportable(&prog).is_err());
            }
        }
    }
}

/// An elementwise chain of `n` equations on `f32[4]` (alternating `+ 0.5`,
/// `sin`, `* 1.0001`).
fn elementwise_chain(n: usize) -> ClosedJaxpr {
    let mut b = Builder::new();
    let mut y = Atom::Var(b.add_input(f32v(&[4])).unwrap());
    let mut eqns = 0;
    while eqns < n {
        y = if eqns % 3 == 0 {
            b.binary(BinaryOp::Add, y, Builder::lit(DType::F32, 0.5))
                .unwrap()
        } else if eqns % 3 == 1 {
            b.unary(UnaryOp::Sin, y).unwrap()
        } else {
            b.binary(BinaryOp::Mul, y, Builder::lit(DType::F32, 1.0001))
                .unwrap()
        };
        eqns += 1;
    }
    b.build(vec![y]).unwrap()
}

/// Loading is linear in the program's size, so the default parse limits
/// (2^20 equations) cannot be turned into a denial of service: a
/// 10^5-equation program loads about four times slower than a 2.5x10^4 one
/// (a quadratic step would make it sixteen). Best of two loads each; the
/// ratio, not a wall-clock figure, is asserted.
#[test]
fn loading_is_linear_in_program_size() {
    let load_time = |n: usize| {
        let bytes = Program::to_bytes(&elementwise_chain(n), Determinism::Default, "").unwrap();
        (0..2)
            .map(|_| {
                let t = std::time::Instant::now();
                let p = Program::from_bytes(&bytes).unwrap();
                let dt = t.elapsed().as_secs_f64();
                drop(p);
                dt
            })
            .fold(f64::INFINITY, f64::min)
    };
    // 4x the equations: about 4x the time when linear, 16x when quadratic.
    let (small, large) = (load_time(25_000), load_time(100_000));
    assert!(
        large / small < 10.0,
        "2.5x10^4: {small:.3} s, 10^5: {large:.3} s"
    );
    // And the large one runs.
    let p = Program::from_bytes(
        &Program::to_bytes(&elementwise_chain(100_000), Determinism::Default, "").unwrap(),
    )
    .unwrap();
    let x = HostArray::new(vec![4], Buffer::F32(vec![0.0; 4].into())).unwrap();
    assert!(f32s(&p.run(&[x]).unwrap()[0]).iter().all(|v| v.is_finite()));
}
