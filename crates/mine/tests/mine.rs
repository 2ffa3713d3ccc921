//! The miner on small traces: what it finds, how small it cuts each hit,
//! and what it must not claim.

use std::time::Duration;

use traceopt_ir::{check, parse_trace, CheckOptions};
use traceopt_mine::{mine, Finding, Mined, Options};
use traceopt_smt::Solver;

fn mined(text: &str) -> Vec<Mined> {
    let trace = parse_trace(text, "test").unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(10)).unwrap();
    let (mined, tally) = mine(&trace, &mut solver, Options::default()).unwrap();
    assert_eq!(tally.unknown, 0, "{tally:?}");
    // Every example is a well-formed trace of the test format.
    for hit in &mined {
        let example = parse_trace(&hit.example, "example").unwrap();
        let errors = check(&example, "example", CheckOptions::default());
        assert!(errors.is_empty(), "{errors:?}\n{}", hit.example);
    }
    mined
}

fn ops_of(example: &str) -> usize {
    let body = example
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('['));
    body.filter(|l| *l != "finish()").count()
}

#[test]
fn transitivity_of_less_than_is_found_and_cut_to_its_three_comparisons() {
    let found = mined(
        "[i0, i1, i2, i9]
         i3 = int_lt(i0, i1)
         guard_true(i3) []
         i10 = int_add(i9, 5)
         i11 = int_gt(i10, 3)
         guard_true(i11) []
         i4 = int_lt(i1, i2)
         guard_true(i4) []
         i5 = int_lt(i0, i2)
         guard_true(i5) []
         finish()",
    );
    // The comparison is always 1 (its guard, always passing then, is no
    // finding of its own).
    let kinds: Vec<Finding> = found.iter().map(|m| m.finding).collect();
    assert_eq!(kinds, [Finding::Constant(1)], "{found:#?}");
    let constant = &found[0];
    assert_eq!(constant.op, 7);
    assert_eq!(
        constant.example,
        "# i5 is always 1\n[i0, i1, i2]\ni3 = int_lt(i0, i1)\nguard_true(i3) []\n\
         i4 = int_lt(i1, i2)\nguard_true(i4) []\ni5 = int_lt(i0, i2)\nfinish()\n"
    );
}

#[test]
fn a_value_computed_again_another_way_is_the_earlier_one() {
    // PyPy's hash pattern: x ^ 2048 - 2048 is x when bit 11 is clear.
    let found = mined(
        "[i0]
         i1 = int_and(i0, 1345)
         i2 = int_xor(i1, 2048)
         i3 = int_sub(i2, 2048)
         finish(i3)",
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(matches!(found[0].finding, Finding::Same(_)));
    assert_eq!(found[0].what, "i3 is always i1");
    assert_eq!(ops_of(&found[0].example), 3);
}

#[test]
fn an_overflow_that_cannot_happen_is_a_guard_that_always_passes() {
    let found = mined(
        "[i0]
         i1 = int_and(i0, 255)
         i2 = int_add_ovf(i1, 1)
         guard_no_overflow() []
         finish(i2)",
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].finding, Finding::Implied);
    assert_eq!(found[0].what, "guard_no_overflow always passes");
    assert!(found[0]
        .example
        .contains("i2 = int_add_ovf(i1, 1)\nguard_no_overflow() []"));
}

#[test]
fn nothing_is_claimed_of_ops_that_vary() {
    // Each op takes at least two values on runs that pass the guards; a
    // weaker guard (i0 > 0 only) must not make `i0 & 1` look constant.
    let found = mined(
        "[i0, i1]
         i2 = int_gt(i0, 0)
         guard_true(i2) []
         i3 = int_and(i0, 1)
         i4 = int_add(i3, i1)
         i5 = int_lt(i4, 100)
         guard_true(i5) []
         i6 = int_sub(i4, i1)
         finish(i6)",
    );
    // Only i6 = i3 holds; cut down, it is (a + b) - b.
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        found[0].example,
        "# i3 is always i0\n[i0, i1]\ni2 = int_add(i0, i1)\ni3 = int_sub(i2, i1)\nfinish()\n"
    );
}

#[test]
fn a_label_starts_over_knowing_nothing() {
    // After the label, i4 is a new value: the guard before it says
    // nothing of it.
    let found = mined(
        "[i0]
         i1 = int_gt(i0, 10)
         guard_true(i1) []
         label(i0, descr=TargetToken(1))
         i2 = int_gt(i0, 10)
         guard_true(i2) []
         jump(i0, descr=TargetToken(1))",
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_guard_the_earlier_guards_imply_is_found() {
    let found = mined(
        "[i0, i2]
         guard_value(i0, 7) []
         i1 = int_lt(i0, 3)
         guard_false(i1) []
         i3 = int_gt(i2, 5)
         guard_true(i3) []
         guard_true(i2) []
         finish()",
    );
    let kinds: Vec<Finding> = found.iter().map(|m| m.finding).collect();
    assert_eq!(
        kinds,
        [Finding::Constant(0), Finding::Implied],
        "{found:#?}"
    );
    assert_eq!(
        found[1].example,
        "# guard_true always passes\n[i0]\ni1 = int_gt(i0, 5)\nguard_true(i1) []\n\
         guard_true(i0) []\nfinish()\n"
    );
}

#[test]
fn a_guard_that_matters_through_a_later_guard_is_kept() {
    // `i4` depends on i1 only; the first guard, on i0, matters through
    // the second (i0 < i1), which comes after it.
    let found = mined(
        "[i0, i1]
         i2 = int_gt(i0, 10)
         guard_true(i2) []
         i3 = int_lt(i0, i1)
         guard_true(i3) []
         i4 = int_gt(i1, 11)
         finish(i4)",
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].what, "i4 is always 1");
    assert_eq!(ops_of(&found[0].example), 5);
}

#[test]
fn a_copy_of_a_constant_for_a_label_is_no_finding() {
    // How a peeled loop passes a constant to its label, as PyPy does.
    let found = mined(
        "[i0]
         i1 = same_as_i(5)
         guard_value(i1, 5) []
         label(i0, i1, descr=TargetToken(1))
         jump(i0, i1, descr=TargetToken(1))",
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn nothing_is_claimed_past_guards_no_run_passes() {
    // i0 < 0, then i0 > 10: no run gets past the second guard, so that
    // the guard after it "always passes" would say nothing.
    let found = mined(
        "[i0]
         i1 = int_lt(i0, 0)
         guard_true(i1) []
         i2 = int_gt(i0, 10)
         guard_true(i2) []
         guard_value(i0, 5) []
         finish()",
    );
    let kinds: Vec<Finding> = found.iter().map(|m| m.finding).collect();
    assert_eq!(kinds, [Finding::Constant(0)], "{found:#?}");
}

#[test]
fn an_op_equal_to_another_value_is_another_shape() {
    // With constants hidden, the two `int_or`s look alike; one is always
    // its second input, the other its first.
    let shape = |text: &str| {
        let found = mined(text);
        let or = found.iter().find(|m| m.example.contains("int_or"));
        or.unwrap_or_else(|| panic!("{found:#?}")).shape.clone()
    };
    let left = shape(
        "[i0, i1]\ni2 = int_and(i0, 0)\ni3 = int_and(i1, -1)\ni4 = int_or(i2, i3)\nfinish(i4)\n",
    );
    let right = shape(
        "[i0, i1]\ni2 = int_and(i0, -1)\ni3 = int_and(i1, 0)\ni4 = int_or(i2, i3)\nfinish(i4)\n",
    );
    assert_ne!(left, right);
}

#[test]
fn an_overflow_guard_after_a_constant_result_is_still_asked() {
    // x - x is 0 (a finding), and it cannot overflow (another).
    let found = mined("[i0]\ni1 = int_sub_ovf(i0, i0)\nguard_no_overflow() []\nfinish(i1)\n");
    let kinds: Vec<Finding> = found.iter().map(|m| m.finding).collect();
    assert_eq!(
        kinds,
        [Finding::Constant(0), Finding::Implied],
        "{found:#?}"
    );
}

#[test]
fn a_question_is_asked_of_the_lines_it_depends_on() {
    use traceopt_mine::cone::Cones;
    let trace = parse_trace(
        "[i0, i1, i2]
         i3 = int_gt(i0, 10)
         guard_true(i3) []
         i4 = int_gt(i1, 10)
         guard_true(i4) []
         i5 = int_lt(i0, i2)
         guard_true(i5) []
         i6 = int_gt(i2, 11)
         finish(i6)",
        "test",
    )
    .unwrap();
    let slice = &traceopt_mine::segments(&trace)[0];
    let last = slice.lines.len() - 1;
    let lines = Cones::new(slice).relevant(slice, last, &[], Some(last));
    // i2 meets i0 through the third guard, which brings the first; the
    // guard on i1 stays out.
    let origins: Vec<usize> = lines.iter().map(|&k| slice.lines[k].origin).collect();
    assert_eq!(origins, [0, 1, 4, 5]);
}

#[test]
fn minimizing_stops_at_its_query_budget() {
    // The guard shares the hit's input, so only a greedy step (asked of
    // the solver) drops it: the first step, from the end, tries to make
    // the first mask an input, which fails, and a budget of one query
    // stops there.
    let text = "[i0]
                i1 = int_gt(i0, 3)
                guard_true(i1) []
                i2 = int_and(i0, 255)
                i3 = int_and(i2, 255)
                finish(i3)";
    let trace = parse_trace(text, "test").unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(10)).unwrap();
    let mut lines = |budget| {
        let options = Options {
            minimize: true,
            budget,
        };
        let (found, _) = mine(&trace, &mut solver, options).unwrap();
        assert_eq!(found.len(), 1, "{found:#?}");
        ops_of(&found[0].example)
    };
    assert_eq!(lines(200), 2);
    assert_eq!(lines(1), 4);
}

#[test]
fn a_named_integer_constant_is_one_unknown_value() {
    // `ConstClass(Foo)` is some integer the trace does not give: the
    // second test of it is the first, and nothing else is claimed.
    let found = mined(
        "[i0]
         i1 = int_eq(i0, ConstClass(Foo))
         i2 = int_eq(i0, ConstClass(Foo))
         i3 = int_eq(i0, ConstClass(Bar))
         finish()",
    );
    let what: Vec<&str> = found.iter().map(|m| m.what.as_str()).collect();
    assert_eq!(what, ["i3 is always i2"], "{found:#?}");
}
