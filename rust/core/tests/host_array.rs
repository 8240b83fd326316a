//! Typed access to host arrays: `HostArray::from_vec`, `as_slice`,
//! `to_vec` for every element type, and the errors for a wrong type.

use microjax::{Buffer, DType, Element, Error, HostArray, C32, C64};

fn round_trip<T: Element + PartialEq + std::fmt::Debug>(values: Vec<T>, dtype: DType) {
    let n = values.len();
    let a = HostArray::from_vec(vec![n], values.clone()).unwrap();
    assert_eq!(a.dtype(), dtype);
    assert_eq!(T::DTYPE, dtype);
    assert_eq!(a.shape(), &[n]);
    assert_eq!(a.as_slice::<T>().unwrap(), values.as_slice());
    assert_eq!(a.to_vec::<T>().unwrap(), values);
}

#[test]
fn every_element_type_round_trips() {
    use half::{bf16, f16};
    round_trip(vec![true, false, true], DType::Bool);
    round_trip(vec![-3i8, 0, 127], DType::I8);
    round_trip(vec![-3i16, 0, 32767], DType::I16);
    round_trip(vec![-3i32, 0, i32::MAX], DType::I32);
    round_trip(vec![-3i64, 0, i64::MIN], DType::I64);
    round_trip(vec![0u8, 255], DType::U8);
    round_trip(vec![0u16, 65535], DType::U16);
    round_trip(vec![0u32, u32::MAX], DType::U32);
    round_trip(vec![0u64, u64::MAX], DType::U64);
    round_trip(vec![f16::from_f32(1.5), f16::from_f32(-2.0)], DType::F16);
    round_trip(vec![bf16::from_f32(1.5), bf16::from_f32(-2.0)], DType::BF16);
    round_trip(vec![1.5f32, -0.0, f32::INFINITY], DType::F32);
    round_trip(vec![1.5f64, -0.0, f64::MIN_POSITIVE], DType::F64);
    round_trip(vec![C32::new(1.0, -2.0), C32::new(0.5, 3.0)], DType::C64);
    round_trip(vec![C64::new(1.0, -2.0), C64::new(0.5, 3.0)], DType::C128);
}

#[test]
fn a_matrix_reads_back_row_major() {
    let a = HostArray::from_vec(vec![2, 3], (0..6).map(|i| i as f32).collect()).unwrap();
    assert_eq!(
        a.as_slice::<f32>().unwrap(),
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    // The same elements as `HostArray::new` with a buffer built by hand.
    let b = HostArray::new(
        vec![2, 3],
        Buffer::from(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0]),
    )
    .unwrap();
    assert_eq!(a.as_slice::<f32>().unwrap(), b.as_slice::<f32>().unwrap());
}

#[test]
fn the_wrong_element_type_is_a_dtype_error() {
    let a = HostArray::from_vec(vec![2], vec![1.0f32, 2.0]).unwrap();
    let err = a.as_slice::<f64>().unwrap_err();
    assert!(matches!(err, Error::DType { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("float32") && msg.contains("float64"), "{msg}");
    assert!(matches!(a.to_vec::<i32>(), Err(Error::DType { .. })));
    // complex64 is not a pair of f32 for this accessor
    let c = HostArray::from_vec(vec![1], vec![C32::new(1.0, 2.0)]).unwrap();
    assert!(c.as_slice::<f32>().is_err());
    // a float0 array has no element slice
    let z = HostArray::new(vec![2], Buffer::Float0(2)).unwrap();
    assert!(z.as_slice::<bool>().is_err());
}

#[test]
fn a_length_that_does_not_fit_the_shape_is_refused() {
    let err = HostArray::from_vec(vec![3], vec![1i32, 2]).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    assert!(HostArray::from_vec(vec![2, 0], Vec::<f32>::new()).is_ok());
    assert!(HostArray::from_vec(vec![], vec![7u8]).is_ok());
    assert!(HostArray::from_vec(vec![usize::MAX, 2], vec![1u8]).is_err());
}
