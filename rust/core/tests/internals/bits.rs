//! Tests of `prims::bits`'s internals (reached through `microjax::internals`).

use microjax::internals::prims_bits::*;
use microjax::*;

/// Values recorded from JAX 0.10.2 (`lax.reduce_precision` on float32).
#[test]
fn reduce_precision_matches_recorded_jax() {
    let xs = [
        1.0f32,
        -2.7e-20,
        6.5e4,
        65520.0,
        2.5,
        1.011_718_8,
        1e-45,
        f32::INFINITY,
    ];
    let run = |e, m| {
        let out = reduce_precision_kernel(&Buffer::F32(xs.to_vec().into()), e, m);
        match out {
            Ok(Buffer::F32(v)) => v.to_vec(),
            _ => Vec::new(),
        }
    };
    assert_eq!(
        run(5, 10),
        vec![
            1.0,
            -0.0,
            64992.0,
            f32::INFINITY,
            2.5,
            1.011_718_8,
            0.0,
            f32::INFINITY
        ]
    );
    assert_eq!(
        run(8, 0),
        // -2.7e-20 rounds to -2^-65 with no mantissa bits
        vec![
            1.0,
            -(2f32.powi(-65)),
            65536.0,
            65536.0,
            2.0,
            1.0,
            0.0,
            f32::INFINITY
        ]
    );
    assert_eq!(
        run(2, 1),
        vec![
            1.0,
            -0.0,
            f32::INFINITY,
            f32::INFINITY,
            2.0,
            1.0,
            0.0,
            f32::INFINITY
        ]
    );
}

#[test]
fn mulhi_is_the_high_half() {
    let a = Buffer::I32(vec![-5, 7, 1 << 30, i32::MIN].into());
    let b = Buffer::I32(vec![3, i32::MAX, 8, i32::MIN].into());
    match mulhi_kernel(&a, &b) {
        Ok(Buffer::I32(v)) => assert_eq!(v.to_vec(), vec![-1, 3, 2, 1 << 30]),
        _ => panic!("mulhi of int32 gives int32"),
    }
    let a = Buffer::U8(vec![255, 17].into());
    let b = Buffer::U8(vec![255, 16].into());
    match mulhi_kernel(&a, &b) {
        Ok(Buffer::U8(v)) => assert_eq!(v.to_vec(), vec![254, 1]),
        _ => panic!("mulhi of uint8 gives uint8"),
    }
}
