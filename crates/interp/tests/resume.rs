//! A failing guard rebuilds the virtual objects of its resume data on the
//! heap, shared and cyclic ones included, and reports them among its fail
//! values.

mod common;

use common::*;
use traceopt_interp::{ErrorKind, HeapObject, Outcome, Val};

#[test]
fn a_failing_guard_builds_its_virtuals() {
    let text = "[i0, i1]\n\
        guard_true(i0) [i1, p2, p3, p2] where p2 = new_with_vtable(descr=<SizeDescr 16>) \
        {<FieldS A.x 8>=i1, <FieldP A.next 16>=p2}, p3 = new_array(descr=<ArrayS 8>) [i1, None, 5]\n\
        finish(i1)\n";
    // The guard holds: nothing is built.
    let run = go(text, &ints(&[1, 42])).unwrap();
    assert!(run.heap.is_empty());
    let run = go(text, &ints(&[0, 42])).unwrap();
    let Outcome::GuardFailed { fail_values, .. } = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    let refs: Vec<_> = fail_values.iter().map(|v| v.unwrap()).collect();
    let (Val::Ref(Some(node)), Val::Ref(Some(array))) = (refs[1], refs[2]) else {
        panic!("{refs:?}");
    };
    assert_eq!(refs[0], Val::Int(42));
    // The same virtual twice is the same object.
    assert_eq!(refs[3], refs[1]);
    assert_eq!(run.heap.field(node, "<FieldS A.x 8>"), Some(Val::Int(42)));
    // It points to itself.
    assert_eq!(run.heap.field(node, "<FieldP A.next 16>"), Some(refs[1]));
    assert!(matches!(
        run.heap.get(node),
        Some(HeapObject::Object { .. })
    ));
    // An item never written is the zero of a fresh array.
    assert_eq!(run.heap.array_items(array), Some(&ints(&[42, 0, 5])[..]));
}

#[test]
fn strings_are_built_from_their_characters() {
    let text = "[i0]\nguard_true(i0) [p1, p2] where p1 = newstr() [104, 105], p2 = newunicode() [955]\nfinish(i0)\n";
    let run = go(text, &ints(&[0])).unwrap();
    let Outcome::GuardFailed { fail_values, .. } = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    let ids: Vec<_> = fail_values
        .iter()
        .map(|v| match v {
            Some(Val::Ref(Some(id))) => *id,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(run.heap.str_bytes(ids[0]), Some(&b"hi"[..]));
    assert_eq!(run.heap.unicode_chars(ids[1]), Some(&[955][..]));
    // A byte string cannot hold 300.
    let text = "[i0]\nguard_true(i0) [p1] where p1 = newstr() [300]\nfinish(i0)\n";
    assert_error(go(text, &ints(&[0])), ErrorKind::TypeMismatch, Some(0));
}

#[test]
fn a_virtual_keeps_what_its_narrow_cells_keep() {
    // Resuming stores the values into the new object as a store to
    // memory does: 256 in an unsigned byte is 0, 255 in a signed one -1.
    let text = "[i0]\n\
        guard_true(i0) [p1, p2] where p1 = new_array(descr=<ArrayU 1>) [256, 3], \
        p2 = new_array(descr=<ArrayS 1>) [255, 3]\n\
        finish(i0)\n";
    let run = go(text, &ints(&[0])).unwrap();
    let Outcome::GuardFailed { fail_values, .. } = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    let items = |k: usize| match fail_values[k] {
        Some(Val::Ref(Some(id))) => run.heap.array_items(id).map(<[Val]>::to_vec),
        _ => None,
    };
    assert_eq!(items(0), Some(ints(&[0, 3])));
    assert_eq!(items(1), Some(ints(&[-1, 3])));
}
