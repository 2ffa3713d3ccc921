//! The shrinker: cuts a failing trace down while it still fails the same
//! way. Steps, tried in turn until none helps: drop a guard or an unused
//! op; drop an op, its uses taking one of its arguments instead; turn an op into a new
//! input (with its example value); make a constant simpler (0, 1, half);
//! drop a fail argument or a value of the end; finish with a single
//! value; drop unused inputs. Each step must keep
//! the trace well formed and the failure of the same kind.

use traceopt_interp::Val;
use traceopt_ir::{check, CheckOptions, Opcode};

use crate::oracle::run_limited;
use crate::sketch::{Line, Operand, Sketch};

/// The example value of every line's result, from a run on the example.
fn example_values(sketch: &Sketch) -> Vec<Option<i64>> {
    let Ok(trace) = sketch.trace() else {
        return vec![None; sketch.lines.len()];
    };
    let values = run_limited(&trace, &sketch.heap, &sketch.example(), 1)
        .map(|r| r.values)
        .unwrap_or_default();
    (0..sketch.lines.len())
        .map(|k| {
            values
                .get(sketch.inputs.len() + k)
                .copied()
                .flatten()
                .and_then(Val::as_int)
        })
        .collect()
}

fn replace_uses(sketch: &mut Sketch, name: &str, by: &Operand) {
    let uses = sketch
        .lines
        .iter_mut()
        .flat_map(|l| l.operands_mut())
        .chain(sketch.end.1.iter_mut());
    for arg in uses {
        if matches!(arg, Operand::Value(n) if n == name) {
            *arg = by.clone();
        }
    }
}

fn well_formed(sketch: &Sketch) -> bool {
    match sketch.trace() {
        Ok(trace) => check(&trace, "shrink", CheckOptions::default()).is_empty(),
        Err(_) => false,
    }
}

/// Every one-step simplification of `sketch`, the biggest cuts first.
fn candidates(sketch: &Sketch) -> Vec<Sketch> {
    let mut out = Vec::new();
    let examples = example_values(sketch);
    for k in (0..sketch.lines.len()).rev() {
        let line = &sketch.lines[k];
        let mut without = sketch.clone();
        let removed: Line = without.lines.remove(k);
        match &removed.result {
            None => out.push(without),
            Some(name) => {
                let used = (without.lines.iter())
                    .flat_map(|l| l.args.iter().chain(&l.fail_args))
                    .chain(&without.end.1)
                    .any(|a| matches!(a, Operand::Value(n) if n == name));
                if !used {
                    out.push(without);
                    continue;
                }
                for arg in &removed.args {
                    let mut s = without.clone();
                    replace_uses(&mut s, name, arg);
                    out.push(s);
                }
                if let Some(value) = examples[k] {
                    let mut s = without.clone();
                    s.inputs.push((name.clone(), value));
                    // A new input must come before its uses: rename is not
                    // needed, inputs are declared first.
                    out.push(s);
                    let mut s = without;
                    replace_uses(&mut s, name, &Operand::Const(value));
                    out.push(s);
                }
                // An overflow-checked op loses its guard with it.
                if line.opcode.has(traceopt_ir::Flags::OVF)
                    && sketch
                        .lines
                        .get(k + 1)
                        .is_some_and(|l| l.opcode == Opcode::GuardNoOverflow)
                {
                    let mut s = sketch.clone();
                    s.lines.remove(k + 1);
                    s.lines.remove(k);
                    if let Some(value) = examples[k] {
                        replace_uses(&mut s, name, &Operand::Const(value));
                        out.push(s);
                    }
                }
            }
        }
    }
    for (k, line) in sketch.lines.iter().enumerate() {
        for (a, arg) in line.args.iter().enumerate() {
            if let Operand::Const(c) = *arg {
                for simpler in [0, 1, c / 2] {
                    if simpler != c && (simpler.unsigned_abs() < c.unsigned_abs() || simpler == 0) {
                        let mut s = sketch.clone();
                        s.lines[k].args[a] = Operand::Const(simpler);
                        out.push(s);
                    }
                }
            }
        }
    }
    for (k, line) in sketch.lines.iter().enumerate() {
        for f in 0..line.fail_args.len() {
            let mut s = sketch.clone();
            s.lines[k].fail_args.remove(f);
            out.push(s);
        }
    }
    for e in 0..sketch.end.1.len() {
        let mut s = sketch.clone();
        s.end.1.remove(e);
        out.push(s);
    }
    if sketch.end.0 != Opcode::Finish || sketch.end.1.len() != 1 {
        if let Some(first) = sketch.end.1.first() {
            let mut s = sketch.clone();
            s.end = (Opcode::Finish, vec![first.clone()]);
            out.push(s);
        }
    }
    for i in (0..sketch.inputs.len()).rev() {
        let name = &sketch.inputs[i].0;
        let used = sketch
            .lines
            .iter()
            .flat_map(|l| l.args.iter().chain(&l.fail_args))
            .chain(&sketch.end.1)
            .any(|a| matches!(a, Operand::Value(n) if n == name));
        if !used && sketch.inputs.len() > 1 {
            let mut s = sketch.clone();
            s.inputs.remove(i);
            out.push(s);
        }
    }
    out
}

/// Shrinks `sketch` while `still_fails` holds; at most `budget` checks.
pub fn shrink(
    sketch: &Sketch,
    budget: usize,
    mut still_fails: impl FnMut(&Sketch) -> bool,
) -> Sketch {
    let mut best = sketch.clone();
    let mut checks = 0;
    'outer: loop {
        for candidate in candidates(&best) {
            if checks >= budget {
                break 'outer;
            }
            if !well_formed(&candidate) {
                continue;
            }
            checks += 1;
            if still_fails(&candidate) {
                best = candidate;
                continue 'outer;
            }
        }
        break;
    }
    best
}

/// The shortest prefix of `sketch` (its first lines, then `finish()`) on
/// which `still_fails` holds, found by bisection; `sketch` itself if no
/// shorter one does. For failures that happen at one op of a one-pass
/// optimizer (a crash, a hang): the ops after it are never reached, and
/// a prefix that fails fails when longer too. A first cut before
/// `shrink` when each failing check is slow (a hang costs its whole
/// time limit), as it takes a logarithmic number of checks.
pub fn shortest_failing_prefix(
    sketch: &Sketch,
    mut still_fails: impl FnMut(&Sketch) -> bool,
) -> Sketch {
    let prefix = |k: usize| Sketch {
        lines: sketch.lines[..k].to_vec(),
        end: (Opcode::Finish, Vec::new()),
        ..sketch.clone()
    };
    // Invariant: prefix `passing` does not fail, prefix `failing` (the
    // whole sketch when it is `lines.len()`) does.
    let (mut passing, mut failing) = (0, sketch.lines.len());
    while failing - passing > 1 {
        let middle = (passing + failing) / 2;
        let candidate = prefix(middle);
        if well_formed(&candidate) && still_fails(&candidate) {
            failing = middle;
        } else {
            passing = middle;
        }
    }
    if failing == sketch.lines.len() {
        sketch.clone()
    } else {
        prefix(failing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{generate, Config};

    #[test]
    fn the_shortest_failing_prefix_is_found_in_few_checks() {
        let sketch = generate(3, &Config::default());
        let n = sketch.lines.len();
        assert!(n >= 16, "{n} lines");
        let mut checks = 0;
        let cut = shortest_failing_prefix(&sketch, |s| {
            checks += 1;
            s.lines.len() >= 11
        });
        assert_eq!(cut.lines, sketch.lines[..11]);
        assert_eq!(cut.end, (Opcode::Finish, Vec::new()));
        assert!(checks <= 6, "{checks} checks for {n} lines");
        // Only the whole trace fails: it is kept, end and all.
        let whole = shortest_failing_prefix(&sketch, |s| s.lines.len() == n && s.end == sketch.end);
        assert_eq!(whole, sketch);
    }
}
