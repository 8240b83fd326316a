//! The FFT kernels against a naive DFT (evaluated in f64), known values,
//! round trips and thread-count independence.
#![allow(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::cast_precision_loss
)]

use microjax::internals::prims_fft_kernels::*;
use microjax::internals::prims_fft_plans::FftFloat;
use microjax::prims::fft::plans::MAX_PLANS;
use rustfft::num_complex::Complex;

type C64 = Complex<f64>;

/// Sizes covering powers of two, small and large primes, and composites
/// with prime factors rustfft handles by different algorithms.
const SIZES: &[usize] = &[
    1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 25, 31, 32, 60, 97, 100, 127, 128, 210, 243,
    256, 257, 1000, 1009, 1024,
];

/// Deterministic pseudo-random values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn complex_values(n: usize, seed: u64) -> Vec<C64> {
    let re = values(n, seed);
    let im = values(n, seed + 1);
    re.into_iter()
        .zip(im)
        .map(|(r, i)| C64::new(r, i))
        .collect()
}

/// Naive DFT of one strided line: `out[k] = sum_j x[j] e^{∓2πi jk/n}`.
fn naive_line(x: &[C64], inverse: bool) -> Vec<C64> {
    let n = x.len();
    let sign = if inverse { 1.0 } else { -1.0 };
    (0..n)
        .map(|k| {
            x.iter()
                .enumerate()
                .fold(C64::new(0.0, 0.0), |acc, (j, v)| {
                    let phase = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                    acc + v * C64::new(phase.cos(), phase.sin())
                })
        })
        .collect()
}

/// Naive unnormalized multi-dimensional DFT over the trailing `dims` of
/// `batch` rows (one axis at a time).
fn naive(x: &[C64], batch: usize, dims: &[usize], inverse: bool) -> Vec<C64> {
    let mut data = x.to_vec();
    let block: usize = dims.iter().product();
    for (k, &n) in dims.iter().enumerate() {
        let inner: usize = dims[k + 1..].iter().product();
        let outer = batch * block / (n * inner);
        for o in 0..outer {
            for j in 0..inner {
                let idx = |i: usize| o * n * inner + i * inner + j;
                let line: Vec<C64> = (0..n).map(|i| data[idx(i)]).collect();
                for (i, v) in naive_line(&line, inverse).into_iter().enumerate() {
                    data[idx(i)] = v;
                }
            }
        }
    }
    data
}

/// [`naive`], scaled by `1/prod(dims)` for the inverse (the kernels'
/// normalization).
fn naive_normalized(x: &[C64], batch: usize, dims: &[usize], inverse: bool) -> Vec<C64> {
    let mut want = naive(x, batch, dims, inverse);
    if inverse {
        let size = dims.iter().product::<usize>() as f64;
        want.iter_mut().for_each(|v| *v /= size);
    }
    want
}

/// The largest absolute difference of two real vectors.
fn max_abs_err(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max)
}

fn max_rel_err(got: &[C64], want: &[C64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().map(|v| v.norm()).fold(1e-300, f64::max);
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).norm())
        .fold(0.0, f64::max)
        / scale
}

fn to_f32(x: &[C64]) -> Vec<Complex<f32>> {
    x.iter()
        .map(|v| Complex::new(v.re as f32, v.im as f32))
        .collect()
}

fn from_f32(x: &[Complex<f32>]) -> Vec<C64> {
    x.iter()
        .map(|v| C64::new(f64::from(v.re), f64::from(v.im)))
        .collect()
}

#[test]
fn complex_matches_naive_dft_f64_and_f32() {
    for &n in SIZES {
        let batch = 3;
        let x = complex_values(batch * n, n as u64);
        for inverse in [false, true] {
            let want = naive_normalized(&x, batch, &[n], inverse);
            let mut got = x.clone();
            c2c(&mut got, batch, &[n], inverse, true).unwrap();
            assert!(
                max_rel_err(&got, &want) < 1e-13,
                "f64 n={n} inverse={inverse}"
            );
            let mut got32 = to_f32(&x);
            c2c(&mut got32, batch, &[n], inverse, true).unwrap();
            assert!(max_rel_err(&from_f32(&got32), &want) < 5e-6, "f32 n={n}");
        }
    }
}

#[test]
fn known_values() {
    let one = C64::new(1.0, 0.0);
    let z = C64::new(0.0, 0.0);
    let mut impulse = vec![one, z, z, z];
    c2c(&mut impulse, 1, &[4], false, false).unwrap();
    assert_eq!(impulse, vec![one; 4]);
    let mut ones = vec![one; 4];
    c2c(&mut ones, 1, &[4], false, false).unwrap();
    assert_eq!(ones, vec![C64::new(4.0, 0.0), z, z, z]);
    // A unit delay: e^{-2πik/4} = 1, -i, -1, i.
    let mut shifted = vec![z, one, z, z];
    c2c(&mut shifted, 1, &[4], false, false).unwrap();
    let want = [
        one,
        C64::new(0.0, -1.0),
        C64::new(-1.0, 0.0),
        C64::new(0.0, 1.0),
    ];
    assert!(max_rel_err(&shifted, &want) < 1e-15);
    // numpy.fft.rfft([1, 2, 3]) = [6, -1.5+0.8660254j].
    let mut out = vec![z; 2];
    r2c(&[1.0, 2.0, 3.0], 1, &[3], &mut out, false).unwrap();
    let want = [C64::new(6.0, 0.0), C64::new(-1.5, 0.75f64.sqrt())];
    assert!(max_rel_err(&out, &want) < 1e-15);
    // numpy.fft.irfft([6, -1.5+0.8660254j], 3) = [1, 2, 3].
    let mut back = vec![0.0; 3];
    c2r(&want, 1, &[3], &mut back, false).unwrap();
    for (g, w) in back.iter().zip([1.0, 2.0, 3.0]) {
        assert!((g - w).abs() < 1e-15);
    }
}

#[test]
fn multi_dimensional_matches_naive() {
    let shapes: &[&[usize]] = &[
        &[3, 5],
        &[8, 8],
        &[7, 1, 4],
        &[2, 3, 5],
        &[17, 6],
        &[1, 9],
        &[4, 3, 2],
    ];
    for dims in shapes {
        let batch = 2;
        let size: usize = dims.iter().product();
        let x = complex_values(batch * size, size as u64 + 7);
        for inverse in [false, true] {
            let want = naive_normalized(&x, batch, dims, inverse);
            let mut got = x.clone();
            c2c(&mut got, batch, dims, inverse, true).unwrap();
            assert!(
                max_rel_err(&got, &want) < 1e-13,
                "{dims:?} inverse={inverse}"
            );
        }
    }
}

/// The half spectrum (`[..., n/2 + 1]`) of a full one (`[..., n]`).
fn half_of(full: &[C64], n: usize) -> Vec<C64> {
    full.chunks(n)
        .flat_map(|row| row[..half_len(n)].to_vec())
        .collect()
}

/// The shapes of the real-transform tests: odd and even last axes, small
/// and large primes, one to three axes.
const REAL_SHAPES: &[&[usize]] = &[
    &[1],
    &[2],
    &[3],
    &[7],
    &[8],
    &[9],
    &[16],
    &[97],
    &[100],
    &[1009],
    &[4, 6],
    &[5, 7],
    &[3, 4, 5],
];

#[test]
fn real_forward_matches_naive() {
    for dims in REAL_SHAPES {
        let batch = 3;
        let size: usize = dims.iter().product();
        let x = values(batch * size, size as u64);
        let xc: Vec<C64> = x.iter().map(|&r| C64::new(r, 0.0)).collect();
        let want = half_of(&naive(&xc, batch, dims, false), *dims.last().unwrap());
        let mut got = vec![C64::new(0.0, 0.0); want.len()];
        r2c(&x, batch, dims, &mut got, true).unwrap();
        assert!(max_rel_err(&got, &want) < 1e-13, "f64 {dims:?}");
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let mut got32 = vec![Complex::new(0.0f32, 0.0); want.len()];
        r2c(&x32, batch, dims, &mut got32, true).unwrap();
        assert!(max_rel_err(&from_f32(&got32), &want) < 5e-6, "f32 {dims:?}");
    }
}

#[test]
fn real_inverse_matches_naive_and_ignores_edge_imaginary_parts() {
    for dims in REAL_SHAPES {
        let batch = 2;
        let size: usize = dims.iter().product();
        let n = *dims.last().unwrap();
        // A Hermitian full spectrum: the DFT of a real signal.
        let x = values(batch * size, size as u64 + 3);
        let xc: Vec<C64> = x.iter().map(|&r| C64::new(r, 0.0)).collect();
        let mut half = half_of(&naive(&xc, batch, dims, false), n);
        let mut got = vec![0.0; x.len()];
        c2r(&half, batch, dims, &mut got, true).unwrap();
        let err = max_abs_err(&got, &x);
        assert!(err < 1e-13, "{dims:?}: {err}");
        // Imaginary parts at the zero and Nyquist frequencies of the last
        // axis are ignored.
        let m = half_len(n);
        for row in half.chunks_mut(m) {
            row[0].im += 5.0;
            if n % 2 == 0 {
                row[m - 1].im -= 3.0;
            }
        }
        let mut again = vec![0.0; x.len()];
        c2r(&half, batch, dims, &mut again, true).unwrap();
        if dims.len() == 1 {
            assert_eq!(again, got, "{dims:?}");
        }
    }
}

#[test]
fn round_trips_recover_the_input() {
    for &n in SIZES {
        let x = complex_values(2 * n, 99);
        let mut y = x.clone();
        c2c(&mut y, 2, &[n], false, true).unwrap();
        c2c(&mut y, 2, &[n], true, true).unwrap();
        assert!(max_rel_err(&y, &x) < 1e-14, "n={n}");
        let r = values(2 * n, 5);
        let mut spec = vec![C64::new(0.0, 0.0); 2 * half_len(n)];
        r2c(&r, 2, &[n], &mut spec, true).unwrap();
        let mut back = vec![0.0; 2 * n];
        c2r(&spec, 2, &[n], &mut back, true).unwrap();
        let err = max_abs_err(&back, &r);
        assert!(err < 1e-14, "real n={n}: {err}");
    }
}

/// Runs `f` on a fresh rayon pool of `threads` threads.
fn on_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn same_bits_at_any_thread_count() {
    // Large enough for the parallel path ([`PARALLEL_MIN`]), with a strided
    // axis whose column count is not a multiple of the tile.
    let dims = [3usize, 100, 130];
    let size: usize = dims.iter().product();
    assert!(size >= PARALLEL_MIN);
    let x = complex_values(size, 1);
    let run = |parallel: bool| {
        let mut y = x.clone();
        c2c(&mut y, 3, &dims[1..], false, parallel).unwrap();
        y
    };
    let serial = run(false);
    for threads in [1, 2, 3, 8] {
        assert_eq!(on_pool(threads, || run(true)), serial, "{threads} threads");
    }
    let r: Vec<f32> = values(size, 2).into_iter().map(|v| v as f32).collect();
    let real = |parallel: bool| {
        let mut y = vec![Complex::new(0.0f32, 0.0); 3 * 100 * half_len(130)];
        r2c(&r, 3, &dims[1..], &mut y, parallel).unwrap();
        let mut back = vec![0.0f32; size];
        c2r(&y, 3, &dims[1..], &mut back, parallel).unwrap();
        (y, back)
    };
    let serial = real(false);
    for threads in [1, 2, 5] {
        assert!(
            on_pool(threads, || real(true)) == serial,
            "{threads} threads"
        );
    }
}

#[test]
fn empty_and_mismatched_buffers() {
    let mut empty: Vec<C64> = Vec::new();
    c2c(&mut empty, 0, &[4], false, false).unwrap();
    c2c(&mut empty, 3, &[0, 4], true, false).unwrap();
    let mut short = vec![C64::new(0.0, 0.0); 3];
    assert!(c2c(&mut short, 1, &[4], false, false).is_err());
    assert!(c2c(&mut short, usize::MAX, &[4], false, false).is_err());
    let mut out = vec![C64::new(1.0, 0.0); 2];
    assert!(r2c(&[1.0, 2.0], 1, &[3], &mut out, false).is_err());
    assert!(r2c(&[1.0, 2.0, 3.0], 1, &[], &mut out, false).is_err());
    // A zero-length real axis has one (zero) frequency.
    let mut one = vec![C64::new(1.0, 0.0); 2];
    r2c::<f64>(&[], 2, &[0], &mut one, false).unwrap();
    assert_eq!(one, vec![C64::new(0.0, 0.0); 2]);
    let mut none: Vec<f64> = Vec::new();
    c2r(&one, 2, &[0], &mut none, false).unwrap();
}

#[test]
fn plan_cache_stays_bounded() {
    let plans = f64::plans();
    for n in 1..(2 * MAX_PLANS + 5) {
        let mut x = complex_values(n, 0);
        c2c(&mut x, 1, &[n], false, false).unwrap();
    }
    assert!(plans.len() <= 3 * MAX_PLANS);
    assert!(!plans.is_empty());
}
