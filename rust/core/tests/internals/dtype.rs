//! Tests of `dtype`'s internals (reached through `microjax::internals`).

use microjax::internals::dtype::*;
use microjax::*;

#[test]
fn names_round_trip() {
    for d in ALL_DTYPES {
        assert_eq!(DType::from_name(d.name()), Ok(d));
        assert_eq!(DType::from_name(d.short_name()), Ok(d));
    }
    assert!(matches!(
        DType::from_name("complex32"),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn complex_facts() {
    assert_eq!(DType::from_name("c64"), Ok(DType::C64));
    assert_eq!(DType::from_name("complex128"), Ok(DType::C128));
    assert_eq!((DType::C64.itemsize(), DType::C128.itemsize()), (8, 16));
    assert_eq!((DType::C64.kind(), DType::C128.kind()), ('c', 'c'));
    assert_eq!(DType::C128.canonicalize(false), DType::C64);
    assert_eq!(DType::C128.real_dtype(), DType::F64);
    assert_eq!(DType::BF16.complex_dtype(), Some(DType::C64));
    assert_eq!(DType::I32.complex_dtype(), None);
    assert!(DType::C64.is_inexact() && !DType::C64.is_numeric() && !DType::C64.is_float());
}
