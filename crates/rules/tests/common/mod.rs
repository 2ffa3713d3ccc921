//! Helpers of the rule proof tests: the proof cache setting, proving a
//! rules text with a given solver, and renaming a rule's variables.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use traceopt_rules::prove::{prove_all, Cache, Proof};
use traceopt_rules::syntax::is_constant_var;
use traceopt_rules::{load_text, sources, Pattern, Rule, RuleFile};
use traceopt_smt::SolverKind;

/// The proof cache under the target directory, or none in CI (`CI=true`)
/// and when a cold run is asked for (`PROOF_CACHE=off`), as the domain
/// proofs do.
pub fn cache(name: &str) -> Cache {
    let ci = std::env::var("CI").ok();
    let setting = std::env::var("PROOF_CACHE").ok();
    let in_ci = ci.is_some_and(|v| !matches!(v.as_str(), "" | "0" | "false"));
    let off = in_ci || matches!(setting.as_deref(), Some("off" | "0" | "false"));
    let path: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    Cache::open((!off).then_some(path.as_path()))
}

pub fn parse(path: &str, text: &str) -> RuleFile {
    load_text(path, text).unwrap_or_else(|e| {
        let errors: Vec<String> = e.iter().map(|e| e.to_string()).collect();
        panic!("{}", errors.join("\n"))
    })
}

/// Proves every rule of `files` with `kind` on two threads.
pub fn prove(kind: SolverKind, files: &[RuleFile], cache_name: &str) -> Vec<Proof> {
    let mut cache = cache(cache_name);
    let rules = sources(files);
    prove_all(Some(kind), Duration::from_secs(60), 2, &mut cache, &rules)
        .unwrap_or_else(|e| panic!("{kind:?}: {e} (scripts/test installs z3 and cvc5)"))
}

/// Names that imitate what the prover, the printer and the validator
/// invent (the parts of a bound of a variable named `x`, the old
/// definitions of both sides and `let` names, trace inputs), and SMT-LIB
/// words: a rule must mean the same with its variables so named.
const LOOK_ALIKES: &[&str] = &[
    "x",
    "x_lower",
    "__source",
    "x_ones",
    "_s0_0",
    "bvadd",
    "x_unknowns",
    "let",
    "in0",
];
/// The same for `C` variables (constants have no bound parts).
const CONSTANT_LOOK_ALIKES: &[&str] = &["C", "C_lower", "C__target", "C_s0_1"];
/// For assigned names and case variables.
const OTHER_LOOK_ALIKES: &[&str] = &["x_upper", "__target", "_s0_1", "ite", "esc0"];

/// The variables of a rule, in order: pattern variables, then assigned
/// names and case variables.
fn variables(rule: &Rule) -> (Vec<String>, Vec<String>) {
    let mut vars: Vec<String> = Vec::new();
    rule.pattern.walk(&mut |p| {
        if let Pattern::Var(name, _) = p {
            if !vars.contains(name) {
                vars.push(name.clone());
            }
        }
    });
    let mut others = Vec::new();
    for stmt in &rule.body {
        match stmt {
            traceopt_rules::syntax::Stmt::Assign(name, _, _) => others.push(name.clone()),
            traceopt_rules::syntax::Stmt::Split(split) => others.push(split.var.clone()),
            traceopt_rules::syntax::Stmt::Check(_) => {}
        }
    }
    (vars, others)
}

/// `rule`'s text with every variable renamed to a look-alike name (a `C`
/// variable to a `C` name, so that it keeps its meaning).
pub fn rename(rule: &Rule) -> String {
    let (vars, others) = variables(rule);
    let (mut plain, mut constant) = (LOOK_ALIKES.iter(), CONSTANT_LOOK_ALIKES.iter());
    let mut map: Vec<(String, &str)> = Vec::new();
    for var in vars {
        let new = if is_constant_var(&var) {
            constant.next()
        } else {
            plain.next()
        };
        map.push((var, new.expect("enough look-alike names")));
    }
    for (var, new) in others.into_iter().zip(OTHER_LOOK_ALIKES) {
        map.push((var, new));
    }
    // Identifiers outside comments and strings, not after a `.` (methods
    // and attributes), and not the rule's name.
    let text = &rule.text;
    let mut out = String::new();
    let mut chars = text.char_indices().peekable();
    let mut seen_name = false;
    let mut last = ' ';
    while let Some((i, c)) = chars.next() {
        if c == '#' || c == '"' {
            let end = if c == '#' { '\n' } else { '"' };
            out.push(c);
            for (_, d) in chars.by_ref() {
                out.push(d);
                if d == end {
                    break;
                }
            }
            last = end;
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !(d.is_ascii_alphanumeric() || d == '_') {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            let word = &text[i..end];
            let is_name = !c.is_ascii_digit() && last != '.';
            let renamed = map.iter().find(|(from, _)| from == word);
            match renamed {
                Some((_, to)) if is_name && seen_name => out.push_str(to),
                _ => out.push_str(word),
            }
            seen_name |= is_name;
            last = 'a';
            continue;
        }
        out.push(c);
        last = c;
    }
    out
}
