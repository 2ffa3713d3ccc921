//! Reading the files named on the command line, of any kind (test-format
//! trace, `PYPYLOG` file, peer set; `-` for standard input; a directory
//! stands for its `.log`, `.trace` and `.txt` files), and walking the
//! traces inside them in one way for every command.

use std::io::Read;
use std::path::Path;
use traceopt_ir::log::{Header, Section};
use traceopt_ir::{parse_file, Trace, TraceFile};

/// Why a command stopped: the message (already located) and the exit code.
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    pub fn input(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 2,
        }
    }

    /// A failure whose details were already printed.
    pub fn silent(code: u8) -> Failure {
        Failure {
            message: String::new(),
            code,
        }
    }
}

pub struct Input {
    pub file: String,
    pub parsed: TraceFile,
}

/// One trace of an input, with what the commands need to know about it.
pub struct Item<'a> {
    /// `file:line` and what the trace is, for people.
    pub label: String,
    pub trace: &'a Trace,
    /// PyPy's optimized output (its guards carry fail arguments).
    pub optimized: bool,
    /// A test-suite fragment that may stop before jump/finish.
    pub fragment: bool,
}

pub fn read_input(path: &str) -> Result<Input, Failure> {
    let text = if path == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Failure::input(format!("<stdin>: cannot read: {e}")))?;
        text
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| Failure::input(format!("{path}: cannot read: {e}")))?
    };
    let file = if path == "-" { "<stdin>" } else { path };
    let parsed = parse_file(&text, file).map_err(|e| Failure::input(e.to_string()))?;
    Ok(Input {
        file: file.into(),
        parsed,
    })
}

/// Reads every file, expanding directories (sorted by name).
pub fn read_inputs(paths: &[String]) -> Result<Vec<Input>, Failure> {
    let mut files = Vec::new();
    for path in paths {
        if Path::new(path).is_dir() {
            let entries =
                std::fs::read_dir(path).map_err(|e| Failure::input(format!("{path}: {e}")))?;
            let mut found: Vec<String> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension()
                        .is_some_and(|x| x == "log" || x == "trace" || x == "txt")
                })
                .map(|p| p.display().to_string())
                .collect();
            if found.is_empty() {
                return Err(Failure::input(format!(
                    "{path}: no .log, .trace or .txt files in this directory"
                )));
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    files.iter().map(|f| read_input(f)).collect()
}

impl Input {
    pub fn traces(&self) -> Vec<Item<'_>> {
        let file = &self.file;
        match &self.parsed {
            TraceFile::Trace(trace) => vec![Item {
                label: file.clone(),
                trace,
                optimized: false,
                fragment: false,
            }],
            TraceFile::Peer(cases) => cases
                .iter()
                .flat_map(|case| {
                    [(&case.ops, "ops"), (&case.expected, "expected")].map(|(trace, part)| Item {
                        label: format!("{file}:{} {} ({part})", case.line, case.name),
                        trace,
                        optimized: false,
                        fragment: true,
                    })
                })
                .collect(),
            TraceFile::Log(log) => log
                .traces()
                .map(|t| Item {
                    label: format!(
                        "{file}:{} {}",
                        t.line,
                        describe(t.section, t.header.as_ref(), true)
                    ),
                    trace: &t.trace,
                    optimized: t.section != Section::Recorded,
                    fragment: false,
                })
                .collect(),
        }
    }
}

/// "recorded", "loop 3 (name)" (the name only if `long`), "bridge out of
/// guard 0x…".
pub fn describe(section: Section, header: Option<&Header>, long: bool) -> String {
    match (section, header) {
        (Section::Recorded, _) => "recorded".into(),
        (
            _,
            Some(Header::Loop {
                number,
                name,
                entry_bridge,
                ..
            }),
        ) => {
            let kind = if *entry_bridge {
                "entry bridge"
            } else {
                "loop"
            };
            if long {
                format!("{kind} {number} ({name})")
            } else {
                format!("{kind} {number}")
            }
        }
        (_, Some(Header::Bridge { guard, .. })) => format!("bridge out of guard {guard:#x}"),
        (Section::OptLoop, _) => "loop".into(),
        (Section::OptBridge, _) => "bridge".into(),
    }
}
