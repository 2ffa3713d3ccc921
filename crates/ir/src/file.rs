//! Any trace file: a `PYPYLOG` file, a peer set, or one test-format trace,
//! told apart by their first lines.
//!
//! `parse_file` is strict: the first error stops it. `read_file` reads
//! what it can: in a log or a peer set, a trace section or case that fails
//! to parse is skipped and its error kept in `ReadFile::skipped`; only a
//! single-trace file that fails is an error. The namespace, if any, gives
//! the names of test traces and peer sets their meaning; `PYPYLOG` files
//! describe their own descrs and take none.

use crate::error::ParseError;
use crate::log::{looks_like_log, read_log, Log};
use crate::namespace::Namespace;
use crate::peer::{looks_like_peer, read_peer, PeerCase};
use crate::trace::Trace;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub enum TraceFile {
    Log(Log),
    Peer(Vec<PeerCase>),
    Trace(Box<Trace>),
}

/// A file as far as it could be read.
#[derive(Clone, Debug)]
pub struct ReadFile {
    pub parsed: TraceFile,
    /// The cases or sections that were skipped, in file order.
    pub skipped: Vec<ParseError>,
}

/// Parses a file of any of the three kinds; any error stops it.
pub fn parse_file(text: &str, file: &str) -> Result<TraceFile, ParseError> {
    let mut read = read_file(text, file, None)?;
    match read.skipped.is_empty() {
        true => Ok(read.parsed),
        false => Err(read.skipped.swap_remove(0)),
    }
}

/// Parses a file of any of the three kinds, skipping bad cases and sections.
pub fn read_file(
    text: &str,
    file: &str,
    namespace: Option<Arc<Namespace>>,
) -> Result<ReadFile, ParseError> {
    if looks_like_log(text) {
        let mut log = read_log(text, file);
        let skipped = std::mem::take(&mut log.errors);
        Ok(ReadFile {
            parsed: TraceFile::Log(log),
            skipped,
        })
    } else if looks_like_peer(text) {
        let set = read_peer(text, file, namespace);
        Ok(ReadFile {
            parsed: TraceFile::Peer(set.cases),
            skipped: set.errors,
        })
    } else {
        let trace = crate::parse::parse_trace_with(text, file, namespace)?;
        Ok(ReadFile {
            parsed: TraceFile::Trace(Box::new(trace)),
            skipped: Vec::new(),
        })
    }
}

/// Text from bytes; invalid UTF-8 is an error at its line and column.
pub fn decode(bytes: Vec<u8>, file: &str) -> Result<String, ParseError> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        ParseError {
            file: file.into(),
            line,
            col: (valid.len() - line_start) as u32 + 1,
            expected: "text in UTF-8".into(),
            found: format!(
                "the byte 0x{:02x}, which is not valid UTF-8",
                e.as_bytes()[valid.len()]
            ),
            hint: Some("PyPy writes its logs in UTF-8; was the file converted or cut?".into()),
        }
    })
}
