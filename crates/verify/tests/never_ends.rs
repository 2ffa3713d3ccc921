//! The claim "this trace can never run to its end", which the optimizer
//! makes when a guard always fails: proved where every defined run leaves
//! at a guard, refuted with inputs that run the trace to its end.

use std::time::Duration;
use traceopt_ir::{parse_trace, SeenClass};
use traceopt_smt::Solver;
use traceopt_verify::{verify_never_ends, verify_optimized, Verdict, VerifyError};

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

/// A frame made in the trace keeps an object in its stack; a
/// conditional call on the frame (of descr `call`), made where the frame
/// has a token, comes before the stack item is read back and its class
/// tested. `token` is what the token is read from.
fn claim_through_a_frame(token: &str, call: &str) -> String {
    format!(
        "[p0]\np1 = new_with_vtable(descr=<SizeDescr 24>)\n\
         p2 = new_array_clear(2, descr=<ArrayP 8>)\n\
         setarrayitem_gc(p2, 0, p1, descr=<ArrayP 8>)\n\
         p3 = new_with_vtable(descr=<SizeDescr 32>)\n\
         setfield_gc(p3, p2, descr=<FieldP Frame.inst_stack 8>)\n\
         i4 = getfield_gc_i({token}, descr=<FieldS Frame.vable_token 16>)\n\
         i5 = int_ne(i4, 0)\n\
         cond_call(i5, ConstClass(force), p3, descr={call})\n\
         p6 = getfield_gc_r(p3, descr=<FieldP Frame.inst_stack 8>)\n\
         p7 = getarrayitem_gc_r(p6, 0, descr=<ArrayP 8>)\n\
         guard_class(p7, ConstClass(Tuple)) []\n\
         finish(p7)\n"
    )
}

#[test]
fn a_class_claim_past_a_conditional_call_that_is_never_made_is_proved() {
    // The frame is new, so its token is 0 and the call is never made:
    // the item read back is the object stored. Where the token is read
    // from an input, the call may be made, and a call of no effect info
    // may write the stack; PyPy's force of a virtualizable (`OS=121`,
    // one effect info: it writes nothing) does not.
    let (force, unknown) = ("<Callv 0 r EF=2 OS=121>", "<Callv 0 r EF=2>");
    let cases = [
        ("p3", unknown, true),
        ("p0", unknown, false),
        ("p0", force, true),
    ];
    for (token, call, holds) in cases {
        let text = claim_through_a_frame(token, call);
        let mut trace = parse_trace(&text, "t").unwrap();
        trace.recorded = 0..trace.ops.len();
        let claim = SeenClass { site: 0, guard: 10 };
        let provenance: Vec<Option<usize>> = (0..trace.ops.len()).map(Some).collect();
        let mut solver = Solver::start(None, Duration::from_secs(10)).unwrap();
        let verdict = verify_optimized(&trace, &trace, &provenance, &[claim], &mut solver).unwrap();
        assert_eq!(
            verdict == Verdict::Proved,
            holds,
            "{token} {call}: {verdict:?}"
        );
    }
}
