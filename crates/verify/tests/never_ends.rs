//! The claim "this trace can never run to its end", which the optimizer
//! makes when a guard always fails: proved where every defined run leaves
//! at a guard, refuted with inputs that run the trace to its end.

use std::time::Duration;
use traceopt_ir::parse_trace;
use traceopt_smt::Solver;
use traceopt_verify::{verify_never_ends, Verdict, VerifyError};

fn never_ends(text: &str) -> Result<Verdict, VerifyError> {
    let trace = parse_trace(text, "t").unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("{e}\n(the test command installs z3: see README)"));
    verify_never_ends(&trace, &mut solver)
}

#[test]
fn a_guard_that_always_fails_is_proved() {
    // i0 & 7 is below 8 whatever i0 is.
    let text = "[i0]\ni1 = int_and(i0, 7)\ni2 = int_lt(i1, 8)\nguard_false(i2) []\nfinish(i1)\n";
    assert_eq!(never_ends(text).unwrap(), Verdict::Proved);
}

#[test]
fn guards_that_contradict_each_other_are_proved() {
    let text = "[i0]\ni1 = int_lt(i0, 5)\nguard_true(i1) []\ni2 = int_gt(i0, 10)\n\
                guard_true(i2) []\njump(i0)\n";
    assert_eq!(never_ends(text).unwrap(), Verdict::Proved);
}

#[test]
fn a_trace_that_can_finish_is_refuted_with_inputs_that_finish() {
    let text = "[i0]\ni1 = int_lt(i0, 8)\nguard_false(i1) []\nfinish(i0)\n";
    let Verdict::Refuted(cex) = never_ends(text).unwrap() else {
        panic!("expected a counterexample");
    };
    assert!(cex.inputs[0].1 >= 8, "{cex}");
    assert!(cex.difference.contains("runs to its end"), "{cex}");
    assert!(cex.difference.contains("finishes with"), "{cex}");
}

#[test]
fn only_defined_runs_count() {
    // Past the guard i0 is 0 and the division is undefined: no defined
    // run reaches the end, so the claim holds (the optimizer may assume
    // the trace is defined, as it does for every other rewrite).
    let text = "[i0]\ni1 = int_eq(i0, 0)\nguard_true(i1) []\ni2 = int_pydiv(1, i0)\nfinish(i2)\n";
    assert_eq!(never_ends(text).unwrap(), Verdict::Proved);
    // Without the guard, inputs other than 0 finish.
    let text = "[i0]\ni2 = int_pydiv(1, i0)\nfinish(i2)\n";
    assert!(matches!(never_ends(text).unwrap(), Verdict::Refuted(_)));
}

#[test]
fn traces_beyond_the_validator_are_unsupported() {
    let text = "[p0, p1]\ni9 = gc_load_i(p0, 8, 8)\nfinish()\n";
    assert!(matches!(
        never_ends(text),
        Err(VerifyError::Unsupported { .. })
    ));
}

#[test]
fn heap_claims_are_proved_and_refuted() {
    // A fresh object is never null.
    let text = "[i0]\np1 = new(descr=<SizeDescr 16>)\nguard_isnull(p1) []\nfinish(i0)\n";
    assert_eq!(never_ends(text).unwrap(), Verdict::Proved);
    // A non-null input runs to the end: the interpreter, given an object
    // for it, shows so.
    let text = "[p0]\nguard_nonnull(p0) []\nfinish(p0)\n";
    let Verdict::Refuted(cex) = never_ends(text).unwrap() else {
        panic!("expected a counterexample");
    };
    assert!(cex.difference.contains("finishes with"), "{cex}");
}
