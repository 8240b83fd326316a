//! Element traits shared by the kernels. Every trait is implemented by a
//! macro per concrete type, so generic kernels monomorphize into tight loops
//! with no per-element dispatch.

use crate::array::Buffer;
use crate::dtype::DType;
use crate::error::Error;
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

/// Error for an operand buffer a kernel cannot take. Operands are validated
/// by the shape rule first, so reaching this means the shape rule and the
/// kernel disagree.
pub fn bad_dtype(prim: &'static str, dtypes: &[DType]) -> Error {
    Error::dtype(prim, dtypes, "no kernel for this operand dtype")
}

/// Dtype list of buffers, for errors.
pub fn dtypes_of(bufs: &[&Buffer]) -> Vec<DType> {
    bufs.iter().map(|b| b.dtype()).collect()
}

/// Below this many elements, loops run without the runtime SIMD dispatch
/// (its feature check costs more than the loop).
pub const SIMD_MIN: usize = 64;

// Loops above `SIMD_MIN` elements run inside `vmath::run`'s dispatch,
// compiled for the best instruction set this CPU has (AVX2, AVX-512;
// detected at run time; AVX2 at most under `Determinism::Portable`), so they vectorize at full width in a portable
// binary. Elementwise results are the same on every path: only the vector
// width changes, never the operations or their order.

#[inline(always)]
fn map_loop<A: Copy, O>(a: &[A], f: &impl Fn(A) -> O) -> Vec<O> {
    a.iter().map(|&x| f(x)).collect()
}

/// [`map_loop`] as a `pulp` operation. `with_simd` is instantiated inside
/// each target-feature context with the loop inlined into it; a closure
/// handed to `dispatch` may be compiled once, out of line, for the baseline
/// instruction set (its loop then runs SSE-only).
struct MapLoop<'a, A, F> {
    a: &'a [A],
    f: F,
}

impl<A: Copy, O, F: Fn(A) -> O> pulp::WithSimd for MapLoop<'_, A, F> {
    type Output = Vec<O>;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<O> {
        map_loop(self.a, &self.f)
    }
}

/// Applies `f` to every element.
#[inline(always)]
pub fn map<A: Copy, O>(a: &[A], f: impl Fn(A) -> O) -> Vec<O> {
    if a.len() < SIMD_MIN {
        map_loop(a, &f)
    } else {
        super::vmath::run(MapLoop { a, f })
    }
}

#[inline(always)]
fn zip_loop<A: Copy, B: Copy, O>(a: &[A], b: &[B], f: &impl Fn(A, B) -> O) -> Option<Vec<O>> {
    if a.len() == b.len() {
        return Some(a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect());
    }
    match (a, b) {
        ([x], _) => {
            let x = *x;
            Some(b.iter().map(|&y| f(x, y)).collect())
        }
        (_, [y]) => {
            let y = *y;
            Some(a.iter().map(|&x| f(x, y)).collect())
        }
        _ => None,
    }
}

/// Applies `f` elementwise to two operands of equal length, or to a
/// one-element operand (a rank-0 array) against the other. `None` when the
/// lengths are incompatible (never after the shape rule accepted them).
#[inline(always)]
pub fn zip_map<A: Copy, B: Copy, O>(a: &[A], b: &[B], f: impl Fn(A, B) -> O) -> Option<Vec<O>> {
    if a.len().max(b.len()) < SIMD_MIN {
        zip_loop(a, b, &f)
    } else {
        super::vmath::run(ZipLoop { a, b, f })
    }
}

/// [`zip_loop`] as a `pulp` operation (see [`MapLoop`]).
struct ZipLoop<'a, A, B, F> {
    a: &'a [A],
    b: &'a [B],
    f: F,
}

impl<A: Copy, B: Copy, O, F: Fn(A, B) -> O> pulp::WithSimd for ZipLoop<'_, A, B, F> {
    type Output = Option<Vec<O>>;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Option<Vec<O>> {
        zip_loop(self.a, self.b, &self.f)
    }
}

/// Float element types computed natively (f32, f64).
pub trait FloatElem: Copy + PartialOrd + Send + Sync + 'static {
    const ZERO: Self;
    const ONE: Self;
    const NEG_INFINITY: Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    fn sign(self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tanh(self) -> Self;
    fn logistic(self) -> Self;
    fn sqrt(self) -> Self;
    fn pow(self, o: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_finite(self) -> bool;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    /// Halfway cases away from zero.
    fn round_away(self) -> Self;
    /// Halfway cases to even.
    fn round_even(self) -> Self;
    fn exp2(self) -> Self;
    fn ln_1p(self) -> Self;
    fn exp_m1(self) -> Self;
    fn tan(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn cbrt(self) -> Self;
    /// C `fmod` (result has the sign of `self`).
    fn fmod(self, o: Self) -> Self;
    /// `atan(self / o)` in the right quadrant.
    fn atan2(self, o: Self) -> Self;
    /// The next representable value after `self` toward `o`.
    fn next_toward(self, o: Self) -> Self;
    fn to_f64(self) -> f64;
    /// Rounds to nearest.
    fn from_f64(v: f64) -> Self;
    /// Maximum that propagates NaN (XLA semantics).
    #[inline(always)]
    fn max_nan(self, o: Self) -> Self {
        if self > o || self.is_nan() {
            self
        } else {
            o
        }
    }
    /// Minimum that propagates NaN (XLA semantics).
    #[inline(always)]
    fn min_nan(self, o: Self) -> Self {
        if self < o || self.is_nan() {
            self
        } else {
            o
        }
    }
}

macro_rules! impl_float {
    ($t:ident, $tanh:path) => {
        impl FloatElem for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NEG_INFINITY: Self = $t::NEG_INFINITY;
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                self / o
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $t::abs(self)
            }
            /// ±1 for nonzero numbers; ±0 and NaN map to themselves.
            #[inline(always)]
            fn sign(self) -> Self {
                if self == 0.0 || self.is_nan() {
                    self
                } else {
                    (1.0 as $t).copysign(self)
                }
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $t::exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $t::ln(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                $t::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $t::cos(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $tanh(self)
            }
            /// `1 / (1 + exp(-x))` without overflow: with `e = exp(-|x|)`,
            /// the result is `1/(1+e)` for x ≥ 0 and `e/(1+e)` otherwise.
            #[inline(always)]
            fn logistic(self) -> Self {
                let e = $t::exp(-$t::abs(self));
                let r = 1.0 / (1.0 + e);
                if self >= 0.0 {
                    r
                } else {
                    e * r
                }
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline(always)]
            fn pow(self, o: Self) -> Self {
                $t::powf(self, o)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                $t::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $t::ceil(self)
            }
            #[inline(always)]
            fn round_away(self) -> Self {
                $t::round(self)
            }
            #[inline(always)]
            fn round_even(self) -> Self {
                $t::round_ties_even(self)
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                $t::exp2(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                $t::ln_1p(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                $t::exp_m1(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                $t::tan(self)
            }
            #[inline(always)]
            fn asin(self) -> Self {
                $t::asin(self)
            }
            #[inline(always)]
            fn acos(self) -> Self {
                $t::acos(self)
            }
            #[inline(always)]
            fn atan(self) -> Self {
                $t::atan(self)
            }
            #[inline(always)]
            fn sinh(self) -> Self {
                $t::sinh(self)
            }
            #[inline(always)]
            fn cosh(self) -> Self {
                $t::cosh(self)
            }
            #[inline(always)]
            fn asinh(self) -> Self {
                $t::asinh(self)
            }
            #[inline(always)]
            fn acosh(self) -> Self {
                $t::acosh(self)
            }
            #[inline(always)]
            fn atanh(self) -> Self {
                $t::atanh(self)
            }
            #[inline(always)]
            fn cbrt(self) -> Self {
                $t::cbrt(self)
            }
            #[inline(always)]
            fn fmod(self, o: Self) -> Self {
                self % o
            }
            #[inline(always)]
            fn atan2(self, o: Self) -> Self {
                $t::atan2(self, o)
            }
            #[inline(always)]
            fn next_toward(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() {
                    self + o
                } else if self == o {
                    o
                } else if self < o {
                    self.next_up()
                } else {
                    self.next_down()
                }
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    };
}
impl_float!(f32, super::vmath::tanh_f32);
impl_float!(f64, f64::tanh);

/// f16 and bf16: stored narrow, computed in f32.
pub trait HalfElem: Copy + PartialOrd + Send + Sync + 'static {
    fn widen(v: &[Self]) -> Vec<f32>;
    fn narrow(v: &[f32]) -> Vec<Self>;
    fn to_f32(self) -> f32;
    fn from_f32(v: f32) -> Self;
    fn to_bits(self) -> u16;
    fn from_bits(b: u16) -> Self;
}

macro_rules! impl_half {
    ($t:ident) => {
        impl HalfElem for $t {
            fn widen(v: &[Self]) -> Vec<f32> {
                v.to_f32_vec()
            }
            fn narrow(v: &[f32]) -> Vec<Self> {
                let mut out = vec![$t::ZERO; v.len()];
                out.as_mut_slice().convert_from_f32_slice(v);
                out
            }
            fn to_f32(self) -> f32 {
                $t::to_f32(self)
            }
            fn from_f32(v: f32) -> Self {
                $t::from_f32(v)
            }
            fn to_bits(self) -> u16 {
                $t::to_bits(self)
            }
            fn from_bits(b: u16) -> Self {
                $t::from_bits(b)
            }
        }
    };
}
impl_half!(f16);
impl_half!(bf16);

/// Integer element types with XLA's integer semantics.
pub trait IntElem: Copy + Ord + Send + Sync + 'static {
    const ZERO: Self;
    const ONE: Self;
    const MIN: Self;
    fn wadd(self, o: Self) -> Self;
    fn wsub(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    /// Truncating division; `x / 0` is -1 (signed) or MAX (unsigned) and
    /// `MIN / -1` is MIN, as XLA defines them.
    fn xdiv(self, o: Self) -> Self;
    fn wneg(self) -> Self;
    /// `abs(MIN) = MIN`; identity for unsigned types.
    fn wabs(self) -> Self;
    /// -1/0/1 (0/1 for unsigned types).
    fn sign(self) -> Self;
    fn wpow(self, e: u32) -> Self;
    /// `x % 0 = x`, `MIN % -1 = 0` (XLA); truncated remainder otherwise.
    fn xrem(self, o: Self) -> Self;
    fn bnot(self) -> Self;
    fn band(self, o: Self) -> Self;
    fn bor(self, o: Self) -> Self;
    fn bxor(self, o: Self) -> Self;
    fn popcnt(self) -> Self;
    fn clz(self) -> Self;
    /// Shifts by `o` read as unsigned; amounts past the width give 0.
    fn shl(self, o: Self) -> Self;
    fn shr_logical(self, o: Self) -> Self;
    /// Over-wide amounts fill with the sign bit.
    fn shr_arith(self, o: Self) -> Self;
}

macro_rules! impl_int_common {
    ($t:ident) => {
        const ZERO: Self = 0;
        const ONE: Self = 1;
        const MIN: Self = $t::MIN;
        #[inline(always)]
        fn wadd(self, o: Self) -> Self {
            self.wrapping_add(o)
        }
        #[inline(always)]
        fn wsub(self, o: Self) -> Self {
            self.wrapping_sub(o)
        }
        #[inline(always)]
        fn wmul(self, o: Self) -> Self {
            self.wrapping_mul(o)
        }
        #[inline(always)]
        fn wneg(self) -> Self {
            self.wrapping_neg()
        }
        #[inline(always)]
        fn wpow(self, e: u32) -> Self {
            self.wrapping_pow(e)
        }
        #[inline(always)]
        fn bnot(self) -> Self {
            !self
        }
        #[inline(always)]
        fn band(self, o: Self) -> Self {
            self & o
        }
        #[inline(always)]
        fn bor(self, o: Self) -> Self {
            self | o
        }
        #[inline(always)]
        fn bxor(self, o: Self) -> Self {
            self ^ o
        }
        #[inline(always)]
        fn popcnt(self) -> Self {
            self.count_ones() as $t
        }
        #[inline(always)]
        fn clz(self) -> Self {
            self.leading_zeros() as $t
        }
    };
}

/// Shift amount `o` of an integer type read as unsigned, as a `u32` below
/// the bit width, or `None` when over-wide.
macro_rules! shift_amount {
    ($o:expr, $t:ident, $u:ident) => {
        u32::try_from($o as $u).ok().filter(|&s| s < $t::BITS)
    };
}

macro_rules! impl_shifts {
    ($t:ident, $u:ident) => {
        #[inline(always)]
        fn shl(self, o: Self) -> Self {
            shift_amount!(o, $t, $u).map_or(0, |s| self.wrapping_shl(s))
        }
        #[inline(always)]
        fn shr_logical(self, o: Self) -> Self {
            shift_amount!(o, $t, $u).map_or(0, |s| (self as $u).wrapping_shr(s) as $t)
        }
        #[inline(always)]
        fn shr_arith(self, o: Self) -> Self {
            let s = shift_amount!(o, $t, $u).unwrap_or($t::BITS.wrapping_sub(1));
            (self as <$u as Signed>::S).wrapping_shr(s) as $t
        }
    };
}

/// The signed type of each width (for arithmetic right shifts).
pub trait Signed {
    type S;
}
impl Signed for u8 {
    type S = i8;
}
impl Signed for u16 {
    type S = i16;
}
impl Signed for u32 {
    type S = i32;
}
impl Signed for u64 {
    type S = i64;
}

macro_rules! impl_signed {
    ($($t:ident / $u:ident),*) => {$(
        impl IntElem for $t {
            impl_int_common!($t);
            impl_shifts!($t, $u);
            #[inline(always)]
            fn xrem(self, o: Self) -> Self {
                // checked_rem fails only for o == 0 and MIN % -1.
                self.checked_rem(o).unwrap_or(if o == 0 { self } else { 0 })
            }
            #[inline(always)]
            fn xdiv(self, o: Self) -> Self {
                // checked_div fails only for o == 0 and MIN / -1.
                self.checked_div(o).unwrap_or(if o == 0 { -1 } else { self })
            }
            #[inline(always)]
            fn wabs(self) -> Self {
                self.wrapping_abs()
            }
            #[inline(always)]
            fn sign(self) -> Self {
                self.signum()
            }
        }
    )*};
}
impl_signed!(i8 / u8, i16 / u16, i32 / u32, i64 / u64);

macro_rules! impl_unsigned {
    ($($t:ident),*) => {$(
        impl IntElem for $t {
            impl_int_common!($t);
            impl_shifts!($t, $t);
            #[inline(always)]
            fn xrem(self, o: Self) -> Self {
                self.checked_rem(o).unwrap_or(self)
            }
            #[inline(always)]
            fn xdiv(self, o: Self) -> Self {
                self.checked_div(o).unwrap_or($t::MAX)
            }
            #[inline(always)]
            fn wabs(self) -> Self {
                self
            }
            #[inline(always)]
            fn sign(self) -> Self {
                self.min(1)
            }
        }
    )*};
}
impl_unsigned!(u8, u16, u32, u64);

/// Conversion target: every numeric and bool element type, with XLA's
/// `convert_element_type` semantics (float → int truncates toward zero,
/// saturates at the bounds, NaN → 0; int → int wraps; x → bool is x ≠ 0).
pub trait CastTo: Copy + Send + Sync + 'static {
    fn from_i64(v: i64) -> Self;
    fn from_u64(v: u64) -> Self;
    fn from_f32(v: f32) -> Self;
    fn from_f64(v: f64) -> Self;
    fn from_bool(v: bool) -> Self;
}

/// `CastTo` for the types `$t`, given each conversion of `$v` (from i64,
/// u64, f32, f64, bool). For the primitive numbers `as` gives exactly the
/// semantics above: int → int truncates bits (after sign extension to 64
/// bits the low bits are those of the direct cast), float → int saturates
/// with NaN → 0, int/float → float rounds to nearest.
macro_rules! impl_cast_to {
    ($(|$v:ident| $i:expr, $u:expr, $f32:expr, $f64:expr, $b:expr => $($t:ident),*;)*) => {$($(
        impl CastTo for $t {
            #[inline(always)]
            fn from_i64($v: i64) -> Self { $i }
            #[inline(always)]
            fn from_u64($v: u64) -> Self { $u }
            #[inline(always)]
            fn from_f32($v: f32) -> Self { $f32 }
            #[inline(always)]
            fn from_f64($v: f64) -> Self { $f64 }
            #[inline(always)]
            fn from_bool($v: bool) -> Self { $b }
        }
    )*)*};
}
impl_cast_to! {
    |v| v as Self, v as Self, v as Self, v as Self, u8::from(v) as Self
        => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64;
    |v| Self::from_f64(v as f64), Self::from_f64(v as f64), Self::from_f32(v), Self::from_f64(v),
        if v { Self::ONE } else { Self::ZERO } => f16, bf16;
    |v| v != 0, v != 0, v != 0.0, v != 0.0, v => bool;
}

/// Conversion source: routes each element type to the matching `CastTo`
/// constructor.
pub trait CastFrom: Copy + Send + Sync + 'static {
    fn cast<D: CastTo>(self) -> D;
}

macro_rules! impl_cast_from {
    ($via:ident, $ctor:ident: $($t:ident),*) => {$(
        impl CastFrom for $t {
            #[inline(always)]
            fn cast<D: CastTo>(self) -> D { D::$ctor($via::from(self)) }
        }
    )*};
}
impl_cast_from!(i64, from_i64: i8, i16, i32, i64);
impl_cast_from!(u64, from_u64: u8, u16, u32, u64);
impl_cast_from!(f32, from_f32: f32, f16, bf16);
impl_cast_from!(f64, from_f64: f64);
impl_cast_from!(bool, from_bool: bool);

/// Integer-valued constructor, for iota.
pub trait FromIndex: Copy {
    fn from_index(i: usize) -> Self;
}

macro_rules! impl_from_index {
    ($($t:ident),*) => {$(
        impl FromIndex for $t {
            #[inline(always)]
            fn from_index(i: usize) -> Self { <$t as CastTo>::from_u64(i as u64) }
        }
    )*};
}
impl_from_index!(i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64);

/// Complex indices: the index as the real part.
impl<T: FromIndex + num_traits::Zero> FromIndex for num_complex::Complex<T> {
    #[inline(always)]
    fn from_index(i: usize) -> Self {
        num_complex::Complex::new(T::from_index(i), T::zero())
    }
}

/// Typed access to the buffer variant of an element type (the public
/// [`crate::array::Element`]).
pub use crate::array::Element as BufElem;

/// Expands `$body` once per real numeric or bool dtype with `$T` bound (as
/// a type alias) to its element type; the remaining match arms (complex,
/// float0, key) follow.
macro_rules! for_each_dtype {
    ($dt:expr, $T:ident => $body:expr, $($rest:tt)*) => {
        $crate::prims::kernel::common::for_each_dtype!(@arms $dt, $T, $body, [$($rest)*], Bool: bool, I8: i8, I16: i16,
            I32: i32, I64: i64, U8: u8, U16: u16, U32: u32, U64: u64, F16: half::f16,
            BF16: half::bf16, F32: f32, F64: f64)
    };
    (@with_complex $dt:expr, $T:ident => $body:expr, $($rest:tt)*) => {
        $crate::prims::kernel::common::for_each_dtype!(@arms $dt, $T, $body, [$($rest)*], Bool: bool, I8: i8, I16: i16,
            I32: i32, I64: i64, U8: u8, U16: u16, U32: u32, U64: u64, F16: half::f16,
            BF16: half::bf16, F32: f32, F64: f64, C64: $crate::array::C32,
            C128: $crate::array::C64)
    };
    (@arms $dt:expr, $T:ident, $body:expr, [$($rest:tt)*], $($v:ident: $t:ty),*) => {
        match $dt {
            $(DType::$v => {
                type $T = $t;
                $body
            })*
            $($rest)*
        }
    };
}
pub(crate) use for_each_dtype;

/// [`for_each_dtype`] over the complex dtypes too, for data movement (the
/// body copies elements and never orders or converts them); the remaining
/// arms are float0 and key.
macro_rules! for_each_element {
    ($dt:expr, $T:ident => $body:expr, $($rest:tt)*) => {
        $crate::prims::kernel::common::for_each_dtype!(@with_complex $dt, $T => $body, $($rest)*)
    };
}
pub(crate) use for_each_element;

/// The typed slice of `b`, or a dtype error naming `prim`.
#[inline(always)]
pub fn typed<'a, T: BufElem>(prim: &'static str, b: &'a Buffer) -> crate::error::Result<&'a [T]> {
    T::slice(b).ok_or_else(|| bad_dtype(prim, &[b.dtype()]))
}
