//! What the validator's slicer asks of a long trace: the declared names
//! each of 3,000 assumptions stands on, where each names one version of
//! a chain of 3,000 definitions (one heap version on another), so the
//! walks together visit about 4.5 million names. Run with
//! `cargo bench -p traceopt-smt --bench definition_chains`. (Session 69:
//! 0.42 s. The slicer's whole setup on this chain took 1.7 s before the
//! definition tables hashed with FxHash and the walks stopped making a
//! set of strings each, 0.6 s after.)

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use traceopt_smt::{Fun, Solver, Sort, Term};

const LENGTH: usize = 3_000;

/// A solver holding the chain `h{k} = h{k-1} + x{k}`, and the assumptions
/// `h{k} = y{k}`.
fn chain() -> Option<(Solver, Vec<Term>)> {
    let mut solver = Solver::start(None, Duration::from_secs(10)).ok()?;
    solver.declare("h0", Sort::Bv(64)).unwrap();
    let mut assumptions = Vec::with_capacity(LENGTH);
    for k in 1..LENGTH {
        let (x, y, h) = (format!("x{k}"), format!("y{k}"), format!("h{k}"));
        solver.declare(&x, Sort::Bv(64)).unwrap();
        solver.declare(&y, Sort::Bv(64)).unwrap();
        let value = Term::var(&format!("h{}", k - 1)).bv(Fun::BvAdd, &Term::var(&x));
        solver.define(&h, Sort::Bv(64), &value).unwrap();
        assumptions.push(Term::var(&h).eq(&Term::var(&y)));
    }
    Some((solver, assumptions))
}

fn walks(c: &mut Criterion) {
    let Some((solver, assumptions)) = chain() else {
        println!("no solver installed: skipped");
        return;
    };
    let mut group = c.benchmark_group("definition chains");
    group.sample_size(10);
    group.bench_function("leaves of 3,000 assumptions on a 3,000-long chain", |b| {
        b.iter(|| {
            let mut count = 0usize;
            for assumption in &assumptions {
                solver.for_each_leaf(assumption, |_| count += 1);
            }
            count
        })
    });
    group.finish();
}

criterion_group!(benches, walks);
criterion_main!(benches);
