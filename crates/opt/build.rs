//! Compiles `rules/*.rules` (at the workspace root) into the matcher
//! `$OUT_DIR/rules.rs`. A rule that does not parse or type-check fails
//! the build with its location; rules that do not lower the cost without
//! a reason, and overlapping rules whose order matters, are reported. A
//! rule marked `SORRY_SMT` (proof skipped) is left out, with a warning.

use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("../../rules");
    println!("cargo:rerun-if-changed={}", dir.display());
    let files = match traceopt_rules::load_dir(&dir) {
        Ok(files) => files,
        Err(errors) => {
            eprintln!("{errors}");
            std::process::exit(1);
        }
    };
    for file in traceopt_rules::rule_files(&dir).unwrap_or_default() {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    let (sources, unproved) = traceopt_rules::proof_ready(traceopt_rules::sources(&files));
    for s in &unproved {
        println!(
            "cargo:warning={}:{}: rule '{}' is marked SORRY_SMT: left out of the optimizer until it is proved",
            s.file, s.rule.loc.line, s.rule.name
        );
    }
    let mut problems = Vec::new();
    for (file, rule, from, to) in traceopt_rules::cost::non_decreasing(&sources) {
        problems.push(format!(
            "{file}:{}: rule '{}' does not lower the cost ({from} -> {to}); give a reason with `cost \"...\"`",
            rule.loc.line, rule.name
        ));
    }
    if !problems.is_empty() {
        eprintln!("{}", problems.join("\n"));
        std::process::exit(1);
    }
    for (a, b) in traceopt_rules::cost::overlaps(&sources) {
        println!(
            "cargo:warning=rules '{}' (line {}) and '{}' (line {}) overlap with equal priority: give one a `priority`",
            a.name, a.loc.line, b.name, b.loc.line
        );
    }
    let code = traceopt_rules::compile::generate(&sources);
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("rules.rs");
    std::fs::write(&out, code).expect("writing the generated matcher");
}
