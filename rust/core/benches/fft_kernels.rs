//! Times the CPU FFT kernels (`prims::fft`) on the sizes of the Python
//! benchmarks (benches/run.py: `rfft_2e20`, `fft2_1024`), serial and on
//! rayon's pool:
//!
//!     cargo bench -p microjax --bench fft_kernels
#![allow(
    clippy::unwrap_used,
    clippy::arithmetic_side_effects,
    clippy::cast_precision_loss,
    clippy::indexing_slicing
)]

use microjax::prims::fft::{c2c, c2r, half_len, r2c};
use rustfft::num_complex::Complex;
use std::time::Instant;

/// The median seconds of `reps` runs of `f` (after one warm-up run).
fn median_seconds(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn main() {
    let n = 1usize << 20;
    let x: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    let mut spec = vec![Complex::new(0.0f32, 0.0); half_len(n)];
    let mut back = vec![0.0f32; n];
    for parallel in [false, true] {
        let t = median_seconds(11, || r2c(&x, 1, &[n], &mut spec, parallel).unwrap());
        println!("rfft f32[2^20] (parallel={parallel}): {:.3} ms", t * 1e3);
        let t = median_seconds(11, || c2r(&spec, 1, &[n], &mut back, parallel).unwrap());
        println!(
            "irfft -> f32[2^20] (parallel={parallel}): {:.3} ms",
            t * 1e3
        );
    }
    let img: Vec<Complex<f32>> = (0..1024 * 1024)
        .map(|i| {
            let re = ((i * 31) % 97) as f32 / 48.0 - 1.0;
            Complex::new(re, ((i * 17) % 89) as f32 / 44.0 - 1.0)
        })
        .collect();
    for parallel in [false, true] {
        let t = median_seconds(11, || {
            let mut y = img.clone();
            c2c(&mut y, 1, &[1024, 1024], false, parallel).unwrap();
        });
        println!(
            "fft2 c64[1024,1024] (parallel={parallel}, with a copy): {:.3} ms",
            t * 1e3
        );
    }
}
