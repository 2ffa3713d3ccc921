//! The guard-aligned form: each guard of the optimized trace names the
//! input guard it stands for.

use std::time::Duration;
use traceopt_ir::{parse_trace, Opcode, Trace};
use traceopt_smt::Solver;
use traceopt_verify::{verify, verify_aligned, verify_assuming, Verdict, VerifyError};

fn traces(before: &str, after: &str) -> (Trace, Trace) {
    (
        parse_trace(before, "before").unwrap(),
        parse_trace(after, "after").unwrap(),
    )
}

/// Provenance by position: the k-th guard of AFTER stands for BEFORE's
/// guard number `map[k]` (counting guards from 0).
fn provenance(before: &Trace, after: &Trace, map: &[usize]) -> Vec<Option<usize>> {
    let guards: Vec<usize> = (0..before.ops.len())
        .filter(|&i| before.ops[i].opcode.is_guard())
        .collect();
    let mut k = 0;
    after
        .ops
        .iter()
        .map(|op| {
            op.opcode.is_guard().then(|| {
                k += 1;
                guards[map[k - 1]]
            })
        })
        .collect()
}

fn solver() -> Solver {
    Solver::start(None, Duration::from_secs(10)).unwrap()
}

const BEFORE: &str =
    "[i0]\ni1 = int_add_ovf(i0, 10)\nguard_no_overflow() []\ni2 = int_lt(i1, 15)\n\
                      guard_true(i2) []\ni3 = int_lt(i0, 6)\nguard_true(i3) []\njump(0)\n";

#[test]
fn a_removed_guard_must_be_implied() {
    let (before, after) = traces(BEFORE, "[i0]\ni1 = int_add_ovf(i0, 10)\nguard_no_overflow() []\ni2 = int_lt(i1, 15)\nguard_true(i2) []\njump(0)\n");
    let p = provenance(&before, &after, &[0, 1]);
    assert_eq!(
        verify_aligned(&before, &after, &p, &mut solver()).unwrap(),
        Verdict::Proved
    );
    // Without the overflow check the removed guard can fail.
    let wrapping = BEFORE
        .replace("int_add_ovf", "int_add")
        .replace("guard_no_overflow() []\n", "");
    let (before, after) = traces(
        &wrapping,
        "[i0]\ni1 = int_add(i0, 10)\ni2 = int_lt(i1, 15)\nguard_true(i2) []\njump(0)\n",
    );
    let p = provenance(&before, &after, &[0]);
    match verify_aligned(&before, &after, &p, &mut solver()).unwrap() {
        Verdict::Refuted(cex) => {
            assert!(
                cex.difference.starts_with(
                    "BEFORE's guard_true at line 6 was removed but can fail: BEFORE fails"
                ),
                "{cex}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn matched_guards_must_agree_one_by_one() {
    // Swapping two guards keeps the end-to-end behaviour. Named in their
    // new order, the first fails early in the place of the second (past
    // the escape, which the resumed interpreter makes itself): proved.
    // A first test stronger than any of BEFORE's fails where BEFORE
    // fails nothing: refuted.
    let before = "[i0]\ni1 = int_gt(i0, 0)\nguard_true(i1) []\nescape_n(i0)\ni2 = int_gt(i0, 5)\nguard_true(i2) []\nfinish(i0)\n";
    let after = "[i0]\ni2 = int_gt(i0, 5)\nguard_true(i2) []\nescape_n(i0)\ni1 = int_gt(i0, 0)\nguard_true(i1) []\nfinish(i0)\n";
    let (b, a) = traces(before, after);
    assert_eq!(verify(&b, &a, &mut solver()).unwrap(), Verdict::Proved);
    let p = provenance(&b, &a, &[0, 1]);
    assert_eq!(
        verify_aligned(&b, &a, &p, &mut solver()).unwrap(),
        Verdict::Proved
    );
    let stronger = after.replace("int_gt(i0, 5)", "int_gt(i0, 6)");
    let (b, a) = traces(before, &stronger);
    let p = provenance(&b, &a, &[0, 1]);
    match verify_aligned(&b, &a, &p, &mut solver()).unwrap() {
        Verdict::Refuted(cex) => assert!(
            cex.difference
                .contains("BEFORE's guard_true at line 3 and AFTER's guard_true at line 3 differ"),
            "{cex}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_guard_may_fail_in_the_place_of_a_later_one() {
    // PyPy's guard strengthening: the null test becomes a class test too,
    // with its own resume data, and the class test goes. Where the class
    // is wrong, the optimized trace fails where the null test was; the
    // interpreter resuming there does what the trace does up to the class
    // test (the read, the escape) and tests the class itself.
    let before =
        "[p0, i1]\nguard_nonnull(p0) [i1]\ni2 = getfield_gc_i(p0, descr=<FieldS node.value 8>)\n\
        guard_class(p0, ConstClass(node_vtable)) [i2]\nescape_n(i2)\nfinish(i1)\n";
    let after = "[p0, i1]\nguard_nonnull_class(p0, ConstClass(node_vtable)) [i1]\n\
        i2 = getfield_gc_i(p0, descr=<FieldS node.value 8>)\nescape_n(i2)\nfinish(i1)\n";
    let escaping = (
        before.replace("guard_class", "escape_n(i1)\nguard_class"),
        after.replace("escape_n(i2)", "escape_n(i1)\nescape_n(i2)"),
    );
    for (before, after) in [(before.to_string(), after.to_string()), escaping] {
        let (b, a) = traces(&before, &after);
        let p = provenance(&b, &a, &[0]);
        assert_eq!(
            verify_aligned(&b, &a, &p, &mut solver()).unwrap(),
            Verdict::Proved,
            "{after}"
        );
    }
    // Not with the later guard's resume data, nor standing for the later
    // guard, nor past more guards than the validator looks at.
    let wrong_resume = after.replacen("[i1]", "[i2]", 1).replacen(
        "guard_nonnull_class(p0, ConstClass(node_vtable)) [i2]\n\
        i2 = getfield_gc_i(p0, descr=<FieldS node.value 8>)",
        "i2 = getfield_gc_i(p0, descr=<FieldS node.value 8>)\n\
        guard_nonnull_class(p0, ConstClass(node_vtable)) [i2]",
        1,
    );
    let tests: String = (0..traceopt_ir::MAX_GUARDS_FAILED_EARLY)
        .map(|k| {
            format!(
                "i{} = int_ne(i1, {k})\nguard_true(i{}) [i1]\n",
                k + 10,
                k + 10
            )
        })
        .collect();
    let far = (
        before.replace("guard_class", &format!("{tests}guard_class")),
        after.replace("escape_n", &format!("{tests}escape_n")),
    );
    let far_map: Vec<usize> = (0..=traceopt_ir::MAX_GUARDS_FAILED_EARLY).collect();
    for (before, after, map) in [
        (before.to_string(), wrong_resume, vec![0]),
        (before.to_string(), after.to_string(), vec![1]),
        (far.0, far.1, far_map),
    ] {
        let (b, a) = traces(&before, &after);
        let p = provenance(&b, &a, &map);
        let verdict = verify_aligned(&b, &a, &p, &mut solver()).unwrap();
        assert!(
            matches!(verdict, Verdict::Refuted(_)),
            "{verdict:?}\n{after}"
        );
    }
}

#[test]
fn every_after_guard_needs_provenance() {
    let (b, a) = traces(BEFORE, BEFORE);
    let mut p = provenance(&b, &a, &[0, 1, 2]);
    let last_guard = a
        .ops
        .iter()
        .rposition(|op| op.opcode == Opcode::GuardTrue)
        .unwrap();
    p[last_guard] = None;
    let err = verify_aligned(&b, &a, &p, &mut solver()).unwrap_err();
    assert!(
        matches!(err, VerifyError::Provenance { line: 7, .. }),
        "{err}"
    );
    let p = provenance(&b, &a, &[0, 1, 2]);
    assert_eq!(
        verify_aligned(&b, &a, &p, &mut solver()).unwrap(),
        Verdict::Proved
    );
}

#[test]
fn provenance_short_of_the_ops_is_read_no_further_under_assumed_facts() {
    // Copied past the facts' guards, a provenance that names too few ops
    // is not read past its end: the guard-by-guard form has nothing to
    // go by, and the end-to-end form decides.
    let (b, a) = traces(BEFORE, BEFORE);
    let facts = vec![traceopt_ir::Fact::default(); b.inputs.len()];
    let verdict = verify_assuming(&b, &a, &[], &facts, &[], &mut solver()).unwrap();
    assert_eq!(verdict, Verdict::Proved);
}

/// Provenance for every op: AFTER's op k stands for BEFORE's op `map[k]`.
fn each_op(map: &[usize]) -> Vec<Option<usize>> {
    map.iter().map(|&i| Some(i)).collect()
}

#[test]
fn an_op_is_as_defined_as_the_one_it_stands_for_only_behind_the_same_guards() {
    // int_pydiv by zero is undefined; BEFORE checks the divisor first.
    let before =
        "[i0, i1]\ni2 = int_ne(i1, 0)\nguard_true(i2) []\ni3 = int_pydiv(i0, i1)\nfinish(i3)\n";
    let (b, a) = traces(before, before);
    assert_eq!(
        verify_aligned(&b, &a, &each_op(&[0, 1, 2, 3]), &mut solver()).unwrap(),
        Verdict::Proved
    );
    // The division moved above the guard that makes it defined: its
    // provenance names BEFORE's division, but the guard comes too late.
    let after =
        "[i0, i1]\ni3 = int_pydiv(i0, i1)\ni2 = int_ne(i1, 0)\nguard_true(i2) []\nfinish(i3)\n";
    let (b, a) = traces(before, after);
    let verdict = verify_aligned(&b, &a, &each_op(&[2, 0, 1, 3]), &mut solver()).unwrap();
    assert!(
        matches!(verdict, Verdict::Refuted(_) | Verdict::Unreplayed(_)),
        "{verdict:?}"
    );
}

#[test]
fn an_op_is_as_defined_as_the_one_it_stands_for_under_the_guards_before_it() {
    // AFTER divides by i2 where BEFORE divides by i1: the guards before
    // make them one (a peeled loop's body reads a label argument where
    // the loop reads the field the label's facts say it is; the first
    // guard failing, a validator that asked for i2 != 0 wherever i1 != 0
    // found a counterexample the runs do not show).
    let before = "[i0, i1, i2]\ni3 = int_eq(i1, i2)\nguard_true(i3) []\ni4 = int_ne(i1, 0)\n\
        guard_true(i4) []\ni5 = int_pydiv(i0, i1)\nfinish(i5)\n";
    let after = before.replace("int_pydiv(i0, i1)", "int_pydiv(i0, i2)");
    let (b, a) = traces(before, &after);
    assert_eq!(
        verify_aligned(&b, &a, &each_op(&[0, 1, 2, 3, 4, 5]), &mut solver()).unwrap(),
        Verdict::Proved
    );
    // Without the first guard, dividing by i2 is less defined, even
    // where the quotient is not used.
    let before =
        "[i0, i1, i2]\ni4 = int_ne(i1, 0)\nguard_true(i4) []\ni5 = int_pydiv(i0, i1)\nfinish(i5)\n";
    let after = "[i0, i1, i2]\ni4 = int_ne(i1, 0)\nguard_true(i4) []\ni6 = int_pydiv(i0, i2)\n\
        i5 = int_pydiv(i0, i1)\nfinish(i5)\n";
    let (b, a) = traces(before, after);
    match verify_aligned(&b, &a, &each_op(&[0, 1, 2, 2, 3]), &mut solver()).unwrap() {
        Verdict::Refuted(cex) => assert!(cex.difference.contains("less defined"), "{cex}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_guard_that_fails_early_has_observed_no_more_than_the_one_it_stands_for() {
    // AFTER escapes, then tests both conditions in the first guard's
    // place: where the second fails, AFTER has escaped and resumes before
    // the escape, so the interpreter escapes again. Not proved; with the
    // escape after the guard (as BEFORE has it, seen at the later guard
    // only), proved.
    let before = "[i0]\ni1 = int_gt(i0, 0)\nguard_true(i1) []\ni2 = escape_i(i0)\n\
        i3 = int_eq(i0, 7)\nguard_true(i3) []\nescape_n(i2)\nfinish(i0)\n";
    let moved = "[i0]\ni2 = escape_i(i0)\ni1 = int_gt(i0, 0)\ni3 = int_eq(i0, 7)\n\
        i4 = int_and(i1, i3)\nguard_true(i4) []\nescape_n(i2)\nfinish(i0)\n";
    let kept = "[i0]\ni1 = int_gt(i0, 0)\ni3 = int_eq(i0, 7)\ni4 = int_and(i1, i3)\n\
        guard_true(i4) []\ni2 = escape_i(i0)\nescape_n(i2)\nfinish(i0)\n";
    for (after, proved) in [(moved, false), (kept, true)] {
        let (b, a) = traces(before, after);
        let p = provenance(&b, &a, &[0]);
        let verdict = verify_aligned(&b, &a, &p, &mut solver()).unwrap();
        assert_eq!(verdict == Verdict::Proved, proved, "{verdict:?}\n{after}");
    }
}
