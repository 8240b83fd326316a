//! Tests of `exec::cuda::fft`'s internals (reached through `microjax::internals`).

use microjax::error::Error;
use microjax::internals::exec_cuda_fft::*;

fn key(n: usize) -> PlanKey {
    PlanKey {
        cufft: CufftType::C2C,
        lengths: vec![n],
        batch: 1,
    }
}

#[test]
fn the_plan_cache_is_bounded_and_drops_the_least_recently_used() {
    let mut cache = PlanCache::new(2);
    let mut made = 0;
    let mut get = |cache: &mut PlanCache<usize>, n: usize| {
        cache
            .get_or_make(&key(n), || {
                made += 1;
                Ok(n * 10)
            })
            .ok()
    };
    assert_eq!(get(&mut cache, 4), Some(40));
    assert_eq!(get(&mut cache, 8), Some(80));
    assert_eq!(get(&mut cache, 4), Some(40));
    // 8 is now the least recently used: 16 evicts it.
    assert_eq!(get(&mut cache, 16), Some(160));
    assert_eq!(cache.keys(), vec![&key(16), &key(4)]);
    assert_eq!(get(&mut cache, 8), Some(80));
    assert_eq!(made, 4);
    let failed = cache.get_or_make(&key(32), || Err(Error::Device("no plan".into())));
    assert!(matches!(failed, Err(Error::Device(_))));
    assert_eq!(cache.keys().len(), 2);
    // Keys differ by type and batch as well as by lengths.
    let z = PlanKey {
        cufft: CufftType::Z2Z,
        ..key(8)
    };
    assert_ne!(z, key(8));
}
