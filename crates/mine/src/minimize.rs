//! Cutting a hit down to a small trace that still shows it.
//!
//! First without the solver: the lines after the hit go, then every op
//! nothing uses (such an op is in no question the search asked of the
//! hit: its cone left it out). Then the lines the hit does not depend on
//! (`cone`) go; that cut is asked once, and kept only if the hit still
//! holds.
//!
//! Then greedily, from the end: drop a guard, or make an op's result a
//! new input (its arguments may then go too), keeping each step that
//! leaves the hit standing, until no step helps or the query budget is
//! spent.

use traceopt_smt::{Outcome, Solver, SolverError, Term};

use crate::cone::Cones;
use crate::encoding::Encoding;
use crate::slice::{is_overflow_guard, Operand, Slice};
use crate::{Finding, Tally};

/// The hit at the last line of `slice` (with `finding`), as a smaller
/// slice whose last line shows the same finding; at most `budget`
/// queries.
pub fn minimize(
    slice: &Slice,
    line: usize,
    finding: Finding,
    solver: &mut Solver,
    budget: usize,
    tally: &mut Tally,
) -> Result<Slice, SolverError> {
    let mut best = slice.clone();
    best.lines.truncate(line + 1);
    remove_dead(&mut best, finding);
    let mut spent = 0;
    let mut holds = |candidate: &Slice, solver: &mut Solver, tally: &mut Tally| {
        spent += 1;
        tally.queries += 1;
        let outcome = asked(candidate, finding, solver)?;
        if matches!(outcome, Some(Outcome::Unknown(_))) {
            tally.unknown += 1;
        }
        Ok((outcome == Some(Outcome::Proved), spent))
    };
    let mut cut = best.clone();
    keep_related_guards(&mut cut, finding);
    remove_dead(&mut cut, finding);
    if cut != best && holds(&cut, solver, tally)?.0 {
        best = cut;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for k in (0..best.lines.len().saturating_sub(1)).rev() {
            let Some(mut candidate) = without_line(&best, k) else {
                continue;
            };
            remove_dead(&mut candidate, finding);
            let (kept, spent) = holds(&candidate, solver, tally)?;
            if kept {
                best = candidate;
                changed = true;
            }
            if spent >= budget {
                return Ok(best);
            }
        }
    }
    Ok(best)
}

/// What the solver says of `finding` at the last line of `slice` (`None`:
/// the finding does not fit the line).
fn asked(
    slice: &Slice,
    finding: Finding,
    solver: &mut Solver,
) -> Result<Option<Outcome>, SolverError> {
    let Some(last) = slice.lines.len().checked_sub(1) else {
        return Ok(None);
    };
    let partner: Vec<usize> = partner(finding).into_iter().collect();
    let before: Vec<usize> = (0..last).collect();
    solver.push()?;
    let result = (|| {
        let encoding = Encoding::of_lines(slice, &before, last, &partner, solver)?;
        let goal = match (finding, slice.lines[last].result) {
            (Finding::Implied, None) => encoding.condition(&slice.lines[last]),
            (Finding::Constant(c), Some(r)) => encoding.term(Operand::Value(r)).eq(&Term::word(c)),
            (Finding::Same(v), Some(r)) => {
                let earlier = encoding.term(Operand::Value(v));
                encoding.term(Operand::Value(r)).eq(&earlier)
            }
            _ => return Ok(None),
        };
        Ok(Some(solver.prove_bv_names(&goal, &encoding.inputs)?))
    })();
    solver.pop()?;
    result
}

/// `slice` without line `k`: a guard dropped, or an op's result made an
/// input (with the overflow guard that tests it, if any). `None` if
/// that would leave it as it is.
fn without_line(slice: &Slice, k: usize) -> Option<Slice> {
    if k + 1 >= slice.lines.len() {
        return None;
    }
    let mut smaller = slice.clone();
    let line = smaller.lines.remove(k);
    if let Some(result) = line.result {
        let tested = |l: &crate::slice::Line| {
            is_overflow_guard(l.opcode) && l.args == [Operand::Value(result)]
        };
        if smaller.lines.last().is_some_and(tested) {
            // The hit is about this op's overflow: it must stay.
            return None;
        }
        smaller.lines.retain(|l| !tested(l));
        let at = (smaller.inputs.iter())
            .position(|&v| v > result)
            .unwrap_or(smaller.inputs.len());
        smaller.inputs.insert(at, result);
    }
    Some(smaller)
}

/// The values a finding names besides the last line's.
fn partner(finding: Finding) -> Option<usize> {
    match finding {
        Finding::Same(v) => Some(v),
        _ => None,
    }
}

/// Drops ops whose results nothing uses (nor the finding), and inputs
/// no line uses.
fn remove_dead(slice: &mut Slice, finding: Finding) {
    loop {
        let last = slice.lines.len().saturating_sub(1);
        let dead = (0..last).rev().find(|&k| {
            let line = &slice.lines[k];
            line.result
                .is_some_and(|r| !slice.is_used(r) && partner(finding) != Some(r))
        });
        match dead {
            Some(k) => {
                slice.lines.remove(k);
            }
            None => break,
        }
    }
    let used: Vec<bool> = (0..slice.names.len())
        .map(|v| slice.is_used(v) || partner(finding) == Some(v))
        .collect();
    slice.inputs.retain(|&v| used[v]);
}

/// Keeps only the lines the last line (and the finding's other value)
/// depend on (`Cones::relevant`).
fn keep_related_guards(slice: &mut Slice, finding: Finding) {
    let Some(last) = slice.lines.len().checked_sub(1) else {
        return;
    };
    let partner: Vec<usize> = partner(finding).into_iter().collect();
    let kept = Cones::new(slice).relevant(slice, last, &partner, Some(last));
    let mut lines: Vec<_> = kept.iter().map(|&k| slice.lines[k].clone()).collect();
    lines.push(slice.lines[last].clone());
    slice.lines = lines;
}
