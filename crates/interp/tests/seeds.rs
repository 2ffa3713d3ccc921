//! The programs of the seeds, run: the toy allocation programs of seed 002
//! (alloc/store/load/print become new/setfield_gc/getfield_gc/escape_i)
//! and the random and buggy traces of seed 000.

mod common;

use common::*;
use traceopt_interp::{run, DefaultEnv, ErrorKind, Heap, HeapObject, Limits, Outcome, Val};

// ---- seed 002: allocation removal in the toy optimizer ----

#[test]
fn toy_interpret_prints_17() {
    let text = "[i0]
        p1 = new(descr=sizedescr)
        setfield_gc(p1, i0, descr=valuedescr)
        i2 = getfield_gc_i(p1, descr=valuedescr)
        i3 = escape_i(i2)
        finish()";
    let run = go(text, &[Val::Int(17)]).unwrap();
    assert_eq!(run.escaped, vec![(3, vec![Val::Int(17)])]);
    assert_eq!(run.outcome, Outcome::Finished { values: vec![] });
    let trace = parse(text);
    assert_eq!(value(&trace, &run, "i3"), Some(Val::Int(17)));
    assert_eq!(run.heap.len(), 1);
}

#[test]
fn toy_two_allocations_one_pointing_to_the_other() {
    let text = "[i0]
        p1 = new(descr=sizedescr)
        setfield_gc(p1, i0, descr=field0)
        p2 = new(descr=sizedescr)
        setfield_gc(p2, p1, descr=field0)
        p3 = getfield_gc_r(p2, descr=field0)
        i4 = getfield_gc_i(p3, descr=field0)
        i5 = escape_i(i4)
        finish(p3)";
    let trace = parse(text);
    let run = run(&trace, &[Val::Int(17)], &mut DefaultEnv, Limits::default()).unwrap();
    assert_eq!(run.escaped, vec![(6, vec![Val::Int(17)])]);
    // var1 is obj0 and var2 is var0, as the seed's diagram says.
    assert_eq!(value(&trace, &run, "p3"), value(&trace, &run, "p1"));
    assert_eq!(
        run.outcome,
        Outcome::Finished {
            values: vec![value(&trace, &run, "p1").unwrap()]
        }
    );
}

/// A heap with one plain object for the non-virtual input `var0`.
fn heap_with_input() -> (Heap, Val) {
    let mut heap = Heap::new();
    let id = heap.alloc_object(0);
    (heap, Val::Ref(Some(id)))
}

fn field(heap: &Heap, obj: Val, descr: &str) -> Option<Val> {
    heap.field(obj.as_ref()??, descr)
}

#[test]
fn toy_materialize_stores_a_new_object_into_an_input() {
    let (heap, p0) = heap_with_input();
    let run = go_heap(
        "[p0]
        p1 = new(descr=sizedescr)
        setfield_gc(p0, p1, descr=field0)
        finish()",
        &[p0],
        heap,
    )
    .unwrap();
    let stored = field(&run.heap, p0, "field0").unwrap();
    assert_ne!(stored, p0);
    assert!(matches!(
        run.heap.get(stored.as_ref().unwrap().unwrap()),
        Some(HeapObject::Object { class: 0, fields }) if fields.is_empty()
    ));
}

#[test]
fn toy_materialize_fields_and_chained_objects() {
    let (heap, p0) = heap_with_input();
    let run = go_heap(
        "[p0, i1]
        p2 = new(descr=sizedescr)
        setfield_gc(p2, 8, descr=field0)
        setfield_gc(p2, i1, descr=field1)
        p3 = new(descr=sizedescr)
        p4 = new(descr=sizedescr)
        setfield_gc(p3, p4, descr=field0)
        setfield_gc(p4, 1337, descr=field0)
        setfield_gc(p0, p2, descr=field0)
        setfield_gc(p0, p3, descr=field1)
        finish()",
        &[p0, Val::Int(5)],
        heap,
    )
    .unwrap();
    let h = &run.heap;
    let obj = field(h, p0, "field0").unwrap();
    assert_eq!(field(h, obj, "field0"), Some(Val::Int(8)));
    assert_eq!(field(h, obj, "field1"), Some(Val::Int(5)));
    let obj0 = field(h, p0, "field1").unwrap();
    let obj1 = field(h, obj0, "field0").unwrap();
    assert_eq!(field(h, obj1, "field0"), Some(Val::Int(1337)));
}

#[test]
fn toy_object_graph_cycle() {
    let (heap, p0) = heap_with_input();
    let text = "[p0]
        p1 = new(descr=sizedescr)
        setfield_gc(p1, p1, descr=field0)
        setfield_gc(p0, p1, descr=field1)
        p2 = getfield_gc_r(p0, descr=field1)
        p3 = getfield_gc_r(p2, descr=field0)
        p4 = getfield_gc_r(p3, descr=field0)
        i5 = ptr_eq(p4, p1)
        finish(i5)";
    let run = go_heap(text, &[p0], heap).unwrap();
    assert_eq!(
        run.outcome,
        Outcome::Finished {
            values: vec![Val::Int(1)]
        }
    );
    let obj = field(&run.heap, p0, "field1").unwrap();
    assert_eq!(field(&run.heap, obj, "field0"), Some(obj));
}

#[test]
fn toy_load_from_a_non_virtual_input() {
    let (mut heap, p0) = heap_with_input();
    heap.set_field(p0.as_ref().unwrap().unwrap(), "field0", Val::Int(42));
    let text = "[p0]
        i1 = getfield_gc_i(p0, descr=field0)
        i2 = escape_i(i1)
        finish()";
    let run = go_heap(text, &[p0], heap).unwrap();
    assert_eq!(run.escaped, vec![(1, vec![Val::Int(42)])]);
    // A field the heap does not have reads the default env's zero.
    let (heap, p0) = heap_with_input();
    let run = go_heap(text, &[p0], heap).unwrap();
    assert_eq!(run.escaped, vec![(1, vec![Val::Int(0)])]);
}

#[test]
fn toy_sink_allocations() {
    let (heap, p0) = heap_with_input();
    let run = go_heap(
        "[p0]
        p1 = new(descr=sizedescr)
        setfield_gc(p1, 123, descr=field0)
        setfield_gc(p1, 456, descr=field1)
        i4 = getfield_gc_i(p1, descr=field0)
        i5 = getfield_gc_i(p1, descr=field1)
        i6 = int_add(i4, i5)
        setfield_gc(p1, i6, descr=field0)
        setfield_gc(p0, p1, descr=field1)
        finish()",
        &[p0],
        heap,
    )
    .unwrap();
    let obj = field(&run.heap, p0, "field1").unwrap();
    assert_eq!(field(&run.heap, obj, "field0"), Some(Val::Int(579)));
    assert_eq!(field(&run.heap, obj, "field1"), Some(Val::Int(456)));
}

#[test]
fn toy_materialize_on_other_ops_escapes_the_object() {
    let run = go(
        "[i0]
        p1 = new(descr=sizedescr)
        p2 = escape_r(p1)
        finish(p2)",
        &[Val::Int(0)],
    )
    .unwrap();
    let obj = Val::Ref(Some(traceopt_interp::ObjId(0)));
    assert_eq!(run.escaped, vec![(1, vec![obj])]);
    assert_eq!(run.outcome, Outcome::Finished { values: vec![obj] });
}

// ---- seed 000: the random trace with its example values ----

const RANDOM_TRACE: &str = "
[i0, i1, i2, i3, i4, i5] # example values: 9, 11, -8, -95, 46, 57
i6 = int_add_ovf(i3, i0) # -86
guard_no_overflow()
i7 = int_sub(i2, -35/ci) # 27
i8 = uint_ge(i3, i5) # 1
guard_true(i8)
i9 = int_lt(i7, i8) # 0
i10 = int_mul_ovf(34/ci, i7) # 918
guard_no_overflow()
i11 = int_and(i10, 63/ci) # 22
i12 = int_rshift(i3, i11) # -1
i13 = int_is_zero(i7) # 0
i14 = int_is_true(i13) # 0
guard_false(i13)
i15 = int_lt(i8, i4) # 1
i16 = int_and(i6, i0) # 8
i17 = uint_ge(i6, -6/ci) # 0
finish()
";

#[test]
fn random_trace_every_value_matches_the_seed() {
    let trace = parse(RANDOM_TRACE);
    let run = run(
        &trace,
        &ints(&[9, 11, -8, -95, 46, 57]),
        &mut DefaultEnv,
        Limits::default(),
    )
    .unwrap();
    assert_eq!(run.outcome, Outcome::Finished { values: vec![] });
    let expected = [
        ("i6", -86),
        ("i7", 27),
        ("i8", 1),
        ("i9", 0),
        ("i10", 918),
        ("i11", 22),
        ("i12", -1),
        ("i13", 0),
        ("i14", 0),
        ("i15", 1),
        ("i16", 8),
        ("i17", 0),
    ];
    for (name, v) in expected {
        assert_eq!(value(&trace, &run, name), Some(Val::Int(v)), "{name}");
    }
    // Every value the trace defines was checked (guards define none).
    let defined = run.values.iter().skip(6).filter(|v| v.is_some()).count();
    assert_eq!(defined, expected.len());
}

#[test]
fn random_trace_guards_fail_off_the_example() {
    let trace = parse(RANDOM_TRACE);
    let go = |inputs: &[i64]| {
        run(&trace, &ints(inputs), &mut DefaultEnv, Limits::default())
            .unwrap()
            .outcome
    };
    let failed_at = |op_index| Outcome::GuardFailed {
        op_index,
        fail_values: vec![],
    };
    // int_add_ovf overflows.
    assert_eq!(go(&[1, 11, -8, i64::MAX, 46, 57]), failed_at(1));
    // uint_ge(-95 as unsigned, 57) holds, but not uint_ge(5, 57).
    assert_eq!(go(&[9, 11, -8, 5, 46, 57]), failed_at(4));
    // i2 = -35 makes i7 = 0, so int_is_zero is 1.
    assert_eq!(go(&[9, 11, -35, -95, 46, 57]), failed_at(12));
    // 34 * i7 overflows for i7 near the top.
    assert_eq!(go(&[9, 11, i64::MAX - 35, -95, 46, 57]), failed_at(7));
}

// ---- seed 000: the traces of the two bugs ----

const BUG1: &str = "[i0]
i1 = int_add(i0, 10)
i2 = int_lt(i1, 15)
guard_true(i2)
i3 = int_lt(i0, 6)
guard_true(i3)
jump(0)";

const BUG1_WRONGLY_OPTIMIZED: &str = "[i0]
i1 = int_add(i0, 10)
i2 = int_lt(i1, 15)
guard_true(i2)
jump(0)";

#[test]
fn bug1_both_guards_hold_for_4() {
    let run = go(BUG1, &ints(&[4])).unwrap();
    assert_eq!(run.outcome, Outcome::IterationLimit { values: ints(&[0]) });
    assert_eq!(run.iterations, Limits::default().max_iterations);
}

#[test]
fn bug1_the_wrapping_add_fails_the_second_guard() {
    // The seed's counterexample: i0 + 10 wraps to a negative number, so the
    // first guard holds, but i0 < 6 does not.
    let big = 9_223_372_036_854_775_800;
    let trace = parse(BUG1);
    let run = run(&trace, &ints(&[big]), &mut DefaultEnv, Limits::default()).unwrap();
    assert_eq!(
        value(&trace, &run, "i1"),
        Some(Val::Int(-9_223_372_036_854_775_806))
    );
    assert_eq!(value(&trace, &run, "i2"), Some(Val::Int(1)));
    assert_eq!(value(&trace, &run, "i3"), Some(Val::Int(0)));
    assert_eq!(
        run.outcome,
        Outcome::GuardFailed {
            op_index: 4,
            fail_values: vec![]
        }
    );
    assert_eq!(run.iterations, 0);
    // The wrong optimization removed that guard: it loops instead.
    let optimized = go(BUG1_WRONGLY_OPTIMIZED, &ints(&[big])).unwrap();
    assert!(matches!(optimized.outcome, Outcome::IterationLimit { .. }));
    // The negative twin does not wrap: both guards hold.
    let negative = go(BUG1, &ints(&[-big])).unwrap();
    assert!(matches!(negative.outcome, Outcome::IterationLimit { .. }));
}

const BUG2: &str = "[i0, i1]
i2 = int_add(i0, i1)
i3 = int_sub_ovf(i2, i1)
guard_no_overflow()
finish(i3)";

#[test]
fn bug2_sub_ovf_after_a_wrapping_add() {
    assert_eq!(finished(go(BUG2, &ints(&[5, 3]))), ints(&[5]));
    assert_eq!(finished(go(BUG2, &ints(&[-7, i64::MIN + 7]))), ints(&[-7]));
    // MAXINT + 1 wraps to MININT; MININT - 1 overflows: the guard fails, so
    // `finish(a)` is a wrong optimization.
    for (a, b) in [(i64::MAX, 1), (i64::MIN, -1), (1, i64::MAX)] {
        let run = go(BUG2, &ints(&[a, b])).unwrap();
        assert_eq!(
            run.outcome,
            Outcome::GuardFailed {
                op_index: 2,
                fail_values: vec![]
            },
            "a={a} b={b}"
        );
    }
    // The correct variant of the seed: check the add, not the sub.
    let fine = "[i0, i1]
        i2 = int_add_ovf(i0, i1)
        guard_no_overflow()
        i3 = int_sub(i2, i1)
        finish(i3)";
    assert_eq!(finished(go(fine, &ints(&[40, 2]))), ints(&[40]));
    assert!(matches!(
        go(fine, &ints(&[i64::MAX, 1])).unwrap().outcome,
        Outcome::GuardFailed { op_index: 1, .. }
    ));
}

#[test]
fn wrong_input_count_is_an_error() {
    assert_error(go(BUG2, &ints(&[1])), ErrorKind::WrongInputs, None);
}
