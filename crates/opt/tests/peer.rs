//! The peer set (123 integer cases of PyPy's optimizer test-suite): every
//! output is proved equivalent to its input, guard by guard, and the
//! number of cases where we emit no more ops than PyPy's expected output
//! may not drop below what it is now (117). The cases above PyPy are
//! printed with both op counts.

use std::time::Duration;
use traceopt_ir::peer::parse_peer;
use traceopt_ir::{print_trace, OpCounts};
use traceopt_opt::{optimize, Passes};
use traceopt_smt::Solver;
use traceopt_verify::{verify_aligned, Verdict};

#[test]
fn peer_set_outputs_are_proved_and_no_longer_than_pypy() {
    let path = traceopt_ir::shared_dir().join("peer/pypy-intbound-dev.txt");
    let text = std::fs::read_to_string(&path).expect("the shared peer set beside the repo");
    let cases = parse_peer(&text, &path.to_string_lossy(), None).unwrap();
    assert_eq!(cases.len(), 123);
    let mut solver = Solver::start(None, Duration::from_secs(20)).expect("an SMT solver");
    let (mut at_or_below, mut above) = (0, Vec::new());
    let mut failures = Vec::new();
    for case in &cases {
        let result =
            optimize(&case.ops, Passes::default()).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        match verify_aligned(&case.ops, &result.trace, &result.provenance, &mut solver) {
            Ok(Verdict::Proved) => {}
            other => failures.push(format!(
                "{} (line {}): {other:?}\n{}",
                case.name,
                case.line,
                print_trace(&result.trace)
            )),
        }
        let (ours, pypy) = (
            OpCounts::of(&result.trace).ops,
            OpCounts::of(&case.expected).ops,
        );
        if ours <= pypy {
            at_or_below += 1;
        } else {
            above.push(format!(
                "  line {} {}: {ours} ops, PyPy {pypy}",
                case.line, case.name
            ));
        }
    }
    assert!(failures.is_empty(), "not proved:\n{}", failures.join("\n"));
    eprintln!(
        "{at_or_below} of 123 at or below PyPy's op count; above:\n{}",
        above.join("\n")
    );
    assert!(
        at_or_below >= 117,
        "only {at_or_below} of 123 at or below PyPy"
    );
}
