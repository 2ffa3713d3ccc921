//! The heap peer set (`../shared/peer/heap/dev.txt`, PyPy's heap,
//! virtual-object and string cases), the cases PyPy optimizes without
//! unrolling: every output is proved equivalent to its input (guard by
//! guard, else end to end), and the number of cases where we emit no more
//! ops than PyPy's expected output may not drop below what it is now
//! (118 of the 130 cases that parse; `traceopt opt` over the file counts
//! 116 of 128, as its checker skips two more). The cases above PyPy are
//! printed with both op counts.

use std::sync::Arc;
use std::time::Duration;
use traceopt_ir::peer::read_peer;
use traceopt_ir::{print_trace, Namespace, OpCounts};
use traceopt_opt::{optimize, Passes};
use traceopt_smt::Solver;
use traceopt_verify::{verify, verify_aligned, Verdict};

#[test]
fn heap_peer_outputs_are_proved_and_most_no_longer_than_pypy() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/peer/heap");
    let read = |name: &str| {
        std::fs::read_to_string(format!("{dir}/{name}"))
            .unwrap_or_else(|e| panic!("{dir}/{name}: {e} (the shared peer set beside the repo)"))
    };
    let namespace = Arc::new(Namespace::parse(&read("descrs.txt"), "descrs.txt").unwrap());
    let set = read_peer(&read("dev.txt"), "dev.txt", Some(namespace));
    let cases: Vec<_> = (set.cases.iter())
        .filter(|c| !c.meta.iter().any(|(_, v)| v.contains("unroll")) && !c.name.contains("unroll"))
        .collect();
    let total = cases.len();
    assert!(total >= 128, "only {total} well-formed non-unrolled cases");
    let mut solver = Solver::start(None, Duration::from_secs(20)).expect("an SMT solver");
    let (mut at_or_below, mut above, mut failures) = (0, Vec::new(), Vec::new());
    for case in cases {
        // A trace the optimizer finds can never end is the validator's
        // `verify_never_ends` question, tested elsewhere.
        let Ok(result) = optimize(&case.ops, Passes::default()) else {
            eprintln!("{} (line {}): never ends", case.name, case.line);
            continue;
        };
        let aligned = verify_aligned(&case.ops, &result.trace, &result.provenance, &mut solver);
        let verdict = match aligned {
            Ok(Verdict::Proved) => Ok(Verdict::Proved),
            _ => verify(&case.ops, &result.trace, &mut solver),
        };
        if !matches!(verdict, Ok(Verdict::Proved)) {
            failures.push(format!(
                "{} (line {}): {verdict:?}\n{}",
                case.name,
                case.line,
                print_trace(&result.trace)
            ));
        }
        let (ours, pypy) = (
            OpCounts::of(&result.trace).ops,
            OpCounts::of(&case.expected).ops,
        );
        match ours <= pypy {
            true => at_or_below += 1,
            false => above.push(format!(
                "  line {} {}: {ours} ops, PyPy {pypy}",
                case.line, case.name
            )),
        }
    }
    assert!(failures.is_empty(), "not proved:\n{}", failures.join("\n"));
    eprintln!(
        "{at_or_below} of {total} at or below PyPy's op count; above:\n{}",
        above.join("\n")
    );
    assert!(
        at_or_below >= 118,
        "only {at_or_below} of {total} at or below PyPy"
    );
}
