//! complex64/complex128 through the data-movement, indexing, reduction and
//! scan kernels, and the inverse-FFT scaling kernel, emulated on the host
//! against the CPU executor (a submodule of `cuda_emulation.rs`: its
//! harness).

use super::*;
use microjax::exec::cuda::{CufftType, FftSpec};
use microjax::prims::complex::{Conj, Imag, MakeComplex, Real};
use microjax::prims::fft::{FftParams, FftType};
use microjax::prims::SelectN;

const COMPLEX: [(DType, f64); 2] = [(DType::C64, 2e-5), (DType::C128, 1e-12)];

/// [`complex_data`] of `shape`.
fn cx(d: DType, shape: &[usize]) -> HostArray {
    let n = shape.iter().product();
    complex_data(d, n).reshaped(shape.to_vec()).unwrap()
}

/// A complex scalar of `d`.
fn cx_scalar(d: DType, re: f64, im: f64) -> HostArray {
    let buf = match d {
        DType::C64 => Buffer::C64(vec![microjax::array::C32::new(re as f32, im as f32)].into()),
        _ => Buffer::C128(vec![microjax::array::C64::new(re, im)].into()),
    };
    HostArray::new(vec![], buf).unwrap()
}

/// A one-equation program that must lower to one generated kernel, checked
/// against the CPU within `rtol` on both parts.
fn check_complex_kernel(prim: Primitive, args: &[HostArray], rtol: f64) {
    let prog = one_eqn(prim, args);
    let steps = check_complex_program(&prog, args, rtol);
    assert!(
        matches!(steps.as_slice(), [DeviceStep::Kernel { .. }]),
        "{steps:?}"
    );
}

#[test]
fn complex_data_movement_kernels_match_the_cpu_bit_for_bit() {
    skip_without_gxx!();
    for (d, _) in COMPLEX {
        let x = cx(d, &[3, 4, 5]);
        for permutation in [vec![2, 0, 1], vec![1, 0, 2]] {
            check_kernel(
                Primitive::Transpose(Transpose { permutation }),
                std::slice::from_ref(&x),
            );
        }
        let slice = Primitive::Slice(Slice {
            start_indices: vec![1, 0, 1],
            limit_indices: vec![3, 4, 5],
            strides: Some(vec![1, 3, 2]),
        });
        check_kernel(slice, std::slice::from_ref(&x));
        let rev = Primitive::Rev(Rev {
            dimensions: vec![0, 2],
        });
        check_kernel(rev, std::slice::from_ref(&x));
        let cat = Primitive::Concatenate(Concatenate { dimension: 1 });
        check_kernel(cat, &[x.clone(), cx(d, &[3, 2, 5]), x.clone()]);
        let pad = Primitive::Pad(Pad {
            padding_config: vec![(1, -1, 0), (-1, 2, 1), (2, 0, 2)],
        });
        check_kernel(pad, &[x.clone(), cx_scalar(d, -9.5, 0.25)]);
        check_dynamic_slices(&x, &cx(d, &[2, 2, 3]));
        // Broadcasts: kept axes that are not one run (an index-mapping
        // kernel), a trailing run (a fused-style kernel), a literal fill.
        let bcast = |shape: Vec<usize>, dims: Vec<usize>| {
            Primitive::BroadcastInDim(BroadcastInDim {
                shape,
                broadcast_dimensions: dims,
            })
        };
        check_kernel(bcast(vec![3, 4, 5], vec![0, 2]), &[cx(d, &[3, 5])]);
        check_kernel(bcast(vec![4, 3, 5], vec![1, 2]), &[cx(d, &[3, 5])]);
        let mut b = Builder::new();
        let lit = Atom::Lit(microjax::Literal::new(Scalar::Complex(0.5, -2.0), d, false));
        let fill = b.add_eqn1(bcast(vec![3, 2], vec![]), vec![lit]).unwrap();
        let prog = b.build(vec![fill]).unwrap();
        assert_plan!(prog, [DeviceStep::Kernel { .. }]);
        check_program(&prog, &[], 0.0);
        // select_n over complex cases with a bool predicate.
        let pred = HostArray::new(
            vec![3, 4, 5],
            Buffer::Bool((0..60).map(|k| k % 3 == 1).collect()),
        )
        .unwrap();
        let swapped: Vec<(f64, f64)> = pairs(&x).into_iter().map(|(r, i)| (i, r)).collect();
        let y = from_pairs(d, &[3, 4, 5], &swapped);
        check_kernel(Primitive::SelectN(SelectN), &[pred, x.clone(), y]);
        // iota of complex elements: the coordinate as the real part.
        for dimension in 0..3 {
            let p = Primitive::Iota(Iota {
                dtype: d,
                shape: vec![2, 3, 4],
                dimension,
            });
            check_kernel(p, &[]);
        }
    }
}

#[test]
fn complex_gathers_and_scatters_match_the_cpu_bit_for_bit() {
    skip_without_gxx!();
    for (d, _) in COMPLEX {
        for mode in MODES {
            for fill in [None, Some(-7.5)] {
                let i = idx(&[2, 2, 1], vec![4, 0, 2, 9]);
                check_kernel(gather(&ROWS, mode, fill), &[cx(d, &[5, 3]), i]);
            }
            // Set, add and multiply: repeated (1) and dropped (9) indices.
            for op in [ScatterOp::Set, ScatterOp::Add, ScatterOp::Mul] {
                let p = scatter_p(op, &[1], &[0], &[0], &[], &[], mode, false);
                let i = idx(&[4, 1], vec![1, 3, 1, 9]);
                check_scatter(p, &[cx(d, &[5, 3]), i, cx(d, &[4, 3])]);
            }
        }
    }
}

#[test]
fn complex_sum_and_product_reductions_and_scans_match_the_cpu() {
    skip_without_gxx!();
    for (d, rtol) in COMPLEX {
        let x = cx(d, &[3, 4, 5]);
        for op in [ReduceOp::Sum, ReduceOp::Prod] {
            for axes in [vec![0], vec![2], vec![1], vec![0, 2], vec![0, 1, 2]] {
                let p = Primitive::Reduce(Reduce { op, axes });
                check_complex_kernel(p, std::slice::from_ref(&x), rtol);
            }
        }
        for op in [CumOp::Sum, CumOp::Prod] {
            for (axis, reverse) in [(0, false), (1, true), (2, false), (2, true)] {
                let p = Primitive::Cumulative(Cumulative { op, axis, reverse });
                check_complex_kernel(p, std::slice::from_ref(&x), rtol);
            }
        }
    }
}

#[test]
fn complex_part_extraction_conjugation_and_construction_match_the_cpu() {
    skip_without_gxx!();
    for (d, _) in COMPLEX {
        let x = cx(d, &[12]);
        check_kernel(Primitive::Real(Real), std::slice::from_ref(&x));
        check_kernel(Primitive::Imag(Imag), std::slice::from_ref(&x));
        let conj = Primitive::Conj(Conj { input_dtype: d });
        check_kernel(conj, std::slice::from_ref(&x));
        let r = d.real_dtype();
        let part = |k: usize| -> HostArray {
            let v: Vec<f64> = (0..12).map(|j| (j * k) as f64 * 0.75 - 3.0).collect();
            let buf = if r == DType::F32 {
                Buffer::F32(v.iter().map(|&f| f as f32).collect::<Vec<_>>().into())
            } else {
                Buffer::F64(v.into())
            };
            HostArray::new(vec![12], buf).unwrap()
        };
        check_kernel(Primitive::MakeComplex(MakeComplex), &[part(1), part(2)]);
    }
}

#[test]
fn complex_orderings_stay_on_the_host() {
    // max/min reductions and scans order complex numbers lexicographically
    // (JAX's rule), on the host (argmax/argmin and scatter-min/max of
    // complex operands are refused by their shape rules).
    for (d, _) in COMPLEX {
        let x = cx(d, &[3, 4]);
        let host = |prim: Primitive, args: &[HostArray]| {
            let prog = one_eqn(prim, args);
            assert_plan!(prog, [DeviceStep::Host { .. }]);
        };
        for op in [ReduceOp::Max, ReduceOp::Min] {
            host(
                Primitive::Reduce(Reduce { op, axes: vec![1] }),
                std::slice::from_ref(&x),
            );
        }
        for op in [CumOp::Max, CumOp::Min] {
            let p = Primitive::Cumulative(Cumulative {
                op,
                axis: 0,
                reverse: false,
            });
            host(p, std::slice::from_ref(&x));
        }
    }
}

/// The unnormalized inverse DFT over the trailing `dims` of `batch`
/// signals (`e^{+2πi jk/n}` on every axis), in f64.
fn naive_inverse(x: &[(f64, f64)], batch: usize, dims: &[usize]) -> Vec<(f64, f64)> {
    let size: usize = dims.iter().product();
    let coords = |mut flat: usize| -> Vec<usize> {
        let mut c = vec![0; dims.len()];
        for (a, &n) in dims.iter().enumerate().rev() {
            c[a] = flat % n;
            flat /= n;
        }
        c
    };
    let mut out = Vec::with_capacity(x.len());
    for b in 0..batch {
        for t in 0..size {
            let ct = coords(t);
            let (mut re, mut im) = (0.0, 0.0);
            for k in 0..size {
                let ck = coords(k);
                let phase: f64 = dims
                    .iter()
                    .enumerate()
                    .map(|(a, &n)| (ck[a] * ct[a]) as f64 / n as f64)
                    .sum::<f64>()
                    * std::f64::consts::TAU;
                let (xr, xi) = x[b * size + k];
                re += xr * phase.cos() - xi * phase.sin();
                im += xr * phase.sin() + xi * phase.cos();
            }
            out.push((re, im));
        }
    }
    out
}

/// The elements of a complex array as `(re, im)` pairs.
fn pairs(a: &HostArray) -> Vec<(f64, f64)> {
    (0..a.size())
        .map(|k| match Scalar::from_buffer(a.buffer(), k).unwrap() {
            Scalar::Complex(re, im) => (re, im),
            s => (s.as_f64(), 0.0),
        })
        .collect()
}

/// An array of dtype `d` (complex, or its real part type keeping only the
/// real parts) of `shape` from `(re, im)` pairs.
fn from_pairs(d: DType, shape: &[usize], v: &[(f64, f64)]) -> HostArray {
    let buf = match d {
        DType::C64 => Buffer::C64(
            v.iter()
                .map(|&(r, i)| microjax::array::C32::new(r as f32, i as f32))
                .collect::<Vec<_>>()
                .into(),
        ),
        DType::C128 => Buffer::C128(
            v.iter()
                .map(|&(r, i)| microjax::array::C64::new(r, i))
                .collect::<Vec<_>>()
                .into(),
        ),
        DType::F32 => Buffer::F32(v.iter().map(|&(r, _)| r as f32).collect::<Vec<_>>().into()),
        _ => Buffer::F64(v.iter().map(|&(r, _)| r).collect::<Vec<_>>().into()),
    };
    HostArray::new(shape.to_vec(), buf).unwrap()
}

/// The single Fft step of `prog`'s device plan.
fn fft_step(prog: &ClosedJaxpr) -> FftSpec {
    let steps = device_plan(&prog.jaxpr).unwrap();
    match steps.as_slice() {
        [DeviceStep::Fft { eqn: 0, spec }] => spec.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn inverse_fft_scaling_kernels_give_the_cpu_normalization() {
    skip_without_gxx!();
    // IFFT over one and two trailing axes, IRFFT of even and odd length:
    // the unnormalized inverse (what cuFFT computes) through the scale
    // kernel matches the CPU executor's normalized transform.
    for (d, rtol) in COMPLEX {
        let cases: [(FftType, &[usize], &[usize]); 4] = [
            (FftType::Ifft, &[3, 8], &[8]),
            (FftType::Ifft, &[2, 4, 6], &[4, 6]),
            (FftType::Irfft, &[2, 5], &[8]),
            (FftType::Irfft, &[3, 4], &[7]),
        ];
        for (fft_type, in_shape, lengths) in cases {
            let mut x = cx(d, in_shape);
            let real_out = fft_type == FftType::Irfft;
            if real_out {
                // A consistent half spectrum: real zero (and, for even
                // lengths, Nyquist) frequencies.
                let n = lengths[0];
                let m = in_shape[1];
                let mut v = pairs(&x);
                for (k, e) in v.iter_mut().enumerate() {
                    let f = k % m;
                    if f == 0 || (n % 2 == 0 && f == m - 1) {
                        e.1 = 0.0;
                    }
                }
                x = from_pairs(d, in_shape, &v);
            }
            let prog = one_eqn(
                Primitive::Fft(FftParams {
                    fft_type,
                    fft_lengths: lengths.to_vec(),
                }),
                std::slice::from_ref(&x),
            );
            let spec = fft_step(&prog);
            let kernel = spec.scale.clone().expect("an inverse transform scales");
            let batch: usize = in_shape[..in_shape.len() - lengths.len()].iter().product();
            // The full spectrum of the input (Hermitian completion for IRFFT).
            let full: Vec<(f64, f64)> = if real_out {
                let (n, m) = (lengths[0], in_shape[1]);
                let v = pairs(&x);
                (0..batch)
                    .flat_map(|b| {
                        let row = &v[b * m..(b + 1) * m];
                        (0..n)
                            .map(|k| {
                                if k < m {
                                    row[k]
                                } else {
                                    let (r, i) = row[n - k];
                                    (r, -i)
                                }
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect()
            } else {
                pairs(&x)
            };
            let out_dtype = if real_out { d.real_dtype() } else { d };
            let mut out_shape = in_shape.to_vec();
            *out_shape.last_mut().unwrap() = *lengths.last().unwrap();
            let unnormalized =
                from_pairs(out_dtype, &out_shape, &naive_inverse(&full, batch, lengths));
            let scaled = emulate(&kernel, &[bytes::to_bytes(unnormalized.buffer())]);
            let got = bytes::array_from_bytes(out_shape.clone(), out_dtype, &scaled[0]).unwrap();
            let want = eval_closed(&prog, &[Arc::new(x.clone())]).unwrap();
            assert_eq!(want[0].shape(), &out_shape[..]);
            for (k, (g, w)) in pairs(&got).into_iter().zip(pairs(&want[0])).enumerate() {
                for (a, b) in [(g.0, w.0), (g.1, w.1)] {
                    assert!(
                        (a - b).abs() <= rtol * 10.0 * (1.0 + b.abs()),
                        "{fft_type:?} {d:?} element {k}: {a} vs {b}"
                    );
                }
            }
        }
    }
}

#[test]
fn fft_plans_name_the_cufft_type_batch_and_lengths() {
    let cases = [
        (
            FftType::Fft,
            DType::C64,
            vec![6, 16],
            vec![16],
            CufftType::C2C,
            6,
        ),
        (
            FftType::Ifft,
            DType::C128,
            vec![2, 3, 8, 4],
            vec![8, 4],
            CufftType::Z2Z,
            6,
        ),
        (
            FftType::Rfft,
            DType::F32,
            vec![5, 4, 4, 10],
            vec![4, 4, 10],
            CufftType::R2C,
            5,
        ),
        (
            FftType::Rfft,
            DType::F64,
            vec![1024],
            vec![1024],
            CufftType::D2Z,
            1,
        ),
        (
            FftType::Irfft,
            DType::C64,
            vec![3, 9],
            vec![16],
            CufftType::C2R,
            3,
        ),
        (
            FftType::Irfft,
            DType::C128,
            vec![2, 4, 5],
            vec![4, 9],
            CufftType::Z2D,
            2,
        ),
    ];
    for (fft_type, d, shape, lengths, cufft, batch) in cases {
        let mut b = Builder::new();
        let x = Atom::Var(b.add_input(Aval::new(shape.clone(), d)).unwrap());
        let p = Primitive::Fft(FftParams {
            fft_type,
            fft_lengths: lengths.clone(),
        });
        let y = b.add_eqn1(p, vec![x]).unwrap();
        let prog = b.build(vec![y]).unwrap();
        let spec = fft_step(&prog);
        assert_eq!(
            (spec.cufft, spec.batch, &spec.lengths),
            (cufft, batch, &lengths),
            "{fft_type:?} {d:?} {shape:?}"
        );
        let inverse = matches!(fft_type, FftType::Ifft | FftType::Irfft);
        assert_eq!(spec.scale.is_some(), inverse);
        assert_eq!(spec.inverse(), inverse);
        let (ib, ob) = cufft.element_bytes();
        assert_eq!(
            spec.in_len * ib,
            shape.iter().product::<usize>() * d.itemsize()
        );
        assert!(spec.out_len * ob > 0);
        // The scale kernel is among the plan's kernel sources.
        let sources = microjax::exec::cuda::kernel_sources(&prog).unwrap();
        assert_eq!(sources.len(), usize::from(inverse));
        assert!(microjax::exec::cuda::host_steps(&prog).unwrap().is_empty());
    }
    // Half-precision transforms have no cuFFT type here: the host.
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![8], DType::F16)).unwrap());
    let p = Primitive::Fft(FftParams {
        fft_type: FftType::Rfft,
        fft_lengths: vec![8],
    });
    if let Ok(y) = b.add_eqn1(p, vec![x]) {
        let prog = b.build(vec![y]).unwrap();
        assert_plan!(prog, [DeviceStep::Host { .. }]);
    }
}

#[test]
fn complex_programs_plan_without_host_steps() {
    // A program mixing every complex device lowering: no host fallback.
    for (d, _) in COMPLEX {
        let mut b = Builder::new();
        let x = Atom::Var(b.add_input(Aval::new(vec![4, 8], d)).unwrap());
        let t = b
            .add_eqn1(
                Primitive::Transpose(Transpose {
                    permutation: vec![1, 0],
                }),
                vec![x.clone()],
            )
            .unwrap();
        let f = b
            .add_eqn1(
                Primitive::Fft(FftParams {
                    fft_type: FftType::Fft,
                    fft_lengths: vec![4],
                }),
                vec![t],
            )
            .unwrap();
        let s = b
            .add_eqn1(
                Primitive::Reduce(Reduce {
                    op: ReduceOp::Sum,
                    axes: vec![1],
                }),
                vec![f.clone()],
            )
            .unwrap();
        let c = b
            .add_eqn1(
                Primitive::Cumulative(Cumulative {
                    op: CumOp::Prod,
                    axis: 0,
                    reverse: false,
                }),
                vec![s],
            )
            .unwrap();
        let r = b.add_eqn1(Primitive::Real(Real), vec![c]).unwrap();
        let prog = b.build(vec![f, r]).unwrap();
        assert!(microjax::exec::cuda::host_steps(&prog).unwrap().is_empty());
        let steps = device_plan(&prog.jaxpr).unwrap();
        assert!(
            steps.iter().any(|s| matches!(s, DeviceStep::Fft { .. })),
            "{steps:?}"
        );
    }
}
