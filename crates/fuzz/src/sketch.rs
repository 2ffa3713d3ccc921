//! A trace in a form that is easy to generate and to cut down: inputs
//! with example values, then lines of ops whose arguments are names or
//! constants, then the final op. It renders to the test format.

use std::fmt::Write as _;
use traceopt_ir::{parse_trace, Opcode, ParseError, Trace};

/// An argument: a value defined earlier, or a constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    Value(String),
    Const(i64),
}

impl Operand {
    fn text(&self) -> String {
        match self {
            Operand::Value(name) => name.clone(),
            Operand::Const(c) => c.to_string(),
        }
    }
}

/// One op: its result name (none for guards), opcode and arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub result: Option<String>,
    pub opcode: Opcode,
    pub args: Vec<Operand>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sketch {
    /// Input names and the example value of each.
    pub inputs: Vec<(String, i64)>,
    pub lines: Vec<Line>,
    /// `finish` or `jump`, and its arguments.
    pub end: (Opcode, Vec<Operand>),
}

impl Sketch {
    pub fn text(&self) -> String {
        let names: Vec<&str> = self.inputs.iter().map(|(n, _)| n.as_str()).collect();
        let mut out = format!("[{}]\n", names.join(", "));
        for line in &self.lines {
            let args: Vec<String> = line.args.iter().map(Operand::text).collect();
            match &line.result {
                Some(r) => writeln!(out, "{r} = {}({})", line.opcode.name(), args.join(", ")),
                None => writeln!(out, "{}({}) []", line.opcode.name(), args.join(", ")),
            }
            .unwrap();
        }
        let args: Vec<String> = self.end.1.iter().map(Operand::text).collect();
        writeln!(out, "{}({})", self.end.0.name(), args.join(", ")).unwrap();
        out
    }

    pub fn trace(&self) -> Result<Trace, ParseError> {
        parse_trace(&self.text(), "fuzz")
    }

    /// The example input values, in order.
    pub fn example(&self) -> Vec<i64> {
        self.inputs.iter().map(|(_, v)| *v).collect()
    }

    /// Ops, not counting the final one.
    pub fn op_count(&self) -> usize {
        self.lines.len()
    }
}
