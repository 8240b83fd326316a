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
/// for bit, on full blocks, partial blocks and tails, f32 and f64.
#[test]
fn register_kernel_matches_the_k_ordered_loop() {
    let val = |i: usize| ((i.wrapping_mul(2_654_435_761) >> 7) % 2001) as f64 / 337.0 - 2.9;
    for (bt, m, k, n) in [
        (1, 1, 64, 64),
        (2, 3, 7, 130),
        (1, 2, 1, 65),
        (1, 1, 33, 200),
        (3, 1, 5, 5),
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
