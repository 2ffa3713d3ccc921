//! The prover must be able to fail: `wrong.rules` holds wrong rules of
//! the kinds that bite in practice, each of which z3 and cvc5 must refute
//! with a counterexample; `correct.rules` holds correct rules that are
//! not in `rules/`, each of which both must prove. Split hints that are
//! right only inside their cases are among the wrong ones.

mod common;

use traceopt_rules::prove::{Proof, Verdict};
use traceopt_smt::SolverKind;

const WRONG: &str = include_str!("wrong.rules");
const CORRECT: &str = include_str!("correct.rules");

fn check(kind: SolverKind, text: &str, file: &str, expect_wrong: bool) -> Vec<String> {
    let files = [common::parse(file, text)];
    let proofs: Vec<Proof> = common::prove(kind, &files, "regression-proofs.json");
    let mut slow: Vec<&Proof> = proofs.iter().filter(|p| p.seconds > 2.0).collect();
    slow.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    for p in slow {
        eprintln!("  {kind:?} {:.1}s {}", p.seconds, p.name);
    }
    let count = proofs.len();
    assert!(
        count >= if expect_wrong { 30 } else { 15 },
        "{file}: {count}"
    );
    proofs
        .into_iter()
        .filter(|p| match p.verdict {
            Verdict::Wrong(_) => !expect_wrong,
            Verdict::Proved => expect_wrong,
            _ => true,
        })
        .map(|p| format!("{kind:?}: {}", p.message()))
        .collect()
}

#[test]
fn every_wrong_rule_is_refuted_by_both_solvers() {
    let mut failures = check(SolverKind::Z3, WRONG, "wrong.rules", true);
    failures.extend(check(SolverKind::Cvc5, WRONG, "wrong.rules", true));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_correct_rule_is_proved_by_both_solvers() {
    let mut failures = check(SolverKind::Z3, CORRECT, "correct.rules", false);
    failures.extend(check(SolverKind::Cvc5, CORRECT, "correct.rules", false));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
