//! What a question about some values of a slice can depend on.
//!
//! A value's cone is the values it is computed from, itself included. A
//! guard matters to a question only if its inputs meet the question's
//! inputs, directly or through other such guards: the guards whose
//! inputs stay apart constrain other inputs only, so leaving them out
//! changes no answer (a trace that ran has inputs for every part). Ops
//! outside the cones are left out too, with the condition that they
//! were defined: that only drops assumptions, so what is proved without
//! them holds with them.
//!
//! Each query is asked of its relevant lines alone: far smaller than
//! the whole segment on long traces.

use crate::slice::{Operand, Slice};

/// A set of a slice's values.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Bits(Vec<u64>);

impl Bits {
    pub fn new(size: usize) -> Bits {
        Bits(vec![0; size.div_ceil(64)])
    }
    pub fn insert(&mut self, v: usize) {
        self.0[v / 64] |= 1 << (v % 64);
    }
    pub fn contains(&self, v: usize) -> bool {
        self.0[v / 64] & (1 << (v % 64)) != 0
    }
    pub fn union(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
    pub fn intersects(&self, other: &Bits) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }
    fn intersection(&self, other: &Bits) -> Bits {
        Bits(self.0.iter().zip(&other.0).map(|(a, b)| a & b).collect())
    }
}

/// The cones of a slice's values, and the values and inputs each line
/// stands on.
pub struct Cones {
    below: Vec<Bits>,
    /// For each line: the cones of its arguments (and its result).
    line_below: Vec<Bits>,
    /// For each line: the inputs among those.
    line_inputs: Vec<Bits>,
}

impl Cones {
    pub fn new(slice: &Slice) -> Cones {
        let size = slice.names.len();
        let mut below: Vec<Bits> = (0..size)
            .map(|v| {
                let mut bits = Bits::new(size);
                bits.insert(v);
                bits
            })
            .collect();
        let mut inputs = Bits::new(size);
        for &v in &slice.inputs {
            inputs.insert(v);
        }
        let mut line_below = Vec::with_capacity(slice.lines.len());
        let mut line_inputs = Vec::with_capacity(slice.lines.len());
        for line in &slice.lines {
            let mut cone = Bits::new(size);
            for arg in &line.args {
                if let Operand::Value(v) = *arg {
                    cone.union(&below[v]);
                }
            }
            if let Some(r) = line.result {
                cone.insert(r);
                below[r] = cone.clone();
            }
            line_inputs.push(cone.intersection(&inputs));
            line_below.push(cone);
        }
        Cones {
            below,
            line_below,
            line_inputs,
        }
    }

    /// The lines before `upto` that a question about `goal` (values)
    /// depends on, in order. `also` (a line at or after `upto`, such as
    /// the guard asked about) counts as part of the question.
    pub fn relevant(
        &self,
        slice: &Slice,
        upto: usize,
        goal: &[usize],
        also: Option<usize>,
    ) -> Vec<usize> {
        let size = slice.names.len();
        let mut values = Bits::new(size);
        for &v in goal {
            values.union(&self.below[v]);
        }
        if let Some(k) = also {
            values.union(&self.line_below[k]);
        }
        let mut inputs = Bits::new(size);
        for &v in &slice.inputs {
            if values.contains(v) {
                inputs.insert(v);
            }
        }
        let guards: Vec<usize> = (0..upto).filter(|&k| slice.lines[k].is_guard()).collect();
        let mut kept = vec![false; slice.lines.len()];
        let mut grew = true;
        while grew {
            grew = false;
            for &g in &guards {
                if !kept[g] && self.line_inputs[g].intersects(&inputs) {
                    kept[g] = true;
                    inputs.union(&self.line_inputs[g]);
                    values.union(&self.line_below[g]);
                    grew = true;
                }
            }
        }
        (0..upto)
            .filter(|&k| kept[k] || slice.lines[k].result.is_some_and(|r| values.contains(r)))
            .collect()
    }
}
