//! Tests of `exec::ctx`'s internals (reached through `microjax::internals`).

use microjax::exec::determinism::Determinism;
use microjax::internals::exec_ctx::*;
use microjax::prims::kernel::vmath::{self, SimdLevel};
use microjax::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn assert_sync<T: Sync + Send>() {}

#[test]
fn ctx_is_sync_and_budget_counts_down() {
    assert_sync::<ExecCtx>();
    let unlimited = ExecCtx::current_default();
    assert!(unlimited.take_loop_iteration().is_ok());
    let ctx = ExecCtx::current_default().with_max_loop_iterations(2);
    assert!(ctx.take_loop_iteration().is_ok());
    assert!(ctx.take_loop_iteration().is_ok());
    assert!(matches!(ctx.take_loop_iteration(), Err(Error::Limit(_))));
    assert!(matches!(ctx.take_loop_iteration(), Err(Error::Limit(_))));
    let fresh = ExecCtx::current_default().with_max_loop_iterations(0);
    assert!(fresh.take_loop_iteration().is_err());
}

#[test]
fn cancel_and_poll_stop_at_checkpoints() {
    let token = CancelToken::new();
    let ctx = ExecCtx::current_default().with_cancel(token.clone());
    assert!(ctx.checkpoint().is_ok());
    token.cancel();
    assert_eq!(ctx.checkpoint(), Err(Error::Cancelled));
    let calls = Arc::new(AtomicU64::new(0));
    let seen = calls.clone();
    let hook: PollHook = Arc::new(move || {
        seen.fetch_add(1, Ordering::Relaxed);
        Ok(())
    });
    let ctx = ExecCtx::current_default().with_poll(hook, 3);
    for _ in 0..7 {
        assert!(ctx.checkpoint().is_ok());
    }
    assert_eq!(calls.load(Ordering::Relaxed), 3);
}

#[test]
fn portable_caps_the_simd_level() {
    let ctx = ExecCtx::current_default().with_determinism(Determinism::Portable);
    assert_ne!(ctx.simd_level(), SimdLevel::Avx512);
    assert_eq!(ctx.enter(vmath::simd_level), ctx.simd_level());
}
