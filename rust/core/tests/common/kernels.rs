//! Array and evaluation helpers shared by the kernel test files.
use super::eval;
use microjax::{Buffer, HostArray, Primitive};

pub fn arr<T>(shape: &[usize], v: Vec<T>) -> HostArray
where
    Vec<T>: Into<Buffer>,
{
    HostArray::new(shape.to_vec(), v.into()).unwrap()
}

/// An i32 array of `shape` holding `v`.
pub fn i32_array(shape: &[usize], v: Vec<i32>) -> HostArray {
    arr(shape, v)
}

/// A u32 array of `shape` holding `v`.
pub fn u32_array(shape: &[usize], v: Vec<u32>) -> HostArray {
    arr(shape, v)
}

pub fn scalar<T>(v: T) -> HostArray
where
    Vec<T>: Into<Buffer>,
{
    arr(&[], vec![v])
}

pub fn run(p: Primitive, args: &[&HostArray]) -> HostArray {
    let mut outs = eval(&p, args).unwrap_or_else(|e| panic!("{p}: {e}"));
    assert_eq!(outs.len(), 1);
    outs.pop().unwrap()
}

/// The SIMD levels this machine runs, for bit-identity tests across them:
/// always Scalar, then AVX2 and AVX-512 where the CPU has them.
pub fn simd_levels() -> Vec<microjax::internals::prims_kernel_vmath::SimdLevel> {
    use microjax::internals::prims_kernel_vmath::{detected_level, SimdLevel};
    let best = detected_level();
    [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512]
        .into_iter()
        .filter(|&l| l == SimdLevel::Scalar || best != SimdLevel::Scalar)
        .filter(|&l| l != SimdLevel::Avx512 || best == SimdLevel::Avx512)
        .collect()
}
