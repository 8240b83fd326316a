//! Tests of `array::budget`'s internals (reached through `microjax::internals`).

use microjax::internals::array_budget::*;
use microjax::*;

#[test]
fn bytes_never_overflow() {
    assert_eq!(bytes_of(3, DType::F32), 12);
    assert_eq!(bytes_of(usize::MAX, DType::F64), u128::from(u64::MAX) * 8);
    assert_eq!(bytes_of(usize::MAX, DType::Float0), 0);
}

#[test]
fn default_is_positive() {
    assert!(default_max_buffer_bytes() > 0);
    assert!(set_max_buffer_bytes(Some(0)).is_err());
}

#[test]
fn absurd_shapes_are_errors() {
    assert!(matches!(
        check_shape("zeros", &[1 << 40, 1 << 40], DType::F32),
        Err(Error::Overflow { .. })
    ));
    assert!(matches!(
        check_shape("zeros", &[1 << 62], DType::F32),
        Err(Error::AllocationTooLarge { .. })
    ));
    assert!(check_shape("zeros", &[0, usize::MAX], DType::F32).is_ok());
    assert!(matches!(
        filled("zeros", DType::F64, 0.0f64, usize::MAX),
        Err(Error::AllocationTooLarge { .. })
    ));
}
