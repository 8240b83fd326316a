//! The structural compile cache for programs run outside `jit` (the
//! un-jitted transforms run their transformed programs through it).
//!
//! Key: the program's structural hash ([`crate::ir::hash::structural_hash`];
//! callers lift float literals first, so programs differing only in literal
//! values are one program fed different arguments), the argument shapes
//! and dtypes, and a config epoch the caller passes in. A hash hit is
//! confirmed by `==` on the programs (pointer equality first: the transform
//! caches hand the same `Arc` back call after call, so a hit usually costs
//! no hashing at all).
//!
//! Tiered: the first sighting of a key runs on the reference interpreter
//! (building a plan costs more than one interpreted run of most programs
//! seen once); the second builds the [`Compiled`] plan and every later run
//! uses it. A plan that fails to build (a primitive the plan cannot run)
//! leaves the entry on the interpreter for good. Bounded: at most
//! `capacity` entries, the least recently used evicted first; capacity 0
//! turns the cache off (every run interpreted, nothing kept).

use super::compiled::Compiled;
use super::interp;
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::Result;
use crate::ir::ClosedJaxpr;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Entries kept by default.
pub const DEFAULT_CAPACITY: usize = 512;

/// Counters the tests and the debug API read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Runs whose key was found.
    pub hits: u64,
    /// Runs whose key was new (an entry was inserted).
    pub misses: u64,
    /// Plans built.
    pub compiles: u64,
    /// Plans that failed to build (the entry stays interpreted).
    pub compile_failures: u64,
    /// Entries dropped to stay within the capacity.
    pub evictions: u64,
    /// Runs on the reference interpreter / on a compiled plan.
    pub interpreted_runs: u64,
    pub compiled_runs: u64,
    /// Entries held now.
    pub entries: usize,
}

/// What an entry runs on.
#[derive(Debug, Clone)]
enum Tier {
    /// Seen once: the next sighting compiles.
    Seen,
    Compiled(Arc<Compiled>),
    /// The plan could not be built: interpret.
    Interpret,
}

#[derive(Debug)]
struct Entry {
    prog: Arc<ClosedJaxpr>,
    sig: Vec<(Vec<usize>, DType)>,
    epoch: u64,
    tier: Tier,
    last_used: u64,
}

#[derive(Debug)]
struct State {
    capacity: usize,
    clock: u64,
    /// Structural hash → the entries with that hash (several only on a
    /// collision or for other signatures/epochs).
    buckets: HashMap<u64, Vec<Entry>>,
    /// Address of a program an entry holds → its structural hash (valid
    /// while some entry holds that `Arc`, which keeps the address taken).
    by_ptr: HashMap<usize, u64>,
    stats: CacheStats,
}

/// The cache (see the module docs). Thread-safe: the lock is held for
/// lookups and bookkeeping only, never while compiling or running.
#[derive(Debug)]
pub struct CompileCache {
    state: Mutex<State>,
}

/// What a lookup decided.
enum Action {
    Interpret,
    Compile,
    Run(Arc<Compiled>),
}

impl Default for CompileCache {
    fn default() -> CompileCache {
        CompileCache::new(DEFAULT_CAPACITY)
    }
}

impl CompileCache {
    /// An empty cache of `capacity` entries (0: off).
    pub fn new(capacity: usize) -> CompileCache {
        CompileCache {
            state: Mutex::new(State {
                capacity,
                clock: 0,
                buckets: HashMap::new(),
                by_ptr: HashMap::new(),
                stats: CacheStats::default(),
            }),
        }
    }

    /// The cache's lock if it is free now ([`super::fork`]).
    pub fn try_hold(&'static self) -> Option<impl Sized + 'static> {
        super::fork::try_guard(&self.state)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the maps inconsistent
        // in a way that matters for correctness (entries are self-checked).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The counters now.
    pub fn stats(&self) -> CacheStats {
        let s = self.lock();
        CacheStats {
            entries: s.len(),
            ..s.stats
        }
    }

    /// The capacity in entries.
    pub fn capacity(&self) -> usize {
        self.lock().capacity
    }

    /// Sets the capacity, evicting least recently used entries beyond it.
    pub fn set_capacity(&self, capacity: usize) {
        let mut s = self.lock();
        s.capacity = capacity;
        s.evict_to(capacity);
    }

    /// Drops every entry and zeroes the counters.
    pub fn clear(&self) {
        let mut s = self.lock();
        s.buckets.clear();
        s.by_ptr.clear();
        s.stats = CacheStats::default();
    }

    /// Runs `prog` on `args` under config `epoch`: interpreted on the
    /// first sighting, compiled from the second (module docs).
    pub fn run(
        &self, prog: &Arc<ClosedJaxpr>, args: &[Arc<HostArray>], epoch: u64,
    ) -> Result<Vec<Arc<HostArray>>> {
        let sig: Vec<(Vec<usize>, DType)> = args
            .iter()
            .map(|a| (a.shape().to_vec(), a.dtype()))
            .collect();
        match self.lookup(prog, sig.clone(), epoch) {
            Action::Interpret => {
                bump(&mut self.lock().stats.interpreted_runs);
                interp::eval_closed(prog, args)
            }
            Action::Run(plan) => {
                bump(&mut self.lock().stats.compiled_runs);
                plan.run(args)
            }
            Action::Compile => match Compiled::new(prog.clone()) {
                Ok(plan) => {
                    let plan = Arc::new(plan);
                    {
                        let mut s = self.lock();
                        bump(&mut s.stats.compiles);
                        bump(&mut s.stats.compiled_runs);
                        s.set_tier(prog, &sig, epoch, Tier::Compiled(plan.clone()));
                    }
                    plan.run(args)
                }
                Err(_) => {
                    {
                        let mut s = self.lock();
                        bump(&mut s.stats.compile_failures);
                        bump(&mut s.stats.interpreted_runs);
                        s.set_tier(prog, &sig, epoch, Tier::Interpret);
                    }
                    interp::eval_closed(prog, args)
                }
            },
        }
    }

    /// The plan for `prog` under `epoch` with arguments of shapes and
    /// dtypes `sig`, built now if its entry has none (`jit` compiles when
    /// it caches a signature), and kept for later runs: fresh `jit`
    /// wrappers of one function share it.
    pub fn plan(
        &self, prog: &Arc<ClosedJaxpr>, sig: Vec<(Vec<usize>, DType)>, epoch: u64,
    ) -> Result<Arc<Compiled>> {
        if let Action::Run(plan) = self.lookup(prog, sig.clone(), epoch) {
            return Ok(plan);
        }
        let built = Compiled::new(prog.clone()).map(Arc::new);
        let mut s = self.lock();
        match &built {
            Ok(plan) => {
                bump(&mut s.stats.compiles);
                s.set_tier(prog, &sig, epoch, Tier::Compiled(plan.clone()));
            }
            Err(_) => {
                bump(&mut s.stats.compile_failures);
                s.set_tier(prog, &sig, epoch, Tier::Interpret);
            }
        }
        built
    }

    /// Finds (or inserts) the entry and says how to run it.
    fn lookup(&self, prog: &Arc<ClosedJaxpr>, sig: Vec<(Vec<usize>, DType)>, epoch: u64) -> Action {
        let mut s = self.lock();
        if s.capacity == 0 {
            return Action::Interpret;
        }
        let ptr = Arc::as_ptr(prog) as usize;
        let hash = match s.by_ptr.get(&ptr) {
            Some(h) => *h,
            None => crate::ir::hash::structural_hash(prog),
        };
        s.clock = s.clock.wrapping_add(1);
        let now = s.clock;
        let found = s.buckets.get_mut(&hash).and_then(|b| {
            b.iter_mut().find(|e| {
                e.epoch == epoch && e.sig == sig && (Arc::ptr_eq(&e.prog, prog) || e.prog == *prog)
            })
        });
        if let Some(e) = found {
            e.last_used = now;
            let action = match &e.tier {
                Tier::Seen => {
                    // Mark it so a concurrent sighting does not compile
                    // it too; `run` stores the plan (or the failure).
                    e.tier = Tier::Interpret;
                    Action::Compile
                }
                Tier::Compiled(p) => Action::Run(p.clone()),
                Tier::Interpret => Action::Interpret,
            };
            bump(&mut s.stats.hits);
            return action;
        }
        bump(&mut s.stats.misses);
        let cap = s.capacity;
        s.evict_to(cap.saturating_sub(1));
        s.by_ptr.insert(ptr, hash);
        s.buckets.entry(hash).or_default().push(Entry {
            prog: prog.clone(),
            sig,
            epoch,
            tier: Tier::Seen,
            last_used: now,
        });
        Action::Interpret
    }
}

impl State {
    fn len(&self) -> usize {
        self.buckets.values().map(Vec::len).sum()
    }

    /// Records what an entry runs on from now (if it is still held).
    fn set_tier(
        &mut self, prog: &Arc<ClosedJaxpr>, sig: &[(Vec<usize>, DType)], epoch: u64, tier: Tier,
    ) {
        let entry =
            self.buckets.values_mut().flatten().find(|e| {
                e.epoch == epoch && e.sig.as_slice() == sig && Arc::ptr_eq(&e.prog, prog)
            });
        if let Some(e) = entry {
            e.tier = tier;
        }
    }

    /// Evicts least recently used entries until at most `keep` remain.
    fn evict_to(&mut self, keep: usize) {
        while self.len() > keep {
            let oldest = self
                .buckets
                .iter()
                .flat_map(|(h, b)| b.iter().enumerate().map(move |(i, e)| (e.last_used, *h, i)))
                .min();
            let Some((_, hash, index)) = oldest else {
                return;
            };
            self.remove(hash, index);
            bump(&mut self.stats.evictions);
        }
    }

    fn remove(&mut self, hash: u64, index: usize) {
        let Some(bucket) = self.buckets.get_mut(&hash) else {
            return;
        };
        if index >= bucket.len() {
            return;
        }
        let gone = bucket.swap_remove(index);
        let still_held = bucket.iter().any(|e| Arc::ptr_eq(&e.prog, &gone.prog));
        if bucket.is_empty() {
            self.buckets.remove(&hash);
        }
        if !still_held {
            self.by_ptr.remove(&(Arc::as_ptr(&gone.prog) as usize));
        }
    }
}

fn bump(counter: &mut u64) {
    *counter = counter.saturating_add(1);
}

/// The process-wide cache the binding runs un-jitted programs through.
pub fn global() -> &'static CompileCache {
    static CACHE: OnceLock<CompileCache> = OnceLock::new();
    CACHE.get_or_init(CompileCache::default)
}
