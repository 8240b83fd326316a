//! The structural compile cache (`exec::cache`): tiering (first sighting
//! interpreted, second compiled), hits confirmed by structure (an equal
//! program in another `Arc` hits), signature and config epoch in the key,
//! LRU eviction, capacity 0 = off; and the host buffer pool (`array::pool`):
//! bounded, and results bit for bit the same with and without it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::array::pool;
use microjax::exec::cache::{CacheStats, CompileCache};
use microjax::exec::compiled::Compiled;
use microjax::exec::interp::eval_closed;
use microjax::{BinaryOp, Buffer, Builder, ClosedJaxpr, DType, HostArray};
use std::sync::Arc;

mod common;
use common::*;

/// `tanh(x*2+1)*sin(x) - exp(-x*x) + c` on f32[n].
fn chain(n: usize, c: f64) -> Arc<ClosedJaxpr> {
    let mut b = Builder::new();
    let x = input(&mut b, &[n]);
    let y = tanh_sin_exp(&mut b, x);
    let out = b.binary(BinaryOp::Add, y, lit(c)).unwrap();
    Arc::new(b.build(vec![out]).unwrap())
}

fn same(got: &[Arc<HostArray>], want: &[Arc<HostArray>]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.shape(), w.shape());
        assert_eq!(g.buffer(), w.buffer());
    }
}

fn counts(s: CacheStats) -> (u64, u64, u64, u64, u64) {
    (
        s.misses,
        s.hits,
        s.compiles,
        s.interpreted_runs,
        s.compiled_runs,
    )
}

#[test]
fn first_sighting_interprets_second_compiles_then_reuses() {
    let cache = CompileCache::new(8);
    let prog = chain(100, 0.5);
    let x = data(&[100], 1);
    let want = eval_closed(&prog, std::slice::from_ref(&x)).unwrap();
    same(
        &cache.run(&prog, std::slice::from_ref(&x), 0).unwrap(),
        &want,
    );
    assert_eq!(counts(cache.stats()), (1, 0, 0, 1, 0));
    same(
        &cache.run(&prog, std::slice::from_ref(&x), 0).unwrap(),
        &want,
    );
    assert_eq!(counts(cache.stats()), (1, 1, 1, 1, 1));
    same(
        &cache.run(&prog, std::slice::from_ref(&x), 0).unwrap(),
        &want,
    );
    assert_eq!(counts(cache.stats()), (1, 2, 1, 1, 2));
    assert_eq!(cache.stats().entries, 1);
}

#[test]
fn an_equal_program_in_another_arc_hits_a_different_literal_misses() {
    let cache = CompileCache::new(8);
    let x = data(&[10], 2);
    let args = std::slice::from_ref(&x);
    cache.run(&chain(10, 0.5), args, 0).unwrap();
    cache.run(&chain(10, 0.5), args, 0).unwrap();
    assert_eq!(counts(cache.stats()), (1, 1, 1, 1, 1));
    // A literal value is part of the structure (callers lift float
    // literals into arguments before running, so this is a new program).
    let other = chain(10, 0.25);
    let want = eval_closed(&other, args).unwrap();
    same(&cache.run(&other, args, 0).unwrap(), &want);
    assert_eq!(cache.stats().misses, 2);
}

#[test]
fn epoch_and_signature_are_part_of_the_key() {
    let cache = CompileCache::new(8);
    let prog = chain(10, 0.5);
    let x = data(&[10], 3);
    let args = std::slice::from_ref(&x);
    cache.run(&prog, args, 0).unwrap();
    cache.run(&prog, args, 1).unwrap();
    assert_eq!((cache.stats().misses, cache.stats().hits), (2, 0));
    cache.run(&prog, args, 1).unwrap();
    assert_eq!((cache.stats().misses, cache.stats().hits), (2, 1));
    // Arguments of another shape: their own key (a plan built for f32[10]
    // is never handed f32[11]).
    let other = data(&[11], 3);
    let _ = cache.run(&prog, &[other], 1);
    assert_eq!(cache.stats().misses, 3);
}

#[test]
fn least_recently_used_entries_are_evicted() {
    let cache = CompileCache::new(2);
    let progs: Vec<_> = (0..3).map(|i| chain(4, f64::from(i))).collect();
    let x = data(&[4], 4);
    let args = std::slice::from_ref(&x);
    cache.run(&progs[0], args, 0).unwrap();
    cache.run(&progs[1], args, 0).unwrap();
    cache.run(&progs[0], args, 0).unwrap(); // 0 is now the most recent
    cache.run(&progs[2], args, 0).unwrap(); // evicts 1
    let s = cache.stats();
    assert_eq!((s.entries, s.evictions, s.misses, s.hits), (2, 1, 3, 1));
    cache.run(&progs[0], args, 0).unwrap();
    assert_eq!(cache.stats().hits, 2);
    cache.run(&progs[1], args, 0).unwrap();
    assert_eq!((cache.stats().misses, cache.stats().evictions), (4, 2));
    cache.set_capacity(1);
    assert_eq!(cache.stats().entries, 1);
    cache.clear();
    assert_eq!(cache.stats(), CacheStats::default());
}

#[test]
fn capacity_zero_always_interprets() {
    let cache = CompileCache::new(0);
    let prog = chain(4, 1.0);
    let x = data(&[4], 5);
    for _ in 0..3 {
        cache.run(&prog, std::slice::from_ref(&x), 0).unwrap();
    }
    let s = cache.stats();
    assert_eq!((s.entries, s.compiles, s.misses, s.hits), (0, 0, 0, 0));
    assert_eq!(s.interpreted_runs, 3);
}

/// The pool's whole contract in one test (it is process-wide state).
#[test]
fn pool_is_bounded_and_never_changes_results() {
    let n = 1 << 18; // 1 MiB of f32: pooled
    let prog = chain(n, 0.5);
    let x = data(&[n], 6);
    let args = std::slice::from_ref(&x);
    let plan = Compiled::new(prog.clone()).unwrap();
    pool::set_cap_bytes(0);
    let want = plan.run(args).unwrap();
    same(&eval_closed(&prog, args).unwrap(), &want);
    pool::set_cap_bytes(pool::DEFAULT_CAP_BYTES);
    pool::clear();
    // Dropping a run's output returns its buffer; the next run takes it
    // (old contents overwritten: same bits as without the pool).
    drop(plan.run(args).unwrap());
    assert_eq!(pool::stats().held_buffers, 1);
    for _ in 0..3 {
        same(&plan.run(args).unwrap(), &want);
    }
    let s = pool::stats();
    assert!(s.hits >= 3, "{s:?}");
    // Bounded: a cap of two buffers' bytes keeps at most two.
    let bytes = n * 4;
    pool::set_cap_bytes(2 * bytes);
    // Only buffers the pool lent come back: others go to the allocator.
    pool::give(Buffer::zeros(DType::F32, n).unwrap());
    pool::give(Buffer::zeros(DType::F32, n + 1).unwrap());
    assert_eq!(pool::stats().held_buffers, 1);
    let lent: Vec<Buffer> = (0..5).map(|_| pool::take(DType::F32, n).unwrap()).collect();
    assert_eq!(pool::stats().held_buffers, 0);
    for b in lent {
        pool::give(b);
    }
    let s = pool::stats();
    assert_eq!((s.held_buffers, s.held_bytes), (2, 2 * bytes));
    assert!(s.evicted >= 3);
    // Too small to keep, or larger than the cap: dropped.
    pool::give(pool::take(DType::F32, 16).unwrap());
    pool::give(pool::take(DType::F32, 3 * n).unwrap());
    assert_eq!(pool::stats().held_buffers, 2);
    // A product's output comes from the pool too (faer and gemm overwrite
    // it): a lent buffer full of NaN changes none of its bits.
    pool::set_cap_bytes(pool::DEFAULT_CAP_BYTES);
    pool::clear();
    let d = 256; // a 256 KiB f32 output: pooled
    let (a, w) = (data(&[d, d], 7), data(&[d, d], 8));
    let matmul = || {
        microjax::prims::kernel::eval(
            &microjax::exec::ExecCtx::current_default(),
            &dot_general(&[1], &[0], &[], &[]),
            &[&*a, &*w],
        )
        .unwrap()
        .remove(0)
    };
    let fresh = matmul();
    let mut stale = pool::take(DType::F32, d * d).unwrap();
    if let Buffer::F32(v) = &mut stale {
        v.make_mut().fill(f32::NAN);
    }
    pool::give(stale);
    let hits = pool::stats().hits;
    let reused = matmul();
    assert_eq!(
        pool::stats().hits,
        hits + 1,
        "the product took no pooled buffer"
    );
    assert_eq!(reused.buffer(), fresh.buffer());
    // Off: nothing kept, nothing served.
    pool::set_cap_bytes(0);
    assert_eq!(pool::stats().held_bytes, 0);
    same(&plan.run(args).unwrap(), &want);
    assert_eq!(pool::stats().held_buffers, 0);
    pool::set_cap_bytes(pool::DEFAULT_CAP_BYTES);
}
