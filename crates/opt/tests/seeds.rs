//! The seeds' examples as before/after traces: each output is compared
//! with the expected text and proved equivalent to its input.
//!
//! Seed 000: the miscompilations of PyPy's bounds analysis must not
//! happen here (the second guard stays), and their correct variants are
//! optimized. Seed 003: known-bits examples.

use std::time::Duration;
use traceopt_ir::{parse_trace, print_trace};
use traceopt_opt::{optimize, Passes};
use traceopt_smt::Solver;
use traceopt_verify::{verify_aligned, Verdict};

/// Optimizes `before`, expects `expected` (as printed), and proves it.
fn optimizes_to(before: &str, expected: &str) {
    let input = parse_trace(before, "before").unwrap();
    let result = optimize(&input, Passes::default()).unwrap();
    let got = print_trace(&result.trace);
    let want = print_trace(&parse_trace(expected, "expected").unwrap());
    assert_eq!(got, want, "optimizing\n{before}");
    let mut solver = Solver::start(None, Duration::from_secs(20)).expect("an SMT solver");
    let verdict = verify_aligned(&input, &result.trace, &result.provenance, &mut solver).unwrap();
    assert_eq!(verdict, Verdict::Proved, "{before}\ngave\n{got}");
}

#[test]
fn wrapping_add_keeps_the_second_guard() {
    // int_add(x, 10) < 15 says nothing about x: the sum may wrap.
    let before = "[i0]\ni1 = int_add(i0, 10)\ni2 = int_lt(i1, 15)\nguard_true(i2) []\n\
                  i3 = int_lt(i0, 6)\nguard_true(i3) []\njump(i0)\n";
    optimizes_to(before, before);
}

#[test]
fn overflow_checked_add_removes_the_second_guard() {
    let before = "[i0]\ni1 = int_add_ovf(i0, 10)\nguard_no_overflow() []\ni2 = int_lt(i1, 15)\n\
                  guard_true(i2) []\ni3 = int_lt(i0, 6)\nguard_true(i3) []\njump(i0)\n";
    let after = "[i0]\ni1 = int_add_ovf(i0, 10)\nguard_no_overflow() []\ni2 = int_lt(i1, 15)\n\
                 guard_true(i2) []\njump(i0)\n";
    optimizes_to(before, after);
}

#[test]
fn an_add_that_overflowed_keeps_the_second_guard() {
    // After guard_overflow the sum wrapped: int_add_ovf(x, 10) < 15
    // then says nothing about x.
    let before = "[i0]\ni1 = int_add_ovf(i0, 10)\nguard_overflow() []\ni2 = int_lt(i1, 15)\n\
                  guard_true(i2) []\ni3 = int_lt(i0, 6)\nguard_true(i3) []\njump(i0)\n";
    optimizes_to(before, before);
    // Its twin without the second guard is refuted (x = MAXINT).
    let twin = before.replace("i3 = int_lt(i0, 6)\nguard_true(i3) []\n", "");
    let input = parse_trace(before, "before").unwrap();
    let twin = parse_trace(&twin, "twin").unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(20)).expect("an SMT solver");
    let verdict = traceopt_verify::verify(&input, &twin, &mut solver).unwrap();
    assert!(matches!(verdict, Verdict::Refuted(_)), "{verdict:?}");
}

#[test]
fn negation_of_minint_keeps_the_second_guard() {
    // -x < 0 does not imply x > 0: -MININT == MININT.
    let before = "[i0]\ni1 = int_neg(i0)\ni2 = int_lt(i1, 0)\nguard_true(i2) []\n\
                  i3 = int_gt(i0, 0)\nguard_true(i3) []\nfinish(0)\n";
    optimizes_to(before, before);
}

#[test]
fn overflow_checked_negation_removes_the_second_guard() {
    let before = "[i0]\ni1 = int_sub_ovf(0, i0)\nguard_no_overflow() []\ni2 = int_lt(i1, 0)\n\
                  guard_true(i2) []\ni3 = int_gt(i0, 0)\nguard_true(i3) []\nfinish(0)\n";
    let after = "[i0]\ni1 = int_sub_ovf(0, i0)\nguard_no_overflow() []\ni2 = int_lt(i1, 0)\n\
                 guard_true(i2) []\nfinish(0)\n";
    optimizes_to(before, after);
}

#[test]
fn twelve_times_x_does_not_make_x_one() {
    let before = "[i0]\ni1 = int_mul(i0, 12)\nguard_value(i1, 12) []\nfinish(i0)\n";
    optimizes_to(before, before);
}

#[test]
fn or_one_then_and_one_is_one() {
    // Seed 003: the low bit of x | 1 is known.
    let before = "[i0]\ni1 = int_or(i0, 1)\ni2 = int_and(i1, 1)\nfinish(i2)\n";
    optimizes_to(before, "[i0]\nfinish(1)\n");
}

#[test]
fn alignment_check_folds() {
    // Seed 003: a pointer made 8-aligned stays aligned after adding 16.
    let before = "[i0]\ni1 = int_and(i0, -8)\ni2 = int_add(i1, 16)\ni3 = int_and(i2, 7)\n\
                  i4 = int_is_zero(i3)\nguard_true(i4) []\nfinish(i2)\n";
    let after = "[i0]\ni1 = int_and(i0, -8)\ni2 = int_add(i1, 16)\nfinish(i2)\n";
    optimizes_to(before, after);
}

#[test]
fn redundant_masks_go() {
    // Seed 003: masking a byte that is already a byte.
    let before =
        "[i0]\ni1 = int_and(i0, 255)\ni2 = int_and(i1, 255)\ni3 = int_and(i2, 65535)\nfinish(i3)\n";
    let after = "[i0]\ni1 = int_and(i0, 255)\nfinish(i1)\n";
    optimizes_to(before, after);
}

#[test]
fn guard_value_makes_later_uses_constant() {
    let before = "[i0, i1]\nguard_value(i0, 5) []\ni2 = int_add(i0, i1)\ni3 = int_mul(i0, 2)\n\
                  finish(i3)\n";
    let after = "[i0, i1]\nguard_value(i0, 5) []\nfinish(10)\n";
    optimizes_to(before, after);
}

#[test]
fn guards_teach_bounds_that_remove_later_guards() {
    let before =
        "[i0]\ni1 = int_lt(i0, 10)\nguard_true(i1) []\ni2 = int_ge(i0, 0)\nguard_true(i2) []\n\
                  i3 = int_lt(i0, 20)\nguard_true(i3) []\ni4 = int_and(i0, 15)\njump(i4)\n";
    let after =
        "[i0]\ni1 = int_lt(i0, 10)\nguard_true(i1) []\ni2 = int_ge(i0, 0)\nguard_true(i2) []\n\
                 jump(i0)\n";
    optimizes_to(before, after);
}

#[test]
fn common_subexpressions_are_shared_in_both_orders() {
    let before =
        "[i0, i1]\ni2 = int_add(i0, i1)\ni3 = int_add(i1, i0)\ni4 = int_sub(i2, i3)\nfinish(i4)\n";
    optimizes_to(before, "[i0, i1]\nfinish(0)\n");
}

#[test]
fn order_is_transitive() {
    // Beyond PyPy (seed 003's mining): x < y and y <= z give x < z.
    let before = "[i0, i1, i2]\ni3 = int_lt(i0, i1)\nguard_true(i3) []\ni4 = int_le(i1, i2)\n\
                  guard_true(i4) []\ni5 = int_lt(i0, i2)\nguard_true(i5) []\ni6 = int_ge(i0, i2)\n\
                  finish(i6)\n";
    let after = "[i0, i1, i2]\ni3 = int_lt(i0, i1)\nguard_true(i3) []\ni4 = int_le(i1, i2)\n\
                 guard_true(i4) []\nfinish(0)\n";
    optimizes_to(before, after);
}

#[test]
fn values_in_strict_order_are_not_equal() {
    // As `traceopt mine` found in list_sort: x < y, then y == x.
    let before = "[i0, i1]\ni2 = int_ge(i0, i1)\nguard_false(i2) []\ni3 = int_eq(i1, i0)\n\
                  i4 = int_ne(i0, i1)\nfinish(i3, i4)\n";
    let after = "[i0, i1]\ni2 = int_ge(i0, i1)\nguard_false(i2) []\nfinish(0, 1)\n";
    optimizes_to(before, after);
    // Only x <= y: they may be equal, and both tests stay.
    let weak = "[i0, i1]\ni2 = int_gt(i0, i1)\nguard_false(i2) []\ni3 = int_eq(i1, i0)\n\
                i4 = int_ne(i0, i1)\nfinish(i3, i4)\n";
    optimizes_to(weak, weak);
}

#[test]
fn a_constant_added_without_wrapping_orders_the_sum() {
    // x >= 1, so x - 1 cannot wrap and is below x (either order of the
    // addition, and through the order's other facts); the guard that
    // says so goes. Where x may be the least word, x - 1 wraps to the
    // greatest: the test stays.
    let before = "[i0, i9]\ni5 = int_ge(i0, 1)\nguard_true(i5) []\ni1 = int_add(-1, i0)\n\
                  i2 = int_ge(i1, i0)\nguard_false(i2) []\ni3 = int_le(i0, i9)\nguard_true(i3) []\n\
                  i4 = int_lt(i1, i9)\nfinish(i4)\n";
    let after = "[i0, i9]\ni5 = int_ge(i0, 1)\nguard_true(i5) []\n\
                 i3 = int_le(i0, i9)\nguard_true(i3) []\nfinish(1)\n";
    optimizes_to(before, after);
    let unbounded = "[i0]\ni1 = int_sub(i0, 1)\ni2 = int_ge(i1, i0)\nfinish(i2)\n";
    optimizes_to(unbounded, unbounded);
}

#[test]
fn a_strict_path_wins_over_a_weak_one_met_first() {
    // a <= x is learned first, then a < y <= x: x is reached weakly
    // before it is reached strictly, and the strict path must still
    // count, so x <= b gives a < b.
    let before = "[i0, i1, i2, i3]\ni4 = int_le(i0, i1)\nguard_true(i4) []\n\
                  i5 = int_lt(i0, i2)\nguard_true(i5) []\ni6 = int_le(i2, i1)\nguard_true(i6) []\n\
                  i7 = int_le(i1, i3)\nguard_true(i7) []\ni8 = int_lt(i0, i3)\nfinish(i8)\n";
    let after = "[i0, i1, i2, i3]\ni4 = int_le(i0, i1)\nguard_true(i4) []\n\
                 i5 = int_lt(i0, i2)\nguard_true(i5) []\ni6 = int_le(i2, i1)\nguard_true(i6) []\n\
                 i7 = int_le(i1, i3)\nguard_true(i7) []\nfinish(1)\n";
    optimizes_to(before, after);
}

#[test]
fn a_failed_unsigned_le_is_the_swapped_unsigned_lt() {
    // not (a <=u b) is b <u a.
    let before = "[i0, i1]\ni2 = uint_le(i0, i1)\nguard_false(i2) []\ni3 = uint_lt(i1, i0)\n\
                  jump(i3)\n";
    let after = "[i0, i1]\ni2 = uint_le(i0, i1)\nguard_false(i2) []\njump(1)\n";
    optimizes_to(before, after);
}

#[test]
fn a_passed_truth_test_answers_its_opposite() {
    let before =
        "[i0]\ni1 = int_is_true(i0)\nguard_true(i1) []\ni2 = int_is_zero(i0)\nguard_false(i2) []\n\
                  i3 = int_ne(i0, 0)\nfinish(i3)\n";
    let after = "[i0]\ni1 = int_is_true(i0)\nguard_true(i1) []\nfinish(1)\n";
    optimizes_to(before, after);
}

#[test]
fn subtracting_a_constant_is_adding_its_negation() {
    let before =
        "[i0]\ni1 = int_add(i0, 1)\ni2 = int_sub(i0, -1)\ni3 = int_sub(i0, i1)\njump(i2, i3)\n";
    let after = "[i0]\ni1 = int_add(i0, 1)\njump(i1, -1)\n";
    optimizes_to(before, after);
}

#[test]
fn reusing_an_overflow_checked_add_drops_the_second_check() {
    let before =
        "[i0, i1]\ni2 = int_add_ovf(i0, i1)\nguard_no_overflow() []\ni3 = int_add_ovf(i1, i0)\n\
                  guard_no_overflow() []\njump(i2, i3)\n";
    let after = "[i0, i1]\ni2 = int_add_ovf(i0, i1)\nguard_no_overflow() []\njump(i2, i2)\n";
    optimizes_to(before, after);
}

#[test]
fn a_subtraction_that_cannot_overflow_loses_its_check() {
    // Both operands are bytes: the difference fits, the op becomes
    // plain and its guard goes (as for add and mul).
    let before = "[i0, i1]\ni2 = int_and(i0, 255)\ni3 = int_and(i1, 255)\n\
                  i4 = int_sub_ovf(i2, i3)\nguard_no_overflow() []\nfinish(i4)\n";
    let after = "[i0, i1]\ni2 = int_and(i0, 255)\ni3 = int_and(i1, 255)\n\
                 i4 = int_sub(i2, i3)\nfinish(i4)\n";
    optimizes_to(before, after);
}
