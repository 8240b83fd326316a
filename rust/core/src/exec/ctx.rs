//! The execution context: the run-time settings of one evaluation, passed
//! by reference to every kernel ([`crate::prims::Family::kernel`],
//! [`crate::prims::kernel::eval`]) and to every nested evaluation.
//!
//! # Where a context is built
//!
//! The entry points build one: eager evaluation (the binding's calls of
//! [`crate::prims::kernel::eval`]), [`super::interp::eval_closed`] and
//! [`super::interp::Prepared::run`], [`super::compiled::Compiled::run`],
//! [`crate::export::Program::run`] (from the program's recorded
//! determinism and limits) and the CUDA executor's `run`. Each has an `_in`
//! variant taking a context the caller built ([`ExecCtx::current_default`]
//! plus the `with_*` builders). Nested evaluations (control-flow bodies,
//! `pjit` and `checkpoint` calls, custom rules run by kernels, CUDA loops)
//! receive the same context, so the loop budget is shared by the whole
//! run; work handed to other threads receives `&ExecCtx` (it is `Sync`).
//!
//! # What it holds
//!
//! * the [`Determinism`] mode and the SIMD level derived from it (at most
//!   AVX2 in portable mode);
//! * the run limits: the loop iteration budget (`while` bodies and `scan` steps; a counter shared by all
//!   loops of the run), the step budget (the total work of the run: every
//!   equation or plan step the executor takes, in every loop iteration and
//!   nested program; [`ExecCtx::take_step`]) and the most bytes one buffer may take (passed to the
//!   [`crate::array::budget`] checks as a parameter, so `array` does not
//!   know this module);
//! * a [`CancelToken`], an optional deadline and an optional poll hook,
//!   checked at loop heads (every `while`/`scan` iteration), between plan
//!   steps and between the row blocks of a large matrix product
//!   ([`ExecCtx::checkpoint`]): a cancelled run stops with
//!   [`Error::Cancelled`], one past its deadline with
//!   [`Error::DeadlineExceeded`], a hook's error stops it with that error.
//!   A hook runs every `every` checkpoints, or at most once per interval
//!   ([`ExecCtx::with_poll_interval`]; the first call one interval after
//!   the context was built, so short runs never call it). A process-wide
//!   default hook ([`set_default_poll`], the Python binding's signal
//!   check) is in every [`ExecCtx::current_default`] context.
//!   Checkpoints are passed on the thread that called in; a hook must
//!   still not assume it (the binding's skips rayon pool threads);
//! * the number of parts parallel kernels split work into (`None`: the
//!   threads of the rayon pool the run is in, as faer's matmul uses too).
//!
//! # The one thread-local
//!
//! The SIMD slice loops (`prims/kernels/vmath.rs`'s `run`, called from the
//! innermost loops of the elementwise, reduction and small-matmul kernels,
//! many helper layers below any kernel entry) read the level from a
//! thread-local instead of a parameter. It is set from the context in one
//! place, [`ExecCtx::enter`], which the kernel entry
//! ([`crate::prims::kernel::eval_known`]), the compiled executor's run and
//! every worker closure handed to rayon call.

use super::determinism::{default_determinism, Determinism};
use crate::error::{Error, Result};
use crate::prims::kernel::vmath::{self, SimdLevel};
use std::fmt;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// A shared flag that stops a run: set it (from any thread) and the run
/// returns [`Error::Cancelled`] at its next loop head or plan step.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Asks every run holding this token to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A function a run calls at its loop heads and between plan steps (at
/// most every `every` of them); an error it returns stops the run.
pub type PollHook = Arc<dyn Fn() -> Result<()> + Send + Sync>;

/// When a poll hook runs.
#[derive(Debug, Clone, Copy)]
enum PollEvery {
    /// At every n-th checkpoint (the first included).
    Ticks(u64),
    /// At a checkpoint at least this long after the previous call (or
    /// after the context was built).
    Interval(Duration),
}

/// The hook every [`ExecCtx::current_default`] context polls, and its
/// interval (set once per process, by the Python binding).
static DEFAULT_POLL: OnceLock<(PollHook, Duration)> = OnceLock::new();

/// Installs the poll hook of every context built with
/// [`ExecCtx::current_default`], called at most once per `interval`.
/// Once per process: `false` (and nothing changed) when one is set.
pub fn set_default_poll(hook: PollHook, interval: Duration) -> bool {
    DEFAULT_POLL.set((hook, interval)).is_ok()
}

/// The run-time settings of one evaluation (see the module docs).
pub struct ExecCtx {
    determinism: Determinism,
    /// The level the SIMD loops run at before the portable cap.
    simd_base: SimdLevel,
    /// The loop budget of the run: `while` iterations and `scan` steps
    /// together (`None`: unlimited).
    max_loop_iterations: Option<u64>,
    /// Loop iterations (`while` and `scan`) taken so far by the whole run.
    loop_taken: AtomicU64,
    /// The step budget of the run: equations or plan steps executed, all
    /// nested programs and loop iterations included (`None`: unlimited).
    max_steps: Option<u64>,
    /// Steps taken so far by the whole run.
    steps_taken: AtomicU64,
    max_buffer_bytes: u64,
    /// The run's live-memory budget ([`crate::array::live`]): the live
    /// bytes when it was set and the most the run may add (`None`: none).
    max_run_bytes: Option<(usize, u64)>,
    cancel: Option<CancelToken>,
    /// The instant a run must be done by (`None`: no deadline).
    deadline: Option<Instant>,
    poll: Option<(PollHook, PollEvery)>,
    /// Checkpoints passed (for a poll hook called every n of them).
    ticks: AtomicU64,
    /// When the context was built (the origin of `last_poll`).
    born: Instant,
    /// Nanoseconds after `born` of the last call of an interval hook.
    last_poll: AtomicU64,
    /// Interval polling without a deadline: checkpoints passed without a
    /// clock read since the last one, how many may pass (0 up to
    /// [`MAX_CLOCK_SKIP`], grown while checkpoints come densely), and the
    /// nanoseconds after `born` of the last clock read.
    unread: AtomicU64,
    clock_skip: AtomicU64,
    last_read: AtomicU64,
    partitions: Option<NonZeroUsize>,
}

impl fmt::Debug for ExecCtx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecCtx")
            .field("determinism", &self.determinism)
            .field("simd", &self.simd_level())
            .field("max_loop_iterations", &self.max_loop_iterations)
            .field("loop_taken", &self.loop_taken.load(Ordering::Relaxed))
            .field("max_steps", &self.max_steps)
            .field("steps_taken", &self.steps_taken.load(Ordering::Relaxed))
            .field("max_buffer_bytes", &self.max_buffer_bytes)
            .field("max_run_bytes", &self.max_run_bytes())
            .field("cancel", &self.cancel)
            .field("deadline", &self.deadline)
            .field("poll_every", &self.poll.as_ref().map(|p| p.1))
            .field("partitions", &self.partitions)
            .finish()
    }
}

impl Default for ExecCtx {
    fn default() -> ExecCtx {
        ExecCtx::current_default()
    }
}

/// Builder methods `name(args) -> ExecCtx` that set one field and return
/// the context.
macro_rules! with_setters {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),+) => $field:ident = $value:expr;)*) => {$(
        $(#[$doc])*
        #[must_use]
        pub fn $name(mut self, $($arg: $ty),+) -> ExecCtx {
            self.$field = $value;
            self
        }
    )*};
}

impl ExecCtx {
    /// A context with the process-wide defaults: the default determinism
    /// mode (Python's `microjax_determinism`), the allocation budget
    /// (`microjax_max_buffer_bytes`), no loop limit, no cancellation, no
    /// deadline, the default poll hook when one is set
    /// ([`set_default_poll`]), the SIMD level of this thread (the CPU's
    /// best unless forced with [`vmath::with_simd_level`]).
    pub fn current_default() -> ExecCtx {
        ExecCtx {
            determinism: default_determinism(),
            simd_base: vmath::base_simd_level(),
            max_loop_iterations: None,
            loop_taken: AtomicU64::new(0),
            max_steps: None,
            steps_taken: AtomicU64::new(0),
            max_buffer_bytes: crate::array::budget::max_buffer_bytes(),
            max_run_bytes: None,
            cancel: None,
            deadline: None,
            poll: DEFAULT_POLL
                .get()
                .map(|(hook, every)| (hook.clone(), PollEvery::Interval(*every))),
            ticks: AtomicU64::new(0),
            born: Instant::now(),
            last_poll: AtomicU64::new(0),
            unread: AtomicU64::new(0),
            clock_skip: AtomicU64::new(0),
            last_read: AtomicU64::new(0),
            partitions: None,
        }
    }

    with_setters! {
        /// This context in determinism mode `mode`.
        with_determinism(mode: Determinism) => determinism = mode;
        /// This context with at most `iterations` loop iterations (`while` and `scan`) in the
        /// whole run (all loops together).
        with_max_loop_iterations(iterations: u64) => max_loop_iterations = Some(iterations);
        /// This context with at most `steps` steps in the whole run: every
        /// equation (interpreter) or plan step (compiled and CUDA
        /// executors: an equation, or a fused group of them) executed, in
        /// every loop iteration and nested program.
        with_max_steps(steps: u64) => max_steps = Some(steps);
        /// This context with buffers of at most `bytes` bytes.
        with_max_buffer_bytes(bytes: u64) => max_buffer_bytes = bytes;
        /// This context stopped by `token`.
        with_cancel(token: CancelToken) => cancel = Some(token);
        /// This context calling `hook` at every `every`-th checkpoint (the
        /// first included; `every` 0 counts as 1), instead of any other hook.
        with_poll(hook: PollHook, every: u64) => poll = Some((hook, PollEvery::Ticks(every.max(1))));
        /// This context calling `hook` at a checkpoint at most once per
        /// `interval` (first one interval after the context was built),
        /// instead of any other hook.
        with_poll_interval(hook: PollHook, interval: Duration) =>
            poll = Some((hook, PollEvery::Interval(interval)));
        /// This context stopping with [`Error::DeadlineExceeded`] at the
        /// first checkpoint after `at`.
        with_deadline(at: Instant) => deadline = Some(at);
        /// This context splitting parallel kernel work into `parts` parts
        /// (`None`: the threads of the current rayon pool).
        with_partitions(parts: Option<NonZeroUsize>) => partitions = parts;
    }

    /// This context with a live-memory budget of `bytes`: the run may add
    /// at most that many live bytes to those live now (counted by
    /// [`crate::array::live::CountingAlloc`], kernel scratch included; no
    /// bound without it). Allocations of the running thread are refused
    /// before they are made, the rest checked at every plan step
    /// ([`Error::MemoryBudget`]).
    pub fn with_max_run_bytes(mut self, bytes: u64) -> ExecCtx {
        self.max_run_bytes = Some((crate::array::live::live_base(), bytes));
        self
    }

    /// The run's live-memory budget in bytes, when it has one.
    pub fn max_run_bytes(&self) -> Option<u64> {
        self.max_run_bytes.map(|(_, bytes)| bytes)
    }

    pub fn determinism(&self) -> Determinism {
        self.determinism
    }

    pub fn is_portable(&self) -> bool {
        self.determinism == Determinism::Portable
    }

    /// The level the SIMD loops run at: at most AVX2 in portable mode.
    pub fn simd_level(&self) -> SimdLevel {
        if self.is_portable() {
            self.simd_base.at_most(SimdLevel::Avx2)
        } else {
            self.simd_base
        }
    }

    /// The most bytes one buffer of this run may take.
    pub fn max_buffer_bytes(&self) -> u64 {
        self.max_buffer_bytes
    }

    /// The loop budget of the run: `while` iterations and `scan` steps
    /// together (`None`: unlimited).
    pub fn max_loop_iterations(&self) -> Option<u64> {
        self.max_loop_iterations
    }

    /// The step budget of the run (`None`: unlimited).
    pub fn max_steps(&self) -> Option<u64> {
        self.max_steps
    }

    /// The context of one task of a kernel's own parallel loop (run on a
    /// pool worker): this run's determinism mode, SIMD level, buffer
    /// budget, cancel token and deadline, with the task's kernels on its
    /// own thread (one partition) and no poll hook, loop or step budget
    /// (hooks run on the calling thread, which passes a checkpoint between
    /// waves of tasks).
    pub(crate) fn for_task(&self) -> ExecCtx {
        ExecCtx {
            determinism: self.determinism,
            simd_base: self.simd_base,
            max_loop_iterations: None,
            loop_taken: AtomicU64::new(0),
            max_steps: None,
            steps_taken: AtomicU64::new(0),
            max_buffer_bytes: self.max_buffer_bytes,
            max_run_bytes: self.max_run_bytes,
            cancel: self.cancel.clone(),
            deadline: self.deadline,
            poll: None,
            ticks: AtomicU64::new(0),
            born: self.born,
            last_poll: AtomicU64::new(0),
            unread: AtomicU64::new(0),
            clock_skip: AtomicU64::new(0),
            last_read: AtomicU64::new(0),
            partitions: NonZeroUsize::new(1),
        }
    }

    /// This context with no poll hook (not even the default one).
    #[must_use]
    pub fn without_poll(mut self) -> ExecCtx {
        self.poll = None;
        self
    }

    /// Whether a checkpoint can stop this run (a cancel token, deadline or
    /// poll hook is set): long kernels then split their work and pass
    /// checkpoints between the parts.
    pub fn is_interruptible(&self) -> bool {
        self.cancel.is_some() || self.deadline.is_some() || self.poll.is_some()
    }

    /// The instant the run must be done by, if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// This context stopping with [`Error::DeadlineExceeded`] once
    /// `timeout` has passed from now (a timeout too long to represent
    /// sets no deadline).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> ExecCtx {
        self.deadline = Instant::now().checked_add(timeout);
        self
    }

    /// How many parts parallel work splits into, at most `cap` (at least 1).
    pub fn partitions(&self, cap: usize) -> usize {
        self.partitions
            .map_or_else(super::pool::current_num_threads, NonZeroUsize::get)
            .clamp(1, cap.max(1))
    }

    /// The partition count set with [`ExecCtx::with_partitions`].
    pub fn fixed_partitions(&self) -> Option<usize> {
        self.partitions.map(NonZeroUsize::get)
    }

    /// Runs `f` on this thread with the SIMD loops at this context's level
    /// (the one place the SIMD thread-local is set from a context).
    /// When the thread already runs at that level (a nested evaluation, or
    /// an eager call in the default mode) nothing is swapped.
    /// A run with a live-memory budget also sets it for this thread
    /// ([`crate::array::live::with_run_cap`]).
    #[inline]
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        match self.max_run_bytes {
            None => self.enter_simd(f),
            Some((base, limit)) => {
                crate::array::live::with_run_cap(base, limit, || self.enter_simd(f))
            }
        }
    }

    #[inline]
    fn enter_simd<R>(&self, f: impl FnOnce() -> R) -> R {
        let level = self.simd_level();
        if vmath::forced_simd_level() == Some(level) {
            f()
        } else {
            vmath::with_simd_level(level, f)
        }
    }

    /// Takes one loop iteration (a `while` body or a `scan` step) from the run's budget (an
    /// [`Error::Limit`] once it is spent), then passes a checkpoint.
    #[inline]
    pub fn take_loop_iteration(&self) -> Result<()> {
        if !take_one(&self.loop_taken, self.max_loop_iterations) {
            return Err(loop_limit_error());
        }
        self.checkpoint()
    }

    /// Takes one step (an equation or plan step about to run) from the
    /// run's step budget (an [`Error::Limit`] once it is spent), then
    /// passes a checkpoint.
    #[inline]
    pub fn take_step(&self) -> Result<()> {
        self.take_quiet_step()?;
        self.checkpoint()
    }

    /// [`ExecCtx::take_step`] without its checkpoint: the step budget and
    /// the run's memory limit only, for a step small enough that the next
    /// checkpoint comes soon (a compiled plan's small kernel steps).
    #[inline]
    pub fn take_quiet_step(&self) -> Result<()> {
        if !take_one(&self.steps_taken, self.max_steps) {
            return Err(self.step_limit_error());
        }
        if let Some((base, limit)) = self.max_run_bytes {
            crate::array::live::check_run("plan step", base, limit)?;
        }
        Ok(())
    }

    fn step_limit_error(&self) -> Error {
        let max = self.max_steps.unwrap_or(u64::MAX);
        Error::Limit(format!(
            "the run takes more than {max} steps (equations executed, loop iterations \
             included), the program's limit"
        ))
    }

    /// Refuses up front a loop of `n` iterations (a `scan` of static
    /// length) that the run's remaining budget cannot hold: the error
    /// [`ExecCtx::take_loop_iteration`] would give at the first step past
    /// the budget, without running the steps before it.
    #[inline]
    pub fn check_loop_iterations_left(&self, n: usize) -> Result<()> {
        if let Some(max) = self.max_loop_iterations {
            let taken = self.loop_taken.load(Ordering::Relaxed);
            let wanted = u64::try_from(n).unwrap_or(u64::MAX);
            if taken.saturating_add(wanted) > max {
                return Err(loop_limit_error());
            }
        }
        Ok(())
    }

    /// A loop head, plan step or kernel chunk: [`Error::Cancelled`] once
    /// the run's token is set, [`Error::DeadlineExceeded`] once its
    /// deadline has passed; the poll hook's error when it returns one.
    #[inline]
    pub fn checkpoint(&self) -> Result<()> {
        if let Some(token) = &self.cancel {
            if token.is_cancelled() {
                return Err(Error::Cancelled);
            }
        }
        if self.deadline.is_none() && self.poll.is_none() {
            return Ok(());
        }
        self.timed_checkpoint()
    }

    /// The deadline and the poll hook of [`ExecCtx::checkpoint`] (one
    /// clock read serves both).
    fn timed_checkpoint(&self) -> Result<()> {
        let now = match (&self.deadline, &self.poll) {
            (None, Some((_, PollEvery::Ticks(_)))) => None,
            (None, Some((_, PollEvery::Interval(interval)))) => self.dense_clock(*interval),
            _ => Some(Instant::now()),
        };
        if let (Some(deadline), Some(now)) = (self.deadline, now) {
            if now >= deadline {
                return Err(Error::DeadlineExceeded);
            }
        }
        match &self.poll {
            None => Ok(()),
            Some((hook, PollEvery::Ticks(every))) => {
                let tick = self.ticks.fetch_add(1, Ordering::Relaxed);
                if tick.is_multiple_of(*every) {
                    hook()
                } else {
                    Ok(())
                }
            }
            Some((hook, PollEvery::Interval(interval))) => {
                let Some(now) = now else { return Ok(()) };
                let at = u64::try_from(now.saturating_duration_since(self.born).as_nanos())
                    .unwrap_or(u64::MAX);
                let last = self.last_poll.load(Ordering::Relaxed);
                let step = u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX);
                if at.saturating_sub(last) < step {
                    return Ok(());
                }
                self.last_poll.store(at, Ordering::Relaxed);
                hook()
            }
        }
    }
}

impl ExecCtx {
    /// The clock for an interval poll without a deadline, read at one
    /// checkpoint in `clock_skip + 1`: while the reads find checkpoints
    /// coming densely (the last `clock_skip + 1` of them within 1/64 of
    /// the interval, as in a loop of small steps) the skip doubles up to
    /// [`MAX_CLOCK_SKIP`]; a sparser gap resets it. So a hook is late by at
    /// most `MAX_CLOCK_SKIP` checkpoint gaps after checkpoints turn sparse.
    /// `None`: this checkpoint does not read the clock.
    fn dense_clock(&self, interval: Duration) -> Option<Instant> {
        let skip = self.clock_skip.load(Ordering::Relaxed);
        // A load and a store, not an atomic add: this runs at every
        // checkpoint of a loop (a locked add was ~4% of a 64x64 scan), and
        // a count lost to a concurrent checkpoint only delays the next
        // clock read by that checkpoint.
        let unread = self.unread.load(Ordering::Relaxed);
        if unread < skip {
            self.unread
                .store(unread.saturating_add(1), Ordering::Relaxed);
            return None;
        }
        self.unread.store(0, Ordering::Relaxed);
        let now = Instant::now();
        let at =
            u64::try_from(now.saturating_duration_since(self.born).as_nanos()).unwrap_or(u64::MAX);
        let gap = at.saturating_sub(self.last_read.swap(at, Ordering::Relaxed));
        let dense = u64::try_from(interval.as_nanos() / 64).unwrap_or(u64::MAX);
        let next = if gap < dense {
            skip.saturating_mul(2).saturating_add(1).min(MAX_CLOCK_SKIP)
        } else {
            0
        };
        self.clock_skip.store(next, Ordering::Relaxed);
        Some(now)
    }
}

/// The most checkpoints an interval poll lets pass without reading the
/// clock ([`ExecCtx::dense_clock`]).
const MAX_CLOCK_SKIP: u64 = 7;

/// Takes one unit from a run's budget counter: `false` once `max` units
/// are taken (`None`: unlimited, nothing counted). The counter stays at
/// `max` after that, so it never wraps on a run that goes on.
#[inline]
fn take_one(taken: &AtomicU64, max: Option<u64>) -> bool {
    let Some(max) = max else { return true };
    if taken.fetch_add(1, Ordering::Relaxed) >= max {
        taken.store(max, Ordering::Relaxed);
        return false;
    }
    true
}

fn loop_limit_error() -> Error {
    Error::Limit("loop iterations (while and scan) exceed the program's limit".into())
}
