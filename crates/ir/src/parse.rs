//! Reading traces in PyPy's optimizer-test format.
//!
//! One line at a time: an input line `[i0, p1, f2]`, then op lines of the form
//! `[+OFFSET:] [NAME =] opname(ARG, ..., [descr=DESCR]) [[FAILARG, ...]]`,
//! with `#` comments, blank lines and `--end of the loop--` allowed anywhere.
//! A variable's type comes from its first letter (`i`, `p`/`r`, `f`).
//! Constants: integers (decimal or `0x` hex, with an optional `/ci` tag as
//! in the seeds' traces), floats, `ConstClass(name)`, `ConstPtr(name)`,
//! `ConstPtr(null)`, `NULL` and quoted strings.
//!
//! `TraceParser` is fed lines by the whole-file readers here and in
//! `log.rs`. It resolves names as it goes, so a use before the definition
//! is reported where it happens. Arity, types and descr kinds are left to
//! the checker, which sees traces from every source.

use crate::descr::Descr;
use crate::error::{show_found, ParseError};
use crate::opcode::{Opcode, Type, OP_TABLE};
use crate::trace::{Arg, Const, DescrId, Op, Pos, Trace, ValueId};
use std::collections::HashMap;

/// Parses a whole file holding one trace in test format.
pub fn parse_trace(text: &str, file: &str) -> Result<Trace, ParseError> {
    let mut parser = TraceParser::new(file);
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
    text: &'a str,
    pos: usize,
    line: u32,
}

impl<'a> TraceParser<'a> {
    pub fn new(file: &'a str) -> TraceParser<'a> {
        TraceParser {
            file,
            trace: Trace::new(),
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
        Cursor {
            file: self.file,
            names: &self.names,
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
                found: format!("'{name}', already defined on line {first}"),
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
                format!("unknown operation '{op_name}'"),
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
                let arg = cur.arg(false)?.expect("only fail args may be None");
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
            let mut fail_args = Vec::new();
            cur.skip_ws();
            if !cur.eat("]") {
                loop {
                    cur.skip_ws();
                    fail_args.push(cur.arg(true)?);
                    cur.skip_ws();
                    if cur.eat("]") {
                        break;
                    }
                    cur.expect(",", "',' or ']' in the fail arguments")?;
                }
            }
            op.fail_args = Some(fail_args);
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

fn name_letter(ty: Type) -> char {
    match ty {
        Type::Ref => 'p',
        other => other.letter(),
    }
}

fn is_end_marker(body: &str) -> bool {
    body.starts_with("--end of the loop--")
}

/// The line without a trailing `#` comment (a `#` inside quotes is text).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, b) in line.bytes().enumerate() {
        match (quote, b) {
            (None, b'#') => return &line[..i],
            (None, b'\'' | b'"') => quote = Some(b),
            (Some(q), _) if b == q => quote = None,
            _ => {}
        }
    }
    line
}

/// "did you mean" for an unknown op name: the closest names in the table.
fn unknown_op_hint(name: &str) -> String {
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

impl<'a> Cursor<'a, '_> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
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

    /// Reads an argument; `None` (a hole) is allowed in fail arguments only.
    fn arg(&mut self, in_fail_args: bool) -> Result<Option<Arg>, ParseError> {
        let start = self.pos;
        let what =
            "an argument: a variable, a number, ConstClass(..), ConstPtr(..), NULL or a string";
        let constant = match self.peek() {
            Some(b'0'..=b'9' | b'-' | b'+' | b'.') => self.number()?,
            Some(q @ (b'\'' | b'"')) => {
                self.pos += 1;
                let body_start = self.pos;
                loop {
                    match self.peek() {
                        None => {
                            return Err(self.error(
                                "the closing quote of a string",
                                "the end of the line".into(),
                            ))
                        }
                        Some(b'\\') => self.pos += 2,
                        Some(b) if b == q => break,
                        Some(_) => self.pos += 1,
                    }
                }
                let body = &self.text[body_start..self.pos.min(self.text.len())];
                self.pos += 1;
                Const::Str(body.into())
            }
            _ => {
                let word = self.ident(what)?;
                match word {
                    "ConstClass" | "ConstPtr" => {
                        self.expect("(", &format!("'(' after {word}"))?;
                        let inner = self.take_while(|b| b != b')' && b != b',' && b != b' ');
                        if inner.is_empty() {
                            return Err(self.error("a constant's name", show_found(self.rest())));
                        }
                        self.expect(")", &format!("')' to close {word}("))?;
                        match (word, inner) {
                            ("ConstPtr", "null") => Const::Null,
                            ("ConstPtr", _) => Const::Ptr(inner.into()),
                            _ => Const::Class(inner.into()),
                        }
                    }
                    "NULL" => Const::Null,
                    "None" if in_fail_args => return Ok(None),
                    "inf" | "nan" => Const::float(word.parse().unwrap()),
                    _ => {
                        let &(id, _) = self.names.get(word).ok_or_else(|| {
                            self.error_at(
                                start,
                                "a variable defined on an earlier line",
                                format!("'{word}', which is not defined before this use"),
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

    fn number(&mut self) -> Result<Const, ParseError> {
        let start = self.pos;
        let text = self.take_while(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        let bad = |c: &Cursor| {
            c.error_at(
                start,
                "a number",
                show_found(text),
                "integers are decimal or 0x hex; floats look like 1.5 or -2e10",
            )
        };
        let (negative, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let int = if let Some(hex) = digits.strip_prefix("0x") {
            u64::from_str_radix(hex, 16).ok()
        } else if digits.bytes().all(|b| b.is_ascii_digit()) {
            digits.parse::<u64>().ok()
        } else {
            None
        };
        let constant = match int {
            Some(magnitude) if !negative || magnitude <= 1 << 63 => {
                let value = magnitude as i64;
                Const::Int(if negative {
                    value.wrapping_neg()
                } else {
                    value
                })
            }
            Some(_) => return Err(bad(self)),
            None => match text.parse::<f64>() {
                Ok(value) => Const::float(value),
                Err(_) => return Err(bad(self)),
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
                b')' | b',' | b' ' if depth == 0 => break,
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
        let descr = Descr::parse(text)
            .map_err(|why| self.error_at(start, "a descr", show_found(text), &why))?;
        Ok(self.trace.add_descr(descr))
    }
}
