//! Proofs of rules with an SMT solver.
//!
//! For a rule `pattern, checks, assignments => target`, every pattern
//! variable `x` is a 64-bit word, and (if it is not a `C` variable) has a
//! symbolic bound `x_lower, x_upper, x_ones, x_unknowns` that holds it:
//! whatever the optimizer may know about `x`. The ops of the pattern have
//! their validator meaning (`traceopt_smt::encode`); since the pattern
//! was executed, each op in it was defined, and each overflow-checking op
//! below the root passed its guard. The checks and assignments are
//! evaluated by `facts` on symbolic words, the code the matcher runs.
//! Under all that, the proof obligation is:
//!
//! - the target is defined (shift counts in range, no division by zero)
//!   and equals the pattern's root;
//! - if the root checks overflow and the target does not, the root
//!   cannot overflow (its guard is dropped with it);
//! - if both check overflow, they overflow alike and agree otherwise.
//!
//! A second query asks whether the rule can ever apply (its assumptions
//! are satisfiable). A failed proof names the rule and its line and
//! gives the counterexample value of every variable and of both sides.
//! Proved results are cached by rule text, the fingerprint of the
//! encoding code and the solver's name and version (`cache_key`).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::check::Scope;
use crate::facts::{self, Val};
use crate::syntax::{is_constant_var, Expr, Pattern, Rule, Stmt, UnOp};
use traceopt_domains::symbolic::{self, Sym};
use traceopt_domains::{IntBound, KnownBits, Word};
use traceopt_smt::{
    encode, Model, Name, Outcome, Sat, Solver, SolverError, SolverKind, Sort, Term,
};

/// A hash of the sources of this crate, `traceopt-smt` and
/// `traceopt-domains`, taken by `build.rs`: what a proof's meaning
/// depends on besides the rule and the solver.
pub const ENCODING_FINGERPRINT: &str = env!("TRACEOPT_ENCODING_FINGERPRINT");

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Proved,
    /// `SORRY_SMT`: not attempted.
    Skipped,
    /// A counterexample, rendered.
    Wrong(String),
    /// The checks can never hold together.
    NeverApplies(String),
    /// The solver gave up (timeout); never counted as proved.
    Unknown(String),
}

/// A symbolic encoding of one rule.
struct Encoding {
    /// Every assumption: bounds hold their values, the pattern's ops were
    /// defined, inner overflow checks passed, the checks hold.
    assumptions: Vec<Term>,
    goal: Term,
    /// From a `split` hint: the cases, proved one by one (the last is
    /// "none of the others"); empty without a hint.
    cases: Vec<Term>,
    /// Variables to show in a counterexample, in order: as shown, and
    /// their solver names.
    shown: Vec<(String, Name)>,
    source: Term,
    target: Term,
}

impl Encoding {
    fn names(&self) -> Vec<Name> {
        self.shown.iter().map(|(_, n)| n.clone()).collect()
    }
}

/// The solver name of a pattern variable or assigned name: a user name
/// (`Name::user`), so that no spelling reaches the invented ones.
pub fn var_name(var: &str) -> Name {
    Name::user(var)
}

/// The solver name of a part of a pattern variable's bound (`lower`,
/// `upper`, `ones`, `unknowns`), shown as `x.lower`.
pub fn part_name(var: &str, part: &str) -> Name {
    var_name(var).part(part)
}

fn source_name() -> Name {
    Name::invented("source")
}

fn target_name() -> Name {
    Name::invented("target")
}

fn word(shown_as: String, name: Name, shown: &mut Vec<(String, Name)>) -> Sym {
    if !shown.iter().any(|(_, n)| *n == name) {
        shown.push((shown_as, name.clone()));
    }
    Sym::from_term(Term::name(&name))
}

/// What the ops of a tree need or give: their defined conditions, the
/// no-overflow conditions of `*_ovf` ops below the root, and facts true
/// for all arguments that help the solver (`Encoded::lemma`).
#[derive(Default)]
struct Conditions {
    defined: Vec<Term>,
    no_overflow: Vec<Term>,
    lemmas: Vec<Term>,
}

/// The value of a pattern (or target) tree and the root's no-overflow
/// condition; the rest goes into `c`.
/// A variable (a pattern variable or an assigned name) is its solver
/// variable, `var_name`.
fn tree(p: &Pattern, c: &mut Conditions) -> (Term, Option<Term>) {
    match p {
        Pattern::Const(v, _) => (Term::word(*v), None),
        Pattern::Var(name, _) => (Term::name(&var_name(name)), None),
        Pattern::Op(op, args, _) => {
            let terms: Vec<Term> = args
                .iter()
                .map(|a| {
                    let (t, ovf) = tree(a, c);
                    c.no_overflow.extend(ovf);
                    t
                })
                .collect();
            let enc = encode(*op, &terms, None).expect("checked: an integer op");
            c.defined.push(enc.defined);
            c.lemmas.extend(enc.lemma);
            (enc.value, enc.no_overflow)
        }
    }
}

fn eval(e: &Expr, env: &HashMap<String, Val<Sym>>) -> Val<Sym> {
    let int = |e: &Expr| match eval(e, env) {
        Val::Int(w) => w,
        other => unreachable!("checked: an integer, not {other:?}"),
    };
    let bit = |e: &Expr| match eval(e, env) {
        Val::Bool(b) => b,
        other => unreachable!("checked: a truth value, not {other:?}"),
    };
    let bound = |name: &str| match env[name] {
        Val::Bound(b) => b,
        other => unreachable!("checked: a bound, not {other:?}"),
    };
    match e {
        Expr::Int(v, _) => Val::Int(Sym::lit(*v)),
        Expr::Name(name, _) => env[name],
        Expr::Attr(var, attr, _) => Val::Int(facts::attribute(attr, bound(var))),
        Expr::Method(var, name, args, _) => {
            let args: Vec<Val<Sym>> = args.iter().map(|a| eval(a, env)).collect();
            Val::Bool(facts::method(name, bound(var), &args))
        }
        Expr::Call(name, args, _) => {
            let args: Vec<Sym> = args.iter().map(int).collect();
            Val::Int(facts::helper(name, &args))
        }
        Expr::Unary(UnOp::Not, inner, _) => Val::Bool(!bit(inner)),
        Expr::Unary(op, inner, _) => Val::Int(facts::int_unary(*op, int(inner))),
        Expr::Binary(op, a, b, _) => {
            if facts::is_logic(*op) {
                Val::Bool(facts::logic(*op, bit(a), bit(b)))
            } else if facts::is_comparison(*op) {
                Val::Bool(facts::compare(*op, int(a), int(b)))
            } else {
                Val::Int(facts::int_op(*op, int(a), int(b)))
            }
        }
    }
}

fn encode_rule(rule: &Rule, scope: &Scope) -> Encoding {
    symbolic::reset();
    let mut shown = Vec::new();
    let mut env: HashMap<String, Val<Sym>> = HashMap::new();
    let mut assumptions = Vec::new();
    let mut vars: Vec<String> = Vec::new();
    rule.pattern.walk(&mut |p| {
        if let Pattern::Var(name, _) = p {
            if !vars.contains(name) {
                vars.push(name.clone());
            }
        }
    });
    for var in &vars {
        let x = word(var.clone(), var_name(var), &mut shown);
        if is_constant_var(var) {
            env.insert(var.clone(), Val::Int(x));
            continue;
        }
        let mut part = |p: &str| word(format!("{var}.{p}"), part_name(var, p), &mut shown);
        let b = IntBound {
            lower: part("lower"),
            upper: part("upper"),
            bits: KnownBits {
                ones: part("ones"),
                unknowns: part("unknowns"),
            },
        };
        assumptions.push((b.is_well_formed() & b.contains(x)).term());
        env.insert(var.clone(), Val::Bound(b));
    }
    let mut cases = Vec::new();
    let mut pattern = Conditions::default();
    let (source, source_ovf) = tree(&rule.pattern, &mut pattern);
    assumptions.extend(pattern.defined);
    assumptions.extend(pattern.no_overflow);
    assumptions.extend(pattern.lemmas);
    for stmt in &rule.body {
        match stmt {
            Stmt::Check(e) => {
                if let Val::Bool(b) = eval(e, &env) {
                    assumptions.push(b.term());
                }
            }
            Stmt::Split(split) => {
                let mut inner = env.clone();
                for k in split.range.0..split.range.1 {
                    inner.insert(split.var.clone(), Val::Int(Sym::lit(k)));
                    if let Val::Bool(b) = eval(&split.cond, &inner) {
                        cases.push(b.term());
                    }
                }
            }
            Stmt::Assign(name, e, _) => {
                let value = eval(e, &env);
                if let Val::Int(w) = value {
                    // Show assigned integers in counterexamples too.
                    let x = word(name.clone(), var_name(name), &mut shown);
                    assumptions.push(x.term().eq(&w.term()));
                    env.insert(name.clone(), Val::Int(x));
                } else {
                    env.insert(name.clone(), value);
                }
            }
        }
    }
    let _ = scope;
    let mut built = Conditions::default();
    let (target, target_ovf) = tree(&rule.target, &mut built);
    assumptions.extend(built.lemmas);
    let mut goal = Term::and_all(built.defined);
    goal = goal.and(&Term::and_all(built.no_overflow));
    match (source_ovf, target_ovf) {
        (None, _) => goal = goal.and(&source.eq(&target)),
        (Some(no_ovf), None) => goal = goal.and(&no_ovf).and(&source.eq(&target)),
        (Some(s), Some(t)) => {
            goal = goal.and(&s.eq(&t)).and(&s.implies(&source.eq(&target)));
        }
    }
    if !cases.is_empty() {
        let none = Term::and_all(cases.iter().map(Term::not));
        cases.push(none);
    }
    Encoding {
        assumptions,
        cases,
        goal,
        shown,
        source,
        target,
    }
}

fn show_model(rule: &Rule, enc: &Encoding, model: &Model) -> String {
    let mut text = String::from("counterexample values:\n");
    for (shown_as, name) in &enc.shown {
        if let Some(v) = model.i64(name) {
            let _ = writeln!(text, "    {shown_as}: {v}");
        }
    }
    let value = |n: Name| model.i64(&n).map_or("?".to_string(), |v| v.to_string());
    let _ = writeln!(
        text,
        "  pattern {} has value {}\n  BUT target {} has value {}",
        show_pattern(&rule.pattern),
        value(source_name()),
        show_pattern(&rule.target),
        value(target_name()),
    );
    text
}

pub fn show_pattern(p: &Pattern) -> String {
    match p {
        Pattern::Var(name, _) => name.clone(),
        Pattern::Const(v, _) => v.to_string(),
        Pattern::Op(op, args, _) => {
            let args: Vec<String> = args.iter().map(show_pattern).collect();
            format!("{}({})", op.name(), args.join(", "))
        }
    }
}

/// Proves one rule with `solver` (no cache).
pub fn prove_rule(solver: &mut Solver, rule: &Rule, scope: &Scope) -> Verdict {
    if rule.sorry {
        return Verdict::Skipped;
    }
    let enc = encode_rule(rule, scope);
    let result = (|| -> Result<Verdict, traceopt_smt::SolverError> {
        solver.push()?;
        for (_, name) in &enc.shown {
            solver.declare(name, Sort::Bv(64))?;
        }
        solver.define(&source_name(), Sort::Bv(64), &enc.source)?;
        solver.define(&target_name(), Sort::Bv(64), &enc.target)?;
        for a in &enc.assumptions {
            solver.assert(a)?;
        }
        let sat = solver.check_names(&enc.names())?;
        let verdict = match sat {
            Sat::Unsat => {
                let shown: Vec<&str> = enc.shown.iter().map(|(s, _)| s.as_str()).collect();
                Verdict::NeverApplies(format!(
                    "no values of {} satisfy the pattern and the checks together",
                    shown.join(", ")
                ))
            }
            Sat::Unknown(reason) => Verdict::Unknown(reason),
            Sat::Sat(_) => {
                let mut names = enc.names();
                names.push(source_name());
                names.push(target_name());
                let all = [Term::Bool(true)];
                let cases = if enc.cases.is_empty() {
                    &all[..]
                } else {
                    &enc.cases
                };
                let mut verdict = Verdict::Proved;
                for case in cases {
                    solver.push()?;
                    solver.assert(case)?;
                    let outcome = solver.prove_names(&enc.goal, &names)?;
                    solver.pop()?;
                    verdict = match outcome {
                        Outcome::Proved => continue,
                        Outcome::Counterexample(model) => {
                            Verdict::Wrong(show_model(rule, &enc, &model))
                        }
                        Outcome::Unknown(reason) => Verdict::Unknown(reason),
                    };
                    break;
                }
                verdict
            }
        };
        solver.pop()?;
        Ok(verdict)
    })();
    result.unwrap_or_else(|e| Verdict::Unknown(e.to_string()))
}

/// Values under which the rule applies (a model of its assumptions),
/// for building a test trace where it fires: every pattern variable
/// (`var_name(x)`), the bounds of the non-constant ones (`part_name(x,
/// "lower")`, and `upper`, `ones`, `unknowns`, preferring bounds that are
/// not a single value), and the assigned names. `None` if the rule can never apply or
/// the solver gave up.
pub fn example(solver: &mut Solver, rule: &Rule, scope: &Scope) -> Option<Model> {
    let enc = encode_rule(rule, scope);
    // Preferences, relaxed step by step until the solver finds values:
    // constants other than 0 and +-1 and different from each other (which
    // simpler rules would take first), nothing known about the other
    // variables, or at least their bits unknown, or bounds that are not a
    // single value.
    let (mut nothing_known, mut bits_unknown, mut plain_constants, mut ranges) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut constants: Vec<String> = Vec::new();
    rule.pattern.walk(&mut |p| {
        let Pattern::Var(name, _) = p else { return };
        let var = |part: &str| Term::name(&part_name(name, part));
        let x = Term::name(&var_name(name));
        if is_constant_var(name) {
            for special in [0, 1, -1] {
                plain_constants.push(x.eq(&Term::word(special)).not());
            }
            for other in &constants {
                plain_constants.push(x.eq(&Term::name(&var_name(other))).not());
            }
            constants.push(name.clone());
        } else {
            let unknown = var("unknowns").eq(&Term::word(-1));
            bits_unknown.push(unknown.clone());
            nothing_known.push(unknown);
            nothing_known.push(var("lower").eq(&Term::word(i64::MIN)));
            nothing_known.push(var("upper").eq(&Term::word(i64::MAX)));
            ranges.push(var("lower").bv(traceopt_smt::Fun::BvSlt, &var("upper")));
            ranges.push(var("unknowns").eq(&Term::word(0)).not());
        }
    });
    let mut attempt = |extra: &[&[Term]]| -> Result<Option<Model>, SolverError> {
        solver.push()?;
        for (_, name) in &enc.shown {
            solver.declare(name, Sort::Bv(64))?;
        }
        for a in enc
            .assumptions
            .iter()
            .chain(extra.iter().copied().flatten())
        {
            solver.assert(a)?;
        }
        let sat = solver.check_names(&enc.names())?;
        solver.pop()?;
        Ok(match sat {
            Sat::Sat(model) => Some(model),
            _ => None,
        })
    };
    let attempts: [&[&[Term]]; 8] = [
        &[&nothing_known, &plain_constants],
        &[&bits_unknown, &plain_constants, &ranges],
        &[&plain_constants, &ranges],
        &[&plain_constants],
        &[&nothing_known],
        &[&bits_unknown, &ranges],
        &[&ranges],
        &[],
    ];
    attempts
        .iter()
        .find_map(|extra| attempt(extra).ok().flatten())
}

/// Where proved rules are remembered: one line per proved rule key.
pub struct Cache {
    path: Option<PathBuf>,
    proved: BTreeMap<String, String>,
}

impl Cache {
    pub fn open(path: Option<&Path>) -> Cache {
        let proved = path
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        Cache {
            path: path.map(Path::to_path_buf),
            proved,
        }
    }
    fn key(rule: &Rule, solver: &str) -> String {
        cache_key(&rule.text, ENCODING_FINGERPRINT, solver)
    }
    pub fn save(&self) {
        if let Some(path) = &self.path {
            if let Ok(text) = serde_json::to_string_pretty(&self.proved) {
                let _ = std::fs::write(path, text);
            }
        }
    }
}

/// The cache key of a rule's proof: its text, the fingerprint of the
/// encoding code, and the solver (name and version, as `z3 4.8.12`).
pub fn cache_key(text: &str, fingerprint: &str, solver: &str) -> String {
    format!("{fingerprint} {solver}\n{text}")
}

/// The outcome for one rule.
pub struct Proof {
    pub file: String,
    pub name: String,
    pub line: u32,
    pub verdict: Verdict,
    pub cached: bool,
    /// Solver time (0 when cached).
    pub seconds: f64,
}

impl Proof {
    /// A one-paragraph report, as seed 003 prints failures.
    pub fn message(&self) -> String {
        let place = format!("rule '{}' in {} line {}", self.name, self.file, self.line);
        match &self.verdict {
            Verdict::Proved => format!("proved {place}"),
            Verdict::Skipped => format!("skipped (SORRY_SMT) {place}"),
            Verdict::Wrong(cex) => format!("could not prove correctness of {place}\n{cex}"),
            Verdict::NeverApplies(why) => format!("{place} cannot ever apply: {why}"),
            Verdict::Unknown(why) => format!("unknown: the solver gave up on {place}: {why}"),
        }
    }
}

/// Proves every rule on `jobs` threads, each with its own solver
/// process, using and updating the cache. Results are in rule order.
pub fn prove_all(
    kind: Option<SolverKind>,
    timeout: Duration,
    jobs: usize,
    cache: &mut Cache,
    rules: &[crate::compile::Source],
) -> Result<Vec<Proof>, SolverError> {
    let mut first = Solver::start(kind, timeout)?;
    let solver_name = format!("{} {}", first.kind().binary(), first.version()?);
    let kind = Some(first.kind());
    let keys: Vec<String> = rules
        .iter()
        .map(|s| Cache::key(s.rule, &solver_name))
        .collect();
    let todo: Vec<usize> = (0..rules.len())
        .filter(|&i| !cache.proved.contains_key(&keys[i]))
        .collect();
    let jobs = jobs.clamp(1, todo.len().max(1));
    let mut verdicts: Vec<Option<(Verdict, f64)>> = vec![None; rules.len()];
    let mut solvers = vec![first];
    for _ in 1..jobs {
        solvers.push(Solver::start(kind, timeout)?);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = solvers
            .into_iter()
            .enumerate()
            .map(|(job, mut solver)| {
                let mine: Vec<usize> = todo.iter().copied().skip(job).step_by(jobs).collect();
                scope.spawn(move || {
                    mine.into_iter()
                        .map(|i| {
                            let started = Instant::now();
                            let v = prove_rule(&mut solver, rules[i].rule, rules[i].scope);
                            (i, v, started.elapsed().as_secs_f64())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for handle in handles {
            for (i, verdict, seconds) in handle.join().expect("a proof thread panicked") {
                verdicts[i] = Some((verdict, seconds));
            }
        }
    });
    let mut out = Vec::new();
    for (i, source) in rules.iter().enumerate() {
        let (verdict, seconds, cached) = match verdicts[i].take() {
            Some((v, seconds)) => (v, seconds, false),
            None => (Verdict::Proved, 0.0, true),
        };
        if verdict == Verdict::Proved {
            cache.proved.insert(keys[i].clone(), "proved".into());
        }
        out.push(Proof {
            file: source.file.to_string(),
            name: source.rule.name.clone(),
            line: source.rule.loc.line,
            verdict,
            cached,
            seconds,
        });
    }
    cache.save();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_key_changes_with_the_rule_the_encoding_and_the_solver() {
        let key = cache_key("r: x\n    => x", "f00d", "z3 4.8.12");
        for other in [
            cache_key("r: x\n    => 0", "f00d", "z3 4.8.12"),
            cache_key("r: x\n    => x", "f00e", "z3 4.8.12"),
            cache_key("r: x\n    => x", "f00d", "z3 4.8.13"),
            cache_key("r: x\n    => x", "f00d", "cvc5 4.8.12"),
        ] {
            assert_ne!(key, other);
        }
        assert_eq!(key, cache_key("r: x\n    => x", "f00d", "z3 4.8.12"));
        // The build's fingerprint: 128 bits in hex.
        assert_eq!(ENCODING_FINGERPRINT.len(), 32);
        assert!(ENCODING_FINGERPRINT.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
