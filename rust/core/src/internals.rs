//! Not public API. The crate's internal algorithms, reachable by its own
//! integration tests (`tests/internals/`), which check them directly: the
//! LAPACK-compatible factorizations, kernel layouts, the promotion lattice,
//! the canonical text parser. Each module re-exports one module of the crate.
//! Hidden from the documentation; nothing here is stable.

pub mod exec_interp {
    pub use crate::exec::interp::*;
}

pub mod exec_pool {
    pub use crate::exec::pool::*;
}

pub mod exec_cuda_driver {
    pub use crate::exec::cuda::driver::*;
}

pub mod exec_cuda_fft {
    pub use crate::exec::cuda::fft::*;
}

pub mod exec_ctx {
    pub use crate::exec::ctx::*;
}

pub mod array_alloc {
    pub use crate::array::alloc::*;
}

pub mod array_budget {
    pub use crate::array::budget::*;
}

pub mod promote {
    pub use crate::promote::*;
}

pub mod dtype {
    pub use crate::dtype::*;
}

pub mod prims_sort {
    pub use crate::prims::sort::*;
}

pub mod prims_bits {
    pub use crate::prims::bits::*;
}

pub mod prims_linalg_portable {
    pub use crate::prims::linalg::portable::*;
}

pub mod prims_linalg_lapack {
    pub use crate::prims::linalg::lapack::*;
}

pub mod prims_linalg_real_schur {
    pub use crate::prims::linalg::real_schur::*;
}

pub mod prims_linalg_schur {
    pub use crate::prims::linalg::schur::*;
}

pub mod prims_linalg_dense {
    pub use crate::prims::linalg::dense::*;
}

pub mod prims_kernel_dot {
    pub use crate::prims::kernel::dot::*;
}

pub mod prims_kernel_structural {
    pub use crate::prims::kernel::structural::*;
}

pub mod prims_kernel_rows {
    pub use crate::prims::kernel::rows::*;
}

pub mod prims_kernel_math {
    pub use crate::prims::kernel::math::*;
}

pub mod prims_kernel {
    pub use crate::prims::kernel::*;
}

pub mod prims_fft {
    pub use crate::prims::fft::*;
}

pub mod prims_random {
    pub use crate::prims::random::*;
}

pub mod ir_splice {
    pub use crate::ir::splice::*;
}

pub mod ir_rewire {
    pub use crate::ir::rewire::*;
}

pub mod ir_display {
    pub use crate::ir::display::*;
}

pub mod ir_canonical_parser {
    pub use crate::ir::canonical::parser::*;
}

pub mod prims_kernel_vmath {
    pub use crate::prims::kernel::vmath::*;
}

pub mod prims_fft_kernels {
    pub use crate::prims::fft::kernels::*;
}

pub mod prims_kernel_vmath_scalar {
    pub use crate::prims::kernel::vmath::scalar::*;
}

pub mod ir_canonical {
    pub use crate::ir::canonical::*;
}

pub mod prims_fft_plans {
    pub use crate::prims::fft::plans::*;
}
