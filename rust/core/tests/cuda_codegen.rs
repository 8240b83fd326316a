//! The CUDA executor's GPU-free parts: generated kernel text (golden),
//! determinism of the text and names, which equations lower to kernels /
//! cuBLAS / the host, and the device byte layout. With feature `cuda` and
//! an NVRTC library on the loader path (`LD_LIBRARY_PATH`), every golden
//! kernel is also compiled to PTX.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::cuda::bytes;
use microjax::exec::cuda::codegen::{lowering, Lowering};
use microjax::exec::cuda::steps::gemm_spec;
use microjax::exec::cuda::{device_count, device_plan, kernel_sources, DeviceStep, GemmSpec};
use microjax::prims::control::ControlFlow;
use microjax::prims::random::Threefry2x32;
#[cfg(feature = "cuda")]
use microjax::prims::{ArgReduce, Reduce};
use microjax::prims::{
    Clamp, Concatenate, ConvertElementType, Cumulative, DotGeneral, DynamicSlice,
    DynamicUpdateSlice, IntegerPow, Iota, IsFinite, Pad, Rev, Round, SelectN, Slice,
};
use microjax::prims::{CmpOp, CumOp, RoundingMethod};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, DType, HostArray, Primitive, ReduceOp,
    UnaryOp,
};

use std::sync::Arc;

use crate::common;
use common::*;
use common::{reduce, transpose};

fn sources(prog: &ClosedJaxpr) -> Vec<String> {
    kernel_sources(prog)
        .unwrap()
        .into_iter()
        .map(|k| k.source)
        .collect()
}

fn row_sum() -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = input(&mut b, &[4, 3]);
    let s = b.add_eqn1(reduce(ReduceOp::Sum, &[1]), vec![x]).unwrap();
    b.build(vec![s]).unwrap()
}

fn cumsum_rev() -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = input(&mut b, &[2, 5, 3]);
    let s = b
        .add_eqn1(
            Primitive::Cumulative(Cumulative {
                op: CumOp::Sum,
                axis: 1,
                reverse: true,
            }),
            vec![x],
        )
        .unwrap();
    b.build(vec![s]).unwrap()
}

fn iota() -> ClosedJaxpr {
    let mut b = Builder::new();
    let s = b
        .add_eqn1(
            Primitive::Iota(Iota {
                dtype: DType::I32,
                shape: vec![3, 4],
                dimension: 0,
            }),
            vec![],
        )
        .unwrap();
    b.build(vec![s]).unwrap()
}

fn threefry() -> ClosedJaxpr {
    let mut b = Builder::new();
    let u = |b: &mut Builder, shape: &[usize]| {
        Atom::Var(b.add_input(Aval::new(shape.to_vec(), DType::U32)).unwrap())
    };
    let k0 = u(&mut b, &[]);
    let k1 = u(&mut b, &[]);
    let x0 = u(&mut b, &[6]);
    let x1 = u(&mut b, &[6]);
    let outs = b
        .add_eqn(
            Primitive::Threefry2x32(Threefry2x32),
            vec![k0, k1, x0, x1],
            None,
        )
        .unwrap();
    b.build(outs.into_iter().map(Atom::Var).collect()).unwrap()
}

const FUSED_CHAIN: &str = r#"extern "C" __global__ void mj_d8b4c7a0a8668d2f(const float* __restrict__ in0, float* __restrict__ out0, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)blockDim.x * gridDim.x) {
    const float a0 = in0[i];
    const float v0 = (float)(a0 * ((float)2e0));
    const float v1 = (float)(v0 + ((float)1e0));
    const float v2 = (float)tanhf(v1);
    const float v3 = (float)sinf(a0);
    const float v4 = (float)(v2 * v3);
    const float v5 = (float)(-a0);
    const float v6 = (float)(v5 * a0);
    const float v7 = (float)expf(v6);
    const float v8 = (float)(v4 - v7);
    out0[i] = v8;
  }
}
"#;
const BIAS_RELU: &str = r#"extern "C" __global__ void mj_903ad37ee3ef6e68(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out0, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)blockDim.x * gridDim.x) {
    const float a0 = in0[i % 3LL];
    const float v0 = a0;
    const float a1 = in1[i];
    const float v1 = (float)(a1 + v0);
    const float v2 = (float)(v1 != v1 ? v1 : (((float)0e0) != ((float)0e0) ? ((float)0e0) : (v1 > ((float)0e0) ? v1 : ((float)0e0))));
    out0[i] = v2;
  }
}
"#;
const ROW_SUM: &str = r#"extern "C" __global__ void mj_89d55bd9d127fb6e(const float* __restrict__ in0, float* __restrict__ out0, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)blockDim.x * gridDim.x) {
    const long long base = (i % 4LL) * 3LL;
    float acc = ((float)0LL);
    for (long long r = 0; r < 3LL; ++r) {
      const float x = in0[base + (r % 3LL) * 1LL];
      acc = r == 0 ? x : (float)(acc + x);
    }
    out0[i] = acc;
  }
}
"#;
const CUMSUM_REV: &str = r#"extern "C" __global__ void mj_f28855ec406502dc(const float* __restrict__ in0, float* __restrict__ out0, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)blockDim.x * gridDim.x) {
    const long long base = (i / 3LL) * 15LL + i % 3LL;
    float acc = (float)0;
    for (long long j = 0; j < 5LL; ++j) {
      const long long k = base + (5LL - 1 - j) * 3LL;
      const float x = in0[k];
      acc = j == 0 ? x : (float)(acc + x);
      out0[k] = acc;
    }
  }
}
"#;
const IOTA: &str = r#"extern "C" __global__ void mj_51d72dffcfd7e8a5(int* __restrict__ out0, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)blockDim.x * gridDim.x) {
    out0[i] = (int)((i / 4LL) % 3LL);
  }
}
"#;

#[test]
fn golden_kernels() {
    assert_eq!(sources(&fused_chain()), vec![FUSED_CHAIN.to_string()]);
    assert_eq!(sources(&bias_relu()), vec![BIAS_RELU.to_string()]);
    assert_eq!(sources(&row_sum()), vec![ROW_SUM.to_string()]);
    assert_eq!(sources(&cumsum_rev()), vec![CUMSUM_REV.to_string()]);
    assert_eq!(sources(&iota()), vec![IOTA.to_string()]);
}

#[test]
fn threefry_kernel_matches_the_reference_schedule() {
    let (src,) = match sources(&threefry()).as_slice() {
        [s] => (s.clone(),),
        other => panic!("expected one kernel, got {}", other.len()),
    };
    // Scalar keys read element 0, counters element i; 20 rounds; key
    // injections after each of the five groups.
    assert!(src.contains("const unsigned int a0 = in0[0];"));
    assert!(src.contains("const unsigned int a2 = in2[i];"));
    assert_eq!(src.matches("x0 += x1;").count(), 20);
    assert!(src.contains("x0 += ks[2]; x1 += ks[0] + 5u;"));
    assert!(src.contains("x1 = ((x1 << 13) | (x1 >> 19)) ^ x0;"));
    assert!(src.contains("out1[i] = x1;"));
}

#[test]
fn sources_are_deterministic_and_named_by_their_text() {
    let a = kernel_sources(&fused_chain()).unwrap();
    let b = kernel_sources(&fused_chain()).unwrap();
    assert_eq!(a, b);
    let k = &a[0];
    let hash = microjax::exec::cuda::codegen::fnv1a(k.source.replace(&k.name, "KERNEL").as_bytes());
    assert_eq!(k.name, format!("mj_{hash:016x}"));
    let other = kernel_sources(&bias_relu()).unwrap();
    assert_ne!(other[0].name, k.name);
}

/// One program applying `prim` to inputs of `dtypes` (all of `shape`).
fn one_eqn(prim: Primitive, dtypes: &[DType]) -> Option<ClosedJaxpr> {
    let mut b = Builder::new();
    let ins = dtypes
        .iter()
        .map(|d| Atom::Var(b.add_input(Aval::new(vec![3, 2], *d)).unwrap()))
        .collect();
    let out = b.add_eqn(prim, ins, None).ok()?;
    b.build(out.into_iter().map(Atom::Var).collect()).ok()
}

/// Every elementwise primitive the CPU fusion accepts, with the operand
/// dtypes it is checked at.
fn elementwise_cases() -> Vec<(Primitive, Vec<DType>)> {
    use DType::{Bool, F32, F64, I32, U32};
    let mut cases = Vec::new();
    for &op in UnaryOp::ALL {
        let d = match op {
            UnaryOp::Not | UnaryOp::PopulationCount | UnaryOp::Clz => I32,
            _ => F32,
        };
        cases.push((Primitive::Unary(op), vec![d]));
    }
    for &op in BinaryOp::ALL {
        let d = match op {
            BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::Xor
            | BinaryOp::ShiftLeft
            | BinaryOp::ShiftRightLogical
            | BinaryOp::ShiftRightArithmetic => I32,
            _ => F32,
        };
        cases.push((Primitive::Binary(op), vec![d, d]));
    }
    for op in [BinaryOp::Div, BinaryOp::Rem, BinaryOp::Add, BinaryOp::Max] {
        cases.push((Primitive::Binary(op), vec![I32, I32]));
    }
    cases.push((Primitive::Binary(BinaryOp::And), vec![Bool, Bool]));
    for &op in CmpOp::ALL {
        cases.push((Primitive::Compare(op), vec![F64, F64]));
    }
    cases.push((Primitive::IntegerPow(IntegerPow { y: -3 }), vec![F32]));
    cases.push((Primitive::SelectN(SelectN), vec![Bool, F32, F32]));
    cases.push((Primitive::Clamp(Clamp), vec![F32, F32, F32]));
    cases.push((Primitive::IsFinite(IsFinite), vec![F32]));
    for m in [RoundingMethod::AwayFromZero, RoundingMethod::ToNearestEven] {
        cases.push((Primitive::Round(Round { rounding_method: m }), vec![F32]));
    }
    for (from, to) in [
        (F32, I32),
        (F32, Bool),
        (I32, F32),
        (U32, F64),
        (F32, DType::F16),
        (F64, DType::BF16),
        (I32, DType::BF16),
    ] {
        let p = Primitive::ConvertElementType(ConvertElementType {
            new_dtype: to,
            weak_type: false,
        });
        cases.push((p, vec![from]));
    }
    cases.push((Primitive::Unary(UnaryOp::Exp), vec![DType::BF16]));
    cases.push((
        Primitive::Binary(BinaryOp::Mul),
        vec![DType::F16, DType::F16],
    ));
    cases.push((
        Primitive::Binary(BinaryOp::Nextafter),
        vec![DType::F16, DType::F16],
    ));
    cases
}

/// The documented host fallbacks of elementwise primitives
/// (docs/DESIGN-NOTES.md, "CUDA executor").
const HOST_FALLBACKS: &[&str] = &[
    "digamma(float32)",
    "polygamma(float32,float32)",
    "shift_left(int32,int32)",
    "shift_right_logical(int32,int32)",
    "shift_right_arithmetic(int32,int32)",
    "div(int32,int32)",
    "rem(int32,int32)",
    "convert_element_type(float32)->int32",
    "convert_element_type(float64)->bfloat16",
    "nextafter(float16,float16)",
];

#[test]
fn every_elementwise_primitive_lowers_or_is_a_documented_fallback() {
    let mut fallbacks = Vec::new();
    for (prim, dtypes) in elementwise_cases() {
        let prog = one_eqn(prim.clone(), &dtypes)
            .unwrap_or_else(|| panic!("{} of {dtypes:?} does not typecheck", prim.name()));
        let jx = &prog.jaxpr;
        let out = jx.aval(jx.eqns[0].outputs[0]).unwrap().dtype;
        let names: Vec<&str> = dtypes.iter().map(|d| d.name()).collect();
        let mut label = format!("{}({})", prim.name(), names.join(","));
        if matches!(
            prim,
            Primitive::ConvertElementType(ConvertElementType { .. })
        ) {
            label = format!("{label}->{}", out.name());
        }
        let want = lowering(&prim, *dtypes.last().unwrap(), out);
        let steps = device_plan(jx).unwrap();
        match (&steps[..], want) {
            ([DeviceStep::Kernel { eqns, kernel }], Lowering::Kernel) => {
                assert_eq!(eqns, &vec![0], "{label}");
                // 16-bit floats are stored through their rounding function.
                let store = match out {
                    DType::F16 => "out0[i] = mj_f32_to_f16(v0);",
                    DType::BF16 => "out0[i] = mj_f32_to_bf16(v0);",
                    _ => "out0[i] = v0;",
                };
                assert!(kernel.source.contains(store), "{label}:\n{}", kernel.source);
            }
            ([DeviceStep::Host { eqn: 0, .. }], Lowering::HostFallback(_)) => fallbacks.push(label),
            (s, w) => panic!("{label}: plan {s:?}, lowering {w:?}"),
        }
    }
    assert_eq!(fallbacks, HOST_FALLBACKS);
}

#[test]
fn gemm_specs_of_row_major_products() {
    let f = [DType::F32; 3];
    let spec = |m, n, k, lt, rt, batch| GemmSpec {
        dtype: DType::F32,
        batch,
        m,
        n,
        k,
        lhs_transposed: lt,
        rhs_transposed: rt,
    };
    // [m,k]·[k,n], [k,m]ᵀ·[k,n], [m,k]·[n,k]ᵀ, batched, matvec.
    assert_eq!(
        gemm_spec(&dot_dims(&[1], &[0], &[], &[]), &[2, 3], &[3, 4], f),
        Some(spec(2, 4, 3, false, false, 1))
    );
    assert_eq!(
        gemm_spec(&dot_dims(&[0], &[0], &[], &[]), &[3, 2], &[3, 4], f),
        Some(spec(2, 4, 3, true, false, 1))
    );
    assert_eq!(
        gemm_spec(&dot_dims(&[1], &[1], &[], &[]), &[2, 3], &[4, 3], f),
        Some(spec(2, 4, 3, false, true, 1))
    );
    assert_eq!(
        gemm_spec(&dot_dims(&[2], &[1], &[0], &[0]), &[5, 2, 3], &[5, 3, 4], f),
        Some(spec(2, 4, 3, false, false, 5))
    );
    assert_eq!(
        gemm_spec(&dot_dims(&[1], &[0], &[], &[]), &[2, 3], &[3], f),
        Some(spec(2, 1, 3, false, false, 1))
    );
    // Two contracting axes as one run; [m,k1,k2]·[k1,k2,n].
    assert_eq!(
        gemm_spec(
            &dot_dims(&[1, 2], &[0, 1], &[], &[]),
            &[2, 3, 5],
            &[3, 5, 4],
            f
        ),
        Some(spec(2, 4, 15, false, false, 1))
    );
    // Not GEMMs: ints, mixed dtypes, batch axes not leading, an empty k.
    assert_eq!(
        gemm_spec(
            &dot_dims(&[1], &[0], &[], &[]),
            &[2, 3],
            &[3, 4],
            [DType::I32; 3]
        ),
        None
    );
    assert_eq!(
        gemm_spec(
            &dot_dims(&[1], &[0], &[], &[]),
            &[2, 3],
            &[3, 4],
            [DType::F32, DType::F32, DType::F64]
        ),
        None
    );
    assert_eq!(
        gemm_spec(&dot_dims(&[2], &[1], &[1], &[0]), &[2, 5, 3], &[5, 3, 4], f),
        None
    );
    assert_eq!(
        gemm_spec(&dot_dims(&[1], &[0], &[], &[]), &[2, 0], &[0, 4], f),
        None
    );
}

#[test]
fn mlp_plan_uses_cublas_kernels_and_host_steps() {
    let mut b = Builder::new();
    let x = input(&mut b, &[8, 4]);
    let w = input(&mut b, &[4, 16]);
    let bias = input(&mut b, &[16]);
    let h = b
        .add_eqn1(
            Primitive::DotGeneral(DotGeneral {
                dims: dot_dims(&[1], &[0], &[], &[]),
                preferred_element_type: None,
            }),
            vec![x, w],
        )
        .unwrap();
    let bb = broadcast(&mut b, bias, vec![8, 16], vec![1]);
    let hb = b.binary(BinaryOp::Add, h, bb).unwrap();
    let t = b.unary(UnaryOp::Tanh, hb).unwrap();
    let s = b
        .add_eqn1(reduce(ReduceOp::Max, &[0, 1]), vec![t.clone()])
        .unwrap();
    let d = b.unary(UnaryOp::Digamma, s).unwrap();
    let prog = b.build(vec![t, d]).unwrap();
    let steps = device_plan(&prog.jaxpr).unwrap();
    let kinds: Vec<&str> = steps
        .iter()
        .map(|s| match s {
            DeviceStep::Kernel { .. } => "kernel",
            DeviceStep::Gemm { .. } => "gemm",
            DeviceStep::Alias { .. } => "alias",
            DeviceStep::Scatter { .. } => "scatter",
            DeviceStep::Control { .. } => "control",
            DeviceStep::Fft { .. } => "fft",
            DeviceStep::Collective { .. } => "collective",
            DeviceStep::Host { .. } => "host",
        })
        .collect();
    assert_eq!(kinds, ["gemm", "kernel", "kernel", "host"]);
    // The reduction's init is -inf and its combine propagates NaN.
    let DeviceStep::Kernel { kernel, .. } = &steps[2] else {
        unreachable!()
    };
    assert!(kernel
        .source
        .contains("__longlong_as_double(0x7ff0000000000000LL)"));
    assert!(kernel.source.contains("acc != acc ? acc"));
}

#[test]
fn device_bytes_roundtrip_every_dtype() {
    let arrays = [
        Buffer::Bool(vec![true, false, true].into()),
        Buffer::I8(vec![-1, 2, -128].into()),
        Buffer::I16(vec![-300, 2, 7].into()),
        Buffer::I32(vec![-1, i32::MAX, 0].into()),
        Buffer::I64(vec![i64::MIN, 1, -2].into()),
        Buffer::U8(vec![255, 0, 1].into()),
        Buffer::U16(vec![65535, 1, 2].into()),
        Buffer::U32(vec![u32::MAX, 3, 4].into()),
        Buffer::U64(vec![u64::MAX, 5, 6].into()),
        Buffer::F16(vec![half::f16::from_f32(1.5); 3].into()),
        Buffer::BF16(vec![half::bf16::from_f32(-2.25); 3].into()),
        Buffer::F32(vec![f32::NAN, -0.0, 1e-30].into()),
        Buffer::F64(vec![f64::INFINITY, -0.0, 1e300].into()),
        Buffer::Float0(3),
    ];
    for buf in arrays {
        let d = buf.dtype();
        let raw = bytes::to_bytes(&buf);
        assert_eq!(raw.len(), bytes::nbytes(d, 3).unwrap(), "{d:?}");
        let back = bytes::array_from_bytes(vec![3], d, &raw).unwrap();
        assert_eq!(back, HostArray::new(vec![3], buf).unwrap());
    }
    assert_eq!(
        bytes::to_bytes(&Buffer::U32(vec![1].into())),
        vec![1, 0, 0, 0]
    );
    assert!(bytes::from_bytes(DType::F32, 2, &[0; 7]).is_err());
}

#[test]
fn no_device_without_a_gpu() {
    // This machine class has no GPU; with one, the count is positive and
    // device 0 reports itself.
    match device_count() {
        0 => {
            let e = microjax::exec::cuda::device_info(0).unwrap_err();
            assert!(matches!(e, microjax::Error::Device(_)), "{e:?}");
            assert!(e.to_string().starts_with("no CUDA device 0"), "{e}");
        }
        n => {
            let info = microjax::exec::cuda::device_info(0).unwrap();
            assert!(n >= 1 && info.memory_bytes > 0);
        }
    }
}

/// `(x: f32[4], limit: i32[]) -> (i, x * 2^i)` doubling while `i < limit`.
fn while_program() -> ClosedJaxpr {
    doubling_while(f32v(&[4]))
}

#[test]
fn while_loops_stay_on_the_device_with_their_bodies_planned() {
    let prog = while_program();
    assert_plan!(prog, [DeviceStep::Control { eqn: 0 }]);
    // The body's elementwise ops are kernels of their own plan.
    let Primitive::Control(ControlFlow::While { body_jaxpr, .. }) = &prog.jaxpr.eqns[0].prim else {
        unreachable!()
    };
    assert_eq!(sources(body_jaxpr).len(), 2);
    // The program's sources list the cond's kernel, then the body's.
    let all = sources(&prog);
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all[0].contains(" < "), "{}", all[0]);
    assert_eq!(all[1..], sources(body_jaxpr)[..]);
}

/// `(i: i32[], x: f32[3], xs: f32[5, 3]) -> (cond(i, sin | cos)(x),
/// scan(carry + x_t, ys = carry * 2))`: both planned as control steps whose
/// branch and body kernels are listed at their position.
fn cond_and_scan_program() -> ClosedJaxpr {
    use microjax::prims::control::Scan;
    let branch = |op| {
        let mut b = Builder::new();
        let x = input(&mut b, &[3]);
        let y = b.unary(op, x).unwrap();
        Arc::new(b.build(vec![y]).unwrap())
    };
    let mut body = Builder::new();
    let carry = input(&mut body, &[3]);
    let x = input(&mut body, &[3]);
    let next = body.binary(BinaryOp::Add, carry.clone(), x).unwrap();
    let y = body.binary(BinaryOp::Mul, carry, lit(2.0)).unwrap();
    let body = Arc::new(body.build(vec![next, y]).unwrap());
    let mut b = Builder::new();
    let i = Atom::Var(b.add_input(Aval::new(vec![], DType::I32)).unwrap());
    let x = input(&mut b, &[3]);
    let xs = input(&mut b, &[5, 3]);
    let picked = b
        .add_eqn(
            Primitive::Control(ControlFlow::Cond {
                branches: vec![branch(UnaryOp::Sin), branch(UnaryOp::Cos)],
            }),
            vec![i, x.clone()],
            None,
        )
        .unwrap();
    let scanned = b
        .add_eqn(
            Primitive::Control(ControlFlow::Scan(Scan {
                jaxpr: body,
                length: 5,
                reverse: true,
                num_consts: 0,
                num_carry: 1,
                linear: vec![false; 2],
                unroll: 1,
            })),
            vec![x, xs],
            None,
        )
        .unwrap();
    let outs = picked.into_iter().chain(scanned).map(Atom::Var).collect();
    b.build(outs).unwrap()
}

#[test]
fn cond_and_scan_stay_on_the_device_with_their_sub_programs_planned() {
    let prog = cond_and_scan_program();
    assert_plan!(
        prog,
        [
            DeviceStep::Control { eqn: 0 },
            DeviceStep::Control { eqn: 1 }
        ]
    );
    // sin, cos (the branches), then the scan body's add and mul.
    let all = sources(&prog);
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(
        all[0].contains("sinf(") && all[1].contains("cosf("),
        "{all:?}"
    );
    assert!(all[2].contains(" + ") && all[3].contains(" * "), "{all:?}");
}

/// `x[idx]` rows of an f32 table and the scatter-add of rows back
/// (`idx`: i32 or u64), as `jnp` indexing and its gradient produce.
fn gather_scatter_program(index: DType) -> ClosedJaxpr {
    use common::gather::{scatter_rows, take_rows};
    use microjax::prims::gather::{Mode, ScatterOp};
    let mut b = Builder::new();
    let x = input(&mut b, &[5, 3]);
    let i = Atom::Var(b.add_input(Aval::new(vec![4, 1], index)).unwrap());
    let rows = b
        .add_eqn1(take_rows(3, Mode::FillOrDrop), vec![x.clone(), i.clone()])
        .unwrap();
    let back = b
        .add_eqn1(
            scatter_rows(ScatterOp::Add, Mode::Clip),
            vec![x, i, rows.clone()],
        )
        .unwrap();
    b.build(vec![rows, back]).unwrap()
}

#[test]
fn gather_and_scatter_add_lower_to_kernels() {
    let prog = gather_scatter_program(DType::I32);
    assert_plan!(
        prog,
        [DeviceStep::Kernel { .. }, DeviceStep::Scatter { .. }]
    );
    let all = sources(&prog);
    assert_eq!(all.len(), 2);
    // The gather fills out-of-bounds rows with NaN; the scatter clamps and
    // loops over the 4 index rows in order inside each thread.
    assert!(all[0].contains("ok ? in_x[off] :"), "{}", all[0]);
    assert!(
        all[1].contains("for (long long g = 0; g < 4LL; ++g)"),
        "{}",
        all[1]
    );
    assert!(
        all[1].contains("s = s < 0 ? 0 : (s > 4LL ? 4LL : s);"),
        "{}",
        all[1]
    );
    // f16 tables stay on the host.
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![5, 3], DType::F16)).unwrap());
    let i = Atom::Var(b.add_input(Aval::new(vec![4, 1], DType::I32)).unwrap());
    let Primitive::Gather(g) = &prog.jaxpr.eqns[0].prim else {
        unreachable!()
    };
    let y = b
        .add_eqn1(Primitive::Gather(g.clone()), vec![x, i])
        .unwrap();
    let half = b.build(vec![y]).unwrap();
    assert!(matches!(
        device_plan(&half.jaxpr).unwrap().as_slice(),
        [DeviceStep::Host { .. }]
    ));
}

/// Every data-movement primitive once, on f32 and on f16 (moved as bits).
fn data_movement_program(d: DType) -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![4, 6], d)).unwrap());
    let i = Atom::Var(b.add_input(Aval::new(vec![], DType::I32)).unwrap());
    let mut outs = Vec::new();
    let mut add = |b: &mut Builder, p: Primitive, ins: Vec<Atom>| {
        outs.push(b.add_eqn1(p, ins).unwrap());
    };
    add(&mut b, transpose(&[1, 0]), vec![x.clone()]);
    add(
        &mut b,
        Primitive::Slice(Slice {
            start_indices: vec![1, 0],
            limit_indices: vec![4, 6],
            strides: Some(vec![2, 3]),
        }),
        vec![x.clone()],
    );
    add(
        &mut b,
        Primitive::Rev(Rev {
            dimensions: vec![1],
        }),
        vec![x.clone()],
    );
    add(
        &mut b,
        Primitive::Pad(Pad {
            padding_config: vec![(1, -1, 1), (0, 2, 0)],
        }),
        vec![x.clone(), Builder::lit(d, 0.0)],
    );
    add(
        &mut b,
        Primitive::Concatenate(Concatenate { dimension: 0 }),
        vec![x.clone(), x.clone()],
    );
    add(
        &mut b,
        Primitive::DynamicSlice(DynamicSlice {
            slice_sizes: vec![2, 3],
        }),
        vec![x.clone(), i.clone(), Builder::lit(DType::I32, 1.0)],
    );
    add(
        &mut b,
        Primitive::DynamicUpdateSlice(DynamicUpdateSlice),
        vec![x.clone(), x.clone(), i.clone(), i],
    );
    b.build(outs).unwrap()
}

#[test]
fn data_movement_lowers_to_kernels() {
    for d in [DType::F32, DType::F16] {
        let prog = data_movement_program(d);
        let steps = device_plan(&prog.jaxpr).unwrap();
        assert_eq!(steps.len(), 7);
        assert!(
            steps.iter().all(|s| matches!(s, DeviceStep::Kernel { .. })),
            "{steps:?}"
        );
    }
    let srcs = sources(&data_movement_program(DType::F16));
    // f16 is moved as bits: no conversion helpers.
    assert!(srcs
        .iter()
        .all(|s| s.contains("unsigned short* __restrict__ out0")));
    assert!(
        srcs.iter().all(|s| !s.contains("mj_f16_to_f32")),
        "{srcs:?}"
    );
}

/// Every golden kernel and every lowered elementwise kernel compiles to PTX
/// with NVRTC (feature `cuda`; skipped when the library is not on the
/// loader path, e.g. `LD_LIBRARY_PATH=<site-packages>/nvidia/cu13/lib`).
#[cfg(feature = "cuda")]
#[test]
fn nvrtc_compiles_every_generated_kernel() {
    use microjax::exec::cuda::{nvrtc_compile, nvrtc_present};
    if !nvrtc_present() {
        eprintln!("skipped: no NVRTC library on the loader path");
        return;
    }
    let mut srcs: Vec<String> = [
        fused_chain(),
        bias_relu(),
        row_sum(),
        cumsum_rev(),
        iota(),
        threefry(),
        while_program(),
        cond_and_scan_program(),
        gather_scatter_program(DType::I32),
        gather_scatter_program(DType::U64),
        data_movement_program(DType::F32),
        data_movement_program(DType::BF16),
    ]
    .iter()
    .flat_map(sources)
    .collect();
    for (prim, dtypes) in elementwise_cases() {
        if let Some(p) = one_eqn(prim, &dtypes) {
            srcs.extend(sources(&p));
        }
    }
    for op in ReduceOp::ALL {
        for d in [
            DType::F32,
            DType::F64,
            DType::I32,
            DType::U8,
            DType::Bool,
            DType::I64,
            DType::F16,
            DType::BF16,
        ] {
            if let Some(p) = one_eqn(
                Primitive::Reduce(Reduce {
                    op: *op,
                    axes: vec![0],
                }),
                &[d],
            ) {
                srcs.extend(sources(&p));
            }
        }
    }
    for d in [DType::F32, DType::F16, DType::I32, DType::Bool] {
        let p = Primitive::Arg(ArgReduce {
            op: microjax::prims::ArgOp::Argmax,
            axis: 0,
            index_dtype: DType::I32,
        });
        srcs.extend(sources(&one_eqn(p, &[d]).unwrap()));
    }
    assert!(srcs.len() > 60, "{}", srcs.len());
    for s in &srcs {
        let ptx = nvrtc_compile(s, (9, 0)).unwrap_or_else(|e| panic!("{e}\n{s}"));
        assert!(ptx.contains(".entry mj_"), "{ptx}");
    }
}

#[cfg(feature = "cuda")]
#[test]
fn allocator_classes_and_cache_path() {
    use microjax::exec::cuda::{cache_path, nvrtc_options, size_class};
    assert_eq!(size_class(0), 256);
    assert_eq!(size_class(257), 512);
    assert_eq!(size_class(1 << 20), 1 << 20);
    assert_eq!(size_class((1 << 20) + 1), 2 << 20);
    assert_eq!(size_class((5 << 20) + 3), 6 << 20);
    assert_eq!(
        nvrtc_options((8, 6)),
        ["--gpu-architecture=compute_86", "--fmad=false"]
    );
    if let Some(p) = cache_path("mj_0123456789abcdef", (9, 0)) {
        assert!(
            p.ends_with("microjax_rs/cuda/0123456789abcdef-sm90.ptx"),
            "{p:?}"
        );
    }
}
