//! The integer part of a trace, as the miner reads it.
//!
//! A trace is cut at its labels into segments: what the ops before a
//! label established need not hold after it (a loop body is entered
//! again from its jump), so each segment starts knowing nothing. Of a
//! segment the miner keeps the integer ops the SMT layer encodes and the
//! guards on integers (`guard_true`, `guard_false`, `guard_value` with an
//! integer constant, and the overflow guard right after an `*_ovf` op).
//! Every other integer value a kept line uses (a field read, a call's
//! result, an input of the trace, a `same_as_i` copy, a named constant
//! such as `ConstClass(..)`) becomes an input
//! of the slice, free to be anything: the miner only finds what follows
//! from integer arithmetic and the guards.
//!
//! A slice prints as a trace of PyPy's test format, with the values
//! renamed `i0, i1, ...` in order, so that the same pattern found in two
//! traces prints the same (`shape` also hides its constants).

use std::collections::HashMap;
use std::fmt::Write as _;

use traceopt_ir::{Arg, Const, ConstId, Opcode, Trace, Type, ValueId};
use traceopt_smt::encode::is_integer_op;

/// An argument of a slice line: a value of the slice, or an integer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Operand {
    Value(usize),
    Int(i64),
}

/// An integer op or a guard of the slice.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Line {
    pub opcode: Opcode,
    /// The op's arguments; an overflow guard's one argument is the
    /// result of the `*_ovf` op it follows.
    pub args: Vec<Operand>,
    /// The value the line defines (none for a guard).
    pub result: Option<usize>,
    /// The index, in the trace, of the op this line stands for.
    pub origin: usize,
}

impl Line {
    pub fn is_guard(&self) -> bool {
        self.result.is_none()
    }
}

/// The integer ops and guards of one segment of a trace.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Slice {
    /// The trace's name of each value (inputs and results alike).
    pub names: Vec<String>,
    /// The values that are inputs, in the order they were met.
    pub inputs: Vec<usize>,
    pub lines: Vec<Line>,
}

impl Slice {
    fn new_value(&mut self, name: &str) -> usize {
        self.names.push(name.to_string());
        self.names.len() - 1
    }

    /// Whether some line uses `value`.
    pub fn is_used(&self, value: usize) -> bool {
        let used = |a: &Operand| *a == Operand::Value(value);
        self.lines.iter().any(|l| l.args.iter().any(used))
    }
}

/// Whether `opcode` is an overflow guard.
pub fn is_overflow_guard(opcode: Opcode) -> bool {
    matches!(opcode, Opcode::GuardNoOverflow | Opcode::GuardOverflow)
}

/// Whether `opcode` is an op whose overflow a guard can test.
pub fn is_overflow_op(opcode: Opcode) -> bool {
    matches!(
        opcode,
        Opcode::IntAddOvf | Opcode::IntSubOvf | Opcode::IntMulOvf
    )
}

/// The segments of `trace`, each cut at a label.
pub fn segments(trace: &Trace) -> Vec<Slice> {
    let mut segments = Vec::new();
    let mut slice = Slice::default();
    // The slice value each trace value became, in this segment.
    let mut values: HashMap<ValueId, usize> = HashMap::new();
    // A named integer constant (`ConstClass(..)`, `ConstInt(..)`) has a
    // value the trace does not give: an input, the same for each use.
    let mut named: HashMap<ConstId, usize> = HashMap::new();
    let int_value = |v: ValueId| trace.value_type(v) == Type::Int;
    for (index, op) in trace.ops.iter().enumerate() {
        if op.opcode == Opcode::Label {
            segments.push(std::mem::take(&mut slice));
            values.clear();
            named.clear();
            continue;
        }
        let previous = index.checked_sub(1).map(|k| trace.value_of_op(k));
        let keep = match op.opcode {
            // (A copy before a label is how a peeled loop passes a
            // constant along; the label rebinds it. No finding.)
            Opcode::CallI | Opcode::CallPureI | Opcode::SameAsI => false,
            Opcode::GuardTrue | Opcode::GuardFalse => {
                matches!(op.args[..], [Arg::Value(v)] if int_value(v))
            }
            Opcode::GuardValue => matches!(
                op.args[..],
                [Arg::Value(v), Arg::Const(c)] if int_value(v) && matches!(trace.constant(c), Const::Int(_))
            ),
            // After the `*_ovf` op it tests, which the slice kept.
            opcode if is_overflow_guard(opcode) => previous.is_some_and(|v| {
                values.contains_key(&v) && is_overflow_op(trace.ops[index - 1].opcode)
            }),
            opcode => {
                let descr = op.descr.map(|d| trace.descr(d));
                is_integer_op(opcode, descr)
                    && op.args.iter().all(|a| trace.arg_type(*a) == Type::Int)
            }
        };
        if !keep {
            continue;
        }
        let args = if is_overflow_guard(op.opcode) {
            vec![Operand::Value(values[&previous.unwrap()])]
        } else {
            let mut operand = |arg: &Arg, slice: &mut Slice| {
                let mut input = |name: &str| {
                    let input = slice.new_value(name);
                    slice.inputs.push(input);
                    input
                };
                match *arg {
                    Arg::Const(c) => match trace.constant(c) {
                        Const::Int(x) => Operand::Int(*x),
                        _ => Operand::Value(*named.entry(c).or_insert_with(|| input(""))),
                    },
                    Arg::Value(v) => {
                        Operand::Value(*values.entry(v).or_insert_with(|| input(trace.name(v))))
                    }
                }
            };
            op.args.iter().map(|a| operand(a, &mut slice)).collect()
        };
        let result = (!op.opcode.is_guard()).then(|| {
            let v = trace.value_of_op(index);
            let value = slice.new_value(trace.name(v));
            values.insert(v, value);
            value
        });
        slice.lines.push(Line {
            opcode: op.opcode,
            args,
            result,
            origin: index,
        });
    }
    segments.push(slice);
    segments.retain(|s| !s.lines.is_empty());
    segments
}

/// How a slice prints: its constants as they are, or hidden (`shape`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Constants {
    Shown,
    Hidden,
}

/// The names a slice prints: `i0, i1, ...` for its values in order, the
/// inputs first.
pub fn canonical_names(slice: &Slice) -> HashMap<usize, String> {
    let order = (slice.inputs.iter().copied()).chain(slice.lines.iter().filter_map(|l| l.result));
    order
        .enumerate()
        .map(|(k, value)| (value, format!("i{k}")))
        .collect()
}

/// `slice` as a trace of PyPy's test format, ending in `finish()`, with
/// `comment` (if any) as its first line.
pub fn print(slice: &Slice, comment: Option<&str>, constants: Constants) -> String {
    let names = canonical_names(slice);
    let operand = |a: &Operand| match (a, constants) {
        (Operand::Value(v), _) => names[v].clone(),
        (Operand::Int(x), Constants::Shown) => x.to_string(),
        (Operand::Int(_), Constants::Hidden) => "C".to_string(),
    };
    let mut text = String::new();
    if let Some(comment) = comment {
        writeln!(text, "# {comment}").unwrap();
    }
    let inputs: Vec<&str> = slice.inputs.iter().map(|v| names[v].as_str()).collect();
    writeln!(text, "[{}]", inputs.join(", ")).unwrap();
    for line in &slice.lines {
        let args: Vec<String> = if is_overflow_guard(line.opcode) {
            Vec::new()
        } else {
            line.args.iter().map(operand).collect()
        };
        let call = format!("{}({})", line.opcode.name(), args.join(", "));
        match line.result {
            Some(v) => writeln!(text, "{} = {call}", names[&v]).unwrap(),
            None => writeln!(text, "{call} []").unwrap(),
        }
    }
    text.push_str("finish()\n");
    text
}
