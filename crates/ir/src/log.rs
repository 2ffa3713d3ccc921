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
            // One pair of parentheses wraps the name, which may hold
            // its own: `((unpack_array: no get_printable_location))`.
            let name = name
                .strip_prefix('(')
                .and_then(|n| n.strip_suffix(')'))
                .unwrap_or(name);
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
    /// The recorded section was there but could not be read.
    pub recorded_failed: bool,
    /// The optimized section was there but could not be read.
    pub optimized_failed: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Log {
    pub pairs: Vec<TracePair>,
    /// The sections that could not be read (see `read_log`).
    pub errors: Vec<ParseError>,
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

/// Parses a whole log; the first bad trace section is an error.
pub fn parse_log(text: &str, file: &str) -> Result<Log, ParseError> {
    let mut log = read_log(text, file);
    match log.errors.is_empty() {
        true => Ok(log),
        false => Err(log.errors.swap_remove(0)),
    }
}

/// Parses a whole log, skipping bad trace sections: each one is kept in
/// `Log::errors` with its location, and the rest of the log is read.
pub fn read_log(text: &str, file: &str) -> Log {
    let mut log = Log::default();
    // The open section; its parser is `None` once a line of it failed.
    let mut open: Option<(Section, u32, Option<Header>, Option<TraceParser>)> = None;
    let mut last_line = 0;
    let unclosed =
        |section: Section, start: u32, line: u32, found: String, hint: &str| ParseError {
            file: file.into(),
            line,
            col: 1,
            expected: format!(
                "the end of the {} section opened on line {start}",
                section_name(section)
            ),
            found,
            hint: Some(hint.into()),
        };
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        last_line = line_no;
        if let Some((name, opening)) = section_marker(line) {
            let section = Section::from_name(name);
            if let Some((kind, start, ..)) = &open {
                if section == Some(*kind) && !opening {
                    let (section, line, header, parser) = open.take().unwrap();
                    let trace = parser.map(|p| p.finish(line_no));
                    add_to_pairs(&mut log, section, header, line, trace);
                    continue;
                }
                if section.is_some() || opening {
                    // A section left open: the log was cut or two were mixed.
                    let (kind, start) = (*kind, *start);
                    log.errors.push(unclosed(
                        kind,
                        start,
                        line_no,
                        show_found(line),
                        "the log may be truncated or two logs may be mixed",
                    ));
                    let (section, line, header, _) = open.take().unwrap();
                    add_to_pairs(&mut log, section, header, line, None);
                }
            }
            if let (Some(section), true, None) = (section, opening, &open) {
                open = Some((section, line_no, None, Some(TraceParser::new(file))));
            }
            continue;
        }
        if let Some((_, _, header, parser_slot)) = &mut open {
            let Some(parser) = parser_slot else { continue };
            if header.is_none() && !parser.started() && line.starts_with('#') {
                *header = Some(Header::parse(line));
                continue;
            }
            if let Err(e) = parser.line(line_no, line) {
                log.errors.push(e);
                *parser_slot = None;
            }
        }
    }
    if let Some((section, start, header, _)) = open {
        log.errors.push(unclosed(
            section,
            start,
            last_line + 1,
            "the end of the file".into(),
            "the log is truncated",
        ));
        add_to_pairs(&mut log, section, header, start, None);
    }
    log.pairs
        .retain(|p| p.recorded.is_some() || p.optimized.is_some());
    log
}

fn section_name(section: Section) -> &'static str {
    match section {
        Section::Recorded => "jit-log-noopt",
        Section::OptLoop => "jit-log-opt-loop",
        Section::OptBridge => "jit-log-opt-bridge",
    }
}

/// Files a finished section. A section that failed to parse (`trace` is
/// `None` or an error) still takes its place, so that an optimized trace is
/// never paired with the wrong recorded one.
fn add_to_pairs(
    log: &mut Log,
    section: Section,
    header: Option<Header>,
    line: u32,
    trace: Option<Result<Trace, ParseError>>,
) {
    let trace = match trace {
        Some(Ok(mut trace)) => {
            if section == Section::Recorded {
                trace.recorded = 0..trace.ops.len();
            }
            Some(LogTrace {
                section,
                header,
                line,
                trace,
            })
        }
        Some(Err(e)) => {
            log.errors.push(e);
            None
        }
        None => None,
    };
    if section == Section::Recorded {
        log.pairs.push(TracePair {
            recorded_failed: trace.is_none(),
            recorded: trace,
            ..TracePair::default()
        });
        return;
    }
    match log.pairs.last_mut() {
        Some(pair) if pair.optimized.is_none() && !pair.optimized_failed => {
            pair.optimized_failed = trace.is_none();
            pair.optimized = trace;
        }
        _ => log.pairs.push(TracePair {
            optimized_failed: trace.is_none(),
            optimized: trace,
            ..TracePair::default()
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
        assert!(matches!(
            Header::parse("# Loop 4 ((unpack_array: no get_printable_location)) : loop with 51 ops"),
            Header::Loop { name, .. } if name == "(unpack_array: no get_printable_location)"
        ));
    }

    #[test]
    fn recorded_class_tests_of_own_allocations() {
        let log = |body: &str| {
            let text = format!(
                "[1] {{jit-log-noopt\n# Traced loop or bridge with 9 ops\n[p0]\n{body}\
                 finish(p0)\n[2] jit-log-noopt}}\n"
            );
            let parsed = parse_log(&text, "t.log").unwrap();
            parsed.pairs[0].recorded.as_ref().unwrap().trace.clone()
        };
        let boxed = "p1 = new_with_vtable(descr=<SizeDescr 16>)\n\
                     guard_class(p1, ConstClass(W_IntObject))\n";
        let trace = log(boxed);
        assert_eq!(trace.recorded, 0..3);
        let found = trace.recorded_classes();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, 0);
        assert_eq!(found[0].1, crate::Const::Class("W_IntObject".into()));
        // A test of an input says nothing of what the trace allocates.
        let other = log("guard_class(p0, ConstClass(W_IntObject))\n");
        assert!(other.recorded_classes().is_empty());
        // Two ops of one descr text, two classes: each op's own (a
        // second test of the same object is not the first).
        let two = format!(
            "{boxed}p2 = new_with_vtable(descr=<SizeDescr 16>)\n\
             guard_class(p2, ConstClass(W_FloatObject))\n\
             guard_class(p1, ConstClass(W_BoolObject))\n"
        );
        let found = log(&two).recorded_classes();
        let float = crate::Const::Class("W_FloatObject".into());
        assert_eq!(found, [(0, found[0].1.clone()), (2, float)]);
        assert_eq!(found[0].1, crate::Const::Class("W_IntObject".into()));
        // Not recorded: nothing.
        let mut written = trace.clone();
        written.recorded = 0..0;
        assert!(written.recorded_classes().is_empty());
    }

    #[test]
    fn recorded_field_accesses_show_structs() {
        let text = "[1] {jit-log-noopt\n# Traced loop or bridge with 9 ops\n[p0]\n\
            p1 = getfield_gc_r(p0, descr=<FieldP A.inst_next 16>)\n\
            p2 = getfield_gc_r(p0, descr=<FieldP A.inst_other 24>)\n\
            i3 = getfield_gc_i(p1, descr=<FieldS B.inst_y 8>)\n\
            setfield_gc(ConstPtr(ptr4), i3, descr=<FieldS A.inst_x 8>)\n\
            i5 = getfield_gc_i(ConstPtr(ptr6), descr=<FieldS A.inst_x 8>)\n\
            i7 = arraylen_gc(p2, descr=<ArrayS 8>)\nescape_n(ConstPtr(ptr8))\n\
            finish(p0)\n[2] jit-log-noopt}\n";
        let trace = parse_log(text, "t.log").unwrap().pairs[0]
            .recorded
            .clone()
            .unwrap()
            .trace;
        // Constants with a field used (not one only passed on; nor what a
        // field holds, whose fields were used).
        let found: Vec<String> = (trace.recorded_structs().iter())
            .map(|s| s.to_string())
            .collect();
        assert_eq!(found, ["ptr4", "ptr6"]);
        let mut written = trace.clone();
        written.recorded = 0..0;
        assert!(written.recorded_structs().is_empty());
    }
}
