//! traceopt's peephole rule language.
//!
//! Rules live in `rules/*.rules` (see `syntax` for the form). This crate
//! parses them (`syntax`), type-checks them (`check`), compiles them into
//! a decision-tree matcher in Rust (`compile`, called from the optimizer's
//! `build.rs`, no solver needed), checks that each lowers the cost of what
//! it replaces (`cost`), and proves each correct with an SMT solver
//! (`prove`, run by the tests and `traceopt rules prove`). The generated
//! matcher talks to the optimizer through `runtime` and computes checks
//! with `facts`, the same code the proofs run.

pub mod check;
pub mod compile;
pub mod cost;
pub mod facts;
pub mod prove;
pub mod runtime;
pub mod syntax;

use std::path::{Path, PathBuf};

pub use check::Scope;
pub use syntax::{Loc, Pattern, Rule};
use traceopt_ir::ParseError;

/// The rules of one file, parsed and checked.
pub struct RuleFile {
    pub path: String,
    pub rules: Vec<Rule>,
    pub scopes: Vec<Scope>,
}

/// Parses and checks one rules file.
pub fn load_text(path: &str, text: &str) -> Result<RuleFile, Vec<ParseError>> {
    let rules = syntax::parse(path, text).map_err(|e| vec![e])?;
    let scopes = check::check(path, &rules)?;
    Ok(RuleFile {
        path: path.to_string(),
        rules,
        scopes,
    })
}

/// The `.rules` files of a directory, sorted by name.
pub fn rule_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .collect();
    files.sort();
    Ok(files)
}

/// Loads every rules file of `dir`; errors are rendered as text.
pub fn load_dir(dir: &Path) -> Result<Vec<RuleFile>, String> {
    let files = rule_files(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for file in files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        match load_text(&name, &text) {
            Ok(f) => out.push(f),
            Err(es) => errors.extend(es.iter().map(|e| e.to_string())),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors.join("\n"))
    }
}

/// Every rule of the files with its file and scope, in order.
pub fn sources(files: &[RuleFile]) -> Vec<compile::Source<'_>> {
    files
        .iter()
        .flat_map(|f| {
            f.rules
                .iter()
                .zip(&f.scopes)
                .map(|(rule, scope)| compile::Source {
                    file: &f.path,
                    rule,
                    scope,
                })
        })
        .collect()
}

/// The rules the optimizer may be built with, and those it may not: the
/// ones marked `SORRY_SMT`, whose proof is skipped.
pub fn proof_ready(
    rules: Vec<compile::Source<'_>>,
) -> (Vec<compile::Source<'_>>, Vec<compile::Source<'_>>) {
    rules.into_iter().partition(|s| !s.rule.sorry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorry_rules_are_left_out_of_the_matcher() {
        let text =
            "kept: int_add(x, 0)\n    => x\nunproved: int_sub(x, 0)\n    SORRY_SMT\n    => x\n";
        let file = load_text("t.rules", text).unwrap();
        let (ready, unproved) = proof_ready(sources(std::slice::from_ref(&file)));
        let names = |s: &[compile::Source]| -> Vec<String> {
            s.iter().map(|s| s.rule.name.clone()).collect()
        };
        assert_eq!(names(&ready), ["kept"]);
        assert_eq!(names(&unproved), ["unproved"]);
        let code = compile::generate(&ready);
        assert!(code.contains("\"kept\"") && !code.contains("unproved"));
    }
}
