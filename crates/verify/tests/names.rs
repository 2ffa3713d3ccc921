//! Traces whose value names imitate the names the validator invents for
//! the solver (`in0` for input 0, `esc0`, `b_v3`, `a_guard0`; only names
//! starting with `i` are int names, so `i_v3` and the like) are decided as
//! their twins with plain names are: trace names are user names, which
//! the solver never confuses with invented ones (`traceopt_smt::names`).

use std::time::Duration;
use traceopt_ir::parse_trace;
use traceopt_smt::Solver;
use traceopt_verify::{verify, Verdict};

/// Look-alikes for `i0`, `i1`, ...: input 0 is named like the validator's
/// input 1 and the other way round.
const LOOK_ALIKES: &[&str] = &["in1", "in0", "i_v3", "i_guard0", "in2", "i_v2", "in3"];

/// `text` with every int name `iN` renamed to `LOOK_ALIKES[N]`.
fn rename(text: &str) -> String {
    let mut out = String::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let digits = bytes[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let ends_word = bytes
            .get(i + 1 + digits)
            .map_or(true, |b| !(b.is_ascii_alphanumeric() || *b == b'_'));
        if bytes[i] == b'i' && starts_word && digits > 0 && ends_word {
            let n: usize = text[i + 1..i + 1 + digits].parse().unwrap();
            out.push_str(LOOK_ALIKES[n]);
            i += 1 + digits;
        } else {
            out.push(bytes[i] as char);
            i += 1;
        }
    }
    out
}

fn check(before: &str, after: &str) -> Verdict {
    let before = parse_trace(before, "before").unwrap();
    let after = parse_trace(after, "after").unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(10)).expect("an SMT solver");
    verify(&before, &after, &mut solver).unwrap()
}

/// Pairs from the seed bugs (`seed_bugs.rs`): refuted, then proved.
const PAIRS: &[(&str, &str)] = &[
    (
        "[i0, i1]\ni2 = int_add(i0, 10)\ni3 = int_lt(i2, 15)\nguard_true(i3) []\n\
         i4 = int_lt(i0, 6)\nguard_true(i4) []\nescape_n(i1)\njump(0)\n",
        "[i0, i1]\ni2 = int_add(i0, 10)\ni3 = int_lt(i2, 15)\nguard_true(i3) []\nescape_n(i1)\njump(0)\n",
    ),
    (
        "[i0, i1]\ni2 = int_add_ovf(i0, 10)\nguard_no_overflow() []\ni3 = int_lt(i2, 15)\nguard_true(i3) []\n\
         i4 = int_lt(i0, 6)\nguard_true(i4) []\nescape_n(i1)\njump(0)\n",
        "[i0, i1]\ni2 = int_add_ovf(i0, 10)\nguard_no_overflow() []\ni3 = int_lt(i2, 15)\nguard_true(i3) []\nescape_n(i1)\njump(0)\n",
    ),
    (
        "[i0, i1]\ni2 = escape_i()\ni3 = int_neg(i0)\ni4 = int_lt(i3, 0)\nguard_true(i4) []\n\
         i5 = int_gt(i0, 0)\nguard_true(i5) []\nfinish(i2)\n",
        "[i0, i1]\ni2 = escape_i()\ni3 = int_neg(i0)\ni4 = int_lt(i3, 0)\nguard_true(i4) []\nfinish(i2)\n",
    ),
];

#[test]
fn look_alike_trace_names_are_decided_as_their_twins() {
    assert_eq!(
        rename("[i0, i1]\ni2 = int_add(i0, i1)\n"),
        "[in1, in0]\ni_v3 = int_add(in1, in0)\n"
    );
    let mut refuted = 0;
    for (before, after) in PAIRS {
        let plain = check(before, after);
        let renamed = check(&rename(before), &rename(after));
        match (&plain, &renamed) {
            (Verdict::Proved, Verdict::Proved) => {}
            (Verdict::Refuted(a), Verdict::Refuted(b)) => {
                refuted += 1;
                // The same values for the same inputs, under their names.
                let renamed_a: Vec<(String, i64)> =
                    a.inputs.iter().map(|(n, v)| (rename(n), *v)).collect();
                assert_eq!(renamed_a, b.inputs);
                assert_eq!(a.escapes, b.escapes);
            }
            _ => panic!("{before}\n{after}\nplain: {plain:?}\nrenamed: {renamed:?}"),
        }
    }
    assert_eq!(refuted, 2);
}
