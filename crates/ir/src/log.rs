//! Reading `PYPYLOG` files.
//!
//! A log is a sequence of sections, each opened by `[TIMESTAMP] {name` and
//! closed by `[TIMESTAMP] name}`. Three hold traces: `jit-log-noopt` (a trace
//! as the tracer recorded it), `jit-log-opt-loop` and `jit-log-opt-bridge`
//! (PyPy's optimized loop or bridge). Other sections are skipped. Inside a
//! trace section the first `#` line is the header; the rest is test format
//! (see `parse.rs`), with line numbers counted in the whole file.
//!
//! Pairing: a recorded trace starts a pair; the next optimized section, if
//! it comes before the next recorded trace, is its optimized form. PyPy
//! sometimes records a trace twice (a loop it could not close is retried
//! without unrolling): the first of the two then has no optimized form.

use crate::error::{show_found, ParseError};
use crate::parse::TraceParser;
use crate::trace::Trace;

#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// `jit-log-noopt`: as recorded, before optimization.
    Recorded,
    /// `jit-log-opt-loop`
    OptLoop,
    /// `jit-log-opt-bridge`
    OptBridge,
}

impl Section {
    fn from_name(name: &str) -> Option<Section> {
        match name {
            "jit-log-noopt" => Some(Section::Recorded),
            "jit-log-opt-loop" => Some(Section::OptLoop),
            "jit-log-opt-bridge" => Some(Section::OptBridge),
            _ => None,
        }
    }
}

/// What a trace section's header line says.
#[derive(Clone, PartialEq, Debug, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Header {
    /// `# Traced loop or bridge with N ops`
    Recorded { ops: usize },
    /// `# Loop N (NAME) : loop with N ops` or `... : entry bridge with N ops`
    Loop {
        number: i64,
        name: String,
        entry_bridge: bool,
        ops: usize,
    },
    /// `# bridge out of Guard 0x... with N ops`
    Bridge { guard: u64, ops: usize },
    /// Any other comment.
    Other { text: String },
}

impl Header {
    fn parse(text: &str) -> Header {
        let body = text.trim_start_matches('#').trim();
        let other = || Header::Other { text: body.into() };
        let Some((head, count)) = body.rsplit_once(" with ") else {
            return other();
        };
        let Some(ops) = count
            .strip_suffix(" ops")
            .and_then(|n| n.parse::<usize>().ok())
        else {
            return other();
        };
        if head == "Traced loop or bridge" {
            return Header::Recorded { ops };
        }
        if let Some(guard) = head.strip_prefix("bridge out of Guard 0x") {
            if let Ok(guard) = u64::from_str_radix(guard, 16) {
                return Header::Bridge { guard, ops };
            }
        }
        if let Some(rest) = head.strip_prefix("Loop ") {
            let (number, rest) = rest.split_once(' ').unwrap_or((rest, ""));
            let (name, kind) = rest.rsplit_once(" : ").unwrap_or(("", rest));
            let name = name.trim_start_matches('(').trim_end_matches(')');
            if let (Ok(number), "loop" | "entry bridge") = (number.parse(), kind) {
                return Header::Loop {
                    number,
                    name: name.into(),
                    entry_bridge: kind == "entry bridge",
                    ops,
                };
            }
        }
        other()
    }

    /// The op count the header announces, if it gives one.
    pub fn ops(&self) -> Option<usize> {
        match self {
            Header::Recorded { ops } | Header::Loop { ops, .. } | Header::Bridge { ops, .. } => {
                Some(*ops)
            }
            Header::Other { .. } => None,
        }
    }
}

/// One trace section of a log.
#[derive(Clone, Debug)]
pub struct LogTrace {
    pub section: Section,
    pub header: Option<Header>,
    /// The line of the section's opening `{`.
    pub line: u32,
    pub trace: Trace,
}

/// A recorded trace and PyPy's optimized form of it; at least one is present.
#[derive(Clone, Debug, Default)]
pub struct TracePair {
    pub recorded: Option<LogTrace>,
    pub optimized: Option<LogTrace>,
}

#[derive(Clone, Debug, Default)]
pub struct Log {
    pub pairs: Vec<TracePair>,
}

impl Log {
    pub fn traces(&self) -> impl Iterator<Item = &LogTrace> {
        self.pairs
            .iter()
            .flat_map(|p| p.recorded.iter().chain(p.optimized.iter()))
    }
}

/// `[3ad6ac3e006] {jit-log-noopt` gives `("jit-log-noopt", true)`,
/// `[3ad6ac9e60c] jit-log-noopt}` gives `("jit-log-noopt", false)`.
fn section_marker(line: &str) -> Option<(&str, bool)> {
    let rest = line.strip_prefix('[')?;
    let (stamp, rest) = rest.split_once("] ")?;
    if !stamp.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let rest = rest.trim_end();
    if let Some(name) = rest.strip_prefix('{') {
        Some((name, true))
    } else {
        rest.strip_suffix('}').map(|name| (name, false))
    }
}

/// The `.log` files of a directory, sorted by name (as the corpus keeps
/// its `PYPYLOG` files).
pub fn log_files(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut logs = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|x| x == "log") {
            logs.push(path);
        }
    }
    logs.sort();
    Ok(logs)
}

/// True if the text looks like a `PYPYLOG` file rather than a single trace.
pub fn looks_like_log(text: &str) -> bool {
    text.lines().take(50).any(|l| section_marker(l).is_some())
}

/// Parses a whole log.
pub fn parse_log(text: &str, file: &str) -> Result<Log, ParseError> {
    let mut log = Log::default();
    let mut open: Option<(Section, u32, Option<Header>, TraceParser)> = None;
    let mut last_line = 0;
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        last_line = line_no;
        if let Some((name, opening)) = section_marker(line) {
            let section = Section::from_name(name);
            match (&mut open, section, opening) {
                (None, Some(section), true) => {
                    open = Some((section, line_no, None, TraceParser::new(file)));
                }
                (Some((kind, ..)), Some(closing), false) if *kind == closing => {
                    let (section, line, header, parser) = open.take().unwrap();
                    let trace = parser.finish(line_no)?;
                    add_to_pairs(
                        &mut log,
                        LogTrace {
                            section,
                            header,
                            line,
                            trace,
                        },
                    );
                }
                (Some((kind, start, ..)), _, _) => {
                    return Err(ParseError {
                        file: file.into(),
                        line: line_no,
                        col: 1,
                        expected: format!(
                            "the end of the {} section opened on line {start}",
                            section_name(*kind)
                        ),
                        found: show_found(line),
                        hint: Some("the log may be truncated or two logs may be mixed".into()),
                    });
                }
                _ => {}
            }
            continue;
        }
        if let Some((_, _, header, parser)) = &mut open {
            if header.is_none() && !parser.started() && line.starts_with('#') {
                *header = Some(Header::parse(line));
                continue;
            }
            parser.line(line_no, line)?;
        }
    }
    if let Some((section, start, ..)) = open {
        return Err(ParseError {
            file: file.into(),
            line: last_line + 1,
            col: 1,
            expected: format!(
                "the end of the {} section opened on line {start}",
                section_name(section)
            ),
            found: "the end of the file".into(),
            hint: Some("the log is truncated".into()),
        });
    }
    Ok(log)
}

fn section_name(section: Section) -> &'static str {
    match section {
        Section::Recorded => "jit-log-noopt",
        Section::OptLoop => "jit-log-opt-loop",
        Section::OptBridge => "jit-log-opt-bridge",
    }
}

fn add_to_pairs(log: &mut Log, trace: LogTrace) {
    if trace.section == Section::Recorded {
        log.pairs.push(TracePair {
            recorded: Some(trace),
            optimized: None,
        });
        return;
    }
    match log.pairs.last_mut() {
        Some(pair) if pair.optimized.is_none() => pair.optimized = Some(trace),
        _ => log.pairs.push(TracePair {
            recorded: None,
            optimized: Some(trace),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            Header::parse("# Traced loop or bridge with 62 ops"),
            Header::Recorded { ops: 62 }
        );
        assert_eq!(
            Header::parse(
                "# Loop 1 (cached_lengths;collatz.py:28-36~#48 LOAD_FAST) : loop with 88 ops"
            ),
            Header::Loop {
                number: 1,
                name: "cached_lengths;collatz.py:28-36~#48 LOAD_FAST".into(),
                entry_bridge: false,
                ops: 88
            }
        );
        assert_eq!(
            Header::parse("# bridge out of Guard 0x7ffff4036e00 with 12 ops"),
            Header::Bridge {
                guard: 0x7ffff4036e00,
                ops: 12
            }
        );
        assert!(matches!(Header::parse("# hello"), Header::Other { .. }));
    }
}
