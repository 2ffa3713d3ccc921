//! Reading the files named on the command line, of any kind (test-format
//! trace, `PYPYLOG` file, peer set; `-` for standard input; a directory
//! stands for its `.log`, `.trace` and `.txt` files), and walking the
//! traces inside them in one way for every command.
//!
//! Names in test traces and peer sets mean what the namespace says: the
//! file given by `--descrs`, else a `descrs.txt` beside the input.
//!
//! One bad case does not sink a file: a case or log section that fails to
//! parse, or whose traces the checker rejects, is reported on stderr with
//! its location and left out, and the rest is processed. Such skips are
//! counted, and the program then ends with exit code 2 (`skipped`).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use traceopt_ir::log::{Header, Section};
use traceopt_ir::{check, decode, read_file, CheckOptions, Namespace, Trace, TraceFile};

/// The namespace file given by `--descrs`, if any (set once by `main`).
static DESCRS: OnceLock<Option<PathBuf>> = OnceLock::new();
/// Namespaces read so far, by path.
static NAMESPACES: LazyLock<Mutex<HashMap<PathBuf, Arc<Namespace>>>> =
    LazyLock::new(Default::default);
/// How many cases and sections were skipped as malformed.
static SKIPPED: AtomicUsize = AtomicUsize::new(0);

/// Sets the namespace file every command uses (`--descrs`).
pub fn set_descrs(path: Option<PathBuf>) {
    let _ = DESCRS.set(path);
}

/// How many cases and log sections were skipped.
pub fn skipped() -> usize {
    SKIPPED.load(Ordering::Relaxed)
}

fn skip(message: impl std::fmt::Display) {
    eprintln!("{message}");
    eprintln!("  (skipped; the rest of the file is processed, and the exit code will be 2)");
    SKIPPED.fetch_add(1, Ordering::Relaxed);
}

/// The namespace for an input file: `--descrs`, else `descrs.txt` beside it.
fn namespace_for(path: &str) -> Result<Option<Arc<Namespace>>, Failure> {
    let explicit = DESCRS.get().cloned().flatten();
    let file = match explicit {
        Some(file) => file,
        None if path == "-" => return Ok(None),
        None => {
            let beside = Path::new(path).with_file_name("descrs.txt");
            if !beside.is_file() || Path::new(path).file_name() == Some("descrs.txt".as_ref()) {
                return Ok(None);
            }
            beside
        }
    };
    let mut cache = NAMESPACES.lock().unwrap();
    if let Some(ns) = cache.get(&file) {
        return Ok(Some(ns.clone()));
    }
    let shown = file.display().to_string();
    let bytes = std::fs::read(&file).map_err(|e| {
        Failure::input(format!(
            "{shown}: cannot read the namespace file: {e}\n  hint: --descrs names a file of \
             'NAME = KIND FACTS' lines, such as ../shared/peer/heap/descrs.txt"
        ))
    })?;
    let text = decode(bytes, &shown).map_err(|e| Failure::input(e.to_string()))?;
    let ns = Arc::new(Namespace::parse(&text, &shown).map_err(|e| Failure::input(e.to_string()))?);
    cache.insert(file, ns.clone());
    Ok(Some(ns))
}

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

/// Reads one file; malformed cases and sections of it are skipped (see
/// the module comment), and so are those the checker rejects.
pub fn read_input(path: &str) -> Result<Input, Failure> {
    let mut input = read_input_unchecked(path)?;
    input.drop_unchecked();
    Ok(input)
}

/// Reads one file, skipping cases and sections that do not parse only
/// (for `traceopt check`, which reports what the checker finds itself).
pub fn read_input_unchecked(path: &str) -> Result<Input, Failure> {
    let bytes = if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::input(format!("<stdin>: cannot read: {e}")))?;
        bytes
    } else {
        std::fs::read(path).map_err(|e| Failure::input(format!("{path}: cannot read: {e}")))?
    };
    let file = if path == "-" { "<stdin>" } else { path };
    let text = decode(bytes, file).map_err(|e| Failure::input(e.to_string()))?;
    let namespace = namespace_for(path)?;
    let read = read_file(&text, file, namespace).map_err(|e| Failure::input(e.to_string()))?;
    for error in read.skipped {
        skip(error);
    }
    Ok(Input {
        file: file.into(),
        parsed: read.parsed,
    })
}

/// Reads every file, expanding directories (sorted by name).
/// Of several files, one that cannot be read is reported and skipped.
pub fn read_inputs(paths: &[String]) -> Result<Vec<Input>, Failure> {
    read_each(&expand(paths)?, read_input)
}

/// `read_inputs` for `traceopt check`.
pub fn read_inputs_unchecked(paths: &[String]) -> Result<Vec<Input>, Failure> {
    read_each(&expand(paths)?, read_input_unchecked)
}

fn read_each(
    files: &[String],
    read: fn(&str) -> Result<Input, Failure>,
) -> Result<Vec<Input>, Failure> {
    if let [file] = files {
        return Ok(vec![read(file)?]);
    }
    let mut inputs = Vec::new();
    for file in files {
        match read(file) {
            Ok(input) => inputs.push(input),
            Err(failure) => skip(failure.message),
        }
    }
    Ok(inputs)
}

/// The files named, with each directory replaced by its trace files.
fn expand(paths: &[String]) -> Result<Vec<String>, Failure> {
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
            found.retain(|f| !f.ends_with("/descrs.txt"));
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

impl Input {
    /// Leaves out the peer cases and log traces that the checker rejects,
    /// reporting each.
    fn drop_unchecked(&mut self) {
        let file = self.file.clone();
        let first_error =
            |trace: &Trace, options: CheckOptions| check(trace, &file, options).into_iter().next();
        match &mut self.parsed {
            TraceFile::Trace(_) => {}
            TraceFile::Peer(cases) => cases.retain(|case| {
                let parts = [
                    Some(&case.ops),
                    Some(&case.expected),
                    case.preamble.as_ref(),
                    case.short.as_ref(),
                ];
                let error = parts
                    .into_iter()
                    .flatten()
                    .find_map(|t| first_error(t, PEER_CHECK));
                match error {
                    Some(e) => {
                        skip(format_args!(
                            "{e}\n  in case '{}' (line {})",
                            case.name, case.line
                        ));
                        false
                    }
                    None => true,
                }
            }),
            TraceFile::Log(log) => {
                for pair in &mut log.pairs {
                    for slot in [&mut pair.recorded, &mut pair.optimized] {
                        let error = slot
                            .as_ref()
                            .and_then(|t| first_error(&t.trace, log_check(t.section)));
                        if let Some(e) = error {
                            skip(e);
                            *slot = None;
                        }
                    }
                }
                log.pairs
                    .retain(|p| p.recorded.is_some() || p.optimized.is_some());
            }
        }
    }

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
                    [
                        (Some(&case.ops), "ops"),
                        (Some(&case.expected), "expected"),
                        (case.preamble.as_ref(), "preamble"),
                        (case.short.as_ref(), "short"),
                    ]
                    .into_iter()
                    .filter_map(|(trace, part)| {
                        Some(Item {
                            label: format!("{file}:{} {} ({part})", case.line, case.name),
                            trace: trace?,
                            optimized: PEER_CHECK.require_fail_args,
                            fragment: PEER_CHECK.partial,
                        })
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
                    optimized: log_check(t.section).require_fail_args,
                    fragment: log_check(t.section).partial,
                })
                .collect(),
        }
    }
}

/// How the traces of peer cases are checked: test fragments may stop
/// before a jump or finish, and carry no fail arguments.
const PEER_CHECK: CheckOptions = CheckOptions {
    require_fail_args: false,
    partial: true,
};

/// How a log's traces are checked: PyPy's optimized traces carry fail
/// arguments on their guards.
fn log_check(section: Section) -> CheckOptions {
    CheckOptions {
        require_fail_args: section != Section::Recorded,
        partial: false,
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
