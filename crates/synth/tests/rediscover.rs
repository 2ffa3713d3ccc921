//! Synthesis finds our own rules again when they are taken out of the
//! rule set, and what it proposes is proved and written so that the rule
//! language reads it back.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use traceopt_ir::Opcode;
use traceopt_opt::RULES;
use traceopt_rules::compile::variants;
use traceopt_rules::prove::show_pattern;
use traceopt_rules::syntax::is_constant_var;
use traceopt_synth::{synthesize, Options};

/// A pattern's text with its variables renamed in order of appearance
/// (`v1, v2` and constants `C1, C2`), so that two spellings compare.
fn canonical(text: &str) -> String {
    let mut names: Vec<(String, String)> = Vec::new();
    let mut out = String::new();
    let mut word = String::new();
    let mut flush = |word: &mut String, next: char, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let is_name = word.starts_with(|c: char| c.is_ascii_alphabetic()) && next != '(';
        if is_name {
            let known = names
                .iter()
                .find(|(from, _)| from == word)
                .map(|(_, to)| to.clone());
            let renamed = known.unwrap_or_else(|| {
                let kind = if is_constant_var(word) { "C" } else { "v" };
                let count = names.iter().filter(|(_, to)| to.starts_with(kind)).count();
                let to = format!("{kind}{}", count + 1);
                names.push((word.clone(), to.clone()));
                to
            });
            out.push_str(&renamed);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || (c == '-' && word.is_empty()) {
            word.push(c);
        } else {
            flush(&mut word, c, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, ' ', &mut out);
    out
}

#[test]
fn canonical_names_ignore_spelling() {
    assert_eq!(
        canonical("int_add(int_sub(a, C), a)"),
        "int_add(int_sub(v1, C1), v1)"
    );
    assert_eq!(canonical("int_add(x, -1)"), "int_add(v1, -1)");
}

/// The rules of these roots that synthesis is expected to find again:
/// their patterns are of its shapes and their targets of its forms.
const TAKEN_OUT: [&str; 25] = [
    "add_zero",
    "add_sub_cancel",
    "add_neg_cancel",
    "add_invert_cancel",
    "add_reassoc_consts",
    "add_sub_x_c_c",
    "add_invert_one",
    "sub_zero",
    "sub_x_x",
    "sub_add",
    "sub_x_sub_x_y",
    "sub_x_add_x",
    "sub_add_consts",
    "sub_sub_x_c_c",
    "sub_c_add_x_c",
    "or_zero",
    "or_x_x",
    "or_or_repeat",
    "or_or_consts",
    "xor_zero",
    "xor_x_x",
    "xor_cancel",
    "xor_xor_consts",
    "eq_x_x",
    "lt_x_x",
];

#[test]
fn rules_taken_out_of_the_rule_set_are_found_again() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../rules"));
    let files = traceopt_rules::load_dir(dir).unwrap();
    let patterns: Vec<(String, HashSet<String>)> = (files.iter())
        .flat_map(|f| &f.rules)
        .filter(|r| TAKEN_OUT.contains(&r.name.as_str()))
        .map(|r| {
            let spellings = variants(&r.pattern)
                .into_iter()
                .map(|p| canonical(&show_pattern(&p)));
            (r.name.clone(), spellings.collect())
        })
        .collect();
    assert_eq!(
        patterns.len(),
        TAKEN_OUT.len(),
        "every rule taken out exists"
    );
    let removed = RULES.iter().map(|r| TAKEN_OUT.contains(&r.name)).collect();
    let roots = vec![
        Opcode::IntAdd,
        Opcode::IntSub,
        Opcode::IntOr,
        Opcode::IntXor,
        Opcode::IntEq,
        Opcode::IntLt,
    ];
    let options = Options { roots, removed };
    // The rules taken out whose pattern synthesis proposes.
    let proposed_again = |options: &Options| {
        let (found, summary) = synthesize(options, None, Duration::from_secs(20)).unwrap();
        let proposed: HashSet<String> =
            found.iter().map(|f| canonical(&f.pattern.text())).collect();
        let again: Vec<&str> = (patterns.iter())
            .filter(|(_, spellings)| !spellings.is_disjoint(&proposed))
            .map(|(name, _)| name.as_str())
            .collect();
        (again, found, summary)
    };
    let (again, found, summary) = proposed_again(&options);
    eprintln!("found again: {again:?}\n{summary:?}");
    assert!(
        again.len() >= 20,
        "only {} found again: {again:?}",
        again.len()
    );
    // Every proposal reads back as a rule of the rule language.
    for f in &found {
        let file = traceopt_rules::load_text("synth.rules", &f.text);
        assert!(file.is_ok(), "{}", f.text);
    }
    // With the rules in, none of these patterns is proposed.
    let kept = Options {
        roots: options.roots.clone(),
        removed: Vec::new(),
    };
    let (still, _, _) = proposed_again(&kept);
    assert!(
        still.is_empty(),
        "proposed though in the rule set: {still:?}"
    );
}
