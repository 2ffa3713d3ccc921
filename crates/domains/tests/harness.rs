//! Tests of the proof harness itself: a wrong transfer function is
//! refuted, a proof the solver cannot finish in time fails, a group short
//! of its count fails, and the cache answers only for the very query it
//! proved, and never in CI or when a cold run is asked for.

mod common;

use std::time::Duration;

use common::*;
use traceopt_domains::symbolic::Sym;
use traceopt_domains::KnownBits;
use traceopt_ir::Opcode;

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
    let table = "# comment\n    1.50        -  g: a b\n       -     0.20  g: c\n";
    let times = Times::parse(table);
    assert_eq!(times.estimate("g: a b"), Some(1.5));
    assert_eq!(times.estimate("g: c"), Some(0.2));
    assert_eq!(times.estimate("g: d"), None);
    assert_eq!(times.first_choice("g: a b"), traceopt_smt::SolverKind::Z3);
    assert_eq!(times.first_choice("g: c"), traceopt_smt::SolverKind::Cvc5);
}
