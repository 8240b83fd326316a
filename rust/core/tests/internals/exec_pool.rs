//! Tests of `exec::pool`'s internals (reached through `microjax::internals`).

use microjax::internals::exec_pool::*;
use rayon::ThreadPoolBuilder;

fn thread_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn work_from_a_plain_thread_runs_on_the_owned_pool() {
    assert!(!on_pool());
    let name = install(thread_name);
    assert!(name.starts_with("microjax-"), "{name}");
    assert!(install(on_pool));
    assert!(current_num_threads() >= 1);
}

#[test]
fn work_on_a_callers_pool_stays_there() -> std::result::Result<(), rayon::ThreadPoolBuildError> {
    let theirs = ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|i| format!("embedder-{i}"))
        .build()?;
    let (name, threads) = theirs.install(|| (install(thread_name), current_num_threads()));
    assert!(name.starts_with("embedder-"), "{name}");
    assert_eq!(threads, 3);
    Ok(())
}
