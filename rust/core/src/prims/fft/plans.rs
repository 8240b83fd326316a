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

struct Plans<T: FftNum> {
    planner: FftPlanner<T>,
    made: usize,
    complex: Lru<(usize, bool), ComplexPlan<T>>,
    real_forward: Lru<usize, RealForwardPlan<T>>,
    real_inverse: Lru<usize, RealInversePlan<T>>,
}

impl<T: FftNum> Plans<T> {
    /// The planner to make one more plan with (a fresh one after
    /// [`PLANNER_RENEWAL`] plans).
    fn planner<'a>(planner: &'a mut FftPlanner<T>, made: &mut usize) -> &'a mut FftPlanner<T> {
        if *made >= PLANNER_RENEWAL {
            *planner = FftPlanner::new();
            *made = 0;
        }
        *made = made.saturating_add(1);
        planner
    }
}

/// The plan cache of one element type (see the module docs).
pub struct PlanCache<T: FftNum> {
    inner: Mutex<Plans<T>>,
}

impl<T: FftNum> Default for PlanCache<T> {
    fn default() -> Self {
        PlanCache {
            inner: Mutex::new(Plans {
                planner: FftPlanner::new(),
                made: 0,
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

    /// The complex plan of length `n` (`n > 0`), unnormalized.
    pub fn complex(&self, n: usize, inverse: bool) -> ComplexPlan<T> {
        let mut guard = self.lock();
        let Plans {
            planner,
            made,
            complex,
            ..
        } = &mut *guard;
        complex.get_or_make((n, inverse), || {
            let dir = if inverse {
                FftDirection::Inverse
            } else {
                FftDirection::Forward
            };
            Plans::planner(planner, made).plan_fft(n, dir)
        })
    }

    /// The real-to-complex plan of real length `n` (`n > 0`).
    pub fn real_forward(&self, n: usize) -> RealForwardPlan<T> {
        let mut guard = self.lock();
        let Plans {
            planner,
            made,
            real_forward,
            ..
        } = &mut *guard;
        real_forward.get_or_make(n, || {
            let p = Plans::planner(planner, made);
            if n.is_multiple_of(2) {
                Arc::new(RealToComplexEven::new(n, p))
            } else {
                Arc::new(RealToComplexOdd::new(n, p))
            }
        })
    }

    /// The complex-to-real plan of real length `n` (`n > 0`).
    pub fn real_inverse(&self, n: usize) -> RealInversePlan<T> {
        let mut guard = self.lock();
        let Plans {
            planner,
            made,
            real_inverse,
            ..
        } = &mut *guard;
        real_inverse.get_or_make(n, || {
            let p = Plans::planner(planner, made);
            if n.is_multiple_of(2) {
                Arc::new(ComplexToRealEven::new(n, p))
            } else {
                Arc::new(ComplexToRealOdd::new(n, p))
            }
        })
    }

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

static PLANS_F32: LazyLock<PlanCache<f32>> = LazyLock::new(PlanCache::default);
static PLANS_F64: LazyLock<PlanCache<f64>> = LazyLock::new(PlanCache::default);

impl FftFloat for f32 {
    fn plans() -> &'static PlanCache<f32> {
        &PLANS_F32
    }
}

impl FftFloat for f64 {
    fn plans() -> &'static PlanCache<f64> {
        &PLANS_F64
    }
}
