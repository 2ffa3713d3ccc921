//! A slice in the solver, and run on concrete values.
//!
//! `Encoding` declares a slice's inputs (each at its first use), defines
//! each op's result by its SMT meaning (`traceopt_smt::encode`) and
//! asserts that the op was defined (the trace ran it) and the encoding's
//! lemma. A guard's condition is a term the caller proves or asserts.
//!
//! `Sample` is a run of the slice on concrete inputs (from a solver
//! model) that passes its guards so far: the miner tests a candidate on
//! its samples before it asks the solver, so that most candidates cost
//! no query. A sample only ever rules candidates out, never in.

use std::collections::HashMap;

use traceopt_interp::arith;
use traceopt_interp::Val;
use traceopt_ir::Opcode;
use traceopt_smt::encode::{encode, truthy};
use traceopt_smt::{Model, Name, Solver, SolverError, Sort, Term};

use crate::slice::{is_overflow_guard, is_overflow_op, Line, Operand, Slice};

/// The solver's name for a slice value.
pub fn value_name(value: usize) -> Name {
    Name::invented(&format!("v{value}"))
}

/// What of a slice has been told to the solver.
pub struct Encoding {
    declared: Vec<bool>,
    /// The inputs declared so far (a counterexample gives their values).
    pub inputs: Vec<Name>,
    /// For the result of an `*_ovf` op: the condition that it did not
    /// overflow.
    no_overflow: HashMap<usize, Term>,
}

const WORD: Sort = Sort::Bv(64);

impl Encoding {
    pub fn new(slice: &Slice) -> Encoding {
        Encoding {
            declared: vec![false; slice.names.len()],
            inputs: Vec::new(),
            no_overflow: HashMap::new(),
        }
    }

    pub fn term(&self, operand: Operand) -> Term {
        match operand {
            Operand::Value(v) => Term::name(&value_name(v)),
            Operand::Int(x) => Term::word(x),
        }
    }

    fn declare_input(&mut self, value: usize, solver: &mut Solver) -> Result<(), SolverError> {
        let name = value_name(value);
        solver.declare(&name, WORD)?;
        self.declared[value] = true;
        self.inputs.push(name);
        Ok(())
    }

    /// Tells the solver what `line` means: declares the inputs it uses
    /// first; defines an op's result and asserts that it was defined. A
    /// guard's condition is left to the caller (`condition`).
    pub fn add(&mut self, line: &Line, solver: &mut Solver) -> Result<(), SolverError> {
        for arg in &line.args {
            if let Operand::Value(v) = *arg {
                if !self.declared[v] {
                    self.declare_input(v, solver)?;
                }
            }
        }
        let Some(result) = line.result else {
            return Ok(());
        };
        let args: Vec<Term> = line.args.iter().map(|a| self.term(*a)).collect();
        let Some(meaning) = encode(line.opcode, &args, None) else {
            // (Slices hold encodable ops only; should one slip through,
            // its result is free, which makes the miner find less.)
            return self.declare_input(result, solver);
        };
        solver.define(&value_name(result), WORD, &meaning.value)?;
        self.declared[result] = true;
        for fact in [Some(meaning.defined), meaning.lemma].into_iter().flatten() {
            if fact != Term::Bool(true) {
                solver.assert(&fact)?;
            }
        }
        if let Some(no_overflow) = meaning.no_overflow {
            self.no_overflow.insert(result, no_overflow);
        }
        Ok(())
    }

    /// The condition under which guard `line` passes.
    pub fn condition(&self, line: &Line) -> Term {
        let arg = self.term(line.args[0]);
        match line.opcode {
            Opcode::GuardTrue => truthy(&arg),
            Opcode::GuardFalse => truthy(&arg).not(),
            Opcode::GuardValue => arg.eq(&self.term(line.args[1])),
            Opcode::GuardNoOverflow | Opcode::GuardOverflow => {
                let Operand::Value(v) = line.args[0] else {
                    unreachable!("an overflow guard tests a value")
                };
                let no_overflow = self.no_overflow[&v].clone();
                match line.opcode {
                    Opcode::GuardNoOverflow => no_overflow,
                    _ => no_overflow.not(),
                }
            }
            other => unreachable!("{other} is no guard of a slice"),
        }
    }

    /// Encodes `lines` of `slice` (in order), asserting the conditions
    /// of its guards, then line `target` (a guard's condition is not
    /// asserted: it is the question).
    /// The values `also` are declared too, if no line there defines them.
    pub fn of_lines(
        slice: &Slice,
        lines: &[usize],
        target: usize,
        also: &[usize],
        solver: &mut Solver,
    ) -> Result<Encoding, SolverError> {
        let mut encoding = Encoding::new(slice);
        for &k in lines {
            let line = &slice.lines[k];
            encoding.add(line, solver)?;
            if line.is_guard() {
                solver.assert(&encoding.condition(line))?;
            }
        }
        encoding.add(&slice.lines[target], solver)?;
        for &v in also {
            if !encoding.declared[v] {
                encoding.declare_input(v, solver)?;
            }
        }
        Ok(encoding)
    }
}

/// A run of a slice on concrete inputs, up to some line, that passed
/// every guard there.
#[derive(Clone, Debug)]
pub struct Sample {
    values: Vec<Option<i64>>,
    overflowed: HashMap<usize, bool>,
}

impl Sample {
    /// The run on the inputs `model` gives (others: as in `base`, else a
    /// fixed pattern), through `slice.lines[..upto]`; `None` if it fails
    /// a guard or an op is undefined there.
    pub fn replay(
        slice: &Slice,
        upto: usize,
        model: &Model,
        base: Option<&Sample>,
    ) -> Option<Sample> {
        let mut sample = Sample {
            values: vec![None; slice.names.len()],
            overflowed: HashMap::new(),
        };
        for &input in &slice.inputs {
            let fallback = (input as i64).wrapping_mul(0x9e37_79b9_7f4a_7c15u64 as i64);
            let known = model.i64(&value_name(input));
            let based = base.and_then(|b| b.values[input]);
            sample.values[input] = Some(known.or(based).unwrap_or(fallback));
        }
        for line in &slice.lines[..upto] {
            if !sample.step(line) {
                return None;
            }
        }
        Some(sample)
    }

    pub fn value(&self, operand: Operand) -> Option<i64> {
        match operand {
            Operand::Value(v) => self.values[v],
            Operand::Int(x) => Some(x),
        }
    }

    /// Runs `line`: false if it is a guard that fails or an op
    /// undefined on these values.
    pub fn step(&mut self, line: &Line) -> bool {
        match line.result {
            Some(result) => match self.eval(line) {
                Some(value) => {
                    self.values[result] = Some(value);
                    true
                }
                None => false,
            },
            None => self.passes(line) == Some(true),
        }
    }

    fn eval(&mut self, line: &Line) -> Option<i64> {
        let args: Option<Vec<i64>> = line.args.iter().map(|a| self.value(*a)).collect();
        let args = args?;
        if is_overflow_op(line.opcode) {
            let (value, overflowed) = arith::int_ovf(line.opcode, args[0], args[1])?;
            self.overflowed.insert(line.result?, overflowed);
            return Some(value);
        }
        let vals: Vec<Val> = args.into_iter().map(Val::Int).collect();
        arith::eval(line.opcode, &vals).ok()?.as_int()
    }

    /// Whether guard `line` passes on these values (`None`: unknown).
    pub fn passes(&self, line: &Line) -> Option<bool> {
        let arg = self.value(line.args[0])?;
        Some(match line.opcode {
            Opcode::GuardTrue => arg != 0,
            Opcode::GuardFalse => arg == 0,
            Opcode::GuardValue => Some(arg) == self.value(line.args[1]),
            opcode if is_overflow_guard(opcode) => {
                let Operand::Value(v) = line.args[0] else {
                    return None;
                };
                let overflowed = *self.overflowed.get(&v)?;
                overflowed == (opcode == Opcode::GuardOverflow)
            }
            _ => return None,
        })
    }
}
