//! Reading the peer conformance sets: PyPy's test cases as data.
//!
//! The file is a list of blocks:
//!
//! ```text
//! ### test_file.py:LINE test_name (optimize_loop[, unrolled])
//! # key: value            (optional, any number: what the harness gives)
//! # call_pure_results: F, ARGS -> R   (a pure call's result the harness gives)
//! --- ops
//! <input trace>
//! --- expected
//! <expected optimized trace (the loop body, for unrolled cases)>
//! --- preamble            (optional: PyPy's peeled first iteration)
//! <trace>
//! --- short               (optional: PyPy's short preamble)
//! <trace>
//! ```
//!
//! One bad case does not sink the file: a case that fails to parse is
//! kept as an error with its location, and reading goes on at the next
//! `###`. Traces resolve names through the namespace, if one is given.

use crate::error::{show_found, ParseError};
use crate::namespace::Namespace;
use crate::parse::TraceParser;
use crate::trace::{Arg, Const, Trace};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct PeerCase {
    /// The text after `###`.
    pub name: String,
    pub line: u32,
    /// `# key: value` lines, in order.
    pub meta: Vec<(String, String)>,
    pub ops: Trace,
    pub expected: Trace,
    pub preamble: Option<Trace>,
    pub short: Option<Trace>,
    /// What the harness says pure calls return (`# call_pure_results`).
    pub pure_results: Vec<PureResult>,
}

/// The result of a pure call of these arguments (the function first), as
/// a test harness gives it: PyPy's `call_pure_results`.
#[derive(Clone, Debug, PartialEq)]
pub struct PureResult {
    pub args: Vec<Const>,
    pub result: Const,
}

impl PeerCase {
    /// A case PyPy optimizes with loop peeling (`unrolled` in its name).
    pub fn unrolled(&self) -> bool {
        self.name.contains("unrolled")
    }

    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Every case that could be read, and an error for each that could not.
#[derive(Clone, Debug, Default)]
pub struct PeerSet {
    pub cases: Vec<PeerCase>,
    pub errors: Vec<ParseError>,
}

/// True if the text looks like a peer file.
pub fn looks_like_peer(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.starts_with("### "))
}

/// The parts of a case, in the order they must come.
const PARTS: [&str; 4] = ["ops", "expected", "preamble", "short"];

/// A case being read.
struct Open<'a> {
    name: String,
    line: u32,
    meta: Vec<(String, String)>,
    pure_results: Vec<PureResult>,
    /// Finished parts, by index into `PARTS`.
    done: [Option<Trace>; 4],
    /// The part being read and its parser.
    reading: Option<(usize, TraceParser<'a>)>,
}

impl<'a> Open<'a> {
    fn finish_part(&mut self, line: u32) -> Result<(), ParseError> {
        if let Some((part, parser)) = self.reading.take() {
            self.done[part] = Some(parser.finish(line)?);
        }
        Ok(())
    }

    fn finish(mut self, line: u32, file: &str) -> Result<PeerCase, ParseError> {
        self.finish_part(line)?;
        let [ops, expected, preamble, short] = self.done;
        match (ops, expected) {
            (Some(ops), Some(expected)) => Ok(PeerCase {
                name: self.name,
                line: self.line,
                meta: self.meta,
                ops,
                expected,
                preamble,
                short,
                pure_results: self.pure_results,
            }),
            _ => Err(case_error(
                file,
                self.line,
                "'--- ops' and '--- expected', each with a trace, in this case",
                &format!("a case that ends on line {line} without them"),
            )),
        }
    }
}

/// `F, ARGS -> R`: constants as a trace writes them, read by the trace
/// parser (as the arguments of a `finish`), so names resolve alike.
fn pure_result(
    text: &str,
    line_no: u32,
    file: &str,
    namespace: &Option<Arc<Namespace>>,
) -> Result<PureResult, ParseError> {
    let fault = |found: &str| ParseError {
        file: file.into(),
        line: line_no,
        col: 1,
        expected: "'# call_pure_results: F, ARGS -> R', each a constant".into(),
        found: show_found(found),
        hint: Some("for example '# call_pure_results: 123, 4 -> 5'".into()),
    };
    let (args, result) = text.rsplit_once("->").ok_or_else(|| fault(text))?;
    let finish = format!("finish({args}, {result})");
    let mut parser = TraceParser::with_namespace(file, namespace.clone());
    parser.line(line_no, "[]")?;
    parser.line(line_no, &finish)?;
    let trace = parser.finish(line_no)?;
    let mut consts: Vec<Const> = Vec::new();
    for arg in trace.ops.first().map_or(&[][..], |op| &op.args) {
        match arg {
            Arg::Const(c) => consts.push(trace.constant(*c).clone()),
            Arg::Value(_) => return Err(fault(text)),
        }
    }
    let result = consts.pop().ok_or_else(|| fault(text))?;
    Ok(PureResult {
        args: consts,
        result,
    })
}

fn case_error(file: &str, line: u32, expected: &str, found: &str) -> ParseError {
    ParseError {
        file: file.into(),
        line,
        col: 1,
        expected: expected.into(),
        found: show_found(found),
        hint: Some(
            "a case is '### name', optional '# key: value' lines, '--- ops' and a trace, \
             '--- expected' and a trace, then optionally '--- preamble' and '--- short'"
                .into(),
        ),
    }
}

/// Parses every case of a peer file; the first bad case is an error.
pub fn parse_peer(
    text: &str,
    file: &str,
    namespace: Option<Arc<Namespace>>,
) -> Result<Vec<PeerCase>, ParseError> {
    let mut set = read_peer(text, file, namespace);
    match set.errors.is_empty() {
        true => Ok(set.cases),
        false => Err(set.errors.swap_remove(0)),
    }
}

/// Parses every case of a peer file, skipping bad ones (see `PeerSet`).
pub fn read_peer(text: &str, file: &str, namespace: Option<Arc<Namespace>>) -> PeerSet {
    let mut set = PeerSet::default();
    let mut current: Option<Open> = None;
    // After an error, lines are skipped up to the next case.
    let mut skipping = false;
    let mut last = 0;
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        last = line_no;
        if let Some(name) = line.strip_prefix("### ") {
            if let Some(open) = current.take() {
                match open.finish(line_no, file) {
                    Ok(case) => set.cases.push(case),
                    Err(e) => set.errors.push(e),
                }
            }
            skipping = false;
            current = Some(Open {
                name: name.trim().into(),
                line: line_no,
                meta: Vec::new(),
                pure_results: Vec::new(),
                done: [None, None, None, None],
                reading: None,
            });
            continue;
        }
        if skipping {
            continue;
        }
        let result = step(&mut current, line, line_no, file, &namespace);
        if let Err(e) = result {
            set.errors.push(e);
            current = None;
            skipping = true;
        }
    }
    if let Some(open) = current {
        match open.finish(last + 1, file) {
            Ok(case) => set.cases.push(case),
            Err(e) => set.errors.push(e),
        }
    }
    set
}

/// Reads one line that is not a `###` line.
fn step<'a>(
    current: &mut Option<Open<'a>>,
    line: &'a str,
    line_no: u32,
    file: &'a str,
    namespace: &Option<Arc<Namespace>>,
) -> Result<(), ParseError> {
    let trimmed = line.trim();
    let Some(open) = current else {
        if trimmed.is_empty() {
            return Ok(());
        }
        return Err(case_error(
            file,
            line_no,
            "'### name' to start a case",
            line,
        ));
    };
    if let Some(part) = trimmed.strip_prefix("--- ") {
        let Some(index) = PARTS.iter().position(|p| *p == part) else {
            return Err(case_error(
                file,
                line_no,
                "'--- ops', '--- expected', '--- preamble' or '--- short'",
                line,
            ));
        };
        // Parts are read one after another: before the first, none is open.
        let next_expected = open.reading.as_ref().map_or(0, |(part, _)| part + 1);
        if index < next_expected || (index > next_expected && index <= 1) {
            return Err(case_error(
                file,
                line_no,
                &format!("the parts in the order {}", PARTS.join(", ")),
                line,
            ));
        }
        open.finish_part(line_no)?;
        open.reading = Some((index, TraceParser::with_namespace(file, namespace.clone())));
        return Ok(());
    }
    match &mut open.reading {
        Some((_, parser)) => parser.line(line_no, line),
        None => {
            if trimmed.is_empty() {
                return Ok(());
            }
            let meta = trimmed
                .strip_prefix('#')
                .and_then(|m| m.split_once(':'))
                .filter(|(key, _)| {
                    let key = key.trim();
                    !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
            match meta {
                Some((key, value)) => {
                    let (key, value) = (key.trim(), value.trim());
                    if key == "call_pure_results" {
                        let result = pure_result(value, line_no, file, namespace)?;
                        open.pure_results.push(result);
                    }
                    open.meta.push((key.into(), value.into()));
                    Ok(())
                }
                None if trimmed.starts_with('#') => Ok(()),
                None => Err(case_error(
                    file,
                    line_no,
                    "'# key: value' or '--- ops' after the case name",
                    line,
                )),
            }
        }
    }
}
