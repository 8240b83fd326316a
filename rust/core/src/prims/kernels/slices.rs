//! Allocation-free f32/f64 slice kernels for the compiled executor's typed
//! fusion path: `out = op(a, b)` / `out = x**y` written into a caller's
//! buffer, each operand a slice or a splatted scalar.
//!
//! Every element is computed by the same function the reference kernels
//! use (`FloatElem`'s `add`, `max_nan`, ..., `super::elementwise`'s
//! `integer_pow` expansion, [`super::vmath`] for unary ops), so results are
//! bit-identical to [`crate::prims::kernel::eval`]. The loops run inside a
//! `pulp` dispatch, so they vectorize at the CPU's widest width.

use super::common::FloatElem;
use super::vmath;
use crate::prims::{BinaryOp, CmpOp, UnaryOp};
use std::marker::PhantomData;

/// An operand of a slice kernel.
#[derive(Debug, Clone, Copy)]
pub enum Operand<'a, T> {
    /// One value per output element.
    Slice(&'a [T]),
    /// One value for every element.
    Splat(T),
}

/// The float types with slice kernels.
pub trait Lane: FloatElem + Default {
    /// `vmath`'s `out = op(x)`; false when `op` has no vector kernel.
    fn unary(op: UnaryOp, x: &[Self], out: &mut [Self]) -> bool;
    /// In-place [`Lane::unary`].
    fn unary_inplace(op: UnaryOp, v: &mut [Self]) -> bool;
}

impl Lane for f32 {
    fn unary(op: UnaryOp, x: &[f32], out: &mut [f32]) -> bool {
        vmath::unary_f32(op, x, out)
    }
    fn unary_inplace(op: UnaryOp, v: &mut [f32]) -> bool {
        vmath::unary_f32_inplace(op, v)
    }
}

impl Lane for f64 {
    fn unary(op: UnaryOp, x: &[f64], out: &mut [f64]) -> bool {
        vmath::unary_f64(op, x, out)
    }
    fn unary_inplace(op: UnaryOp, v: &mut [f64]) -> bool {
        vmath::unary_f64_inplace(op, v)
    }
}

/// Whether [`binary`] implements `op`.
pub fn supports_binary(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Add
            | BinaryOp::Sub
            | BinaryOp::Mul
            | BinaryOp::Div
            | BinaryOp::Max
            | BinaryOp::Min
    )
}

/// Whether [`unary`] implements `op`.
pub fn supports_unary(op: UnaryOp) -> bool {
    vmath::supports(op)
}

/// `out = op(x)`; false (and `out` untouched) when `op` has no vector
/// kernel. A splatted operand fills `out` first and is transformed in
/// place (bit-identical: the kernels are per element).
pub fn unary<T: Lane>(op: UnaryOp, x: Operand<'_, T>, out: &mut [T]) -> bool {
    if !vmath::supports(op) {
        return false;
    }
    match x {
        Operand::Slice(s) => T::unary(op, s, out),
        Operand::Splat(v) => {
            out.fill(v);
            T::unary_inplace(op, out)
        }
    }
}

/// A two-operand per-element function as a type, so it inlines into the
/// loop compiled with the target features.
trait Bin<T> {
    fn eval(a: T, b: T) -> T;
}

macro_rules! bin_kernels {
    ($($k:ident($a:ident, $b:ident) => $e:expr;)*) => {$(
        struct $k;
        impl<T: FloatElem> Bin<T> for $k {
            #[inline(always)]
            fn eval($a: T, $b: T) -> T {
                $e
            }
        }
    )*};
}

bin_kernels! {
    AddK(a, b) => a.add(b);
    SubK(a, b) => a.sub(b);
    MulK(a, b) => a.mul(b);
    DivK(a, b) => a.div(b);
    MaxK(a, b) => a.max_nan(b);
    MinK(a, b) => a.min_nan(b);
    // Comparisons as 1 / 0 in the operands' type: the value
    // `convert_element_type(cmp(a, b), T)` has (the typed pass keeps a
    // comparison read only by that conversion in a float register).
    EqK(a, b) => if a == b { T::ONE } else { T::ZERO };
    NeK(a, b) => if a != b { T::ONE } else { T::ZERO };
    LtK(a, b) => if a < b { T::ONE } else { T::ZERO };
    LeK(a, b) => if a <= b { T::ONE } else { T::ZERO };
    GtK(a, b) => if a > b { T::ONE } else { T::ZERO };
    GeK(a, b) => if a >= b { T::ONE } else { T::ZERO };
}

vmath::scalar_simd_loop! {
    /// `out[i] = K(a[i], b[i])` with either side possibly splatted.
    ZipLoop<'a, T, K: Bin> { a: Operand<'a, T>, b: Operand<'a, T>, out: &'a mut [T] }
    |this| {
        match (this.a, this.b) {
            (Operand::Slice(a), Operand::Slice(b)) => {
                for ((o, &x), &y) in this.out.iter_mut().zip(a).zip(b) {
                    *o = K::eval(x, y);
                }
            }
            (Operand::Slice(a), Operand::Splat(y)) => {
                for (o, &x) in this.out.iter_mut().zip(a) {
                    *o = K::eval(x, y);
                }
            }
            (Operand::Splat(x), Operand::Slice(b)) => {
                for (o, &y) in this.out.iter_mut().zip(b) {
                    *o = K::eval(x, y);
                }
            }
            (Operand::Splat(x), Operand::Splat(y)) => this.out.fill(K::eval(x, y)),
        }
    }
}

fn zip<T: Lane, K: Bin<T>>(a: Operand<'_, T>, b: Operand<'_, T>, out: &mut [T]) {
    vmath::run(ZipLoop::<T, K> {
        a,
        b,
        out,
        kernel: PhantomData,
    });
}

/// `out = op(a, b)` over the common length; false (and `out` untouched)
/// when [`supports_binary`] rejects `op`.
pub fn binary<T: Lane>(op: BinaryOp, a: Operand<'_, T>, b: Operand<'_, T>, out: &mut [T]) -> bool {
    match op {
        BinaryOp::Add => zip::<T, AddK>(a, b, out),
        BinaryOp::Sub => zip::<T, SubK>(a, b, out),
        BinaryOp::Mul => zip::<T, MulK>(a, b, out),
        BinaryOp::Div => zip::<T, DivK>(a, b, out),
        BinaryOp::Max => zip::<T, MaxK>(a, b, out),
        BinaryOp::Min => zip::<T, MinK>(a, b, out),
        _ => return false,
    }
    true
}

/// `out = op(a, b) ? 1 : 0` over the common length: the comparison (IEEE,
/// as the reference kernel compares) converted to the operands' type.
pub fn compare_as_float<T: Lane>(op: CmpOp, a: Operand<'_, T>, b: Operand<'_, T>, out: &mut [T]) {
    match op {
        CmpOp::Eq => zip::<T, EqK>(a, b, out),
        CmpOp::Ne => zip::<T, NeK>(a, b, out),
        CmpOp::Lt => zip::<T, LtK>(a, b, out),
        CmpOp::Le => zip::<T, LeK>(a, b, out),
        CmpOp::Gt => zip::<T, GtK>(a, b, out),
        CmpOp::Ge => zip::<T, GeK>(a, b, out),
    }
}

/// `out = x**y` by the reference kernel's repeated squaring.
pub fn integer_pow<T: Lane>(y: i32, x: Operand<'_, T>, out: &mut [T]) {
    match x {
        Operand::Slice(s) => {
            for (o, &v) in out.iter_mut().zip(s) {
                *o = super::elementwise::powi_sq(v, y);
            }
        }
        Operand::Splat(v) => out.fill(super::elementwise::powi_sq(v, y)),
    }
}
