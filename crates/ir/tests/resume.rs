//! Resume data with virtual objects: a guard's fail arguments may name
//! objects the trace does not allocate, described after `where`. They
//! parse into `Op::virtuals`, print back to the same text, and the checker
//! and the parser reject what cannot be rebuilt.

use std::sync::Arc;
use traceopt_ir::{
    check, parse_trace, parse_trace_with, print_trace, thin_vec, CheckOptions, FailArg, Namespace,
    Opcode, Trace, Virtual,
};

const CHECK: CheckOptions = CheckOptions {
    require_fail_args: true,
    partial: false,
};

/// PyPy's heap-test namespace (nodesize, valuedescr, arraydescr, ...).
fn namespace() -> Arc<Namespace> {
    let path = traceopt_ir::shared_dir().join("peer/heap/descrs.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Arc::new(Namespace::parse(&text, "descrs.txt").unwrap_or_else(|e| panic!("{e}")))
}

/// Parses with the namespace, checks, and requires the printer to give
/// back the very text.
fn exact(text: &str) -> Trace {
    let ns = Some(namespace());
    let trace = parse_trace_with(text, "t", ns.clone()).unwrap_or_else(|e| panic!("{e}"));
    let errors = check(&trace, "t", CHECK);
    assert!(errors.is_empty(), "{}", errors[0]);
    let printed = print_trace(&trace);
    assert_eq!(printed, text);
    assert_eq!(parse_trace_with(&printed, "t", ns).unwrap(), trace);
    trace
}

fn guard(trace: &Trace) -> &traceopt_ir::Op {
    trace.ops.iter().find(|op| op.opcode.is_guard()).unwrap()
}

#[test]
fn a_virtual_object_with_fields() {
    let t = exact(
        "[i0, i1]\n\
         guard_true(i0) [i1, p2] where p2 = new_with_vtable(descr=nodesize) {valuedescr=i1}\n\
         finish(i1)\n",
    );
    let g = guard(&t);
    assert_eq!(g.fail_args.as_ref().unwrap()[1], FailArg::Virtual(0));
    let v: &Virtual = &g.virtuals[0];
    assert_eq!((&*v.name, v.opcode), ("p2", Opcode::NewWithVtable));
    assert_eq!(t.descr(v.descr.unwrap()).text.as_ref(), "nodesize");
    assert_eq!(v.fields.len(), 1);
    assert_eq!(t.descr(v.fields[0].0).text.as_ref(), "valuedescr");
}

#[test]
fn nested_shared_and_cyclic_virtuals() {
    // p2 points to itself; p3 and the fail arguments share p4; the array
    // holds a hole, a constant and a virtual.
    let t = exact(
        "[i0, i1]\n\
         guard_true(i0) [p2, p4, p5, p4] where p2 = new_with_vtable(descr=nodesize) {valuedescr=7, nextdescr=p2}, \
         p4 = new(descr=ssize) {adescr=i1}, p5 = new_array(descr=gcarraydescr) [None, p2, p4, NULL]\n\
         guard_false(i0) [p5] where p5 = new_array_clear(descr=gcarraydescr) [p4, p5], p4 = new(descr=ssize) {}\n\
         finish(i1)\n",
    );
    let g = guard(&t);
    assert_eq!(g.virtuals.len(), 3);
    assert_eq!(g.virtuals[0].fields[1].1, FailArg::Virtual(0));
}

#[test]
fn strings_and_unicode() {
    exact(
        "[i0, i1]\n\
         guard_true(i0) [p2, p3] where p2 = newstr() [104, i1], p3 = newunicode() [955]\n\
         finish(i1)\n",
    );
}

#[test]
fn without_a_namespace_descr_names_are_kept() {
    let text = "[i0]\nguard_true(i0) [p1] where p1 = new(descr=sdescr) {fdescr=i0, gdescr=p1}\nfinish(i0)\n";
    let trace = parse_trace(text, "t").unwrap();
    assert_eq!(print_trace(&trace), text);
}

fn parse_error(text: &str) -> String {
    match parse_trace_with(text, "t", Some(namespace())) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_resume_data_is_a_located_parse_error() {
    let cases = [
        // A name that is neither a value nor described.
        ("[i0]\nguard_true(i0) [p9]\nfinish(i0)\n", "'p9', which is neither"),
        // A value's name given to a virtual.
        (
            "[i0, p1]\nguard_true(i0) [p1] where p1 = new(descr=ssize) {}\nfinish(i0)\n",
            "a value defined before",
        ),
        (
            "[i0]\nguard_true(i0) [p2] where p2 = new(descr=ssize) {}, p2 = new(descr=ssize) {}\nfinish(i0)\n",
            "'p2' again",
        ),
        (
            "[i0]\nguard_true(i0) [p2] where p2 = int_add(descr=ssize) {}\nfinish(i0)\n",
            "a virtual is one of these allocations",
        ),
        (
            "[i0]\nguard_true(i0) [p2] where p2 = new(descr=ssize) [i0]\nfinish(i0)\n",
            "'{' and the virtual's fields",
        ),
        (
            "[i0]\nguard_true(i0) [p2] where p2 = new_array(3, descr=arraydescr) [i0]\nfinish(i0)\n",
            "takes only its descr",
        ),
        (
            "[i0]\nguard_true(i0) [p2] where p2 = new(descr=ssize) {adescr i0}\nfinish(i0)\n",
            "'=' and the field's value",
        ),
    ];
    for (text, words) in cases {
        let message = parse_error(text);
        assert!(message.contains(words), "{text}\n{message}");
        assert!(message.contains("t:2:"), "not located on line 2: {message}");
    }
}

fn check_errors(text: &str) -> String {
    let trace = parse_trace_with(text, "t", Some(namespace())).unwrap_or_else(|e| panic!("{e}"));
    let errors: Vec<String> = check(&trace, "t", CHECK)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert!(!errors.is_empty(), "passed the checker:\n{text}");
    errors.join("\n")
}

#[test]
fn the_checker_rejects_virtuals_that_cannot_be_rebuilt() {
    let cases = [
        (
            "[i0]\nguard_true(i0) [i0] where p2 = new(descr=ssize) {}\nfinish(i0)\n",
            "which nothing refers to",
        ),
        (
            "[i0]\nguard_true(i0) [p2] where p2 = new_with_vtable(descr=arraydescr) {}\nfinish(i0)\n",
            "a size descr for virtual p2",
        ),
        (
            "[i0]\nguard_true(i0) [p2] where p2 = new_array(descr=nodesize) [i0]\nfinish(i0)\n",
            "an array descr for virtual p2",
        ),
        (
            "[i0]\nguard_true(i0) [p2] where p2 = new(descr=ssize) {arraydescr=i0}\nfinish(i0)\n",
            "field descrs for the fields of virtual p2",
        ),
        (
            "[i0, p1]\nguard_true(i0) [p2] where p2 = newstr() [p1]\nfinish(i0)\n",
            "characters (ints) as the items of virtual p2",
        ),
        (
            "[i0]\nguard_true(i0) [p2] where p2 = newstr(descr=arraydescr) [1]\nfinish(i0)\n",
            "no descr for virtual p2",
        ),
        (
            "[i0]\ni1 = int_add(i0, 1) [p2] where p2 = new(descr=ssize) {}\nfinish(i0)\n",
            "not a guard",
        ),
    ];
    for (text, words) in cases {
        let errors = check_errors(text);
        assert!(errors.contains(words), "{text}\n{errors}");
    }
}

#[test]
fn the_printer_renames_a_virtual_whose_name_a_value_took() {
    let mut trace = parse_trace(
        "[i0, p1]\nguard_true(i0) [p2] where p2 = new(descr=s) {}\nfinish(i0)\n",
        "t",
    )
    .unwrap();
    trace.ops[0].virtuals[0].name = "p1".into();
    let printed = print_trace(&trace);
    assert!(
        printed.contains("[pv0] where pv0 = new(descr=s) {}"),
        "{printed}"
    );
    let again = parse_trace(&printed, "t").unwrap();
    assert_eq!(
        again.ops[0].virtuals[0].fields,
        trace.ops[0].virtuals[0].fields
    );
}

#[test]
fn a_dangling_virtual_prints_and_is_reported_not_a_panic() {
    let mut trace = parse_trace("[i0]\nguard_true(i0) [i0]\nfinish(i0)\n", "t").unwrap();
    trace.ops[0].fail_args = Some(thin_vec![FailArg::Virtual(3)]);
    assert!(print_trace(&trace).contains("[missing_virtual_3]"));
    let errors = check(&trace, "t", CHECK);
    assert!(
        errors[0]
            .to_string()
            .contains("refers to an id that does not exist"),
        "{}",
        errors[0]
    );
}

#[test]
fn pending_writes_name_objects_values_and_virtuals() {
    let t = exact(
        "[p0, i1, p2]\n\
         guard_true(i1) [i1] where p3 = new_with_vtable(descr=nodesize) {valuedescr=i1} \
         writes setfield_gc(p0, p3, descr=nextdescr), setarrayitem_gc(p2, 1, i1, descr=arraydescr)\n\
         finish(i1)\n",
    );
    let g = guard(&t);
    assert_eq!(g.pending.len(), 2);
    assert_eq!(g.pending[0].value, FailArg::Virtual(0));
    assert!(g.pending[0].index.is_none() && g.pending[1].index.is_some());
    // The value of a pending write refers to the virtual: it is reached.
    assert!(check(&t, "t", CHECK).is_empty());
    // A field write with an array descr is an error.
    let ns = Some(namespace());
    let wrong =
        "[p0, i1]\nguard_true(i1) [i1] writes setfield_gc(p0, i1, descr=arraydescr)\nfinish(i1)\n";
    let trace = parse_trace_with(wrong, "t", ns.clone()).unwrap();
    assert!(!check(&trace, "t", CHECK).is_empty());
    let unknown =
        "[p0, i1]\nguard_true(i1) [i1] writes setfoo(p0, i1, descr=valuedescr)\nfinish(i1)\n";
    let err = parse_trace_with(unknown, "t", ns).unwrap_err().to_string();
    assert!(err.contains("setfield_gc or setarrayitem_gc"), "{err}");
}
