//! The `traceopt` binary end to end: exit codes, messages, and the corpus
//! totals of `shared/corpus/README.md` through `traceopt stats --json`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn traceopt(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_traceopt"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    // A command that fails on its arguments exits without reading its
    // input; the pipe is then closed, which is no error of the test.
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const CORPUS: &str = "../../../shared/corpus/pypy-7.3.11";
const PEER: &str = "../../../shared/peer/pypy-intbound-dev.txt";

#[test]
fn stats_totals_agree_with_the_corpus_readme() {
    let out = traceopt(&["stats", "--json", CORPUS], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let totals = &json["totals"];
    assert_eq!(totals["recorded_traces"], 364);
    assert_eq!(totals["optimized_loops"], 119);
    assert_eq!(totals["optimized_bridges"], 241);
    assert_eq!(totals["recorded_ops_all"], 86297);
    assert_eq!(totals["recorded"]["ops"], 74145);
    assert_eq!(totals["optimized"]["ops"], 26305);
    assert_eq!(json["files"].as_array().unwrap().len(), 17);
    // Per program, e.g. the collatz row: 19 traces, 1485 and 936 ops.
    let collatz = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("collatz.log"))
        .unwrap();
    assert_eq!(collatz["totals"]["recorded_traces"], 19);
    assert_eq!(collatz["totals"]["recorded"]["ops"], 1485);
    assert_eq!(collatz["totals"]["optimized"]["ops"], 936);
}

#[test]
fn stats_table_ends_with_the_totals() {
    let out = traceopt(&["stats", CORPUS], "");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("364 recorded traces, 119 optimized loops, 241 optimized bridges"));
    assert!(stdout.contains("recorded ops: 86297 (74145 without debug_merge_point)"));
}

#[test]
fn check_accepts_the_corpus_and_the_peer_set() {
    let out = traceopt(&["check", CORPUS, PEER], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "checked 970 trace(s): 0 with errors\n");
}

#[test]
fn check_reports_bad_input_with_its_place_and_exit_code_2() {
    let out = traceopt(&["check", "-"], "[i0]\ni1 = int_add(i0)\njump(i1)\n");
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("<stdin>:2:6: expected 2 argument(s) for int_add, found 1"),
        "{stderr}"
    );
    let out = traceopt(&["check", "-"], "[i0]\ni1 = int_frob(i0)\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr)
        .contains("<stdin>:2:6: expected an operation name, found unknown operation 'int_frob'"));
    let out = traceopt(&["check", "no/such/file"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/file: cannot read"));
    let out = traceopt(&["check", "-", "--partial"], "[i0]\ni1 = int_add(i0, 1)\n");
    assert!(out.status.success());
}

#[test]
fn print_output_reads_back_as_the_same_text() {
    let source = "[i0, p1]\n+5: i2 = int_add(i0, 0x10)   # sixteen\nguard_nonnull(p1) [i2, None]\njump(i2, p1)\n";
    let first = traceopt(&["print", "-"], source);
    assert!(first.status.success());
    let printed = text(&first.stdout);
    assert_eq!(
        printed,
        "[i0, p1]\n+5: i2 = int_add(i0, 16)\nguard_nonnull(p1) [i2, None]\njump(i2, p1)\n"
    );
    let second = traceopt(&["print", "-"], &printed);
    assert_eq!(text(&second.stdout), printed);
    let bare = traceopt(&["print", "--no-offsets", "-"], source);
    assert!(text(&bare.stdout).contains("\ni2 = int_add(i0, 16)\n"));
}

#[test]
fn run_reports_the_failing_guard_and_escaped_values() {
    let countdown =
        "[i0]\ni1 = int_sub(i0, 1)\ni2 = int_gt(i1, 0)\nguard_true(i2) [i1]\njump(i1)\n";
    let out = traceopt(&["run", "-", "--arg", "i0=5"], countdown);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "guard failed: guard_true at line 4, after 4 loop iteration(s)\n  i1=0\n"
    );
    let toy = "[i0]\np1 = new(descr=sizedescr)\nsetfield_gc(p1, i0, descr=valuedescr)\n\
               i2 = getfield_gc_i(p1, descr=valuedescr)\ni3 = escape_i(i2)\nfinish(i3)\n";
    let out = traceopt(&["run", "-", "--arg", "i0=17", "--json"], toy);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["status"], "finished");
    assert_eq!(json["values"], serde_json::json!(["17"]));
    assert_eq!(
        json["escaped"],
        serde_json::json!([[5, "escape_i", ["17"]]])
    );
}

#[test]
fn run_refuses_missing_inputs_and_undefined_operations() {
    let out = traceopt(&["run", "-"], "[i0, f1]\nfinish(i0)\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no value for input(s) i0, f1"));
    let out = traceopt(
        &["run", "-", "--arg", "i0=1", "--arg", "i1=64"],
        "[i0, i1]\ni2 = int_lshift(i0, i1)\nfinish(i2)\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("<stdin>:2:6: undefined: int_lshift: shift count 64"));
    let out = traceopt(&["run", "-", "--arg", "i0=x"], "[i0]\nfinish(i0)\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("'x' is not a value of type int"));
}

#[test]
fn ops_lists_the_whole_table() {
    let out = traceopt(&["ops", "--json"], "");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    for name in [
        "int_add",
        "guard_nonnull_class",
        "int_pydiv",
        "escape_n",
        "call_assembler_r",
    ] {
        assert!(names.contains(&name), "{name}");
    }
}

#[test]
fn verify_proves_refutes_and_dumps_queries() {
    let dir = std::env::temp_dir().join(format!("traceopt-cli-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let before = dir.join("before.trace");
    let wrong = dir.join("wrong.trace");
    std::fs::write(&before, "[i0, i1]\ni2 = int_add(i0, i1)\ni3 = int_sub_ovf(i2, i1)\nguard_no_overflow() []\nfinish(i3)\n").unwrap();
    std::fs::write(&wrong, "[i0, i1]\nfinish(i0)\n").unwrap();
    let (b, w) = (before.to_str().unwrap(), wrong.to_str().unwrap());
    let out = traceopt(&["verify", b, b], "");
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "proved\n")
    );
    let dumps = dir.join("smt");
    let out = traceopt(&["verify", b, w, "--dump-smt", dumps.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("refuted\n  inputs: i0="), "{stdout}");
    assert!(
        stdout.contains("BEFORE fails guard_no_overflow at line 4; AFTER finishes with"),
        "{stdout}"
    );
    // The dumped query re-runs by hand: sat, as the counterexample says.
    let query = dumps.join("query-0001.smt2");
    let rerun = Command::new("z3")
        .arg(&query)
        .output()
        .expect("z3 is installed by the test command");
    assert!(
        text(&rerun.stdout).starts_with("sat\n"),
        "{}",
        text(&rerun.stdout)
    );
    let out = traceopt(
        &[
            "verify",
            "../../../shared/peer/pypy-intbound-dev.txt",
            "--solver",
            "cvc5",
        ],
        "",
    );
    if out.status.code() != Some(2) || !text(&out.stderr).contains("no SMT solver found") {
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).ends_with("123 pairs: 123 proved, 0 refuted, 0 unknown\n"));
    }
    let out = traceopt(&["verify", b, "-"], "[i0]\nfinish(i0)\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the traces' inputs differ"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_solver_is_named_with_a_hint() {
    let out = Command::new(env!("CARGO_BIN_EXE_traceopt"))
        .args(["verify", "x", "y"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("no SMT solver found: looked for z3 and cvc5 on PATH"),
        "{stderr}"
    );
    assert!(stderr.contains("apt-get install z3") && stderr.contains("pip install z3-solver"));
}

#[test]
fn a_solver_timeout_is_unknown_never_proved() {
    // Nonlinear: squares of products, beyond what bit-blasting decides fast.
    let dir = std::env::temp_dir().join(format!("traceopt-cli-timeout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let before = dir.join("before.trace");
    let after = dir.join("after.trace");
    std::fs::write(&before, "[i0, i1]\ni2 = int_mul_ovf(i0, i1)\nguard_no_overflow() []\ni3 = int_mul_ovf(i2, i2)\nguard_no_overflow() []\ni4 = int_ge(i3, 0)\nfinish(i4)\n").unwrap();
    std::fs::write(&after, "[i0, i1]\ni2 = int_mul_ovf(i0, i1)\nguard_no_overflow() []\ni4 = uint_mul_high(i2, i2)\ni5 = int_is_zero(i4)\nguard_true(i5) []\nfinish(1)\n").unwrap();
    let out = traceopt(
        &[
            "verify",
            before.to_str().unwrap(),
            after.to_str().unwrap(),
            "--timeout",
            "0.2",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).starts_with("unknown: timeout after 0.2s"),
        "{}",
        text(&out.stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn opt_folds_the_known_bits_example_and_proves_it() {
    // Seed 003: int_or(x, 1) then int_and(_, 1) is 1.
    let trace = "[i0]\ni1 = int_or(i0, 1)\ni2 = int_and(i1, 1)\nfinish(i2)\n";
    let out = traceopt(&["opt", "--verify", "-"], trace);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[i0]\nfinish(1)\n");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("verify: proved"), "{stderr}");
    assert!(stderr.contains("3 ops before, 1 after"), "{stderr}");
}

#[test]
fn opt_runs_over_the_whole_corpus_and_reports_json() {
    let args = [
        "opt",
        "--quiet",
        "--json",
        "--rule-stats",
        "--stats",
        CORPUS,
    ];
    let out = traceopt(&args, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let traces = json["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 364);
    assert_eq!(json["ops_before"], 74145);
    assert!(json["rules"]["int_add"].is_object());
    // The counts are the optimizer's (their floor is
    // crates/opt/tests/corpus_floor.rs): the binary runs every pass.
    let ours = &json["figure7"]["optimized"];
    let recorded = &json["figure7"]["recorded"];
    for count in ["ops", "allocations", "reads", "writes", "guards"] {
        let (got, before) = (
            ours[count].as_u64().unwrap(),
            recorded[count].as_u64().unwrap(),
        );
        assert!(got < before, "{count}: {got} after, {before} before");
    }
    assert_eq!(json["ops_after"], ours["ops"]);
    // Per trace: the same categories, and which traces are bridges.
    let bridges = traces.iter().filter(|t| t["bridge"] == true).count();
    assert_eq!(
        bridges,
        json["figure7"]["bridges"].as_u64().unwrap() as usize
    );
    let summed: u64 = traces
        .iter()
        .map(|t| t["counts_after"]["allocations"].as_u64().unwrap())
        .sum();
    assert_eq!(summed, ours["allocations"].as_u64().unwrap());
}

#[test]
fn opt_output_of_the_whole_corpus_passes_the_checker() {
    // Each recorded trace with its optimized form, as a peer set; the
    // checker reads it back (the guard of an overflow-checked op right
    // after it, single assignment, fail arguments, ...).
    let out = traceopt(&["opt", CORPUS], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let checked = traceopt(&["check", "-"], &text(&out.stdout));
    let stdout = text(&checked.stdout);
    assert!(
        checked.status.success(),
        "{}{stdout}",
        text(&checked.stderr)
    );
    assert!(
        stdout.contains("checked 728 trace(s): 0 with errors"),
        "{stdout}"
    );
}

/// How many `.smt2` files `dir` holds (none if it does not exist).
fn queries_in(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let is_query = |path: std::path::PathBuf| path.extension().is_some_and(|e| e == "smt2");
    entries
        .filter(|e| is_query(e.as_ref().unwrap().path()))
        .count()
}

#[test]
fn opt_verify_dumps_its_queries_per_worker() {
    let dir = std::env::temp_dir().join(format!("traceopt-cli-opt-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trace = "[i0]\ni1 = int_add(i0, 0)\ni2 = int_lt(i1, 10)\nguard_true(i2) []\nfinish(i1)\n";
    let path = dir.join("t.trace");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&path, trace).unwrap();
    let t = path.to_str().unwrap();
    for (jobs, subs) in [("1", &[""][..]), ("2", &["job-0", "job-1"][..])] {
        let dumps = dir.join(format!("smt-{jobs}"));
        let d = dumps.to_str().unwrap();
        let out = traceopt(&["opt", "--verify", "--jobs", jobs, "--dump-smt", d, t], "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        // With two workers, either may take the one trace.
        let queries: usize = subs.iter().map(|sub| queries_in(&dumps.join(sub))).sum();
        assert!(queries > 0, "no query under {d}");
        assert_eq!(queries_in(&dumps), usize::from(jobs == "1") * queries);
    }
    // Without --verify there is nothing to dump: refused.
    let d = dir.join("smt-none");
    let out = traceopt(&["opt", "--dump-smt", d.to_str().unwrap(), t], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn opt_verifies_the_whole_peer_set() {
    let out = traceopt(&["opt", "--quiet", "--verify", PEER], "");
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("verify: 123 proved, 0 refuted, 0 unknown"),
        "{stderr}"
    );
}

#[test]
fn opt_verifies_with_several_workers_and_reports_in_order() {
    let labels = |args: &[&str]| -> Vec<(String, Option<String>)> {
        let out = traceopt(args, "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let traces = json["traces"].as_array().unwrap().iter();
        traces
            .map(|t| {
                let verdict = t["verify"].as_str().map(str::to_owned);
                (t["trace"].as_str().unwrap().to_owned(), verdict)
            })
            .collect()
    };
    let unverified = labels(&["opt", "--quiet", "--json", PEER]);
    let verified = labels(&["opt", "--quiet", "--json", "--verify", "--jobs", "2", PEER]);
    assert_eq!(verified.len(), 123);
    for ((label, none), (same, verdict)) in unverified.iter().zip(&verified) {
        assert_eq!((label, none), (same, &None));
        assert_eq!(verdict.as_deref(), Some("proved"), "{label}");
    }
}

#[test]
fn opt_reports_a_trace_that_can_never_finish() {
    let trace = "[i0]\ni1 = int_and(i0, 7)\ni2 = int_lt(i1, 8)\nguard_false(i2) []\nfinish(i1)\n";
    let out = traceopt(&["opt", "-"], trace);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("can never run to the end"), "{stderr}");
    assert!(stderr.contains("guard_false always fails"), "{stderr}");
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn opt_verify_checks_that_a_trace_can_never_finish() {
    let trace = "[i0]\ni1 = int_and(i0, 7)\ni2 = int_lt(i1, 8)\nguard_false(i2) []\nfinish(i1)\n";
    let out = traceopt(&["opt", "--verify", "-"], trace);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("# verify (never runs to the end): proved"),
        "{stderr}"
    );
    assert!(stderr.contains("verify: 1 proved, 0 refuted"), "{stderr}");
}

#[test]
fn opt_verify_passes_only_when_every_trace_is_proved() {
    // An op beyond the validator, so not proved, so exit 3.
    let trace = "[p0, p1]\ni9 = gc_load_i(p0, 8, 8)\nfinish(0)\n";
    let out = traceopt(&["opt", "--verify", "-"], trace);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr
            .contains("0 proved, 0 refuted, 0 unknown, 1 with ops the validator does not support"),
        "{stderr}"
    );
    // Without --verify nothing is claimed, and the run succeeds.
    assert!(traceopt(&["opt", "-"], trace).status.success());
}

#[test]
fn an_injected_bug_is_announced_on_every_output() {
    let trace = "[i0]\ni1 = int_add(i0, 10)\ni2 = int_lt(i1, 15)\nguard_true(i2) []\n\
                 i3 = int_lt(i0, 6)\nguard_true(i3) []\nfinish(i0)\n";
    let out = traceopt(&["opt", "--inject-bug", "wrapping-add", "-"], trace);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stdout.starts_with("# WARNING: optimized with --inject-bug wrapping-add"),
        "{stdout}"
    );
    assert!(stderr.contains("deliberately broken optimizer"), "{stderr}");
    // The output still reads back as a trace.
    let check = traceopt(&["check", "-"], &stdout);
    assert!(check.status.success(), "{}", text(&check.stderr));
    let out = traceopt(
        &["opt", "--json", "--inject-bug", "wrapping-add", "-"],
        trace,
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["injected_bug"], "wrapping-add");
    assert!(doc["warning"]
        .as_str()
        .unwrap()
        .contains("deliberately broken"));
    // Without it, no warning anywhere.
    let out = traceopt(&["opt", "-"], trace);
    assert!(!text(&out.stdout).contains("WARNING") && !text(&out.stderr).contains("WARNING"));
}

#[test]
fn opt_rejects_an_unknown_pass() {
    let out = traceopt(
        &["opt", "--passes", "fold,magic", "-"],
        "[i0]\nfinish(i0)\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown pass 'magic'"));
}

#[test]
fn opt_with_no_passes_changes_nothing_but_names() {
    let trace = "[i0]\ni1 = int_add(i0, 0)\nfinish(i1)\n";
    let out = traceopt(&["opt", "--passes", "none", "-"], trace);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("i1 = int_add(i0, 0)"));
}

#[test]
fn rules_check_and_list() {
    let out = traceopt(&["rules", "check", "../../rules"], "");
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("all type-check"));
    let out = traceopt(&["rules", "list"], "");
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("add_zero"));
}

#[test]
fn rules_check_reports_a_bad_rules_file_with_its_place() {
    let dir = std::env::temp_dir().join(format!("traceopt-bad-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.rules"), "oops: int_add(x, 0)\n    => y\n").unwrap();
    let out = traceopt(&["rules", "check", dir.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad.rules:2:8"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `rules prove` on one rules file with a solver found through `path`
/// (the system's PATH if `None`): exit code and output.
fn rules_prove(name: &str, rules: &str, path: Option<&std::path::Path>) -> (Option<i32>, String) {
    let dir = std::env::temp_dir().join(format!("traceopt-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.rules"), rules).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_traceopt"));
    command.args([
        "rules",
        "prove",
        "--no-cache",
        "--solver",
        "z3",
        dir.to_str().unwrap(),
    ]);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let out = command.output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    (out.status.code(), text(&out.stdout))
}

#[test]
fn rules_prove_fails_on_a_sorry_or_undecided_rule() {
    let proved = "kept: int_add(x, 0)\n    => x\n";
    let (code, out) = rules_prove("proved-rules", proved, None);
    assert_eq!(code, Some(0), "{out}");
    let sorry = format!("{proved}unproved: int_sub(x, 0)\n    SORRY_SMT\n    => x\n");
    let (code, out) = rules_prove("sorry-rules", &sorry, None);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("skipped (SORRY_SMT) rule 'unproved'"), "{out}");
    assert!(out.contains("1 proved"), "{out}");
    // A "z3" that answers every check with unknown.
    let bin = std::env::temp_dir().join(format!("traceopt-unknown-z3-{}", std::process::id()));
    std::fs::create_dir_all(&bin).unwrap();
    let script = "#!/bin/sh\nwhile read -r l; do case \"$l\" in\n\
        *:version*) echo '(:version \"0-fake\")';;\n\
        *reason-unknown*) echo '(:reason-unknown \"fake\")';;\n\
        *check-sat*) echo unknown;;\nesac; done\n";
    let z3 = bin.join("z3");
    std::fs::write(&z3, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&z3, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, out) = rules_prove("undecided-rules", proved, Some(&bin));
    std::fs::remove_dir_all(&bin).unwrap();
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains("unknown: the solver gave up on rule 'kept'"),
        "{out}"
    );
}

#[test]
fn rules_confluence_reports_critical_pairs() {
    let out = traceopt(&["rules", "confluence", "../../rules"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("critical pairs:"), "{stdout}");
    // (C1 - (x + C2)) + (x + C2): cancelling first gives C1, moving the
    // constants first leaves a form the rules do not bring back.
    assert!(
        stdout.contains(
            "add_sub_cancel / sub_c_add_x_c on int_add(int_sub(C1_b, int_add(x_b, C2_b)), \
             int_add(x_b, C2_b)): does not rejoin:\n    add_sub_cancel first: 3\n"
        ),
        "{stdout}"
    );
}

#[test]
fn fuzz_runs_a_short_campaign_and_reports_a_finding_with_a_replay() {
    let out = traceopt(
        &["fuzz", "--count", "50", "--quiet", "--solver-timeout", "0"],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("50 traces in"),
        "{}",
        text(&out.stdout)
    );
    let dir = std::env::temp_dir().join(format!("traceopt-fuzz-{}", std::process::id()));
    let out = traceopt(
        &[
            "fuzz",
            "--count",
            "100",
            "--quiet",
            "--solver-timeout",
            "0.05",
            "--solver-share",
            "1",
            "--stop-at-first",
            "--inject-bug",
            "lshift-inverse",
            "--out",
            dir.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("WARNING: --inject-bug lshift-inverse")
            && stdout.contains("FOUND WITH AN INJECTED BUG"),
        "{stdout}"
    );
    let reproducer = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let written = std::fs::read_to_string(reproducer).unwrap();
    assert!(written.starts_with("# WARNING: --inject-bug"), "{written}");
    let replay = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: traceopt "))
        .unwrap_or_else(|| panic!("no replay line in {stdout}"));
    let args: Vec<&str> = replay.split_whitespace().collect();
    let out = traceopt(&args, "");
    assert_eq!(
        out.status.code(),
        Some(1),
        "the replay refutes: {}",
        text(&out.stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The optimizer overflowing its stack, or never returning, kills or
/// holds the campaign's process: the watcher reports it as a finding,
/// shrunk, whose reproducer does it again with the bug and not without.
#[test]
fn fuzz_reports_an_optimizer_that_kills_its_process_or_hangs() {
    for (bug, what) in [
        ("stack-overflow", "killed its process: signal 6"),
        ("endless-loop", "did not return"),
    ] {
        let dir = std::env::temp_dir().join(format!("traceopt-{bug}-{}", std::process::id()));
        let out = traceopt(
            &[
                "fuzz",
                "--time",
                "60",
                "--quiet",
                "--hang",
                "1",
                "--inject-bug",
                bug,
                "--out",
                dir.to_str().unwrap(),
            ],
            "",
        );
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{bug}: {stdout}");
        assert!(
            stdout.contains("FOUND WITH AN INJECTED BUG (seed")
                && stdout.contains(what)
                && stdout.contains("the campaign stopped at this finding"),
            "{bug}: {stdout}"
        );
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "trace"))
            .unwrap();
        let ops = std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with('['))
            .count();
        assert!(ops <= 4, "{bug}: shrunk to {ops} ops:\n{stdout}");
        // Again with the bug: killed, or still running after 3 s; without
        // it, optimized.
        let mut again = Command::new(env!("CARGO_BIN_EXE_traceopt"))
            .args(["opt", "--inject-bug", bug, file.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_secs(3));
        match again.try_wait().unwrap() {
            None => {
                assert_eq!(bug, "endless-loop");
                again.kill().unwrap();
                again.wait().unwrap();
            }
            Some(status) => assert_eq!((bug, status.code()), ("stack-overflow", None)),
        }
        let out = traceopt(&["opt", file.to_str().unwrap()], "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn fuzz_mutates_the_peer_set() {
    let out = traceopt(
        &[
            "fuzz",
            "--mutate",
            PEER,
            "--count",
            "100",
            "--quiet",
            "--solver-timeout",
            "0.05",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("100 traces in"));
    let out = traceopt(&["fuzz", "--mutate", "../../rules", "--count", "1"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn opt_refuses_a_malformed_trace_with_its_place() {
    for trace in [
        "[i0]\ni1 = int_add_ovf(i0)\nguard_no_overflow() []\nfinish(i1)\n",
        "[i0]\nguard_value(i0)\nfinish(i0)\n",
    ] {
        let out = traceopt(&["opt", "-"], trace);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(stderr.contains("<stdin>:2:"), "{stderr}");
        assert!(stderr.contains("do not pass the checker"), "{stderr}");
    }
}

#[test]
fn bridges_of_the_corpus_know_their_parents_and_enter_peeled_loops() {
    // Over the corpus with --peel: bridges optimized knowing facts their
    // parent established, and some entering a peeled loop at its label
    // (its jump then goes to the loop's TargetToken).
    let out = traceopt(&["opt", "--peel", "--json", CORPUS], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let traces = json["traces"].as_array().unwrap();
    let knowing = traces
        .iter()
        .filter(|t| t["facts_on_entry"].as_u64() > Some(0));
    assert!(knowing.clone().all(|t| t["bridge"] == true));
    assert!(knowing.count() >= 150);
    let entering: Vec<_> = traces
        .iter()
        .filter(|t| t["enters_loop"].is_i64())
        .collect();
    // What a bridge does not know of the label's state it tests where it
    // jumps (12 entries now; 17 before loops whose bodies take the class
    // their allocations make for granted refused entries, which cannot
    // test it; 48 when a box of `<SizeDescr 16>` was taken
    // to be of the loop's class unless shown otherwise, which one descr
    // text does not say; 34 when the loop took for granted every
    // constant its preamble knew, used or not; 3 when it had to know
    // every fact already). The rest would read what they cannot tell is
    // there, or pass other constants, shapes or boxes of classes the
    // recordings do not show the loop's.
    assert!(entering.len() >= 12, "{}", entering.len());
    // The others say which loop they do not enter, and why.
    let refused = traces.iter().filter(|t| t["no_entry"].is_object());
    assert!(refused.clone().count() >= 50);
    for t in refused {
        assert!(t["no_entry"]["loop"].is_i64(), "{t}");
        assert!(!t["no_entry"]["why"].as_str().unwrap().is_empty(), "{t}");
        assert!(t["enters_loop"].is_null(), "{t}");
    }
    for t in entering {
        let text = t["optimized"].as_str().unwrap();
        let jump = text.lines().last().unwrap();
        assert!(jump.contains("descr=TargetToken("), "{jump}");
    }
}

#[test]
fn file_colon_line_picks_one_trace_of_a_log() {
    // The bridge of examples/bridge-enters-loop.log starts at line 36:
    // picked, it alone is printed and verified, and still enters the
    // loop, which the whole log is optimized for.
    let log = "../../examples/bridge-enters-loop.log";
    let out = traceopt(
        &["opt", "--peel", "--verify", "--json", &format!("{log}:36")],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let traces = json["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 1, "{traces:?}");
    assert_eq!(traces[0]["trace"], format!("{log}:36"));
    assert_eq!(traces[0]["enters_loop"], 1);
    assert_eq!(traces[0]["verify"], "proved");
    // A line where no trace starts is an error that says what to give.
    let out = traceopt(&["opt", &format!("{log}:37")], "");
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no trace starts at"), "{stderr}");
}

#[test]
fn a_bridge_enters_the_peeled_loop_and_both_are_proved() {
    // examples/bridge-enters-loop.log: a loop counting a boxed integer
    // down, and a bridge that boxes a count and jumps to it. Peeled, the
    // loop passes the box unboxed; the bridge jumps to its label with
    // the count, and the entry is proved with the loop's induction.
    let log = "../../examples/bridge-enters-loop.log";
    let out = traceopt(&["opt", "--peel", "--verify", "--json", log], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let traces = json["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 2);
    assert!(traces.iter().all(|t| t["verify"] == "proved"), "{traces:?}");
    assert_eq!(traces[1]["enters_loop"], 1);
    let bridge = traces[1]["optimized"].as_str().unwrap();
    assert!(!bridge.contains("new_with_vtable"), "{bridge}");
    assert!(
        bridge.trim_end().ends_with("descr=TargetToken(1))"),
        "{bridge}"
    );
}

#[test]
fn a_recorded_trace_the_model_cannot_run_through_is_not_proved() {
    // PyPy recorded this trace to its end, so some run passes its guard;
    // a model in which none does (here the guard's condition is false
    // for every input, as an encoding gap could make a real one) would
    // prove anything of what follows. Nothing is claimed: unknown.
    let dir = std::env::temp_dir().join(format!("traceopt-vacuous-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("vacuous.log");
    std::fs::write(
        &log,
        "[1] {jit-log-noopt\n# Traced loop or bridge with 3 ops\n[i0]\n\
         i1 = int_xor(i0, i0)\nguard_true(i1)\nfinish(i0)\n[2] jit-log-noopt}\n",
    )
    .unwrap();
    let out = traceopt(&["opt", "--verify", "--json", log.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdict = json["traces"][0]["verify"].as_str().unwrap();
    assert!(verdict.contains("vacuous"), "{verdict}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mine_finds_in_a_trace_as_given_what_our_optimizer_removes() {
    let trace = "../../examples/countdown.trace";
    let out = traceopt(&["mine", "--source", "as-is", "--json", trace], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<&str> = (json["hits"].as_array().unwrap().iter())
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    // The second mask, the add that cannot overflow, the sign test
    // after `i2 > 0` (the guard on it is no finding of its own).
    assert_eq!(kinds, ["same", "implied", "constant"], "{json:#}");
    assert_eq!(json["hits"][0]["at"], format!("{trace}:10"));
    assert_eq!(json["hits"][0]["what"], "i2 is always i1");
    assert_eq!(json["groups"].as_array().unwrap().len(), 3);
    // Our optimizer's output of the same trace leaves none of them.
    let out = traceopt(&["mine", "--json", trace], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["hits"], serde_json::json!([]), "{json:#}");
    assert!(json["queries"].as_u64().unwrap() > 0);
}

#[test]
fn mine_text_report_ranks_shapes_and_shows_the_minimized_trace() {
    let trace = "[i0, i1]
i2 = int_and(i0, 255)
i3 = int_and(i2, 255)
i4 = int_and(i1, 15)
i5 = int_and(i4, 15)
i6 = int_and(i0, 7)
i7 = int_and(i6, 3)
i8 = int_and(i7, 3)
finish()
";
    let out = traceopt(&["mine", "--source", "as-is", "--top", "1", "-"], trace);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    // Three masks applied twice: one shape (constants hidden), and a
    // mask of a mask's bits that is a second finding of the same shape.
    assert!(
        report.starts_with("mined 1 trace(s) (as-is): 7 integer op(s) and guard(s),"),
        "{report}"
    );
    assert!(report.contains("3 hit(s) of 1 shape(s)"), "{report}");
    assert!(
        report.contains(
            "1. 3 hit(s), same: at <stdin>:3, <stdin>:5, <stdin>:8\n    \
             # i2 is always i1\n    [i0]\n    i1 = int_and(i0, 255)\n    \
             i2 = int_and(i1, 255)\n    finish()\n"
        ),
        "{report}"
    );
}

#[test]
fn report_has_a_row_and_a_chart_per_program_with_the_counts_of_opt_stats() {
    // The whole corpus: one program per log.
    let logs = [CORPUS.to_string()];
    let mut args = vec!["report"];
    args.extend(logs.iter().map(String::as_str));
    let out = traceopt(&args, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS);
    let programs: Vec<String> = (std::fs::read_dir(dir).unwrap())
        .filter_map(|e| {
            let path = e.unwrap().path();
            let is_log = path.extension().is_some_and(|x| x == "log");
            is_log.then(|| path.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    assert_eq!(programs.len(), 17);
    // A row and a chart for each program, and a chart of the totals.
    for name in &programs {
        assert!(
            page.contains(&format!("<tr><td>{name}</td>")),
            "no row of {name}"
        );
    }
    for name in programs.iter().map(String::as_str).chain(["total"]) {
        let chart = format!("<figure id=\"chart-{name}\"><svg");
        assert!(page.contains(&chart), "no chart of {name}");
    }
    assert_eq!(page.matches("<svg").count(), programs.len() + 1);
    // The totals are those `traceopt opt --stats` counts.
    let mut args = vec!["opt", "--peel", "--stats", "--json", "--quiet"];
    args.extend(logs.iter().map(String::as_str));
    let out = traceopt(&args, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &json["figure7"];
    let cell = |field: &str| {
        let [r, o, p] = [&f["recorded"], &f["optimized"], &f["pypy"]].map(|c| c[field].clone());
        format!("<td>{r} / {o} / {p}</td>")
    };
    let cells: String = ["ops", "allocations", "reads", "writes", "guards"]
        .into_iter()
        .map(cell)
        .collect();
    let traces = json["traces"].as_array().unwrap().len();
    let row = format!("<tr class=\"total\"><td>total</td><td>{traces}</td>{cells}<td>");
    assert!(page.contains(&row), "{row}\n{page}");
    // As a Markdown table: a line per program and the totals.
    let mut args = vec!["report", "--markdown"];
    args.extend(logs.iter().map(String::as_str));
    let out = traceopt(&args, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), programs.len() + 2, "{table}");
    assert!(table.contains("\n| collatz | 19 | 1485 / "), "{table}");
}

#[test]
fn opt_verify_budget_leaves_a_trace_unknown_once_spent() {
    let log = "../../examples/bridge-enters-loop.log";
    let args = |budget| ["opt", "--peel", "--verify", "--budget", budget, log];
    // No limit (0): both traces proved.
    let out = traceopt(&args("0"), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("verify: 2 proved"));
    // A nanosecond: the time is up before the first query is asked (the
    // budget counts building the queries too), and the trace is
    // unknown, never proved.
    let heavy = format!("{CORPUS}/boxed_numbers.log:1");
    let out = traceopt(
        &[
            "opt",
            "--peel",
            "--verify",
            "--budget",
            "0.000000001",
            &heavy,
        ],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("verify: 0 proved, 0 refuted, 1 unknown"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the time given to this work is spent"),
        "{stderr}"
    );
    // A negative budget is refused, naming the option.
    let out = traceopt(&["opt", "--verify", "--budget", "-1", log], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("'--budget <SECS>'"), "{stderr}");
}
