//! The facts the validator gives the solver about single ops
//! (`Encoded::lemma`) let it prove what it could not in minutes.

use std::time::Duration;
use traceopt_ir::parse_trace;
use traceopt_smt::Solver;
use traceopt_verify::{verify, Verdict};

/// Two values hashed as PyPy hashes a tuple: each made not -1 twice
/// (`x - (x == -1)`, as a recording does when a hash is hashed again),
/// then mixed by multiplications. `{fix0}` and `{fix1}` name the values
/// the mixing takes.
const HASHES: &str = "[i0, i1]
i2 = int_eq(i0, -1)
i3 = int_sub(i0, i2)
i4 = int_eq(i3, -1)
i5 = int_sub(i3, i4)
i6 = int_mul({fix0}, -4417276706812531889)
i7 = int_add(i6, 2870177450012600261)
i8 = int_lshift(i7, 31)
i9 = uint_rshift(i7, 33)
i10 = int_or(i8, i9)
i11 = int_mul(i10, -7046029288634856825)
i12 = int_eq(i1, -1)
i13 = int_sub(i1, i12)
i14 = int_eq(i13, -1)
i15 = int_sub(i13, i14)
i16 = int_mul({fix1}, -4417276706812531889)
i17 = int_add(i11, i16)
i18 = int_lshift(i17, 31)
i19 = uint_rshift(i17, 33)
i20 = int_or(i18, i19)
i21 = int_mul(i20, -7046029288634856825)
finish(i21)
";

fn hashes(fix0: &str, fix1: &str) -> String {
    HASHES.replace("{fix0}", fix0).replace("{fix1}", fix1)
}

fn check(before: &str, after: &str) -> Verdict {
    let before = parse_trace(before, "before").unwrap();
    let after = parse_trace(after, "after").unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(5))
        .unwrap_or_else(|e| panic!("{e}\n(the test command installs z3: see README)"));
    verify(&before, &after, &mut solver).unwrap()
}

/// The second test of each hash is 0, so the mixing may take the value
/// made once. Without the lemma that `x - (x == -1)` is not -1, z3 does
/// not prove this in a minute; with it, at once.
#[test]
fn a_hash_made_not_minus_one_twice_is_made_so_once() {
    let before = hashes("i5", "i15");
    let after = hashes("i3", "i13");
    assert_eq!(check(&before, &after), Verdict::Proved);
}

/// Its wrong twin, which mixes an input that may be -1, is refuted.
#[test]
fn a_hash_not_made_not_minus_one_differs() {
    let before = hashes("i5", "i15");
    let after = hashes("i3", "i1");
    assert!(
        matches!(check(&before, &after), Verdict::Refuted(_)),
        "i1 = -1 gives another hash"
    );
}
