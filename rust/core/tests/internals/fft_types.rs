//! Tests of `prims::fft`'s internals (reached through `microjax::internals`).

use microjax::internals::prims_fft::*;

#[test]
fn fft_type_codes_round_trip() {
    for t in [FftType::Fft, FftType::Ifft, FftType::Rfft, FftType::Irfft] {
        assert_eq!(FftType::from_code(t.code()), Some(t));
    }
    assert_eq!(FftType::from_code(4), None);
}
