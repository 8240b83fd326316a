//! The execution context (`exec::ExecCtx`): the `while` budget shared by
//! the nested loops of one run, cancellation, the poll hook, portable
//! determinism through the context, and the context on rayon workers.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::cast_precision_loss
)]

use crate::common;

use common::autodiff::pjit;
use common::{doubling_while, f64s, f64v, host, i32s};
use microjax::exec::compiled::Compiled;
use microjax::exec::interp::eval_closed_in;
use microjax::exec::{CancelToken, Determinism, ExecCtx, PollHook};
use microjax::prims::kernel;
use microjax::{Aval, Buffer, ClosedJaxpr, DType, Error, HostArray};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn scalar_i32(v: i32) -> Arc<HostArray> {
    Arc::new(host(&[], vec![v]))
}

/// `(x, lim) -> (lim, x * 4^lim)`: two `pjit` calls of [`doubling_while`]
/// (each a `while` of `lim` iterations), `2 * lim` iterations in all.
fn two_nested_whiles() -> ClosedJaxpr {
    let x_aval = f64v(&[]);
    let inner = doubling_while(x_aval.clone());
    common::build(&[x_aval, Aval::new(vec![], DType::I32)], |b, xs| {
        let first = pjit(b, inner.clone(), &[xs[0].clone(), xs[1].clone()]);
        let second = pjit(b, inner.clone(), &[first[1].clone(), xs[1].clone()]);
        vec![second[0].clone(), second[1].clone()]
    })
}

fn args(x: f64, lim: i32) -> Vec<Arc<HostArray>> {
    vec![Arc::new(host(&[], vec![x])), scalar_i32(lim)]
}

/// A run of a program under a context.
type RunIn<'a> = dyn Fn(&ExecCtx, &[Arc<HostArray>]) -> microjax::Result<Vec<Arc<HostArray>>> + 'a;

/// `prog` run by the compiled executor (`plan`) and by the interpreter.
fn both_executors<'a>(
    prog: &'a ClosedJaxpr, plan: &'a Compiled,
) -> Vec<(&'static str, Box<RunIn<'a>>)> {
    vec![
        ("compiled", Box::new(|c, a| plan.run_in(c, a))),
        ("interpreted", Box::new(|c, a| eval_closed_in(c, prog, a))),
    ]
}

fn budget(n: u64) -> ExecCtx {
    ExecCtx::current_default().with_max_loop_iterations(n)
}

#[test]
fn while_budget_is_shared_by_nested_loops_of_one_run() {
    let prog = two_nested_whiles();
    let plan = Compiled::new(Arc::new(prog.clone())).unwrap();
    let runs = both_executors(&prog, &plan);
    for (what, run) in &runs {
        // Both loops together take 2 * 5 iterations: exactly the budget.
        let out = run(&budget(10), &args(1.5, 5)).unwrap();
        assert_eq!(i32s(&out[0]), vec![5], "{what}");
        assert_eq!(f64s(&out[1]), vec![1.5 * 1024.0], "{what}");
        // One iteration fewer fails in the second loop.
        let e = run(&budget(9), &args(1.5, 5)).unwrap_err();
        assert!(matches!(e, Error::Limit(_)), "{what}: {e}");
        // The counter belongs to the run's context: a second run with a
        // fresh context has the whole budget again, a reused one does not.
        let ctx = budget(10);
        assert!(run(&ctx, &args(1.5, 5)).is_ok(), "{what}");
        assert!(run(&budget(10), &args(1.5, 5)).is_ok(), "{what}");
        assert!(
            matches!(run(&ctx, &args(1.5, 1)), Err(Error::Limit(_))),
            "{what}"
        );
        // Without a limit the loops run as long as they need.
        assert!(
            run(&ExecCtx::current_default(), &args(1.0, 200)).is_ok(),
            "{what}"
        );
    }
}

/// A `while` that never ends (`lim` far beyond any test's patience).
fn long_while() -> (Compiled, ClosedJaxpr) {
    let prog = doubling_while(f64v(&[]));
    (Compiled::new(Arc::new(prog.clone())).unwrap(), prog)
}

fn long_args() -> Vec<Arc<HostArray>> {
    vec![Arc::new(host(&[], vec![0.0f64])), scalar_i32(i32::MAX)]
}

#[test]
fn a_cancelled_token_stops_a_run_before_and_while_it_runs() {
    let (plan, prog) = long_while();
    // Set before the run: the first loop head stops it.
    let token = CancelToken::new();
    token.cancel();
    let ctx = ExecCtx::current_default().with_cancel(token);
    assert_eq!(
        plan.run_in(&ctx, &long_args()).unwrap_err(),
        Error::Cancelled
    );
    assert_eq!(
        eval_closed_in(&ctx, &prog, &long_args()).unwrap_err(),
        Error::Cancelled
    );
    // Set from another thread while the loop runs.
    let token = CancelToken::new();
    let ctx = ExecCtx::current_default().with_cancel(token.clone());
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        token.cancel();
    });
    assert_eq!(
        plan.run_in(&ctx, &long_args()).unwrap_err(),
        Error::Cancelled
    );
    canceller.join().unwrap();
}

#[test]
fn a_poll_hook_error_stops_a_run() {
    let (plan, prog) = long_while();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let hook: PollHook = Arc::new(move || {
        if seen.fetch_add(1, Ordering::Relaxed) >= 3 {
            Err(Error::InvalidArgument(
                "interrupted by the poll hook".into(),
            ))
        } else {
            Ok(())
        }
    });
    let ctx = ExecCtx::current_default().with_poll(hook.clone(), 100);
    let e = plan.run_in(&ctx, &long_args()).unwrap_err();
    assert_eq!(
        e,
        Error::InvalidArgument("interrupted by the poll hook".into())
    );
    // Called at the first checkpoint and then every 100th: 4 calls.
    assert_eq!(calls.load(Ordering::Relaxed), 4);
    let ctx = ExecCtx::current_default().with_poll(hook, 1);
    assert!(matches!(
        eval_closed_in(&ctx, &prog, &long_args()),
        Err(Error::InvalidArgument(_))
    ));
    // A hook that never fails changes nothing.
    let ok: PollHook = Arc::new(|| Ok(()));
    let ctx = ExecCtx::current_default().with_poll(ok, 1);
    let out = plan.run_in(&ctx, &args(1.0, 3)).unwrap();
    assert_eq!(f64s(&out[1]), vec![8.0]);
}

fn matrix(shape: &[usize], seed: u64) -> HostArray {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let v: Vec<f32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 2001) as f32 / 1000.0 - 1.0
        })
        .collect();
    HostArray::new(shape.to_vec(), Buffer::F32(v.into())).unwrap()
}

fn bits(h: &HostArray) -> Vec<u32> {
    match h.buffer() {
        Buffer::F32(v) => v.iter().map(|x| x.to_bits()).collect(),
        other => panic!("expected f32, got {:?}", other.dtype()),
    }
}

/// `x @ w` for a product large enough to be split over rayon workers.
fn matmul_in(ctx: &ExecCtx, x: &HostArray, w: &HostArray) -> Vec<u32> {
    let out = kernel::eval(ctx, &common::dot_general(&[1], &[0], &[], &[]), &[x, w]).unwrap();
    bits(&out[0])
}

#[test]
fn portable_mode_through_the_context_is_the_same_on_rayon_workers() {
    let (x, w) = (matrix(&[256, 192], 1), matrix(&[192, 160], 2));
    let portable = || ExecCtx::current_default().with_determinism(Determinism::Portable);
    // Serial: one partition; parallel: four, on a pool of four threads.
    let serial = matmul_in(
        &portable().with_partitions(std::num::NonZeroUsize::new(1)),
        &x,
        &w,
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let parallel = pool.install(|| {
        matmul_in(
            &portable().with_partitions(std::num::NonZeroUsize::new(4)),
            &x,
            &w,
        )
    });
    assert_eq!(serial, parallel);
    // The pool's own thread count when no partition count is set.
    let pooled = pool.install(|| matmul_in(&portable(), &x, &w));
    assert_eq!(serial, pooled);
    // Portable products are `0 + x0·w0 + x1·w1 + …` in k order with
    // separate multiplies and adds: the plain loop's bits.
    let (xv, wv) = match (x.buffer(), w.buffer()) {
        (Buffer::F32(a), Buffer::F32(b)) => (a.clone(), b.clone()),
        _ => unreachable!(),
    };
    for (idx, got) in serial.iter().enumerate().step_by(997) {
        let (i, j) = (idx / 160, idx % 160);
        let mut acc = 0.0f32;
        for k in 0..192 {
            acc += xv[i * 192 + k] * wv[k * 160 + j];
        }
        assert_eq!(*got, acc.to_bits(), "element ({i}, {j})");
    }
}

#[test]
fn a_deadline_stops_a_run_with_a_typed_error() {
    let (plan, prog) = long_while();
    let start = std::time::Instant::now();
    let ctx = ExecCtx::current_default().with_timeout(std::time::Duration::from_millis(50));
    assert_eq!(
        plan.run_in(&ctx, &long_args()).unwrap_err(),
        Error::DeadlineExceeded
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    // A deadline already past stops the interpreter at its first step.
    let ctx = ExecCtx::current_default().with_deadline(std::time::Instant::now());
    assert_eq!(
        eval_closed_in(&ctx, &prog, &long_args()).unwrap_err(),
        Error::DeadlineExceeded
    );
    // A run that finishes in time is unchanged.
    let ctx = ExecCtx::current_default().with_timeout(std::time::Duration::from_secs(60));
    let out = plan.run_in(&ctx, &args(1.0, 3)).unwrap();
    assert_eq!(f64s(&out[1]), vec![8.0]);
}

#[test]
fn an_interval_poll_hook_runs_at_most_once_per_interval() {
    let (plan, _) = long_while();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let hook: PollHook = Arc::new(move || {
        // Stops the run at the fourth call.
        if seen.fetch_add(1, Ordering::Relaxed) >= 3 {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    });
    let interval = std::time::Duration::from_millis(20);
    let start = std::time::Instant::now();
    let ctx = ExecCtx::current_default().with_poll_interval(hook, interval);
    assert!(ctx.is_interruptible());
    assert_eq!(
        plan.run_in(&ctx, &long_args()).unwrap_err(),
        Error::Interrupted
    );
    // Four calls, the first one interval after the context was built.
    assert_eq!(calls.load(Ordering::Relaxed), 4);
    assert!(start.elapsed() >= interval * 4);
    // A short run never reaches the first call.
    let quiet: PollHook = Arc::new(|| Err(Error::Interrupted));
    let ctx =
        ExecCtx::current_default().with_poll_interval(quiet, std::time::Duration::from_secs(60));
    assert!(plan.run_in(&ctx, &args(1.0, 3)).is_ok());
    assert!(!ExecCtx::current_default().without_poll().is_interruptible());
}

#[test]
fn a_large_product_passes_checkpoints_between_row_blocks() {
    // 4096 x 1024 @ 1024 x 2048: 2^33 multiply-adds, four row blocks.
    let (x, w) = (matrix(&[4096, 1024], 3), matrix(&[1024, 2048], 4));
    let whole = matmul_in(&ExecCtx::current_default().without_poll(), &x, &w);
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let count: PollHook = Arc::new(move || {
        seen.fetch_add(1, Ordering::Relaxed);
        Ok(())
    });
    let blocked = matmul_in(&ExecCtx::current_default().with_poll(count, 1), &x, &w);
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    let close = whole.iter().zip(&blocked).all(|(a, b)| {
        let (a, b) = (f32::from_bits(*a), f32::from_bits(*b));
        (a - b).abs() <= 1e-4 * (1.0 + a.abs())
    });
    assert!(close, "the row blocks change the product");
    // A hook error in the middle of the product stops it.
    let stop: PollHook = Arc::new(|| Err(Error::Interrupted));
    let e = kernel::eval(
        &ExecCtx::current_default().with_poll(stop, 1),
        &common::dot_general(&[1], &[0], &[], &[]),
        &[&x, &w],
    )
    .unwrap_err();
    assert_eq!(e, Error::Interrupted);
    // A set token stops it too (before the second block).
    let token = CancelToken::new();
    token.cancel();
    let e = kernel::eval(
        &ExecCtx::current_default().with_cancel(token),
        &common::dot_general(&[1], &[0], &[], &[]),
        &[&x, &w],
    )
    .unwrap_err();
    assert_eq!(e, Error::Cancelled);
}

/// `c -> c + 1` repeated `length` times by a carry-only `scan`.
fn counting_scan(length: usize) -> ClosedJaxpr {
    let body = common::build(&[f64v(&[])], |b, xs| {
        let one = microjax::Atom::Lit(microjax::Literal::new(
            microjax::Scalar::Float(1.0),
            DType::F64,
            false,
        ));
        vec![b
            .add_eqn1(
                microjax::Primitive::Binary(microjax::BinaryOp::Add),
                vec![xs[0].clone(), one],
            )
            .unwrap()]
    });
    common::build(&[f64v(&[])], |b, xs| {
        common::scan(b, body, length, false, (0, 1), vec![xs[0].clone()])
    })
}

#[test]
fn a_scan_longer_than_the_budget_is_refused_before_it_runs() {
    let x = || vec![Arc::new(host(&[], vec![0.0f64]))];
    // Refused before its first step: the run's budget is untouched, and a
    // scan that fits still runs in the same context.
    let ctx = budget(15);
    assert!(matches!(
        eval_closed_in(&ctx, &counting_scan(20), &x()),
        Err(Error::Limit(_))
    ));
    let out = eval_closed_in(&ctx, &counting_scan(15), &x()).unwrap();
    assert_eq!(f64s(&out[0]), vec![15.0]);
    for (length, limit, ok) in [(10, 10, true), (11, 10, false), (1 << 40, 1 << 24, false)] {
        let prog = counting_scan(length);
        let plan = Compiled::new(Arc::new(prog.clone())).unwrap();
        for (what, got) in [
            ("compiled", plan.run_in(&budget(limit), &x())),
            ("interpreted", eval_closed_in(&budget(limit), &prog, &x())),
        ] {
            match got {
                Ok(out) => {
                    assert!(ok, "{what} {length}");
                    assert_eq!(f64s(&out[0]), vec![length as f64], "{what}");
                }
                // 2^40 steps would take hours: only the check up front
                // returns at all.
                Err(e) => assert!(!ok && matches!(e, Error::Limit(_)), "{what} {length}: {e}"),
            }
        }
    }
    // The check counts what earlier loops of the run took.
    let ctx = budget(15);
    let prog = counting_scan(10);
    assert!(eval_closed_in(&ctx, &prog, &x()).is_ok());
    assert!(matches!(
        eval_closed_in(&ctx, &prog, &x()),
        Err(Error::Limit(_))
    ));
}

/// The fewest steps a run of `run` on `a` needs (searched upward).
fn fewest_steps(run: &RunIn<'_>, a: &[Arc<HostArray>]) -> u64 {
    (1..100_000u64)
        .find(|&n| run(&ExecCtx::current_default().with_max_steps(n), a).is_ok())
        .unwrap()
}

#[test]
fn the_step_budget_counts_every_step_of_every_loop_iteration() {
    let prog = two_nested_whiles();
    let plan = Compiled::new(Arc::new(prog.clone())).unwrap();
    let runs = both_executors(&prog, &plan);
    for (what, run) in &runs {
        let need: Vec<u64> = [5, 10, 15]
            .iter()
            .map(|&lim| fewest_steps(run.as_ref(), &args(1.5, lim)))
            .collect();
        // Each loop iteration costs the same steps: the need grows
        // linearly with the trip count (2 loops x 5 more iterations).
        assert!(need[1] > need[0] + 10, "{what}: {need:?}");
        assert_eq!(need[2] - need[1], need[1] - need[0], "{what}: {need:?}");
        // One step fewer is a typed limit error, mid-loop.
        let short = ExecCtx::current_default().with_max_steps(need[1] - 1);
        let e = run(&short, &args(1.5, 10)).unwrap_err();
        assert!(matches!(e, Error::Limit(_)), "{what}: {e}");
        // The right values at exactly the budget.
        let ctx = ExecCtx::current_default().with_max_steps(need[1]);
        let out = run(&ctx, &args(1.5, 10)).unwrap();
        assert_eq!(f64s(&out[1]), vec![1.5 * 4f64.powi(10)], "{what}");
    }
}

/// `c @ w @ w ... @ w` (`n` products), `c` f64[4], `w` f64[4,4]: `n`
/// small steps no fusion joins.
fn product_chain(n: usize) -> ClosedJaxpr {
    common::build(&[f64v(&[4]), f64v(&[4, 4])], |b, xs| {
        let mut c = xs[0].clone();
        for _ in 0..n {
            c = b
                .add_eqn1(
                    common::dot_general(&[0], &[0], &[], &[]),
                    vec![c, xs[1].clone()],
                )
                .unwrap();
        }
        vec![c]
    })
}

#[test]
fn small_plan_steps_pass_a_checkpoint_at_least_every_seventeenth_step() {
    let n = 170;
    let prog = product_chain(n);
    let plan = Compiled::new(Arc::new(prog.clone())).unwrap();
    assert_eq!(plan.stats().steps, n);
    let c = Arc::new(host(&[4], vec![0.5f64, -0.25, 1.0, 0.75]));
    let w = Arc::new(host(
        &[4, 4],
        (0..16)
            .map(|i| f64::from(i % 5) / 4.0 - 0.4)
            .collect::<Vec<f64>>(),
    ));
    let a = [c, w];
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let count: PollHook = Arc::new(move || {
        seen.fetch_add(1, Ordering::Relaxed);
        Ok(())
    });
    let got = plan
        .run_in(&ExecCtx::current_default().with_poll(count, 1), &a)
        .unwrap();
    // Sixteen quiet steps, then one with a checkpoint: 170 / 17 = 10.
    let calls = calls.load(Ordering::Relaxed);
    assert_eq!(calls, n / 17, "checkpoints passed");
    let want = eval_closed_in(&ExecCtx::current_default(), &prog, &a).unwrap();
    assert_eq!(got[0].buffer(), want[0].buffer());
    // Every step still counts against the step budget.
    let need = fewest_steps(&|c, a| plan.run_in(c, a), &a);
    assert_eq!(need, n as u64);
    // A hook error stops the chain at its first checkpoint.
    let stop: PollHook = Arc::new(|| Err(Error::Interrupted));
    let e = plan
        .run_in(&ExecCtx::current_default().with_poll(stop, 1), &a)
        .unwrap_err();
    assert_eq!(e, Error::Interrupted);
}
