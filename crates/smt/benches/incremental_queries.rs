//! 1,000 small incremental queries (push, assert, check, pop) through one
//! long-lived solver process. Target: median under 1 ms per query with z3.
//! Run with `cargo bench -p traceopt-smt --bench incremental_queries`.

use criterion::Criterion;
use std::time::{Duration, Instant};
use traceopt_smt::{Fun, Sat, Solver, SolverKind, Sort, Term};

/// One query: is there an x with (x + k) * 3 == k, x < k (unsigned)?
fn query(solver: &mut Solver, k: i64) -> Sat {
    let x = Term::var("x");
    let k = Term::word(k);
    let fact = x
        .bv(Fun::BvAdd, &k)
        .bv(Fun::BvMul, &Term::word(3))
        .eq(&k)
        .and(&x.bv(Fun::BvUlt, &k));
    solver.push().unwrap();
    solver.assert(&fact).unwrap();
    let answer = solver.check(&["x".to_string()]).unwrap();
    solver.pop().unwrap();
    answer
}

fn start(kind: SolverKind) -> Option<Solver> {
    let mut solver = Solver::start(Some(kind), Duration::from_secs(10)).ok()?;
    solver.declare("x", Sort::Bv(64)).unwrap();
    Some(solver)
}

fn main() {
    for kind in [SolverKind::Z3, SolverKind::Cvc5] {
        let Some(mut solver) = start(kind) else {
            println!("{}: not installed, skipped", kind.binary());
            continue;
        };
        let mut times: Vec<Duration> = (0..1000)
            .map(|k| {
                let t = Instant::now();
                query(&mut solver, k + 1);
                t.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "{}: 1000 incremental queries: median {:?}, 90th percentile {:?}, max {:?}",
            kind.binary(),
            times[500],
            times[900],
            times[999]
        );
    }
    let mut criterion = Criterion::default().configure_from_args();
    if let Some(mut solver) = start(SolverKind::Z3) {
        let mut k = 0;
        criterion.bench_function("z3 push-assert-check-pop", |b| {
            b.iter(|| {
                k += 1;
                query(&mut solver, k)
            })
        });
    }
    criterion.final_summary();
}
