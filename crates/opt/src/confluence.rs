//! The confluence report: critical pairs of the rules, and whether they
//! rejoin.
//!
//! Two rules overlap when the pattern of one unifies with an op inside
//! (or at the root of) the pattern of the other: some expression can be
//! rewritten either way. For each such critical pair we build that
//! expression as a trace (plain variables become inputs, `C` variables
//! sample constants) and let the optimizer rewrite it twice: once with
//! the inner rule switched off until a rule fires (so the outer one
//! applies first), once with the outer rule switched off so. After the
//! first step every rule normalizes what is left. The pair rejoins when
//! both runs end with the same expression.
//!
//! This is a report, not a proof: the sample constants may not meet a
//! rule's checks (then the pair is "not exercised"), and another rule may
//! fire first and spoil the choice of order (also "not exercised"). Every
//! rule is proved correct on its own, so pairs that do not rejoin give
//! equal values in different forms: they are missed optimizations, not
//! bugs.

use std::collections::HashMap;
use std::fmt::Write as _;

use traceopt_ir::{parse_trace, Arg, Const, Flags, Trace};
use traceopt_rules::compile::{variants, Source};
use traceopt_rules::prove::show_pattern;
use traceopt_rules::syntax::{is_constant_var, Pattern};

use crate::driver::{optimize_without, Passes};
use crate::RULES;

/// How a critical pair came out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Joins,
    /// The two normal forms.
    Differs(String, String),
    /// Neither sample of constants let both rules apply.
    NotExercised,
}

#[derive(Clone, Debug)]
pub struct CriticalPair {
    /// The rule applied at the root, and the one applied inside.
    pub outer: &'static str,
    pub inner: &'static str,
    /// The overlapping expression.
    pub overlap: String,
    pub outcome: Outcome,
}

type Subst = HashMap<String, Pattern>;

fn resolve(p: &Pattern, s: &Subst) -> Pattern {
    match p {
        Pattern::Var(name, _) => match s.get(name) {
            Some(bound) => resolve(bound, s),
            None => p.clone(),
        },
        Pattern::Op(op, args, loc) => {
            Pattern::Op(*op, args.iter().map(|a| resolve(a, s)).collect(), *loc)
        }
        Pattern::Const(..) => p.clone(),
    }
}

fn occurs(var: &str, p: &Pattern) -> bool {
    let mut found = false;
    p.walk(&mut |q| found |= matches!(q, Pattern::Var(n, _) if n == var));
    found
}

/// Robinson unification; `C` variables only stand for constants.
fn unify(a: &Pattern, b: &Pattern, s: &mut Subst) -> bool {
    let (a, b) = (resolve(a, s), resolve(b, s));
    let plain = |p: &Pattern| matches!(p, Pattern::Var(n, _) if !is_constant_var(n));
    let constant_like = |p: &Pattern| matches!(p, Pattern::Var(..) | Pattern::Const(..));
    match (&a, &b) {
        (Pattern::Var(x, _), Pattern::Var(y, _)) if x == y => true,
        (Pattern::Var(x, _), _) if plain(&a) => bind(x, &b, s),
        (_, Pattern::Var(y, _)) if plain(&b) => bind(y, &a, s),
        // What is left of variables are `C` variables.
        (Pattern::Var(x, _), _) if constant_like(&b) => bind(x, &b, s),
        (_, Pattern::Var(y, _)) if constant_like(&a) => bind(y, &a, s),
        (Pattern::Const(x, _), Pattern::Const(y, _)) => x == y,
        (Pattern::Op(f, xs, _), Pattern::Op(g, ys, _)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| unify(x, y, s))
        }
        _ => false,
    }
}

fn bind(var: &str, value: &Pattern, s: &mut Subst) -> bool {
    if occurs(var, value) {
        return false;
    }
    s.insert(var.to_string(), value.clone());
    true
}

fn rename(p: &Pattern, suffix: &str) -> Pattern {
    match p {
        Pattern::Var(name, loc) => Pattern::Var(format!("{name}_{suffix}"), *loc),
        Pattern::Op(op, args, loc) => {
            Pattern::Op(*op, args.iter().map(|a| rename(a, suffix)).collect(), *loc)
        }
        Pattern::Const(..) => p.clone(),
    }
}

/// The op subterms of `p` with their paths (root first).
fn positions(p: &Pattern, path: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, Pattern)>) {
    if let Pattern::Op(_, args, _) = p {
        out.push((path.clone(), p.clone()));
        for (i, arg) in args.iter().enumerate() {
            path.push(i);
            positions(arg, path, out);
            path.pop();
        }
    }
}

/// Every critical pair of `rules`: (outer rule, inner rule, overlap).
pub fn critical_pairs(rules: &[Source]) -> Vec<(usize, usize, Pattern)> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (a, outer) in rules.iter().enumerate() {
        let outer_pattern = rename(&outer.rule.pattern, "a");
        let mut subterms = Vec::new();
        positions(&outer_pattern, &mut Vec::new(), &mut subterms);
        for (b, inner) in rules.iter().enumerate() {
            for (path, sub) in &subterms {
                if a == b && path.is_empty() {
                    continue;
                }
                for variant in variants(&rename(&inner.rule.pattern, "b")) {
                    let mut s = Subst::new();
                    if unify(sub, &variant, &mut s) {
                        let overlap = resolve(&outer_pattern, &s);
                        if seen.insert((a, b, show_pattern(&overlap))) {
                            out.push((a, b, overlap));
                        }
                    }
                }
            }
        }
    }
    out
}

/// A trace computing `p`: inputs for the plain variables, `constants` for
/// the `C` variables (in order of appearance).
fn trace_of(p: &Pattern, constants: &[i64]) -> Option<Trace> {
    let mut vars = Vec::new();
    let mut cvars = Vec::new();
    p.walk(&mut |q| {
        if let Pattern::Var(name, _) = q {
            let list = if is_constant_var(name) {
                &mut cvars
            } else {
                &mut vars
            };
            if !list.contains(name) {
                list.push(name.clone());
            }
        }
    });
    let mut text = format!(
        "[{}]\n",
        (0..vars.len())
            .map(|i| format!("i{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut fresh = vars.len();
    let root = emit(p, &vars, &cvars, constants, &mut text, &mut fresh)?;
    let _ = writeln!(text, "finish({root})");
    parse_trace(&text, "overlap").ok()
}

fn emit(
    p: &Pattern,
    vars: &[String],
    cvars: &[String],
    constants: &[i64],
    text: &mut String,
    fresh: &mut usize,
) -> Option<String> {
    Some(match p {
        Pattern::Const(v, _) => v.to_string(),
        Pattern::Var(name, _) if is_constant_var(name) => constants
            .get(cvars.iter().position(|c| c == name)?)?
            .to_string(),
        Pattern::Var(name, _) => format!("i{}", vars.iter().position(|v| v == name)?),
        Pattern::Op(op, args, _) => {
            let args: Option<Vec<String>> = args
                .iter()
                .map(|a| emit(a, vars, cvars, constants, text, fresh))
                .collect();
            let name = format!("i{fresh}");
            *fresh += 1;
            let _ = writeln!(text, "{name} = {}({})", op.name(), args?.join(", "));
            if op.has(Flags::OVF) {
                let _ = writeln!(text, "guard_no_overflow() []");
            }
            name
        }
    })
}

/// The expression the trace's `finish` computes, with inputs by name
/// (arguments of commutative ops in a fixed order).
fn final_expression(trace: &Trace) -> String {
    fn show(trace: &Trace, arg: Arg) -> String {
        match arg {
            Arg::Const(c) => match trace.constant(c) {
                Const::Int(v) => v.to_string(),
                other => format!("{other:?}"),
            },
            Arg::Value(v) => match trace.op_index(v) {
                None => trace.name(v).to_string(),
                Some(i) => {
                    let op = &trace.ops[i];
                    let mut args: Vec<String> = op.args.iter().map(|&a| show(trace, a)).collect();
                    if op.opcode.has(Flags::COMM) {
                        args.sort();
                    }
                    format!("{}({})", op.opcode.name(), args.join(", "))
                }
            },
        }
    }
    match trace.ops.last() {
        Some(op) if !op.args.is_empty() => show(trace, op.args[0]),
        _ => "?".into(),
    }
}

/// Samples for the `C` variables, tried in turn.
const SAMPLES: &[[i64; 4]] = &[
    [3, 5, 7, 11],
    [4, 8, 2, 16],
    [1, 2, 3, 4],
    [-3, 5, -7, 9],
    [0, 1, 2, 3],
    [12, 10, 6, 3],
];

/// Runs the overlap with one rule switched off; the normal form if the
/// other rule fired.
fn normal_form(trace: &Trace, off: usize, must_fire: usize) -> Option<String> {
    let mut disabled = vec![false; RULES.len()];
    disabled[off] = true;
    let result = optimize_without(trace, Passes::default(), &disabled).ok()?;
    (result.rule_counts[must_fire] > 0).then(|| final_expression(&result.trace))
}

/// The confluence report over `rules` (in `RULES` order).
pub fn report(rules: &[Source]) -> Vec<CriticalPair> {
    let index: Vec<Option<usize>> = rules
        .iter()
        .map(|s| RULES.iter().position(|r| r.name == s.rule.name))
        .collect();
    let mut out = Vec::new();
    for (a, b, overlap) in critical_pairs(rules) {
        let (Some(ra), Some(rb)) = (index[a], index[b]) else {
            continue;
        };
        let mut outcome = Outcome::NotExercised;
        for sample in SAMPLES {
            let Some(trace) = trace_of(&overlap, sample) else {
                continue;
            };
            let outer_first = normal_form(&trace, rb, ra);
            let inner_first = normal_form(&trace, ra, rb);
            if let (Some(x), Some(y)) = (outer_first, inner_first) {
                outcome = if x == y {
                    Outcome::Joins
                } else {
                    Outcome::Differs(x, y)
                };
                break;
            }
        }
        out.push(CriticalPair {
            outer: RULES[ra].name,
            inner: RULES[rb].name,
            overlap: show_pattern(&overlap),
            outcome,
        });
    }
    out
}
