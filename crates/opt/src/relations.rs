//! Relational facts: what guards taught about the order of two values.
//!
//! The integer domain knows each value on its own; it cannot conclude
//! `x < z` from `x < y` and `y < z` (seed 003's mining found PyPy cannot
//! either). Here passing guards on signed comparisons add edges `a < b`
//! or `a <= b` between values, as does an addition of a constant that
//! the bounds say cannot wrap (`x - 1 < x`: `Optimizer::learn_offset`),
//! and a comparison asks whether a path
//! leads from one argument to the other (strict if any edge on it is).
//! The set is small (the newest `MAX_FACTS` facts), and a query is a
//! search over it.

use crate::driver::Optimizer;
use smallvec::{smallvec, SmallVec};
use traceopt_ir::Arg;
use traceopt_ir::Opcode;

const MAX_FACTS: usize = 64;

#[derive(Default)]
pub struct Relations {
    /// `(a, b, strict)`: a < b if strict, else a <= b.
    facts: Vec<(Arg, Arg, bool)>,
}

impl Relations {
    pub fn add(&mut self, a: Arg, b: Arg, strict: bool) {
        if a == b || self.facts.contains(&(a, b, strict)) {
            return;
        }
        if self.facts.len() == MAX_FACTS {
            self.facts.remove(0);
        }
        self.facts.push((a, b, strict));
    }

    /// `Some(true)` if `a < b` follows, `Some(false)` if only `a <= b`.
    pub fn known(&self, a: Arg, b: Arg) -> Option<bool> {
        if self.facts.is_empty() {
            return None;
        }
        // Best strictness reached for each node; a small worklist.
        let mut reached: SmallVec<[(Arg, bool); 8]> = smallvec![(a, false)];
        let mut todo: SmallVec<[(Arg, bool); 8]> = smallvec![(a, false)];
        let mut answer = None;
        while let Some((node, strict)) = todo.pop() {
            for &(from, to, edge_strict) in &self.facts {
                if from != node {
                    continue;
                }
                let now = strict || edge_strict;
                if to == b {
                    answer = Some(answer.unwrap_or(false) || now);
                    if now {
                        return answer;
                    }
                }
                match reached.iter_mut().find(|(n, _)| *n == to) {
                    Some((_, s)) if *s || !now => {}
                    Some(entry) => {
                        entry.1 = true;
                        todo.push((to, true));
                    }
                    None => {
                        reached.push((to, now));
                        todo.push((to, now));
                    }
                }
            }
        }
        answer
    }
}

impl Optimizer<'_> {
    /// A signed comparison, or an equality, decided by the relational
    /// facts (two values one of which is below the other are not equal:
    /// `traceopt mine` found `x < y` then `y == x` in `list_sort`).
    pub(crate) fn compare_by_relations(&self, opcode: Opcode, args: &[Arg]) -> Option<bool> {
        if let Opcode::IntEq | Opcode::IntNe = opcode {
            let below = |a, b| self.relations.known(a, b) == Some(true);
            let apart = below(args[0], args[1]) || below(args[1], args[0]);
            return apart.then_some(opcode == Opcode::IntNe);
        }
        let (a, b, strict_wanted) = match opcode {
            Opcode::IntLt => (args[0], args[1], true),
            Opcode::IntLe => (args[0], args[1], false),
            Opcode::IntGt => (args[1], args[0], true),
            Opcode::IntGe => (args[1], args[0], false),
            _ => return None,
        };
        // a < b (or a <= b) holds?
        if let Some(strict) = self.relations.known(a, b) {
            if strict || !strict_wanted {
                return Some(true);
            }
        }
        // b <= a (or b < a) makes it false.
        match self.relations.known(b, a) {
            Some(strict) if strict || strict_wanted => Some(false),
            _ => None,
        }
    }
}
