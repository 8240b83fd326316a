//! Array storage over foreign memory: kernels and the compiled executor
//! read it in place, its owner is released exactly once when the last
//! array holding it drops, writers copy it (the foreign bytes never
//! change), the buffer pool and the recycle bin never keep it, and bad
//! pointers are typed errors. Owned storage moves in and out without
//! copies.
//!
//! `unsafe` here only builds foreign storage over memory the test owns
//! (`Elems::from_foreign`'s contract: the memory outlives the owner and is
//! not written while held).
#![allow(unsafe_code)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::array::{pool, Elems, ForeignOwner, OnRelease};
use microjax::exec::compiled::{recycle, Compiled};
use microjax::exec::interp::eval_closed;
use microjax::exec::ExecCtx;
use microjax::prims::kernel;
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, DType, Error, HostArray, Primitive, ReduceOp, UnaryOp,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

mod common;
use common::{dot_general, f32s, reduce};

/// Foreign f32 storage over a copy of `values` kept in an `Arc` the test
/// also holds (to check the bytes afterwards); the owner counts its
/// releases in `released`.
fn foreign_f32(values: &[f32], released: &Arc<AtomicUsize>) -> (Elems<f32>, Arc<Vec<f32>>) {
    let data = Arc::new(values.to_vec());
    let (ptr, len) = (data.as_ptr(), data.len());
    let keep = Arc::clone(&data);
    let count = Arc::clone(released);
    let owner = OnRelease::new(move || {
        drop(keep);
        count.fetch_add(1, Ordering::SeqCst);
    });
    // SAFETY: `ptr..ptr + len` is `data`'s allocation, kept alive by the
    // owner's closure and never written (the `Arc` is never made unique
    // for writing).
    let e = unsafe { Elems::from_foreign(ptr, len, Arc::new(owner)) }.unwrap();
    (e, data)
}

fn foreign_array(
    shape: Vec<usize>, values: &[f32], released: &Arc<AtomicUsize>,
) -> (HostArray, Arc<Vec<f32>>) {
    let (e, data) = foreign_f32(values, released);
    (HostArray::new(shape, Buffer::F32(e)).unwrap(), data)
}

fn eval1(prim: Primitive, args: &[&HostArray]) -> HostArray {
    kernel::eval(&ExecCtx::default(), &prim, args)
        .unwrap()
        .remove(0)
}

#[test]
fn kernels_read_foreign_operands() {
    let released = Arc::new(AtomicUsize::new(0));
    let xs = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let (x, data) = foreign_array(vec![2, 3], &xs, &released);
    assert!(!x.buffer().is_owned());
    let owned = HostArray::new(vec![2, 3], Buffer::from(vec![0.5f32; 6])).unwrap();

    let sum = eval1(Primitive::Binary(BinaryOp::Add), &[&x, &owned]);
    assert_eq!(f32s(&sum), vec![1.5, 2.5, 3.5, 4.5, 5.5, 6.5]);
    let twice = eval1(Primitive::Binary(BinaryOp::Add), &[&x, &x]);
    assert_eq!(f32s(&twice), vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);

    let rows = eval1(reduce(ReduceOp::Sum, &[1]), &[&x]);
    assert_eq!(f32s(&rows), vec![6.0, 15.0]);

    // [2, 3] @ [3, 2] with the rhs foreign too.
    let (w, _) = foreign_array(vec![3, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &released);
    let prod = eval1(dot_general(&[1], &[0], &[], &[]), &[&x, &w]);
    assert_eq!(prod.shape(), &[2, 2]);
    assert_eq!(f32s(&prod), vec![4.0, 5.0, 10.0, 11.0]);

    // Results are owned; the foreign memory is unchanged and still held.
    assert!(sum.buffer().is_owned() && prod.buffer().is_owned());
    assert_eq!(*data, xs);
    assert_eq!(released.load(Ordering::SeqCst), 0);
    drop((x, w));
    assert_eq!(released.load(Ordering::SeqCst), 2);
}

#[test]
fn owner_is_released_once_after_the_last_clone() {
    let released = Arc::new(AtomicUsize::new(0));
    let (e, _data) = foreign_f32(&[1.0, 2.0, 3.0], &released);
    let e2 = e.clone();
    assert!(
        e2.is_foreign(),
        "a clone of foreign storage shares the owner"
    );
    assert_eq!(e2.as_ptr(), e.as_ptr());
    let a = Arc::new(HostArray::new(vec![3], Buffer::F32(e)).unwrap());
    let a_copy = (*a).clone();
    let a_shared = Arc::clone(&a);
    let b = HostArray::new(vec![3], Buffer::F32(e2)).unwrap();
    drop(a);
    drop(b);
    drop(a_copy);
    assert_eq!(released.load(Ordering::SeqCst), 0, "released while held");
    // The last reference drops on another thread.
    std::thread::spawn(move || {
        assert_eq!(f32s(&a_shared), vec![1.0, 2.0, 3.0]);
        drop(a_shared);
    })
    .join()
    .unwrap();
    assert_eq!(released.load(Ordering::SeqCst), 1);
}

#[test]
fn writers_copy_and_never_touch_foreign_memory() {
    let released = Arc::new(AtomicUsize::new(0));
    let xs = [1.0f32, 2.0, 3.0];
    let (mut e, data) = foreign_f32(&xs, &released);
    let keep = e.clone();
    e[0] = 10.0; // DerefMut: copy on write
    assert!(e.is_owned());
    assert_ne!(e.as_ptr(), data.as_ptr());
    e.make_mut().push(4.0);
    assert_eq!(e, vec![10.0, 2.0, 3.0, 4.0]);
    assert_eq!(*data, xs, "foreign memory was written");
    assert_eq!(keep, xs);
    assert_eq!(released.load(Ordering::SeqCst), 0);
    // Copying the last holder out releases the owner.
    let v = keep.into_vec();
    assert_eq!(v, xs);
    assert_ne!(v.as_ptr(), data.as_ptr());
    assert_eq!(released.load(Ordering::SeqCst), 1);
    assert_eq!(*data, xs);

    // `owned_mut`/`try_into_owned` refuse foreign storage without copying.
    let (mut f, _d) = foreign_f32(&xs, &released);
    assert!(f.owned_mut().is_none());
    let f = f.try_into_owned().unwrap_err();
    assert!(f.is_foreign());
    drop(f);
    assert_eq!(released.load(Ordering::SeqCst), 2);
}

#[test]
fn equality_and_debug_are_by_contents() {
    let released = Arc::new(AtomicUsize::new(0));
    let (e, _d) = foreign_f32(&[1.0, -0.5], &released);
    let owned = Elems::from(vec![1.0f32, -0.5]);
    assert_eq!(e, owned);
    assert_eq!(format!("{e:?}"), format!("{owned:?}"));
    assert_eq!(Buffer::F32(e), Buffer::from(vec![1.0f32, -0.5]));
}

#[test]
fn pool_and_recycle_bin_never_keep_foreign_storage() {
    let released = Arc::new(AtomicUsize::new(0));
    // Above the pool's threshold.
    let n = pool::MIN_POOLED_BYTES / 4 + 1;
    let (e, data) = foreign_f32(&vec![1.5; n], &released);
    let before = pool::stats().returned;
    pool::give(Buffer::F32(e));
    assert_eq!(pool::stats().returned, before);
    assert_eq!(released.load(Ordering::SeqCst), 1);
    assert!(data.iter().all(|&x| x == 1.5));

    recycle::clear();
    let (small, _d) = foreign_array(vec![4], &[1.0, 2.0, 3.0, 4.0], &released);
    recycle::give(Arc::new(small));
    assert_eq!(recycle::held(), 0, "the recycle bin kept foreign storage");
    assert_eq!(released.load(Ordering::SeqCst), 2);
    assert!(recycle::take(DType::F32, &[4]).is_none());
}

/// `sin(x) * x + x`, run by the compiled executor on a large foreign
/// input: same bits as on an owned copy, and the input is untouched.
#[test]
fn compiled_plans_read_foreign_inputs() {
    let n = pool::MIN_POOLED_BYTES / 4 * 2;
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![n], DType::F32)).unwrap());
    let s = b
        .add_eqn1(Primitive::Unary(UnaryOp::Sin), vec![x.clone()])
        .unwrap();
    let m = b
        .add_eqn1(Primitive::Binary(BinaryOp::Mul), vec![s, x.clone()])
        .unwrap();
    let y = b
        .add_eqn1(Primitive::Binary(BinaryOp::Add), vec![m, x])
        .unwrap();
    let prog = Arc::new(b.build(vec![y]).unwrap());
    let plan = Compiled::new(Arc::clone(&prog)).unwrap();

    let values: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25 - 3.0).collect();
    let released = Arc::new(AtomicUsize::new(0));
    let (fx, data) = foreign_array(vec![n], &values, &released);
    let fx = Arc::new(fx);
    let ox = Arc::new(HostArray::new(vec![n], Buffer::from(values.clone())).unwrap());
    for _ in 0..3 {
        let got = plan.run(&[Arc::clone(&fx)]).unwrap();
        let want = plan.run(&[Arc::clone(&ox)]).unwrap();
        assert_eq!(got[0].buffer(), want[0].buffer());
        let reference = eval_closed(&prog, &[Arc::clone(&fx)]).unwrap();
        assert_eq!(got[0].buffer(), reference[0].buffer());
    }
    assert_eq!(*data, values, "foreign input was written");
    drop(fx);
    assert_eq!(released.load(Ordering::SeqCst), 1);
}

#[test]
fn bad_pointers_are_typed_errors() {
    let owner: Arc<dyn ForeignOwner> = Arc::new(());
    let words = [0u32; 4];
    let misaligned = words.as_ptr().cast::<u8>().wrapping_add(1).cast::<f32>();
    // SAFETY: rejected before any read.
    let e = unsafe { Elems::from_foreign(misaligned, 2, Arc::clone(&owner)) };
    assert!(
        matches!(e, Err(Error::Misaligned { align: 4, .. })),
        "{e:?}"
    );
    // SAFETY: rejected before any read.
    let e = unsafe { Elems::from_foreign(words.as_ptr(), usize::MAX, Arc::clone(&owner)) };
    assert!(matches!(e, Err(Error::Overflow { .. })), "{e:?}");
    // SAFETY: rejected before any read.
    let e = unsafe {
        Elems::from_foreign(
            words.as_ptr().cast::<f64>(),
            usize::MAX / 8 + 1,
            Arc::clone(&owner),
        )
    };
    assert!(matches!(e, Err(Error::Overflow { .. })), "{e:?}");
    // SAFETY: rejected before any read.
    let e = unsafe { Elems::<f32>::from_foreign(std::ptr::null(), 3, Arc::clone(&owner)) };
    assert!(matches!(e, Err(Error::InvalidArgument(_))), "{e:?}");
    // SAFETY: an empty buffer reads nothing.
    let empty = unsafe { Elems::<f32>::from_foreign(std::ptr::null(), 0, owner) }.unwrap();
    assert!(empty.is_empty() && empty.is_foreign());
    // A buffer that does not fit the shape is still rejected.
    let released = Arc::new(AtomicUsize::new(0));
    let (e, _d) = foreign_f32(&[1.0, 2.0], &released);
    assert!(HostArray::new(vec![3], Buffer::F32(e)).is_err());
    assert_eq!(released.load(Ordering::SeqCst), 1);
}

#[test]
fn owned_storage_moves_without_copies() {
    let v = vec![1.0f32, 2.0, 3.0];
    let ptr = v.as_ptr();
    let e = Elems::from(v);
    assert!(e.is_owned());
    assert_eq!(e.as_ptr(), ptr);
    let a = HostArray::new(vec![3], Buffer::F32(e)).unwrap();
    let back = match a.into_buffer() {
        Buffer::F32(e) => e.into_vec(),
        other => panic!("{other:?}"),
    };
    assert_eq!(back.as_ptr(), ptr);
    let mut e = Elems::from(back);
    e[1] = 5.0;
    e.make_mut().push(4.0);
    let moved = e.try_into_owned().unwrap();
    assert_eq!(moved, vec![1.0, 5.0, 3.0, 4.0]);
    let p = moved.as_ptr();
    let buf = Buffer::from(moved);
    match buf {
        Buffer::F32(e) => {
            let v = e.into_vec();
            assert_eq!(v.as_ptr(), p);
        }
        other => panic!("{other:?}"),
    }
    let collected: Elems<i32> = (0..4).collect();
    assert_eq!(collected, [0, 1, 2, 3]);
}
