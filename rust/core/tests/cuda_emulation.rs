//! The generated CUDA kernels run on the host: g++ compiles a kernel's text
//! with a prelude standing in for CUDA's built-ins (one block of one
//! thread, so the grid-stride loop visits every work item in order) and a
//! `main` that reads the parameter buffers from files and writes the
//! outputs back. Results are compared with the CPU executor on the same
//! program. This checks the index arithmetic of the generated code on a
//! machine without a GPU (it cannot see races: the kernels are race-free
//! by construction, each output element written by one thread). Skipped
//! when no `g++` is on the PATH. Every program's device plan is built and
//! checked; `make test` emulates a fixed third of them ([`emulate_next`]),
//! `MICROJAX_FULL=1` all.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::cuda::bytes;
use microjax::exec::cuda::codegen::KernelSource;
use microjax::exec::cuda::{device_plan, DeviceStep};
use microjax::exec::interp::eval_closed;
use microjax::prims::gather::{Mode, ScatterOp};
use microjax::prims::{
    ArgReduce, BroadcastInDim, Concatenate, ConvertElementType, Cumulative, DynamicSlice,
    DynamicUpdateSlice, Iota, Pad, Reduce, Rev, Slice, Transpose,
};
use microjax::{
    Atom, Aval, Buffer, Builder, ClosedJaxpr, DType, HostArray, Primitive, Scalar, Var,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use crate::common;
use common::gather::{gather, scatter_p, GatherSpec};
use common::{bias_relu, data, fused_chain, input};

const PRELUDE: &str = r#"#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using namespace std;
struct Dim3 { long long x; };
static const Dim3 blockIdx = {0}, threadIdx = {0}, blockDim = {1}, gridDim = {1};
#define __global__
#define __device__
#define __forceinline__ inline
static inline float __uint_as_float(unsigned int v) { float f; memcpy(&f, &v, 4); return f; }
static inline unsigned int __float_as_uint(float f) { unsigned int v; memcpy(&v, &f, 4); return v; }
static inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, 8); return d; }
"#;

fn have_gxx() -> bool {
    Command::new("g++").arg("--version").output().is_ok()
}

/// The flags every emulated kernel is compiled with (a precompiled header
/// is used only by a compile with the flags it was built with).
const GXX_FLAGS: [&str; 2] = ["-O0", "-std=c++17"];

/// The prelude as a precompiled header, built once per test process:
/// parsing the standard headers is most of a kernel's compile time. `None`
/// where g++ cannot build it (each kernel then includes the prelude's text).
fn precompiled_prelude() -> Option<&'static PathBuf> {
    static HEADER: OnceLock<Option<PathBuf>> = OnceLock::new();
    HEADER
        .get_or_init(|| {
            // In cargo's scratch directory for tests (one fixed place, so
            // runs do not accumulate copies); written under per-process
            // names and renamed, so concurrent runs never read half a file.
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda_emulation_prelude");
            std::fs::create_dir_all(&dir).ok()?;
            let pid = std::process::id();
            let (header, pch) = (dir.join("prelude.h"), dir.join("prelude.h.gch"));
            let (header_tmp, pch_tmp) =
                (dir.join(format!("{pid}.h")), dir.join(format!("{pid}.gch")));
            std::fs::write(&header_tmp, PRELUDE).ok()?;
            let built = Command::new("g++")
                .args(GXX_FLAGS)
                .args(["-x", "c++-header", "-o"])
                .arg(&pch_tmp)
                .arg(&header_tmp)
                .status()
                .ok()?;
            let renamed = built.success()
                && std::fs::rename(&header_tmp, &header).is_ok()
                && std::fs::rename(&pch_tmp, &pch).is_ok();
            renamed.then_some(header)
        })
        .as_ref()
}

/// Returns from the calling test, reporting a skip, where no g++ is
/// installed to compile the emulated kernels.
macro_rules! skip_without_gxx {
    () => {
        if !have_gxx() {
            eprintln!("skipped: no g++");
            return;
        }
    };
}

/// The C parameter types of a kernel, read from its signature.
fn param_types(k: &KernelSource) -> Vec<String> {
    let sig = &k.source[k.source.find("extern \"C\"").unwrap()..];
    let open = sig.find('(').unwrap();
    let close = sig.find(')').unwrap();
    sig[open + 1..close]
        .split(", ")
        .map(|p| {
            let p = p.replace("__restrict__", "");
            let name_at = p.trim_end().rfind(' ').unwrap();
            p[..name_at].trim().to_string()
        })
        .collect()
}

/// Runs `k` on the host over `buffers` (its pointer parameters in order,
/// inputs then outputs; outputs hold their initial bytes) and returns the
/// buffers afterwards.
fn emulate(k: &KernelSource, buffers: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let types = param_types(k);
    assert_eq!(types.len(), buffers.len() + 1, "{types:?}");
    let dir: PathBuf =
        std::env::temp_dir().join(format!("mj_emul_{}_{}", std::process::id(), k.name));
    std::fs::create_dir_all(&dir).unwrap();
    let header = precompiled_prelude();
    let mut main = String::from(if header.is_some() { "" } else { PRELUDE });
    main.push_str(&k.source);
    main.push_str(
        "static vector<char> load(const char* p) {\n  FILE* f = fopen(p, \"rb\");\n  vector<char> v;\n  \
         int c;\n  while ((c = fgetc(f)) != EOF) v.push_back((char)c);\n  fclose(f);\n  v.resize(v.size() + 16);\n  return v;\n}\n",
    );
    main.push_str("int main(int argc, char** argv) {\n  vector<vector<char>> b;\n");
    main.push_str("  for (int j = 1; j < argc; ++j) b.push_back(load(argv[j]));\n");
    let args: Vec<String> = types[..buffers.len()]
        .iter()
        .enumerate()
        .map(|(j, t)| format!("({t})b[{j}].data()"))
        .collect();
    main.push_str(&format!(
        "  {}({}, {}LL);\n",
        k.name,
        args.join(", "),
        k.len
    ));
    main.push_str(
        "  for (int j = 1; j < argc; ++j) {\n    FILE* f = fopen(argv[j], \"wb\");\n    \
         fwrite(b[j - 1].data(), 1, b[j - 1].size() - 16, f);\n    fclose(f);\n  }\n  return 0;\n}\n",
    );
    let src = dir.join("k.cpp");
    std::fs::write(&src, &main).unwrap();
    let exe = dir.join("k");
    let mut gxx = Command::new("g++");
    gxx.args(GXX_FLAGS);
    if let Some(h) = header {
        gxx.arg("-include").arg(h);
    }
    let out = gxx.arg("-o").arg(&exe).arg(&src).output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{main}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<PathBuf> = (0..buffers.len())
        .map(|j| dir.join(format!("b{j}")))
        .collect();
    for (f, b) in files.iter().zip(buffers) {
        std::fs::write(f, b).unwrap();
    }
    let run = Command::new(&exe).args(&files).output().unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let result = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Runs `prog`'s device plan with every kernel [`emulate`]d (kernels,
/// scatters and aliases only: a plan with cuBLAS, host or control steps
/// panics) and returns its outputs.
fn run_emulated(prog: &ClosedJaxpr, args: &[HostArray]) -> Vec<HostArray> {
    let jx = &prog.jaxpr;
    assert!(jx.constvars.is_empty());
    let mut env: Vec<Option<Vec<u8>>> = vec![None; jx.avals.len()];
    for (v, a) in jx.invars.iter().zip(args) {
        env[v.index()] = Some(bytes::to_bytes(a.buffer()));
    }
    let nbytes = |v: Var| {
        let a = jx.aval(v).unwrap();
        bytes::nbytes(a.dtype, a.size().unwrap()).unwrap()
    };
    for step in device_plan(jx).unwrap() {
        let (kernel, mut bufs) = match &step {
            DeviceStep::Kernel { kernel, .. } => {
                let mut bufs: Vec<Vec<u8>> = kernel
                    .inputs
                    .iter()
                    .map(|(v, _)| env[v.index()].clone().unwrap())
                    .collect();
                bufs.extend(kernel.outputs.iter().map(|&o| vec![0u8; nbytes(o)]));
                (kernel, bufs)
            }
            // The output starts as the operand (the runtime's device copy).
            DeviceStep::Scatter {
                kernel, operand, ..
            } => {
                let mut bufs: Vec<Vec<u8>> = kernel
                    .inputs
                    .iter()
                    .map(|(v, _)| env[v.index()].clone().unwrap())
                    .collect();
                bufs.push(env[operand.index()].clone().unwrap());
                (kernel, bufs)
            }
            DeviceStep::Alias { input, out, .. } => {
                env[out.index()] = env[input.index()].clone();
                continue;
            }
            other => panic!("not emulated: {other:?}"),
        };
        let outs = emulate(kernel, &bufs);
        let first = kernel.inputs.len();
        for (o, b) in kernel.outputs.iter().zip(&outs[first..]) {
            env[o.index()] = Some(b.clone());
        }
        bufs.clear();
    }
    jx.outvars
        .iter()
        .map(|a| {
            let Atom::Var(v) = a else {
                panic!("literal output")
            };
            let aval = jx.aval(*v).unwrap();
            bytes::array_from_bytes(
                aval.shape.clone(),
                aval.dtype,
                env[v.index()].as_ref().unwrap(),
            )
            .unwrap()
        })
        .collect()
}

/// Whether the calling test emulates its next program. Each emulated
/// program is a g++ compile and run (tenths of a second), and the tests
/// sweep ops x axes x modes x dtypes: with `MICROJAX_FULL=1` every program
/// is emulated; otherwise a test's first program and a fixed third of the
/// rest, picked by a hash of the test's name and the program's position
/// (a spread over every sweep, whatever its loop sizes, the same each run).
/// The callers build and check every program's device plan either way.
fn emulate_next() -> bool {
    use std::cell::Cell;
    thread_local!(static CHECKS: Cell<u64> = const { Cell::new(0) });
    let k = CHECKS.with(|c| {
        let k = c.get();
        c.set(k + 1);
        k
    });
    if k == 0 || full_tier() {
        return true;
    }
    // FNV-1a over the test's name (libtest names each test's thread) and k.
    let name = std::thread::current().name().unwrap_or("").to_owned();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain(k.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h.is_multiple_of(3)
}

/// `MICROJAX_FULL=1` (the full test tier, as for pytest).
fn full_tier() -> bool {
    std::env::var("MICROJAX_FULL").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// `prog`'s emulated device run against the CPU: bit for bit, or within
/// `rtol` for floats when `rtol > 0` (device and host math libraries
/// differ). Emulated for the programs [`emulate_next`] picks.
fn check_program(prog: &ClosedJaxpr, args: &[HostArray], rtol: f64) {
    if !emulate_next() {
        return;
    }
    let shared: Vec<Arc<HostArray>> = args.iter().cloned().map(Arc::new).collect();
    let want = eval_closed(prog, &shared).unwrap();
    let got = run_emulated(prog, args);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape(), w.shape());
        if rtol > 0.0 && g.dtype().is_float() {
            let f = |a: &HostArray, i| Scalar::from_buffer(a.buffer(), i).unwrap().as_f64();
            for (x, y) in (0..g.size()).map(|i| (f(g, i), f(w, i))) {
                assert!((x - y).abs() <= rtol * (1.0 + y.abs()), "{x} vs {y}");
            }
        } else {
            // Bitwise, so that NaNs compare; the first difference shown.
            let (gb, wb) = (bytes::to_bytes(g.buffer()), bytes::to_bytes(w.buffer()));
            let size = g.dtype().itemsize().max(1);
            if let Some(k) =
                (0..g.size()).find(|k| gb[k * size..][..size] != wb[k * size..][..size])
            {
                let at = |a: &HostArray| Scalar::from_buffer(a.buffer(), k);
                panic!("element {k}: {:?} vs {:?} (of {})", at(g), at(w), g.size());
            }
        }
    }
}

/// A one-equation program of `prim` over inputs of `args`' avals.
fn one_eqn(prim: Primitive, args: &[HostArray]) -> ClosedJaxpr {
    let mut b = Builder::new();
    let ins: Vec<Atom> = args
        .iter()
        .map(|a| Atom::Var(b.add_input(a.aval()).unwrap()))
        .collect();
    let outs = b.add_eqn(prim, ins, None).unwrap();
    b.build(outs.into_iter().map(Atom::Var).collect()).unwrap()
}

/// [`one_eqn`] of `prim` over `args`, run by [`check_program`]; returns its
/// device step.
fn check_one(prim: Primitive, args: &[HostArray]) -> DeviceStep {
    let prog = one_eqn(prim, args);
    let steps = device_plan(&prog.jaxpr).unwrap();
    let [step] = steps.as_slice() else {
        panic!("{steps:?}")
    };
    if matches!(step, DeviceStep::Kernel { .. } | DeviceStep::Scatter { .. }) {
        check_program(&prog, args, 0.0);
    }
    step.clone()
}

/// [`check_one`] of an equation that must lower to a generated kernel.
fn check_kernel(prim: Primitive, args: &[HostArray]) {
    let step = check_one(prim, args);
    assert!(matches!(step, DeviceStep::Kernel { .. }), "{step:?}");
}

/// [`check_one`] of a scatter that must lower to a device scatter.
fn check_scatter(prim: Primitive, args: &[HostArray]) {
    let step = check_one(prim, args);
    assert!(matches!(step, DeviceStep::Scatter { .. }), "{step:?}");
}

fn f32a(shape: &[usize], v: Vec<f32>) -> HostArray {
    HostArray::new(shape.to_vec(), Buffer::F32(v.into())).unwrap()
}

fn ramp(shape: &[usize]) -> HostArray {
    let n: usize = shape.iter().product();
    f32a(shape, (0..n).map(|k| k as f32 * 0.5 - 2.0).collect())
}

fn idx(shape: &[usize], v: Vec<i32>) -> HostArray {
    HostArray::new(shape.to_vec(), Buffer::I32(v.into())).unwrap()
}

const MODES: [Mode; 3] = [Mode::Clip, Mode::FillOrDrop, Mode::PromiseInBounds];

/// Rows of a `[n, 3]` table (an embedding lookup) by `[.., 1]` indices.
const ROWS: GatherSpec<'static> = GatherSpec {
    offset: &[1],
    collapsed: &[0],
    map: &[0],
    obatch: &[],
    ibatch: &[],
    sizes: &[1, 3],
};

#[test]
fn gathers_match_the_cpu() {
    skip_without_gxx!();
    // A 3x2 window at a 2-d start (dynamic_slice), no batch axes.
    let window = GatherSpec {
        offset: &[0, 1],
        collapsed: &[],
        map: &[0, 1],
        obatch: &[],
        ibatch: &[],
        sizes: &[3, 2],
    };
    // Per-example rows (a vmapped lookup): batching axes on both sides.
    let batched = GatherSpec {
        offset: &[1],
        collapsed: &[1],
        map: &[1],
        obatch: &[0],
        ibatch: &[0],
        sizes: &[1, 1, 3],
    };
    for mode in MODES {
        for fill in [None, Some(-7.5)] {
            // One index out of bounds.
            let idx_rows = idx(&[2, 2, 1], vec![4, 0, 2, 9]);
            check_kernel(gather(&ROWS, mode, fill), &[ramp(&[5, 3]), idx_rows]);
            check_kernel(
                gather(&window, mode, fill),
                &[ramp(&[6, 5]), idx(&[2], vec![4, -1])],
            );
            let idx_b = idx(&[2, 1], vec![3, 1]);
            check_kernel(gather(&batched, mode, fill), &[ramp(&[2, 4, 3]), idx_b]);
        }
    }
    // Integer elements and 64-bit unsigned indices (one above i64::MAX).
    let ints = HostArray::new(
        vec![4, 2],
        Buffer::I64((0..8).map(|k| k * 10 - 30).collect()),
    )
    .unwrap();
    let u = HostArray::new(vec![3, 1], Buffer::U64(vec![1, u64::MAX, 3].into())).unwrap();
    let rows2 = GatherSpec {
        sizes: &[1, 2],
        ..ROWS
    };
    for mode in MODES {
        check_kernel(gather(&rows2, mode, None), &[ints.clone(), u.clone()]);
    }
}

#[test]
fn scatters_match_the_cpu_with_repeated_and_dropped_indices() {
    skip_without_gxx!();
    let ops = [
        ScatterOp::Set,
        ScatterOp::Add,
        ScatterOp::Mul,
        ScatterOp::Min,
        ScatterOp::Max,
    ];
    for op in ops {
        for mode in MODES {
            // Rows into a table (an embedding gradient): index 1 repeats,
            // 9 is out of bounds.
            let p = scatter_p(op, &[1], &[0], &[0], &[], &[], mode, false);
            let i = idx(&[4, 1], vec![1, 3, 1, 9]);
            check_scatter(p, &[ramp(&[5, 3]), i, ramp(&[4, 3])]);
            // Single elements of a vector (`x.at[i].add(v)`), with NaN.
            let p = scatter_p(op, &[], &[0], &[0], &[], &[], mode, false);
            let mut v: Vec<f32> = (0..5).map(|k| k as f32 - 1.5).collect();
            v[2] = f32::NAN;
            let u = f32a(&[5], v);
            check_scatter(p, &[ramp(&[6]), idx(&[5, 1], vec![5, 0, 5, -2, 2]), u]);
            // Integer and bool elements.
            let xi = HostArray::new(vec![4], Buffer::I32(vec![5, -3, i32::MAX, 0].into())).unwrap();
            let ui = HostArray::new(vec![3], Buffer::I32(vec![7, i32::MAX, -9].into())).unwrap();
            check_scatter(
                scatter_p(op, &[], &[0], &[0], &[], &[], mode, false),
                &[xi, idx(&[3, 1], vec![2, 2, 0]), ui],
            );
            let xb =
                HostArray::new(vec![3], Buffer::Bool(vec![true, false, false].into())).unwrap();
            let ub = HostArray::new(vec![2], Buffer::Bool(vec![false, true].into())).unwrap();
            check_scatter(
                scatter_p(op, &[], &[0], &[0], &[], &[], mode, false),
                &[xb, idx(&[2, 1], vec![0, 1]), ub],
            );
        }
    }
}

#[test]
fn scatters_whose_windows_can_overlap_run_on_the_host() {
    // A 2-row window at an indexed start: two updates can cover one
    // element from different window rows.
    let p = scatter_p(
        ScatterOp::Add,
        &[1, 2],
        &[],
        &[0],
        &[],
        &[],
        Mode::FillOrDrop,
        false,
    );
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![5, 3], DType::F32)).unwrap());
    let i = Atom::Var(b.add_input(Aval::new(vec![2, 1], DType::I32)).unwrap());
    let u = Atom::Var(b.add_input(Aval::new(vec![2, 2, 3], DType::F32)).unwrap());
    let out = b.add_eqn1(p, vec![x, i, u]).unwrap();
    let prog: ClosedJaxpr = b.build(vec![out]).unwrap();
    assert_plan!(prog, [DeviceStep::Host { reason, .. }] if reason.contains("overlap"));
}

use microjax::prims::random::Threefry2x32;
use microjax::prims::CumOp;
use microjax::{BinaryOp, ReduceOp, UnaryOp};

fn u32a(shape: &[usize], seed: u32) -> HostArray {
    let n: usize = shape.iter().product();
    let v = (0..n as u32)
        .map(|k| k.wrapping_mul(2_654_435_761) ^ seed)
        .collect();
    HostArray::new(shape.to_vec(), Buffer::U32(v)).unwrap()
}

#[test]
fn fused_reduction_scan_iota_and_threefry_kernels_match_the_cpu() {
    skip_without_gxx!();
    // A fused elementwise chain, and a broadcast bias + relu.
    check_program(&fused_chain(), &[(*data(&[4, 8], 1)).clone()], 1e-5);
    let args = [(*data(&[4, 3], 2)).clone(), (*data(&[3], 3)).clone()];
    check_program(&bias_relu(), &args, 0.0);
    // Reductions over leading, trailing, middle and all axes.
    let x = data(&[3, 4, 5], 4);
    let xi = HostArray::new(
        vec![3, 4, 5],
        Buffer::I32((0..60).map(|k| (k * 7919) % 61 - 30).collect()),
    )
    .unwrap();
    for op in ReduceOp::ALL {
        for axes in [vec![0], vec![2], vec![1], vec![0, 2], vec![0, 1, 2]] {
            let p = Primitive::Reduce(Reduce { op: *op, axes });
            if matches!(op, ReduceOp::And | ReduceOp::Or | ReduceOp::Xor) {
                check_kernel(p, std::slice::from_ref(&xi));
                continue;
            }
            let mut b = Builder::new();
            let a = input(&mut b, &[3, 4, 5]);
            let s = b.add_eqn1(p.clone(), vec![a]).unwrap();
            check_program(&b.build(vec![s]).unwrap(), &[(*x).clone()], 1e-5);
            check_kernel(p, std::slice::from_ref(&xi));
        }
    }
    // Cumulative ops along each axis, both directions.
    for op in [CumOp::Sum, CumOp::Prod, CumOp::Max, CumOp::Min] {
        for (axis, reverse) in [(0, false), (1, true), (2, false), (2, true)] {
            check_kernel(
                Primitive::Cumulative(Cumulative { op, axis, reverse }),
                std::slice::from_ref(&xi),
            );
        }
    }
    // iota along each dimension.
    for dimension in 0..3 {
        let p = Primitive::Iota(Iota {
            dtype: DType::I32,
            shape: vec![2, 3, 4],
            dimension,
        });
        check_kernel(p, &[]);
    }
    // threefry2x32: the random bits bit for bit, scalar keys and full.
    check_kernel(
        Primitive::Threefry2x32(Threefry2x32),
        &[u32a(&[], 1), u32a(&[], 2), u32a(&[7], 3), u32a(&[7], 4)],
    );
    check_kernel(
        Primitive::Threefry2x32(Threefry2x32),
        &[u32a(&[5], 5), u32a(&[5], 6), u32a(&[5], 7), u32a(&[5], 8)],
    );
}

#[test]
fn fused_groups_whose_outputs_escape_before_a_later_input_is_read() {
    skip_without_gxx!();
    // The group stores `a` (an escaping output) before it first reads `y`:
    // the launch passes inputs, then outputs, so the signature must list
    // `y` before `a`'s output buffer.
    let mut b = Builder::new();
    let x = input(&mut b, &[4, 3]);
    let y = input(&mut b, &[4, 3]);
    let a = b.unary(UnaryOp::Neg, x.clone()).unwrap();
    let s = b.binary(BinaryOp::Mul, a.clone(), y).unwrap();
    let t = b.binary(BinaryOp::Add, s, x).unwrap();
    let prog = b.build(vec![a, t]).unwrap();
    assert_plan!(prog, [DeviceStep::Kernel { kernel, .. }] if kernel.inputs.len() == 2 && kernel.outputs.len() == 2);
    let args = [(*data(&[4, 3], 11)).clone(), (*data(&[4, 3], 12)).clone()];
    check_program(&prog, &args, 0.0);
}

/// Every f16/bf16 bit pattern's f32 value, and f32 values around every
/// rounding boundary, converted by the generated helpers exactly as the
/// CPU converts them.
#[test]
fn half_conversions_are_bit_exact() {
    skip_without_gxx!();
    let convert = |from: DType, to: DType, x: HostArray| {
        let p = Primitive::ConvertElementType(ConvertElementType {
            new_dtype: to,
            weak_type: false,
        });
        assert_eq!(x.dtype(), from);
        check_kernel(p, &[x]);
    };
    let all: Vec<u16> = (0..=u16::MAX).collect();
    let f16s = all.iter().map(|&b| half::f16::from_bits(b)).collect();
    let bf16s = all.iter().map(|&b| half::bf16::from_bits(b)).collect();
    convert(
        DType::F16,
        DType::F32,
        HostArray::new(vec![65536], Buffer::F16(f16s)).unwrap(),
    );
    convert(
        DType::BF16,
        DType::F32,
        HostArray::new(vec![65536], Buffer::BF16(bf16s)).unwrap(),
    );
    // f32 values: every f16 value, the midpoints between neighbours and
    // their neighbours (ties and near-ties), subnormals, overflow, NaNs.
    let mut v: Vec<f32> = Vec::new();
    for b in 0..=u16::MAX {
        let h = half::f16::from_bits(b).to_f32();
        let next = half::f16::from_bits(b.wrapping_add(1)).to_f32();
        v.push(h);
        if h.is_finite() && next.is_finite() {
            let mid = (h + next) / 2.0;
            v.extend([
                mid,
                f32::from_bits(mid.to_bits() + 1),
                f32::from_bits(mid.to_bits() - 1),
            ]);
        }
    }
    v.extend([
        65504.0,
        65519.99,
        65520.0,
        1e10,
        -1e-10,
        f32::MIN_POSITIVE,
        1e-45,
    ]);
    v.extend([
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::INFINITY,
    ]);
    for b in (0..u32::MAX).step_by(65_537) {
        v.push(f32::from_bits(b));
    }
    let x = f32a(&[v.len()], v);
    convert(DType::F32, DType::F16, x.clone());
    convert(DType::F32, DType::BF16, x);
}

#[test]
fn half_elementwise_chains_round_every_op() {
    skip_without_gxx!();
    for d in [DType::F16, DType::BF16] {
        // tanh(x * 2 + 1) * sin(x) - exp(-x * x), all in d, and a compare.
        let mut b = Builder::new();
        let x = Atom::Var(b.add_input(Aval::new(vec![64], d)).unwrap());
        let two = microjax::Builder::lit(d, 2.0);
        let x2 = b.binary(BinaryOp::Mul, x.clone(), two).unwrap();
        let y = b.unary(microjax::UnaryOp::Tanh, x2).unwrap();
        let s = b.unary(microjax::UnaryOp::Sin, x.clone()).unwrap();
        let ys = b.binary(BinaryOp::Mul, y, s).unwrap();
        let gt = b
            .add_eqn1(Primitive::Compare(microjax::CmpOp::Gt), vec![ys.clone(), x])
            .unwrap();
        let prog = b.build(vec![ys, gt]).unwrap();
        let vals: Vec<f32> = (0..64).map(|k| (k as f32 - 32.0) / 9.0).collect();
        let buf = match d {
            DType::F16 => Buffer::F16(vals.iter().map(|&f| half::f16::from_f32(f)).collect()),
            _ => Buffer::BF16(vals.iter().map(|&f| half::bf16::from_f32(f)).collect()),
        };
        // One 16-bit ulp: the device's float tanh/sin may round the other
        // way from the CPU's before the result is rounded to 16 bits.
        let ulp = if d == DType::F16 { 1e-3 } else { 8e-3 };
        check_program(&prog, &[HostArray::new(vec![64], buf).unwrap()], ulp);
    }
}

#[test]
fn half_reductions_and_scans_accumulate_in_f32() {
    skip_without_gxx!();
    let vals: Vec<f32> = (0..60)
        .map(|k| ((k * 37) % 23) as f32 / 7.0 - 1.5)
        .collect();
    for d in [DType::F16, DType::BF16] {
        let buf = match d {
            DType::F16 => Buffer::F16(vals.iter().map(|&f| half::f16::from_f32(f)).collect()),
            _ => Buffer::BF16(vals.iter().map(|&f| half::bf16::from_f32(f)).collect()),
        };
        let x = HostArray::new(vec![3, 4, 5], buf).unwrap();
        let ulp = if d == DType::F16 { 1e-3 } else { 8e-3 };
        let mut prims: Vec<Primitive> = Vec::new();
        for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod] {
            for axes in [vec![0], vec![1, 2]] {
                prims.push(Primitive::Reduce(Reduce { op, axes }));
            }
        }
        for op in [CumOp::Sum, CumOp::Max] {
            prims.push(Primitive::Cumulative(Cumulative {
                op,
                axis: 1,
                reverse: true,
            }));
        }
        for p in prims {
            let mut b = Builder::new();
            let a = Atom::Var(b.add_input(x.aval()).unwrap());
            let y = b.add_eqn1(p, vec![a]).unwrap();
            let prog = b.build(vec![y]).unwrap();
            assert_plan!(prog, [DeviceStep::Kernel { .. }]);
            check_program(&prog, std::slice::from_ref(&x), ulp);
        }
    }
}

fn i32s(shape: &[usize], v: Vec<i32>) -> HostArray {
    HostArray::new(shape.to_vec(), Buffer::I32(v.into())).unwrap()
}

fn scalar_i32(v: i32) -> HostArray {
    i32s(&[], vec![v])
}

/// `dynamic_slice` of a 2x2x3 window of `x` (3x4x5) and
/// `dynamic_update_slice` of `u` into it, starts clamped into range.
fn check_dynamic_slices(x: &HostArray, u: &HostArray) {
    for starts in [[0, 0, 0], [2, 3, 4], [-5, 1, 9], [1, -1, 1]] {
        let mut args = vec![x.clone()];
        args.extend(starts.iter().map(|&s| scalar_i32(s)));
        let ds = Primitive::DynamicSlice(DynamicSlice {
            slice_sizes: vec![2, 2, 3],
        });
        check_kernel(ds, &args);
        let mut args = vec![x.clone(), u.clone()];
        args.extend(starts.iter().map(|&s| scalar_i32(s)));
        check_kernel(Primitive::DynamicUpdateSlice(DynamicUpdateSlice), &args);
    }
}

#[test]
fn data_movement_kernels_match_the_cpu() {
    skip_without_gxx!();
    let x = ramp(&[3, 4, 5]);
    let half = HostArray::new(
        vec![3, 4, 5],
        Buffer::F16(
            (0..60)
                .map(|k| half::f16::from_f32(k as f32 - 7.25))
                .collect(),
        ),
    )
    .unwrap();
    let flags = HostArray::new(
        vec![3, 4, 5],
        Buffer::Bool((0..60).map(|k| k % 3 == 0).collect()),
    )
    .unwrap();
    for arr in [&x, &half, &flags] {
        for permutation in [vec![2, 0, 1], vec![1, 0, 2], vec![0, 1, 2]] {
            check_kernel(
                Primitive::Transpose(Transpose { permutation }),
                std::slice::from_ref(arr),
            );
        }
        let slice = Primitive::Slice(Slice {
            start_indices: vec![1, 0, 1],
            limit_indices: vec![3, 4, 5],
            strides: Some(vec![1, 3, 2]),
        });
        check_kernel(slice, std::slice::from_ref(arr));
        let rev = Primitive::Rev(Rev {
            dimensions: vec![0, 2],
        });
        check_kernel(rev, std::slice::from_ref(arr));
        let cat = Primitive::Concatenate(Concatenate { dimension: 1 });
        let parts = [arr.clone(), arr.clone(), arr.clone()];
        check_kernel(cat, &parts);
    }
    // pad: negative low/high, interior padding, the value an operand.
    let pad = Primitive::Pad(Pad {
        padding_config: vec![(1, -1, 0), (-1, 2, 1), (2, 0, 2)],
    });
    check_kernel(pad.clone(), &[x.clone(), f32a(&[], vec![-9.5])]);
    let hpad = HostArray::new(vec![], Buffer::F16(vec![half::f16::from_f32(3.5)].into())).unwrap();
    check_kernel(pad, &[half.clone(), hpad]);
    check_dynamic_slices(&x, &ramp(&[2, 2, 3]));
    // Literal starts and a literal padding value are folded into the text.
    let mut b = Builder::new();
    let a = Atom::Var(b.add_input(x.aval()).unwrap());
    let lit_i = |v: f64| microjax::Builder::lit(DType::I32, v);
    let ds = b
        .add_eqn1(
            Primitive::DynamicSlice(DynamicSlice {
                slice_sizes: vec![1, 4, 2],
            }),
            vec![a.clone(), lit_i(2.0), lit_i(0.0), lit_i(7.0)],
        )
        .unwrap();
    let padded = b
        .add_eqn1(
            Primitive::Pad(Pad {
                padding_config: vec![(0, 0, 0), (1, 1, 0), (0, 0, 0)],
            }),
            vec![a, microjax::Builder::lit(DType::F32, 0.25)],
        )
        .unwrap();
    let prog = b.build(vec![ds, padded]).unwrap();
    let steps = device_plan(&prog.jaxpr).unwrap();
    assert!(
        steps.iter().all(|s| matches!(s, DeviceStep::Kernel { .. })),
        "{steps:?}"
    );
    check_program(&prog, &[x], 0.0);
}

#[test]
fn broadcasts_the_fused_kernels_cannot_read_match_the_cpu() {
    skip_without_gxx!();
    // Kept axes that are not one run, and a unit axis broadcast.
    let bcast = |shape: Vec<usize>, dims: Vec<usize>| {
        Primitive::BroadcastInDim(BroadcastInDim {
            shape,
            broadcast_dimensions: dims,
        })
    };
    check_kernel(bcast(vec![3, 4, 5], vec![0, 2]), &[ramp(&[3, 5])]);
    check_kernel(bcast(vec![2, 3, 4], vec![0, 1]), &[ramp(&[2, 1])]);
    let flags =
        HostArray::new(vec![4], Buffer::Bool(vec![true, false, false, true].into())).unwrap();
    check_kernel(bcast(vec![4, 3, 2], vec![0]), &[flags]);
    // A literal broadcast (a fill), and unit axes only (an alias).
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![3, 1], DType::F32)).unwrap());
    let fill = b
        .add_eqn1(
            bcast(vec![3, 2], vec![]),
            vec![microjax::Builder::lit(DType::F32, 0.5)],
        )
        .unwrap();
    let unit = b
        .add_eqn1(bcast(vec![3, 1, 1], vec![0, 1]), vec![x])
        .unwrap();
    let prog = b.build(vec![fill, unit]).unwrap();
    assert_plan!(prog, [DeviceStep::Kernel { .. }, DeviceStep::Alias { .. }]);
    check_program(&prog, &[ramp(&[3, 1])], 0.0);
}

#[test]
fn argmax_and_argmin_match_the_cpu_with_ties_and_nans() {
    skip_without_gxx!();
    use microjax::prims::ArgOp;
    let mut v: Vec<f32> = (0..60).map(|k| ((k * 7) % 5) as f32).collect();
    v[13] = f32::NAN;
    v[41] = f32::NAN;
    let x = f32a(&[3, 4, 5], v.clone());
    let ints = i32s(
        &[3, 4, 5],
        v.iter()
            .map(|&f| if f.is_nan() { -1 } else { f as i32 })
            .collect(),
    );
    let flags = HostArray::new(
        vec![3, 4, 5],
        Buffer::Bool((0..60).map(|k| k % 7 == 3).collect()),
    )
    .unwrap();
    let halves = HostArray::new(
        vec![3, 4, 5],
        Buffer::BF16(v.iter().map(|&f| half::bf16::from_f32(f)).collect()),
    )
    .unwrap();
    for op in [ArgOp::Argmax, ArgOp::Argmin] {
        for axis in 0..3 {
            for index_dtype in [DType::I32, DType::I64] {
                let p = Primitive::Arg(ArgReduce {
                    op,
                    axis,
                    index_dtype,
                });
                for arr in [&x, &ints, &flags, &halves] {
                    check_kernel(p.clone(), std::slice::from_ref(arr));
                }
            }
        }
    }
}

/// A complex buffer of `n` values spread over the plane (both signs, one
/// zero), in `d`.
fn complex_data(d: DType, n: usize) -> HostArray {
    let parts: Vec<(f64, f64)> = (0..n)
        .map(|k| {
            let t = k as f64 * 0.37;
            if k == 3 {
                (0.0, 0.0)
            } else {
                (1.7 * t.sin() - 0.2, 1.3 * (1.9 * t).cos())
            }
        })
        .collect();
    let buf = match d {
        DType::C64 => Buffer::C64(
            parts
                .iter()
                .map(|&(r, i)| microjax::array::C32::new(r as f32, i as f32))
                .collect::<Vec<_>>()
                .into(),
        ),
        _ => Buffer::C128(
            parts
                .iter()
                .map(|&(r, i)| microjax::array::C64::new(r, i))
                .collect::<Vec<_>>()
                .into(),
        ),
    };
    HostArray::new(vec![n], buf).unwrap()
}

/// `prog`'s emulated device run against the CPU within `rtol` on every
/// real and imaginary part (NaNs match NaNs), for the programs
/// [`emulate_next`] picks; returns the device steps.
fn check_complex_program(prog: &ClosedJaxpr, args: &[HostArray], rtol: f64) -> Vec<DeviceStep> {
    if !emulate_next() {
        return device_plan(&prog.jaxpr).unwrap();
    }
    let shared: Vec<Arc<HostArray>> = args.iter().cloned().map(Arc::new).collect();
    let want = eval_closed(prog, &shared).unwrap();
    let got = run_emulated(prog, args);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!((g.shape(), g.dtype()), (w.shape(), w.dtype()));
        for k in 0..g.size() {
            let parts = |a: &HostArray| match Scalar::from_buffer(a.buffer(), k).unwrap() {
                Scalar::Complex(re, im) => [re, im],
                s => [s.as_f64(), 0.0],
            };
            for (x, y) in parts(g).into_iter().zip(parts(w)) {
                let same = (x.is_nan() && y.is_nan()) || (x - y).abs() <= rtol * (1.0 + y.abs());
                assert!(same, "{:?} element {k}: {x} vs {y}", g.dtype());
            }
        }
    }
    device_plan(&prog.jaxpr).unwrap()
}

#[test]
fn complex_elementwise_kernels_match_the_cpu() {
    use microjax::UnaryOp as U;
    skip_without_gxx!();
    for (d, rtol) in [(DType::C64, 2e-5), (DType::C128, 1e-12)] {
        let mut b = Builder::new();
        let x = Atom::Var(b.add_input(Aval::new(vec![24], d)).unwrap());
        let c = Atom::Lit(microjax::Literal::new(
            Scalar::Complex(0.5, -1.25),
            d,
            false,
        ));
        let mut outs = Vec::new();
        for op in [
            U::Neg,
            U::Square,
            U::Exp,
            U::Log,
            U::Sqrt,
            U::Rsqrt,
            U::Sin,
            U::Cos,
            U::Tan,
            U::Sinh,
            U::Cosh,
            U::Tanh,
            U::Log1p,
            U::Expm1,
            U::Abs,
            U::Sign,
        ] {
            // each op on its own output, off the zero element for log/rsqrt
            let shifted = b.binary(BinaryOp::Add, x.clone(), c.clone()).unwrap();
            outs.push(b.unary(op, shifted).unwrap());
        }
        for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div] {
            outs.push(b.binary(op, x.clone(), c.clone()).unwrap());
        }
        let sq = b.binary(BinaryOp::Mul, x.clone(), x.clone()).unwrap();
        for cmp in [microjax::CmpOp::Eq, microjax::CmpOp::Ne] {
            outs.push(
                b.add_eqn1(Primitive::Compare(cmp), vec![sq.clone(), x.clone()])
                    .unwrap(),
            );
        }
        for y in [0, 3, -2] {
            let p = Primitive::IntegerPow(microjax::prims::IntegerPow { y });
            let shifted = b.binary(BinaryOp::Add, x.clone(), c.clone()).unwrap();
            outs.push(b.add_eqn1(p, vec![shifted]).unwrap());
        }
        let other = if d == DType::C64 {
            DType::C128
        } else {
            DType::C64
        };
        for to in [other, d.real_dtype(), DType::Bool] {
            let p = Primitive::ConvertElementType(ConvertElementType {
                new_dtype: to,
                weak_type: false,
            });
            outs.push(b.add_eqn1(p, vec![x.clone()]).unwrap());
        }
        let prog = b.build(outs).unwrap();
        let steps = check_complex_program(&prog, &[complex_data(d, 24)], rtol);
        assert!(
            steps.iter().all(|s| matches!(s, DeviceStep::Kernel { .. })),
            "{steps:?}"
        );
        // A real operand converted to complex, scaled and selected.
        let mut b = Builder::new();
        let r = Atom::Var(b.add_input(Aval::new(vec![8], d.real_dtype())).unwrap());
        let to = Primitive::ConvertElementType(ConvertElementType {
            new_dtype: d,
            weak_type: false,
        });
        let z = b.add_eqn1(to, vec![r.clone()]).unwrap();
        let zc = b.binary(BinaryOp::Mul, z.clone(), c.clone()).unwrap();
        let zero = microjax::Builder::lit(d.real_dtype(), 0.0);
        let pos = b
            .add_eqn1(Primitive::Compare(microjax::CmpOp::Gt), vec![r, zero])
            .unwrap();
        let sel = b
            .add_eqn1(
                Primitive::SelectN(microjax::prims::SelectN),
                vec![pos, z, zc],
            )
            .unwrap();
        let prog = b.build(vec![sel]).unwrap();
        let real = if d == DType::C64 {
            f32a(&[8], (0..8).map(|k| k as f32 - 3.5).collect())
        } else {
            HostArray::new(
                vec![8],
                Buffer::F64((0..8).map(|k| k as f64 - 3.5).collect::<Vec<_>>().into()),
            )
            .unwrap()
        };
        check_complex_program(&prog, &[real], rtol);
    }
}

#[test]
fn complex_ops_without_a_device_formula_run_on_the_host() {
    for d in [DType::C64, DType::C128] {
        let mut b = Builder::new();
        let x = Atom::Var(b.add_input(Aval::new(vec![4], d)).unwrap());
        let y = b.unary(microjax::UnaryOp::Asin, x).unwrap();
        let prog = b.build(vec![y]).unwrap();
        let steps = device_plan(&prog.jaxpr).unwrap();
        assert!(
            matches!(steps.as_slice(), [DeviceStep::Host { eqn: 0, .. }]),
            "{steps:?}"
        );
    }
}

#[path = "cuda_emulation/complex_kernels.rs"]
mod complex_kernels;

#[path = "cuda_emulation/collectives.rs"]
mod collectives;
