//! The fuzzer against the optimizer: a clean optimizer survives a short
//! campaign (600 traces), and each of seed 000's miscompilations,
//! switched on in the optimizer (`Passes::bug`), is found and shrunk to a
//! small reproducer that still fails the same way.

use std::time::Duration;
use traceopt_fuzz::{run, Config, Counters, Options};
use traceopt_opt::{Bug, Passes};

/// A campaign of at most `seconds` (the budget for finding an
/// injected bug), stopping at the first finding.
fn options(bug: Option<Bug>, seconds: u64) -> Options {
    Options {
        seed: 0,
        count: None,
        time: Some(Duration::from_secs(seconds)),
        jobs: 1,
        config: Config {
            heap: bug.is_some_and(Bug::is_heap),
            ..Config::default()
        },
        passes: Passes {
            bug,
            ..Passes::default()
        },
        solver_timeout: Some(Duration::from_millis(50)),
        solver: None,
        samples: 8,
        stop_at_first: true,
        bases: Vec::new(),
    }
}

/// Traces of the clean campaign (CI time: the heap campaign and `traceopt
/// fuzz` runs go further).
const CLEAN_TRACES: u64 = 600;

/// The least fraction of a clean campaign's traces the solver must prove.
const MIN_PROVED: f64 = 0.75;

#[test]
fn a_clean_optimizer_survives_a_short_campaign() {
    // A fixed number of traces, so that the test does not depend on the
    // machine's speed.
    let clean = Options {
        count: Some(CLEAN_TRACES),
        time: None,
        ..options(None, 0)
    };
    let summary = run(&clean, &Counters::default());
    let found: Vec<String> = summary
        .reports
        .iter()
        .map(|r| format!("seed {}: {}\n{}", r.seed, r.finding, r.reproducer.text()))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
    eprintln!(
        "{} traces: {} proved, {} undecided, {} beyond the validator, {} solver failures, {} called infeasible",
        summary.generated,
        summary.proved,
        summary.undecided,
        summary.validator_errors,
        summary.solver_failures,
        summary.infeasible
    );
    assert_eq!(summary.generated, CLEAN_TRACES);
    // The solver, not the runs, must carry the campaign: generated traces
    // are integer-only, so every one is within the validator, and at 50 ms
    // per query about 9 in 10 are proved (measured: see the README).
    assert_eq!(
        summary.validator_errors, 0,
        "{:?}",
        summary.first_validator_error
    );
    assert_eq!(
        summary.solver_failures, 0,
        "{:?}",
        summary.first_solver_failure
    );
    assert_eq!(summary.solver_error, None);
    let proved = summary.proved as f64 / summary.generated as f64;
    assert!(proved >= MIN_PROVED, "only {:.1}% proved", 100.0 * proved);
}

#[test]
fn every_injected_bug_is_found_and_shrunk() {
    let mut problems = Vec::new();
    for bug in Bug::ALL {
        let summary = run(&options(Some(bug), 60), &Counters::default());
        match summary.reports.first() {
            None => problems.push(format!(
                "{}: not found in {} traces",
                bug.name(),
                summary.generated
            )),
            Some(report) => {
                let ops = report.reproducer.op_count();
                eprintln!(
                    "{}: found at seed {} after {:.1}s, shrunk from {} to {ops} ops",
                    bug.name(),
                    report.seed,
                    summary.seconds,
                    report.original.op_count()
                );
                // The bounds: 8 ops for integer bugs, 10 for heap
                // ones (objects need allocating and filling first).
                let most = if bug.is_heap() { 10 } else { 8 };
                if ops > most {
                    problems.push(format!(
                        "{}: reproducer of {ops} ops:\n{}",
                        bug.name(),
                        report.reproducer.text()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
