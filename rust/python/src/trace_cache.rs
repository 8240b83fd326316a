//! `jit`'s trace cache: one process-wide store of the traces of jitted
//! functions, bounded and least-recently-used first out.
//!
//! An entry is one trace of one *owner* for one call signature. The owner
//! is a token `python/microjax_rs/_trace_cache.py` hands out per wrapped
//! function (held weakly there) and `jit` options, so fresh `jit(f)`
//! wrappers of one `f` share their entries, and the entries go when `f`
//! does; a `JitFunction` whose function cannot be held weakly makes a
//! private token whose entries go with it.
//!
//! An entry is reached two ways, and both count as a use:
//! * by the Python path, through a Python-side index (owner, Python key) →
//!   entry id that keeps the traced program; this store holds the Python key
//!   only to hand it back when the entry is evicted, so the index forgets it;
//! * by `JitFunction`'s fast path, through a *fast key* `[owner, config
//!   epoch, per argument dtype | weak | ndim, dims...]`, once the Python
//!   path has attached the compiled plan and output arrangement
//!   ([`FastEntry`]) to the entry.
//!
//! At most `capacity` entries are kept ([`DEFAULT_CAPACITY`]); past it the
//! least recently used are evicted. Capacity 0 keeps nothing.
//!
//! Nothing here runs Python code while the lock is held: removed entries
//! are handed back to the caller and dropped after the lock is released
//! (dropping a Python object may run arbitrary code, including `jit`).

use crate::jit::FastEntry;
use microjax::ir::hash::FastHasher;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex, MutexGuard};

/// Entries kept by default (JAX bounds its tracing caches at 4096 too).
pub(crate) const DEFAULT_CAPACITY: usize = 4096;

/// `[owner, epoch, per argument dtype | weak << 8 | ndim << 16, dims...]`.
pub(crate) type FastKey = Vec<u64>;

type Build = BuildHasherDefault<FastHasher>;

/// One trace.
struct Slot {
    owner: u64,
    /// The Python path's key (None: an entry only the fast path reaches).
    key: Option<Py<PyAny>>,
    /// The fast key attached, if any.
    fast: Option<FastKey>,
    last_used: u64,
}

/// The fast path's view of an entry.
struct FastSlot {
    id: u64,
    entry: Arc<FastEntry>,
    /// Kept here rather than on the slot so a hit costs one lookup.
    last_used: u64,
}

/// What an update took out of the store (an entry, or a fast slot detached
/// from one), dropped by the caller after the lock is released.
pub(crate) struct Removed {
    owner: u64,
    id: u64,
    key: Option<Py<PyAny>>,
    _fast: Option<Arc<FastEntry>>,
}

struct Store {
    capacity: usize,
    clock: u64,
    next_id: u64,
    next_owner: u64,
    evictions: u64,
    slots: HashMap<u64, Slot, Build>,
    fast: HashMap<FastKey, FastSlot, Build>,
}

static STORE: Mutex<Store> = Mutex::new(Store {
    capacity: DEFAULT_CAPACITY,
    clock: 0,
    next_id: 0,
    next_owner: 0,
    evictions: 0,
    slots: HashMap::with_hasher(BuildHasherDefault::new()),
    fast: HashMap::with_hasher(BuildHasherDefault::new()),
});

/// The store's lock if it is free now (`crate::fork`).
pub(crate) fn try_hold() -> Option<Box<dyn std::any::Any>> {
    crate::fork::try_lock(&STORE)
}

fn lock() -> MutexGuard<'static, Store> {
    // Every update leaves the maps consistent before it can fail, so a
    // poisoned lock holds a usable store.
    STORE.lock().unwrap_or_else(|p| p.into_inner())
}

impl Store {
    /// Inserts a new slot of `owner` (a Python key or a fast-path key),
    /// last used at `now`; returns its id.
    fn insert_slot(
        &mut self, owner: u64, (key, fast): (Option<Py<PyAny>>, Option<FastKey>), now: u64,
    ) -> u64 {
        self.next_id = self.next_id.wrapping_add(1);
        let id = self.next_id;
        self.slots.insert(
            id,
            Slot {
                owner,
                key,
                fast,
                last_used: now,
            },
        );
        id
    }

    fn tick(&mut self) -> u64 {
        self.clock = self.clock.wrapping_add(1);
        self.clock
    }

    fn recency(&self, slot: &Slot) -> u64 {
        let fast = slot
            .fast
            .as_ref()
            .and_then(|k| self.fast.get(k))
            .map_or(0, |f| f.last_used);
        slot.last_used.max(fast)
    }

    fn remove(&mut self, id: u64) -> Option<Removed> {
        let slot = self.slots.remove(&id)?;
        let fast = match &slot.fast {
            Some(k) if self.fast.get(k).is_some_and(|f| f.id == id) => {
                self.fast.remove(k).map(|f| f.entry)
            }
            _ => None,
        };
        Some(Removed {
            owner: slot.owner,
            id,
            key: slot.key,
            _fast: fast,
        })
    }

    /// Evicts least recently used entries until at most `capacity` remain.
    fn evict_to(&mut self, capacity: usize, out: &mut Vec<Removed>) {
        let excess = self.slots.len().saturating_sub(capacity);
        if excess == 0 {
            return;
        }
        let mut order: Vec<(u64, u64)> = self
            .slots
            .iter()
            .map(|(&id, s)| (self.recency(s), id))
            .collect();
        if excess < order.len() {
            order.select_nth_unstable(excess);
        }
        for &(_, id) in order.iter().take(excess) {
            if let Some(r) = self.remove(id) {
                self.evictions = self.evictions.saturating_add(1);
                out.push(r);
            }
        }
    }

    fn remove_owner(&mut self, owner: u64) -> Vec<Removed> {
        let ids: Vec<u64> = self
            .slots
            .iter()
            .filter(|(_, s)| s.owner == owner)
            .map(|(&id, _)| id)
            .collect();
        ids.into_iter().filter_map(|id| self.remove(id)).collect()
    }
}

/// A fresh owner token.
pub(crate) fn new_owner() -> u64 {
    let mut s = lock();
    s.next_owner = s.next_owner.wrapping_add(1);
    s.next_owner
}

/// The fast path's lookup: the entry under `key`, marked used.
#[inline]
pub(crate) fn fast_hit(key: &[u64]) -> Option<Arc<FastEntry>> {
    let mut s = lock();
    let now = s.tick();
    let f = s.fast.get_mut(key)?;
    f.last_used = now;
    Some(f.entry.clone())
}

/// Attaches `entry` under fast key `key` (whose first word is the owner)
/// to the entry `id`, or, with no `id`, to an entry only the fast path
/// reaches (one already under `key` is updated in place). A fast key names
/// one entry: attaching it elsewhere detaches it from the previous one.
/// Does nothing when entry `id` is gone or belongs to another owner.
pub(crate) fn attach_fast(id: Option<u64>, key: FastKey, entry: Arc<FastEntry>) -> Vec<Removed> {
    let owner = key.first().copied().unwrap_or(0);
    let mut removed = Vec::new();
    let mut s = lock();
    let now = s.tick();
    let id = match id {
        Some(id) => {
            match s.slots.get_mut(&id) {
                Some(slot) if slot.owner == owner => {
                    if let Some(old) = slot.fast.replace(key.clone()) {
                        if old != key && s.fast.get(&old).is_some_and(|f| f.id == id) {
                            removed.extend(s.fast.remove(&old).map(|f| Removed {
                                owner,
                                id,
                                key: None,
                                _fast: Some(f.entry),
                            }));
                        }
                    }
                }
                _ => return removed,
            }
            id
        }
        None => {
            if let Some(f) = s.fast.get_mut(&key) {
                let old = std::mem::replace(&mut f.entry, entry);
                f.last_used = now;
                drop(s);
                drop(old);
                return removed;
            }
            s.insert_slot(owner, (None, Some(key.clone())), now)
        }
    };
    let prev = s.fast.insert(
        key,
        FastSlot {
            id,
            entry,
            last_used: now,
        },
    );
    if let Some(prev) = prev {
        if prev.id != id {
            // The key moves to `id`: the entry that had it loses it (and
            // goes, when the fast path was its only way in).
            let fast_only = match s.slots.get_mut(&prev.id) {
                Some(slot) => {
                    slot.fast = None;
                    slot.key.is_none()
                }
                None => false,
            };
            if fast_only {
                removed.extend(s.remove(prev.id));
            }
        }
        drop(s);
        drop(prev);
        return removed;
    }
    let cap = s.capacity;
    s.evict_to(cap, &mut removed);
    removed
}

/// Fast-path entries of `owner`.
pub(crate) fn owner_fast_len(owner: u64) -> usize {
    lock()
        .fast
        .keys()
        .filter(|k| k.first() == Some(&owner))
        .count()
}

/// Takes every entry of `owner` out.
pub(crate) fn remove_owner(owner: u64) -> Vec<Removed> {
    lock().remove_owner(owner)
}

/// `(owner, key, id)` of the removed entries the Python index knows.
fn evicted_list<'py>(py: Python<'py>, removed: Vec<Removed>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for r in &removed {
        if let Some(k) = &r.key {
            out.append(PyTuple::new(
                py,
                [
                    r.owner.into_pyobject(py)?.into_any(),
                    k.bind(py).clone(),
                    r.id.into_pyobject(py)?.into_any(),
                ],
            )?)?;
        }
    }
    Ok(out)
}

/// A fresh owner token (`_trace_cache.py` makes one per function and
/// options).
#[pyfunction]
fn trace_cache_new_owner() -> u64 {
    new_owner()
}

/// Adds an entry of `owner` under the Python key `key`; returns its id and
/// the `(owner, key, id)` of the entries evicted to make room (the new one
/// among them when the capacity is 0).
#[pyfunction]
fn trace_cache_add<'py>(
    py: Python<'py>, owner: u64, key: Py<PyAny>,
) -> PyResult<(u64, Bound<'py, PyList>)> {
    let mut removed = Vec::new();
    let id = {
        let mut s = lock();
        let now = s.tick();
        let id = s.insert_slot(owner, (Some(key), None), now);
        let cap = s.capacity;
        s.evict_to(cap, &mut removed);
        id
    };
    Ok((id, evicted_list(py, removed)?))
}

/// Marks entry `id` used; false when it is gone.
#[pyfunction]
fn trace_cache_touch(id: u64) -> bool {
    let mut s = lock();
    let now = s.tick();
    match s.slots.get_mut(&id) {
        Some(slot) => {
            slot.last_used = now;
            true
        }
        None => false,
    }
}

/// Drops every entry of `owner` (its function was garbage-collected).
#[pyfunction]
fn trace_cache_drop_owner(owner: u64) {
    drop(remove_owner(owner));
}

/// Drops every entry.
#[pyfunction]
fn trace_cache_clear() {
    let (slots, fast) = {
        let mut s = lock();
        (std::mem::take(&mut s.slots), std::mem::take(&mut s.fast))
    };
    drop((slots, fast));
}

/// Sets the capacity in entries; returns the `(owner, key, id)` of the
/// entries evicted to fit it.
#[pyfunction]
fn trace_cache_set_capacity(py: Python<'_>, entries: usize) -> PyResult<Bound<'_, PyList>> {
    let mut removed = Vec::new();
    {
        let mut s = lock();
        s.capacity = entries;
        s.evict_to(entries, &mut removed);
    }
    evicted_list(py, removed)
}

/// `entries`, `fast_entries`, `capacity`, `evictions` (since start).
#[pyfunction]
fn trace_cache_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let (entries, fast, capacity, evictions) = {
        let s = lock();
        (s.slots.len(), s.fast.len(), s.capacity, s.evictions)
    };
    let d = PyDict::new(py);
    d.set_item("entries", entries)?;
    d.set_item("fast_entries", fast)?;
    d.set_item("capacity", capacity)?;
    d.set_item("evictions", evictions)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m; trace_cache_new_owner, trace_cache_add, trace_cache_touch,
        trace_cache_drop_owner, trace_cache_clear, trace_cache_set_capacity, trace_cache_stats);
    Ok(())
}
