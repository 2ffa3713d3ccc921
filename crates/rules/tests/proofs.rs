//! Proves every rule of `rules/` with the solver (a cache under the
//! target directory makes re-runs with unchanged rules fast), and shows
//! that wrong and impossible rules are caught with useful messages.

use std::path::Path;
use std::time::Duration;

use traceopt_rules::prove::{prove_all, prove_rule, Cache, Verdict};
use traceopt_rules::{load_dir, load_text, sources};
use traceopt_smt::{Solver, SolverKind};

fn rules_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../rules"))
}

fn solver() -> Solver {
    Solver::start(None, Duration::from_secs(60)).expect("an SMT solver (scripts/test installs z3)")
}

#[test]
fn every_rule_is_proved() {
    let files = load_dir(rules_dir()).unwrap_or_else(|e| panic!("{e}"));
    let rules = sources(&files);
    let cache_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rule-proofs.json");
    let mut cache = Cache::open(Some(&cache_path));
    let started = std::time::Instant::now();
    // cvc5 proves these rules several times faster than z3 (27 s against
    // 76 s cold, on two cores); `RULES_SOLVER=z3|cvc5` chooses.
    let kind = match std::env::var("RULES_SOLVER") {
        Ok(name) => SolverKind::from_name(&name),
        Err(_) => Solver::start(Some(SolverKind::Cvc5), Duration::from_secs(1))
            .ok()
            .map(|_| SolverKind::Cvc5),
    };
    let proofs =
        prove_all(kind, Duration::from_secs(60), 2, &mut cache, &rules).expect("an SMT solver");
    let mut failures = Vec::new();
    let (mut proved, mut cached, mut sorry) = (0, 0, 0);
    for proof in &proofs {
        match proof.verdict {
            Verdict::Proved => {
                proved += 1;
                cached += usize::from(proof.cached);
            }
            Verdict::Skipped => sorry += 1,
            _ => failures.push(proof.message()),
        }
    }
    eprintln!(
        "{} rules: {proved} proved ({cached} from the cache), {sorry} SORRY_SMT, {} failed, in {:.1}s",
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
    assert!(proofs.len() >= 100, "only {} rules", proofs.len());
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
