//! How every command reads its inputs: the namespace (`--descrs`, or a
//! `descrs.txt` beside the input), bad cases and files skipped with exit
//! code 2 at the end, invalid UTF-8 located.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn traceopt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_traceopt"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh directory for one test's files, under cargo's `target/tmp`
/// (one per test name, emptied at its start: nothing piles up in /tmp).
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("inputs-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, content: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path.display().to_string()
}

const NAMESPACE: &str = "\
intval = field BOX.intval type=int cell=S size=8 offset=8 index=0 owner=boxsize | <FieldS BOX.intval 8>
boxsize = size BOX size=16 plain fields=[intval] | <SizeDescr 16>
";

const TRACE: &str = "[p0]\ni1 = getfield_gc_i(p0, descr=intval)\njump(p0)\n";

#[test]
fn a_namespace_beside_the_input_is_picked_up() {
    let dir = scratch("beside");
    let trace = write(&dir, "t.trace", TRACE.as_bytes());
    // Without a namespace the name stays a bare name.
    let out = traceopt(&["check", &trace]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // With one beside it, a name it lacks is an error.
    write(
        &dir,
        "descrs.txt",
        b"other = field BOX.o type=int cell=S size=8 offset=8 | <FieldS BOX.o 8>\n",
    );
    let out = traceopt(&["check", &trace]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("does not define"),
        "{}",
        text(&out.stderr)
    );
    write(&dir, "descrs.txt", NAMESPACE.as_bytes());
    let out = traceopt(&["check", &trace]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // A directory's descrs.txt is its namespace, not a trace file.
    let out = traceopt(&["check", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("checked 1 trace(s)"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn descrs_flag_works_on_every_command() {
    let dir = scratch("flag");
    let trace = write(&dir, "t.trace", TRACE.as_bytes());
    let ns = write(&dir, "names.txt", NAMESPACE.as_bytes());
    let bad = write(
        &dir,
        "bad.txt",
        b"intval = field BOX.intval type=ref cell=S offset=8\n",
    );
    for command in [
        vec!["check"],
        vec!["print"],
        vec!["stats"],
        vec!["opt"],
        vec!["run", "--arg", "p0=new"],
    ] {
        let mut args = command.clone();
        args.extend(["--descrs", &ns, &trace]);
        let out = traceopt(&args);
        assert!(out.status.success(), "{command:?}: {}", text(&out.stderr));
        let mut args = command.clone();
        args.extend(["--descrs", &bad, &trace]);
        let out = traceopt(&args);
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        let err = text(&out.stderr);
        assert!(err.contains("bad.txt:1:"), "{command:?}: {err}");
    }
    let out = traceopt(&["check", "--descrs", "/nonexistent/names.txt", &trace]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read the namespace file"));
}

#[test]
fn a_bad_case_is_skipped_and_the_rest_processed() {
    let dir = scratch("cases");
    let case = |name: &str, body: &str| {
        format!("### {name}\n--- ops\n[i0]\n{body}jump(i0)\n--- expected\n[i0]\njump(i0)\n\n")
    };
    let set = [
        case("good_one", "i1 = int_add(i0, 0)\n"),
        case("typo", "i1 = int_add(i0, 0),\n"),
        case("ill_typed", "i1 = int_add(i0, NULL)\n"),
        case("good_two", ""),
    ]
    .concat();
    let file = write(&dir, "set.txt", set.as_bytes());
    for command in ["check", "stats", "opt"] {
        let out = traceopt(&[command, &file]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{command}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(err.contains("set.txt:13:"), "{command}: {err}");
        assert!(err.contains("skipped"), "{command}: {err}");
    }
    let out = traceopt(&["check", &file]);
    // The checker sees the ill-typed case itself and counts it.
    assert!(
        text(&out.stdout).contains("checked 6 trace(s): 1 with errors"),
        "{}",
        text(&out.stdout)
    );
    let out = traceopt(&["opt", "--quiet", &file]);
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(all.contains("2 trace(s)"), "{all}");
}

#[test]
fn one_unreadable_file_of_several_is_skipped() {
    let dir = scratch("files");
    write(&dir, "a.trace", b"[i0]\njump(i0)\n");
    write(&dir, "b.trace", b"[i0]\ni1 = int_frob(i0)\njump(i1)\n");
    write(&dir, "c.trace", b"[i0]\njump(i0)\n");
    let out = traceopt(&["check", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("b.trace:2:"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("checked 2 trace(s): 0 with errors"));
}

#[test]
fn invalid_utf8_is_located() {
    let dir = scratch("utf8");
    let file = write(&dir, "t.trace", b"[i0]\njump(i0) # caf\xe9\n");
    let out = traceopt(&["check", &file]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("t.trace:2:15:") && err.contains("UTF-8"),
        "{err}"
    );
}

#[test]
fn every_heap_peer_case_is_read_with_its_namespace() {
    let out = traceopt(&["check", "../../../shared/peer/heap/dev.txt"]);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    // 7 cases fail to parse and are skipped; the rest are checked, and the
    // checker refuses 16 more: see crates/ir/tests/peer_heap.rs.
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches("(skipped;").count(), 7, "{stderr}");
    assert!(stdout.contains("with errors"), "{stdout}");
    assert!(stderr.contains("7 malformed case(s)"), "{stderr}");
}
