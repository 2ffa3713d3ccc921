//! Work shared out to solver-holding worker threads, with results handed
//! back in the work's order (`traceopt opt --verify`, `traceopt mine`).

use crate::input::Failure;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;
use traceopt_smt::{Solver, SolverError, SolverKind};

/// `jobs` solvers of `kind` (default: z3), each with `timeout` per
/// query; with `dump`, each writes its queries there (into `dump/job-N`
/// when there are several).
pub fn start_solvers(
    kind: Option<SolverKind>,
    timeout: Duration,
    jobs: u16,
    dump: Option<&Path>,
) -> Result<Vec<Solver>, Failure> {
    (0..jobs)
        .map(|job| {
            let mut solver = Solver::start(kind, timeout)?;
            if let Some(dir) = dump {
                match jobs {
                    1 => solver.dump_to(dir)?,
                    _ => solver.dump_to(&dir.join(format!("job-{job}")))?,
                }
            }
            Ok(solver)
        })
        .collect::<Result<Vec<_>, SolverError>>()
        .map_err(|e| Failure::input(e.to_string()))
}

/// Judges every item of `work` with `judge`, one worker thread per
/// solver (none: nothing is judged), and hands each item's index and
/// verdict to `report` in the items' order, as soon as the verdicts of
/// it and of the items before it are in.
pub fn in_parallel<T: Sync, R: Send>(
    work: &[T],
    solvers: Vec<Solver>,
    judge: impl Fn(&T, &mut Solver) -> R + Sync,
    mut report: impl FnMut(usize, Option<R>),
) {
    if solvers.is_empty() {
        (0..work.len()).for_each(|k| report(k, None));
        return;
    }
    let next = AtomicUsize::new(0);
    let (send, verdicts) = mpsc::channel();
    std::thread::scope(|scope| {
        for mut solver in solvers {
            let (send, next, judge) = (send.clone(), &next, &judge);
            scope.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = work.get(k) else { break };
                if send.send((k, judge(item, &mut solver))).is_err() {
                    break;
                }
            });
        }
        drop(send);
        let mut waiting: BTreeMap<usize, R> = BTreeMap::new();
        for k in 0..work.len() {
            while !waiting.contains_key(&k) {
                let (j, verdict) = verdicts
                    .recv()
                    .expect("a worker per solver until all are judged");
                waiting.insert(j, verdict);
            }
            report(k, waiting.remove(&k));
        }
    });
}
