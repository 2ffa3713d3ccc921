//! The search: one pass over a slice, asking of each line what an
//! optimizer could have known there.
//!
//! The solver holds what the lines before mean and the guards before
//! them (in a linear trace every earlier guard dominates). For an op's
//! result `r` it asks whether `r` is always one constant, else whether
//! it is always an earlier value; for a guard, whether it always passes.
//! A candidate is asked only if every sample agrees with it (see
//! `encoding::Sample`); each counterexample the solver gives becomes a
//! sample, so each way a candidate fails is paid for once.

use traceopt_smt::{Outcome, Sat, Solver, SolverError, Term};

use crate::encoding::{Encoding, Sample};
use crate::slice::{Operand, Slice};
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
    solver: &'s mut Solver,
    encoding: Encoding,
    samples: Vec<Sample>,
    tally: &'s mut Tally,
}

/// Every hit of `slice`, in line order.
pub fn search(
    slice: &Slice,
    solver: &mut Solver,
    tally: &mut Tally,
) -> Result<Vec<Hit>, SolverError> {
    solver.push()?;
    let mut search = Search {
        slice,
        encoding: Encoding::new(slice),
        solver,
        samples: Vec::new(),
        tally,
    };
    let hits = search.run();
    search.solver.pop()?;
    hits
}

impl Search<'_> {
    fn run(&mut self) -> Result<Vec<Hit>, SolverError> {
        let mut hits = Vec::new();
        let mut constants = Vec::new();
        for (k, line) in self.slice.lines.iter().enumerate() {
            self.tally.lines += 1;
            self.encoding.add(line, self.solver)?;
            let finding = match line.result {
                None => {
                    let condition = self.encoding.condition(line);
                    let passes = self.samples.iter().all(|s| s.passes(line) == Some(true));
                    // (A guard on a value found constant says nothing new.)
                    let on_constant = constants.contains(&line.args[0]);
                    let implied = passes && !on_constant && self.prove(&condition, None)?;
                    self.solver.assert(&condition)?;
                    implied.then_some(Finding::Implied)
                }
                Some(result) => {
                    if !self.ensure_sample(k)? {
                        // The solver found no run that gets here (or could
                        // not tell): nothing below can be asked.
                        break;
                    }
                    self.about_value(k, result)?
                }
            };
            self.samples.retain_mut(|s| s.step(line));
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

    /// Asks whether `goal` always holds; a counterexample becomes a
    /// sample of the lines before `sample_upto` (if given).
    fn prove(&mut self, goal: &Term, sample_upto: Option<usize>) -> Result<bool, SolverError> {
        self.tally.queries += 1;
        match self.solver.prove_bv_names(goal, &self.encoding.inputs)? {
            Outcome::Proved => Ok(true),
            Outcome::Counterexample(model) => {
                if let Some(upto) = sample_upto {
                    self.add_sample(upto, &model);
                }
                Ok(false)
            }
            Outcome::Unknown(_) => {
                self.tally.unknown += 1;
                Ok(false)
            }
        }
    }

    fn add_sample(&mut self, upto: usize, model: &traceopt_smt::Model) {
        if let Some(sample) = Sample::replay(self.slice, upto, model) {
            if self.samples.len() == SAMPLES {
                self.samples.remove(0);
            }
            self.samples.push(sample);
        }
    }

    /// Makes sure some sample runs the lines before `k` (and line `k`,
    /// an op): false if the solver finds no such run, or cannot tell.
    fn ensure_sample(&mut self, k: usize) -> Result<bool, SolverError> {
        if !self.samples.is_empty() {
            return Ok(true);
        }
        self.tally.queries += 1;
        match self.solver.check_names(&self.encoding.inputs)? {
            Sat::Sat(model) => {
                self.add_sample(k, &model);
                Ok(!self.samples.is_empty())
            }
            Sat::Unsat => Ok(false),
            Sat::Unknown(_) => {
                self.tally.unknown += 1;
                Ok(false)
            }
        }
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
        let r = self.encoding.term(Operand::Value(result));
        let runs = self.sampled(k);
        let Some(first) = runs.first() else {
            return Ok(None);
        };
        let c = first[result];
        if runs.iter().all(|run| run[result] == c)
            && self.prove(&r.eq(&Term::word(c)), Some(k + 1))?
        {
            return Ok(Some(Finding::Constant(c)));
        }
        // (Run again only when a counterexample added a sample.)
        let mut runs = self.sampled(k);
        let mut asked = 0;
        for v in 0..result {
            if asked == CANDIDATES_PER_OP {
                break;
            }
            if !self.encoding.is_declared(v) || !runs.iter().all(|run| run[v] == run[result]) {
                continue;
            }
            asked += 1;
            let earlier = self.encoding.term(Operand::Value(v));
            if self.prove(&r.eq(&earlier), Some(k + 1))? {
                return Ok(Some(Finding::Same(v)));
            }
            runs = self.sampled(k);
        }
        Ok(None)
    }
}
