//! A trace in a form that is easy to generate and to cut down: inputs
//! with example values, then lines of ops whose arguments are names or
//! constants, then the final op. It renders to the test format.
//!
//! A heap trace also has an example heap: the objects its reference
//! inputs point to (an input's example value is the index of its object,
//! -1 for null; two inputs may share one), and its ops name descrs of the
//! fuzzer's namespace (`heapgen::NAMESPACE`); its guards list fail
//! arguments, which the resume data of removed allocations extends.

use std::fmt::Write as _;
use std::sync::Arc;

use traceopt_interp::{stable_address, Heap, ObjId, Val};
use traceopt_ir::{parse_trace, parse_trace_with, Namespace, Opcode, ParseError, Trace, Type};

/// An argument: a value defined earlier, or a constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    Value(String),
    Const(i64),
    /// The null reference.
    Null,
    /// A class of the namespace (`ConstClass(name)`).
    Class(String),
    /// A float constant, by its bits (so that operands compare exactly).
    Float(u64),
    /// An object of the namespace (`ConstPtr(name)`).
    Ptr(String),
}

impl Operand {
    fn text(&self) -> String {
        match self {
            Operand::Value(name) => name.clone(),
            Operand::Const(c) => c.to_string(),
            Operand::Null => "NULL".into(),
            Operand::Class(name) => format!("ConstClass({name})"),
            Operand::Ptr(name) => format!("ConstPtr({name})"),
            Operand::Float(bits) => float_text(*bits),
        }
    }
}

/// A float (by its bits) as the test format writes it (`1.0`, `-0.0`,
/// `inf`, `nan`): the trace printer's spelling.
fn float_text(bits: u64) -> String {
    let mut text = String::new();
    traceopt_ir::print::write_const(&mut text, &traceopt_ir::Const::Float(bits));
    text
}

/// One op: its result name (none for guards and void ops), opcode,
/// arguments, descr (by namespace name) and, for guards, fail arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub result: Option<String>,
    pub opcode: Opcode,
    pub args: Vec<Operand>,
    pub descr: Option<String>,
    pub fail_args: Vec<Operand>,
}

impl Line {
    /// An op without descr or fail arguments.
    pub fn new(result: Option<String>, opcode: Opcode, args: Vec<Operand>) -> Line {
        Line {
            result,
            opcode,
            args,
            descr: None,
            fail_args: Vec::new(),
        }
    }

    /// Every operand the line uses: arguments, then fail arguments.
    pub fn operands_mut(&mut self) -> impl Iterator<Item = &mut Operand> {
        self.args.iter_mut().chain(self.fail_args.iter_mut())
    }
}

/// A value in the example heap: an int, a float (by its bits), or an
/// object of it (by index) or null.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ExampleValue {
    Int(i64),
    Float(u64),
    Ref(Option<usize>),
}

/// As derived, but a float shows its value, not its bits.
impl std::fmt::Debug for ExampleValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExampleValue::Int(v) => write!(f, "Int({v})"),
            ExampleValue::Float(bits) => write!(f, "Float({})", float_text(*bits)),
            ExampleValue::Ref(r) => write!(f, "Ref({r:?})"),
        }
    }
}

/// An object of the example heap: an instance of a class of the
/// namespace with field values (by descr name), an int array, or a
/// string (bytes, or code points for a unicode string).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExampleObject {
    Instance {
        class: String,
        fields: Vec<(String, ExampleValue)>,
    },
    Array(Vec<i64>),
    Text {
        unicode: bool,
        chars: Vec<u32>,
    },
}

impl ExampleObject {
    /// Its class, or "array", "str", "unicode".
    pub fn kind(&self) -> &str {
        match self {
            ExampleObject::Instance { class, .. } => class,
            ExampleObject::Array(_) => "array",
            ExampleObject::Text { unicode: false, .. } => "str",
            ExampleObject::Text { unicode: true, .. } => "unicode",
        }
    }
}

/// The descr of the label `Sketch::insert_label` puts in.
const LOOP_LABEL: &str = "TargetToken(1)";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sketch {
    /// Input names and the example value of each (for a reference, the
    /// index of its object in `heap`, or -1 for null).
    pub inputs: Vec<(String, i64)>,
    /// The objects that reference inputs point to; empty for an integer
    /// trace.
    pub heap: Vec<ExampleObject>,
    pub lines: Vec<Line>,
    /// `finish` or `jump`, and its arguments.
    pub end: (Opcode, Vec<Operand>),
}

impl Sketch {
    /// Appends a guard that must fail where the last guard on a value
    /// passed: the opposite truth test, or a class guard with the other
    /// class (`classes`: the namespace's classes). Such a trace can never
    /// run past it, which the optimizer must see (or keep the guard);
    /// a generator adds one now and then. Whether there was a guard to
    /// contradict.
    pub fn contradict_last_guard(&mut self, classes: &[&str]) -> bool {
        use Opcode::*;
        let Some(last) = self.lines.iter().rev().find(|l| {
            matches!(
                l.opcode,
                GuardTrue | GuardFalse | GuardClass | GuardNonnullClass
            )
        }) else {
            return false;
        };
        let mut line = last.clone();
        match (line.opcode, line.args.get(1)) {
            (GuardTrue, _) => line.opcode = GuardFalse,
            (GuardFalse, _) => line.opcode = GuardTrue,
            (_, Some(Operand::Class(c))) => {
                let Some(other) = classes.iter().find(|&&k| k != c) else {
                    return false;
                };
                line.opcode = GuardClass;
                line.args[1] = Operand::Class(other.to_string());
            }
            _ => return false,
        }
        self.lines.push(line);
        true
    }

    /// Puts a label before line `at` (after an op, never between an
    /// overflow-checked op and its guard): the values from before it that
    /// the lines after it or the final op use become its arguments, and a
    /// final `jump` goes back to it, with a value of each argument's kind
    /// (`alike` of two names) from after the label, the last one, or the
    /// argument itself. The trace then loops back to a label inside it,
    /// as a peeled loop does; a final `finish` stays. Whether there was
    /// such a place.
    pub fn insert_label(&mut self, at: usize, alike: impl Fn(&str, &str) -> bool) -> bool {
        use Opcode::{GuardNoOverflow, GuardOverflow, Label};
        let checks_overflow = |l: &Line| matches!(l.opcode, GuardNoOverflow | GuardOverflow);
        let fits = at > 0
            && at < self.lines.len()
            && !checks_overflow(&self.lines[at])
            && !self.lines.iter().any(|l| l.opcode == Label);
        if !fits {
            return false;
        }
        let defined_after: Vec<&str> = (self.lines[at..].iter())
            .filter_map(|l| l.result.as_deref())
            .collect();
        let mut passed: Vec<String> = Vec::new();
        let later = (self.lines[at..].iter()).flat_map(|l| l.args.iter().chain(&l.fail_args));
        for operand in later.chain(&self.end.1) {
            if let Operand::Value(name) = operand {
                if !defined_after.contains(&name.as_str()) && !passed.contains(name) {
                    passed.push(name.clone());
                }
            }
        }
        if self.end.0 == Opcode::Jump {
            self.end.1 = (passed.iter())
                .map(|arg| {
                    let same_kind = defined_after.iter().rev().find(|v| alike(v, arg));
                    Operand::Value(same_kind.map_or(arg.clone(), |v| v.to_string()))
                })
                .collect();
        }
        let label = Line {
            descr: Some(LOOP_LABEL.into()),
            ..Line::new(
                None,
                Label,
                passed.into_iter().map(Operand::Value).collect(),
            )
        };
        self.lines.insert(at, label);
        true
    }

    /// Whether this is a heap trace (its text needs the namespace; a
    /// label's descr needs none).
    pub fn has_heap(&self) -> bool {
        !self.heap.is_empty()
            || (self.lines.iter()).any(|l| l.descr.is_some() && l.opcode != Opcode::Label)
    }

    pub fn text(&self) -> String {
        let names: Vec<&str> = self.inputs.iter().map(|(n, _)| n.as_str()).collect();
        let mut out = format!("[{}]\n", names.join(", "));
        let list = |operands: &[Operand]| -> String {
            operands
                .iter()
                .map(Operand::text)
                .collect::<Vec<_>>()
                .join(", ")
        };
        for line in &self.lines {
            let mut args = list(&line.args);
            if let Some(descr) = &line.descr {
                if !args.is_empty() {
                    args.push_str(", ");
                }
                write!(args, "descr={descr}").unwrap();
            }
            let call = format!("{}({args})", line.opcode.name());
            match &line.result {
                Some(r) => writeln!(out, "{r} = {call}"),
                None if line.opcode.is_guard() => {
                    writeln!(out, "{call} [{}]", list(&line.fail_args))
                }
                None => writeln!(out, "{call}"),
            }
            .unwrap();
        }
        let mut end = list(&self.end.1);
        let loops_back = self.end.0 == Opcode::Jump;
        if let Some(label) = self
            .lines
            .iter()
            .find(|l| l.opcode == Opcode::Label && loops_back)
        {
            let descr = label.descr.as_deref().unwrap_or(LOOP_LABEL);
            end = match end.is_empty() {
                true => format!("descr={descr}"),
                false => format!("{end}, descr={descr}"),
            };
        }
        writeln!(out, "{}({end})", self.end.0.name()).unwrap();
        out
    }

    pub fn trace(&self) -> Result<Trace, ParseError> {
        match self.has_heap() {
            true => parse_trace_with(&self.text(), "fuzz", Some(crate::heapgen::namespace())),
            false => parse_trace(&self.text(), "fuzz"),
        }
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

/// The interpreter's inputs and heap for input values `values` of
/// `types` (ints, and for references indexes into `heap`, -1 for null).
pub fn materialize(types: &[Type], heap: &[ExampleObject], values: &[i64]) -> (Vec<Val>, Heap) {
    let namespace: Arc<Namespace> = crate::heapgen::namespace();
    let mut out = Heap::new();
    let ids: Vec<ObjId> = heap
        .iter()
        .map(|object| match object {
            ExampleObject::Instance { class, .. } => out.alloc_object(stable_address(class)),
            ExampleObject::Array(items) => {
                out.alloc_array(items.iter().map(|&v| Val::Int(v)).collect())
            }
            ExampleObject::Text {
                unicode: false,
                chars,
            } => out.alloc_str(chars.iter().map(|&c| c as u8).collect()),
            ExampleObject::Text {
                unicode: true,
                chars,
            } => out.alloc_unicode(chars.clone()),
        })
        .collect();
    let reference = |index: Option<usize>| Val::Ref(index.and_then(|i| ids.get(i).copied()));
    for (object, &id) in heap.iter().zip(&ids) {
        if let ExampleObject::Instance { fields, .. } = object {
            for (name, value) in fields {
                let key = namespace
                    .descr(name)
                    .map_or(name.as_str().into(), |d| d.text.clone());
                let value = match *value {
                    ExampleValue::Int(v) => Val::Int(v),
                    ExampleValue::Float(bits) => Val::Float(f64::from_bits(bits)),
                    ExampleValue::Ref(r) => reference(r),
                };
                out.set_field(id, &key, value);
            }
        }
    }
    let inputs = types
        .iter()
        .zip(values)
        .map(|(ty, &v)| match ty {
            Type::Ref => reference(usize::try_from(v).ok()),
            _ => Val::Int(v),
        })
        .collect();
    (inputs, out)
}
