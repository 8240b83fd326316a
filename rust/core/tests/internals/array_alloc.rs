//! Tests of `array::alloc`'s internals (reached through `microjax::internals`).

use microjax::internals::array_alloc::*;
use microjax::Result;
use microjax::*;

fn refused_err<T: std::fmt::Debug>(r: Result<T>) -> bool {
    matches!(r, Err(Error::AllocationTooLarge { .. }))
}

#[test]
fn huge_requests_are_errors() {
    // More than isize::MAX bytes: refused by every allocator.
    let n = usize::MAX / 4;
    assert!(refused_err(with_capacity::<u64>("t", n)));
    assert!(refused_err(filled("t", 0.0f64, n)));
    assert!(refused_err(from_iter("t", 0..n)));
    assert!(refused_err(try_from_iter("t", (0..n).map(Ok))));
    let mut v = vec![1u32];
    assert!(refused_err(reserve("t", &mut v, usize::MAX / 2)));
    assert_eq!(v, [1]);
}

#[test]
fn values_are_the_plain_forms() {
    assert_eq!(filled("t", 7u8, 3).ok(), Some(vec![7, 7, 7]));
    assert_eq!(
        from_iter("t", (0..4).map(|i| i * 2)).ok(),
        Some(vec![0, 2, 4, 6])
    );
    assert_eq!(to_vec("t", &[1, 2]).ok(), Some(vec![1, 2]));
    let e = try_from_iter("t", [Ok(1), Err(Error::Cancelled), Ok(3)]);
    assert!(matches!(e, Err(Error::Cancelled)));
    let e = with_capacity::<u8>("t", 5).map(|v| v.capacity() >= 5);
    assert_eq!(e.ok(), Some(true));
}
