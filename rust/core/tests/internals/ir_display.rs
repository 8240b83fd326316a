//! Tests of `ir::display`'s internals (reached through `microjax::internals`).

use microjax::internals::ir_display::*;
use microjax::*;

#[test]
fn names() {
    assert_eq!(alpha_name(0), "a");
    assert_eq!(alpha_name(25), "z");
    assert_eq!(alpha_name(26), "ba");
    assert_eq!(alpha_name(27), "bb");
    assert_eq!(alpha_name(26 * 26), "baa");
}

#[test]
fn python_float_repr() {
    let r = |v: f64, d: DType| py_float_repr(v, d);
    assert_eq!(r(0.1, DType::F32), "0.1");
    assert_eq!(r(0.1, DType::F64), "0.1");
    assert_eq!(r(0.1, DType::F16), "0.1");
    assert_eq!(r(0.1, DType::BF16), "0.1");
    assert_eq!(r(f64::from(0.1f32), DType::F64), "0.10000000149011612");
    assert_eq!(r(3.0, DType::F32), "3.0");
    assert_eq!(r(100.0, DType::F32), "100.0");
    assert_eq!(r(123.25, DType::F64), "123.25");
    assert_eq!(r(1e16, DType::F64), "1e+16");
    assert_eq!(r(1e15, DType::F64), "1000000000000000.0");
    assert_eq!(r(1e-5, DType::F64), "1e-05");
    assert_eq!(r(1.5e-5, DType::F32), "1.5e-05");
    assert_eq!(r(1e-4, DType::F64), "0.0001");
    assert_eq!(r(0.00012, DType::F64), "0.00012");
    assert_eq!(r(-2.5, DType::F64), "-2.5");
    assert_eq!(r(1e300, DType::F64), "1e+300");
    assert_eq!(r(1e300, DType::F32), "inf");
    assert_eq!(r(-0.0, DType::F32), "-0.0");
    assert_eq!(r(f64::NAN, DType::F32), "nan");
    assert_eq!(r(f64::NEG_INFINITY, DType::F64), "-inf");
    assert_eq!(r(65504.0, DType::F16), "65500.0");
    assert_eq!(r(1.0 / 3.0, DType::F16), "0.3333");
    assert_eq!(r(1.0 / 3.0, DType::F32), "0.33333334");
    assert_eq!(r(1.0 / 3.0, DType::BF16), "0.334");
}
