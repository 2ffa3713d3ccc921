//! Every rule fires in a test, and every test output is proved
//! equivalent to its input.
//!
//! For each rule, the solver gives values under which it applies (a
//! model of its pattern and checks, `traceopt_rules::prove::example`).
//! From them we write a trace: one input per pattern variable, guards
//! that teach the optimizer the variable's bound and known bits, the
//! pattern's ops (constants from the model), and `finish` with the
//! result. The optimizer must fire the rule on it, and the validator must
//! prove the output equivalent to the input, guard by guard.

use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

use traceopt_ir::{check, parse_trace, CheckOptions};
use traceopt_opt::{optimize, Passes, RULES};
use traceopt_rules::prove::{example, part_name, var_name};
use traceopt_rules::syntax::{is_constant_var, Pattern};
use traceopt_rules::{load_dir, sources};
use traceopt_smt::{Model, Solver};
use traceopt_verify::{verify_aligned, Verdict};

fn rules_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../rules"))
}

/// Writes the ops of `p` (arguments first) and gives the name or constant
/// of its value.
fn emit(p: &Pattern, model: &Model, text: &mut String, fresh: &mut u32) -> String {
    match p {
        Pattern::Const(v, _) => v.to_string(),
        Pattern::Var(name, _) if is_constant_var(name) => {
            model.i64(&var_name(name)).unwrap_or(0).to_string()
        }
        Pattern::Var(name, _) => format!("i_{name}"),
        Pattern::Op(op, args, _) => {
            let args: Vec<String> = args.iter().map(|a| emit(a, model, text, fresh)).collect();
            *fresh += 1;
            let name = format!("i{fresh}");
            let _ = writeln!(text, "{name} = {}({})", op.name(), args.join(", "));
            if op.has(traceopt_ir::Flags::OVF) {
                let _ = writeln!(text, "guard_no_overflow() []");
            }
            name
        }
    }
}

fn test_trace(pattern: &Pattern, model: &Model) -> String {
    let mut vars = Vec::new();
    pattern.walk(&mut |p| {
        if let Pattern::Var(name, _) = p {
            if !is_constant_var(name) && !vars.contains(name) {
                vars.push(name.clone());
            }
        }
    });
    let inputs: Vec<String> = vars.iter().map(|v| format!("i_{v}")).collect();
    let mut text = format!("[{}]\n", inputs.join(", "));
    let mut fresh = 0;
    for var in &vars {
        let get = |part: &str| model.i64(&part_name(var, part)).unwrap_or(0);
        let (lower, upper, ones, unknowns) =
            (get("lower"), get("upper"), get("ones"), get("unknowns"));
        let mut guard = |text: &mut String, op: &str, value: i64| {
            fresh += 1;
            let _ = writeln!(
                text,
                "i{fresh} = {op}(i_{var}, {value})\nguard_true(i{fresh}) []"
            );
        };
        if lower != i64::MIN {
            guard(&mut text, "int_ge", lower);
        }
        if upper != i64::MAX {
            guard(&mut text, "int_le", upper);
        }
        let mask = !unknowns;
        if mask != 0 {
            fresh += 1;
            let _ = writeln!(
                text,
                "i{fresh} = int_and(i_{var}, {mask})\nguard_value(i{fresh}, {}) []",
                ones & mask
            );
        }
    }
    let result = emit(pattern, model, &mut text, &mut fresh);
    let _ = writeln!(text, "finish({result})");
    text
}

/// Traces for rules whose generated trace lets a simpler rule win (the
/// example values make another rule apply first) or whose example the
/// solver does not find in time (64-bit products).
const EXTRA_TRACES: &[&str] = &[
    "[i0]\ni1 = int_and(i0, 12)\ni2 = int_and(i1, 10)\nfinish(i2)\n",
    "[i0]\ni1 = int_and(i0, 12)\ni2 = int_and(i1, 3)\nfinish(i2)\n",
    "[i0]\ni1 = int_or(i0, 12)\ni2 = int_or(i1, 10)\nfinish(i2)\n",
    "[i0]\ni1 = int_and(i0, 3)\ni2 = int_or(i1, 7)\nfinish(i2)\n",
    "[i0]\ni1 = int_and(i0, 255)\ni2 = int_mul_ovf(i1, i1)\nguard_no_overflow() []\nfinish(i2)\n",
    "[i0]\ni1 = int_mul(i0, 3)\ni2 = int_mul(i1, 5)\nfinish(i2)\n",
    "[i0]\ni1 = int_pydiv(i0, 8)\nfinish(i1)\n",
    "[i0]\ni1 = int_pymod(i0, 8)\nfinish(i1)\n",
    // rshift_lshift_fits: the solver's example may shift by 0, which
    // lshift_zero takes first; as the miner found it in popcount_bits.
    "[i0]\ni1 = int_and(i0, 1431655765)\ni2 = int_lshift(i1, 1)\ni3 = int_rshift(i2, 1)\nfinish(i3)\n",
    // lt_square, ge_square: the solver's examples for them depend on how
    // long z3 takes (its strategy switches on time), and some let the
    // bounds fold the comparison first; an unbounded x leaves it to the
    // rule.
    "[i0]\ni1 = int_mul_ovf(i0, i0)\nguard_no_overflow() []\ni2 = int_lt(i1, 0)\nfinish(i2)\n",
    "[i0]\ni1 = int_mul_ovf(i0, i0)\nguard_no_overflow() []\ni2 = int_ge(i1, 0)\nfinish(i2)\n",
    // and_known_identity_of: x has bits in 0..3 only, y has them all.
    "[i0, i1]\ni2 = int_and(i0, -16)\nguard_value(i2, 0) []\ni3 = int_and(i1, 15)\nguard_value(i3, 15) []\ni4 = int_and(i0, i1)\nfinish(i4)\n",
];

/// Proved rules whose example values the solver takes over 20 s to
/// find (the overflow check of a 64-bit square: half of this test's time
/// once). EXTRA_TRACES has a trace for each; `never` below still fails
/// if one of them does not fire.
const SLOW_EXAMPLES: &[&str] = &["lt_square", "ge_square"];

/// Optimizes one test trace and proves the output; gives the rule counts.
fn run_case(
    name: &str,
    text: &str,
    solver: &mut Solver,
    problems: &mut Vec<String>,
) -> Option<Vec<u32>> {
    let before = match parse_trace(text, "test") {
        Ok(t) => t,
        Err(e) => {
            problems.push(format!("{name}: {e}\n{text}"));
            return None;
        }
    };
    let errors = check(&before, "test", CheckOptions::default());
    if !errors.is_empty() {
        problems.push(format!("{name}: {errors:?}\n{text}"));
        return None;
    }
    let optimized = match optimize(&before, Passes::default()) {
        Ok(o) => o,
        Err(e) => {
            problems.push(format!("{name}: {e}\n{text}"));
            return None;
        }
    };
    match verify_aligned(&before, &optimized.trace, &optimized.provenance, solver) {
        Ok(Verdict::Proved) => {}
        other => problems.push(format!(
            "{name}: output not proved equivalent: {other:?}\n{text}gave\n{}",
            traceopt_ir::print_trace(&optimized.trace)
        )),
    }
    Some(optimized.rule_counts)
}

#[test]
fn every_rule_fires_and_its_output_is_proved() {
    let files = load_dir(rules_dir()).unwrap_or_else(|e| panic!("{e}"));
    let rules = sources(&files);
    let mut solver = Solver::start(None, Duration::from_secs(30)).expect("an SMT solver");
    let mut problems = Vec::new();
    let mut fired = vec![0u32; RULES.len()];
    let mut missed_own = Vec::new();
    for source in &rules {
        let rule = source.rule;
        if rule.sorry || SLOW_EXAMPLES.contains(&rule.name.as_str()) {
            // The solver is slow on these (64-bit products and quotients);
            // EXTRA_TRACES has a trace for each.
            continue;
        }
        let Some(model) = example(&mut solver, rule, source.scope) else {
            problems.push(format!("{}: no example values", rule.name));
            continue;
        };
        let text = test_trace(&rule.pattern, &model);
        let Some(counts) = run_case(&rule.name, &text, &mut solver, &mut problems) else {
            continue;
        };
        for (total, count) in fired.iter_mut().zip(&counts) {
            *total += count;
        }
        let index = RULES
            .iter()
            .position(|r| r.name == rule.name)
            .expect("a compiled rule");
        if counts[index] == 0 {
            missed_own.push(rule.name.as_str());
        }
    }
    for (i, text) in EXTRA_TRACES.iter().enumerate() {
        if let Some(counts) = run_case(
            &format!("extra trace {i}"),
            text,
            &mut solver,
            &mut problems,
        ) {
            for (total, count) in fired.iter_mut().zip(&counts) {
                *total += count;
            }
        }
    }
    eprintln!("rules not fired by their own generated trace: {missed_own:?}");
    let never: Vec<&str> = RULES
        .iter()
        .zip(&fired)
        .filter(|(_, &n)| n == 0)
        .map(|(r, _)| r.name)
        .collect();
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(
        never.is_empty(),
        "rules that never fired in any test: {never:?}"
    );
}
