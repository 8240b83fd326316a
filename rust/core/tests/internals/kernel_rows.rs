//! Tests of `prims::kernel::rows`'s internals (reached through `microjax::internals`).

use microjax::internals::prims_kernel_rows::*;
use microjax::DType;
use microjax::*;

#[test]
fn rows_round_trip() {
    let x = HostArray::new(vec![3, 2], Buffer::I32(vec![1, 2, 3, 4, 5, 6].into())).unwrap();
    let mut out = Buffer::zeros(DType::I32, 6).unwrap();
    for i in 0..3 {
        let r = take_row(&x, i).unwrap();
        assert_eq!(r.shape(), &[2]);
        write_row(&mut out, 2 - i, &r).unwrap();
    }
    assert!(matches!(out, Buffer::I32(ref v) if v == &[5, 6, 3, 4, 1, 2]));
    assert!(take_row(&x, 3).is_err());
    let wrong = HostArray::new(vec![2], Buffer::F32(vec![0.0, 1.0].into())).unwrap();
    assert!(write_row(&mut out, 0, &wrong).is_err());
    assert!(write_row(&mut out, 3, &take_row(&x, 0).unwrap()).is_err());
}

#[test]
fn complex_rows_round_trip() {
    use microjax::array::C32;
    let vals: Vec<C32> = (0..6).map(|k| C32::new(k as f32, -(k as f32))).collect();
    let x = HostArray::new(vec![3, 2], Buffer::C64(vals.clone().into())).unwrap();
    let mut out = Buffer::zeros(DType::C64, 6).unwrap();
    for i in 0..3 {
        write_row(&mut out, 2 - i, &take_row(&x, i).unwrap()).unwrap();
    }
    let want: Vec<C32> = [4, 5, 2, 3, 0, 1].iter().map(|&k| vals[k]).collect();
    assert!(matches!(out, Buffer::C64(ref v) if v[..] == want[..]));
    let mut row = Buffer::zeros(DType::C64, 2).unwrap();
    assert!(read_row_into(&x, 1, &mut row).unwrap());
    assert!(matches!(row, Buffer::C64(ref v) if v[..] == vals[2..4]));
}
