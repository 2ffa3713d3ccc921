//! Writing traces in PyPy's optimizer-test format.
//!
//! The output reads back with `parse_trace` into an equal trace. Values keep
//! the names they were parsed with; a value without a name gets a fresh one
//! of its type's letter (`i`, `p`, `f`) that no other value uses. Floats are
//! written in the shortest form that reads back to the same bits. A guard's
//! virtual objects are written after `where` (see `parse.rs`), under their
//! own names unless a value has it.

use crate::opcode::Type;
use crate::trace::{Arg, Const, FailArg, Op, Trace, ValueId, Virtual, VirtualKind};
use std::collections::HashSet;
use std::fmt::Write;

#[derive(Clone, Copy, Debug)]
pub struct PrintOptions {
    /// Write PyPy's code offsets (`+523:`) where the trace has them.
    pub offsets: bool,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions { offsets: true }
    }
}

/// The trace as test-format text, with code offsets.
pub fn print_trace(trace: &Trace) -> String {
    print_trace_with(trace, PrintOptions::default())
}

pub fn print_trace_with(trace: &Trace, options: PrintOptions) -> String {
    let names = value_names(trace);
    // Names of the values defined so far: a virtual may not have one.
    let mut taken: HashSet<&str> = names[..trace.inputs.len()].iter().map(|n| &**n).collect();
    let mut out = String::with_capacity(trace.ops.len() * 40);
    let name = |v: ValueId| names[v.0 as usize].as_str();
    out.push('[');
    for i in 0..trace.inputs.len() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(name(ValueId(i as u32)));
    }
    out.push_str("]\n");
    for (index, op) in trace.ops.iter().enumerate() {
        if let (true, Some(offset)) = (options.offsets, op.offset) {
            let _ = write!(out, "+{offset}: ");
        }
        let result = name(trace.value_of_op(index));
        if !result.is_empty() {
            out.push_str(result);
            out.push_str(" = ");
        }
        out.push_str(op.opcode.name());
        out.push('(');
        for (i, &arg) in op.args.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_arg(&mut out, trace, &names, arg);
        }
        if let Some(d) = op.descr {
            if !op.args.is_empty() {
                out.push_str(", ");
            }
            out.push_str("descr=");
            out.push_str(&trace.descr(d).text);
        }
        out.push(')');
        if let Some(fail_args) = &op.fail_args {
            let resume = Resume {
                trace,
                names: &names,
                virtuals: virtual_names(op, &taken),
            };
            out.push(' ');
            resume.items(&mut out, fail_args);
            resume.virtuals(&mut out, op);
            resume.pending(&mut out, op);
        }
        out.push('\n');
        taken.insert(result);
    }
    out
}

/// Writes a guard's resume data.
struct Resume<'t> {
    trace: &'t Trace,
    names: &'t [String],
    /// The names of the guard's virtuals.
    virtuals: Vec<String>,
}

impl Resume<'_> {
    /// `[a, b, ...]`.
    fn items(&self, out: &mut String, items: &[FailArg]) {
        out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.item(out, *item);
        }
        out.push(']');
    }

    fn item(&self, out: &mut String, item: FailArg) {
        match item {
            FailArg::Arg(arg) => write_arg(out, self.trace, self.names, arg),
            FailArg::Hole => out.push_str("None"),
            // A dangling index (a trace built by a program; the checker
            // reports it) prints as a name no value has, never a panic.
            FailArg::Virtual(i) => match self.virtuals.get(i as usize) {
                Some(name) => out.push_str(name),
                None => {
                    let _ = write!(out, "missing_virtual_{i}");
                }
            },
        }
    }

    /// ` writes setfield_gc(p0, p5, descr=d), ...` (nothing without
    /// pending writes).
    fn pending(&self, out: &mut String, op: &Op) {
        for (i, w) in op.pending.iter().enumerate() {
            out.push_str(if i == 0 { " writes " } else { ", " });
            let opcode = if w.index.is_some() {
                "setarrayitem_gc"
            } else {
                "setfield_gc"
            };
            let _ = write!(out, "{opcode}(");
            write_arg(out, self.trace, self.names, w.object);
            if let Some(index) = w.index {
                out.push_str(", ");
                write_arg(out, self.trace, self.names, index);
            }
            out.push_str(", ");
            self.item(out, w.value);
            let _ = write!(out, ", descr={})", self.trace.descr(w.descr).text);
        }
    }

    /// ` where p5 = new(descr=d) {f=i1}, ...` (nothing without virtuals).
    fn virtuals(&self, out: &mut String, op: &Op) {
        for (i, v) in op.virtuals.iter().enumerate() {
            out.push_str(if i == 0 { " where " } else { ", " });
            let _ = write!(out, "{} = {}(", self.virtuals[i], v.opcode.name());
            if let Some(d) = v.descr {
                let _ = write!(out, "descr={}", self.trace.descr(d).text);
            }
            out.push_str(") ");
            if Virtual::kind_of(v.opcode) == Some(VirtualKind::Struct) {
                out.push('{');
                for (k, (field, value)) in v.fields.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "{}=", self.trace.descr(*field).text);
                    self.item(out, *value);
                }
                out.push('}');
            } else {
                self.items(out, &v.items);
            }
        }
    }
}

/// Names for a guard's virtuals: their own, unless empty, taken by a value
/// defined before the guard or by an earlier virtual of the guard; then a
/// fresh `pv` name.
fn virtual_names(op: &Op, taken: &HashSet<&str>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut counter = 0usize;
    for v in &op.virtuals {
        let own = v.name.to_string();
        let free = |n: &String, names: &[String]| !taken.contains(n.as_str()) && !names.contains(n);
        if !own.is_empty() && free(&own, &names) {
            names.push(own);
            continue;
        }
        loop {
            let fresh = format!("pv{counter}");
            counter += 1;
            if free(&fresh, &names) {
                names.push(fresh);
                break;
            }
        }
    }
    names
}

fn write_arg(out: &mut String, trace: &Trace, names: &[String], arg: Arg) {
    match arg {
        Arg::Value(v) => out.push_str(&names[v.0 as usize]),
        Arg::Const(c) => write_const(out, trace.constant(c)),
    }
}

/// A constant as the test format writes it.
pub fn write_const(out: &mut String, c: &Const) {
    match c {
        Const::Int(v) => {
            let _ = write!(out, "{v}");
        }
        Const::Float(bits) => {
            let v = f64::from_bits(*bits);
            if v.is_nan() {
                out.push_str("nan");
            } else if v.is_infinite() {
                out.push_str(if v > 0.0 { "inf" } else { "-inf" });
            } else {
                let _ = write!(out, "{v:?}");
            }
        }
        Const::Null => out.push_str("NULL"),
        Const::Ptr(name) => {
            let _ = write!(out, "ConstPtr({name})");
        }
        Const::Class(name) => {
            let _ = write!(out, "ConstClass({name})");
        }
        Const::Str(text) => {
            let quote = if text.contains('\'') { '"' } else { '\'' };
            let _ = write!(out, "{quote}{text}{quote}");
        }
        Const::IntName(name) => {
            let _ = write!(out, "ConstInt({name})");
        }
        Const::String { unicode, text } => {
            let prefix = if *unicode { 'u' } else { 's' };
            let _ = write!(out, "{prefix}\"{text}\"");
        }
    }
}

/// A printable name for every value: its own, or, if the value is used, a
/// fresh one that no other value has. Unused values without a name stay
/// without (`escape_i(i3)` in a test need not name its result).
fn value_names(trace: &Trace) -> Vec<String> {
    let used: HashSet<&str> = trace.names.iter().map(|n| &**n).collect();
    let mut is_used = vec![false; trace.num_values()];
    for op in &trace.ops {
        for arg in op.all_args() {
            if let Arg::Value(v) = arg {
                is_used[v.0 as usize] = true;
            }
        }
    }
    let mut counter = 0usize;
    (0..trace.num_values())
        .map(|v| {
            let id = ValueId(v as u32);
            let given = trace.name(id);
            let is_input = trace.op_index(id).is_none();
            if !given.is_empty() || !(is_used[v] || is_input) {
                return given.to_string();
            }
            let letter = match trace.value_type(id) {
                Type::Void => return String::new(),
                Type::Ref => 'p',
                other => other.letter(),
            };
            loop {
                let fresh = format!("{letter}{counter}");
                counter += 1;
                if !used.contains(fresh.as_str()) {
                    return fresh;
                }
            }
        })
        .collect()
}
