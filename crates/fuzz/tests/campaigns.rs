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
