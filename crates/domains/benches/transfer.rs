//! Cost of the transfer functions the optimizer calls most, on `i64`.
//!
//! Each benchmark runs the function on every pair of a small fixed set of
//! realistic bounds (small ranges, constants, unbounded, sign halves,
//! bounds with known bits) and reports the time of one call: the time of
//! a sweep divided by the number of pairs. Target: under 20 ns per call
//! for `IntBound::add`, `and` and `lt`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use traceopt_domains::{IntBound, KnownBits};

fn bounds() -> Vec<IntBound> {
    vec![
        IntBound::range(0, 100),
        IntBound::range(-5, 5),
        IntBound::constant(7),
        IntBound::constant(-1),
        IntBound::unbounded(),
        IntBound::range(i64::MIN, -1),
        IntBound::range(1, i64::MAX),
        // A byte, from its known bits.
        IntBound::from_bits(KnownBits::new(0, 0xff)),
        // Multiples of 8 in [0, 1000].
        IntBound::from_parts(0, 1000, KnownBits::new(0, !7)),
        // Odd numbers in [-99, 99].
        IntBound::from_parts(-99, 99, KnownBits::new(1, !1)),
    ]
}

fn pairs<T: Copy>(values: &[T]) -> Vec<(T, T)> {
    values
        .iter()
        .flat_map(|&a| values.iter().map(move |&b| (a, b)))
        .collect()
}

/// Benchmarks `f` over all `inputs`, reporting the time of one call.
fn per_call<T: Copy, R>(c: &mut Criterion, name: &str, inputs: &[(T, T)], f: impl Fn(T, T) -> R) {
    let count = u32::try_from(inputs.len()).expect("a small input set");
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                for &(x, y) in inputs {
                    black_box(f(black_box(x), black_box(y)));
                }
            }
            start.elapsed() / count
        })
    });
}

fn transfer(c: &mut Criterion) {
    let bounds = pairs(&bounds());
    let bits: Vec<_> = bounds.iter().map(|(a, b)| (a.bits, b.bits)).collect();
    per_call(c, "IntBound::add", &bounds, IntBound::add);
    per_call(c, "IntBound::and", &bounds, IntBound::and);
    per_call(c, "IntBound::lt", &bounds, IntBound::lt);
    per_call(c, "KnownBits::add", &bits, KnownBits::add);
    per_call(c, "IntBound::intersect", &bounds, IntBound::intersect);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = transfer
}
criterion_main!(benches);
