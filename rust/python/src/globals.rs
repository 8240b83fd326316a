//! Process-wide state the fast paths read: the trace-active counter, the x64
//! flag, the config epoch and the Python hooks the slow paths call.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::RwLock;

static TRACE_DEPTH: AtomicUsize = AtomicUsize::new(0);
static X64: AtomicBool = AtomicBool::new(false);
static EPOCH: AtomicU64 = AtomicU64::new(0);
/// `jax_debug_nans` / `jax_debug_infs` is on: every eager result and every
/// program's outputs are checked in Python (`_nan_checks.py`).
static DEBUG_CHECKS: AtomicBool = AtomicBool::new(false);

/// Whether the eager fast paths may serve a call: no trace is active and no
/// debug checks are requested (those run on the Python paths).
#[inline]
pub(crate) fn fast_eager() -> bool {
    TRACE_DEPTH.load(Ordering::Relaxed) == 0 && !DEBUG_CHECKS.load(Ordering::Relaxed)
}

/// Sends every eager call and program run through the Python paths, which
/// check results for NaN/Inf (`jax_debug_nans` / `jax_debug_infs`).
#[pyfunction]
pub(crate) fn set_debug_checks(enabled: bool) {
    DEBUG_CHECKS.store(enabled, Ordering::SeqCst);
}

#[inline]
pub(crate) fn x64() -> bool {
    X64.load(Ordering::Relaxed)
}

#[inline]
pub(crate) fn epoch() -> u64 {
    EPOCH.load(Ordering::Relaxed)
}

/// Marks a trace as active: the eager fast paths step aside until the
/// matching `trace_exit`. `trace`: the trace entered; a `TraceBase` marked
/// native stages float arithmetic in Rust while it is the innermost trace
/// (see `tracer.rs`).
#[pyfunction]
#[pyo3(signature = (trace = None))]
pub(crate) fn trace_enter(trace: Option<&Bound<'_, PyAny>>) -> usize {
    crate::tracer::push_context(trace);
    TRACE_DEPTH.fetch_add(1, Ordering::SeqCst).saturating_add(1)
}

/// Ends one `trace_enter`; never goes below zero.
#[pyfunction]
pub(crate) fn trace_exit() -> usize {
    drop(crate::tracer::pop_context());
    let prev = TRACE_DEPTH
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |d| {
            Some(d.saturating_sub(1))
        })
        .unwrap_or(0);
    prev.saturating_sub(1)
}

#[pyfunction]
pub(crate) fn trace_depth() -> usize {
    TRACE_DEPTH.load(Ordering::SeqCst)
}

/// Turns 64-bit mode on or off; bumps the config epoch when it changes.
#[pyfunction]
pub(crate) fn set_x64(enabled: bool) {
    let prev = X64.swap(enabled, Ordering::SeqCst);
    if prev != enabled {
        EPOCH.fetch_add(1, Ordering::SeqCst);
    }
}

#[pyfunction]
pub(crate) fn get_x64() -> bool {
    x64()
}

/// Sets the per-buffer allocation budget in bytes (`None`: the default,
/// the machine's physical memory).
#[pyfunction]
#[pyo3(signature = (nbytes=None))]
pub(crate) fn set_max_buffer_bytes(nbytes: Option<u64>) -> PyResult<()> {
    use crate::CoreResultExt;
    microjax::array::budget::set_max_buffer_bytes(nbytes).py()
}

/// The per-buffer allocation budget in bytes now in force.
#[pyfunction]
pub(crate) fn get_max_buffer_bytes() -> u64 {
    microjax::array::budget::max_buffer_bytes()
}

#[pyfunction]
pub(crate) fn config_epoch() -> u64 {
    epoch()
}

/// Invalidates every epoch-keyed cache (jit caches) after a config change
/// Rust does not see (default device, PRNG impl, ...). Returns the new epoch.
#[pyfunction]
pub(crate) fn bump_epoch() -> u64 {
    EPOCH.fetch_add(1, Ordering::SeqCst).wrapping_add(1)
}

/// The Python callables the slow paths delegate to.
#[derive(Default)]
struct Hooks {
    binary: Option<Py<PyAny>>,
    unary: Option<Py<PyAny>>,
    getitem: Option<Py<PyAny>>,
    iter: Option<Py<PyAny>>,
    getattr: Option<Py<PyAny>>,
    repr: Option<Py<PyAny>>,
    str: Option<Py<PyAny>>,
    format: Option<Py<PyAny>>,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Hook {
    Binary,
    Unary,
    GetItem,
    Iter,
    GetAttr,
    Repr,
    Str,
    Format,
}

impl Hook {
    fn from_key(key: &str) -> Option<Hook> {
        HOOK_KEYS.iter().find(|(k, _)| *k == key).map(|(_, h)| *h)
    }
}

impl Hooks {
    fn slot(&mut self, h: Hook) -> &mut Option<Py<PyAny>> {
        match h {
            Hook::Binary => &mut self.binary,
            Hook::Unary => &mut self.unary,
            Hook::GetItem => &mut self.getitem,
            Hook::Iter => &mut self.iter,
            Hook::GetAttr => &mut self.getattr,
            Hook::Repr => &mut self.repr,
            Hook::Str => &mut self.str,
            Hook::Format => &mut self.format,
        }
    }

    fn get(&self, h: Hook) -> Option<&Py<PyAny>> {
        match h {
            Hook::Binary => self.binary.as_ref(),
            Hook::Unary => self.unary.as_ref(),
            Hook::GetItem => self.getitem.as_ref(),
            Hook::Iter => self.iter.as_ref(),
            Hook::GetAttr => self.getattr.as_ref(),
            Hook::Repr => self.repr.as_ref(),
            Hook::Str => self.str.as_ref(),
            Hook::Format => self.format.as_ref(),
        }
    }
}

static HOOKS: RwLock<Hooks> = RwLock::new(Hooks {
    binary: None,
    unary: None,
    getitem: None,
    iter: None,
    getattr: None,
    repr: None,
    str: None,
    format: None,
});

/// The hooks' lock if no one holds it now (`crate::fork`).
pub(crate) fn try_hold() -> Option<Box<dyn std::any::Any>> {
    crate::fork::try_write(&HOOKS)
}

/// The hook registered under `h`, if any.
pub(crate) fn hook<'py>(py: Python<'py>, h: Hook) -> Option<Bound<'py, PyAny>> {
    let guard = HOOKS.read().ok()?;
    guard.get(h).map(|f| f.bind(py).clone())
}

const HOOK_KEYS: [(&str, Hook); 8] = [
    ("binary", Hook::Binary),
    ("unary", Hook::Unary),
    ("getitem", Hook::GetItem),
    ("iter", Hook::Iter),
    ("getattr", Hook::GetAttr),
    ("repr", Hook::Repr),
    ("str", Hook::Str),
    ("format", Hook::Format),
];

/// The registered hooks as a dict (key → callable or None), so tests and
/// tools can save and restore them.
#[pyfunction]
pub(crate) fn get_hooks(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (k, h) in HOOK_KEYS {
        d.set_item(k, hook(py, h))?;
    }
    Ok(d)
}

/// Registers the Python hooks: a dict from key (`binary`, `unary`, `getitem`,
/// `iter`, `getattr`, `repr`, `str`, `format`) to a callable, or None to
/// clear it. Keys not given keep their current hook.
#[pyfunction]
pub(crate) fn set_hooks(hooks: &Bound<'_, PyDict>) -> PyResult<()> {
    let mut updates: Vec<(Hook, Option<Py<PyAny>>)> = Vec::with_capacity(hooks.len());
    for (k, v) in hooks.iter() {
        let key = k.cast::<PyString>()?.to_cow()?;
        let h = Hook::from_key(&key)
            .ok_or_else(|| PyValueError::new_err(format!("unknown hook {key:?}")))?;
        if v.is_none() {
            updates.push((h, None));
        } else if v.is_callable() {
            updates.push((h, Some(v.unbind())));
        } else {
            return Err(PyTypeError::new_err(format!(
                "hook {key:?} must be callable or None"
            )));
        }
    }
    // Old callables are dropped after the lock is released: a decref may run
    // arbitrary Python code that reads the hooks.
    let mut old: Vec<Option<Py<PyAny>>> = Vec::with_capacity(updates.len());
    {
        let mut guard = HOOKS
            .write()
            .map_err(|_| PyValueError::new_err("hook table poisoned"))?;
        for (h, f) in updates {
            old.push(std::mem::replace(guard.slot(h), f));
        }
    }
    drop(old);
    Ok(())
}
