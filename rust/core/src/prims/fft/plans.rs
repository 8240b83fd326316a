//! The process-wide cache of FFT plans: one per element type, length and
//! kind (forward/inverse complex, real-to-complex, complex-to-real), shared
//! by every thread.
//!
//! A plan (rustfft's `Arc<dyn Fft>`, realfft's `Arc<dyn RealToComplex>`)
//! holds its twiddle factors and the sub-plans of its factorization; making
//! one costs far more than a small transform, so plans are kept. The cache is
//! bounded: at most [`MAX_PLANS`] entries (the least recently used one leaves
//! when a new one comes), and the planner, which keeps every sub-plan it ever
//! made, is replaced once it has made [`PLANNER_RENEWAL`] plans, so a program
//! sweeping through many lengths holds a bounded amount of memory. The lock
//! is held only while looking a plan up or making one; transforms run
//! outside it.
//!
//! A plan is a function of the length alone (rustfft chooses the algorithm
//! and the SIMD width from the length and the CPU, never from the thread
//! count), so results are the same bits whichever thread made the plan.

use realfft::{
    ComplexToReal, ComplexToRealEven, ComplexToRealOdd, RealToComplex, RealToComplexEven,
    RealToComplexOdd,
};
use rustfft::{Fft, FftDirection, FftNum, FftPlanner};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

/// The most complex plans the cache of one element type holds (and as many
/// real-to-complex and complex-to-real plans each).
pub const MAX_PLANS: usize = 64;

/// The planner (with its own unbounded cache of sub-plans) is replaced
/// after making this many plans.
pub const PLANNER_RENEWAL: usize = 4 * MAX_PLANS;

/// A map of at most [`MAX_PLANS`] entries that drops its least recently used
/// entry to make room.
struct Lru<K, V> {
    clock: u64,
    entries: HashMap<K, (u64, V)>,
}

impl<K: std::hash::Hash + Eq + Copy, V: Clone> Lru<K, V> {
    fn new() -> Self {
        Lru {
            clock: 0,
            entries: HashMap::new(),
        }
    }

    fn get_or_make(&mut self, key: K, make: impl FnOnce() -> V) -> V {
        self.clock = self.clock.wrapping_add(1);
        let now = self.clock;
        if let Some((used, v)) = self.entries.get_mut(&key) {
            *used = now;
            return v.clone();
        }
        if self.entries.len() >= MAX_PLANS {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| *k);
            if let Some(k) = oldest {
                self.entries.remove(&k);
            }
        }
        let v = make();
        self.entries.insert(key, (now, v.clone()));
        v
    }
}

type ComplexPlan<T> = Arc<dyn Fft<T>>;
type RealForwardPlan<T> = Arc<dyn RealToComplex<T>>;
type RealInversePlan<T> = Arc<dyn ComplexToReal<T>>;

/// The planner that makes the plans of one element type, replaced after
/// [`PLANNER_RENEWAL`] plans.
struct Planner<T: FftNum> {
    planner: FftPlanner<T>,
    made: usize,
}

impl<T: FftNum> Planner<T> {
    /// The planner to make one more plan with (a fresh one after
    /// [`PLANNER_RENEWAL`] plans).
    fn next(&mut self) -> &mut FftPlanner<T> {
        if self.made >= PLANNER_RENEWAL {
            self.planner = FftPlanner::new();
            self.made = 0;
        }
        self.made = self.made.saturating_add(1);
        &mut self.planner
    }
}

/// Picks one plan map of the caches, with the planner that fills it.
type PickCache<T, K, V> = fn(&mut Plans<T>) -> (&mut Lru<K, V>, &mut Planner<T>);

struct Plans<T: FftNum> {
    planner: Planner<T>,
    complex: Lru<(usize, bool), ComplexPlan<T>>,
    real_forward: Lru<usize, RealForwardPlan<T>>,
    real_inverse: Lru<usize, RealInversePlan<T>>,
}

/// The method `$name` of [`PlanCache`] giving the real plan (type `$plan`)
/// of real length `n`, from its cache field `$name`: an `$even` plan for
/// even `n`, an `$odd` one for odd `n`.
macro_rules! real_plan {
    ($(#[$doc:meta])* $name:ident, $plan:ident, $even:ident, $odd:ident) => {
        $(#[$doc])*
        pub fn $name(&self, n: usize) -> $plan<T> {
            self.get(|p| (&mut p.$name, &mut p.planner), n, |p| {
                if n.is_multiple_of(2) {
                    Arc::new($even::new(n, p))
                } else {
                    Arc::new($odd::new(n, p))
                }
            })
        }
    };
}

/// The plan cache of one element type (see the module docs).
pub struct PlanCache<T: FftNum> {
    inner: Mutex<Plans<T>>,
}

impl<T: FftNum> Default for PlanCache<T> {
    fn default() -> Self {
        PlanCache {
            inner: Mutex::new(Plans {
                planner: Planner {
                    planner: FftPlanner::new(),
                    made: 0,
                },
                complex: Lru::new(),
                real_forward: Lru::new(),
                real_inverse: Lru::new(),
            }),
        }
    }
}

impl<T: FftNum> PlanCache<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Plans<T>> {
        // A panic while the lock was held cannot leave the maps inconsistent
        // (every entry is a finished plan), so a poisoned lock is used as is.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The plan under `key` in the map `table` picks, made with the planner
    /// by `make` when the map does not hold it.
    fn get<K: std::hash::Hash + Eq + Copy, V: Clone>(
        &self, table: PickCache<T, K, V>, key: K, make: impl FnOnce(&mut FftPlanner<T>) -> V,
    ) -> V {
        let mut guard = self.lock();
        let (lru, planner) = table(&mut guard);
        lru.get_or_make(key, || make(planner.next()))
    }

    /// The complex plan of length `n` (`n > 0`), unnormalized.
    pub fn complex(&self, n: usize, inverse: bool) -> ComplexPlan<T> {
        let dir = if inverse {
            FftDirection::Inverse
        } else {
            FftDirection::Forward
        };
        self.get(
            |p| (&mut p.complex, &mut p.planner),
            (n, inverse),
            |p| p.plan_fft(n, dir),
        )
    }

    real_plan!(
        /// The real-to-complex plan of real length `n` (`n > 0`).
        real_forward,
        RealForwardPlan,
        RealToComplexEven,
        RealToComplexOdd
    );
    real_plan!(
        /// The complex-to-real plan of real length `n` (`n > 0`).
        real_inverse,
        RealInversePlan,
        ComplexToRealEven,
        ComplexToRealOdd
    );

    /// How many plans the cache holds now (all kinds).
    pub fn len(&self) -> usize {
        let p = self.lock();
        p.complex
            .entries
            .len()
            .saturating_add(p.real_forward.entries.len())
            .saturating_add(p.real_inverse.entries.len())
    }

    /// Whether the cache holds no plan.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An element type with a process-wide plan cache (`f32`, `f64`).
pub trait FftFloat: FftNum + rustfft::num_traits::Float {
    /// The plan cache of this element type.
    fn plans() -> &'static PlanCache<Self>;
}

/// Implements [`FftFloat`] for each element type, with its own static cache.
macro_rules! fft_float {
    ($($t:ty),*) => {$(
        impl FftFloat for $t {
            fn plans() -> &'static PlanCache<$t> {
                static PLANS: LazyLock<PlanCache<$t>> = LazyLock::new(PlanCache::default);
                &PLANS
            }
        }
    )*};
}

fft_float!(f32, f64);
