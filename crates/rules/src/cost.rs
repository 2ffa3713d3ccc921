//! Static checks beyond types: termination and overlaps.
//!
//! Termination: each op has a cost (`Opcode::cost`, from the op table);
//! a rule must replace its pattern by a target of strictly lower summed
//! cost, so rewriting cannot go on for ever, or say why not with
//! `cost "reason"`. Overlaps: two rules of the same root op, kind and
//! priority whose patterns can match the same value and that build ops of
//! different cost depend on their order; they are reported so that the
//! author gives one a priority.

use crate::compile::{builds_ops, variants, Source};
use crate::syntax::{is_constant_var, Pattern, Rule};
use std::collections::HashMap;

pub fn cost(p: &Pattern) -> u32 {
    p.ops().iter().map(|op| op.cost()).sum()
}

/// Rules whose target does not cost less than the pattern and that give
/// no reason: `(file, rule, pattern cost, target cost)`.
pub fn non_decreasing<'a>(rules: &[Source<'a>]) -> Vec<(&'a str, &'a Rule, u32, u32)> {
    rules
        .iter()
        .filter_map(|s| {
            let (from, to) = (cost(&s.rule.pattern), cost(&s.rule.target));
            (to >= from && s.rule.cost_reason.is_none()).then_some((s.file, s.rule, from, to))
        })
        .collect()
}

/// Can some value match both patterns? Variables are bound consistently
/// per pattern; `C` variables only match constants.
fn unify<'p>(
    a: &'p Pattern,
    b: &'p Pattern,
    env_a: &mut HashMap<&'p str, &'p Pattern>,
    env_b: &mut HashMap<&'p str, &'p Pattern>,
) -> bool {
    match (a, b) {
        (Pattern::Var(x, _), other) => bind(x, other, env_a),
        (other, Pattern::Var(y, _)) => bind(y, other, env_b),
        (Pattern::Const(x, _), Pattern::Const(y, _)) => x == y,
        (Pattern::Op(f, xs, _), Pattern::Op(g, ys, _)) => {
            f == g && xs.iter().zip(ys).all(|(x, y)| unify(x, y, env_a, env_b))
        }
        _ => false,
    }
}

fn bind<'p>(var: &'p str, value: &'p Pattern, env: &mut HashMap<&'p str, &'p Pattern>) -> bool {
    if is_constant_var(var) && matches!(value, Pattern::Op(..)) {
        return false;
    }
    match env.get(var) {
        // A repeated variable: an approximation (equal shapes only).
        Some(earlier) => shape_eq(earlier, value),
        None => {
            env.insert(var, value);
            true
        }
    }
}

/// Equal trees, wherever they were written.
fn same_tree(a: &Pattern, b: &Pattern) -> bool {
    match (a, b) {
        (Pattern::Var(x, _), Pattern::Var(y, _)) => x == y,
        (Pattern::Const(x, _), Pattern::Const(y, _)) => x == y,
        (Pattern::Op(f, xs, _), Pattern::Op(g, ys, _)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_tree(x, y))
        }
        _ => false,
    }
}

fn shape_eq(a: &Pattern, b: &Pattern) -> bool {
    match (a, b) {
        (Pattern::Var(..), _) | (_, Pattern::Var(..)) => true,
        (Pattern::Const(x, _), Pattern::Const(y, _)) => x == y,
        (Pattern::Op(f, xs, _), Pattern::Op(g, ys, _)) => {
            f == g && xs.iter().zip(ys).all(|(x, y)| shape_eq(x, y))
        }
        _ => false,
    }
}

/// Pairs of rules whose order matters and that have no priority between
/// them: same root, equal priority, patterns that overlap, and both
/// building new ops of different cost. (Every rule is proved, so two that
/// apply give equal values; only which ops are built can differ, and
/// rules giving a value or a constant are tried first anyway.)
pub fn overlaps<'a>(rules: &[Source<'a>]) -> Vec<(&'a Rule, &'a Rule)> {
    let mut out = Vec::new();
    for (i, a) in rules.iter().enumerate() {
        for b in &rules[i + 1..] {
            let (ra, rb) = (a.rule, b.rule);
            if ra.pattern.ops()[0] != rb.pattern.ops()[0]
                || !builds_ops(ra)
                || !builds_ops(rb)
                || ra.priority != rb.priority
                || same_tree(&ra.target, &rb.target)
                || cost(&ra.target) == cost(&rb.target)
            {
                continue;
            }
            let overlap = variants(&rb.pattern)
                .iter()
                .any(|vb| unify(&ra.pattern, vb, &mut HashMap::new(), &mut HashMap::new()));
            if overlap {
                out.push((ra, rb));
            }
        }
    }
    out
}
