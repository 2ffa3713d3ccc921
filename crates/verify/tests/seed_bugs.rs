//! The miscompilations of seed 000 as (before, wrong after) pairs, each
//! refuted with a counterexample that replays, and the correct
//! optimizations next to them, proved.

use std::time::Duration;
use traceopt_ir::parse_trace;
use traceopt_smt::Solver;
use traceopt_verify::{verify, Counterexample, Verdict};

fn solver() -> Solver {
    Solver::start(None, Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("{e}\n(the test command installs z3: see README)"))
}

fn check(before: &str, after: &str) -> Verdict {
    let before = parse_trace(before, "before").unwrap();
    let after = parse_trace(after, "after").unwrap();
    verify(&before, &after, &mut solver()).unwrap()
}

fn refuted(before: &str, after: &str) -> Counterexample {
    match check(before, after) {
        Verdict::Refuted(cex) => cex,
        other => panic!("expected a counterexample, got {other:?}"),
    }
}

fn proved(before: &str, after: &str) {
    assert_eq!(check(before, after), Verdict::Proved);
}

fn input(cex: &Counterexample, name: &str) -> i64 {
    cex.inputs.iter().find(|(n, _)| n == name).unwrap().1
}

#[test]
fn wrapping_int_add_bound() {
    // int_add(x, 10) < 15 does not imply x < 6 when the addition wraps.
    let before = "[i0]\ni1 = int_add(i0, 10)\ni2 = int_lt(i1, 15)\nguard_true(i2) []\n\
                  i3 = int_lt(i0, 6)\nguard_true(i3) []\njump(0)\n";
    let wrong = "[i0]\ni1 = int_add(i0, 10)\ni2 = int_lt(i1, 15)\nguard_true(i2) []\njump(0)\n";
    let cex = refuted(before, wrong);
    assert!(input(&cex, "i0") > i64::MAX - 10, "{cex}");
    assert!(
        cex.difference.contains("BEFORE fails guard_true at line 6"),
        "{cex}"
    );
    // With an overflow check the second guard is implied.
    let before = "[i0]\ni1 = int_add_ovf(i0, 10)\nguard_no_overflow() []\ni2 = int_lt(i1, 15)\nguard_true(i2) []\n\
                  i3 = int_lt(i0, 6)\nguard_true(i3) []\njump(0)\n";
    let right = "[i0]\ni1 = int_add_ovf(i0, 10)\nguard_no_overflow() []\ni2 = int_lt(i1, 15)\nguard_true(i2) []\njump(0)\n";
    proved(before, right);
}

#[test]
fn int_neg_of_minint() {
    // -x < 0 does not imply x > 0: -MININT == MININT.
    for neg in ["i1 = int_neg(i0)", "i1 = int_sub(0, i0)"] {
        let before = format!("[i0]\n{neg}\ni2 = int_lt(i1, 0)\nguard_true(i2) []\ni3 = int_gt(i0, 0)\nguard_true(i3) []\nfinish(0)\n");
        let wrong = format!("[i0]\n{neg}\ni2 = int_lt(i1, 0)\nguard_true(i2) []\nfinish(0)\n");
        let cex = refuted(&before, &wrong);
        assert_eq!(input(&cex, "i0"), i64::MIN, "{cex}");
    }
    let before = "[i0]\ni1 = int_sub_ovf(0, i0)\nguard_no_overflow() []\ni2 = int_lt(i1, 0)\nguard_true(i2) []\n\
                  i3 = int_gt(i0, 0)\nguard_true(i3) []\nfinish(0)\n";
    let right = "[i0]\ni1 = int_sub_ovf(0, i0)\nguard_no_overflow() []\ni2 = int_lt(i1, 0)\nguard_true(i2) []\nfinish(0)\n";
    proved(before, right);
}

#[test]
fn twelve_equals_x_times_twelve() {
    // 12 == x * 12 does not imply x == 1 when the product wraps.
    let before = "[i0]\ni1 = int_mul(i0, 12)\nguard_value(i1, 12) []\nfinish(i0)\n";
    let wrong = "[i0]\ni1 = int_mul(i0, 12)\nguard_value(i1, 12) []\nfinish(1)\n";
    let cex = refuted(before, wrong);
    let x = input(&cex, "i0");
    assert_ne!(x, 1);
    assert_eq!(x.wrapping_mul(12), 12, "{cex}");
    assert!(
        cex.difference.contains("finish argument 1 differs"),
        "{cex}"
    );
    let before = "[i0]\ni1 = int_mul_ovf(i0, 12)\nguard_no_overflow() []\nguard_value(i1, 12) []\nfinish(i0)\n";
    let right = "[i0]\ni1 = int_mul_ovf(i0, 12)\nguard_no_overflow() []\nguard_value(i1, 12) []\nfinish(1)\n";
    proved(before, right);
}

#[test]
fn lshift_of_a_large_constant() {
    // With 0 <= x <= 15, 0x1000000000000000 << x can still be 0 (x >= 4).
    let range = |hi: i64| {
        format!("[i0]\ni1 = int_ge(i0, 0)\nguard_true(i1) []\ni2 = int_le(i0, {hi})\nguard_true(i2) []\n\
                 i3 = int_lshift(1152921504606846976, i0)\n")
    };
    let before = format!(
        "{}i4 = int_eq(i3, 0)\nguard_false(i4) []\nfinish(i3)\n",
        range(15)
    );
    let wrong = format!("{}finish(i3)\n", range(15));
    let cex = refuted(&before, &wrong);
    assert!((4..=15).contains(&input(&cex, "i0")), "{cex}");
    let before = format!(
        "{}i4 = int_eq(i3, 0)\nguard_false(i4) []\nfinish(i3)\n",
        range(3)
    );
    let right = format!("{}finish(i3)\n", range(3));
    proved(&before, &right);
}

#[test]
fn sub_ovf_of_a_wrapping_add() {
    let before = "[i0, i1]\ni2 = int_add(i0, i1)\ni3 = int_sub_ovf(i2, i1)\nguard_no_overflow() []\nfinish(i3)\n";
    let wrong = "[i0, i1]\nfinish(i0)\n";
    let cex = refuted(before, wrong);
    let (a, b) = (input(&cex, "i0"), input(&cex, "i1"));
    assert!(a.wrapping_add(b).checked_sub(b).is_none(), "{cex}");
    assert!(
        cex.difference.contains("BEFORE fails guard_no_overflow"),
        "{cex}"
    );
    let before = "[i0, i1]\ni2 = int_add_ovf(i0, i1)\nguard_no_overflow() []\ni3 = int_sub(i2, i1)\nfinish(i3)\n";
    let right = "[i0, i1]\ni2 = int_add_ovf(i0, i1)\nguard_no_overflow() []\nfinish(i0)\n";
    proved(before, right);
}

#[test]
fn less_defined_is_refuted_more_defined_is_fine() {
    // An optimized trace may be more defined than its input, never less.
    let shifty = "[i0]\ni1 = int_lshift(1, i0)\nfinish(0)\n";
    let plain = "[i0]\nfinish(0)\n";
    proved(shifty, plain);
    let cex = refuted(plain, shifty);
    assert!(!(0..64).contains(&input(&cex, "i0")), "{cex}");
    assert!(cex.difference.contains("AFTER is undefined"), "{cex}");
}

#[test]
fn escapes_are_outputs() {
    let before = "[i0]\ni1 = int_or(i0, 1)\ni2 = int_and(i1, 1)\nescape_n(i2)\njump(i0)\n";
    proved(before, "[i0]\ni1 = int_or(i0, 1)\nescape_n(1)\njump(i0)\n");
    let cex = refuted(before, "[i0]\nescape_n(0)\njump(i0)\n");
    assert!(
        cex.difference.contains("escape #1 argument 1 differs"),
        "{cex}"
    );
    // An escape's result is the same unknown value in both traces.
    proved(
        "[i0]\ni1 = escape_i(i0)\ni2 = int_add(i1, 0)\nfinish(i2)\n",
        "[i0]\ni1 = escape_i(i0)\nfinish(i1)\n",
    );
    refuted(
        "[i0]\ni1 = escape_i(i0)\nfinish(i1)\n",
        "[i0]\ni1 = escape_i(i0)\nfinish(i0)\n",
    );
}

#[test]
fn unsupported_ops_are_named() {
    let before = parse_trace("[p0, p1]\ni9 = gc_load_i(p0, 8, 8)\nfinish()\n", "b").unwrap();
    let err = verify(&before, &before, &mut solver()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "BEFORE:2: gc_load_i is not supported by the validator yet"
    );
}
