//! Traces that loop back to a label inside them are compared as loops:
//! the preambles, then the bodies from any state the label takes. One
//! run from the start shows the first pass alone, which is not a proof.

use std::time::Duration;
use traceopt_ir::parse_trace;
use traceopt_smt::Solver;
use traceopt_verify::{verify, Verdict};

fn check(before: &str, after: &str) -> Verdict {
    let solver = Solver::start(None, Duration::from_secs(10));
    let mut solver = solver.unwrap_or_else(|e| panic!("{e}\n(the test command installs z3)"));
    let before = parse_trace(before, "before").unwrap();
    let after = parse_trace(after, "after").unwrap();
    verify(&before, &after, &mut solver).unwrap()
}

/// A countdown that tests its counter once before its label and once in
/// its body, each pass.
const LOOP: &str = "[i0]\n\
    i1 = int_gt(i0, 0)\n\
    guard_true(i1) [i0]\n\
    label(i0, descr=TargetToken(1))\n\
    i2 = int_gt(i0, 0)\n\
    guard_true(i2) [i0]\n\
    i3 = int_sub(i0, 1)\n\
    jump(i3, descr=TargetToken(1))\n";

#[test]
fn loops_alike_before_and_after_the_label_are_proved() {
    let after = LOOP.replace("i1 = int_gt(i0, 0)", "i1 = int_ge(i0, 1)");
    assert_eq!(check(LOOP, &after), Verdict::Proved);
}

#[test]
fn a_body_that_differs_on_later_passes_only_is_not_proved() {
    // The preamble's guard makes the body's hold on the first pass; from
    // i0 = 1 the second pass gets 0, which BEFORE's body stops.
    let after = LOOP.replace("guard_true(i2) [i0]\n", "");
    let verdict = check(LOOP, &after);
    assert!(
        matches!(&verdict, Verdict::Unknown(why) if why.contains("the bodies differ")),
        "{verdict:?}"
    );
}

#[test]
fn a_first_pass_that_differs_is_refuted() {
    let after = LOOP.replace("int_sub(i0, 1)", "int_sub(i0, 2)");
    assert!(matches!(check(LOOP, &after), Verdict::Refuted(_)));
}

#[test]
fn a_loop_compared_with_a_trace_of_another_shape_is_not_proved() {
    // The same ops, jumping back to the start: each pass tests twice
    // instead of once, alike, but one run from the start cannot show it.
    let straight = LOOP
        .replace("label(i0, descr=TargetToken(1))\n", "")
        .replace(", descr=TargetToken(1)", "");
    let verdict = check(LOOP, &straight);
    assert!(
        matches!(&verdict, Verdict::Unknown(why) if why.contains("does not")),
        "{verdict:?}"
    );
}

#[test]
fn a_label_that_is_the_start_in_all_but_name_is_compared_by_one_run() {
    // (As a recorded loop begins: its inputs, in order.)
    let looped = "[i0]\nlabel(i0, descr=TargetToken(1))\ni1 = int_gt(i0, 0)\n\
        guard_true(i1) [i0]\ni2 = int_sub(i0, 1)\njump(i2, descr=TargetToken(1))\n";
    let after = looped.replace("int_gt(i0, 0)", "int_ge(i0, 1)");
    assert_eq!(check(looped, &after), Verdict::Proved);
    let wrong = looped.replace("int_gt(i0, 0)", "int_ge(i0, 0)");
    assert!(matches!(check(looped, &wrong), Verdict::Refuted(_)));
}
