//! Tests of `prims::sort`'s internals (reached through `microjax::internals`).

use microjax::internals::prims_sort::*;

#[test]
fn float_total_order() {
    let xs = [
        f64::NEG_INFINITY,
        -1.0,
        -0.0,
        0.0,
        1e-300,
        1.0,
        f64::INFINITY,
        f64::NAN,
    ];
    for w in xs.windows(2) {
        let (a, b) = (f64_key(w[0]), f64_key(w[1]));
        if w[0] == 0.0 && w[1] == 0.0 {
            assert_eq!(a, b);
        } else {
            assert!(a < b, "{} !< {}", w[0], w[1]);
        }
    }
    assert_eq!(f64_key(-f64::NAN), f64_key(f64::NAN));
    assert_eq!(f32_key(-0.0), f32_key(0.0));
}

#[test]
fn signed_and_unsigned_order() {
    assert!(signed_key(-5) < signed_key(3));
    assert!(signed_key(i64::MIN) < signed_key(i64::MAX));
}
