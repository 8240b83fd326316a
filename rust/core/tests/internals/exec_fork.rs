//! The fork handlers' lock set (`exec::fork`): all taken, refused while
//! held elsewhere, all released.

use microjax::exec::fork::*;

/// `try_hold_all`, retried for up to a second: the other tests of this
/// binary take the same locks for moments.
fn hold_with_retry() -> Option<Held> {
    (0..1000).find_map(|_| {
        let held = try_hold_all();
        if held.is_none() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        held
    })
}

#[test]
fn all_locks_are_taken_and_released() {
    let held = hold_with_retry();
    assert!(held.as_ref().is_some_and(|h| h.len() >= 4));
    // While held, a second attempt backs off instead of blocking.
    let other = std::thread::spawn(|| try_hold_all().is_none());
    assert!(other.join().unwrap_or(false));
    drop(held);
    // Released: the compile cache is usable again from another thread,
    // and all the locks can be taken again (other tests may hold one
    // for a moment: retried).
    let again = std::thread::spawn(|| {
        microjax::exec::cache::global().stats();
        hold_with_retry().is_some()
    });
    assert!(again.join().unwrap_or(false));
}
