//! Every descr and constant form PyPy's logs and tests write: each one
//! parses, checks, reads back into the right structure, and prints so that
//! parsing the print gives the same trace. And the faults of bad text:
//! integers beyond 64 bits, invalid UTF-8, overlong tokens, one bad case
//! or log section among good ones.

use std::sync::Arc;
use traceopt_ir::peer::read_peer;
use traceopt_ir::{
    check, decode, parse_trace, parse_trace_with, print_trace, read_log, CallDescr, CellKind,
    CheckOptions, Const, ConstId, DescrId, DescrKind, ExtraEffect, HeapSet, Namespace, Trace,
};

const CHECK: CheckOptions = CheckOptions {
    require_fail_args: false,
    partial: true,
};

/// Parses, checks, and round-trips through the printer.
fn good(text: &str) -> Trace {
    good_with(text, None)
}

fn good_with(text: &str, ns: Option<Arc<Namespace>>) -> Trace {
    let trace = parse_trace_with(text, "t", ns.clone()).unwrap_or_else(|e| panic!("{e}"));
    let errors = check(&trace, "t", CHECK);
    assert!(errors.is_empty(), "{}", errors[0]);
    let printed = print_trace(&trace);
    let again = parse_trace_with(&printed, "t", ns).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert_eq!(again, trace, "round trip of\n{printed}");
    trace
}

fn descr_of(text: &str) -> DescrKind {
    good(text).descr(DescrId(0)).kind.clone()
}

fn the_const(trace: &Trace) -> &Const {
    trace.constant(ConstId(0))
}

#[test]
fn field_descr_with_every_letter() {
    for (letter, op, cell) in [
        (
            'S',
            "i1 = getfield_gc_i(p0, descr=<FieldS W.f 8>)",
            CellKind::Signed,
        ),
        (
            'U',
            "i1 = getfield_gc_i(p0, descr=<FieldU W.f 8>)",
            CellKind::Unsigned,
        ),
        (
            'P',
            "p1 = getfield_gc_r(p0, descr=<FieldP W.f 8>)",
            CellKind::Pointer,
        ),
        (
            'F',
            "f1 = getfield_gc_f(p0, descr=<FieldF W.f 8>)",
            CellKind::Float,
        ),
    ] {
        let DescrKind::Field(f) = descr_of(&format!("[p0]\n{op}\njump(p0)")) else {
            panic!("{letter}")
        };
        assert_eq!(f.cell, cell);
    }
    // X and V fields hold no value a getfield could read: they parse, and
    // the checker leaves their type alone.
    for letter in ['X', 'V'] {
        let DescrKind::Field(f) = descr_of(&format!(
            "[p0]\ni1 = getfield_gc_i(p0, descr=<Field{letter} W.f 8>)\njump(p0)"
        )) else {
            panic!()
        };
        assert_eq!(f.cell.letter(), letter);
    }
}

#[test]
fn pure_field_descr() {
    let DescrKind::Field(f) = descr_of(
        "[p0]\ni1 = getfield_gc_i(p0, descr=<FieldS W_IntObject.inst_intval 8 pure>)\njump(p0)",
    ) else {
        panic!()
    };
    assert!(f.pure && !f.quasi_immutable);
}

#[test]
fn array_descr_of_structs_from_a_dict_heavy_log() {
    let DescrKind::Array(a) = descr_of("[p0]\ni1 = arraylen_gc(p0, descr=<ArrayX 24>)\njump(p0)")
    else {
        panic!()
    };
    assert_eq!((a.cell, a.item_size), (CellKind::Struct, 24));
    for letter in ['S', 'U', 'P', 'F', 'V'] {
        let kind = descr_of(&format!(
            "[p0]\ni1 = arraylen_gc(p0, descr=<Array{letter} 8>)\njump(p0)"
        ));
        assert!(matches!(kind, DescrKind::Array(a) if a.cell.letter() == letter));
    }
}

#[test]
fn interior_field_descr() {
    let DescrKind::InteriorField(i) = descr_of(
        "[p0, i0]\np1 = getinteriorfield_gc_r(p0, i0, descr=<InteriorFieldDescr <FieldP dictentry.key 8>>)\njump(p0, i0)",
    ) else {
        panic!()
    };
    assert_eq!((&*i.field.name, i.field.offset), ("dictentry.key", 8));
}

#[test]
fn size_descr() {
    assert!(matches!(
        descr_of("[]\np0 = new_with_vtable(descr=<SizeDescr 16>)\njump()"),
        DescrKind::Size(s) if s.size == 16 && s.vtable.is_none()
    ));
}

fn call_descr(text: &str) -> CallDescr {
    match descr_of(text) {
        DescrKind::Call(c) => c,
        other => panic!("{other:?}"),
    }
}

#[test]
fn call_descrs_of_every_result_kind_and_effect() {
    for (op, letter) in [
        (
            "i1 = call_i(ConstClass(f), i0, descr=<Calli 8 i EF=5>)",
            'i',
        ),
        (
            "p1 = call_r(ConstClass(f), i0, descr=<Callr 8 i EF=4>)",
            'r',
        ),
        (
            "f1 = call_f(ConstClass(f), i0, descr=<Callf 8 i EF=0 OS=70>)",
            'f',
        ),
        ("call_n(ConstClass(f), i0, descr=<Callv 0 i EF=2>)", 'v'),
        (
            "i1 = call_i(ConstClass(f), i0, descr=<CallS 4 i EF=3>)",
            'S',
        ),
        (
            "f1 = call_f(ConstClass(f), i0, descr=<CallL 8 i EF=7>)",
            'L',
        ),
    ] {
        let c = call_descr(&format!("[i0]\n{op}\njump(i0)"));
        assert_eq!(c.result, letter);
    }
    for level in 0..8u32 {
        let c = call_descr(&format!(
            "[i0]\ni1 = call_i(ConstClass(f), i0, descr=<Calli 8 irfLS EF={level} OS=12>)\njump(i0)"
        ));
        assert_eq!(c.effect.map(ExtraEffect::level), Some(level));
        assert_eq!(c.oopspec, Some(12));
    }
}

#[test]
fn call_descr_without_effect_info_writes_everything() {
    let c = call_descr("[i0]\ni1 = call_i(ConstClass(f), i0, descr=<Calli 8 i>)\njump(i0)");
    assert_eq!(
        (c.effect, c.writes, c.reads),
        (None, HeapSet::All, HeapSet::All)
    );
}

#[test]
fn guard_loop_and_target_tokens() {
    let trace = good(
        "[i0]\n+10: label(i0, descr=TargetToken(140737))\n+20: guard_true(i0, descr=<Guard0x7ffff4036e00>) [i0]\n+30: jump(i0, descr=TargetToken(140737))",
    );
    assert!(matches!(
        trace.descr(DescrId(0)).kind,
        DescrKind::TargetToken { address: 140737 }
    ));
    assert!(matches!(
        trace.descr(DescrId(1)).kind,
        DescrKind::Guard { .. }
    ));
    let trace = good("[i0]\ni1 = call_assembler_i(i0, descr=<Loop3>)\njump(i0, descr=<Loop-1>)");
    assert!(matches!(
        trace.descr(DescrId(0)).kind,
        DescrKind::Loop { number: Some(3) }
    ));
    // PyPy's tests give a label a bare number as its token.
    let trace = good("[i1]\nlabel(i1, descr=123)\njump(i1, descr=123)");
    assert!(matches!(
        trace.descr(DescrId(0)).kind,
        DescrKind::TargetToken { address: 123 }
    ));
}

#[test]
fn quasi_immut_descr_by_address() {
    let trace = good(
        "[p0]\nquasiimmut_field(p0, descr=<QuasiImmutDescr object at 0x7ffff3f7c320>)\nguard_not_invalidated() []\njump(p0)",
    );
    assert!(matches!(
        trace.descr(DescrId(0)).kind,
        DescrKind::QuasiImmut(_)
    ));
}

#[test]
fn const_ptr_by_number() {
    let trace = good("[]\ni0 = ptr_eq(ConstPtr(ptr12), ConstPtr(ptr12))\njump()");
    assert_eq!(the_const(&trace), &Const::Ptr("ptr12".into()));
}

#[test]
fn const_ptr_null() {
    let trace = good("[p0]\ni0 = ptr_eq(p0, ConstPtr(null))\njump(p0)");
    assert_eq!(the_const(&trace), &Const::Null);
    let trace = good("[p0]\ni0 = ptr_eq(p0, NULL)\njump(p0)");
    assert_eq!(the_const(&trace), &Const::Null);
}

#[test]
fn const_class() {
    let trace = good("[p0]\nguard_class(p0, ConstClass(W_IntObject)) []\njump(p0)");
    assert_eq!(the_const(&trace), &Const::Class("W_IntObject".into()));
}

#[test]
fn const_int_by_name_and_by_number() {
    let trace = good("[p0]\nguard_gc_type(p0, ConstInt(node_tid)) []\njump(p0)");
    assert_eq!(the_const(&trace), &Const::IntName("node_tid".into()));
    let trace = good("[i0]\ni1 = int_add(i0, ConstInt(7))\njump(i1)");
    assert_eq!(the_const(&trace), &Const::Int(7));
}

#[test]
fn string_objects() {
    let trace = good("[]\ni0 = ptr_eq(s\"abc\", u\"xy\")\njump()");
    assert_eq!(
        trace.consts().cloned().collect::<Vec<_>>(),
        vec![
            Const::String {
                unicode: false,
                text: "abc".into()
            },
            Const::String {
                unicode: true,
                text: "xy".into()
            }
        ]
    );
    // A plain quoted string where an op wants a ref is a string object.
    let trace = good("[]\np0 = call_r(0, \"xy\", descr=<Callr 8 r EF=4>)\njump()");
    assert!(trace.consts().any(|c| *c
        == Const::String {
            unicode: false,
            text: "xy".into()
        }));
}

#[test]
fn string_with_a_nul_byte() {
    let trace = good("[]\ni0 = ptr_eq(s\"abc\", s\"\0\")\njump()");
    assert!(trace.consts().any(|c| *c
        == Const::String {
            unicode: false,
            text: "\0".into()
        }));
}

#[test]
fn debug_merge_point_text_stays_text() {
    let trace = good(
        "[i0]\ndebug_merge_point(0, 0, '<code object f. file \"x.py\". line 3> #12 LOAD_FAST')\ndebug_merge_point(15, 0, 1)\njump(i0)",
    );
    assert!(matches!(the_const(&trace), Const::Int(0)));
    assert!(trace.consts().any(|c| matches!(c, Const::Str(_))));
}

#[test]
fn debug_merge_point_text_holds_quotes_and_backslashes_raw() {
    // PyPy writes the location unescaped; a quote inside does not close it.
    let text = "[i0]\ndebug_merge_point(0, 0, 'tally;it's \"odd\". c:\\dir\\file.py:2-4~#12 FOR_ITER')\njump(i0)";
    let trace = good(text);
    assert!(trace
        .consts()
        .any(|c| *c == Const::Str("tally;it's \"odd\". c:\\dir\\file.py:2-4~#12 FOR_ITER".into())));
    good("[i0]\ndebug_merge_point(0, 0, 'größe;évalue.py:3-5~#8 LOAD_FAST')\njump(i0)");
}

#[test]
fn floats_of_every_spelling() {
    let trace = good("[f0]\nf1 = float_add(f0, 1.5)\nf2 = float_add(f1, -0.0)\nf3 = float_add(f2, inf)\nf4 = float_add(f3, -inf)\nf5 = float_add(f4, 1e+300)\nf6 = float_add(f5, nan)\njump(f6)");
    assert_eq!(trace.num_consts(), 6);
}

#[test]
fn integers_at_the_edges_of_64_bits() {
    let trace = good("[i0]\ni1 = int_add(i0, -9223372036854775808)\ni2 = int_add(i1, 9223372036854775807)\ni3 = int_add(i2, 0xffffffffffffffff)\njump(i3)");
    assert_eq!(
        trace.consts().cloned().collect::<Vec<_>>(),
        vec![Const::Int(i64::MIN), Const::Int(i64::MAX), Const::Int(-1)]
    );
}

#[test]
fn integers_beyond_64_bits_are_located_errors() {
    for (literal, col) in [
        ("9223372036854775808", 18),
        ("-9223372036854775809", 18),
        ("18446744073709551616", 18),
        ("99999999999999999999999", 18),
        ("0x10000000000000000", 18),
    ] {
        let text = format!("[i0]\ni1 = int_add(i0, {literal})\njump(i1)");
        let e = parse_trace(&text, "t").unwrap_err();
        assert_eq!((e.line, e.col), (2, col), "{literal}: {e}");
        assert!(e.hint.as_deref().unwrap().contains("64 bits"), "{e}");
    }
}

#[test]
fn invalid_utf8_is_an_error_at_its_line() {
    let mut bytes = b"[i0]\ni1 = int_add(i0, 1)\ni2 = int_add(i1, 'ab".to_vec();
    bytes.push(0xff);
    bytes.extend_from_slice(b"')\njump(i2)\n");
    let e = decode(bytes, "bad.trace").unwrap_err();
    assert_eq!((e.line, e.col), (3, 21), "{e}");
    assert!(e.to_string().contains("UTF-8"), "{e}");
}

#[test]
fn an_overlong_token_is_quoted_short() {
    let long = "x".repeat(100_000);
    for text in [
        format!("[i0]\ni1 = int_add(i0, {long})\njump(i1)"),
        format!("[i0]\ni1 = {long}(i0)\njump(i1)"),
        format!("[p0]\ni1 = getfield_gc_i(p0, descr=<FieldS a {long}>)\njump(p0)"),
        format!("[i0]\ni1 = int_add(i0, 1{long})\njump(i1)"),
    ] {
        let e = parse_trace(&text, "t").unwrap_err().to_string();
        assert!(e.len() < 400, "{} chars: {}", e.len(), &e[..400]);
        assert!(e.contains("xxxxxxxxxx…"), "the cut is marked: {e}");
    }
}

const NAMESPACE: &str = "\
node_vtable = class vtable name=NODE struct=NODE sizedescr=nodesize | ConstClass(NODE)
nodesize = size NODE size=32 object vtable=node_vtable fields=[valuedescr,nextdescr] | <SizeDescr 32>
valuedescr = field NODE.value type=int cell=S size=8 offset=8 index=0 owner=nodesize | <FieldS NODE.value 8>
nextdescr = field NODE.next type=ref cell=P size=8 offset=16 index=1 owner=nodesize | <FieldP NODE.next 16>
myptr = ptr object=nodeaddr struct=NODE class=node_vtable value=5 | ConstPtr(ptrN)
node_tid = typeid the GC type id of nodesize | an integer
writevalue = call args=i result=i ressize=8 effect=5/can_raise reads=none writes=fields[valuedescr] | <Calli 8 i EF=5>
";

fn namespace() -> Option<Arc<Namespace>> {
    Some(Arc::new(Namespace::parse(NAMESPACE, "ns.txt").unwrap()))
}

#[test]
fn names_resolve_through_the_namespace() {
    let trace = good_with(
        "[p0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p1, 3, descr=valuedescr)\ni1 = call_i(1, 2, descr=writevalue)\nguard_class(ConstPtr(myptr), ConstClass(node_vtable)) []\nguard_gc_type(p0, ConstInt(node_tid)) []\njump(p1)",
        namespace(),
    );
    let DescrKind::Size(s) = &trace.descr(DescrId(0)).kind else {
        panic!()
    };
    assert_eq!(s.vtable.as_deref(), Some("node_vtable"));
    let DescrKind::Field(f) = &trace.descr(DescrId(1)).kind else {
        panic!()
    };
    assert_eq!((f.index, f.owner.as_deref()), (Some(0), Some("nodesize")));
    let c = trace.descr(DescrId(2)).as_call().unwrap();
    assert!(c.writes.may_touch("valuedescr") && !c.writes.may_touch("nextdescr"));
    assert!(trace.namespace.is_some());
}

#[test]
fn unknown_names_are_errors_with_a_namespace_only() {
    let text = "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr2)\njump(p0)";
    assert!(parse_trace(text, "t").is_ok());
    let e = parse_trace_with(text, "t", namespace()).unwrap_err();
    assert_eq!((e.line, e.col), (2, 30), "{e}");
    assert!(e.found.contains("does not define"), "{e}");
    for (bad, col, expected, found) in [
        (
            "guard_class(p0, ConstClass(myptr)) []",
            28,
            "the name of a class",
            "defines as an object (ConstPtr)",
        ),
        (
            "i1 = ptr_eq(p0, ConstPtr(nowhere))",
            26,
            "the name of a constant object",
            "ns.txt does not define",
        ),
        (
            "i1 = ptr_eq(p0, ConstPtr(node_vtable))",
            26,
            "the name of a constant object",
            "defines as a class (ConstClass)",
        ),
        (
            "guard_gc_type(p0, ConstInt(myptr)) []",
            28,
            "the name of a named integer",
            "defines as an object",
        ),
        (
            "guard_gc_type(p0, ConstInt(node_vtable)) []",
            28,
            "the name of a named integer",
            "defines as a class",
        ),
        (
            "guard_class(p0, ConstClass(node_tid)) []",
            28,
            "the name of a class",
            "defines as a type id (ConstInt)",
        ),
        (
            "i1 = getfield_gc_i(p0, descr=myptr)",
            30,
            "a descr name",
            "defines as an object",
        ),
    ] {
        let text = format!("[p0]\n{bad}\njump(p0)");
        let e = parse_trace_with(&text, "t", namespace()).unwrap_err();
        assert_eq!((e.line, e.col), (2, col), "{bad}: {e}");
        assert_eq!(e.expected, expected, "{bad}");
        assert!(e.found.contains(found), "{bad}: {e}");
    }
}

#[test]
fn peer_cases_with_preamble_short_and_keys() {
    let text = "\
### case_one (optimize_loop, unrolled)
# jump_values: None, myptr
--- ops
[i0]
i1 = int_add(i0, 1)
jump(i1)
--- expected
[i0]
jump(i0)
--- preamble
[i0]
jump(i0)
--- short
[i0]
jump(i0)
";
    let set = read_peer(text, "p.txt", None);
    assert!(set.errors.is_empty(), "{}", set.errors[0]);
    let case = &set.cases[0];
    assert!(case.unrolled());
    assert_eq!(case.meta("jump_values"), Some("None, myptr"));
    assert!(case.preamble.is_some() && case.short.is_some());
}

#[test]
fn one_bad_case_does_not_sink_the_set() {
    let good_case = |name: &str| {
        format!("### {name}\n--- ops\n[i0]\njump(i0)\n--- expected\n[i0]\njump(i0)\n\n")
    };
    let text = format!(
        "{}### broken\n--- ops\n[i0]\ni1 = int_invert(i0),\njump(i1)\n--- expected\n[i0]\njump(i0)\n\n{}### no_expected\n--- ops\n[i0]\njump(i0)\n\n{}### wrong_order\n--- expected\n[i0]\njump(i0)\n\n",
        good_case("a"),
        good_case("b"),
        good_case("c"),
    );
    let set = read_peer(&text, "p.txt", None);
    let names: Vec<&str> = set.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    let lines: Vec<u32> = set.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, [12, 26, 40], "{:?}", set.errors);
}

#[test]
fn one_bad_log_section_does_not_sink_the_log() {
    let section = |name: &str, body: &str| {
        format!("[1a] {{{name}\n# Traced loop or bridge with 1 ops\n{body}[1b] {name}}}\n")
    };
    let text = [
        section("jit-log-noopt", "[i0]\ni1 = int_add(i0, 1)\njump(i1)\n"),
        section("jit-log-noopt", "[i0]\ni1 = int_frob(i0, 1)\njump(i1)\n"),
        section("jit-log-opt-loop", "[i0]\njump(i0)\n"),
        section("jit-log-noopt", "[i0]\njump(i0)\n"),
    ]
    .concat();
    let log = read_log(&text, "x.log");
    assert_eq!(log.errors.len(), 1);
    assert_eq!(log.errors[0].line, 10, "{}", log.errors[0]);
    // The optimized loop stays paired with the recorded trace it belongs to
    // (which failed), not with the one before.
    assert_eq!(log.pairs.len(), 3);
    assert!(log.pairs[0].optimized.is_none());
    assert!(log.pairs[1].recorded.is_none() && log.pairs[1].recorded_failed);
    assert!(log.pairs[1].optimized.is_some());
    // A log cut in the middle of a section keeps what came before; the
    // cut line and the missing end are both reported.
    let cut = &text[..text.len() - 10];
    let log = read_log(cut, "cut.log");
    assert_eq!(
        (log.pairs.len(), log.errors.len()),
        (2, 3),
        "{:?}",
        log.errors
    );
    assert!(log.errors[2].hint.as_deref().unwrap().contains("truncated"));
}

#[test]
fn a_label_no_jump_targets_is_a_marker() {
    // PyPy's tests put a bare label mid-trace; values from before it stay
    // usable after it, since nothing enters the trace there.
    good("[i0]\ni1 = int_add(i0, 1)\nlabel(i0, descr=<Loop7>)\ni2 = int_add(i1, 1)\njump(i0)");
    // A label that a jump goes to starts a loop: only its arguments live on.
    let text = "[i0]\ni1 = int_add(i0, 1)\nlabel(i0, descr=TargetToken(7))\ni2 = int_add(i1, 1)\njump(i0, descr=TargetToken(7))";
    let trace = parse_trace(text, "t").unwrap();
    let errors = check(&trace, "t", CHECK);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].to_string().contains("passed through the label"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_descr_of_the_wrong_kind_is_refused() {
    for (op, wanted) in [
        (
            "quasiimmut_field(p0, descr=<FieldS W.f 8>)",
            "quasi-immutable field descr",
        ),
        ("i1 = getfield_gc_i(p0, descr=<ArrayS 8>)", "field descr"),
        (
            "i1 = getarrayitem_gc_i(p0, 0, descr=<FieldS W.f 8>)",
            "array descr",
        ),
        ("p1 = new_with_vtable(descr=<ArrayS 8>)", "size descr"),
        ("i1 = call_i(1, descr=<SizeDescr 8>)", "call descr"),
        (
            "i1 = getinteriorfield_gc_i(p0, 0, descr=<ArrayS 8>)",
            "interior field descr",
        ),
        (
            "i1 = call_assembler_i(p0, descr=<SizeDescr 8>)",
            "loop token",
        ),
    ] {
        let trace = parse_trace(&format!("[p0]\n{op}\njump(p0)"), "t").unwrap();
        let errors = check(&trace, "t", CHECK);
        assert_eq!(errors.len(), 1, "{op}: {errors:?}");
        assert!(
            errors[0].to_string().contains(wanted),
            "{op}: {}",
            errors[0]
        );
    }
}

#[test]
fn an_arity_error_shows_the_signature() {
    let trace = parse_trace("[i0]\ni1 = call_i(descr=<Calli 8 i EF=5>)\njump(i0)", "t").unwrap();
    let errors = check(&trace, "t", CHECK);
    let shown = errors[0].to_string();
    assert!(
        shown.contains("signature of call_i: (any, any...)"),
        "{shown}"
    );
    let trace = parse_trace("[i0]\ni1 = int_add(i0)\njump(i0)", "t").unwrap();
    let shown = check(&trace, "t", CHECK)[0].to_string();
    assert!(
        shown.contains("signature of int_add: (int, int)"),
        "{shown}"
    );
}

#[test]
fn a_section_left_open_is_reported_where_the_next_begins() {
    // A recorded trace whose end marker is missing, then another recorded
    // trace: the first is reported where the second opens, the second read.
    let text = "[1a] {jit-log-noopt\n[i0]\njump(i0)\n[1b] {jit-log-noopt\n[i0]\njump(i0)\n[1c] jit-log-noopt}\n";
    let log = read_log(text, "x.log");
    assert_eq!(log.errors.len(), 1, "{:?}", log.errors);
    assert_eq!(log.errors[0].line, 4);
    assert!(
        log.errors[0].expected.contains("opened on line 1"),
        "{}",
        log.errors[0]
    );
    assert_eq!(log.pairs.len(), 1);
    assert_eq!(log.pairs[0].recorded.as_ref().unwrap().line, 4);
    // A section closed by the end marker of another kind is an error too.
    let text = "[1a] {jit-log-noopt\n[i0]\njump(i0)\n[1b] jit-log-opt-loop}\n";
    let log = read_log(text, "x.log");
    assert_eq!(log.errors.len(), 1, "{:?}", log.errors);
    assert_eq!(log.errors[0].line, 4);
    // Sections of other kinds inside or between are no trace sections.
    let text = "[1a] {jit-summary\n[1b] jit-summary}\n[1c] {jit-log-noopt\n[i0]\njump(i0)\n[1d] jit-log-noopt}\n";
    let log = read_log(text, "x.log");
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    assert_eq!(log.pairs.len(), 1);
}

#[test]
fn an_optimized_section_that_fails_takes_its_place() {
    let section = |name: &str, body: &str| format!("[1a] {{{name}\n{body}[1b] {name}}}\n");
    // recorded, its optimized form (broken), then a bridge of its own.
    let text = [
        section("jit-log-noopt", "[i0]\njump(i0)\n"),
        section("jit-log-opt-loop", "[i0]\ni1 = int_frob(i0)\njump(i0)\n"),
        section("jit-log-opt-bridge", "[i0]\njump(i0)\n"),
    ]
    .concat();
    let log = read_log(&text, "x.log");
    assert_eq!(log.errors.len(), 1);
    assert_eq!(
        log.pairs.len(),
        2,
        "the bridge is not PyPy's form of the recorded trace"
    );
    assert!(log.pairs[0].optimized.is_none() && log.pairs[0].optimized_failed);
    assert!(log.pairs[1].recorded.is_none() && log.pairs[1].optimized.is_some());
}

#[test]
fn a_long_unknown_op_gets_the_plain_hint() {
    let name = "a".repeat(65);
    let e = parse_trace(&format!("[i0]\ni1 = {name}(i0)\njump(i1)"), "t").unwrap_err();
    assert!(e.hint.unwrap().contains("traceopt ops"));
    let e = parse_trace("[i0]\ni1 = int_ad(i0, 1)\njump(i1)", "t").unwrap_err();
    assert!(e.hint.unwrap().contains("did you mean int_add"));
}

#[test]
fn negative_hex_down_to_the_smallest_word() {
    let trace =
        good("[i0]\ni1 = int_add(i0, -0x8000000000000000)\ni2 = int_add(i1, -0x1)\njump(i2)");
    assert_eq!(
        trace.consts().cloned().collect::<Vec<_>>(),
        vec![Const::Int(i64::MIN), Const::Int(-1)]
    );
    assert!(parse_trace("[i0]\ni1 = int_add(i0, -0x8000000000000001)\njump(i1)", "t").is_err());
}

#[test]
fn a_jump_to_loop_zero_leaves_the_trace() {
    // <Loop-1> closes the loop being recorded; <Loop0> is another loop, so
    // its values need not fit this trace's inputs.
    good("[i0]\njump(i0, 1, descr=<Loop0>)");
    let trace = parse_trace("[i0]\njump(i0, 1, descr=<Loop-1>)", "t").unwrap();
    assert_eq!(check(&trace, "t", CHECK).len(), 1);
}

#[test]
fn peer_case_headers_and_comments() {
    let text = "\
### plain (optimize_loop)
# a remark: not a key
# jump_values: None
# here, -50 <= i4 <= -40
--- ops
[i0]
jump(i0)
--- expected
[i0]
jump(i0)
";
    let set = read_peer(text, "p.txt", None);
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    let case = &set.cases[0];
    assert!(!case.unrolled());
    assert_eq!(
        case.meta,
        vec![("jump_values".to_string(), "None".to_string())]
    );
    // Text that is neither a comment, a key nor a part is an error.
    let set = read_peer(&text.replace("# a remark", "a remark"), "p.txt", None);
    assert_eq!(set.errors.len(), 1);
    assert_eq!(set.errors[0].line, 2);
    // A last case whose trace is missing is reported where the file ends.
    let set = read_peer(
        &format!("{text}### cut\n--- ops\n[i0]\njump(i0)\n--- expected\n"),
        "p.txt",
        None,
    );
    assert_eq!(set.errors.len(), 1);
    assert_eq!(set.errors[0].line, 16, "{}", set.errors[0]);
}

#[test]
fn any_cut_of_a_peer_set_or_log_is_an_answer_not_a_panic() {
    let peer = "### c (optimize_loop, unrolled)\n# jump_values: None\n--- ops\n[i0, p1]\ni1 = call_r(0, \"xy\", descr=<Callr 8 r EF=4>)\ndebug_merge_point(0, 0, 'f;it's x.py:1~#2 OP')\nguard_value(p1, ConstPtr(null)) [i0, None]\njump(i0, p1)\n--- expected\n[i0, p1]\njump(i0, p1)\n--- preamble\n[i0, p1]\njump(i0, p1)\n--- short\n[i0]\njump(i0)\n";
    let log = "[1a] {jit-log-noopt\n# Traced loop or bridge with 2 ops\n[i0]\n+12: i1 = int_add(i0, 0x10)\njump(i1, descr=<Loop-1>)\n[1b] jit-log-noopt}\n[1c] {jit-log-opt-loop\n# Loop 1 ((x)) : loop with 1 ops\n[i0]\n+8: label(i0, descr=TargetToken(7))\n+9: jump(i0, descr=TargetToken(7))\n[1d] jit-log-opt-loop}\n";
    for text in [peer, log] {
        for (i, line) in text.lines().enumerate() {
            for end in (0..=line.len()).filter(|&e| line.is_char_boundary(e)) {
                let mut lines: Vec<&str> = text.lines().collect();
                lines[i] = &line[..end];
                let cut = lines.join("\n");
                let _ = traceopt_ir::read_file(&cut, "cut", Some(Arc::new(Namespace::default())));
                let _ = traceopt_ir::read_file(&cut, "cut", None);
            }
        }
    }
}

#[test]
fn none_past_an_ops_arity_is_an_error_not_a_panic() {
    let e = parse_trace("[i0]\ni1 = int_add(i0, 1, None)\njump(i1)", "t").unwrap_err();
    assert_eq!((e.line, e.col), (2, 21), "{e}");
    // A string past the arity is an argument the checker then counts.
    let trace = parse_trace("[i0]\ni1 = int_add(i0, 1, 'x')\njump(i1)", "t").unwrap();
    let errors = check(&trace, "t", CHECK);
    assert!(
        errors[0].to_string().contains("argument(s) for int_add"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_peer_case_gives_pure_call_results() {
    use traceopt_ir::peer::read_peer;
    use traceopt_ir::{Const, PureResult};
    let case = |meta: &str| {
        format!("### t.py:1 test_x (optimize_loop)\n{meta}\n--- ops\n[i0]\nfinish(i0)\n--- expected\n[i0]\nfinish(i0)\n")
    };
    let set = read_peer(&case("# call_pure_results: 123, -4 -> 5"), "p.txt", None);
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    assert_eq!(
        set.cases[0].pure_results,
        vec![PureResult {
            args: vec![Const::Int(123), Const::Int(-4)],
            result: Const::Int(5),
        }]
    );
    // Without an arrow, or with a value that is not a constant: an error
    // on that line.
    for bad in [
        "# call_pure_results: 123, 4",
        "# call_pure_results: 123, i0 -> 5",
    ] {
        let set = read_peer(&case(bad), "p.txt", None);
        assert_eq!(set.errors.len(), 1, "{bad}");
        assert_eq!(set.errors[0].line, 2, "{bad}: {}", set.errors[0]);
    }
}

#[test]
fn a_trace_that_shares_constants_numbers_its_own_after_them() {
    let input = good("[i0]\ni1 = int_add(i0, 7)\nguard_true(i1, descr=<Guard0x1>) []\njump(i1)");
    let (consts, descrs) = (input.num_consts(), input.num_descrs());
    let mut output = Trace::new();
    output.share_interned(&input);
    // What the input interned keeps its id; a new entry comes after it.
    assert_eq!(output.add_const(Const::Int(7)), ConstId(0));
    let eight = output.add_const(Const::Int(8));
    assert_eq!(eight, ConstId(consts as u32));
    assert_eq!(output.add_const(Const::Int(8)), eight);
    let guard = input.descrs().next().unwrap().clone();
    assert_eq!(output.add_descr(guard), DescrId(0));
    // The input is untouched.
    assert_eq!((input.num_consts(), input.num_descrs()), (consts, descrs));
    // A trace built from the output sees both, with the same ids.
    let mut again = Trace::new();
    again.share_interned(&output);
    assert_eq!(again.constant(eight), &Const::Int(8));
    assert_eq!(again.add_const(Const::Int(8)), eight);
    assert_eq!(again.add_const(Const::Int(9)), ConstId(consts as u32 + 1));
    assert_eq!(output.try_constant(ConstId(consts as u32 + 1)), None);
}

#[test]
fn size_descrs_and_the_vref_layout_are_found_in_id_order_across_shared_descrs() {
    let descr = |text: &str| traceopt_ir::Descr::parse(text).unwrap();
    let mut input = Trace::new();
    input.add_descr(descr("<SizeDescr 16>"));
    input.add_descr(descr("<FieldP JitVirtualRef.forced 32>"));
    let mut output = Trace::new();
    output.share_interned(&input);
    let size = output.add_descr(descr("<SizeDescr 24>"));
    output.add_descr(descr("<FieldS list.length 8>"));
    output.add_descr(descr("<FieldP JitVirtualRef.forced 16>"));
    output.add_descr(descr("<FieldP JitVirtualRef.virtual_token 40>"));
    // The first of each part: the shared descrs' before the output's own.
    let layout = output.vref_layout();
    assert_eq!(&*layout.forced, "<FieldP JitVirtualRef.forced 32>");
    assert_eq!(&*layout.token, "<FieldP JitVirtualRef.virtual_token 40>");
    assert_eq!(layout, traceopt_ir::VrefLayout::find(output.descrs()));
    let sizes = |t: &Trace| t.size_descrs().map(|(d, _)| d).collect::<Vec<_>>();
    assert_eq!(sizes(&output), [DescrId(0), size]);
    // A trace sharing the output's (its own merged in) finds the same.
    let mut again = Trace::new();
    again.share_interned(&output);
    assert_eq!(again.vref_layout(), layout);
    assert_eq!(sizes(&again), sizes(&output));
}
