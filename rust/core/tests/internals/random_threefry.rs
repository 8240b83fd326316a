//! Tests of `prims::random`'s internals (reached through `microjax::internals`).

use microjax::internals::prims_random::threefry2x32;

/// Known-answer vectors of Random123 (`kat_vectors`, threefry2x32_20).
#[test]
fn random123_known_answers() {
    assert_eq!(threefry2x32([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
    assert_eq!(
        threefry2x32([u32::MAX, u32::MAX], [u32::MAX, u32::MAX]),
        [0x1cb9_96fc, 0xbb00_2be7]
    );
    assert_eq!(
        threefry2x32([0x1319_8a2e, 0x0370_7344], [0x243f_6a88, 0x85a3_08d3]),
        [0xc492_3a9c, 0x483d_f7a0]
    );
}
