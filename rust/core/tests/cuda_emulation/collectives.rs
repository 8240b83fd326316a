//! Collectives between processes on a device (`exec/cuda/collective.rs`)
//! without a GPU or NCCL: the plan's choice per primitive and dtype, and the
//! driver run by threads standing in for processes over a host communicator
//! whose all-reduce adds in reverse rank order (as NCCL may add in any
//! order), with the rank-ordered sum kernel emulated by g++. Results are
//! compared with what the host path (`prims/process.rs`) computes: sums in
//! rank order, rows in rank order, the root's bytes.
//! (A submodule of `cuda_emulation.rs`: its harness.)

use super::*;
use microjax::exec::cuda::collective::{
    collective_spec, run_collective, CollectiveKind, CollectiveMemory, CollectiveSpec, NcclWire,
};
use microjax::prims::process::{ProcessCollective, ProcessReduce};
use microjax::Error;
use std::sync::{Barrier, Mutex};

fn allreduce(op: ProcessReduce) -> ProcessCollective {
    ProcessCollective::AllReduce {
        op,
        comm: 3,
        what: "psum over ['x']".into(),
    }
}

fn gather(processes: usize) -> ProcessCollective {
    ProcessCollective::AllGather {
        comm: 3,
        processes,
        what: "all_gather over 'x'".into(),
    }
}

fn broadcast(root: usize) -> ProcessCollective {
    ProcessCollective::Broadcast {
        comm: 3,
        root,
        what: "broadcast".into(),
    }
}

/// The device step of a one-equation program of `c` over an operand of
/// `shape` and `d`.
fn plan_of(c: ProcessCollective, shape: &[usize], d: DType) -> DeviceStep {
    let mut b = Builder::new();
    let x = b.add_input(Aval::new(shape.to_vec(), d)).unwrap();
    let outs = b
        .add_eqn(Primitive::Process(c), vec![Atom::Var(x)], None)
        .unwrap();
    let prog = b.build(outs.into_iter().map(Atom::Var).collect()).unwrap();
    let steps = device_plan(&prog.jaxpr).unwrap();
    let [step] = steps.as_slice() else {
        panic!("{steps:?}")
    };
    step.clone()
}

fn spec_of(step: &DeviceStep) -> &CollectiveSpec {
    match step {
        DeviceStep::Collective { eqn: 0, spec } => spec,
        other => panic!("not a device collective: {other:?}"),
    }
}

#[test]
fn the_plan_runs_reductions_nccl_has_and_moves_every_dtype_as_bytes() {
    let sum = ProcessReduce::Sum;
    let s = plan_of(allreduce(sum), &[2, 3], DType::F32);
    let spec = spec_of(&s);
    assert_eq!(spec.kind, CollectiveKind::AllReduce(sum));
    assert_eq!((spec.wire, spec.count, spec.comm), (NcclWire::F32, 6, 3));
    assert_eq!(spec.check, "psum over ['x'] f32[2,3]");
    let cases = [
        (ProcessReduce::Sum, DType::I8, NcclWire::I8, 6),
        (ProcessReduce::Sum, DType::U64, NcclWire::U64, 6),
        (ProcessReduce::Max, DType::I32, NcclWire::I32, 6),
        (ProcessReduce::Min, DType::F64, NcclWire::F64, 6),
        // Booleans as bytes (`or` / `and`), complex sums as float pairs.
        (ProcessReduce::Max, DType::Bool, NcclWire::U8, 6),
        (ProcessReduce::Min, DType::Bool, NcclWire::U8, 6),
        (ProcessReduce::Sum, DType::C64, NcclWire::F32, 12),
        (ProcessReduce::Sum, DType::C128, NcclWire::F64, 12),
    ];
    for (op, d, wire, count) in cases {
        let step = plan_of(allreduce(op), &[2, 3], d);
        let spec = spec_of(&step);
        assert_eq!((spec.wire, spec.count), (wire, count), "{op:?} {d:?}");
    }
    // 16-bit integers and half floats reduce on the host.
    for (op, d, why) in [
        (ProcessReduce::Sum, DType::I16, "16-bit"),
        (ProcessReduce::Max, DType::U16, "16-bit"),
        (ProcessReduce::Sum, DType::F16, "half"),
        (ProcessReduce::Min, DType::BF16, "half"),
    ] {
        match plan_of(allreduce(op), &[4], d) {
            DeviceStep::Host { reason, .. } => assert!(reason.contains(why), "{reason}"),
            other => panic!("{d:?}: {other:?}"),
        }
    }
    // Gathers and broadcasts move bytes, whatever the dtype.
    for (d, bytes) in [(DType::F16, 12), (DType::Bool, 6), (DType::C128, 96)] {
        let g = plan_of(gather(4), &[2, 3], d);
        let spec = spec_of(&g);
        assert_eq!(spec.kind, CollectiveKind::AllGather { processes: 4 });
        assert_eq!((spec.wire, spec.count), (NcclWire::U8, bytes));
        assert_eq!(spec.result_bytes(4).unwrap(), 4 * bytes);
        let b = plan_of(broadcast(1), &[2, 3], d);
        assert_eq!(spec_of(&b).kind, CollectiveKind::Broadcast { root: 1 });
        assert_eq!(spec_of(&b).count, bytes);
    }
    // The identities are removed before planning.
    let pvary = ProcessCollective::Pvary {
        comm: 3,
        what: "pvary".into(),
    };
    assert_eq!(
        collective_spec(&pvary, &Aval::new(vec![2], DType::F32)),
        Ok(None)
    );
    // Only float sums over more than two processes are added in rank order.
    let f = spec_of(&s);
    assert!(!f.ordered_sum(2) && f.ordered_sum(3));
    let ints = plan_of(allreduce(sum), &[2], DType::I32);
    assert!(!spec_of(&ints).ordered_sum(4));
    let max = plan_of(allreduce(ProcessReduce::Max), &[2], DType::F32);
    assert!(!spec_of(&max).ordered_sum(4));
}

/// Processes as threads: what each has posted for the collective under way.
struct Group {
    size: usize,
    posted: Mutex<Vec<Vec<u8>>>,
    barrier: Barrier,
}

/// One thread's view of a [`Group`] (a host stand-in for NCCL).
struct Rank {
    group: Arc<Group>,
    rank: usize,
}

/// g++ runs of the emulated kernel share a directory per kernel name.
static EMULATION: Mutex<()> = Mutex::new(());

/// `a op b` of elements of `wire` stored little-endian.
fn combine(op: ProcessReduce, wire: NcclWire, a: &[u8], b: &[u8]) -> Vec<u8> {
    macro_rules! typed {
        ($t:ident) => {{
            let x = <$t>::from_le_bytes(a.try_into().unwrap());
            let y = <$t>::from_le_bytes(b.try_into().unwrap());
            let r: $t = match op {
                ProcessReduce::Sum => typed!(@sum $t, x, y),
                ProcessReduce::Max => if y > x { y } else { x },
                ProcessReduce::Min => if y < x { y } else { x },
            };
            r.to_le_bytes().to_vec()
        }};
        (@sum f32, $x:expr, $y:expr) => { $x + $y };
        (@sum f64, $x:expr, $y:expr) => { $x + $y };
        (@sum $t:ident, $x:expr, $y:expr) => { $x.wrapping_add($y) };
    }
    match wire {
        NcclWire::I8 => typed!(i8),
        NcclWire::U8 => typed!(u8),
        NcclWire::I32 => typed!(i32),
        NcclWire::U32 => typed!(u32),
        NcclWire::I64 => typed!(i64),
        NcclWire::U64 => typed!(u64),
        NcclWire::F32 => typed!(f32),
        NcclWire::F64 => typed!(f64),
    }
}

impl Rank {
    /// Every rank's `bytes`, in rank order.
    fn exchange(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.group.posted.lock().unwrap()[self.rank] = bytes.to_vec();
        self.group.barrier.wait();
        let all = self.group.posted.lock().unwrap().clone();
        self.group.barrier.wait();
        all
    }
}

impl CollectiveMemory for Rank {
    type Buffer = Vec<u8>;

    fn processes(&self) -> usize {
        self.group.size
    }

    fn alloc(&self, bytes: usize) -> microjax::Result<Vec<u8>> {
        // Garbage, as fresh device memory is.
        Ok(vec![0xA5; bytes])
    }

    fn all_reduce(
        &self, op: ProcessReduce, wire: NcclWire, count: usize, send: &Vec<u8>, recv: &mut Vec<u8>,
    ) -> microjax::Result<()> {
        let n = count * wire.bytes();
        let all = self.exchange(&send[..n]);
        // Reverse rank order: an order other than the host path's.
        let mut rows = all.iter().rev();
        let mut acc = rows.next().unwrap().clone();
        for row in rows {
            for (a, b) in acc.chunks_mut(wire.bytes()).zip(row.chunks(wire.bytes())) {
                a.copy_from_slice(&combine(op, wire, a, b));
            }
        }
        recv[..n].copy_from_slice(&acc);
        Ok(())
    }

    fn all_gather(
        &self, wire: NcclWire, count: usize, send: &Vec<u8>, recv: &mut Vec<u8>,
    ) -> microjax::Result<()> {
        let n = count * wire.bytes();
        let all = self.exchange(&send[..n]);
        recv[..n * self.group.size].copy_from_slice(&all.concat());
        Ok(())
    }

    fn broadcast(
        &self, root: usize, wire: NcclWire, count: usize, send: &Vec<u8>, recv: &mut Vec<u8>,
    ) -> microjax::Result<()> {
        let n = count * wire.bytes();
        let all = self.exchange(&send[..n]);
        recv[..n].copy_from_slice(&all[root]);
        Ok(())
    }

    fn run_kernel(
        &self, kernel: &KernelSource, gathered: &Vec<u8>, out: &mut Vec<u8>,
    ) -> microjax::Result<()> {
        let _one = EMULATION.lock().unwrap_or_else(|e| e.into_inner());
        let bufs = emulate(kernel, &[gathered.clone(), out.clone()]);
        *out = bufs[1].clone();
        Ok(())
    }
}

/// Runs `spec` on `processes` threads, rank `r` contributing `inputs[r]`;
/// every rank's result.
fn run_on(
    processes: usize, spec: &CollectiveSpec, inputs: &[Vec<u8>],
) -> Vec<microjax::Result<Vec<u8>>> {
    let group = Arc::new(Group {
        size: processes,
        posted: Mutex::new(vec![Vec::new(); processes]),
        barrier: Barrier::new(processes),
    });
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..processes)
            .map(|rank| {
                let me = Rank {
                    group: group.clone(),
                    rank,
                };
                let x = inputs[rank].clone();
                s.spawn(move || run_collective(&me, spec, &x))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn spec(kind: CollectiveKind, wire: NcclWire, count: usize) -> CollectiveSpec {
    CollectiveSpec {
        kind,
        comm: 0,
        check: String::new(),
        wire,
        count,
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32_values(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Rank `r`'s float32 operand: ranks 0 and 1 hold large values that cancel,
/// the others small ones, so the order of the additions shows in the bits
/// (in rank order the large ones cancel first; in reverse the small ones
/// are absorbed by them).
fn rank_values(r: usize, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| match r {
            0 => 1.0e8 * (1 + i) as f32,
            1 => -1.0e8 * (1 + i) as f32,
            _ => 0.5 + (r + i) as f32 * 0.25,
        })
        .collect()
}

#[test]
fn float_sums_over_more_than_two_processes_add_in_rank_order() {
    skip_without_gxx!();
    let n = 9;
    for processes in [3, 4] {
        let inputs: Vec<Vec<f32>> = (0..processes).map(|r| rank_values(r, n)).collect();
        let bytes: Vec<Vec<u8>> = inputs.iter().map(|v| f32_bytes(v)).collect();
        let s = spec(
            CollectiveKind::AllReduce(ProcessReduce::Sum),
            NcclWire::F32,
            n,
        );
        let ordered: Vec<f32> = (0..n)
            .map(|i| inputs.iter().skip(1).fold(inputs[0][i], |a, x| a + x[i]))
            .collect();
        let reversed: Vec<f32> = (0..n)
            .map(|i| {
                let last = inputs[processes - 1][i];
                inputs.iter().rev().skip(1).fold(last, |a, x| a + x[i])
            })
            .collect();
        // The inputs tell the two orders apart.
        assert_ne!(f32_bytes(&ordered), f32_bytes(&reversed));
        for (r, got) in run_on(processes, &s, &bytes).into_iter().enumerate() {
            assert_eq!(
                f32_values(&got.unwrap()),
                ordered,
                "rank {r} of {processes}"
            );
        }
    }
}

#[test]
fn float64_and_complex_sums_add_in_rank_order_componentwise() {
    skip_without_gxx!();
    // complex128 [3] = 6 float64 components per process.
    let processes = 3;
    let inputs: Vec<Vec<f64>> = (0..processes)
        .map(|r| {
            (0..6)
                .map(|i| if (r + i) % 2 == 0 { 1e17 } else { -1e17 } + (r * 3 + i) as f64)
                .collect()
        })
        .collect();
    let bytes: Vec<Vec<u8>> = inputs
        .iter()
        .map(|v| v.iter().flat_map(|x| x.to_le_bytes()).collect())
        .collect();
    let step = plan_of(allreduce(ProcessReduce::Sum), &[3], DType::C128);
    let s = spec_of(&step);
    assert_eq!((s.wire, s.count), (NcclWire::F64, 6));
    let ordered: Vec<f64> = (0..6)
        .map(|i| inputs.iter().skip(1).fold(inputs[0][i], |a, x| a + x[i]))
        .collect();
    for got in run_on(processes, s, &bytes) {
        let got: Vec<f64> = got
            .unwrap()
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, ordered);
    }
}

#[test]
fn two_process_sums_integer_sums_and_extrema_use_the_engines_reduction() {
    // Two processes: one addition per element, the same either way.
    let a = rank_values(0, 5);
    let b = rank_values(1, 5);
    let s = spec(
        CollectiveKind::AllReduce(ProcessReduce::Sum),
        NcclWire::F32,
        5,
    );
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    for got in run_on(2, &s, &[f32_bytes(&a), f32_bytes(&b)]) {
        assert_eq!(f32_values(&got.unwrap()), want);
    }
    // int32 sums wrap, in any order.
    let ints: Vec<Vec<u8>> = [i32::MAX, 5, -7, 1]
        .iter()
        .map(|v| v.to_le_bytes().to_vec())
        .collect();
    let s = spec(
        CollectiveKind::AllReduce(ProcessReduce::Sum),
        NcclWire::I32,
        1,
    );
    for got in run_on(4, &s, &ints) {
        let got = i32::from_le_bytes(got.unwrap().try_into().unwrap());
        assert_eq!(got, i32::MAX.wrapping_add(5 - 7 + 1));
    }
    // Boolean maximum and minimum: `or` and `and` of 0/1 bytes.
    let bools = [vec![1u8, 0, 0, 1], vec![0, 0, 1, 1], vec![1, 0, 0, 1]];
    let max = spec(
        CollectiveKind::AllReduce(ProcessReduce::Max),
        NcclWire::U8,
        4,
    );
    let min = spec(
        CollectiveKind::AllReduce(ProcessReduce::Min),
        NcclWire::U8,
        4,
    );
    for got in run_on(3, &max, &bools) {
        assert_eq!(got.unwrap(), vec![1, 0, 1, 1]);
    }
    for got in run_on(3, &min, &bools) {
        assert_eq!(got.unwrap(), vec![0, 0, 0, 1]);
    }
}

#[test]
fn gathers_stack_rows_in_rank_order_and_broadcasts_give_the_roots_bytes() {
    // float16 [3] as 6 bytes per process.
    let inputs: Vec<Vec<u8>> = (0..4u8)
        .map(|r| (0..6).map(|i| r * 16 + i).collect())
        .collect();
    let step = plan_of(gather(4), &[3], DType::F16);
    let s = spec_of(&step);
    for got in run_on(4, s, &inputs) {
        assert_eq!(got.unwrap(), inputs.concat());
    }
    let step = plan_of(broadcast(2), &[3], DType::F16);
    for got in run_on(4, spec_of(&step), &inputs) {
        assert_eq!(got.unwrap(), inputs[2]);
    }
}

#[test]
fn a_gather_declared_for_another_process_count_is_an_error_on_every_process() {
    let inputs = vec![vec![1u8, 2]; 3];
    let s = spec(CollectiveKind::AllGather { processes: 4 }, NcclWire::U8, 2);
    for got in run_on(3, &s, &inputs) {
        match got {
            Err(Error::Collective(m)) => assert!(m.contains("4 processes declared"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
    let s = spec(CollectiveKind::Broadcast { root: 3 }, NcclWire::U8, 2);
    for got in run_on(3, &s, &inputs) {
        assert!(matches!(got, Err(Error::Collective(_))), "{got:?}");
    }
    // Empty operands move nothing (no process waits for another).
    let s = spec(
        CollectiveKind::AllReduce(ProcessReduce::Sum),
        NcclWire::F32,
        0,
    );
    for got in run_on(3, &s, &[Vec::new(), Vec::new(), Vec::new()]) {
        assert!(got.unwrap().is_empty());
    }
}

#[cfg(feature = "cuda")]
#[test]
fn nccl_registration_checks_its_arguments_before_loading_anything() {
    use microjax::exec::cuda::nccl;
    // No MPI communicator 77 in this process.
    assert!(matches!(
        nccl::register(77, 0, &[0; nccl::UNIQUE_ID_BYTES]),
        Err(Error::Collective(_))
    ));
    assert!(matches!(
        nccl::register_ranks(77, 0, &[0; nccl::UNIQUE_ID_BYTES], 1, 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        nccl::register_ranks(77, 0, &[0; 5], 0, 1),
        Err(Error::InvalidArgument(_))
    ));
    // Without the library (or a GPU) the id cannot be made and nothing is
    // registered; with them, a fresh id is 128 bytes.
    match nccl::unique_id() {
        Ok(id) => assert_eq!(id.len(), nccl::UNIQUE_ID_BYTES),
        Err(e) => assert!(
            !nccl::present() && matches!(e, Error::Collective(_)),
            "{e:?}"
        ),
    }
}
