//! Reading the peer conformance set: pairs of (input, expected) traces.
//!
//! The file is a list of blocks:
//!
//! ```text
//! ### test_file.py:LINE test_name (optimize_loop)
//! --- ops
//! <input trace>
//! --- expected
//! <expected optimized trace>
//! ```

use crate::error::{show_found, ParseError};
use crate::parse::TraceParser;
use crate::trace::Trace;

#[derive(Clone, Debug)]
pub struct PeerCase {
    /// The text after `###`.
    pub name: String,
    pub line: u32,
    pub ops: Trace,
    pub expected: Trace,
}

/// True if the text looks like a peer file.
pub fn looks_like_peer(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.starts_with("### "))
}

/// Parses every case of a peer file.
pub fn parse_peer(text: &str, file: &str) -> Result<Vec<PeerCase>, ParseError> {
    let mut cases = Vec::new();
    // (name, line, ops once read, parser of the part being read)
    let mut current: Option<(String, u32, Option<Trace>, Option<TraceParser>)> = None;
    let error = |line: u32, expected: &str, found: &str| ParseError {
        file: file.into(),
        line,
        col: 1,
        expected: expected.into(),
        found: show_found(found),
        hint: Some("a case is '### name', '--- ops', a trace, '--- expected', a trace".into()),
    };
    let mut finish = |current: Option<(String, u32, Option<Trace>, Option<TraceParser>)>,
                      line: u32|
     -> Result<(), ParseError> {
        if let Some((name, start, ops, parser)) = current {
            match (ops, parser) {
                (Some(ops), Some(parser)) => cases.push(PeerCase {
                    name,
                    line: start,
                    ops,
                    expected: parser.finish(line)?,
                }),
                _ => {
                    return Err(error(
                        line,
                        "'--- expected' and a trace",
                        "the end of the case",
                    ))
                }
            }
        }
        Ok(())
    };
    let mut last = 0;
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        last = line_no;
        if let Some(name) = line.strip_prefix("### ") {
            finish(current.take(), line_no)?;
            current = Some((name.trim().into(), line_no, None, None));
        } else if line.trim() == "--- ops" {
            match &mut current {
                Some((_, _, None, parser @ None)) => *parser = Some(TraceParser::new(file)),
                _ => return Err(error(line_no, "'### name' before '--- ops'", line)),
            }
        } else if line.trim() == "--- expected" {
            match &mut current {
                Some((_, _, ops @ None, parser @ Some(_))) => {
                    *ops = Some(parser.take().unwrap().finish(line_no)?);
                    *parser = Some(TraceParser::new(file));
                }
                _ => {
                    return Err(error(
                        line_no,
                        "'--- ops' and a trace before '--- expected'",
                        line,
                    ))
                }
            }
        } else if let Some((_, _, _, Some(parser))) = &mut current {
            parser.line(line_no, line)?;
        } else if !line.trim().is_empty() {
            return Err(error(line_no, "'### name' to start a case", line));
        }
    }
    finish(current, last + 1)?;
    Ok(cases)
}
