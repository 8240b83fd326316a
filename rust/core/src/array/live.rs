//! Live memory: a counting global allocator and the live-byte budgets.
//!
//! [`CountingAlloc`] wraps the system allocator and keeps the bytes of every
//! allocation of the process that are live now, and the most that were live
//! at once ([`live_bytes`], [`peak_live_bytes`]). A program installs it as
//! its global allocator (the Python extension does; a Rust program opts in
//! with `#[global_allocator] static A: CountingAlloc = CountingAlloc;`).
//! Without it the live counts are `None` and only the per-buffer budget of
//! [`crate::array::budget`] applies.
//!
//! Two budgets bound live memory, kernel scratch and library workspaces
//! included, since the allocator sees every byte:
//! - the process budget ([`set_max_live_bytes`]; Python
//!   `config.update("microjax_max_live_bytes", n)`): no large allocation may
//!   bring the process's live bytes over it;
//! - a run's budget (`export::Limits::max_bytes`,
//!   [`crate::exec::ExecCtx::with_max_run_bytes`]): the live bytes a run adds
//!   to what was live when it started. Allocations on the run's own thread
//!   are refused before they are made; its worker threads' allocations are
//!   checked at the next plan step. Live bytes are the process's, so two
//!   runs at once each count the other's growth: the bound never
//!   under-counts.
//!
//! Refusal happens where a large buffer is made: the fallible helpers of
//! [`crate::array::alloc`] and the output check every kernel passes
//! ([`crate::array::budget::check_and_probe_avals_within`]) call [`admit`]
//! first. An allocation made infallibly elsewhere (small vectors) is
//! counted but never refused here: refusing it would abort the process.

use crate::error::{Error, Result};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Bytes live now (allocated through [`CountingAlloc`] and not freed).
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most bytes live at once since the last [`reset_peak_live_bytes`].
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// The process budget (0: none).
static MAX_LIVE: AtomicU64 = AtomicU64::new(0);

/// Requests from this many bytes on are checked by [`admit`] (smaller
/// ones are counted, never refused).
pub const ADMIT_MIN_BYTES: usize = 1 << 16;

thread_local! {
    /// The run this thread executes: (live bytes when it started, the most
    /// it may add).
    static RUN_CAP: Cell<Option<(usize, u64)>> = const { Cell::new(None) };
}

/// The system allocator, counting live bytes.
///
/// Each allocation, reallocation and release adds or subtracts its size
/// from one atomic counter (relaxed), and raises the peak when it grows.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc;

#[inline]
fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed).wrapping_add(by);
    if now > PEAK.load(Ordering::Relaxed) {
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

#[inline]
fn shrank(by: usize) {
    LIVE.fetch_sub(by, Ordering::Relaxed);
}

/// Blocks of at least this many bytes ask for transparent huge pages.
const HUGE_PAGE_MIN: usize = 4 << 20;

/// Asks the kernel to back a large block with transparent huge pages, as
/// NumPy does for arrays of 4 MiB or more (Linux, where THP is commonly in
/// `madvise` mode): a fresh 100 MB buffer then faults in about 50 huge pages
/// instead of 25,000 small ones, whose faults cost as much as writing it.
#[cfg(target_os = "linux")]
#[inline]
fn advise_huge_pages(p: *mut u8, size: usize) {
    const PAGE: usize = 4096;
    if size < HUGE_PAGE_MIN || p.is_null() {
        return;
    }
    let addr = p as usize;
    let start = addr.saturating_add(PAGE - 1) & !(PAGE - 1);
    let end = addr.saturating_add(size) & !(PAGE - 1);
    if end > start {
        // SAFETY: the page-aligned range lies inside the block just
        // allocated; `madvise` only changes how its pages are backed (an
        // unsupported kernel or page size makes it fail, which is ignored).
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end.wrapping_sub(start),
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
#[inline]
fn advise_huge_pages(_p: *mut u8, _size: usize) {}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are this allocator's; the counters
// are plain atomics touched only after a successful call (and before a
// release, whose size the caller's layout gives); large new blocks get
// paging advice only (`advise_huge_pages`).
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl's comment).
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
            advise_huge_pages(p, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
            advise_huge_pages(p, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            let old = layout.size();
            if new_size >= old {
                grew(new_size.wrapping_sub(old));
                advise_huge_pages(p, new_size);
            } else {
                shrank(old.wrapping_sub(new_size));
            }
        }
        p
    }
}

/// Whether [`CountingAlloc`] is the process's global allocator (it has
/// counted an allocation: a peak above zero).
pub fn installed() -> bool {
    PEAK.load(Ordering::Relaxed) > 0
}

/// Bytes live now (`None` without [`CountingAlloc`]).
pub fn live_bytes() -> Option<u64> {
    installed().then(|| u64::try_from(LIVE.load(Ordering::Relaxed)).unwrap_or(u64::MAX))
}

/// The most bytes live at once since the process started or the last
/// [`reset_peak_live_bytes`] (`None` without [`CountingAlloc`]).
pub fn peak_live_bytes() -> Option<u64> {
    installed().then(|| u64::try_from(PEAK.load(Ordering::Relaxed)).unwrap_or(u64::MAX))
}

/// Starts a new peak at the bytes live now.
pub fn reset_peak_live_bytes() {
    if installed() {
        PEAK.store(LIVE.load(Ordering::Relaxed).max(1), Ordering::Relaxed);
    }
}

/// The process budget of live bytes (`None`: none).
pub fn max_live_bytes() -> Option<u64> {
    match MAX_LIVE.load(Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}

/// Sets the process budget of live bytes (`None` removes it). Zero is an
/// `InvalidArgument` error.
pub fn set_max_live_bytes(bytes: Option<u64>) -> Result<()> {
    match bytes {
        Some(0) => Err(Error::InvalidArgument(
            "the live-memory budget must be a positive number of bytes".into(),
        )),
        Some(n) => {
            MAX_LIVE.store(n, Ordering::Relaxed);
            Ok(())
        }
        None => {
            MAX_LIVE.store(0, Ordering::Relaxed);
            Ok(())
        }
    }
}

fn over(what: &str, bytes: usize, live: usize, limit: u64, scope: &'static str) -> Error {
    Error::MemoryBudget {
        what: what.to_string(),
        bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
        live: u64::try_from(live).unwrap_or(u64::MAX),
        limit,
        scope,
    }
}

/// Checks that `bytes` more would fit the process budget and the budget of
/// the run this thread executes (an [`Error::MemoryBudget`] otherwise).
/// Free without [`CountingAlloc`] or without budgets, and for requests under
/// [`ADMIT_MIN_BYTES`].
#[inline]
pub fn admit(what: &str, bytes: usize) -> Result<()> {
    if bytes < ADMIT_MIN_BYTES {
        return Ok(());
    }
    admit_large(what, bytes)
}

fn admit_large(what: &str, bytes: usize) -> Result<()> {
    if !installed() {
        return Ok(());
    }
    match within_budgets(what, bytes) {
        // Buffers the host pool keeps for reuse are live too: free them and
        // look again before refusing.
        Err(_) if crate::array::pool::release_held() > 0 => within_budgets(what, bytes),
        r => r,
    }
}

fn within_budgets(what: &str, bytes: usize) -> Result<()> {
    let live = LIVE.load(Ordering::Relaxed);
    let after = u64::try_from(live.saturating_add(bytes)).unwrap_or(u64::MAX);
    if let Some(limit) = max_live_bytes() {
        if after > limit {
            return Err(over(what, bytes, live, limit, PROCESS_SCOPE));
        }
    }
    if let Some((base, limit)) = RUN_CAP.with(Cell::get) {
        let added =
            u64::try_from(live.saturating_add(bytes).saturating_sub(base)).unwrap_or(u64::MAX);
        if added > limit {
            return Err(over(
                what,
                bytes,
                live.saturating_sub(base),
                limit,
                RUN_SCOPE,
            ));
        }
    }
    Ok(())
}

/// The scope names [`Error::MemoryBudget`] reports.
pub const PROCESS_SCOPE: &str =
    "process live-memory budget (config option microjax_max_live_bytes)";
/// See [`PROCESS_SCOPE`].
pub const RUN_SCOPE: &str = "run's memory limit (Limits.max_bytes), counted from the run's start";

/// Checks that the run started at `base` live bytes has added at most
/// `limit` (the check at plan steps, which also sees what worker threads
/// allocated).
pub fn check_run(what: &str, base: usize, limit: u64) -> Result<()> {
    if !installed() {
        return Ok(());
    }
    let live = LIVE.load(Ordering::Relaxed);
    let added = u64::try_from(live.saturating_sub(base)).unwrap_or(u64::MAX);
    if added > limit {
        return Err(over(what, 0, live.saturating_sub(base), limit, RUN_SCOPE));
    }
    Ok(())
}

/// Bytes live now as the run-budget base (0 without [`CountingAlloc`]).
pub fn live_base() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Runs `f` with this thread's run budget set to `limit` bytes above
/// `base` (the tighter one when a run is already set), restoring the
/// previous budget afterwards.
pub fn with_run_cap<R>(base: usize, limit: u64, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<(usize, u64)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            RUN_CAP.with(|c| c.set(self.0));
        }
    }
    let previous = RUN_CAP.with(Cell::get);
    let cap = match previous {
        Some((b, l))
            if b.saturating_add(usize::try_from(l).unwrap_or(usize::MAX))
                <= base.saturating_add(usize::try_from(limit).unwrap_or(usize::MAX)) =>
        {
            (b, l)
        }
        _ => (base, limit),
    };
    RUN_CAP.with(|c| c.set(Some(cap)));
    let _restore = Restore(previous);
    f()
}
