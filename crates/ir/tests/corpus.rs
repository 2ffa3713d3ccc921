//! The shared corpus and peer set: every trace parses, checks and
//! round-trips through the printer exactly.

use std::path::PathBuf;
use traceopt_ir::log::{log_files, Section};
use traceopt_ir::peer::parse_peer;
use traceopt_ir::{check, parse_log, parse_trace, print_trace, CheckOptions, Trace};

fn shared() -> PathBuf {
    traceopt_ir::shared_dir()
}

fn corpus_logs() -> Vec<PathBuf> {
    let dir = shared().join("corpus/pypy-7.3.11");
    let logs = log_files(&dir).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the shared corpus must sit beside the repo)",
            dir.display()
        )
    });
    assert_eq!(logs.len(), 17, "the corpus has 17 logs");
    logs
}

fn assert_round_trip(trace: &Trace, what: &str) {
    let text = print_trace(trace);
    let again = parse_trace(&text, what)
        .unwrap_or_else(|e| panic!("{what}: printed trace does not parse: {e}\n{text}"));
    assert!(again == *trace, "{what}: round trip changed the trace");
    assert_eq!(print_trace(&again), text, "{what}: printing is not stable");
}

fn assert_checks(trace: &Trace, what: &str, options: CheckOptions) {
    let errors = check(trace, what, options);
    assert!(
        errors.is_empty(),
        "{what}: {}",
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_corpus_trace_parses_checks_and_round_trips() {
    let (mut recorded, mut loops, mut bridges, mut ops_all, mut ops_nodmp, mut opt_nodmp) =
        (0, 0, 0, 0, 0, 0);
    for path in corpus_logs() {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let log = parse_log(&text, &file).unwrap_or_else(|e| panic!("{e}"));
        for t in log.traces() {
            let what = format!("{file}:{}", t.line);
            let optimized = t.section != Section::Recorded;
            assert_checks(
                &t.trace,
                &what,
                CheckOptions {
                    require_fail_args: optimized,
                    partial: false,
                },
            );
            assert_round_trip(&t.trace, &what);
            let real = t.trace.real_ops().count();
            match t.section {
                Section::Recorded => {
                    recorded += 1;
                    ops_all += t.trace.ops.len();
                    ops_nodmp += real;
                    assert_eq!(
                        t.header.as_ref().and_then(|h| h.ops()),
                        Some(t.trace.ops.len()),
                        "{what}: header count"
                    );
                }
                Section::OptLoop => loops += 1,
                Section::OptBridge => bridges += 1,
            }
            if optimized {
                opt_nodmp += real;
            }
        }
        for pair in &log.pairs {
            assert!(
                pair.recorded.is_some(),
                "{file}: an optimized trace without its recording"
            );
        }
    }
    // The totals of the table in shared/corpus/README.md.
    assert_eq!((recorded, loops, bridges), (364, 119, 241));
    assert_eq!((ops_all, ops_nodmp, opt_nodmp), (86297, 74145, 26305));
}

#[test]
fn every_peer_case_parses_checks_and_round_trips() {
    let path = shared().join("peer/pypy-intbound-dev.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let cases =
        parse_peer(&text, &path.display().to_string(), None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cases.len(), 123);
    let mut partial_cases = Vec::new();
    for case in &cases {
        for (trace, part) in [(&case.ops, "ops"), (&case.expected, "expected")] {
            let what = format!("{} ({part})", case.name);
            let partial = !trace.ops.last().is_some_and(|op| op.opcode.is_final());
            if partial {
                partial_cases.push(case.name.as_str());
            }
            assert_checks(
                trace,
                &what,
                CheckOptions {
                    partial,
                    ..Default::default()
                },
            );
            assert_round_trip(trace, &what);
        }
    }
    // PyPy's suite has a few traces that stop after a guard; they are the only
    // ones checked as partial.
    eprintln!("partial peer traces: {partial_cases:?}");
    assert!(partial_cases.len() <= 6, "{partial_cases:?}");
}
