//! What the optimizer's heap tests share: the peer set's namespace (its
//! descr names), and checks that an output is the expected text and is
//! proved equivalent, or that a wrong twin of it is refuted.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use traceopt_ir::{parse_trace_with, print_trace, Namespace, Trace};
use traceopt_opt::{malformed_output, optimize, Passes};
use traceopt_smt::Solver;
use traceopt_verify::{verify, verify_aligned, Verdict};

pub fn namespace() -> Arc<Namespace> {
    let path = traceopt_ir::shared_dir().join("peer/heap/descrs.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Arc::new(Namespace::parse(&text, "descrs.txt").unwrap())
}

pub fn parse(text: &str) -> Trace {
    parse_trace_with(text, "trace", Some(namespace())).unwrap()
}

pub fn solver() -> Solver {
    Solver::start(None, Duration::from_secs(20)).expect("an SMT solver")
}

/// Optimizes `before` with `passes`, expects `expected` (as printed), and
/// proves the output equivalent guard by guard.
pub fn optimizes_with(passes: Passes, before: &str, expected: &str) {
    let input = parse(before);
    let result = optimize(&input, passes).unwrap();
    let got = print_trace(&result.trace);
    assert_eq!(got, print_trace(&parse(expected)), "optimizing\n{before}");
    assert_eq!(malformed_output(&input, &result.trace), None, "{got}");
    let verdict = verify_aligned(&input, &result.trace, &result.provenance, &mut solver()).unwrap();
    assert_eq!(verdict, Verdict::Proved, "{before}\ngave\n{got}");
}

/// The output of `before` with `passes`, as printed, proved equivalent
/// guard by guard (for tests that look at part of it).
pub fn proved_output(passes: Passes, before: &str) -> String {
    let input = parse(before);
    let result = optimize(&input, passes).unwrap();
    let got = print_trace(&result.trace);
    assert_eq!(malformed_output(&input, &result.trace), None, "{got}");
    let verdict = verify_aligned(&input, &result.trace, &result.provenance, &mut solver()).unwrap();
    assert_eq!(verdict, Verdict::Proved, "{before}\ngave\n{got}");
    got
}

/// `expected` with `from` replaced by `to` is not equivalent to `before`.
pub fn twin_refuted(before: &str, expected: &str, from: &str, to: &str) {
    assert!(expected.contains(from), "{from} is not in\n{expected}");
    let twin = expected.replacen(from, to, 1);
    let verdict = verify(&parse(before), &parse(&twin), &mut solver()).unwrap();
    assert!(
        matches!(verdict, Verdict::Refuted(_)),
        "{twin}\ngave {verdict:?}"
    );
}

/// `twin_refuted`, where the difference lies in what a call sees, which
/// the interpreter's replay cannot show: not proved is enough.
pub fn twin_not_proved(before: &str, expected: &str, from: &str, to: &str) {
    assert!(expected.contains(from), "{from} is not in\n{expected}");
    let twin = expected.replacen(from, to, 1);
    let verdict = verify(&parse(before), &parse(&twin), &mut solver()).unwrap();
    assert!(
        matches!(verdict, Verdict::Refuted(_) | Verdict::Unreplayed(_)),
        "{twin}\ngave {verdict:?}"
    );
}

/// Every pass but `name` (one of `Passes::NAMES`).
pub fn all_but(name: &str) -> Passes {
    assert!(Passes::NAMES.contains(&name), "no pass {name}");
    let others: Vec<&str> = (Passes::NAMES.iter().copied())
        .filter(|n| *n != name)
        .collect();
    Passes::parse(&others.join(",")).expect("pass names")
}

/// Every pass but allocation removal.
pub fn without_virtuals() -> Passes {
    Passes {
        virtuals: false,
        ..Passes::default()
    }
}

/// How a peer set's cases fare: how many our output is no longer than
/// PyPy's expected one for, the others (with both op counts), and the
/// outputs not proved (guard by guard, else end to end). A case the
/// optimizer finds can never end is left out (`verify_never_ends` is
/// tested elsewhere).
pub struct PeerScore {
    pub at_or_below: usize,
    pub above: Vec<String>,
    pub not_proved: Vec<String>,
}

pub fn score_peer_cases<'c>(
    cases: impl IntoIterator<Item = &'c traceopt_ir::peer::PeerCase>,
) -> PeerScore {
    let mut solver = solver();
    let mut score = PeerScore {
        at_or_below: 0,
        above: Vec::new(),
        not_proved: Vec::new(),
    };
    for case in cases {
        let Ok(result) = optimize(&case.ops, Passes::default()) else {
            eprintln!("{} (line {}): never ends", case.name, case.line);
            continue;
        };
        let verdict =
            match verify_aligned(&case.ops, &result.trace, &result.provenance, &mut solver) {
                Ok(Verdict::Proved) => Ok(Verdict::Proved),
                _ => verify(&case.ops, &result.trace, &mut solver),
            };
        if !matches!(verdict, Ok(Verdict::Proved)) {
            let output = print_trace(&result.trace);
            (score.not_proved).push(format!(
                "{} (line {}): {verdict:?}\n{output}",
                case.name, case.line
            ));
        }
        let ours = traceopt_ir::OpCounts::of(&result.trace).ops;
        let pypy = traceopt_ir::OpCounts::of(&case.expected).ops;
        match ours <= pypy {
            true => score.at_or_below += 1,
            false => (score.above).push(format!(
                "  line {} {}: {ours} ops, PyPy {pypy}",
                case.line, case.name
            )),
        }
    }
    score
}
