//! The search: one pass over a slice, asking of each line what an
//! optimizer could have known there.
//!
//! Each question is asked knowing what the lines before mean and that
//! the guards before passed (in a linear trace every earlier guard
//! dominates), of the lines it depends on (`cone`). For an op's result
//! `r` it asks whether `r` is always one constant, else whether it is
//! always an earlier value; for a guard, whether it always passes.
//! A candidate is asked only if every sample agrees with it (see
//! `encoding::Sample`); each counterexample the solver gives becomes a
//! sample, so each way a candidate fails is paid for once.

use traceopt_smt::{Model, Outcome, Sat, Solver, SolverError, Term};

use crate::cone::Cones;
use crate::encoding::{Encoding, Sample};
use crate::slice::{is_overflow_guard, Operand, Slice};
use crate::{Finding, Tally};

/// At most this many earlier values are asked about per op: each that
/// all samples agree with, but the solver refutes, adds a sample.
const CANDIDATES_PER_OP: usize = 4;
/// Samples kept (the newest).
const SAMPLES: usize = 12;

/// A finding at line `line` of a slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub line: usize,
    pub finding: Finding,
}

struct Search<'s> {
    slice: &'s Slice,
    cones: Cones,
    solver: &'s mut Solver,
    samples: Vec<Sample>,
    /// The newest sample a guard ruled out: its inputs still fit the
    /// guards of other inputs.
    dropped: Option<Sample>,
    tally: &'s mut Tally,
}

/// What a query gave.
enum Answer {
    Proved,
    Model(Model),
    Unknown,
}

/// Every hit of `slice`, in line order.
pub fn search(
    slice: &Slice,
    solver: &mut Solver,
    tally: &mut Tally,
) -> Result<Vec<Hit>, SolverError> {
    let mut search = Search {
        slice,
        cones: Cones::new(slice),
        solver,
        samples: Vec::new(),
        dropped: None,
        tally,
    };
    search.run()
}

impl Search<'_> {
    fn run(&mut self) -> Result<Vec<Hit>, SolverError> {
        let mut hits = Vec::new();
        let mut constants = Vec::new();
        for (k, line) in self.slice.lines.iter().enumerate() {
            self.tally.lines += 1;
            let finding = match line.result {
                None => {
                    // Some run must get here, or "always passes" says
                    // nothing (the guards before contradict each other).
                    if !self.ensure_sample(k, false)? {
                        break;
                    }
                    let passes = self.samples.iter().all(|s| s.passes(line) == Some(true));
                    // (A guard on a value found constant says nothing
                    // new; an overflow guard tests the op, not its value.)
                    let on_constant =
                        !is_overflow_guard(line.opcode) && constants.contains(&line.args[0]);
                    let implied = passes
                        && !on_constant
                        && self.prove(k, &[], |e| e.condition(line), false)?;
                    implied.then_some(Finding::Implied)
                }
                Some(result) => {
                    if !self.ensure_sample(k, true)? {
                        // The solver found no run that gets here (or could
                        // not tell): nothing below can be asked.
                        break;
                    }
                    self.about_value(k, result)?
                }
            };
            let before = self.samples.len();
            let mut dropped = None;
            // (A step that fails leaves the sample as it was.)
            self.samples.retain_mut(|s| {
                let kept = s.step(line);
                if !kept {
                    dropped = Some(s.clone());
                }
                kept
            });
            if self.samples.len() < before {
                self.dropped = dropped;
            }
            if let (Some(Finding::Constant(_)), Some(r)) = (finding, line.result) {
                constants.push(Operand::Value(r));
            }
            if let Some(finding) = finding {
                self.tally.hits += 1;
                hits.push(Hit { line: k, finding });
            }
        }
        Ok(hits)
    }

    /// Asks of line `k` (with the lines it and `values` depend on)
    /// whether `goal` always holds. On a counterexample, if `sample`, it
    /// becomes a sample of the lines through `k`.
    fn prove(
        &mut self,
        k: usize,
        values: &[usize],
        goal: impl FnOnce(&Encoding) -> Term,
        sample: bool,
    ) -> Result<bool, SolverError> {
        let lines = self.cones.relevant(self.slice, k, values, Some(k));
        match self.ask(&lines, k, values, Some(goal))? {
            Answer::Proved => Ok(true),
            Answer::Model(model) => {
                if sample {
                    self.add_sample(k + 1, &model);
                }
                Ok(false)
            }
            Answer::Unknown => Ok(false),
        }
    }

    /// One query, in a scope of its own: `lines` and line `k` encoded;
    /// is `goal` valid (or, without one, is there a run)?
    fn ask(
        &mut self,
        lines: &[usize],
        k: usize,
        values: &[usize],
        goal: Option<impl FnOnce(&Encoding) -> Term>,
    ) -> Result<Answer, SolverError> {
        self.tally.queries += 1;
        self.solver.push()?;
        let answer = (|| {
            let encoding = Encoding::of_lines(self.slice, lines, k, values, self.solver)?;
            Ok(match goal {
                Some(goal) => {
                    let goal = goal(&encoding);
                    match self.solver.prove_bv_names(&goal, &encoding.inputs)? {
                        Outcome::Proved => Answer::Proved,
                        Outcome::Counterexample(model) => Answer::Model(model),
                        Outcome::Unknown(_) => Answer::Unknown,
                    }
                }
                None => match self.solver.check_names(&encoding.inputs)? {
                    Sat::Sat(model) => Answer::Model(model),
                    Sat::Unsat => Answer::Proved,
                    Sat::Unknown(_) => Answer::Unknown,
                },
            })
        })();
        self.solver.pop()?;
        if matches!(answer, Ok(Answer::Unknown)) {
            self.tally.unknown += 1;
        }
        answer
    }

    /// Adds the run of the lines before `upto` on `model`'s inputs
    /// (the others as in the first sample, or the last one dropped);
    /// false if that run fails a guard.
    fn add_sample(&mut self, upto: usize, model: &Model) -> bool {
        let base = self.samples.first().or(self.dropped.as_ref());
        let Some(sample) = Sample::replay(self.slice, upto, model, base) else {
            return false;
        };
        if self.samples.len() == SAMPLES {
            self.samples.remove(0);
        }
        self.samples.push(sample);
        true
    }

    /// Makes sure some sample runs the lines before `k` (and line `k`
    /// too, if `through`: an op): false if the solver finds no such run,
    /// or cannot tell. A run of the lines `k` depends on, completed by
    /// the last sample dropped, is asked first; else one of every line
    /// before.
    fn ensure_sample(&mut self, k: usize, through: bool) -> Result<bool, SolverError> {
        if !self.samples.is_empty() {
            return Ok(true);
        }
        let no_goal: Option<fn(&Encoding) -> Term> = None;
        let near = self.cones.relevant(self.slice, k, &[], Some(k));
        let everything: Vec<usize> = (0..k).collect();
        for lines in [near, everything] {
            match self.ask(&lines, k, &[], no_goal)? {
                Answer::Model(model) => {
                    if self.add_sample(k + usize::from(through), &model) {
                        return Ok(true);
                    }
                }
                Answer::Proved | Answer::Unknown => return Ok(false),
            }
        }
        Ok(false)
    }

    /// The value of op line `k`'s result on each sample (running it).
    fn sampled(&self, k: usize) -> Vec<Vec<i64>> {
        let line = &self.slice.lines[k];
        (self.samples.iter())
            .filter_map(|s| {
                let mut run = s.clone();
                run.step(line).then_some(())?;
                let values = (0..self.slice.names.len())
                    .map(|v| run.value(Operand::Value(v)).unwrap_or(i64::MIN))
                    .collect();
                Some(values)
            })
            .collect()
    }

    /// Is the result of op line `k` a constant, or an earlier value?
    fn about_value(&mut self, k: usize, result: usize) -> Result<Option<Finding>, SolverError> {
        let r = Term::name(&crate::encoding::value_name(result));
        let runs = self.sampled(k);
        let Some(first) = runs.first() else {
            return Ok(None);
        };
        let c = first[result];
        if runs.iter().all(|run| run[result] == c)
            && self.prove(k, &[], |_| r.eq(&Term::word(c)), true)?
        {
            return Ok(Some(Finding::Constant(c)));
        }
        // (Run again only when a counterexample added a sample.)
        let mut runs = self.sampled(k);
        let mut asked = 0;
        // Earlier values: those defined before line `k`.
        let earlier = self.slice.lines[..k].iter().filter_map(|l| l.result);
        let inputs = self.slice.inputs.iter().copied().filter(|&v| v < result);
        let mut candidates: Vec<usize> = inputs.chain(earlier).collect();
        candidates.sort_unstable();
        for v in candidates {
            if asked == CANDIDATES_PER_OP {
                break;
            }
            if !runs.iter().all(|run| run[v] == run[result]) {
                continue;
            }
            asked += 1;
            let earlier = Term::name(&crate::encoding::value_name(v));
            if self.prove(k, &[v], |_| r.eq(&earlier), true)? {
                return Ok(Some(Finding::Same(v)));
            }
            runs = self.sampled(k);
        }
        Ok(None)
    }
}
