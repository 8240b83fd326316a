//! The execution context: the run-time settings of one evaluation, passed
//! by reference to every kernel ([`crate::prims::Family::kernel`],
//! [`crate::prims::kernel::eval`]).
//!
//! Entry points build one; nested evaluations (control-flow bodies, `pjit`
//! calls, custom rules run by kernels) receive the same one, and so does
//! work handed to other threads (`ExecCtx` is `Sync`).

/// The run-time settings of one evaluation.
#[derive(Debug, Default)]
pub struct ExecCtx {
    _settings: (),
}

impl ExecCtx {
    /// A context with the process-wide defaults (what an evaluation that
    /// sets nothing runs under).
    pub fn current_default() -> ExecCtx {
        ExecCtx::default()
    }
}
