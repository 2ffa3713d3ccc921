//! Malformed input gets a located error: file, line, column, what was
//! expected and what was found. One test per kind of mistake, and a property
//! test that feeds mutated corpus lines to the parser, which must not panic.

use proptest::prelude::*;
use traceopt_ir::{check, parse_file, parse_log, parse_trace, CheckOptions, ParseError};

fn parse_error(text: &str) -> ParseError {
    parse_trace(text, "bad.trace").expect_err("this input must not parse")
}

fn check_errors(text: &str) -> Vec<ParseError> {
    let trace = parse_trace(text, "bad.trace").expect("this input parses");
    check(&trace, "bad.trace", CheckOptions::default())
}

fn assert_at(e: &ParseError, line: u32, col: u32, expected: &str, found: &str) {
    assert_eq!(e.file, "bad.trace");
    assert_eq!((e.line, e.col), (line, col), "{e}");
    assert!(e.expected.contains(expected), "expected-part of {e}");
    assert!(e.found.contains(found), "found-part of {e}");
}

#[test]
fn truncated_line() {
    let e = parse_error("[i0]\ni1 = int_add(i0, \njump(i1)\n");
    assert_at(&e, 2, 18, "an argument", "end of the line");
    let e = parse_error("[i0]\ni1 = int_add(i0, 1\n");
    assert_at(&e, 2, 19, "',' or ')'", "end of the line");
    let e = parse_error("[i0, i1\n");
    assert_at(&e, 1, 8, "',' or ']'", "end of the line");
}

#[test]
fn truncated_log() {
    let text = "[1a] {jit-log-noopt\n# Traced loop or bridge with 1 ops\n[i0]\njump(i0)\n";
    let e = parse_log(text, "cut.log").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("cut.log", 5));
    assert!(
        e.expected
            .contains("jit-log-noopt section opened on line 1"),
        "{e}"
    );
    assert!(e.hint.as_deref().unwrap().contains("truncated"));
}

#[test]
fn unknown_op_suggests_close_names() {
    let e = parse_error("[i0]\ni1 = int_addd(i0, 1)\njump(i1)\n");
    assert_at(
        &e,
        2,
        6,
        "an operation name",
        "unknown operation 'int_addd'",
    );
    assert!(e.hint.as_deref().unwrap().contains("int_add"), "{e}");
    assert!(e
        .to_string()
        .starts_with("bad.trace:2:6: expected an operation name"));
}

#[test]
fn wrong_arity() {
    let errors = check_errors("[i0]\ni1 = int_add(i0)\njump(i1)\n");
    assert_eq!(errors.len(), 1);
    assert_at(&errors[0], 2, 6, "2 argument(s) for int_add", "1");
    let errors = check_errors("[i0]\nguard_true(i0, i0) []\njump(i0)\n");
    assert_at(&errors[0], 2, 1, "1 argument(s) for guard_true", "2");
}

#[test]
fn wrong_argument_type() {
    let errors = check_errors("[i0, p1]\ni2 = int_add(i0, p1)\njump(i2, p1)\n");
    assert_eq!(errors.len(), 1);
    assert_at(
        &errors[0],
        2,
        6,
        "argument 2 of int_add to be an int",
        "a ref",
    );
}

#[test]
fn use_before_definition() {
    let e = parse_error("[i0]\ni1 = int_add(i0, i2)\ni2 = int_add(i0, 1)\njump(i1)\n");
    assert_at(&e, 2, 18, "a variable defined on an earlier line", "'i2'");
}

#[test]
fn defined_twice() {
    let e = parse_error("[i0]\ni1 = int_add(i0, 1)\ni1 = int_add(i0, 2)\njump(i1)\n");
    assert_at(
        &e,
        3,
        1,
        "a name not used before",
        "already defined on line 2",
    );
}

#[test]
fn result_name_of_the_wrong_type() {
    let e = parse_error("[i0]\np1 = int_add(i0, 1)\njump(i0)\n");
    assert_at(&e, 2, 1, "a result name starting with 'i'", "'p1'");
    let e = parse_error("[p0, i1]\ni2 = setfield_gc(p0, i1, descr=valuedescr)\njump(p0, i1)\n");
    assert_at(&e, 2, 1, "no result name", "'i2'");
}

#[test]
fn bad_descr() {
    // A descr of a known shape that breaks it.
    let e =
        parse_error("[p0]\ni1 = getfield_gc_i(p0, descr=<FieldS W_IntObject.inst_intval eight>)\n");
    assert_at(&e, 2, 30, "a descr", "<FieldS");
    assert!(e
        .hint
        .as_deref()
        .unwrap()
        .contains("field offset 'eight' is not a number"));
    // A descr on an op that takes none, a missing one, one of the wrong kind.
    let errors = check_errors("[i0]\ni1 = int_add(i0, 1, descr=valuedescr)\njump(i1)\n");
    assert_at(&errors[0], 2, 6, "no descr: int_add takes none", "descr=");
    let errors = check_errors("[p0]\ni1 = getfield_gc_i(p0)\njump(p0)\n");
    assert_at(&errors[0], 2, 6, "a descr for getfield_gc_i", "none");
    let errors = check_errors("[p0]\ni1 = getfield_gc_i(p0, descr=<ArrayS 8>)\njump(p0)\n");
    assert_at(
        &errors[0],
        2,
        6,
        "a field descr for getfield_gc_i",
        "<ArrayS 8>",
    );
    let errors =
        check_errors("[p0]\ni1 = getfield_gc_i(p0, descr=<FieldP node.next 8>)\njump(p0)\n");
    assert_at(&errors[0], 2, 6, "a ref result", "a int");
}

#[test]
fn checker_structure() {
    let errors = check_errors("[i0]\ni1 = int_add(i0, 1)\n");
    assert_at(&errors[0], 2, 6, "end with jump or finish", "int_add last");
    let errors = check_errors("[i0]\njump(i0)\ni1 = int_add(i0, 1)\nfinish(i1)\n");
    assert_at(&errors[0], 2, 1, "jump as the last op", "more ops");
    let errors = check_errors("[i0]\nguard_no_overflow() []\nfinish(i0)\n");
    assert_at(
        &errors[0],
        2,
        1,
        "right after an *_ovf op",
        "start of the trace",
    );
    let trace = parse_trace("[i0]\nguard_true(i0)\nfinish(i0)\n", "bad.trace").unwrap();
    let strict = CheckOptions {
        require_fail_args: true,
        partial: false,
    };
    let errors = check(&trace, "bad.trace", strict);
    assert_at(&errors[0], 2, 1, "fail arguments after guard_true", "none");
    let errors = check_errors("[i0]\ni1 = int_add(i0, 1) [i0]\nfinish(i1)\n");
    assert_at(&errors[0], 2, 6, "no fail arguments", "[...]");
}

#[test]
fn jumps_and_labels() {
    let errors = check_errors("[i0, p1]\ni2 = int_add(i0, 1)\njump(i2, i0, descr=<Loop-1>)\n");
    assert_at(
        &errors[0],
        3,
        1,
        "jump values matching the trace's inputs (ir)",
        "(ii)",
    );
    let errors = check_errors(
        "[i0, i1]\nlabel(i0, descr=TargetToken(7))\ni2 = int_add(i1, 1)\njump(i2, descr=TargetToken(7))\n",
    );
    assert_eq!(errors.len(), 1);
    assert_at(
        &errors[0],
        3,
        6,
        "only values passed through the label on line 2",
        "'i1'",
    );
    let errors = check_errors("[i0]\nlabel(i0, descr=TargetToken(7))\nf1 = cast_int_to_float(i0)\njump(f1, descr=TargetToken(7))\n");
    assert_at(
        &errors[0],
        4,
        1,
        "jump values matching the label on line 2 (i)",
        "(f)",
    );
    // A jump elsewhere need not fit anything here.
    assert!(check_errors(
        "[i0]\nlabel(i0, descr=TargetToken(7))\njump(i0, i0, descr=TargetToken(8))\n"
    )
    .is_empty());
}

#[test]
fn traces_built_with_bad_ids_get_errors_not_panics() {
    use traceopt_ir::{Arg, ConstId, DescrId, Op, Opcode, Pos, Trace, Type, ValueId};
    let mut trace = Trace::new();
    let i0 = trace.add_input(Type::Int, "i0");
    let bad_value = Op::new(
        Opcode::IntAdd,
        vec![Arg::Value(i0), Arg::Value(ValueId(99))],
    );
    trace.push(bad_value, "i1", Pos::default());
    let bad_const = Op::new(Opcode::IntAdd, vec![Arg::Value(i0), Arg::Const(ConstId(7))]);
    trace.push(bad_const, "i2", Pos::default());
    let mut bad_descr = Op::new(Opcode::GuardTrue, vec![Arg::Value(i0)]);
    bad_descr.descr = Some(DescrId(3));
    trace.push(bad_descr, "", Pos::default());
    trace.push(
        Op::new(Opcode::Jump, vec![Arg::Value(i0)]),
        "",
        Pos::default(),
    );
    let errors = check(&trace, "built", CheckOptions::default());
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors
        .iter()
        .all(|e| e.found.contains("refers to an id that does not exist")));
}

#[test]
fn a_good_trace_has_no_errors() {
    let text = "# a comment\n[i0, p1, f2]\n+12: i3 = int_add(i0, 1/ci) # note\n\
                guard_value(p1, ConstPtr(ptr0)) [i0, None]\n\
                f4 = float_add(f2, -1.5e-3)\n\
                debug_merge_point(0, 0, 'f;x.py:1-2~#4 LOAD_FAST')\n\
                guard_class(p1, ConstClass(node_vtable)) []\n\
                i5 = instance_ptr_eq(p1, NULL)\n\
                --end of the loop--\n\
                jump(i3, p1, f4, descr=<Loop-1>)\n";
    assert!(check_errors(text).is_empty());
}

#[test]
fn empty_input_is_an_error_not_a_trace() {
    let e = parse_trace("# nothing here\n\n", "empty.trace").unwrap_err();
    assert_eq!((e.line, e.found.as_str()), (3, "no trace"));
}

fn corpus_lines() -> Vec<String> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/pypy-7.3.11");
    let text = std::fs::read_to_string(dir.join("collatz.log"))
        .expect("the shared corpus sits beside the repo");
    text.lines()
        .filter(|l| !l.starts_with('['))
        .take(400)
        .map(String::from)
        .collect()
}

fn mutate(line: &str, position: usize, kind: u8, byte: u8) -> String {
    let mut bytes = line.as_bytes().to_vec();
    let at = if bytes.is_empty() {
        0
    } else {
        position % (bytes.len() + 1)
    };
    let alphabet = b"(),=[]<>'\"#+-:. 0123456789aipfxNULL_";
    let byte = alphabet[byte as usize % alphabet.len()];
    match kind % 4 {
        0 => bytes.truncate(at),
        1 => bytes.insert(at, byte),
        2 if at < bytes.len() => {
            bytes.remove(at);
        }
        _ if at < bytes.len() => bytes[at] = byte,
        _ => bytes.push(byte),
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn mutated_corpus_lines_never_panic(
        index in 0usize..400,
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..4),
    ) {
        let lines = corpus_lines();
        let mut line = lines[index % lines.len()].clone();
        for (position, kind, byte) in edits {
            line = mutate(&line, position, kind, byte);
        }
        // As an op line after an input line, as a first line, and inside a log.
        let inputs = "[p0, p1, p2, p3, p4, i5, i6, p7, p8, p9, p10, p11, p12, p13, i22, p28, f2]\n";
        for text in [format!("{inputs}{line}\n"), format!("{line}\n"),
                     format!("[1] {{jit-log-noopt\n{inputs}{line}\n[2] jit-log-noopt}}\n")] {
            let traces: Vec<traceopt_ir::Trace> = match parse_file(&text, "mutated") {
                Ok(traceopt_ir::TraceFile::Trace(trace)) => vec![*trace],
                Ok(traceopt_ir::TraceFile::Log(log)) => log.traces().map(|t| t.trace.clone()).collect(),
                _ => vec![],
            };
            for trace in traces {
                let _ = check(&trace, "mutated", CheckOptions::default());
                let _ = traceopt_ir::print_trace(&trace);
            }
        }
    }
}
