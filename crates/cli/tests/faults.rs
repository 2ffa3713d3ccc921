//! The `traceopt` binary when things go wrong or get chained: output that
//! pipes into the next command, solvers that hang, die, babble or lie
//! (shell scripts named `z3` put first on PATH), times out of range, and
//! traces the checker rejects. Every child is killed after `LIMIT`, so a
//! hang fails the test instead of stalling CI.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(120);
// Paths in the directory a command runs in (`scratch`).
const PEER: &str = "shared/peer/pypy-intbound-dev.txt";
const COLLATZ: &str = "shared/corpus/pypy-7.3.11/collatz.log";
const EXAMPLE: &str = "[i0]\ni1 = int_or(i0, 1)\ni2 = int_and(i1, 1)\nfinish(i2)\n";

struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    seconds: f64,
}

/// Runs `traceopt args` in a fresh directory holding `files`, with
/// `path` as PATH (the caller's PATH if `None`), killed after `LIMIT`.
fn traceopt(args: &[&str], files: &[(&str, &str)], path: Option<String>) -> Run {
    let dir = scratch();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let mut command = Command::new(env!("CARGO_BIN_EXE_traceopt"));
    command
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("traceopt {args:?} hung: killed after {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = Run {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
        seconds: started.elapsed().as_secs_f64(),
    };
    std::fs::remove_dir_all(&dir).unwrap();
    run
}

/// A new empty directory under cargo's one for tests (target/tmp).
fn scratch() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faults-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The corpus and the peer set, as `shared/`.
    std::os::unix::fs::symlink(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        dir.join("shared"),
    )
    .unwrap();
    dir
}

/// PATH with the fake solver `name` (a script called `z3`) first.
fn fake(name: &str) -> Option<String> {
    let dir = fakes().join(name);
    Some(format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap()
    ))
}

/// The fake solvers, each a directory holding `z3` and `cvc5` scripts, written once
/// before any test starts a process (a script still open for writing
/// cannot be run).
fn fakes() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fakes-{}", std::process::id()));
        let scripts = [
            // Reads nothing: a big query fills the pipe.
            ("deaf", "exec sleep 60"),
            // Reads a little, then nothing.
            ("tired", "head -c 1000 >/dev/null; exec sleep 60"),
            ("quits", "exit 0"),
            (
                "babbles",
                r#"while read -r l; do case "$l" in *check-sat*) echo hello;; esac; done"#,
            ),
            // Every query is `sat`, every variable 42.
            (
                "liar",
                r#"while read -r l; do case "$l" in
  *check-sat*) echo sat;;
  *get-value*) names=${l#"(get-value ("}; names=${names%"))"}; model=""
    for n in $names; do model="$model ($n #x000000000000002a)"; done
    echo "($model)";;
esac; done"#,
            ),
            // Decides nothing: every query is `unknown`.
            (
                "shrugs",
                r#"while read -r l; do case "$l" in
  *check-sat*) echo unknown;;
  *reason-unknown*) echo '(:reason-unknown "timeout")';;
esac; done"#,
            ),
            ("empty", ""),
        ];
        for (name, body) in scripts {
            let sub = dir.join(name);
            std::fs::create_dir_all(&sub).unwrap();
            if name == "empty" {
                continue; // no solver at all
            }
            // cvc5 too: the validator asks it where z3 gives up, and a
            // working cvc5 found further on PATH would hide the fault.
            for solver in ["z3", "cvc5"] {
                let script = sub.join(solver);
                let mut file = std::fs::File::create(&script).unwrap();
                writeln!(file, "#!/bin/sh\n{body}").unwrap();
                drop(file);
                std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        dir
    })
}

fn no_solver() -> Option<String> {
    Some(fakes().join("empty").display().to_string())
}

// A. Pipes compose: traces on stdout, everything else on stderr.

#[test]
fn opt_output_pipes_into_verify_and_check() {
    let out = traceopt(
        &["opt", "a.trace", "--verify"],
        &[("a.trace", EXAMPLE)],
        None,
    );
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(out.stdout, "[i0]\nfinish(1)\n");
    assert!(
        out.stderr
            .starts_with("# a.trace: 3 -> 1 ops\n# verify: proved ("),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(" s)\n1 trace(s)"), "{}", out.stderr);
    assert!(out.stderr.contains("\nverify time: "), "{}", out.stderr);
    let files = [("a.trace", EXAMPLE), ("b.trace", out.stdout.as_str())];
    let verified = traceopt(&["verify", "a.trace", "b.trace"], &files, None);
    assert_eq!(verified.stdout, "proved\n", "{}", verified.stderr);
    assert_eq!(verified.status.code(), Some(0));
    let checked = traceopt(&["check", "b.trace"], &files, None);
    assert!(checked.status.success(), "{}", checked.stderr);
    // --json stays on stdout, whole.
    let out = traceopt(&["opt", "a.trace", "--json"], &[("a.trace", EXAMPLE)], None);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["traces"][0]["optimized"], "[i0]\nfinish(1)\n");
    assert_eq!(out.stderr, "");
}

#[test]
fn opt_output_of_a_peer_set_or_a_log_is_a_peer_set_verify_reads() {
    let out = traceopt(&["opt", PEER], &[], None);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stdout.starts_with("### "), "{}", out.stdout);
    assert!(out.stderr.contains("123 trace(s)"), "{}", out.stderr);
    let files = [("out.txt", out.stdout.as_str())];
    let verified = traceopt(&["verify", "out.txt"], &files, None);
    assert!(
        verified
            .stdout
            .ends_with("123 pairs: 123 proved, 0 refuted, 0 unknown\n"),
        "{}{}",
        verified.stdout,
        verified.stderr
    );
    let out = traceopt(&["opt", COLLATZ], &[], None);
    assert!(out.status.success(), "{}", out.stderr);
    let files = [("out.txt", out.stdout.as_str())];
    let checked = traceopt(&["check", "out.txt"], &files, None);
    assert_eq!(checked.stdout, "checked 38 trace(s): 0 with errors\n");
}

// B1. A solver that stops reading is a timeout, not a hang.

#[test]
fn a_solver_that_stops_reading_gives_unknown_not_a_hang() {
    // About 230 KB of query, far more than a pipe holds.
    let mut big = String::from("[i0]\n");
    for k in 1..=4000 {
        big.push_str(&format!("i{k} = int_add(i{}, i0)\n", k - 1));
    }
    big.push_str("finish(i4000)\n");
    let files = [
        ("big.trace", big.as_str()),
        ("small.trace", "[i0]\nfinish(i0)\n"),
    ];
    for name in ["deaf", "tired"] {
        let args = ["verify", "big.trace", "small.trace", "--timeout", "1"];
        let out = traceopt(&args, &files, fake(name));
        assert_eq!(out.status.code(), Some(3), "{name}: {}", out.stderr);
        assert!(
            out.stdout
                .starts_with("unknown: no answer within 1s: the solver stopped reading its input"),
            "{name}: {}",
            out.stdout
        );
        assert!(out.seconds < 30.0, "{name}: {}s", out.seconds);
    }
}

// B2. Times out of range are refused by every command, never a panic.

#[test]
fn seconds_out_of_range_are_refused_by_every_command() {
    let options: [(&[&str], &str); 6] = [
        (&["verify", "a.trace", "a.trace"], "--timeout"),
        (&["opt", "--verify", "a.trace"], "--timeout"),
        (&["rules", "prove", "--no-cache"], "--timeout"),
        (&["fuzz", "--count", "1"], "--time"),
        (&["fuzz", "--count", "1"], "--solver-timeout"),
        (&["fuzz", "--count", "1"], "--solver-budget"),
    ];
    for (command, option) in options {
        let mut bad = vec!["1e19", "1e30", "-1", "NaN", "inf", "1000001", "ten"];
        if !option.starts_with("--solver-") {
            bad.push("0");
        }
        for value in bad {
            let mut args = command.to_vec();
            args.extend([option, value]);
            let out = traceopt(&args, &[("a.trace", EXAMPLE)], None);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
            assert!(
                out.stderr.contains(&format!(
                    "invalid value '{value}' for '{option} <SECS>': give a number of seconds"
                )),
                "{args:?}: {}",
                out.stderr
            );
        }
    }
}

#[test]
fn a_solver_share_outside_0_to_1_is_refused() {
    for value in ["-0.1", "1.5", "NaN", "half"] {
        let args = ["fuzz", "--count", "1", "--solver-share", value];
        let out = traceopt(&args, &[], None);
        assert_eq!(out.status.code(), Some(2), "{value}: {}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("'{value}' is not a number from 0 to 1")),
            "{value}: {}",
            out.stderr
        );
    }
}

// B3. fuzz without a working solver says so and fails.

#[test]
fn fuzz_without_a_solver_stops_unless_runs_only_were_asked_for() {
    let args = ["fuzz", "--count", "30", "--quiet"];
    let out = traceopt(&args, &[], no_solver());
    assert_eq!(out.status.code(), Some(2), "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("no SMT solver found"), "{}", out.stderr);
    assert!(out.stderr.contains("--solver-timeout 0"), "{}", out.stderr);
    let out = traceopt(
        &["fuzz", "--count", "30", "--quiet", "--solver-timeout", "0"],
        &[],
        no_solver(),
    );
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stdout.contains("30 traces in"), "{}", out.stdout);
}

#[test]
fn fuzz_with_a_broken_solver_stops_with_its_words() {
    for (name, words) in [
        ("quits", "z3 stopped unexpectedly: its output closed"),
        (
            "babbles",
            "z3 reported an error: unexpected answer 'hello' to check-sat",
        ),
        // Its model either does not replay or does not run the trace to
        // its end, whichever check meets it first.
        ("liar", "or a solver that lies"),
    ] {
        let out = traceopt(&["fuzz", "--count", "200", "--quiet"], &[], fake(name));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{name}: {}{}",
            out.stdout,
            out.stderr
        );
        assert!(
            out.stderr
                .contains("the campaign's solver checks were not done"),
            "{name}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(words), "{name}: {}", out.stderr);
    }
}

// B4. A counterexample that does not replay is unknown, in opt --verify
// as in verify; garbage answers are never proved.

#[test]
fn a_lying_or_babbling_solver_gives_unknown_never_a_verdict() {
    let files = [("a.trace", EXAMPLE), ("b.trace", "[i0]\nfinish(1)\n")];
    for name in ["liar", "babbles"] {
        let out = traceopt(&["opt", "--verify", "a.trace"], &files, fake(name));
        assert_eq!(out.status.code(), Some(3), "{name}: {}", out.stderr);
        assert!(
            out.stderr.contains("# verify: unknown: ")
                && out
                    .stderr
                    .contains("verify: 0 proved, 0 refuted, 1 unknown"),
            "{name}: {}",
            out.stderr
        );
        let out = traceopt(&["verify", "a.trace", "b.trace"], &files, fake(name));
        assert_eq!(out.status.code(), Some(3), "{name}: {}", out.stderr);
        assert!(
            out.stdout.starts_with("unknown: "),
            "{name}: {}",
            out.stdout
        );
    }
}

// B5. verify takes only traces the checker accepts.

#[test]
fn verify_refuses_a_trace_the_checker_rejects() {
    let files = [
        ("a.trace", "[i0]\nfinish(i0)\n"),
        (
            "b.trace",
            "[i0]\nfinish(i0)\ni1 = int_add(i0, 1)\njump(i1)\n",
        ),
    ];
    let out = traceopt(&["verify", "a.trace", "b.trace"], &files, None);
    assert_eq!(out.status.code(), Some(2), "{}", out.stdout);
    assert!(
        out.stderr
            .starts_with("b.trace:2:1: expected finish as the last op, found more ops after it"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("do not pass the checker"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
}

// B5. A campaign whose solver decides nothing is not a pass, and neither
// is an undecided opt --verify.

#[test]
fn a_campaign_the_solver_decided_nothing_of_fails() {
    let args = ["fuzz", "--count", "20", "--quiet", "--solver-share", "1"];
    let out = traceopt(&args, &[], fake("shrugs"));
    assert_eq!(out.status.code(), Some(2), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("the solver decided none of the 20 traces it was given"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("0 proved"), "{}", out.stdout);
    assert!(out.stdout.contains("undecided in time"), "{}", out.stdout);
    // Differential runs only, asked for: no solver verdict is claimed.
    let out = traceopt(
        &["fuzz", "--count", "20", "--quiet", "--solver-timeout", "0"],
        &[],
        fake("shrugs"),
    );
    assert!(out.status.success(), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("20 checked by runs only,"),
        "{}",
        out.stdout
    );
    let files = [("a.trace", EXAMPLE)];
    let out = traceopt(&["opt", "--verify", "a.trace"], &files, fake("shrugs"));
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
}
