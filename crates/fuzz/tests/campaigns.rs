//! The fuzzer against the optimizer: each of seed 000's miscompilations,
//! switched on in the optimizer (`Passes::bug`), is found and shrunk to a
//! small reproducer that still fails the same way. (A clean optimizer's
//! campaigns are the optimizer's own tests: `opt/tests/fuzz_campaigns.rs`.)

use std::time::Duration;
use traceopt_fuzz::{run, Config, Counters, Options};
use traceopt_opt::{Bug, Passes};

/// A campaign of at most `seconds` (the budget for finding an
/// injected bug), stopping at the first finding.
fn options(bug: Option<Bug>, seconds: u64) -> Options {
    Options {
        time: Some(Duration::from_secs(seconds)),
        config: Config {
            heap: bug.is_some_and(Bug::is_heap),
            ..Config::default()
        },
        passes: Passes {
            bug,
            ..Passes::default()
        },
        solver_timeout: Some(Duration::from_millis(50)),
        stop_at_first: true,
        ..Options::default()
    }
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

#[test]
fn the_solver_takes_its_share_of_the_time_and_no_more() {
    let campaign = |share: f64, count: u64| {
        let options = Options {
            count: Some(count),
            solver_share: share,
            ..Options::default()
        };
        run(&options, &Counters::default())
    };
    // None: every trace checked by the runs only, and that is no failure.
    let none = campaign(0.0, 200);
    assert_eq!(none.runs_only, 200, "{none:?}");
    assert_eq!(none.solver_error, None);
    // All: every trace given to the solver.
    let all = campaign(1.0, 30);
    assert_eq!(all.runs_only, 0, "{all:?}");
    assert!(all.proved > 0, "{all:?}");
    // Half: most traces by the runs (a trace takes them far less time),
    // some by the solver.
    let half = campaign(0.5, 2000);
    assert!(half.proved > 0 && half.runs_only > half.proved, "{half:?}");
}
