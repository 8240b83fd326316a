//! Tests of `prims::kernel::dot`'s internals (reached through `microjax::internals`).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation
)]

use microjax::internals::prims_kernel_dot::*;
use microjax::*;

/// The register-blocked kernel equals a naive k-ordered dot product bit
/// for bit, on full blocks, partial blocks and tails, one row and many
/// (even and odd counts), f32 and f64.
#[test]
fn register_kernel_matches_the_k_ordered_loop() {
    let val = |i: usize| ((i.wrapping_mul(2_654_435_761) >> 7) % 2001) as f64 / 337.0 - 2.9;
    for (bt, m, k, n) in [
        (1, 1, 64, 64),
        (2, 3, 7, 130),
        (1, 2, 1, 65),
        (1, 1, 33, 200),
        (3, 1, 5, 5),
        (1, 32, 64, 64),
        (2, 5, 9, 67),
        (1, 7, 3, 129),
    ] {
        let l: Vec<f64> = (0..bt * m * k).map(val).collect();
        let r: Vec<f64> = (0..bt * k * n).map(|i| val(i + 99)).collect();
        let sz = Sizes { b: bt, m, k, n };
        let got64 = register_matmul(&l, &r, sz).unwrap();
        let l32: Vec<f32> = l.iter().map(|&x| x as f32).collect();
        let r32: Vec<f32> = r.iter().map(|&x| x as f32).collect();
        let got32 = register_matmul(&l32, &r32, sz).unwrap();
        for bi in 0..bt {
            for i in 0..m {
                for j in 0..n {
                    let (mut a64, mut a32) = (0.0f64, 0.0f32);
                    for kk in 0..k {
                        let (x, y) = (bi * m * k + i * k + kk, bi * k * n + kk * n + j);
                        a64 += l[x] * r[y];
                        a32 += l32[x] * r32[y];
                    }
                    let o = bi * m * n + i * n + j;
                    assert_eq!(got64[o].to_bits(), a64.to_bits(), "{bt} {m} {k} {n}");
                    assert_eq!(got32[o].to_bits(), a32.to_bits(), "{bt} {m} {k} {n}");
                }
            }
        }
    }
}

/// Register-kernel products whose output has at least 65,536 elements are
/// split over the threads (whole batches, or a single batch's rows) and
/// give the one-thread bits, `0 + a*x` k-ordered sums, in every element:
/// a batched outer product (the per-example gradients of a linear model),
/// a batched product with k > 1 split unevenly, one wide product split by
/// rows, eager and planned into a stale output.
#[test]
fn register_kernel_split_over_threads_keeps_the_one_thread_bits() {
    use microjax::exec::ExecCtx;
    use microjax::prims::kernel::{self, PackedDot};
    use microjax::prims::{DotGeneral, Primitive};
    let val = |i: usize| ((i.wrapping_mul(2_654_435_761) >> 7) % 2001) as f32 / 337.0 - 2.9;
    let batched = || DotDims {
        lhs_contract: vec![2],
        rhs_contract: vec![1],
        lhs_batch: vec![0],
        rhs_batch: vec![0],
    };
    let single = || DotDims {
        lhs_contract: vec![1],
        rhs_contract: vec![0],
        lhs_batch: vec![],
        rhs_batch: vec![],
    };
    for (bt, m, k, n, dims) in [
        (1024, 1, 1, 256, batched()),
        (7, 2, 3, 4800, batched()),
        (1, 4, 4, 16384, single()),
    ] {
        let l: Vec<f32> = (0..bt * m * k).map(val).collect();
        // Negative zeros: `0 + (-0)` is +0 in the k-ordered sums.
        let r: Vec<f32> = (0..bt * k * n)
            .map(|i| if i % 97 == 0 { -0.0 } else { val(i + 99) })
            .collect();
        let want: Vec<u32> = (0..bt * m * n)
            .map(|o| {
                let (bi, i, j) = (o / (m * n), o / n % m, o % n);
                (0..k)
                    .fold(0.0f32, |acc, kk| {
                        acc + l[bi * m * k + i * k + kk] * r[bi * k * n + kk * n + j]
                    })
                    .to_bits()
            })
            .collect();
        let (ls, rs) = if bt == 1 {
            (vec![m, k], vec![k, n])
        } else {
            (vec![bt, m, k], vec![bt, k, n])
        };
        let la = HostArray::new(ls.clone(), Buffer::F32(l.clone().into())).unwrap();
        let ra = HostArray::new(rs.clone(), Buffer::F32(r.clone().into())).unwrap();
        let prim = Primitive::DotGeneral(DotGeneral {
            dims: dims.clone(),
            preferred_element_type: None,
        });
        let bits = |b: &Buffer| match b {
            Buffer::F32(v) => v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>(),
            _ => panic!("f32 expected"),
        };
        let plan = PackedDot::new(&ls, &rs, &dims).expect("a small product");
        for parts in [1usize, 2, 3] {
            let ctx =
                ExecCtx::current_default().with_partitions(std::num::NonZeroUsize::new(parts));
            let got = kernel::eval(&ctx, &prim, &[&la, &ra]).unwrap();
            assert_eq!(
                bits(got[0].buffer()),
                want,
                "{bt}x{m}x{k}x{n}, {parts} parts"
            );
            let mut out = Buffer::F32(vec![f32::NAN; bt * m * n].into());
            assert!(plan.run_into(&ctx, &la, &ra, &mut out).unwrap());
            assert_eq!(bits(&out), want, "planned {bt}x{m}x{k}x{n}, {parts} parts");
        }
    }
}

/// The shortcut layouts equal the general ones on every rank ≤ 2
/// matrix product, including zero and unit dimensions.
#[test]
fn matrix_layouts_match_the_general_walk() {
    let dimsizes = [0usize, 1, 2, 5];
    let mut shapes: Vec<Vec<usize>> = dimsizes.iter().map(|&a| vec![a]).collect();
    for &a in &dimsizes {
        for &b in &dimsizes {
            shapes.push(vec![a, b]);
        }
    }
    for ls in &shapes {
        for rs in &shapes {
            for lc in 0..ls.len() {
                for rc in 0..rs.len() {
                    let dims = DotDims {
                        lhs_contract: vec![lc],
                        rhs_contract: vec![rc],
                        lhs_batch: vec![],
                        rhs_batch: vec![],
                    };
                    let l = HostArray::zeros(ls.clone(), DType::F32).unwrap();
                    let r = HostArray::zeros(rs.clone(), DType::F32).unwrap();
                    let (gl, gr) = general_layouts(l.shape(), r.shape(), &dims);
                    let ((lr, lcol), (rr, rcol)) = matrix_axes(&dims, ls.len(), rs.len()).unwrap();
                    let (ml, mr) = (Layout::matrix(ls, lr, lcol), Layout::matrix(rs, rr, rcol));
                    for (g, m) in [(&gl, &ml), (&gr, &mr)] {
                        assert_eq!(g.sizes, m.sizes, "{ls:?} {rs:?} {lc} {rc}");
                        assert_eq!(g.flat, m.flat, "{ls:?} {rs:?} {lc} {rc}");
                        for k in 0..3 {
                            let ga: Vec<usize> = g.groups[k].iter().collect();
                            let ma: Vec<usize> = m.groups[k].iter().collect();
                            assert_eq!(ga, ma);
                        }
                    }
                }
            }
        }
    }
}

/// The matrix-vector kernel's model: element `j` of the row into partial
/// sum `j % 16` (fused multiply-adds in k order), the sums added pairwise.
fn sixteen_lanes<T: num_like::Float>(row: &[T], x: &[T]) -> T {
    let mut s = [T::ZERO; 16];
    for (j, (&a, &b)) in row.iter().zip(x).enumerate() {
        s[j % 16] = a.mul_add(b, s[j % 16]);
    }
    let mut w = 16;
    while w > 1 {
        w /= 2;
        for j in 0..w {
            s[j] = s[j] + s[j + w];
        }
    }
    s[0]
}

mod num_like {
    /// f32 and f64 as [`super::sixteen_lanes`] uses them.
    pub trait Float: Copy + std::ops::Add<Output = Self> {
        const ZERO: Self;
        fn mul_add(self, a: Self, b: Self) -> Self;
    }
    impl Float for f32 {
        const ZERO: f32 = 0.0;
        fn mul_add(self, a: f32, b: f32) -> f32 {
            f32::mul_add(self, a, b)
        }
    }
    impl Float for f64 {
        const ZERO: f64 = 0.0;
        fn mul_add(self, a: f64, b: f64) -> f64 {
            f64::mul_add(self, a, b)
        }
    }
}

/// Matrix-vector products (one output column) in the default mode are each
/// row's 16 partial sums (element `j` into sum `j % 16`, in k order, fused
/// multiply-adds) added
/// pairwise (up to 128×128 multiply-adds): the same bits at every SIMD
/// level and partition count, batched or not, and through the planned
/// product of a compiled step; the portable mode keeps k-ordered sums.
#[test]
fn matvec_kernel_sums_sixteen_lanes_pairwise() {
    use microjax::exec::{Determinism, ExecCtx};
    use microjax::internals::prims_kernel_vmath::with_simd_level;
    use microjax::prims::kernel::{self, PackedDot};
    use microjax::prims::{DotDims, DotGeneral, Primitive};
    let val = |i: usize| ((i.wrapping_mul(2_654_435_761) >> 7) % 2001) as f32 / 337.0 - 2.9;
    let lanes = sixteen_lanes::<f32>;
    let ordered =
        |row: &[f32], x: &[f32]| row.iter().zip(x).fold(0.0f32, |acc, (&a, &b)| acc + a * b);
    let bits = |h: &HostArray| match h.buffer() {
        Buffer::F32(v) => v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>(),
        _ => panic!("f32 expected"),
    };
    let levels = crate::common::kernels::simd_levels();
    // (batch, rows, k): odd sizes, a tail after the 16-element blocks, the
    // largest product a loop step packs. Rows in groups of eight and four
    // with some left over (13, 20). Matrices of at least 65,536 elements
    // are split over the threads: a single matrix by rows (unevenly for
    // 700 rows in 3 parts), a batch in whole matrices.
    for (bt, m, k) in [
        (1, 2, 3),
        (1, 64, 64),
        (3, 33, 100),
        (1, 128, 128),
        (2, 20, 48),
        (1, 13, 32),
        (1, 1024, 256),
        (1, 700, 100),
        (3, 300, 80),
    ] {
        let w: Vec<f32> = (0..bt * m * k).map(val).collect();
        let c: Vec<f32> = (0..bt * k).map(|i| val(i + 7)).collect();
        let (ws, cs, dims) = if bt == 1 {
            (
                vec![m, k],
                vec![k],
                DotDims {
                    lhs_contract: vec![1],
                    rhs_contract: vec![0],
                    lhs_batch: vec![],
                    rhs_batch: vec![],
                },
            )
        } else {
            (
                vec![bt, m, k],
                vec![bt, k],
                DotDims {
                    lhs_contract: vec![2],
                    rhs_contract: vec![1],
                    lhs_batch: vec![0],
                    rhs_batch: vec![0],
                },
            )
        };
        let wa = HostArray::new(ws.clone(), Buffer::F32(w.clone().into())).unwrap();
        let ca = HostArray::new(cs.clone(), Buffer::F32(c.clone().into())).unwrap();
        let prim = Primitive::DotGeneral(DotGeneral {
            dims: dims.clone(),
            preferred_element_type: None,
        });
        let rows = |f: &dyn Fn(&[f32], &[f32]) -> f32| -> Vec<u32> {
            (0..bt * m)
                .map(|r| {
                    let b = r / m;
                    f(&w[r * k..(r + 1) * k], &c[b * k..(b + 1) * k]).to_bits()
                })
                .collect()
        };
        let want = rows(&lanes);
        for &level in &levels {
            for parts in [1usize, 2, 3, 4] {
                let ctx =
                    ExecCtx::current_default().with_partitions(std::num::NonZeroUsize::new(parts));
                let got =
                    with_simd_level(level, || kernel::eval(&ctx, &prim, &[&wa, &ca]).unwrap());
                assert_eq!(
                    bits(&got[0]),
                    want,
                    "{bt}x{m}x{k} at {level:?}, {parts} parts"
                );
            }
        }
        // The planned product of a compiled step gives the same bits, into
        // every element of a stale output, on one thread and split.
        let plan = PackedDot::new(&ws, &cs, &dims).expect("a small product");
        for parts in [1usize, 2, 3] {
            let ctx =
                ExecCtx::current_default().with_partitions(std::num::NonZeroUsize::new(parts));
            let mut out = Buffer::F32(vec![f32::NAN; bt * m].into());
            assert!(plan.run_into(&ctx, &wa, &ca, &mut out).unwrap());
            assert_eq!(
                bits(&HostArray::new(vec![bt * m], out).unwrap()),
                want,
                "planned {bt}x{m}x{k}, {parts} parts"
            );
        }
        // Portable: k-ordered sums.
        let portable = ExecCtx::current_default().with_determinism(Determinism::Portable);
        let got = kernel::eval(&portable, &prim, &[&wa, &ca]).unwrap();
        assert_eq!(bits(&got[0]), rows(&ordered), "portable {bt}x{m}x{k}");
    }
}

/// The f64 matrix-vector kernel: the same sixteen pairwise-added partial
/// sums at every SIMD level (rows in fours with some left over, a tail
/// after the blocks).
#[test]
fn matvec_kernel_f64_sums_sixteen_lanes_pairwise() {
    use microjax::exec::ExecCtx;
    use microjax::internals::prims_kernel_vmath::with_simd_level;
    use microjax::prims::kernel;
    use microjax::prims::{DotDims, DotGeneral, Primitive};
    let val = |i: usize| ((i.wrapping_mul(2_654_435_761) >> 7) % 2001) as f64 / 337.0 - 2.9;
    let lanes = sixteen_lanes::<f64>;
    let levels = crate::common::kernels::simd_levels();
    for (m, k) in [(64, 64), (7, 32), (18, 48), (5, 21), (100, 112)] {
        let w: Vec<f64> = (0..m * k).map(val).collect();
        let c: Vec<f64> = (0..k).map(|i| val(i + 7)).collect();
        let wa = HostArray::new(vec![m, k], Buffer::F64(w.clone().into())).unwrap();
        let ca = HostArray::new(vec![k], Buffer::F64(c.clone().into())).unwrap();
        let prim = Primitive::DotGeneral(DotGeneral {
            dims: DotDims {
                lhs_contract: vec![1],
                rhs_contract: vec![0],
                lhs_batch: vec![],
                rhs_batch: vec![],
            },
            preferred_element_type: None,
        });
        let want: Vec<u64> = (0..m)
            .map(|r| lanes(&w[r * k..(r + 1) * k], &c).to_bits())
            .collect();
        for &level in &levels {
            for parts in [1usize, 3] {
                let ctx =
                    ExecCtx::current_default().with_partitions(std::num::NonZeroUsize::new(parts));
                let got =
                    with_simd_level(level, || kernel::eval(&ctx, &prim, &[&wa, &ca]).unwrap());
                let bits: Vec<u64> = match got[0].buffer() {
                    Buffer::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
                    _ => panic!("f64 expected"),
                };
                assert_eq!(bits, want, "{m}x{k} at {level:?}, {parts} parts");
            }
        }
    }
}

/// A matrix-vector product's loop-constant matrix packed column by column
/// (`PackedDot::fix_lhs`) gives each row's sixteen pairwise-added partial
/// sums, as the row kernel does, at every SIMD level: row counts in whole
/// and partial vector blocks of every width, f32 and f64. Products it does
/// not take (a tail after the 16-element blocks, a batch, a vector-matrix
/// product) are declined, and so are other shapes and the portable mode.
#[test]
fn fixed_matrix_of_a_matvec_gives_the_sixteen_lane_sums() {
    use microjax::exec::{Determinism, ExecCtx};
    use microjax::internals::prims_kernel_vmath::with_simd_level;
    use microjax::prims::kernel::PackedDot;
    use microjax::prims::DotDims;
    let val = |i: usize| ((i.wrapping_mul(2_654_435_761) >> 7) % 2001) as f64 / 337.0 - 2.9;
    let matvec = DotDims {
        lhs_contract: vec![1],
        rhs_contract: vec![0],
        lhs_batch: vec![],
        rhs_batch: vec![],
    };
    let levels = crate::common::kernels::simd_levels();
    let ctx = ExecCtx::current_default();
    for (m, k) in [
        (2, 16),
        (7, 32),
        (13, 32),
        (16, 16),
        (17, 64),
        (33, 48),
        (64, 64),
        (65, 64),
        (100, 112),
        (128, 128),
    ] {
        let w: Vec<f64> = (0..m * k).map(val).collect();
        let c: Vec<f64> = (0..k).map(|i| val(i + 7)).collect();
        let plan = PackedDot::new(&[m, k], &[k], &matvec).expect("a small product");
        // f64, and the same values rounded to f32.
        let w32: Vec<f32> = w.iter().map(|&v| v as f32).collect();
        let c32: Vec<f32> = c.iter().map(|&v| v as f32).collect();
        let want64: Vec<u64> = (0..m)
            .map(|r| sixteen_lanes(&w[r * k..(r + 1) * k], &c).to_bits())
            .collect();
        let want32: Vec<u64> = (0..m)
            .map(|r| u64::from(sixteen_lanes(&w32[r * k..(r + 1) * k], &c32).to_bits()))
            .collect();
        let cases = [
            (Buffer::F64(w.into()), Buffer::F64(c.into()), want64),
            (Buffer::F32(w32.into()), Buffer::F32(c32.into()), want32),
        ];
        for (wb, cb, want) in cases {
            let wa = HostArray::new(vec![m, k], wb).unwrap();
            let ca = HostArray::new(vec![k], cb).unwrap();
            let fixed = plan.fix_lhs(&wa).expect("a packed matrix");
            let bits = |b: &Buffer| -> Vec<u64> {
                match b {
                    Buffer::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
                    Buffer::F32(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
                    _ => panic!("float expected"),
                }
            };
            let stale = || match wa.dtype() {
                DType::F64 => Buffer::F64(vec![f64::NAN; m].into()),
                _ => Buffer::F32(vec![f32::NAN; m].into()),
            };
            for &level in &levels {
                let mut out = stale();
                assert!(with_simd_level(level, || fixed.run_into(&ctx, &ca, &mut out)));
                assert_eq!(bits(&out), want, "{m}x{k} {:?} at {level:?}", wa.dtype());
            }
            // Another vector length, or the portable mode: declined,
            // the output untouched.
            let short = HostArray::new(vec![k - 1], ca.buffer().clone()).ok();
            let mut out = stale();
            if let Some(short) = short {
                assert!(!fixed.run_into(&ctx, &short, &mut out));
            }
            let portable = ExecCtx::current_default().with_determinism(Determinism::Portable);
            assert!(!fixed.run_into(&portable, &ca, &mut out));
            assert!(bits(&out).iter().all(|&b| b == bits(&stale())[0]));
        }
    }
    // Not taken: a tail after the blocks, a batch, a vector-matrix product.
    let f32s = |shape: &[usize]| {
        let n: usize = shape.iter().product();
        HostArray::new(shape.to_vec(), Buffer::F32(vec![0.5; n].into())).unwrap()
    };
    let tail = PackedDot::new(&[8, 20], &[20], &matvec).unwrap();
    assert!(tail.fix_lhs(&f32s(&[8, 20])).is_none());
    let batched = DotDims {
        lhs_contract: vec![2],
        rhs_contract: vec![1],
        lhs_batch: vec![0],
        rhs_batch: vec![0],
    };
    let batch = PackedDot::new(&[2, 8, 16], &[2, 16], &batched).unwrap();
    assert!(batch.fix_lhs(&f32s(&[2, 8, 16])).is_none());
    let vecmat = PackedDot::new(&[16], &[16, 8], &matvec_dims_vecmat()).unwrap();
    assert!(vecmat.fix_lhs(&f32s(&[16])).is_none());
}

fn matvec_dims_vecmat() -> microjax::prims::DotDims {
    microjax::prims::DotDims {
        lhs_contract: vec![0],
        rhs_contract: vec![0],
        lhs_batch: vec![],
        rhs_batch: vec![],
    }
}
