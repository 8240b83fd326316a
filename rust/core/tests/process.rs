//! Collectives between processes (`prims/process.rs`, `exec/mpi.rs`) without
//! an MPI launcher: their types, their derivative and batching rules' shape,
//! and the errors a run gives when no communicator is registered. The
//! collectives themselves run under `mpirun` in tests/test_distributed.py.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::compiled::Compiled;
use microjax::exec::interp::eval_closed;
use microjax::exec::mpi;
use microjax::ir::typecheck::typecheck;
use microjax::prims::process::{ProcessCollective, ProcessReduce};
use microjax::transforms::{batch_jaxpr, dce_closed, vjp_jaxpr};
use microjax::{Aval, DType, Effect, Error, HostArray, Primitive};
use std::sync::Arc;

use crate::common::batching::{arange, single};

fn reduce(op: ProcessReduce) -> Primitive {
    Primitive::Process(ProcessCollective::AllReduce {
        op,
        comm: 7,
        what: "psum over ['x']".into(),
    })
}

fn gather(processes: usize) -> Primitive {
    Primitive::Process(ProcessCollective::AllGather {
        comm: 7,
        processes,
        what: "all_gather over 'x'".into(),
    })
}

fn names(j: &microjax::ClosedJaxpr) -> Vec<&'static str> {
    j.jaxpr.eqns.iter().map(|e| e.prim.name()).collect()
}

#[test]
fn types_and_the_ordered_effect() {
    let x = Aval::new(vec![2, 3], DType::F32);
    let g = single(gather(4), std::slice::from_ref(&x));
    typecheck(&g).unwrap();
    assert_eq!(
        g.out_avals().unwrap(),
        vec![Aval::new(vec![4, 2, 3], DType::F32)]
    );
    assert_eq!(g.jaxpr.eqns[0].effect, Effect::OrderedIo);
    let s = single(reduce(ProcessReduce::Sum), std::slice::from_ref(&x));
    assert_eq!(s.out_avals().unwrap(), vec![x.clone()]);
    // An unused collective stays: every process must run it.
    let mut b = microjax::Builder::new();
    let v = b.add_input(x.clone()).unwrap();
    b.add_eqn(
        reduce(ProcessReduce::Sum),
        vec![microjax::Atom::Var(v)],
        None,
    )
    .unwrap();
    let kept = dce_closed(&b.build(vec![]).unwrap()).unwrap();
    assert_eq!(names(&kept), vec!["process_allreduce"]);
    // The identities at a shard_map's edge are pure.
    let share = Primitive::Process(ProcessCollective::Share { processes: 2 });
    assert_eq!(share.effect(), Effect::None);
}

#[test]
fn dtypes_each_reduction_accepts() {
    let bool_sum = microjax::Builder::new()
        .add_eqn(
            reduce(ProcessReduce::Sum),
            vec![microjax::Builder::lit(DType::Bool, 1.0)],
            None,
        )
        .unwrap_err();
    assert!(matches!(bool_sum, Error::DType { .. }), "{bool_sum:?}");
    let complex_max = microjax::Builder::new()
        .add_eqn(
            reduce(ProcessReduce::Max),
            vec![microjax::Builder::lit(DType::C64, 1.0)],
            None,
        )
        .unwrap_err();
    assert!(
        matches!(complex_max, Error::DType { .. }),
        "{complex_max:?}"
    );
    let mut b = microjax::Builder::new();
    let v = b.add_input(Aval::new(vec![2], DType::Float0)).unwrap();
    let e = b
        .add_eqn(
            reduce(ProcessReduce::Sum),
            vec![microjax::Atom::Var(v)],
            None,
        )
        .unwrap_err();
    assert!(matches!(e, Error::DType { .. }), "{e:?}");
}

#[test]
fn running_without_a_registered_communicator_is_an_error() {
    let prog = single(
        reduce(ProcessReduce::Sum),
        &[Aval::new(vec![3], DType::F32)],
    );
    let x = arange(&[3]);
    let e = eval_closed(&prog, std::slice::from_ref(&x)).unwrap_err();
    assert!(
        matches!(&e, Error::Collective(m) if m.contains("no MPI communicator 7")),
        "{e:?}"
    );
    let plan = Compiled::new(Arc::new(prog)).unwrap();
    assert!(matches!(plan.run(&[x]), Err(Error::Collective(_))));
    // A library that is not there (or not Open MPI) is refused, not loaded.
    // SAFETY: nothing is called through a handle that fails to register.
    #[allow(unsafe_code)]
    let e = unsafe { mpi::register_communicator("/nonexistent/libmpi.so.40", 1) }.unwrap_err();
    assert!(
        matches!(&e, Error::Collective(m) if m.contains("cannot load")),
        "{e:?}"
    );
}

#[test]
fn sums_transpose_to_sums_and_shares_divide() {
    let x = Aval::new(vec![3], DType::F32);
    let prog = single(reduce(ProcessReduce::Sum), std::slice::from_ref(&x));
    let v = vjp_jaxpr(&prog, &[true]).unwrap();
    typecheck(&v.bwd).unwrap();
    assert!(
        names(&v.bwd).contains(&"process_allreduce"),
        "{:?}",
        names(&v.bwd)
    );
    // pmax: the tangent goes through two sums (count known, numerator linear).
    let m = vjp_jaxpr(
        &single(reduce(ProcessReduce::Max), std::slice::from_ref(&x)),
        &[true],
    )
    .unwrap();
    let fwd = names(&m.fwd);
    assert_eq!(
        fwd.iter().filter(|n| **n == "process_allreduce").count(),
        2,
        "{fwd:?}"
    );
    assert!(names(&m.bwd).contains(&"process_allreduce"));
    // share: the identity forward, an equal share of the cotangent back.
    let share = single(
        Primitive::Process(ProcessCollective::Share { processes: 4 }),
        std::slice::from_ref(&x),
    );
    let a = arange(&[3]);
    assert_eq!(eval_closed(&share, std::slice::from_ref(&a)).unwrap()[0], a);
    let s = vjp_jaxpr(&share, &[true]).unwrap();
    let ct = Arc::new(HostArray::from_vec(vec![3], vec![1.0f32, 2.0, 8.0]).unwrap());
    let mut args = eval_closed(&s.fwd, std::slice::from_ref(&a)).unwrap()[1..].to_vec();
    args.push(ct);
    let got = eval_closed(&s.bwd, &args).unwrap();
    assert_eq!(got[0].as_slice::<f32>().unwrap(), &[0.25, 0.5, 2.0]);
}

#[test]
fn batch_dims_pass_through() {
    let x = Aval::new(vec![2, 3], DType::F32);
    let g = batch_jaxpr(
        &single(gather(2), std::slice::from_ref(&x)),
        &[Some(1)],
        5,
        &[Some(2)],
    )
    .unwrap();
    typecheck(&g).unwrap();
    assert_eq!(
        g.out_avals().unwrap(),
        vec![Aval::new(vec![2, 2, 5, 3], DType::F32)]
    );
    assert_eq!(names(&g), vec!["process_allgather"]);
    let s = batch_jaxpr(
        &single(reduce(ProcessReduce::Min), std::slice::from_ref(&x)),
        &[Some(0)],
        5,
        &[Some(0)],
    )
    .unwrap();
    assert_eq!(
        s.out_avals().unwrap(),
        vec![Aval::new(vec![5, 2, 3], DType::F32)]
    );
}
