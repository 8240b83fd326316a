//! SIMD slice math for f32 and f64 (`vmath`).
//!
//! Every function is a branch-free per-element kernel (Cody–Waite range
//! reduction, polynomials fitted for this module, selects instead of
//! branches) applied by one plain loop that runs inside a `pulp` dispatch,
//! so LLVM vectorizes it at the widest width the CPU has (AVX-512, AVX2) in
//! a portable binary.
//!
//! # Contract
//!
//! * **Same polynomial everywhere.** A slice is processed by one loop calling
//!   the same per-element function for every element: there is no separate
//!   scalar tail and no level-specific code, no explicit FMA (Rust never
//!   contracts mul+add). Results therefore do not depend on the slice
//!   length, the chunk boundaries or the [`SimdLevel`]: Scalar, AVX2 and
//!   AVX-512 are bit-identical (tested). The public scalar functions
//!   (`exp_f32`, ...) are those same per-element functions. The one
//!   exception is the bits of a NaN result (payload, quiet bit), which Rust
//!   leaves unspecified: a signaling NaN may come out quieted or not.
//! * f32 functions compute in f64 with lower-degree polynomials and round
//!   once; f64 functions use full-degree polynomials.
//! * Special values as C libm: NaN propagates, ±inf, -0.0 kept where libm
//!   keeps it, overflow → inf, underflow → denormal/0, `log` of a negative
//!   → NaN, `log(0) = -inf`.
//! * `sin`/`cos` reduce with a three-part π/2 for |x| ≤ 65536; larger or
//!   non-finite lanes are patched with the `libm` crate's result in a
//!   second pass (the first pass leaves `x` in those lanes, which the second
//!   pass recognises by `|v| > 65536`), so results are right for any input.
//! * `pow_f64` is not vectorized: it is `libm` `pow` per element (a
//!   double-double `log` would be needed to stay within 2 ulp).
//! * Slices of different lengths: the common prefix is processed, the rest
//!   of `out` is left untouched (no panic).
//!
//! # Accuracy (max ulp error measured by the tests in `vmath_tests.rs`)
//!
//! Against the f64 libm result rounded to f32 (f32) and against libm /
//! `erf` of the `libm` crate (f64), over dense grids of the whole range plus
//! special values. The tests use these bounds as tolerances.
//!
//! | function  | f32 | f64 |
//! |-----------|-----|-----|
//! | exp       | 1   | 1   |
//! | exp2      | 1   | 1   |
//! | expm1     | 1   | 2   |
//! | log       | 1   | 1   |
//! | log1p     | 1   | 2   |
//! | sin, cos  | 1   | 1   |
//! | tanh      | 1   | 2   |
//! | logistic  | 2   | 2   |
//! | erf       | 1   | 2   |
//! | pow       | 1   | libm |
//!
//! # Speed (10^6-element slices, ns/element, release build)
//!
//! On the shared 2-vCPU AVX-512 Xeon (load ≈ 3.7 while measuring), AVX-512:
//! f32 exp 1.8, log 2.5, sin 3.9, tanh 2.1, erf 14.5, pow 7.2; f64 exp 2.8,
//! log 3.3, sin 4.5, tanh 5.1 (glibc scalar: f32 exp 4.1, tanh 22; f64 exp
//! 7.9, sin 12.4). Full table in `docs/DESIGN-NOTES.md` ("SIMD math");
//! the ignored test `vmath_tests::bench_ns_per_element` prints them.
//! Since then `exp`, `tanh`, `logistic`, `log`, `sin` and `cos` compute in
//! f32 (16 lanes per AVX-512 vector) with Estrin-evaluated polynomials: at
//! one thread in cache f32 exp 0.57, tanh 0.84, sin 1.23 ns/element; the
//! f64 polynomials run Horner's rule in `x²` over coefficient pairs (f64
//! exp 1.55, tanh 2.61, sin 2.63).
#![allow(clippy::approx_constant, clippy::excessive_precision)]

use crate::prims::UnaryOp;
use std::cell::Cell;
use std::marker::PhantomData;

#[path = "vmath_scalar.rs"]
pub(crate) mod scalar;

pub use scalar::{
    cos_f32, cos_f64, cos_fast_f32, cos_fast_f64, erf_f32, erf_f64, exp2_f32, exp2_f64, exp_f32,
    exp_f64, expm1_f32, expm1_f64, log1p_f32, log1p_f64, log_f32, log_f64, logistic_f32,
    logistic_f64, pow_f32_scalar, pow_f64_scalar, sin_f32, sin_f64, sin_fast_f32, sin_fast_f64,
    tanh_f32, tanh_f64,
};
use scalar::{cos_mid_f32, cos_slow_f32, mid_f32, sign_f32, sign_f64, sin_mid_f32, sin_slow_f32};

// ------------------------------------------------------------ SIMD level

/// The instruction set the slice loops are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SimdLevel {
    /// The baseline target (SSE2 on x86-64).
    Scalar,
    /// x86-64-v3 (AVX2, FMA, F16C).
    Avx2,
    /// x86-64-v4 (AVX-512 F/BW/CD/DQ/VL).
    Avx512,
}

thread_local! {
    static FORCED: Cell<Option<SimdLevel>> = const { Cell::new(None) };
}

/// The best level this CPU supports.
fn cpu_level() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    {
        if pulp::x86::V4::try_new().is_some() {
            return SimdLevel::Avx512;
        }
        if pulp::x86::V3::try_new().is_some() {
            return SimdLevel::Avx2;
        }
    }
    SimdLevel::Scalar
}

/// The level used when none is forced: the CPU's best, capped by the
/// environment variable `MICROJAX_SIMD_LEVEL` (`scalar`, `avx2`, `avx512`;
/// read once) so a process can run the code paths of a smaller CPU (the
/// determinism tests compare them).
#[doc(hidden)]
pub fn detected_level() -> SimdLevel {
    static LEVEL: std::sync::OnceLock<SimdLevel> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(|| {
        let cap = match std::env::var("MICROJAX_SIMD_LEVEL").as_deref() {
            Ok("scalar") => SimdLevel::Scalar,
            Ok("avx2") => SimdLevel::Avx2,
            _ => SimdLevel::Avx512,
        };
        cpu_level().at_most(cap)
    })
}

/// The level set on this thread by [`with_simd_level`] (or a context's
/// [`crate::exec::ExecCtx::enter`]), if any.
pub fn forced_simd_level() -> Option<SimdLevel> {
    FORCED.with(Cell::get)
}

/// The level this thread would run at before any determinism cap: the one
/// forced by [`with_simd_level`] (which [`crate::exec::ExecCtx::enter`]
/// uses), else the best the CPU supports.
pub fn base_simd_level() -> SimdLevel {
    FORCED.with(Cell::get).unwrap_or_else(detected_level)
}

/// The SIMD level the slice functions use on this thread: the one set by
/// the running context ([`crate::exec::ExecCtx::enter`]) or forced by
/// [`with_simd_level`], else the CPU's best, at most AVX2 while the
/// process-wide default mode is [`Determinism::Portable`](crate::exec::Determinism).
///
/// A thread-local, not a parameter: the slice loops that read it are many
/// helper layers below any kernel entry (see `exec/ctx.rs`).
pub fn simd_level() -> SimdLevel {
    match FORCED.with(Cell::get) {
        Some(level) => level,
        None if crate::exec::default_determinism() == crate::exec::Determinism::Portable => {
            detected_level().at_most(SimdLevel::Avx2)
        }
        None => detected_level(),
    }
}

impl SimdLevel {
    /// The lower of `self` and `cap` (Scalar < Avx2 < Avx512).
    pub fn at_most(self, cap: SimdLevel) -> SimdLevel {
        let rank = |l: SimdLevel| match l {
            SimdLevel::Scalar => 0u8,
            SimdLevel::Avx2 => 1,
            SimdLevel::Avx512 => 2,
        };
        if rank(self) <= rank(cap) {
            self
        } else {
            cap
        }
    }
}

/// Restores the previous forced level, also when `f` panics.
struct Restore(Option<SimdLevel>);

impl Drop for Restore {
    fn drop(&mut self) {
        FORCED.with(|c| c.set(self.0));
    }
}

/// Runs `f` with the slice functions forced to `level` on this thread (a
/// level the CPU lacks falls back to the best lower one it has). Results
/// are the same at every level; this exists for tests and for pinning the
/// code path.
pub fn with_simd_level<R>(level: SimdLevel, f: impl FnOnce() -> R) -> R {
    let _restore = Restore(FORCED.with(|c| c.replace(Some(level))));
    f()
}

/// Runs `op` compiled for the current [`simd_level`]. The slice loops are
/// `WithSimd` structs with an `#[inline(always)]` body: a closure may stay
/// un-inlined when it is large, i.e. compiled without the target features.
#[inline(always)]
pub(super) fn run<Op: pulp::WithSimd>(op: Op) -> Op::Output {
    #[cfg(target_arch = "x86_64")]
    {
        let level = simd_level();
        if level == SimdLevel::Avx512 {
            if let Some(s) = pulp::x86::V4::try_new() {
                return pulp::Simd::vectorize(s, op);
            }
        }
        if level != SimdLevel::Scalar {
            if let Some(s) = pulp::x86::V3::try_new() {
                return pulp::Simd::vectorize(s, op);
            }
        }
    }
    op.with_simd(pulp::Scalar)
}

// ---------------------------------------------------------- slice drivers

/// A per-element function as a type: `eval` is `#[inline(always)]`, so it
/// is inlined into the loop compiled with the target features (a function
/// pointer or a closure may be called out of line, unvectorized).
trait Kernel<T> {
    fn eval(x: T) -> T;
}

/// A struct of borrowed operands plus a kernel type `K` (bound `$bound<T>`),
/// and its `pulp::WithSimd` impl running the scalar loop `$body` (with the
/// struct bound to `$this`), which [`run`] compiles once per SIMD level.
macro_rules! scalar_simd_loop {
    (
        $(#[$attr:meta])*
        $name:ident<$lt:lifetime, T, K: $bound:ident> { $($field:ident: $ty:ty),* $(,)? }
        |$this:ident| $body:block
    ) => {
        $(#[$attr])*
        struct $name<$lt, T, K> {
            $($field: $ty,)*
            kernel: std::marker::PhantomData<K>,
        }

        impl<T: Copy, K: $bound<T>> pulp::WithSimd for $name<'_, T, K> {
            type Output = ();
            #[inline(always)]
            fn with_simd<S: pulp::Simd>(self, _simd: S) {
                let $this = self;
                $body
            }
        }
    };
}
pub(super) use scalar_simd_loop;

/// Where a kernel is applied: `x → out` or in place.
trait Apply<T> {
    fn apply<K: Kernel<T>>(self);
}

struct MapInto<'a, T> {
    x: &'a [T],
    out: &'a mut [T],
}

struct InPlace<'a, T>(&'a mut [T]);

scalar_simd_loop! {
    /// `out[i] = K(x[i])` over the common prefix.
    MapIntoLoop<'a, T, K: Kernel> { x: &'a [T], out: &'a mut [T] }
    |this| {
        for (o, &v) in this.out.iter_mut().zip(this.x) {
            *o = K::eval(v);
        }
    }
}

scalar_simd_loop! {
    /// `v[i] = K(v[i])`.
    InPlaceLoop<'a, T, K: Kernel> { v: &'a mut [T] }
    |this| {
        for e in this.v.iter_mut() {
            *e = K::eval(*e);
        }
    }
}

impl<T: Copy> Apply<T> for MapInto<'_, T> {
    #[inline(always)]
    fn apply<K: Kernel<T>>(self) {
        let MapInto { x, out } = self;
        run(MapIntoLoop::<T, K> {
            x,
            out,
            kernel: PhantomData,
        });
    }
}

impl<T: Copy> Apply<T> for InPlace<'_, T> {
    #[inline(always)]
    fn apply<K: Kernel<T>>(self) {
        run(InPlaceLoop::<T, K> {
            v: self.0,
            kernel: PhantomData,
        });
    }
}

macro_rules! kernels {
    ($($(#[$doc:meta])* $k:ident => |$x:ident| $f32:expr, $f64:expr;)*) => {$(
        $(#[$doc])*
        struct $k;
        impl Kernel<f32> for $k {
            #[inline(always)]
            fn eval($x: f32) -> f32 {
                $f32
            }
        }
        impl Kernel<f64> for $k {
            #[inline(always)]
            fn eval($x: f64) -> f64 {
                $f64
            }
        }
    )*};
}

kernels! {
    NegK => |x| -x, -x;
    AbsK => |x| x.abs(), x.abs();
    SqrtK => |x| x.sqrt(), x.sqrt();
    RsqrtK => |x| 1.0 / x.sqrt(), 1.0 / x.sqrt();
    SquareK => |x| x * x, x * x;
    FloorK => |x| x.floor(), x.floor();
    CeilK => |x| x.ceil(), x.ceil();
    SignK => |x| sign_f32(x), sign_f64(x);
    ExpK => |x| exp_f32(x), exp_f64(x);
    Exp2K => |x| exp2_f32(x), exp2_f64(x);
    Expm1K => |x| expm1_f32(x), expm1_f64(x);
    LogK => |x| log_f32(x), log_f64(x);
    Log1pK => |x| log1p_f32(x), log1p_f64(x);
    /// First pass of `sin`; see [`patch_trig`].
    SinK => |x| sin_fast_f32(x), sin_fast_f64(x);
    /// First pass of `cos`; see [`patch_trig`].
    CosK => |x| cos_fast_f32(x), cos_fast_f64(x);
    TanhK => |x| tanh_f32(x), tanh_f64(x);
    LogisticK => |x| logistic_f32(x), logistic_f64(x);
    ErfK => |x| erf_f32(x), erf_f64(x);
}

/// Lanes with |x| above this take the libm path in `sin`/`cos`.
const TRIG_BIG: f64 = 65536.0;

/// Second pass of `sin`/`cos`: the first left `x` itself in the lanes
/// beyond [`TRIG_BIG`] (f64) / [`TRIG_MID_F32`](scalar::TRIG_MID_F32) (f32) and in non-finite
/// ones; every computed lane has |v| ≤ 1.
fn patch_trig<T: Copy>(v: &mut [T], big: impl Fn(T) -> Option<T>) {
    for e in v.iter_mut() {
        if let Some(r) = big(*e) {
            *e = r;
        }
    }
}

macro_rules! unary_table {
    ($name:ident, $t:ty) => {
        /// Applies `op` through `a`; false when `op` has no vector version.
        fn $name(op: UnaryOp, a: impl Apply<$t>) -> bool {
            match op {
                UnaryOp::Neg => a.apply::<NegK>(),
                UnaryOp::Abs => a.apply::<AbsK>(),
                UnaryOp::Sqrt => a.apply::<SqrtK>(),
                UnaryOp::Rsqrt => a.apply::<RsqrtK>(),
                UnaryOp::Square => a.apply::<SquareK>(),
                UnaryOp::Floor => a.apply::<FloorK>(),
                UnaryOp::Ceil => a.apply::<CeilK>(),
                UnaryOp::Sign => a.apply::<SignK>(),
                UnaryOp::Exp => a.apply::<ExpK>(),
                UnaryOp::Exp2 => a.apply::<Exp2K>(),
                UnaryOp::Expm1 => a.apply::<Expm1K>(),
                UnaryOp::Log => a.apply::<LogK>(),
                UnaryOp::Log1p => a.apply::<Log1pK>(),
                UnaryOp::Sin => a.apply::<SinK>(),
                UnaryOp::Cos => a.apply::<CosK>(),
                UnaryOp::Tanh => a.apply::<TanhK>(),
                UnaryOp::Logistic => a.apply::<LogisticK>(),
                UnaryOp::Erf => a.apply::<ErfK>(),
                _ => return false,
            }
            true
        }
    };
}

unary_table!(table_f32, f32);
unary_table!(table_f64, f64);

/// Vector pass of f32 `sin` (`SIN`) or `cos` over the lanes the first pass
/// left with |x| ≤ [`TRIG_BIG`] (the f64 reduction, as [`sin_slow_f32`]).
struct TrigMidK<const SIN: bool>;
impl<const SIN: bool> Kernel<f32> for TrigMidK<SIN> {
    #[inline(always)]
    fn eval(x: f32) -> f32 {
        let v = if SIN { sin_mid_f32(x) } else { cos_mid_f32(x) };
        if mid_f32(x) && !big_f32(x) {
            v
        } else {
            x
        }
    }
}

/// Second pass of f32 `sin`/`cos`, skipped when the first left no lane
/// (|x| > [`TRIG_MID_F32`](scalar::TRIG_MID_F32)). When more than 1/16 of the lanes were left, a
/// vector pass computes those up to [`TRIG_BIG`] first (the same
/// per-element function, so the same bits).
fn trig_patch_f32(op: UnaryOp, v: &mut [f32]) {
    if !matches!(op, UnaryOp::Sin | UnaryOp::Cos) {
        return;
    }
    // A branch-free count in u32 lanes (vectorized), not a filter.
    let left: usize = v
        .chunks(1 << 20)
        .map(|c| c.iter().map(|&e| u32::from(mid_f32(e))).sum::<u32>() as usize)
        .sum();
    if left == 0 {
        return;
    }
    if left > v.len() / 16 {
        if op == UnaryOp::Sin {
            InPlace(&mut *v).apply::<TrigMidK<true>>();
        } else {
            InPlace(&mut *v).apply::<TrigMidK<false>>();
        }
    }
    match op {
        UnaryOp::Sin => patch_trig(v, |e| mid_f32(e).then(|| sin_slow_f32(e))),
        UnaryOp::Cos => patch_trig(v, |e| mid_f32(e).then(|| cos_slow_f32(e))),
        _ => {}
    }
}

fn trig_patch_f64(op: UnaryOp, v: &mut [f64]) {
    match op {
        UnaryOp::Sin => patch_trig(v, |e| big_f64(e).then(|| libm::sin(e))),
        UnaryOp::Cos => patch_trig(v, |e| big_f64(e).then(|| libm::cos(e))),
        _ => {}
    }
}

/// |x| > [`TRIG_BIG`], or x not finite (NaN included).
#[inline(always)]
fn big_f64(x: f64) -> bool {
    x.abs() > TRIG_BIG || x.is_nan()
}

#[inline(always)]
fn big_f32(x: f32) -> bool {
    x.abs() > TRIG_BIG as f32 || x.is_nan()
}

// ------------------------------------------------------------ public API

/// The element types with a vector table: their table and the trig second pass.
trait TableLane: Copy {
    fn table(op: UnaryOp, a: impl Apply<Self>) -> bool;
    fn trig_patch(op: UnaryOp, v: &mut [Self]);
}

impl TableLane for f32 {
    fn table(op: UnaryOp, a: impl Apply<f32>) -> bool {
        table_f32(op, a)
    }
    fn trig_patch(op: UnaryOp, v: &mut [f32]) {
        trig_patch_f32(op, v);
    }
}

impl TableLane for f64 {
    fn table(op: UnaryOp, a: impl Apply<f64>) -> bool {
        table_f64(op, a)
    }
    fn trig_patch(op: UnaryOp, v: &mut [f64]) {
        trig_patch_f64(op, v);
    }
}

fn unary_into<T: TableLane>(op: UnaryOp, x: &[T], out: &mut [T]) -> bool {
    if !T::table(op, MapInto { x, out: &mut *out }) {
        return false;
    }
    let n = x.len().min(out.len());
    T::trig_patch(op, out.get_mut(..n).unwrap_or_default());
    true
}

fn unary_in_place<T: TableLane>(op: UnaryOp, v: &mut [T]) -> bool {
    if !T::table(op, InPlace(&mut *v)) {
        return false;
    }
    T::trig_patch(op, v);
    true
}

/// Applies `op` elementwise to `x` into `out`; returns false (and leaves
/// `out` untouched) when `op` has no vector implementation. Slices of
/// different lengths: only the common prefix is written.
pub fn unary_f32(op: UnaryOp, x: &[f32], out: &mut [f32]) -> bool {
    unary_into(op, x, out)
}

/// [`unary_f32`] for f64.
pub fn unary_f64(op: UnaryOp, x: &[f64], out: &mut [f64]) -> bool {
    unary_into(op, x, out)
}

/// In-place [`unary_f32`] (bit-identical results).
pub fn unary_f32_inplace(op: UnaryOp, v: &mut [f32]) -> bool {
    unary_in_place(op, v)
}

/// In-place [`unary_f64`] (bit-identical results).
pub fn unary_f64_inplace(op: UnaryOp, v: &mut [f64]) -> bool {
    unary_in_place(op, v)
}

/// Whether `op` has a vector implementation (for f32 and f64 alike).
pub fn supports(op: UnaryOp) -> bool {
    matches!(
        op,
        UnaryOp::Neg
            | UnaryOp::Abs
            | UnaryOp::Sqrt
            | UnaryOp::Rsqrt
            | UnaryOp::Square
            | UnaryOp::Floor
            | UnaryOp::Ceil
            | UnaryOp::Sign
            | UnaryOp::Exp
            | UnaryOp::Exp2
            | UnaryOp::Expm1
            | UnaryOp::Log
            | UnaryOp::Log1p
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Tanh
            | UnaryOp::Logistic
            | UnaryOp::Erf
    )
}

/// `x**y` elementwise (C `powf` semantics, computed in f64 and rounded
/// once). Slices of different lengths: the common prefix is written.
pub fn pow_f32(x: &[f32], y: &[f32], out: &mut [f32]) {
    run(PowLoop { x, y, out });
}

/// `out[i] = pow_f32_scalar(x[i], y[i])`.
struct PowLoop<'a> {
    x: &'a [f32],
    y: &'a [f32],
    out: &'a mut [f32],
}

impl pulp::WithSimd for PowLoop<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        for ((o, &a), &b) in self.out.iter_mut().zip(self.x).zip(self.y) {
            *o = pow_f32_scalar(a, b);
        }
    }
}

/// `x**y` elementwise: libm `pow` per element (not vectorized).
pub fn pow_f64(x: &[f64], y: &[f64], out: &mut [f64]) {
    for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
        *o = pow_f64_scalar(a, b);
    }
}
