//! The allocation budget: an absurd shape is a typed
//! `Error::AllocationTooLarge` (or `Error::Overflow`) from eager kernels, the
//! interpreter, compiled plans, buffer constructors and loaded programs,
//! never an allocator abort.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::array::{budget, live};
use microjax::exec::compiled::Compiled;
use microjax::exec::interp::eval_closed;
use microjax::exec::ExecCtx;
use microjax::export::{Determinism, Limits, Program};
use microjax::prims::kernel;
use microjax::prims::sort::SortOp;
use microjax::prims::{BroadcastInDim, Iota, Slice};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, DType, Error, HostArray, Primitive, Scalar,
};
use std::sync::{Arc, Mutex, MutexGuard};

mod common;
use common::{f32v, lit};

/// The budget is process-wide: tests that change it (or rely on the
/// default) run one at a time.
static LOCK: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// 2^20 × 2^20 f32: 4 TiB, over any machine's physical memory here.
const ABSURD: [usize; 2] = [1 << 20, 1 << 20];

fn too_large<T: std::fmt::Debug>(r: microjax::Result<T>) -> Error {
    match r {
        Err(e @ Error::AllocationTooLarge { .. }) => e,
        other => panic!("expected AllocationTooLarge, got {other:?}"),
    }
}

fn broadcast(shape: &[usize]) -> Primitive {
    Primitive::BroadcastInDim(BroadcastInDim {
        shape: shape.to_vec(),
        broadcast_dimensions: vec![],
    })
}

/// `x:f32[] -> broadcast(x, shape) + 1`.
fn broadcast_program(shape: &[usize]) -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![], DType::F32)).unwrap());
    let big = b.add_eqn1(broadcast(shape), vec![x]).unwrap();
    let y = b
        .binary(BinaryOp::Add, big, Builder::lit(DType::F32, 1.0))
        .unwrap();
    b.build(vec![y]).unwrap()
}

fn scalar_arg() -> Arc<HostArray> {
    Arc::new(HostArray::new(vec![], Buffer::F32(vec![2.0].into())).unwrap())
}

#[test]
fn eager_kernels_check_output_avals_before_running() {
    let _g = serial();
    let x = HostArray::new(vec![], Buffer::F32(vec![1.0].into())).unwrap();
    let e = too_large(kernel::eval(
        &ExecCtx::default(),
        &broadcast(&ABSURD),
        &[&x],
    ));
    let msg = e.to_string();
    assert!(
        msg.contains("broadcast_in_dim") && msg.contains("RESOURCE_EXHAUSTED"),
        "{msg}"
    );
    assert!(msg.contains("(1048576, 1048576)"), "{msg}");
    let iota = Primitive::Iota(Iota {
        dtype: DType::I32,
        shape: ABSURD.to_vec(),
        dimension: 0,
    });
    too_large(kernel::eval(&ExecCtx::default(), &iota, &[]));
    // An element count that overflows usize is an Overflow error.
    let r = kernel::eval(&ExecCtx::default(), &broadcast(&[usize::MAX, 4]), &[&x]);
    assert!(
        matches!(r, Err(Error::Overflow { .. }) | Err(Error::Shape { .. })),
        "{r:?}"
    );
}

#[test]
fn buffer_constructors_are_fallible() {
    let _g = serial();
    too_large(Buffer::zeros(DType::F64, 1 << 50));
    too_large(Scalar::Float(1.0).to_buffer(DType::F32, 1 << 50));
    too_large(HostArray::zeros(ABSURD.to_vec(), DType::U8));
    assert!(matches!(
        HostArray::zeros(vec![usize::MAX, 2], DType::F32),
        Err(Error::Overflow { .. })
    ));
    // Float0 holds no data: any length fits.
    assert_eq!(
        Buffer::zeros(DType::Float0, 1 << 50).unwrap().len(),
        1 << 50
    );
}

#[test]
fn interpreter_and_compiled_plans_reject_absurd_values() {
    let _g = serial();
    let prog = Arc::new(broadcast_program(&ABSURD));
    too_large(eval_closed(&prog, &[scalar_arg()]));
    too_large(Compiled::new(prog));
    // A plan of sane sizes still runs.
    let small = Compiled::new(Arc::new(broadcast_program(&[2, 3]))).unwrap();
    let out = small.run(&[scalar_arg()]).unwrap();
    assert_eq!(out[0].shape(), &[2, 3]);
}

#[test]
fn the_budget_is_settable_and_restorable() {
    let _g = serial();
    let default = budget::default_max_buffer_bytes();
    assert!(default > 0);
    assert!(matches!(
        budget::set_max_buffer_bytes(Some(0)),
        Err(Error::InvalidArgument(_))
    ));
    budget::set_max_buffer_bytes(Some(4000)).unwrap();
    assert_eq!(budget::max_buffer_bytes(), 4000);
    let prog = Arc::new(broadcast_program(&[1000]));
    assert!(eval_closed(&prog, &[scalar_arg()]).is_ok());
    let e = too_large(eval_closed(
        &Arc::new(broadcast_program(&[1001])),
        &[scalar_arg()],
    ));
    assert!(e.to_string().contains("4004 bytes"), "{e}");
    assert!(matches!(
        e,
        Error::AllocationTooLarge {
            bytes: 4004,
            budget: 4000,
            ..
        }
    ));
    budget::set_max_buffer_bytes(None).unwrap();
    assert_eq!(budget::max_buffer_bytes(), default);
    assert!(eval_closed(&Arc::new(broadcast_program(&[1001])), &[scalar_arg()]).is_ok());
}

/// The serialized program with the canonical text edited (section length
/// fixed): header 16 bytes, u64 text length, text, rest.
fn with_text(bytes: &[u8], edit: impl Fn(&str) -> String) -> Vec<u8> {
    let n = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    let text = std::str::from_utf8(&bytes[24..24 + n]).unwrap();
    let new = edit(text);
    let mut out = bytes[..16].to_vec();
    out.extend_from_slice(&(new.len() as u64).to_le_bytes());
    out.extend_from_slice(new.as_bytes());
    out.extend_from_slice(&bytes[24 + n..]);
    out
}

#[test]
fn loaded_programs_with_absurd_outputs_are_errors() {
    let _g = serial();
    let bytes = Program::to_bytes(&broadcast_program(&[7, 9]), Determinism::Default, "").unwrap();
    let ok = Program::from_bytes(&bytes).unwrap();
    let x = HostArray::new(vec![], Buffer::F32(vec![1.0].into())).unwrap();
    assert_eq!(ok.run(&[x]).unwrap()[0].shape(), &[7, 9]);
    let huge = with_text(&bytes, |t| {
        t.replace("7,9", "1048576,1048576")
            .replace("(7, 9)", "(1048576, 1048576)")
    });
    // Under the default limits the static bound or the budget refuses it.
    let r = Program::from_bytes(&huge);
    assert!(
        matches!(
            r,
            Err(Error::AllocationTooLarge { .. }) | Err(Error::Limit(_))
        ),
        "{r:?}"
    );
    // With unlimited program limits the budget still refuses it.
    let unlimited = Limits {
        max_bytes: usize::MAX,
        ..Limits::default()
    };
    let parse = microjax::ir::canonical::ParseLimits::default();
    too_large(Program::from_bytes_with(&huge, &parse, unlimited));
}

#[test]
fn loaded_program_constants_are_checked_against_the_budget() {
    let _g = serial();
    let mut b = Builder::new();
    let k = b
        .add_const(
            Arc::new(HostArray::new(vec![1000], Buffer::F32(vec![0.5; 1000].into())).unwrap()),
            false,
        )
        .unwrap();
    let x = Atom::Var(b.add_input(Aval::new(vec![1000], DType::F32)).unwrap());
    let y = b.binary(BinaryOp::Mul, x, Atom::Var(k)).unwrap();
    let bytes = Program::to_bytes(&b.build(vec![y]).unwrap(), Determinism::Default, "").unwrap();
    assert!(Program::from_bytes(&bytes).is_ok());
    budget::set_max_buffer_bytes(Some(1000)).unwrap();
    let r = Program::from_bytes(&bytes);
    budget::set_max_buffer_bytes(None).unwrap();
    let e = too_large(r);
    assert!(e.to_string().contains("exported const"), "{e}");
}

/// `x:f32[] -> sort(broadcast(x, (n,)))[:1]`: a one-element result with an
/// `n`-element intermediate.
fn sorted_broadcast_program(n: usize) -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![], DType::F32)).unwrap());
    let big = b.add_eqn1(broadcast(&[n]), vec![x]).unwrap();
    let sort = Primitive::Sort(SortOp::Sort {
        dimension: 0,
        is_stable: true,
        num_keys: 1,
    });
    let sorted = b.add_eqn1(sort, vec![big]).unwrap();
    let first = Primitive::Slice(Slice {
        start_indices: vec![0],
        limit_indices: vec![1],
        strides: None,
    });
    let y = b.add_eqn1(first, vec![sorted]).unwrap();
    b.build(vec![y]).unwrap()
}

#[test]
fn allocations_the_allocator_refuses_are_errors() {
    let _g = serial();
    // 2^61 f32 values take 2^63 bytes, more than any allocation may
    // (isize::MAX): with the budget out of the way, the allocator itself
    // refuses the intermediate, on every machine.
    let prog = Arc::new(sorted_broadcast_program(1 << 61));
    let unlimited = Limits {
        max_bytes: usize::MAX,
        ..Limits::default()
    };
    // Parse limits raised too: the default refuses a type of 2^61 elements.
    let parse = microjax::ir::canonical::ParseLimits {
        max_elements: usize::MAX,
        ..Default::default()
    };
    let bytes = Program::to_bytes_for(&prog, Determinism::Default, "", &parse, &unlimited).unwrap();
    budget::set_max_buffer_bytes(Some(u64::MAX)).unwrap();
    let interpreted = eval_closed(&prog, &[scalar_arg()]);
    let compiled = Compiled::new(prog.clone()).and_then(|c| c.run(&[scalar_arg()]));
    let loaded = Program::from_bytes_with(&bytes, &parse, unlimited)
        .and_then(|p| p.run(&[HostArray::new(vec![], Buffer::F32(vec![1.0].into())).unwrap()]));
    budget::set_max_buffer_bytes(None).unwrap();
    for r in [
        interpreted.map(|_| ()),
        compiled.map(|_| ()),
        loaded.map(|_| ()),
    ] {
        let e = too_large(r);
        assert!(e.to_string().contains("RESOURCE_EXHAUSTED"), "{e}");
    }
    // The same program at a sane size runs, and the process goes on.
    let small = Compiled::new(Arc::new(sorted_broadcast_program(1000))).unwrap();
    let out = small.run(&[scalar_arg()]).unwrap();
    assert_eq!(out[0].buffer(), &Buffer::F32(vec![2.0].into()));
}

/// The counting allocator, so the live-memory budgets of
/// `microjax::array::live` have live bytes to check.
#[global_allocator]
static ALLOCATOR: live::CountingAlloc = live::CountingAlloc;

fn one_scalar() -> HostArray {
    HostArray::new(vec![], Buffer::F32(vec![1.0].into())).unwrap()
}

#[test]
fn a_runs_max_bytes_bounds_the_live_bytes_it_adds() {
    let _g = serial();
    // 8 MiB of named values (a 4 MiB intermediate and its sorted copy);
    // the sort's keys and permutation take more while it runs.
    let prog = Arc::new(sorted_broadcast_program(1 << 20));
    let bytes = Program::to_bytes(&prog, Determinism::Default, "").unwrap();
    let loaded = |max_bytes: usize| {
        let limits = Limits {
            max_bytes,
            ..Limits::default()
        };
        Program::from_bytes_with(&bytes, &Default::default(), limits).unwrap()
    };
    match loaded(9 << 20).run(&[one_scalar()]) {
        Err(Error::MemoryBudget { limit, scope, .. }) => {
            assert_eq!(limit, 9 << 20);
            assert_eq!(scope, live::RUN_SCOPE);
        }
        other => panic!("expected MemoryBudget, got {other:?}"),
    }
    let out = loaded(1 << 30).run(&[one_scalar()]).unwrap();
    assert_eq!(out[0].buffer(), &Buffer::F32(vec![1.0].into()));
}

#[test]
fn the_process_live_budget_refuses_before_allocating() {
    let _g = serial();
    assert!(live::installed());
    let prog = Arc::new(sorted_broadcast_program(1 << 20));
    let plan = Compiled::new(prog.clone()).unwrap();
    live::reset_peak_live_bytes();
    let base = live::live_bytes().unwrap();
    let limit = base + (6 << 20);
    live::set_max_live_bytes(Some(limit)).unwrap();
    assert_eq!(live::max_live_bytes(), Some(limit));
    let compiled = plan.run(&[scalar_arg()]);
    let interpreted = eval_closed(&prog, &[scalar_arg()]);
    let peak = live::peak_live_bytes().unwrap();
    live::set_max_live_bytes(None).unwrap();
    for r in [compiled, interpreted] {
        match r {
            Err(Error::MemoryBudget { scope, .. }) => assert_eq!(scope, live::PROCESS_SCOPE),
            other => panic!("expected MemoryBudget, got {other:?}"),
        }
    }
    // Refused before the memory was taken: the peak stayed within the
    // budget, up to the small allocations made without a check.
    assert!(peak <= limit + (1 << 16) * 4, "peak {peak} over {limit}");
    assert!(matches!(
        live::set_max_live_bytes(Some(0)),
        Err(Error::InvalidArgument(_))
    ));
    let out = plan.run(&[scalar_arg()]).unwrap();
    assert_eq!(out[0].buffer(), &Buffer::F32(vec![2.0].into()));
}

/// A `scan` of `length` steps whose body is `reps` times `rev(x) * 1.5`
/// on f32[n]: `reps` kernel steps (the reversals) with `n`-element values
/// freed in every iteration.
fn reversing_scan(n: usize, reps: usize, length: usize) -> ClosedJaxpr {
    let rev = Primitive::Rev(microjax::prims::Rev {
        dimensions: vec![0],
    });
    let body = common::build(&[f32v(&[n])], |b, xs| {
        let mut x = xs[0].clone();
        for _ in 0..reps {
            let r = b.add_eqn1(rev.clone(), vec![x]).unwrap();
            x = b.binary(BinaryOp::Mul, r, lit(1.5)).unwrap();
        }
        vec![x]
    });
    common::build(&[f32v(&[n])], |b, xs| {
        common::scan(b, body, length, false, (0, 1), vec![xs[0].clone()])
    })
}

#[test]
fn a_loop_body_keeps_no_large_arrays_between_iterations() {
    let _g = serial();
    let n = 1 << 20; // 4 MiB of f32
    let prog = Arc::new(reversing_scan(n, 8, 3));
    let plan = Compiled::new(prog.clone()).unwrap();
    let x = Arc::new(HostArray::from_vec(vec![n], vec![1.0f32; n]).unwrap());
    drop(plan.run(std::slice::from_ref(&x)).unwrap());
    microjax::array::pool::clear();
    let base = live::live_bytes().unwrap();
    live::reset_peak_live_bytes();
    let out = plan.run(std::slice::from_ref(&x)).unwrap();
    let added = live::peak_live_bytes().unwrap().saturating_sub(base);
    // A step reads one 4 MiB value and writes another, and the host pool
    // keeps freed fused outputs: a few arrays at once (six here), never
    // one per step (arrays kept per step between iterations: 21).
    assert!(
        added <= 8 * 4 * n as u64,
        "the loop held {added} bytes more"
    );
    let want = eval_closed(&prog, std::slice::from_ref(&x)).unwrap();
    assert_eq!(out[0].buffer(), want[0].buffer());
    microjax::array::pool::clear();
}
