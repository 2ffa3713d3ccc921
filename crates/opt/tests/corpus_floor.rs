//! The corpus as a floor: the optimizer's Figure 7 counts over every
//! recorded trace of `shared/corpus` may only go down, and each pass,
//! switched off, must leave more ops. A change (or a mutant) that makes
//! any pass do less on real traces fails here, even where it stays sound
//! and so passes every proof. (`traceopt opt --stats` prints the same
//! counts; the CLI test checks them through the binary.)

use traceopt_ir::{check, log::log_files, read_log, CheckOptions, OpCounts, Trace};
use traceopt_opt::{optimize, Passes};

/// The recorded traces of the corpus that the checker accepts (the
/// optimizer takes well-formed traces only).
fn recorded_traces() -> Vec<Trace> {
    let dir = traceopt_ir::shared_dir().join("corpus/pypy-7.3.11");
    let mut traces = Vec::new();
    for path in log_files(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let text = std::fs::read_to_string(&path).expect("a corpus log");
        let file = path.display().to_string();
        for pair in read_log(&text, &file).pairs {
            if let Some(recorded) = pair.recorded {
                if check(&recorded.trace, &file, CheckOptions::default()).is_empty() {
                    traces.push(recorded.trace);
                }
            }
        }
    }
    traces
}

/// The counts of every trace's output, summed (a trace found never to
/// reach its end counts as no ops).
fn optimized_counts(traces: &[Trace], passes: Passes) -> OpCounts {
    let mut total = OpCounts::default();
    for trace in traces {
        if let Ok(result) = optimize(trace, passes) {
            total += OpCounts::of(&result.trace);
        }
    }
    total
}

#[test]
fn the_corpus_counts_only_go_down() {
    let traces = recorded_traces();
    assert_eq!(traces.len(), 364, "the corpus has 364 recorded traces");
    let ours = optimized_counts(&traces, Passes::default());
    // Measured 2026-11-27. Lower them when the optimizer gets better.
    // (Guards rose by 12 on purpose: no null test strengthened past a
    // vref's finish, which the validator could not prove.)
    let floors = OpCounts {
        ops: 21_330,
        allocations: 1_101,
        reads: 4_180,
        writes: 2_992,
        guards: 6_291,
    };
    let pairs = [
        ("ops", ours.ops, floors.ops),
        ("allocations", ours.allocations, floors.allocations),
        ("heap reads", ours.reads, floors.reads),
        ("heap writes", ours.writes, floors.writes),
        ("guards", ours.guards, floors.guards),
    ];
    for (what, got, floor) in pairs {
        assert!(got <= floor, "{what}: {got}, more than the floor {floor}");
        if got < floor {
            println!("{what}: {got}, below the floor {floor}: lower it");
        }
    }
}

#[test]
fn every_pass_removes_ops_from_the_corpus() {
    let traces = recorded_traces();
    let all = optimized_counts(&traces, Passes::default()).ops;
    let mut idle = Vec::new();
    for name in Passes::NAMES {
        let others: Vec<_> = Passes::NAMES
            .iter()
            .filter(|n| *n != name)
            .copied()
            .collect();
        let passes = Passes::parse(&others.join(",")).expect("pass names");
        let without = optimized_counts(&traces, passes).ops;
        println!("without {name}: {without} ops (all passes: {all})");
        if without <= all {
            idle.push(*name);
        }
    }
    assert!(
        idle.is_empty(),
        "passes that remove nothing from the corpus: {idle:?}"
    );
}
