//! Any trace file: a `PYPYLOG` file, a peer set, or one test-format trace,
//! told apart by their first lines.

use crate::error::ParseError;
use crate::log::{looks_like_log, parse_log, Log};
use crate::peer::{looks_like_peer, parse_peer, PeerCase};
use crate::trace::Trace;

#[derive(Clone, Debug)]
pub enum TraceFile {
    Log(Log),
    Peer(Vec<PeerCase>),
    Trace(Box<Trace>),
}

/// Parses a file of any of the three kinds.
pub fn parse_file(text: &str, file: &str) -> Result<TraceFile, ParseError> {
    if looks_like_log(text) {
        parse_log(text, file).map(TraceFile::Log)
    } else if looks_like_peer(text) {
        parse_peer(text, file).map(TraceFile::Peer)
    } else {
        crate::parse::parse_trace(text, file).map(|t| TraceFile::Trace(Box::new(t)))
    }
}
