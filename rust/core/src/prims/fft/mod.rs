//! Fast Fourier transforms: `jax.lax.fft`'s four transform types over the
//! trailing one to three axes of an array.
//!
//! The CPU kernels ([`kernels`]) run rustfft's plans (realfft's for the
//! real-input and real-output transforms), kept in a bounded process-wide
//! cache ([`plans`]); results do not depend on the thread count.

pub mod kernels;
pub mod plans;

pub use kernels::{c2c, c2r, half_len, r2c};
pub use plans::FftFloat;
