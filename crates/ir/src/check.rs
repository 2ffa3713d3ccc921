//! The checker: is this a well-formed trace?
//!
//! It checks what the parser leaves open and what a program that builds
//! traces could get wrong: every use comes after its definition and names a
//! value (not a void op), names are unique, arity and argument types follow
//! the op table, descrs are present where needed, absent where not, and of
//! the right kind (a field op gets a field descr, and a field of ints feeds
//! `getfield_gc_i`), guards carry fail arguments when the trace's kind
//! requires them, an overflow guard follows an `*_ovf` op, and the trace ends
//! with `jump` or `finish` unless it is declared partial. A jump back into
//! the trace passes values that fit its target (the inputs or a label), and
//! after a label only the label's arguments are used.
//!
//! Errors reuse `ParseError`'s shape (file, line, column, expected, found).

use crate::descr::{Descr, DescrKind};
use crate::error::{cut, ParseError};
use crate::opcode::{Flags, Opcode, Type};
use crate::trace::{Arg, FailArg, JumpTarget, Op, Pos, Trace, Virtual, VirtualKind};
use std::collections::HashMap;

pub type CheckError = ParseError;

#[derive(Clone, Copy, Debug, Default)]
pub struct CheckOptions {
    /// Every guard must list its fail arguments (as in optimized traces).
    pub require_fail_args: bool,
    /// The trace may stop without `jump` or `finish`.
    pub partial: bool,
}

/// All problems found, in trace order; empty if the trace is well formed.
pub fn check(trace: &Trace, file: &str, options: CheckOptions) -> Vec<CheckError> {
    let mut errors = Vec::new();
    let mut report = |pos: Pos, expected: String, found: String, hint: Option<&str>| {
        errors.push(ParseError {
            file: file.into(),
            line: pos.line,
            col: pos.col,
            expected,
            found,
            hint: hint.map(Into::into),
        })
    };
    let pos_of = |i: usize| trace.op_pos.get(i).copied().unwrap_or_default();

    let mut seen_names: HashMap<&str, usize> = HashMap::new();
    for (v, name) in trace.names.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        if let Some(first) = seen_names.insert(name, v) {
            let at = |v: usize| {
                trace
                    .op_index(crate::ValueId(v as u32))
                    .map_or(trace.input_pos, pos_of)
            };
            report(
                at(v),
                "each name defined once".into(),
                format!(
                    "'{}' defined again (first on line {})",
                    cut(name),
                    at(first).line
                ),
                Some("single assignment: give the second value a new name"),
            );
        }
    }

    // After a label that a jump of this trace goes to, only its arguments
    // (and later values) are live. A label no jump targets is a marker.
    let jumped_to: Vec<usize> = trace
        .ops
        .iter()
        .filter(|op| op.opcode == Opcode::Jump)
        .filter_map(|op| match trace.jump_target(op) {
            JumpTarget::Label(l) => Some(l),
            _ => None,
        })
        .collect();
    let mut last_label: Option<usize> = None;
    for (index, op) in trace.ops.iter().enumerate() {
        let pos = pos_of(index);
        let own = trace.value_of_op(index);
        let info = op.opcode.info();
        let name = info.name;

        let descr_ids = op.virtuals.iter().flat_map(|v| {
            let fields = v.fields.iter().map(|(d, _)| *d);
            v.descr.into_iter().chain(fields)
        });
        let virtual_refs = op.fail_args.iter().flatten();
        let virtual_refs = virtual_refs.chain(op.virtuals.iter().flat_map(Virtual::contents));
        let dangling = op.all_args().any(|a| trace.try_arg_type(a).is_none())
            || op
                .descr
                .into_iter()
                .chain(descr_ids)
                .any(|d| d.0 as usize >= trace.num_descrs())
            || virtual_refs
                .into_iter()
                .any(|f| matches!(f, FailArg::Virtual(i) if *i as usize >= op.virtuals.len()));
        if dangling {
            report(
                pos,
                "references to values, constants and descrs of this trace".into(),
                format!("{name} refers to an id that does not exist"),
                Some("a program built this trace with a bad index"),
            );
            continue;
        }

        for arg in op.all_args() {
            if let Arg::Value(v) = arg {
                let dead_at_label = last_label.filter(|&l| {
                    v < trace.value_of_op(l) && !trace.ops[l].args.contains(&Arg::Value(v))
                });
                if let Some(l) = dead_at_label {
                    report(
                        pos,
                        format!(
                            "only values passed through the label on line {}",
                            pos_of(l).line
                        ),
                        format!(
                            "{name} uses '{}', defined before that label",
                            cut(trace.name(v))
                        ),
                        Some("add the value to the label's arguments"),
                    );
                } else if v >= own {
                    report(
                        pos,
                        "arguments defined before their use".into(),
                        format!("{name} uses value #{} defined at or after it", v.0),
                        None,
                    );
                } else if trace.value_type(v) == Type::Void {
                    report(
                        pos,
                        "a value as argument".into(),
                        format!("{name} uses the result of a void op"),
                        None,
                    );
                }
            }
        }

        if !info.arity().accepts(op.args.len()) {
            report(
                pos,
                format!("{} argument(s) for {name}", info.arity()),
                format!("{}", op.args.len()),
                Some(&format!(
                    "signature of {name}: ({})",
                    describe_signature(info.signature)
                )),
            );
        } else {
            for (i, &arg) in op.args.iter().enumerate() {
                let (Some(letter), ty) = (info.arg_letter(i), trace.arg_type(arg)) else {
                    continue;
                };
                if !letter_accepts(letter, ty) {
                    report(
                        pos,
                        format!("argument {} of {name} to be {}", i + 1, letter_name(letter)),
                        format!("a {ty}"),
                        None,
                    );
                }
            }
            if op.opcode == Opcode::GuardValue {
                let (a, b) = (trace.arg_type(op.args[0]), trace.arg_type(op.args[1]));
                if a != b {
                    report(
                        pos,
                        "two arguments of one type for guard_value".into(),
                        format!("{a} and {b}"),
                        None,
                    );
                }
            }
        }

        check_descr(trace, op, pos, &mut report);
        check_virtuals(trace, op, pos, &mut report);

        if op.fail_args.is_some() && !op.opcode.is_guard() {
            report(
                pos,
                format!("no fail arguments: {name} is not a guard"),
                "a [...] list".into(),
                None,
            );
        }
        if options.require_fail_args && op.opcode.is_guard() && op.fail_args.is_none() {
            report(
                pos,
                format!("fail arguments after {name}, such as [i0, p1]"),
                "none".into(),
                Some("optimized traces list what each guard keeps alive; write [] for none"),
            );
        }

        if matches!(op.opcode, Opcode::GuardNoOverflow | Opcode::GuardOverflow) {
            let before = trace.ops[..index]
                .iter()
                .rev()
                .find(|o| o.opcode != Opcode::DebugMergePoint);
            if !before.is_some_and(|o| o.opcode.has(Flags::OVF)) {
                report(
                    pos,
                    format!("{name} right after an *_ovf op"),
                    before.map_or("the start of the trace".into(), |o| {
                        o.opcode.name().to_string()
                    }),
                    Some("the overflow flag is set by int_add_ovf, int_sub_ovf or int_mul_ovf"),
                );
            }
        }

        if op.opcode == Opcode::Label && jumped_to.contains(&index) {
            last_label = Some(index);
        }
        if op.opcode == Opcode::Jump {
            check_jump_target(trace, op, pos, &mut report);
        }
        if op.opcode.is_final() && index + 1 != trace.ops.len() {
            report(
                pos,
                format!("{name} as the last op"),
                "more ops after it".into(),
                None,
            );
        }
    }

    if !options.partial && !trace.ops.last().is_some_and(|op| op.opcode.is_final()) {
        let pos = trace
            .ops
            .len()
            .checked_sub(1)
            .map_or(trace.input_pos, pos_of);
        report(
            pos,
            "the trace to end with jump or finish".into(),
            trace
                .ops
                .last()
                .map_or("no ops".into(), |op| format!("{} last", op.opcode)),
            Some("a trace that stops early can be checked as partial (--partial)"),
        );
    }
    errors
}

/// A jump within the trace passes one value of the right type per input
/// or label argument.
fn check_jump_target(
    trace: &Trace,
    jump: &Op,
    pos: Pos,
    report: &mut impl FnMut(Pos, String, String, Option<&str>),
) {
    let (targets, what): (Vec<Type>, String) = match trace.jump_target(jump) {
        JumpTarget::Outside => return,
        JumpTarget::Start => (trace.inputs.clone(), "the trace's inputs".into()),
        JumpTarget::Label(l) => {
            let label = &trace.ops[l];
            let line = trace.op_pos.get(l).map_or(0, |p| p.line);
            if let Some(k) = label.args.iter().position(|a| matches!(a, Arg::Const(_))) {
                report(
                    pos,
                    "label arguments that are variables".into(),
                    format!(
                        "a constant as argument {} of the label on line {line}",
                        k + 1
                    ),
                    None,
                );
                return;
            }
            // The label was checked before the jump; a broken one was reported.
            let types = label.args.iter().map(|&a| trace.try_arg_type(a));
            let Some(types) = types.collect() else {
                return;
            };
            (types, format!("the label on line {line}"))
        }
    };
    let passed: Vec<Type> = jump.args.iter().map(|&a| trace.arg_type(a)).collect();
    if passed != targets {
        let show = |types: &[Type]| {
            types
                .iter()
                .map(|t| t.letter().to_string())
                .collect::<Vec<_>>()
                .join("")
        };
        report(
            pos,
            format!("jump values matching {what} ({})", show(&targets)),
            format!("({})", show(&passed)),
            Some("one value per target argument, of the same type (i int, r ref, f float)"),
        );
    }
}

fn letter_accepts(letter: u8, ty: Type) -> bool {
    match letter {
        b'i' => ty == Type::Int,
        b'r' => ty == Type::Ref,
        b'f' => ty == Type::Float,
        b's' => ty == Type::Str,
        b'x' => ty != Type::Void,
        _ => matches!(ty, Type::Int | Type::Ref | Type::Float),
    }
}

fn letter_name(letter: u8) -> &'static str {
    match letter {
        b'i' => "an int",
        b'r' => "a ref",
        b'f' => "a float",
        b's' => "a string",
        _ => "an int, ref or float",
    }
}

fn describe_signature(signature: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for b in signature.bytes() {
        match b {
            b'*' => *parts.last_mut().unwrap() += "...",
            b'?' => *parts.last_mut().unwrap() += "?",
            other => parts.push(
                match other {
                    b'i' => "int",
                    b'r' => "ref",
                    b'f' => "float",
                    b's' => "string",
                    _ => "any",
                }
                .into(),
            ),
        }
    }
    parts.join(", ")
}

/// The kind of descr an opcode works with, where there is one rule.
#[derive(Clone, Copy, PartialEq, Debug)]
enum DescrClass {
    Field,
    Array,
    Interior,
    Size,
    Call,
    Loop,
    QuasiImmut,
}

impl DescrClass {
    fn describe(self) -> &'static str {
        match self {
            DescrClass::Field => "a field descr",
            DescrClass::Array => "an array descr",
            DescrClass::Interior => "an interior field descr",
            DescrClass::Size => "a size descr",
            DescrClass::Call => "a call descr",
            DescrClass::Loop => "a loop token",
            DescrClass::QuasiImmut => "a quasi-immutable field descr",
        }
    }
}

fn wanted_descr(opcode: Opcode) -> Option<DescrClass> {
    use Opcode::*;
    Some(match opcode {
        GetfieldGcI | GetfieldGcR | GetfieldGcF | GetfieldRawI | GetfieldRawR | GetfieldRawF
        | SetfieldGc | SetfieldRaw => DescrClass::Field,
        GetarrayitemGcI | GetarrayitemGcR | GetarrayitemGcF | GetarrayitemGcPureI
        | GetarrayitemGcPureR | GetarrayitemGcPureF | GetarrayitemRawI | GetarrayitemRawF
        | SetarrayitemGc | SetarrayitemRaw | ArraylenGc | NewArray | NewArrayClear => {
            DescrClass::Array
        }
        GetinteriorfieldGcI | GetinteriorfieldGcR | GetinteriorfieldGcF | SetinteriorfieldGc
        | SetinteriorfieldRaw => DescrClass::Interior,
        New | NewWithVtable => DescrClass::Size,
        CallAssemblerI | CallAssemblerR | CallAssemblerF | CallAssemblerN => DescrClass::Loop,
        QuasiimmutField => DescrClass::QuasiImmut,
        _ if opcode.has(Flags::CALL) || opcode == RecordKnownResult => DescrClass::Call,
        _ => return None,
    })
}

/// Whether `descr` is of the class wanted (a name without a namespace
/// may be anything).
fn fits(descr: &Descr, wanted: DescrClass) -> bool {
    matches!(
        (&descr.kind, wanted),
        (DescrKind::Named | DescrKind::Other, _)
            | (DescrKind::Field { .. }, DescrClass::Field)
            | (DescrKind::Array { .. }, DescrClass::Array)
            | (DescrKind::InteriorField { .. }, DescrClass::Interior)
            | (DescrKind::Size { .. }, DescrClass::Size)
            | (DescrKind::Call { .. }, DescrClass::Call)
            | (
                DescrKind::Loop { .. } | DescrKind::TargetToken { .. },
                DescrClass::Loop
            )
            | (DescrKind::QuasiImmut(_), DescrClass::QuasiImmut)
    )
}

/// A guard's virtual objects: on a guard with fail arguments, each
/// reached from them, with the descrs its allocation and fields want,
/// characters for strings.
fn check_virtuals(
    trace: &Trace,
    op: &Op,
    pos: Pos,
    report: &mut impl FnMut(Pos, String, String, Option<&str>),
) {
    check_pending(trace, op, pos, report);
    if op.virtuals.is_empty() {
        return;
    }
    if op.fail_args.is_none() {
        report(
            pos,
            "virtual objects only in a guard's fail arguments".into(),
            format!(
                "{} virtual(s) without a fail-argument list",
                op.virtuals.len()
            ),
            None,
        );
        return;
    }
    let mut reached = vec![false; op.virtuals.len()];
    let pending = op.pending.iter().map(|w| &w.value);
    let mut todo: Vec<&FailArg> = op.fail_args.iter().flatten().chain(pending).collect();
    while let Some(item) = todo.pop() {
        if let FailArg::Virtual(i) = *item {
            if !std::mem::replace(&mut reached[i as usize], true) {
                todo.extend(op.virtuals[i as usize].contents());
            }
        }
    }
    for (v, reached) in op.virtuals.iter().zip(reached) {
        let name = format!("virtual {} ({})", v.name, v.opcode.name());
        if !reached {
            report(
                pos,
                "virtuals that the fail arguments or pending writes reach".into(),
                format!("{name}, which nothing refers to"),
                Some("leave it out"),
            );
        }
        let kind = Virtual::kind_of(v.opcode);
        let wanted = match v.opcode {
            Opcode::Newstr | Opcode::Newunicode => None,
            opcode => wanted_descr(opcode),
        };
        match (v.descr, wanted) {
            (None, Some(wanted)) => report(
                pos,
                format!("{} for {name}", wanted.describe()),
                "none".into(),
                None,
            ),
            (Some(d), Some(wanted)) if !fits(trace.descr(d), wanted) => report(
                pos,
                format!("{} for {name}", wanted.describe()),
                cut(&trace.descr(d).text),
                None,
            ),
            (Some(_), None) => report(pos, format!("no descr for {name}"), "a descr".into(), None),
            _ => {}
        }
        for &(field, _) in &v.fields {
            if !fits(trace.descr(field), DescrClass::Field) {
                report(
                    pos,
                    format!("field descrs for the fields of {name}"),
                    cut(&trace.descr(field).text),
                    None,
                );
            }
        }
        if kind == Some(VirtualKind::String) {
            let chars = v.items.iter().all(|item| match item {
                FailArg::Arg(a) => trace.arg_type(*a) == Type::Int,
                FailArg::Hole => true,
                FailArg::Virtual(_) => false,
            });
            if !chars {
                report(
                    pos,
                    format!("characters (ints) as the items of {name}"),
                    "an item that is not an int".into(),
                    None,
                );
            }
        }
    }
}

/// A guard's pending writes: a field descr with no index, an array descr
/// with an integer one, into a reference.
fn check_pending(
    trace: &Trace,
    op: &Op,
    pos: Pos,
    report: &mut impl FnMut(Pos, String, String, Option<&str>),
) {
    for w in &op.pending {
        let descr = trace.descr(w.descr);
        let wanted = match w.index {
            None => DescrClass::Field,
            Some(_) => DescrClass::Array,
        };
        if !fits(descr, wanted) {
            report(
                pos,
                format!("{} for a pending write", wanted.describe()),
                cut(&descr.text),
                Some("setfield_gc takes a field descr, setarrayitem_gc an array descr"),
            );
        }
        if trace.arg_type(w.object) != Type::Ref {
            report(
                pos,
                "a reference as the object of a pending write".into(),
                format!("a {}", trace.arg_type(w.object)),
                None,
            );
        }
        if w.index.is_some_and(|i| trace.arg_type(i) != Type::Int) {
            report(
                pos,
                "an integer index in a pending write".into(),
                "another type".into(),
                None,
            );
        }
    }
}

/// The argument whose type a store's descr fixes.
fn stored_value(op: &Op) -> Option<Arg> {
    use Opcode::*;
    match op.opcode {
        SetfieldGc | SetfieldRaw => op.args.get(1).copied(),
        SetarrayitemGc | SetarrayitemRaw | SetinteriorfieldGc | SetinteriorfieldRaw => {
            op.args.get(2).copied()
        }
        _ => None,
    }
}

fn check_descr(
    trace: &Trace,
    op: &Op,
    pos: Pos,
    report: &mut impl FnMut(Pos, String, String, Option<&str>),
) {
    let name = op.opcode.name();
    let flags = op.opcode.flags();
    let Some(d) = op.descr else {
        if flags.contains(Flags::DESCR) {
            report(
                pos,
                format!("a descr for {name}"),
                "none".into(),
                Some("add descr=... as the last argument"),
            );
        }
        return;
    };
    if !flags.intersects(Flags::DESCR | Flags::DESCR_OPTIONAL) {
        report(
            pos,
            format!("no descr: {name} takes none"),
            "descr=...".into(),
            None,
        );
        return;
    }
    let descr = trace.descr(d);
    if matches!(descr.kind, DescrKind::Named | DescrKind::Other) {
        return;
    }
    let Some(wanted) = wanted_descr(op.opcode) else {
        return;
    };
    if !fits(descr, wanted) {
        report(
            pos,
            format!("{} for {name}", wanted.describe()),
            cut(&descr.text),
            None,
        );
        return;
    }
    let Some(cell_type) = descr.value_type() else {
        return;
    };
    let (what, ty) = match stored_value(op) {
        Some(arg) => ("stored value", trace.arg_type(arg)),
        None if op.opcode.has(Flags::READ) && op.opcode.result_type() != Type::Void => {
            ("result", op.opcode.result_type())
        }
        None => return,
    };
    if ty != cell_type {
        report(
            pos,
            format!("a {cell_type} {what}, as {} says", cut(&descr.text)),
            format!("a {ty}"),
            Some("the descr's letter gives the type: S/U int, P ref, F float"),
        );
    }
}
