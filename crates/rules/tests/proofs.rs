//! Proves every rule of `rules/` with the solver (a cache under the
//! target directory makes re-runs with unchanged rules fast, off in CI
//! and with `PROOF_CACHE=off`), with its variables renamed too, and shows
//! that wrong and impossible rules are caught with useful messages.

mod common;

use std::path::Path;
use std::time::Duration;

use traceopt_rules::prove::{prove_all, prove_rule, Cache, Proof, Verdict};
use traceopt_rules::{load_dir, load_text, sources};
use traceopt_smt::{Solver, SolverKind};

fn rules_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../rules"))
}

fn solver() -> Solver {
    Solver::start(None, Duration::from_secs(60)).expect("an SMT solver (scripts/test installs z3)")
}

/// cvc5 proves these rules several times faster than z3 (27 s against
/// 76 s cold, on two cores); `RULES_SOLVER=z3|cvc5` chooses.
fn rules_solver() -> Option<SolverKind> {
    match std::env::var("RULES_SOLVER") {
        Ok(name) => SolverKind::from_name(&name),
        Err(_) => Solver::start(Some(SolverKind::Cvc5), Duration::from_secs(1))
            .ok()
            .map(|_| SolverKind::Cvc5),
    }
}

/// Every proof must be `Proved`: a wrong, impossible, undecided or
/// skipped (`SORRY_SMT`) rule fails the test.
fn all_proved(what: &str, proofs: &[Proof], started: std::time::Instant) {
    let mut failures = Vec::new();
    let (mut proved, mut cached) = (0, 0);
    for proof in proofs {
        match proof.verdict {
            Verdict::Proved => {
                proved += 1;
                cached += usize::from(proof.cached);
            }
            _ => failures.push(proof.message()),
        }
    }
    eprintln!(
        "{what}: {} rules: {proved} proved ({cached} from the cache), {} not proved, in {:.1}s",
        proofs.len(),
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    let mut slowest: Vec<_> = proofs.iter().filter(|p| p.seconds > 1.0).collect();
    slowest.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    for p in slowest.iter().take(10) {
        eprintln!("  {:.1}s {}", p.seconds, p.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_rule_is_proved() {
    let files = load_dir(rules_dir()).unwrap_or_else(|e| panic!("{e}"));
    let rules = sources(&files);
    let sorry: Vec<&str> = rules
        .iter()
        .filter(|s| s.rule.sorry)
        .map(|s| s.rule.name.as_str())
        .collect();
    assert!(sorry.is_empty(), "SORRY_SMT rules in rules/: {sorry:?}");
    let mut cache = common::cache("rule-proofs.json");
    let started = std::time::Instant::now();
    let proofs = prove_all(
        rules_solver(),
        Duration::from_secs(60),
        2,
        &mut cache,
        &rules,
    )
    .expect("an SMT solver");
    all_proved("rules/", &proofs, started);
    assert!(proofs.len() >= 100, "only {} rules", proofs.len());
}

/// Rule variables named like the prover's own names (`x_lower` for a
/// variable `x`: the parts of its bound) were once the same solver
/// variables, and these wrong rules were proved.
#[test]
fn look_alike_names_are_other_names() {
    let text = "bad_lt: int_lt(x, x_lower)\n    => 0\n\
                bad_le: int_le(x, x_upper)\n    => 1\n\
                bad_and: int_and(x, x_ones)\n    => x_ones\n\
                bad_source: int_sub(__source, __target)\n    => 0\n\
                bad_let: int_add(x, _s0_0)\n    => x\n";
    let files = [common::parse("look-alike.rules", text)];
    for kind in [SolverKind::Z3, SolverKind::Cvc5] {
        for proof in common::prove(kind, &files, "look-alike-proofs.json") {
            assert!(
                matches!(proof.verdict, Verdict::Wrong(_)),
                "{kind:?}: {}",
                proof.message()
            );
        }
    }
}

/// Every rule of `rules/` with its variables renamed to look-alike names
/// (`common::rename`) is proved, as it is under its own names.
#[test]
fn every_rule_is_proved_under_look_alike_names() {
    let files = load_dir(rules_dir()).unwrap_or_else(|e| panic!("{e}"));
    let renamed: Vec<String> = sources(&files)
        .iter()
        .map(|s| common::rename(s.rule))
        .collect();
    let renamed = [common::parse("renamed.rules", &renamed.join("\n"))];
    let kind = rules_solver().unwrap_or(SolverKind::Z3);
    let started = std::time::Instant::now();
    let proofs = common::prove(kind, &renamed, "renamed-rule-proofs.json");
    all_proved("rules/ renamed", &proofs, started);
    assert_eq!(proofs.len(), sources(&files).len());
}

#[test]
fn renaming_keeps_the_rule_and_changes_its_names() {
    let text = "r: int_add(int_sub(y, C1), C2)\n    check y.lower > 0 and C2 != 0\n    C = C2 - C1\n    split C == 1 << k for k in 0..3\n    => int_add(y, C)\n";
    let file = common::parse("r.rules", text);
    assert_eq!(
        common::rename(&file.rules[0]),
        "r: int_add(int_sub(x, C), C_lower)\n    check x.lower > 0 and C_lower != 0\n    x_upper = C_lower - C\n    split x_upper == 1 << __target for __target in 0..3\n    => int_add(x, x_upper)"
    );
}

fn verdict_of(text: &str) -> Verdict {
    let file = load_text("test.rules", text).unwrap_or_else(|e| panic!("{e:?}"));
    prove_rule(&mut solver(), &file.rules[0], &file.scopes[0])
}

#[test]
fn a_wrong_rule_gets_a_counterexample() {
    let Verdict::Wrong(cex) = verdict_of("mul_is_add: int_mul(a, b)\n    => int_add(a, b)\n")
    else {
        panic!("mul_is_add was not refuted");
    };
    for part in [
        "a:",
        "b:",
        "pattern int_mul(a, b) has value",
        "BUT target int_add(a, b)",
    ] {
        assert!(cex.contains(part), "{part} missing in:\n{cex}");
    }
}

#[test]
fn a_wrong_rule_respects_its_checks() {
    let text = "mul_is_add: int_mul(a, b)\n    check a.known_gt_const(1) and b.known_gt_const(2)\n    => int_add(a, b)\n";
    let Verdict::Wrong(cex) = verdict_of(text) else {
        panic!("refuted expected");
    };
    let value = |name: &str| -> i64 {
        let line = cex
            .lines()
            .find(|l| l.trim().starts_with(&format!("{name}:")))
            .unwrap();
        line.split(':').nth(1).unwrap().trim().parse().unwrap()
    };
    assert!(value("a") > 1 && value("b") > 2, "{cex}");
}

#[test]
fn an_impossible_rule_is_reported() {
    let text = "never_applies: int_is_true(x)\n    check x.known_lt_const(0) and x.known_gt_const(0)\n    => x\n";
    assert!(matches!(verdict_of(text), Verdict::NeverApplies(_)));
}

#[test]
fn overflow_rules_are_checked_for_overflow() {
    // x + 1 may overflow: dropping the guard is wrong.
    let text = "add_ovf_plain: int_add_ovf(x, 1)\n    => int_add(x, 1)\n";
    assert!(matches!(verdict_of(text), Verdict::Wrong(_)));
    // Keeping the check is right.
    let text = "add_ovf_swap: int_add_ovf(x, 1)\n    => int_sub_ovf(x, -1)\n";
    assert_eq!(verdict_of(text), Verdict::Proved);
}

#[test]
fn undefined_targets_are_caught() {
    // x << 64 is undefined, x * 0 is not: the target must be defined
    // wherever the pattern is.
    let text = "bad_shift: int_mul(x, 0)\n    => int_lshift(x, 64)\n";
    assert!(matches!(verdict_of(text), Verdict::Wrong(_)));
}

#[test]
fn the_cache_answers_only_for_the_rule_it_proved() {
    // A correct rule is proved and cached; a wrong one, met next with the
    // same cache, must still be refuted (not taken for the proved one),
    // and the correct one is then answered from the cache.
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cache-test-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let right = load_text("right.rules", "plus_zero: int_add(x, 0)\n    => x\n").unwrap();
    let wrong = load_text("wrong.rules", "plus_one: int_add(x, 1)\n    => x\n").unwrap();
    let timeout = Duration::from_secs(60);
    let mut cache = Cache::open(Some(&path));
    let first = prove_all(
        None,
        timeout,
        1,
        &mut cache,
        &sources(std::slice::from_ref(&right)),
    )
    .expect("an SMT solver");
    assert_eq!(
        (&first[0].verdict, first[0].cached),
        (&Verdict::Proved, false)
    );
    let mut cache = Cache::open(Some(&path));
    let files = [right, wrong];
    let second = prove_all(None, timeout, 1, &mut cache, &sources(&files)).unwrap();
    assert_eq!(
        (&second[0].verdict, second[0].cached),
        (&Verdict::Proved, true)
    );
    assert!(
        matches!(second[1].verdict, Verdict::Wrong(_)) && !second[1].cached,
        "{}",
        second[1].message()
    );
    let _ = std::fs::remove_file(&path);
}
