//! `traceopt fuzz`'s watcher: the campaign runs in a child process (this
//! same command, with `FLIGHT_ENV` naming its flight record), so that an
//! optimizer that overflows its stack, aborts, or never returns is a
//! finding like any other instead of the end of the fuzzer.
//!
//! The watcher waits for the child, reading its flight record
//! (`traceopt_fuzz::flight`) meanwhile. A child that exits is done: its
//! output and exit code are the campaign's. A child that dies of a crash
//! signal, or one of whose workers has been inside the optimizer longer
//! than `--hang`, is blamed on the seed the record names. That trace is
//! then shrunk by optimizing each smaller candidate in a process of its
//! own (`traceopt opt`), kept when that process dies (or hangs) too.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use traceopt_fuzz::flight::{self, Entry, State};
use traceopt_fuzz::Sketch;

/// The environment variable that makes `traceopt fuzz` the watched child
/// and names its flight record.
pub const FLIGHT_ENV: &str = "TRACEOPT_FUZZ_FLIGHT";

/// How the watched campaign ended.
pub enum Ending {
    /// The child exited with this code (its output is the campaign's).
    Exited(i32),
    /// The child was stopped by a signal that is no crash (an interrupt,
    /// a kill): nothing to blame on the optimizer.
    Stopped(i32),
    /// The optimizer killed the child, or hung in it: how, and the
    /// worker slot that names the trace (none if no worker was busy).
    Blamed {
        how: String,
        entry: Option<Entry>,
        hung: bool,
    },
}

/// Runs this command again as a watched child and waits for it.
pub fn run_watched(hang: Duration) -> Result<Ending, String> {
    let record = scratch("flight");
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut child = Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(FLIGHT_ENV, &record)
        .spawn()
        .map_err(|e| format!("cannot start the campaign's process: {e}"))?;
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => break ending_of(status, &record),
            Ok(None) => {}
            Err(e) => break Err(format!("cannot wait for the campaign's process: {e}")),
        }
        let hung = flight::read(&record)
            .unwrap_or_default()
            .into_iter()
            .find(|e| e.optimizing_for.is_some_and(|d| d >= hang));
        if let Some(entry) = hung {
            let _ = child.kill();
            let _ = child.wait();
            break Ok(Ending::Blamed {
                how: format!(
                    "did not return: it had been optimizing one trace for {:.0} s (--hang {})",
                    entry.optimizing_for.unwrap_or_default().as_secs_f64(),
                    hang.as_secs_f64()
                ),
                entry: Some(entry),
                hung: true,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_file(&record);
    ending
}

fn ending_of(status: ExitStatus, record: &Path) -> Result<Ending, String> {
    if let Some(code) = status.code() {
        return Ok(Ending::Exited(code));
    }
    let signal = signal_of(status).unwrap_or(0);
    let Some(name) = crash_signal(signal) else {
        return Ok(Ending::Stopped(signal));
    };
    let entries = flight::read(record).unwrap_or_default();
    // The worker inside the optimizer, else any busy one.
    let entry = (entries.iter().find(|e| e.optimizing_for.is_some()))
        .or(entries.first())
        .copied();
    Ok(Ending::Blamed {
        how: format!("killed its process: signal {signal} ({name})"),
        entry,
        hung: false,
    })
}

#[cfg(unix)]
fn signal_of(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
fn signal_of(_: ExitStatus) -> Option<i32> {
    None
}

/// The signals a crash raises, with what usually raises them.
fn crash_signal(signal: i32) -> Option<&'static str> {
    Some(match signal {
        4 => "SIGILL, an illegal instruction",
        6 => "SIGABRT, an abort: Rust's answer to a stack overflow",
        7 => "SIGBUS, a bad memory access",
        8 => "SIGFPE, an arithmetic fault",
        11 => "SIGSEGV, a bad memory access",
        _ => return None,
    })
}

/// Whether `traceopt opt` on `sketch` dies of a crash signal (`hang`
/// `None`), or runs longer than `hang`: the shrinker's test for a
/// blamed trace.
pub struct Probe {
    exe: PathBuf,
    dir: PathBuf,
    inject_bug: Option<String>,
    hang: Option<Duration>,
}

impl Probe {
    pub fn new(inject_bug: Option<String>, hang: Option<Duration>) -> Result<Probe, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
        let dir = scratch("probe");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        std::fs::write(dir.join("descrs.txt"), traceopt_fuzz::heapgen::NAMESPACE)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Probe {
            exe,
            dir,
            inject_bug,
            hang,
        })
    }

    pub fn fails(&self, sketch: &Sketch) -> bool {
        let file = self.dir.join("candidate.trace");
        if std::fs::write(&file, sketch.text()).is_err() {
            return false;
        }
        let mut command = Command::new(&self.exe);
        command.arg("opt").arg(&file);
        if let Some(bug) = &self.inject_bug {
            command.args(["--inject-bug", bug]);
        }
        let spawned = command
            .env_remove(FLIGHT_ENV)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = spawned else {
            return false;
        };
        // A crash shows at once; a probe for a crash still gets a limit,
        // so that a candidate that hangs instead cannot stop the shrinking.
        let limit = self.hang.unwrap_or(Duration::from_secs(10));
        match wait_at_most(&mut child, limit) {
            Some(status) => {
                self.hang.is_none() && signal_of(status).and_then(crash_signal).is_some()
            }
            None => {
                let _ = child.kill();
                let _ = child.wait();
                self.hang.is_some()
            }
        }
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn wait_at_most(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if started.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A path of this process's own in the temporary directory.
fn scratch(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("traceopt-watch-{}.{what}", std::process::id()))
}

/// This process's parent: the watched child stops when its watcher is
/// gone (killed), instead of running on unseen.
pub fn parent() -> u32 {
    #[cfg(unix)]
    return std::os::unix::process::parent_id();
    #[cfg(not(unix))]
    return 0;
}

/// Whether the blamed trace is the seed's own, for the report.
pub fn while_shrinking(entry: &Entry) -> bool {
    entry.state == State::Shrinking
}
