//! Run-time limits of one evaluation, set by a loaded program's `run`
//! ([`crate::export::Program`]) and read by the loops that need them.
//!
//! The budget is thread-local: an evaluation runs on the calling thread, and
//! nested evaluations (a `while` inside a `scan` inside a `pjit`) share it.

use crate::error::{Error, Result};
use std::cell::Cell;

thread_local! {
    /// `while` iterations left in this thread's current run (`None`: no limit).
    static WHILE_LEFT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Sets the `while` iteration budget until dropped (then restores the
/// previous one).
pub struct WhileBudget {
    previous: Option<u64>,
}

impl WhileBudget {
    pub fn set(iterations: u64) -> WhileBudget {
        let previous = WHILE_LEFT.with(|c| c.replace(Some(iterations)));
        WhileBudget { previous }
    }
}

impl Drop for WhileBudget {
    fn drop(&mut self) {
        WHILE_LEFT.with(|c| c.set(self.previous));
    }
}

/// Takes one `while` iteration from the budget; an error once it is spent.
pub fn take_while_iteration() -> Result<()> {
    WHILE_LEFT.with(|c| match c.get() {
        None => Ok(()),
        Some(0) => Err(Error::Limit(
            "while loop iterations exceed the program's limit".into(),
        )),
        Some(n) => {
            c.set(Some(n.saturating_sub(1)));
            Ok(())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_counts_down_and_restores() {
        assert!(take_while_iteration().is_ok());
        {
            let _outer = WhileBudget::set(2);
            assert!(take_while_iteration().is_ok());
            {
                let _inner = WhileBudget::set(0);
                assert!(take_while_iteration().is_err());
            }
            assert!(take_while_iteration().is_ok());
            assert!(take_while_iteration().is_err());
        }
        assert!(take_while_iteration().is_ok());
    }
}
