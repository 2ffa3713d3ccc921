//! traceopt's rule synthesis: finds peephole rules the rule set lacks.
//!
//! 1. **Patterns** (`patterns`): every term of one or two integer ops
//!    over one or two variables and up to two constants, in the shapes
//!    seed 003 names: `op(x, x)`, `op(x, C)` (and with 0, 1 or -1),
//!    `op(op(x, C1), C2)`, two ops over `x` and `y` (`op(op(x, y), y)`
//!    and the like), a unary op under or over a binary one; comparisons
//!    are ops like any other. A pattern whose inner op the optimizer
//!    rewrites on its own is no normal form the optimizer produces, and
//!    is left out.
//! 2. **Targets**, cheapest first: a variable, a constant (0, 1, -1, a
//!    constant of the pattern, a function of them), then one op over
//!    those. A target is tried on sample values (variables and
//!    constants, edge values among them): if it agrees with the pattern
//!    on all, or on all whose constants meet one of a few conditions
//!    (`term::CONDITIONS`), it is a candidate.
//! 3. **Coverage**: a candidate whose pattern the optimizer already
//!    reduces as far, without the rules taken out (`removed`), on sample
//!    constants that meet its condition, is not new.
//! 4. **Proof**: the candidate is written as a rule of the rule language
//!    and proved by the rule prover (`traceopt_rules::prove`); a
//!    candidate the solver refutes gives way to the next target.
//!
//! The rules found are ranked by how often their pattern occurs in the
//! traces given (`occurrences`).

pub mod term;

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use traceopt_ir::{parse_trace, Arg, Const, Opcode, Trace};
use traceopt_opt::{optimize_without_rules, Passes};
use traceopt_rules::prove::{prove_rule, Verdict};
use traceopt_smt::{Solver, SolverError, SolverKind};

use term::{Condition, Constant, Env, Term, BINARY, CONDITIONS, FUNS, UNARY};

/// What to search.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only patterns whose root op is one of these (all if empty).
    pub roots: Vec<Opcode>,
    /// `removed[i]`: rule `i` of the optimizer's `RULES` counts as not in
    /// the rule set.
    pub removed: Vec<bool>,
}

/// A rule found and proved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub pattern: Term,
    pub condition: Option<Condition>,
    pub target: Term,
    /// The rule, in the rule language (named `name`).
    pub text: String,
}

/// What a search did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub patterns: usize,
    /// Candidates that passed the samples.
    pub candidates: usize,
    /// Of those, the ones the optimizer already covers.
    pub covered: usize,
    /// Candidates the prover refuted, or could not decide.
    pub refuted: usize,
    pub unknown: usize,
    /// Candidates whose rule does not check, or whose check can never
    /// hold (the prover's `NeverApplies`).
    pub unchecked: usize,
}

const LITERALS: [i64; 3] = [0, 1, -1];

/// Values of `(C1, C2)`, or of `(x, y)`.
type Pair = (i64, i64);

/// Every pattern of the shapes synthesis tries.
pub fn patterns() -> Vec<Term> {
    use Term::{Op, X, Y};
    let c = |k| Term::Const(k);
    let (c1, c2) = (c(Constant::C1), c(Constant::C2));
    let mut out = Vec::new();
    let one_constant: Vec<Term> = std::iter::once(c1.clone())
        .chain(LITERALS.map(|v| c(Constant::Lit(v))))
        .collect();
    for &b in &BINARY {
        out.push(Op(b, vec![X, X]));
        for k in &one_constant {
            out.push(Op(b, vec![X, k.clone()]));
            if !term::is_commutative(b) {
                out.push(Op(b, vec![k.clone(), X]));
            }
        }
        for &inner in &BINARY {
            let x_c1 = Op(inner, vec![X, c1.clone()]);
            out.push(Op(b, vec![x_c1.clone(), c2.clone()]));
            if !term::is_commutative(b) {
                out.push(Op(b, vec![c2.clone(), x_c1]));
            }
            let x_y = Op(inner, vec![X, Y]);
            for v in [X, Y] {
                out.push(Op(b, vec![x_y.clone(), v.clone()]));
                if !term::is_commutative(b) {
                    out.push(Op(b, vec![v, x_y.clone()]));
                }
            }
        }
        for &u in &UNARY {
            let ux = Op(u, vec![X]);
            out.push(Op(b, vec![ux.clone(), X]));
            if !term::is_commutative(b) {
                out.push(Op(b, vec![X, ux.clone()]));
            }
            for k in &one_constant {
                out.push(Op(b, vec![ux.clone(), k.clone()]));
            }
            out.push(Op(u, vec![Op(b, vec![X, c1.clone()])]));
            out.push(Op(u, vec![Op(b, vec![X, Y])]));
        }
    }
    for &u in &UNARY {
        for &v in &UNARY {
            out.push(Op(u, vec![Op(v, vec![X])]));
        }
    }
    out
}

/// The targets to try for `pattern`, cheapest first (all cheaper than
/// it).
fn targets(pattern: &Term) -> Vec<Term> {
    let has = |t: &Term| pattern.uses(t);
    let vars: Vec<Term> = [Term::X, Term::Y].into_iter().filter(|v| has(v)).collect();
    let (c1, c2) = (Term::Const(Constant::C1), Term::Const(Constant::C2));
    let mut constants: Vec<Term> = LITERALS.map(|v| Term::Const(Constant::Lit(v))).to_vec();
    if has(&c1) {
        constants.push(c1.clone());
        let two = has(&c2);
        if two {
            constants.push(c2);
        }
        constants.extend(
            (FUNS.iter())
                .filter(|f| two || !f.two)
                .map(|f| Term::Const(Constant::Fun(*f))),
        );
    }
    let mut out: Vec<Term> = vars.iter().chain(&constants).cloned().collect();
    let atoms: Vec<Term> = vars.iter().chain(&constants).cloned().collect();
    for v in &vars {
        for &u in &UNARY {
            out.push(Term::op(u, vec![v.clone()]));
        }
        for &b in &BINARY {
            for a in &atoms {
                out.push(Term::op(b, vec![v.clone(), a.clone()]));
                if !term::is_commutative(b) && !matches!(a, Term::X | Term::Y) {
                    out.push(Term::op(b, vec![a.clone(), v.clone()]));
                }
            }
        }
    }
    let cost = pattern.cost();
    out.retain(|t| t.cost() < cost);
    out
}

/// Sample environments: edge values and a spread of others, constants
/// and variables alike. The random constants come last: coverage takes
/// its samples from the end, where no constant is 0 or 1 by chance.
fn samples() -> (Vec<Pair>, Vec<Pair>) {
    let interesting: [i64; 24] = [
        0,
        1,
        2,
        3,
        -1,
        -2,
        5,
        7,
        8,
        15,
        16,
        31,
        32,
        63,
        64,
        255,
        -256,
        1 << 40,
        i64::MIN,
        i64::MAX,
        i64::MIN + 1,
        i64::MAX - 1,
        0x5555_5555_5555_5555,
        -0x0123_4567_89ab_cdef,
    ];
    // A seeded generator: the same samples every run.
    let mut rng = StdRng::seed_from_u64(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.random::<i64>();
    let mut constants = Vec::new();
    for (k, &a) in interesting.iter().enumerate() {
        constants.push((a, interesting[(k * 7 + 3) % interesting.len()]));
        constants.push((a, interesting[(k * 5 + 1) % interesting.len()]));
        constants.push((k as i64 % 64, (k as i64 * 11) % 64));
    }
    for _ in 0..24 {
        let (a, b) = (next(), next());
        constants.push((a, b));
        constants.push((a & 63, b & 63));
        constants.push((a & 255, a & 255 & b));
    }
    let mut values = Vec::new();
    for (k, &a) in interesting.iter().enumerate() {
        values.push((a, interesting[(k * 13 + 5) % interesting.len()]));
        values.push((a, a));
    }
    for _ in 0..24 {
        values.push((next(), next()));
        values.push((next() & 0xff, next() & 0xff));
    }
    (constants, values)
}

/// How `target` compares with `pattern` on each sample of constants:
/// `Some(true)` if it agrees on every sample of variables where the
/// pattern is defined, `None` if the pattern is defined on none.
fn agreement(
    pattern: &Term,
    target: &Term,
    constants: &[Pair],
    values: &[Pair],
) -> Vec<Option<bool>> {
    constants
        .iter()
        .map(|&(c1, c2)| {
            let mut defined = false;
            for &(x, y) in values {
                let env = Env { x, y, c1, c2 };
                let Some(want) = pattern.eval(&env) else {
                    continue;
                };
                defined = true;
                if target.eval(&env) != Some(want) {
                    return Some(false);
                }
            }
            defined.then_some(true)
        })
        .collect()
}

/// The weakest condition under which the samples agree (`Some(None)`:
/// none needed), if any: some sample meeting it must have a defined
/// pattern, and it must leave out every sample that disagrees.
fn condition_for(
    pattern: &Term,
    agree: &[Option<bool>],
    constants: &[Pair],
) -> Option<Option<Condition>> {
    let tested = |keep: &dyn Fn(i64, i64) -> bool| {
        let mut any = false;
        for (&(c1, c2), a) in constants.iter().zip(agree) {
            if !keep(c1, c2) {
                continue;
            }
            match a {
                Some(false) => return false,
                Some(true) => any = true,
                None => {}
            }
        }
        any
    };
    if tested(&|_, _| true) {
        return Some(None);
    }
    let uses_c1 = pattern.uses(&Term::Const(Constant::C1));
    let uses_c2 = pattern.uses(&Term::Const(Constant::C2));
    CONDITIONS
        .iter()
        .filter(|c| uses_c1 && (uses_c2 || !c.two))
        .find(|c| tested(&|a, b| (c.holds)(a, b)))
        .map(|c| Some(*c))
}

/// The pattern as a trace on `env`'s constants, ending in `finish`.
fn instance(pattern: &Term, env: &Env) -> Option<Trace> {
    let mut lines = Vec::new();
    let result = pattern.trace_lines(env, &mut lines);
    let text = format!("[i0, i1]\n{}\nfinish({result})\n", lines.join("\n"));
    parse_trace(&text, "synth").ok()
}

/// The ops the optimizer leaves of `trace` (the final `finish` aside).
fn ops_left(trace: &Trace, removed: &[bool]) -> Option<usize> {
    let out = optimize_without_rules(trace, Passes::default(), removed).ok()?;
    Some(
        out.trace
            .real_ops()
            .filter(|op| op.opcode != Opcode::Finish)
            .count(),
    )
}

/// Whether `holds` of `pattern`'s instance (as a trace) on each of up
/// to three samples of constants that meet the condition (the last:
/// random ones, see `samples`).
fn on_samples(pattern: &Term, meets: &[Pair], holds: impl Fn(&Trace) -> bool) -> bool {
    meets.iter().rev().take(3).all(|&(c1, c2)| {
        let env = Env {
            c1,
            c2,
            ..Env::default()
        };
        instance(pattern, &env).is_some_and(|trace| holds(&trace))
    })
}

/// Whether the optimizer (without the rules `removed`) leaves no more
/// ops of `pattern` than `target` has.
fn covered(pattern: &Term, target: &Term, meets: &[Pair], removed: &[bool]) -> bool {
    let wanted = target.ops().len();
    on_samples(pattern, meets, |trace| {
        ops_left(trace, removed).is_some_and(|left| left <= wanted)
    })
}

/// Whether the optimizer leaves `pattern`'s inner ops as they are: a
/// pattern built on an op it rewrites is no form it produces.
fn is_normal_form(pattern: &Term, meets: &[Pair], removed: &[bool]) -> bool {
    let Term::Op(_, args) = pattern else {
        return true;
    };
    args.iter().all(|arg| {
        let inner_ops = arg.ops().len();
        inner_ops == 0
            || on_samples(arg, &meets[meets.len().saturating_sub(1)..], |trace| {
                ops_left(trace, removed) == Some(inner_ops)
            })
    })
}

/// Whether a rule found before fires on `pattern`: then it is an
/// instance of that rule.
fn subsumed(pattern: &Term, meets: &[Pair], found: &[Found]) -> bool {
    on_samples(pattern, meets, |trace| {
        // (The instance's root is the op before its `finish`.)
        let root = trace.ops.len().saturating_sub(2);
        found.iter().any(|f| fires(f, trace, root))
    })
}

/// Whether `found` matches op `index` of `trace`, constants meeting its
/// condition.
fn fires(found: &Found, trace: &Trace, index: usize) -> bool {
    let mut env = Bindings::default();
    let root = Arg::Value(trace.value_of_op(index));
    matches(trace, &found.pattern, root, &mut env)
        && !(found.condition).is_some_and(|c| !(c.holds)(env.c1.unwrap_or(0), env.c2.unwrap_or(0)))
}

/// The rule, in the rule language.
pub fn rule_text(
    name: &str,
    pattern: &Term,
    condition: Option<Condition>,
    target: &Term,
) -> String {
    let mut text = format!("{name}: {}\n", pattern.text());
    if let Some(c) = condition {
        text.push_str(&format!("    check {}\n", c.text));
    }
    if let Some(f) = target.fun() {
        text.push_str(&format!("    C = {}\n", f.text));
    }
    text.push_str(&format!("    => {}\n", target.text()));
    text
}

/// Proves a rule given as text; `None` if it does not even check.
fn prove_text(text: &str, solver: &mut Solver) -> Option<Verdict> {
    let file = traceopt_rules::load_text("synth.rules", text).ok()?;
    Some(prove_rule(solver, &file.rules[0], &file.scopes[0]))
}

/// Searches every pattern (of `options.roots`) for a proved cheaper
/// target the optimizer lacks; the rules found, in pattern order.
pub fn synthesize(
    options: &Options,
    solver_kind: Option<SolverKind>,
    timeout: Duration,
) -> Result<(Vec<Found>, Summary), SolverError> {
    let mut solver = Solver::start(solver_kind, timeout)?;
    let (constants, values) = samples();
    let mut summary = Summary::default();
    let mut found = Vec::new();
    let wanted = |p: &Term| match p {
        Term::Op(op, _) => options.roots.is_empty() || options.roots.contains(op),
        _ => false,
    };
    for pattern in patterns().into_iter().filter(wanted) {
        summary.patterns += 1;
        for target in targets(&pattern) {
            let agree = agreement(&pattern, &target, &constants, &values);
            let Some(condition) = condition_for(&pattern, &agree, &constants) else {
                continue;
            };
            summary.candidates += 1;
            let meets: Vec<(i64, i64)> = (constants.iter().zip(&agree))
                .filter(|(&(a, b), agreed)| {
                    agreed.is_some() && !condition.is_some_and(|c| !(c.holds)(a, b))
                })
                .map(|(c, _)| *c)
                .collect();
            if !is_normal_form(&pattern, &meets, &options.removed) {
                break;
            }
            if covered(&pattern, &target, &meets, &options.removed)
                || subsumed(&pattern, &meets, &found)
            {
                summary.covered += 1;
                break;
            }
            let name = format!("synth_{}", found.len() + 1);
            let text = rule_text(&name, &pattern, condition, &target);
            match prove_text(&text, &mut solver) {
                Some(Verdict::Proved) => {
                    found.push(Found {
                        pattern: pattern.clone(),
                        condition,
                        target,
                        text,
                    });
                    break;
                }
                Some(Verdict::Unknown(_)) => summary.unknown += 1,
                Some(Verdict::Wrong(_)) => summary.refuted += 1,
                _ => summary.unchecked += 1,
            }
        }
    }
    Ok((found, summary))
}

/// How many ops of `traces` match `pattern` (with constants meeting
/// `condition`): where the rule would fire.
pub fn occurrences(found: &Found, traces: &[&Trace]) -> usize {
    (traces.iter())
        .map(|trace| {
            (0..trace.ops.len())
                .filter(|&k| fires(found, trace, k))
                .count()
        })
        .sum()
}

#[derive(Clone, Default)]
struct Bindings {
    x: Option<Arg>,
    y: Option<Arg>,
    c1: Option<i64>,
    c2: Option<i64>,
}

fn int_of(trace: &Trace, arg: Arg) -> Option<i64> {
    match arg {
        Arg::Const(c) => match trace.constant(c) {
            Const::Int(v) => Some(*v),
            _ => None,
        },
        Arg::Value(_) => None,
    }
}

fn matches(trace: &Trace, pattern: &Term, arg: Arg, env: &mut Bindings) -> bool {
    let bind = |slot: &mut Option<Arg>| match slot {
        Some(bound) => *bound == arg,
        None => {
            *slot = Some(arg);
            true
        }
    };
    let bind_int = |slot: &mut Option<i64>, v: Option<i64>| match (slot.as_ref(), v) {
        (_, None) => false,
        (Some(bound), Some(v)) => *bound == v,
        (None, Some(v)) => {
            *slot = Some(v);
            true
        }
    };
    match pattern {
        Term::X => bind(&mut env.x),
        Term::Y => bind(&mut env.y),
        Term::Const(Constant::Lit(v)) => int_of(trace, arg) == Some(*v),
        Term::Const(Constant::C1) => bind_int(&mut env.c1, int_of(trace, arg)),
        Term::Const(Constant::C2) => bind_int(&mut env.c2, int_of(trace, arg)),
        Term::Const(Constant::Fun(_)) => false,
        Term::Op(opcode, args) => {
            let Arg::Value(v) = arg else { return false };
            let Some(op) = trace.op_index(v).map(|k| &trace.ops[k]) else {
                return false;
            };
            if op.opcode != *opcode || op.args.len() != args.len() {
                return false;
            }
            let (before, given) = (env.clone(), op.args.clone());
            if (args.iter().zip(&given)).all(|(p, a)| matches(trace, p, *a, env)) {
                return true;
            }
            // The other order of a commutative op's arguments.
            *env = before;
            term::is_commutative(*opcode)
                && (args.iter().zip(given.iter().rev())).all(|(p, a)| matches(trace, p, *a, env))
        }
    }
}
