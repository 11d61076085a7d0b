//! Criterion benchmarks of the deques' operations, uncontended (one thread): the cost of the
//! owner's push and pop and of a thief's steal, per task. `raylb bench deque` measures them
//! under contention.

use balancers::deque::{abp, locked};
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const TASKS: usize = 1024;

fn deques(c: &mut Criterion) {
    let mut group = c.benchmark_group("deque");
    group.throughput(Throughput::Elements(TASKS as u64));

    group.bench_function(BenchmarkId::new("push_pop", "abp"), |b| {
        let (w, _s) = abp::new::<u64>(TASKS);
        b.iter(|| {
            for i in 0..TASKS as u64 {
                let _ = w.push(i, 0);
            }
            while w.pop().is_some() {}
        })
    });
    group.bench_function(BenchmarkId::new("push_pop", "locked"), |b| {
        let (w, _s) = locked::new::<u64>(TASKS);
        b.iter(|| {
            for i in 0..TASKS as u64 {
                let _ = w.push(i, 0);
            }
            while w.pop().is_some() {}
        })
    });

    for (name, max) in [("steal_one", 1), ("steal_half", usize::MAX)] {
        group.bench_function(BenchmarkId::new(name, "abp"), |b| {
            b.iter_batched_ref(
                || {
                    let (w, s) = abp::new::<u64>(TASKS);
                    for i in 0..TASKS as u64 {
                        let _ = w.push(i, 0);
                    }
                    (w, s, Vec::with_capacity(TASKS))
                },
                |(_w, s, loot)| while s.steal_into(loot, max).is_success() {},
                BatchSize::SmallInput,
            )
        });
        group.bench_function(BenchmarkId::new(name, "locked"), |b| {
            b.iter_batched_ref(
                || {
                    let (w, s) = locked::new::<u64>(TASKS);
                    for i in 0..TASKS as u64 {
                        let _ = w.push(i, 0);
                    }
                    (w, s, Vec::with_capacity(TASKS))
                },
                |(_w, s, loot)| while s.steal_into(loot, max).is_success() {},
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, deques);
criterion_main!(benches);
