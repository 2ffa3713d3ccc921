//! PyPy's expected outputs against their inputs: every pair of the peer set
//! is decided with a 10 s timeout per query, and all are proved.

use std::time::Duration;
use traceopt_ir::peer::parse_peer;
use traceopt_smt::Solver;
use traceopt_verify::{verify, Verdict};

#[test]
fn every_peer_pair_is_proved() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/peer/pypy-intbound-dev.txt"
    );
    let text = std::fs::read_to_string(path).expect("the shared peer set sits beside the repo");
    let cases = parse_peer(&text, path, None).unwrap();
    assert_eq!(cases.len(), 123);
    let mut solver = Solver::start(None, Duration::from_secs(10)).unwrap_or_else(|e| panic!("{e}"));
    let mut not_proved = Vec::new();
    for case in &cases {
        match verify(&case.ops, &case.expected, &mut solver) {
            Ok(Verdict::Proved) => {}
            other => not_proved.push(format!("{}: {other:?}", case.name)),
        }
    }
    assert!(not_proved.is_empty(), "{}", not_proved.join("\n"));
}
