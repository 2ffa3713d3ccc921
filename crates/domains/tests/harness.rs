//! Tests of the proof harness itself: a wrong transfer function is
//! refuted (so are deliberately weakened versions of real ones, each
//! wrong by a little), a proof under contradictory assumptions fails as
//! vacuous, a proof the solver cannot finish in time fails, a group short
//! of its count fails, and the cache answers only for the very query it
//! proved, and never in CI or when a cold run is asked for.

mod common;

use std::time::Duration;

use common::*;
use traceopt_domains::symbolic::Sym;
use traceopt_domains::{IntBound, KnownBits, Word};
use traceopt_ir::Opcode;
use traceopt_smt::{Fun, Term};

type Bits2<W> = fn(&[KnownBits<W>]) -> KnownBits<W>;

/// The known-bits `int_and`, or a wrong version of it (`or`).
fn and_proofs(wrong: bool) -> Suite {
    let mut s = Suite::new();
    s.group("and", 2);
    let (sym, conc): (Bits2<Sym>, Bits2<i64>) = if wrong {
        (|a| a[0].or(a[1]), |a| a[0].or(a[1]))
    } else {
        (|a| a[0].and(a[1]), |a| a[0].and(a[1]))
    };
    forward::<Bits>(&mut s, Opcode::IntAnd, sym, conc);
    s
}

fn config() -> Config {
    Config::plain(Duration::from_secs(60))
}

#[test]
fn a_sound_transfer_function_is_proved() {
    let report = and_proofs(false).run(&config());
    assert_eq!(report.failures(), Vec::<String>::new());
    assert_eq!((report.proved(), report.cached()), (2, 0));
}

#[test]
fn a_wrong_transfer_function_is_refuted() {
    let report = and_proofs(true).run(&config());
    let failures = report.failures().join("\n");
    // Soundness fails with a counterexample re-run through the i64 code;
    // "constants in, constant out" still holds for `or`, which leaves the
    // group one short.
    assert!(
        failures.contains("and: bits int_and is sound: NOT SOUND"),
        "{failures}"
    );
    assert!(failures.contains("gives"), "{failures}");
    assert!(failures.contains("and: 1 of 2 facts proved"), "{failures}");
    assert_eq!(report.proved(), 1);
}

// Real transfer functions, each made wrong by a little.

/// `int_add` with an upper bound one too small.
fn add_upper_one_short<W: Word>(a: IntBound<W>, b: IntBound<W>) -> IntBound<W> {
    let r = a.add_raw(b);
    IntBound {
        upper: r.upper.sub(W::lit(1)),
        ..r
    }
}

/// `int_and` claiming the lowest bit known (zero) without reason.
fn and_claims_bit_0<W: Word>(a: KnownBits<W>, b: KnownBits<W>) -> KnownBits<W> {
    let r = a.and(b);
    let low = W::lit(1);
    KnownBits::new(r.ones & !low, r.unknowns & !low)
}

/// `uint_rshift` shifting one place too far.
fn lshr_off_by_one<W: Word>(a: KnownBits<W>, b: KnownBits<W>) -> KnownBits<W> {
    a.lshr(b.add(KnownBits::constant(W::lit(1))))
}

/// `int_rshift` with the count's bounds one too large.
fn ashr_count_off_by_one<W: Word>(a: IntBound<W>, b: IntBound<W>) -> IntBound<W> {
    a.rshift_raw(b.add_raw(IntBound::constant(W::lit(1))))
}

/// `int_mul` with an upper bound one too small.
fn mul_upper_one_short<W: Word>(a: IntBound<W>, b: IntBound<W>) -> IntBound<W> {
    let r = a.mul_raw(b);
    IntBound {
        upper: r.upper.sub(W::lit(1)),
        ..r
    }
}

/// `int_pymod` with a lower bound one too large.
fn pymod_lower_one_high<W: Word>(a: IntBound<W>, b: IntBound<W>) -> IntBound<W> {
    let r = a.pymod_raw(b);
    IntBound {
        lower: r.lower.add(W::lit(1)),
        ..r
    }
}

/// `int_pydiv` with an upper bound one too small.
fn pydiv_upper_one_short<W: Word>(a: IntBound<W>, b: IntBound<W>) -> IntBound<W> {
    let r = a.pydiv_raw(b);
    IntBound {
        upper: r.upper.sub(W::lit(1)),
        ..r
    }
}

/// The failures of the proof named `proof` of a (weakened) transfer
/// function of `D` for `op` at `width`.
fn failures<D: Domain>(
    proof: &str,
    op: Opcode,
    width: u32,
    sym: Transfer<D, Sym>,
    conc: Transfer<D, i64>,
) -> String {
    failures_of::<D>(proof, op, width, false, sym, conc)
}

/// `failures`, the proof by lemmas when `lemmas`.
fn failures_of<D: Domain>(
    proof: &str,
    op: Opcode,
    width: u32,
    lemmas: bool,
    sym: Transfer<D, Sym>,
    conc: Transfer<D, i64>,
) -> String {
    let mut s = Suite::new();
    s.group("weakened", 1);
    s.set_width(width);
    s.set_lemmas(lemmas);
    forward::<D>(&mut s, op, sym, conc);
    let mut config = config();
    config.only = Some(proof.into());
    s.run(&config).failures().join("\n")
}

#[test]
fn weakened_transfer_functions_are_refuted() {
    let cases = [
        (
            "bound int_add is sound (interval)",
            failures::<Bound>(
                "bound int_add is sound (interval)",
                Opcode::IntAdd,
                64,
                |a| add_upper_one_short(a[0], a[1]),
                |a| add_upper_one_short(a[0], a[1]),
            ),
        ),
        (
            "bits int_and is sound",
            failures::<Bits>(
                "bits int_and is sound",
                Opcode::IntAnd,
                64,
                |a| and_claims_bit_0(a[0], a[1]),
                |a| and_claims_bit_0(a[0], a[1]),
            ),
        ),
        (
            "bits uint_rshift is sound",
            failures::<Bits>(
                "bits uint_rshift is sound",
                Opcode::UintRshift,
                64,
                |a| lshr_off_by_one(a[0], a[1]),
                |a| lshr_off_by_one(a[0], a[1]),
            ),
        ),
        (
            "bound int_rshift is sound (interval)",
            failures::<Bound>(
                "bound int_rshift is sound (interval)",
                Opcode::IntRshift,
                64,
                |a| ashr_count_off_by_one(a[0], a[1]),
                |a| ashr_count_off_by_one(a[0], a[1]),
            ),
        ),
        (
            "bound int_mul is sound (interval) at width 16",
            failures::<Bound>(
                "bound int_mul is sound (interval) at width 16",
                Opcode::IntMul,
                16,
                |a| mul_upper_one_short(a[0], a[1]),
                |a| mul_upper_one_short(a[0], a[1]),
            ),
        ),
        (
            "bound int_pymod is sound (interval) at width 16",
            failures::<Bound>(
                "bound int_pymod is sound (interval) at width 16",
                Opcode::IntPymod,
                16,
                |a| pymod_lower_one_high(a[0], a[1]),
                |a| pymod_lower_one_high(a[0], a[1]),
            ),
        ),
    ];
    for (proof, failures) in cases {
        assert!(
            failures.contains(&format!("weakened: {proof}: NOT SOUND")),
            "{proof}:\n{failures}"
        );
    }
}

/// By lemmas at 64 bits, a weakened product, quotient or remainder bound
/// has a counterexample (under the lemmas, which real ones satisfy).
#[test]
fn weakened_functions_are_refuted_by_lemmas() {
    type F = Transfer<Bound, Sym>;
    type C = Transfer<Bound, i64>;
    let cases: [(&str, Opcode, F, C); 3] = [
        (
            "bound int_mul is sound (interval)",
            Opcode::IntMul,
            |a| mul_upper_one_short(a[0], a[1]),
            |a| mul_upper_one_short(a[0], a[1]),
        ),
        (
            "bound int_pydiv is sound (interval)",
            Opcode::IntPydiv,
            |a| pydiv_upper_one_short(a[0], a[1]),
            |a| pydiv_upper_one_short(a[0], a[1]),
        ),
        (
            "bound int_pymod is sound (interval)",
            Opcode::IntPymod,
            |a| pymod_lower_one_high(a[0], a[1]),
            |a| pymod_lower_one_high(a[0], a[1]),
        ),
    ];
    for (proof, op, sym, conc) in cases {
        let failures = failures_of::<Bound>(proof, op, 64, true, sym, conc);
        assert!(
            failures.contains(&format!(
                "weakened: {proof}: NOT PROVED: a counterexample under the lemmas"
            )),
            "{proof}:\n{failures}"
        );
    }
}

/// A wrong lemma over the integers (a product monotonic whatever the
/// other factor's sign) is refuted.
#[test]
fn a_wrong_integer_lemma_is_refuted() {
    let mut s = Suite::new();
    s.group("wrong lemma", 1);
    s.add("products grow with a factor", |p| {
        let (u, v1, v2) = (p.int("u"), p.int("v1"), p.int("v2"));
        let le = |a: &Term, b: &Term| Term::app(Fun::IntLe, &[a.clone(), b.clone()]);
        let mul = |a: &Term, b: &Term| Term::app(Fun::IntMul, &[a.clone(), b.clone()]);
        let goal = le(&v1, &v2).implies(&le(&mul(&u, &v1), &mul(&u, &v2)));
        p.prove(bit(goal), |_| String::new());
    });
    let failures = s.run(&config()).failures().join("\n");
    assert!(
        failures.contains("wrong lemma: products grow with a factor: NOT SOUND"),
        "{failures}"
    );
}

/// A proof whose assumptions contradict each other.
fn vacuous_proofs() -> Suite {
    let mut s = Suite::new();
    s.group("vacuous", 1);
    s.add("x < x proves anything", |p| {
        let x = p.word("x");
        p.assume(x.slt(x));
        p.prove(x.eq(lit(1)), |m| format!("x = {}", val(m, "x")))
    });
    s
}

#[test]
fn a_proof_under_contradictory_assumptions_is_a_failure() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("harness-vacuous-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut config = config();
    config.cache = Some(path.clone());
    // Asked every time: a vacuous proof is never cached.
    for _ in 0..2 {
        let report = vacuous_proofs().run(&config);
        let failures = report.failures().join("\n");
        assert!(
            failures.contains(
                "vacuous: x < x proves anything: VACUOUS: the assumptions are contradictory"
            ),
            "{failures}"
        );
        assert!(
            failures.contains("vacuous: 0 of 1 facts proved"),
            "{failures}"
        );
        assert_eq!((report.proved(), report.cached()), (0, 0));
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_timeout_is_a_failure() {
    // The 64-bit known-bits product: far beyond either solver in a second.
    let mut s = Suite::new();
    s.group("mul", 1);
    forward::<Bits>(
        &mut s,
        Opcode::IntMul,
        |a| a[0].mul(a[1]),
        |a| a[0].mul(a[1]),
    );
    let mut config = Config::plain(Duration::from_secs(1));
    config.only = Some("is sound".into());
    let report = s.run(&config);
    let failures = report.failures().join("\n");
    assert!(
        failures.contains("mul: bits int_mul is sound: UNKNOWN"),
        "{failures}"
    );
    for solver in &config.solvers {
        assert!(failures.contains(solver.0.binary()), "{failures}");
    }
    assert_eq!(report.proved(), 0);
}

#[test]
fn the_cache_answers_only_for_the_same_query() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("harness-cache-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut config = config();
    config.cache = Some(path.clone());
    let first = and_proofs(false).run(&config);
    let second = and_proofs(false).run(&config);
    // Same names, different code: asked again, and refuted.
    let wrong = and_proofs(true).run(&config);
    config.cache = None;
    let cold = and_proofs(false).run(&config);
    let _ = std::fs::remove_file(&path);
    assert_eq!((first.proved(), first.cached()), (2, 0));
    assert_eq!((second.proved(), second.cached()), (2, 2));
    assert!(second.proofs.iter().all(|p| p.seconds == 0.0));
    assert_eq!((wrong.proved(), wrong.cached()), (1, 0));
    assert!(wrong.failures().join("\n").contains("NOT SOUND"));
    assert_eq!((cold.proved(), cold.cached()), (2, 0));
}

#[test]
fn the_cache_is_off_in_ci_and_for_cold_runs() {
    assert!(cache_enabled(None, None));
    assert!(cache_enabled(Some("false"), Some("on")));
    assert!(!cache_enabled(Some("true"), None));
    assert!(!cache_enabled(Some("1"), None));
    assert!(!cache_enabled(None, Some("off")));
    assert!(!cache_enabled(Some("true"), Some("on")));
}

#[test]
fn the_times_table_reads_back() {
    use traceopt_smt::SolverKind::{Bitwuzla, Cvc5, Yices, Z3};
    let table = "# comment\n    1.50        -     0.90     2.00  g: a b\n       -     0.20        -        -  g: c\n";
    let times = Times::parse(table);
    let all = [Z3, Cvc5, Bitwuzla, Yices];
    assert_eq!(times.estimate("g: a b", &all), Some(0.9));
    assert_eq!(times.estimate("g: a b", &[Z3, Cvc5]), Some(1.5));
    assert_eq!(times.estimate("g: c", &all), Some(0.2));
    assert_eq!(times.estimate("g: d", &all), None);
    assert_eq!(times.first_choice("g: a b", &all), Bitwuzla);
    assert_eq!(times.first_choice("g: a b", &[Z3, Cvc5]), Z3);
    assert_eq!(times.first_choice("g: c", &all), Cvc5);
    assert_eq!(times.first_choice("g: d", &[Cvc5, Z3]), Cvc5);
}
