//! Reading traces in PyPy's optimizer-test format.
//!
//! One line at a time: an input line `[i0, p1, f2]`, then op lines of the form
//! `[+OFFSET:] [NAME =] opname(ARG, ..., [descr=DESCR]) [[FAILARG, ...]]`,
//! with `#` comments, blank lines and `--end of the loop--` allowed anywhere.
//!
//! A guard's fail arguments may name virtual objects (allocations the
//! optimizer removed), described after `where` on the same line, each as
//! the allocation it stands for and its contents; they may refer to each
//! other, cycles included:
//!
//! ```text
//! guard_true(i3) [i1, p5] where p5 = new_with_vtable(descr=nodesize) {valuedescr=i2, nextdescr=p6}, p6 = new_array(descr=arraydescr) [i2, None, p5]
//! ```
//!
//! Structs (`new`, `new_with_vtable`) list fields as `descr=value`;
//! arrays (`new_array`, `new_array_clear`) and strings (`newstr()`,
//! `newunicode()`) list their items, whose number is the length (`None`:
//! an item never written).
//! A variable's type comes from its first letter (`i`, `p`/`r`, `f`).
//! Constants: integers (decimal, or `0x` hex up to 64 bits, with an
//! optional `/ci` tag as in the seeds' traces; a decimal outside the 64-bit
//! signed range is an error, never wrapped), floats (`1.5`, `-2e10`, `inf`,
//! `nan`), `ConstClass(name)`, `ConstPtr(name)`, `ConstPtr(null)`,
//! `ConstInt(name)`, `NULL`, and strings: the text of `debug_merge_point`
//! in quotes, string objects `s"..."` and `u"..."` (a plain quoted string
//! where an op wants a ref is a string object too, as in PyPy's tests).
//!
//! With a namespace (`namespace.rs`), a bare descr name resolves to its
//! full descr and every constant name must be defined there; without one,
//! names are kept as they are.
//!
//! `TraceParser` is fed lines by the whole-file readers here and in
//! `log.rs`. It resolves names as it goes, so a use before the definition
//! is reported where it happens. Arity, types and descr kinds are left to
//! the checker, which sees traces from every source.

use crate::descr::{Descr, DescrKind};
use crate::error::{cut, show_found, ParseError};
use crate::namespace::{NamedConst, Namespace};
use crate::opcode::{Opcode, Type, OP_TABLE};
use crate::trace::{
    Arg, Const, DescrId, FailArg, Op, PendingWrite, Pos, Trace, ValueId, Virtual, VirtualKind,
};
use std::collections::HashMap;
use std::sync::Arc;

/// Parses a whole file holding one trace in test format.
pub fn parse_trace(text: &str, file: &str) -> Result<Trace, ParseError> {
    parse_trace_with(text, file, None)
}

/// Like `parse_trace`, with the names of a namespace.
pub fn parse_trace_with(
    text: &str,
    file: &str,
    namespace: Option<Arc<Namespace>>,
) -> Result<Trace, ParseError> {
    let mut parser = TraceParser::with_namespace(file, namespace);
    for (i, line) in text.lines().enumerate() {
        parser.line(i as u32 + 1, line)?;
    }
    parser.finish(text.lines().count() as u32 + 1)
}

/// Builds one trace from its lines.
pub struct TraceParser<'a> {
    file: &'a str,
    trace: Trace,
    names: HashMap<&'a str, (ValueId, u32)>,
    seen_inputs: bool,
}

/// Reads one line; interns constants and descrs into the trace as it goes.
struct Cursor<'a, 'p> {
    file: &'a str,
    names: &'p HashMap<&'a str, (ValueId, u32)>,
    trace: &'p mut Trace,
    namespace: Option<Arc<Namespace>>,
    text: &'a str,
    pos: usize,
    line: u32,
}

impl<'a> TraceParser<'a> {
    pub fn new(file: &'a str) -> TraceParser<'a> {
        TraceParser::with_namespace(file, None)
    }

    /// A parser that resolves names through `namespace`.
    pub fn with_namespace(file: &'a str, namespace: Option<Arc<Namespace>>) -> TraceParser<'a> {
        let mut trace = Trace::new();
        trace.namespace = namespace;
        TraceParser {
            file,
            trace,
            names: HashMap::new(),
            seen_inputs: false,
        }
    }

    /// True once the input line or an op has been read.
    pub fn started(&self) -> bool {
        self.seen_inputs
    }

    /// Reads one line (numbered from 1 in its file).
    pub fn line(&mut self, line_no: u32, text: &'a str) -> Result<(), ParseError> {
        let body = strip_comment(text).trim();
        if body.is_empty() || is_end_marker(body) {
            return Ok(());
        }
        let indent = text.len() - text.trim_start().len();
        if !self.seen_inputs {
            self.seen_inputs = true;
            if body.starts_with('[') {
                return self.inputs(line_no, text, indent);
            }
        }
        self.op_line(line_no, text, indent)
    }

    /// The finished trace. `end_line` is where a missing input line is reported.
    pub fn finish(self, end_line: u32) -> Result<Trace, ParseError> {
        if !self.seen_inputs {
            return Err(ParseError {
                file: self.file.into(),
                line: end_line,
                col: 1,
                expected: "a trace: an input line such as '[i0, p1]' and ops".into(),
                found: "no trace".into(),
                hint: None,
            });
        }
        Ok(self.trace)
    }

    fn cursor(&mut self, line: u32, text: &'a str, pos: usize) -> Cursor<'a, '_> {
        let namespace = self.trace.namespace.clone();
        Cursor {
            file: self.file,
            names: &self.names,
            namespace,
            trace: &mut self.trace,
            text,
            pos,
            line,
        }
    }

    fn inputs(&mut self, line_no: u32, text: &'a str, indent: usize) -> Result<(), ParseError> {
        let mut cur = self.cursor(line_no, text, indent);
        cur.expect("[", "'[' to open the input arguments")?;
        let mut inputs = Vec::new();
        cur.skip_ws();
        if !cur.eat("]") {
            loop {
                cur.skip_ws();
                let col = cur.pos;
                let name = cur.ident("an input argument such as i0 or p1")?;
                let ty = Type::from_name_prefix(name).ok_or_else(|| {
                    cur.error_at(
                        col,
                        "a name starting with i, p, r or f",
                        show_found(name),
                        "the first letter gives the type: i int, p or r ref, f float",
                    )
                })?;
                inputs.push((name, ty, col));
                cur.skip_ws();
                if cur.eat("]") {
                    break;
                }
                cur.expect(",", "',' or ']'")?;
            }
        }
        cur.expect_end()?;
        self.trace.input_pos = Pos {
            line: line_no,
            col: indent as u32 + 1,
        };
        for (name, ty, col) in inputs {
            let id = self.trace.add_input(ty, name);
            self.define(name, id, line_no, col)?;
        }
        Ok(())
    }

    fn define(
        &mut self,
        name: &'a str,
        id: ValueId,
        line: u32,
        col: usize,
    ) -> Result<(), ParseError> {
        if let Some(&(_, first)) = self.names.get(name) {
            return Err(ParseError {
                file: self.file.into(),
                line,
                col: col as u32 + 1,
                expected: "a name not used before (each value is defined once)".into(),
                found: format!("'{}', already defined on line {first}", cut(name)),
                hint: Some("rename one of the two definitions".into()),
            });
        }
        self.names.insert(name, (id, line));
        Ok(())
    }

    fn op_line(&mut self, line_no: u32, text: &'a str, indent: usize) -> Result<(), ParseError> {
        let mut cur = self.cursor(line_no, text, indent);
        let offset = if cur.eat("+") {
            let digits = cur.take_while(|b| b.is_ascii_digit());
            let offset = digits
                .parse()
                .map_err(|_| cur.error("a code offset such as +12:", show_found(digits)))?;
            cur.expect(":", "':' after the code offset")?;
            cur.skip_ws();
            if is_end_marker(strip_comment(cur.rest()).trim()) {
                return Ok(());
            }
            Some(offset)
        } else {
            None
        };
        let first_col = cur.pos;
        let first = cur.ident("an operation such as 'i1 = int_add(i0, 1)'")?;
        cur.skip_ws();
        let (result, name_col, op_name, op_col) = if cur.eat("=") {
            cur.skip_ws();
            let op_col = cur.pos;
            let op_name = cur.ident("an operation name after '='")?;
            (Some(first), first_col, op_name, op_col)
        } else {
            (None, first_col, first, first_col)
        };
        let opcode = Opcode::from_name(op_name).ok_or_else(|| {
            cur.error_at(
                op_col,
                "an operation name",
                format!("unknown operation '{}'", cut(op_name)),
                &unknown_op_hint(op_name),
            )
        })?;
        cur.skip_ws();
        cur.expect("(", "'(' after the operation name")?;
        let mut op = Op::new(opcode, Vec::new());
        op.offset = offset;
        cur.skip_ws();
        if !cur.eat(")") {
            loop {
                cur.skip_ws();
                if cur.rest().starts_with("descr=") {
                    cur.pos += "descr=".len();
                    op.descr = Some(cur.descr()?);
                    cur.skip_ws();
                    cur.expect(")", "')' after the descr (it comes last)")?;
                    break;
                }
                // An argument past the signature is left to the checker's
                // arity rule; read it as any value.
                let letter = opcode.info().arg_letter(op.args.len()).unwrap_or(b'a');
                let arg = cur.arg(Some(letter))?.expect("only fail args may be None");
                op.args.push(arg);
                cur.skip_ws();
                if cur.eat(")") {
                    break;
                }
                cur.expect(",", "',' or ')' after an argument")?;
            }
        }
        cur.skip_ws();
        if cur.eat("[") {
            let mut virtuals = Virtuals::default();
            op.fail_args = Some(cur.fail_args(&mut virtuals, "fail arguments")?.into());
            cur.skip_ws();
            if cur.eat_word("where") {
                cur.where_clause(&mut virtuals)?;
            }
            cur.skip_ws();
            if cur.eat_word("writes") {
                op.pending = cur.writes_clause(&mut virtuals)?.into();
            }
            op.virtuals = virtuals.finish(&cur)?.into();
        }
        cur.expect_end()?;
        let pos = Pos {
            line: line_no,
            col: op_col as u32 + 1,
        };
        let result_type = opcode.result_type();
        match result {
            Some(name) => {
                let named = Type::from_name_prefix(name);
                if result_type == Type::Void || named != Some(result_type) {
                    let expected = if result_type == Type::Void {
                        format!("no result name: {op_name} produces no value")
                    } else {
                        format!(
                            "a result name starting with '{}' ({op_name} gives {result_type})",
                            name_letter(result_type)
                        )
                    };
                    return Err(self
                        .cursor(line_no, text, name_col)
                        .error(&expected, show_found(name)));
                }
                let id = self.trace.push(op, name, pos);
                self.define(name, id, line_no, name_col)
            }
            None => {
                self.trace.push(op, "", pos);
                Ok(())
            }
        }
    }
}

fn describe_const(c: &NamedConst) -> &'static str {
    match c {
        NamedConst::Class(_) => "a class (ConstClass)",
        NamedConst::Ptr(_) | NamedConst::Local { .. } => "an object (ConstPtr)",
        NamedConst::TypeId { .. } => "a type id (ConstInt)",
    }
}

fn wanted_const(word: &str) -> &'static str {
    match word {
        "ConstPtr" => "constant object",
        "ConstClass" => "class",
        _ => "named integer",
    }
}

fn name_letter(ty: Type) -> char {
    match ty {
        Type::Ref => 'p',
        other => other.letter(),
    }
}

fn is_end_marker(body: &str) -> bool {
    body.starts_with("--end of the loop--")
}

/// The line up to its first `#`: enough to tell a line that holds only a
/// comment (or nothing) and to read what follows an op, since every `#`
/// inside an op's strings is met before the op ends.
fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("")
}

/// Whether the quote at byte `at` can close a string: only where an
/// argument may end, before `,`, `)`, `]` or the end of the line.
fn quote_closes(line: &str, at: usize) -> bool {
    let after = line[at + 1..].trim_start_matches([' ', '\t', '\r']);
    after.is_empty() || after.starts_with([',', ')', ']'])
}

/// "did you mean" for an unknown op name: the closest names in the table.
fn unknown_op_hint(name: &str) -> String {
    if name.len() > 64 {
        return "`traceopt ops` lists the operations traceopt knows".into();
    }
    let mut scored: Vec<(usize, &str)> = OP_TABLE
        .iter()
        .map(|info| (edit_distance(name, info.name), info.name))
        .collect();
    scored.sort();
    let close: Vec<&str> = scored
        .iter()
        .take_while(|(d, _)| *d <= 3)
        .take(3)
        .map(|(_, n)| *n)
        .collect();
    if close.is_empty() {
        "`traceopt ops` lists the operations traceopt knows".into()
    } else {
        format!("did you mean {}?", close.join(", "))
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The virtual objects of one guard while its line is read: names in the
/// order they are first met (a virtual's index), and each description once
/// read.
#[derive(Default)]
struct Virtuals<'a> {
    names: Vec<(&'a str, usize)>,
    described: Vec<Option<Virtual>>,
}

impl<'a> Virtuals<'a> {
    fn index(&mut self, name: &'a str, col: usize) -> u32 {
        match self.names.iter().position(|(n, _)| *n == name) {
            Some(i) => i as u32,
            None => {
                self.names.push((name, col));
                self.described.push(None);
                self.names.len() as u32 - 1
            }
        }
    }

    /// Every virtual named, described.
    fn finish(self, cur: &Cursor) -> Result<Vec<Virtual>, ParseError> {
        self.described
            .into_iter()
            .zip(&self.names)
            .map(|(v, &(name, col))| {
                v.ok_or_else(|| {
                    cur.error_at(
                        col,
                        "a value defined on an earlier line, or a virtual described after 'where'",
                        format!("'{}', which is neither", cut(name)),
                        "a virtual object is described on the guard's line: \
                         [p5] where p5 = new(descr=sizedescr) {fielddescr=i1}",
                    )
                })
            })
            .collect()
    }
}

impl<'a> Cursor<'a, '_> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    /// Eats `word` if it is a whole word here.
    fn eat_word(&mut self, word: &str) -> bool {
        let after = self.text.as_bytes().get(self.pos + word.len()).copied();
        let whole = !after.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
        whole && self.eat(word)
    }

    /// A list of resume items up to its `]` (the `[` is read): fail
    /// arguments, or the items of a virtual array or string.
    fn fail_args(
        &mut self,
        virtuals: &mut Virtuals<'a>,
        what: &str,
    ) -> Result<Vec<FailArg>, ParseError> {
        let mut items = Vec::new();
        self.skip_ws();
        if self.eat("]") {
            return Ok(items);
        }
        loop {
            self.skip_ws();
            items.push(self.fail_arg(virtuals)?);
            self.skip_ws();
            if self.eat("]") {
                return Ok(items);
            }
            self.expect(",", &format!("',' or ']' in the {what}"))?;
        }
    }

    /// One resume item: a value, a constant, `None`, or the name of a
    /// virtual (any name that is not a value defined before).
    fn fail_arg(&mut self, virtuals: &mut Virtuals<'a>) -> Result<FailArg, ParseError> {
        let start = self.pos;
        if let Ok(word) = self.ident("") {
            let keyword = matches!(
                word,
                "ConstClass" | "ConstPtr" | "ConstInt" | "NULL" | "None" | "inf" | "nan"
            );
            let string = matches!(word, "s" | "u") && matches!(self.peek(), Some(b'"' | b'\''));
            if !keyword && !string && !self.names.contains_key(word) {
                return Ok(FailArg::Virtual(virtuals.index(word, start)));
            }
        }
        self.pos = start;
        Ok(self.arg(None)?.map_or(FailArg::Hole, FailArg::Arg))
    }

    /// `setfield_gc(OBJ, VALUE, descr=D)` or `setarrayitem_gc(OBJ, INDEX,
    /// VALUE, descr=D)`, comma-separated, to the end of the line.
    fn writes_clause(
        &mut self,
        virtuals: &mut Virtuals<'a>,
    ) -> Result<Vec<PendingWrite>, ParseError> {
        let mut writes = Vec::new();
        loop {
            self.skip_ws();
            let at = self.pos;
            let name = self.ident("setfield_gc or setarrayitem_gc")?;
            let item = match name {
                "setfield_gc" => false,
                "setarrayitem_gc" => true,
                other => {
                    return Err(self.error_at(
                        at,
                        "setfield_gc or setarrayitem_gc",
                        show_found(other),
                        "a guard's pending writes are field or array item stores",
                    ))
                }
            };
            self.skip_ws();
            self.expect("(", "'(' after the write's name")?;
            let operand = |cur: &mut Self, what: &str| -> Result<Arg, ParseError> {
                cur.skip_ws();
                let arg = cur.arg(None)?;
                cur.skip_ws();
                cur.expect(",", what)?;
                arg.ok_or_else(|| {
                    cur.error_at(
                        at,
                        "an object or index",
                        "None".into(),
                        "only the value may be None",
                    )
                })
            };
            let object = operand(self, "',' after the object")?;
            let index = if item {
                Some(operand(self, "',' after the index")?)
            } else {
                None
            };
            self.skip_ws();
            let value = self.fail_arg(virtuals)?;
            self.skip_ws();
            self.expect(",", "',' and the write's descr")?;
            self.skip_ws();
            self.expect("descr=", "descr= and the field or array descr")?;
            let descr = self.descr()?;
            self.skip_ws();
            self.expect(")", "')' after the descr")?;
            writes.push(PendingWrite {
                object,
                index,
                value,
                descr,
            });
            self.skip_ws();
            if !self.eat(",") {
                return Ok(writes);
            }
        }
    }

    /// `NAME = opname(descr=D) CONTENTS, ...` to the end of the line.
    fn where_clause(&mut self, virtuals: &mut Virtuals<'a>) -> Result<(), ParseError> {
        loop {
            self.skip_ws();
            let name_at = self.pos;
            let name = self.ident("the name of a virtual object")?;
            if self.names.contains_key(name) {
                return Err(self.error_at(
                    name_at,
                    "the name of a virtual object",
                    format!("'{}', a value defined before", cut(name)),
                    "a virtual stands for an allocation the trace does not do: give it a name no value has",
                ));
            }
            let index = virtuals.index(name, name_at) as usize;
            if virtuals.described[index].is_some() {
                return Err(self.error_at(
                    name_at,
                    "a virtual not described before on this line",
                    format!("'{}' again", cut(name)),
                    "describe each virtual once",
                ));
            }
            self.skip_ws();
            self.expect("=", "'=' after the virtual's name")?;
            self.skip_ws();
            let op_at = self.pos;
            let op_name =
                self.ident("the allocation a virtual stands for, such as new_with_vtable")?;
            let opcode = Opcode::from_name(op_name);
            let Some((opcode, kind)) = opcode.and_then(|o| Some((o, Virtual::kind_of(o)?))) else {
                return Err(self.error_at(
                    op_at,
                    "new, new_with_vtable, new_array, new_array_clear, newstr or newunicode",
                    show_found(op_name),
                    "a virtual is one of these allocations",
                ));
            };
            self.skip_ws();
            self.expect("(", "'(' after the allocation's name")?;
            self.skip_ws();
            let descr = if self.eat("descr=") {
                Some(self.descr()?)
            } else {
                None
            };
            self.skip_ws();
            self.expect(")", "')': a virtual's allocation takes only its descr")?;
            self.skip_ws();
            let mut virtual_ = Virtual {
                name: name.into(),
                opcode,
                descr,
                fields: Vec::new(),
                items: Vec::new(),
                site: None,
            };
            if kind == VirtualKind::Struct {
                self.expect("{", "'{' and the virtual's fields (descr=value, ...)")?;
                self.skip_ws();
                if !self.eat("}") {
                    loop {
                        self.skip_ws();
                        let field = self.descr()?;
                        self.skip_ws();
                        self.expect("=", "'=' and the field's value")?;
                        self.skip_ws();
                        virtual_.fields.push((field, self.fail_arg(virtuals)?));
                        self.skip_ws();
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",", "',' or '}' in the virtual's fields")?;
                    }
                }
            } else {
                self.expect("[", "'[' and the virtual's items")?;
                virtual_.items = self.fail_args(virtuals, "virtual's items")?;
            }
            virtuals.described[index] = Some(virtual_);
            self.skip_ws();
            if !self.eat(",") {
                return Ok(());
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(&f) {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    fn error(&self, expected: &str, found: String) -> ParseError {
        ParseError {
            file: self.file.into(),
            line: self.line,
            col: self.pos as u32 + 1,
            expected: expected.into(),
            found,
            hint: None,
        }
    }

    fn error_at(&self, pos: usize, expected: &str, found: String, hint: &str) -> ParseError {
        ParseError {
            col: pos as u32 + 1,
            hint: Some(hint.into()),
            ..self.error(expected, found)
        }
    }

    fn expect(&mut self, s: &str, what: &str) -> Result<(), ParseError> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.error(what, show_found(self.rest())))
        }
    }

    fn expect_end(&mut self) -> Result<(), ParseError> {
        self.skip_ws();
        let rest = strip_comment(self.rest()).trim();
        if rest.is_empty() {
            Ok(())
        } else {
            Err(self.error("the end of the line (or a # comment)", show_found(rest)))
        }
    }

    fn ident(&mut self, what: &str) -> Result<&'a str, ParseError> {
        let starts_ok = self
            .peek()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
        let word = if starts_ok {
            self.take_while(|b| b.is_ascii_alphanumeric() || b == b'_')
        } else {
            ""
        };
        if word.is_empty() {
            Err(self.error(what, show_found(self.rest())))
        } else {
            Ok(word)
        }
    }

    /// Reads an argument of an op (`letter` is its signature letter) or,
    /// with `None`, a fail argument, which may be a hole (`None`). A quoted
    /// string is text where the op wants text (`debug_merge_point`), else
    /// a string object: PyPy's tests write `call_r(0, "xy", ...)`.
    fn arg(&mut self, letter: Option<u8>) -> Result<Option<Arg>, ParseError> {
        let in_fail_args = letter.is_none();
        let start = self.pos;
        let what = "an argument: a variable, a number, ConstClass(..), ConstPtr(..), \
                    ConstInt(..), NULL or a string";
        let next = self.text.as_bytes().get(self.pos + 1).copied();
        let constant = match (self.peek(), next) {
            (Some(b'0'..=b'9' | b'-' | b'+' | b'.'), _) => self.number()?,
            (Some(b'\'' | b'"'), _) => match letter {
                Some(b's' | b'x') => Const::Str(self.quoted()?.into()),
                _ => Const::String {
                    unicode: false,
                    text: self.quoted()?.into(),
                },
            },
            (Some(p @ (b's' | b'u')), Some(b'"' | b'\'')) => {
                self.pos += 1;
                Const::String {
                    unicode: p == b'u',
                    text: self.quoted()?.into(),
                }
            }
            _ => {
                let word = self.ident(what)?;
                match word {
                    "ConstClass" | "ConstPtr" | "ConstInt" => self.named_const(word)?,
                    "NULL" => Const::Null,
                    "None" if in_fail_args => return Ok(None),
                    "inf" | "nan" => Const::float(word.parse().unwrap()),
                    _ => {
                        let &(id, _) = self.names.get(word).ok_or_else(|| {
                            self.error_at(
                                start,
                                "a variable defined on an earlier line",
                                format!("'{}', which is not defined before this use", cut(word)),
                                "every variable must be an input argument or the result of an earlier op",
                            )
                        })?;
                        return Ok(Some(Arg::Value(id)));
                    }
                }
            }
        };
        Ok(Some(Arg::Const(self.trace.add_const(constant))))
    }

    /// The text between quotes (either kind). PyPy writes the text of
    /// `debug_merge_point` raw, quotes and backslashes included (`'f;it's
    /// "odd". c:\dir\x.py:2-4~#12 FOR_ITER'`), so a quote closes the string
    /// only where an argument may end: before `,`, `)`, `]` or the end of
    /// the line.
    fn quoted(&mut self) -> Result<&'a str, ParseError> {
        let open = self.pos;
        let quote = self.text.as_bytes()[open];
        let close = (open + 1..self.text.len())
            .find(|&at| self.text.as_bytes()[at] == quote && quote_closes(self.text, at))
            .ok_or_else(|| {
                self.error_at(
                    open,
                    "the closing quote of a string",
                    "the end of the line".into(),
                    "strings close on the line they open, before ',', ')' or ']'",
                )
            })?;
        self.pos = close + 1;
        Ok(&self.text[open + 1..close])
    }

    /// `ConstPtr(name)`, `ConstClass(name)`, `ConstInt(name)`: with a
    /// namespace, the name must be defined there as that kind of constant.
    fn named_const(&mut self, word: &str) -> Result<Const, ParseError> {
        self.expect("(", &format!("'(' after {word}"))?;
        let name_at = self.pos;
        let inner = self.take_while(|b| b != b')' && b != b',' && b != b' ');
        if inner.is_empty() {
            return Err(self.error("a constant's name", show_found(self.rest())));
        }
        self.expect(")", &format!("')' to close {word}("))?;
        let constant = match (word, inner) {
            ("ConstPtr", "null") => return Ok(Const::Null),
            ("ConstPtr", _) => Const::Ptr(inner.into()),
            ("ConstInt", _) => match inner.parse::<i64>() {
                Ok(value) => return Ok(Const::Int(value)),
                Err(_) => Const::IntName(inner.into()),
            },
            _ => Const::Class(inner.into()),
        };
        let Some(ns) = &self.namespace else {
            return Ok(constant);
        };
        let fits = matches!(
            (ns.constant(inner), &constant),
            (
                Some(NamedConst::Ptr(_) | NamedConst::Local { .. }),
                Const::Ptr(_)
            ) | (Some(NamedConst::Class(_)), Const::Class(_))
                | (Some(NamedConst::TypeId { .. }), Const::IntName(_))
        );
        if fits {
            return Ok(constant);
        }
        let found = match ns.constant(inner) {
            None => format!("'{}', which {} does not define", cut(inner), ns.file),
            Some(other) => format!(
                "'{}', which {} defines as {}",
                cut(inner),
                ns.file,
                describe_const(other)
            ),
        };
        Err(self.error_at(
            name_at,
            &format!("the name of a {}", wanted_const(word)),
            found,
            "constant names come from the namespace file (--descrs, or descrs.txt beside the input)",
        ))
    }

    fn number(&mut self) -> Result<Const, ParseError> {
        let start = self.pos;
        let text = self.take_while(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        let bad = |c: &Cursor, why: &str| c.error_at(start, "a number", show_found(text), why);
        let (negative, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        // An integer's magnitude (if it fits in 64 bits) and the largest it
        // may have; `None` for what is no integer (a float).
        let integer = if let Some(hex) = digits.strip_prefix("0x") {
            // Hex is a 64-bit word: 0xffffffffffffffff is -1.
            let limit = if negative { 1 << 63 } else { u64::MAX };
            Some((u64::from_str_radix(hex, 16).ok(), limit))
        } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            let limit = if negative { 1 << 63 } else { i64::MAX as u64 };
            Some((digits.parse::<u64>().ok(), limit))
        } else {
            None
        };
        let constant = match integer {
            Some((Some(m), limit)) if m <= limit => {
                let value = m as i64;
                Const::Int(if negative {
                    value.wrapping_neg()
                } else {
                    value
                })
            }
            Some(_) => {
                return Err(bad(
                    self,
                    "an integer must fit in 64 bits: -9223372036854775808 to \
                     9223372036854775807, or 0x hex of at most 16 digits",
                ))
            }
            None => match text.parse::<f64>() {
                Ok(value) => Const::float(value),
                Err(_) => {
                    return Err(bad(
                        self,
                        "integers are decimal or 0x hex; floats look like 1.5 or -2e10",
                    ))
                }
            },
        };
        if matches!(constant, Const::Int(_)) {
            self.eat("/ci");
        }
        Ok(constant)
    }

    /// Reads a descr and interns it (parsing its text only the first time).
    fn descr(&mut self) -> Result<DescrId, ParseError> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut depth = 0usize;
        let mut end = self.pos;
        while end < bytes.len() {
            match bytes[end] {
                b'<' | b'(' => depth += 1,
                b'>' | b')' if depth > 0 => depth -= 1,
                b')' | b',' | b' ' | b'=' | b'}' if depth == 0 => break,
                _ => {}
            }
            end += 1;
            if depth == 0 && bytes[end - 1] == b'>' {
                break;
            }
        }
        let text = &self.text[start..end];
        self.pos = end;
        if let Some(id) = self.trace.find_descr(text) {
            return Ok(id);
        }
        let mut descr = Descr::parse(text)
            .map_err(|why| self.error_at(start, "a descr", show_found(text), &why))?;
        if let (DescrKind::Named, Some(ns)) = (&descr.kind, &self.namespace) {
            descr = ns.descr(text).cloned().ok_or_else(|| {
                let found = match ns.constant(text) {
                    Some(c) => format!(
                        "'{}', which {} defines as {}",
                        cut(text),
                        ns.file,
                        describe_const(c)
                    ),
                    None => format!("'{}', which {} does not define", cut(text), ns.file),
                };
                self.error_at(
                    start,
                    "a descr name",
                    found,
                    "descr names come from the namespace file (--descrs, or descrs.txt beside the input)",
                )
            })?;
        }
        Ok(self.trace.add_descr(descr))
    }
}
