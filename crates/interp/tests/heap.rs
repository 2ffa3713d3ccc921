//! Heap ops (fields, arrays, interior fields, strings) and everything that
//! goes through the `Env`: classes, unknown fields, calls and exceptions,
//! raw memory, invalidation.

mod common;

use common::*;
use traceopt_interp::{
    Call, CallOutcome, Env, ErrorKind, Exception, Fault, Heap, HeapObject, InterpError, MadeBy,
    ObjId, Outcome, RawAccess, Val,
};
use traceopt_ir::{Descr, Opcode, Type};

#[test]
fn arrays_and_their_bounds() {
    let text = "[i0, i1]
        p2 = new_array_clear(i0, descr=<ArrayS 8>)
        i3 = arraylen_gc(p2, descr=<ArrayS 8>)
        setarrayitem_gc(p2, i1, 7, descr=<ArrayS 8>)
        i4 = getarrayitem_gc_i(p2, i1, descr=<ArrayS 8>)
        i5 = getarrayitem_gc_pure_i(p2, 0, descr=<ArrayS 8>)
        i6 = escape_i(i3, i4, i5)
        finish()";
    let run = go(text, &ints(&[3, 2])).unwrap();
    assert_eq!(run.escaped, vec![(5, ints(&[3, 7, 0]))]);
    assert_eq!(run.heap.array_items(ObjId(0)), Some(&ints(&[0, 0, 7])[..]));
    for bad in [3, -1, i64::MIN] {
        assert_error(go(text, &ints(&[3, bad])), ErrorKind::OutOfBounds, Some(2));
    }
    // Index 0 of an empty array.
    assert!(matches!(
        go(text, &ints(&[0, 0])),
        Err(InterpError {
            kind: ErrorKind::OutOfBounds,
            ..
        })
    ));
    // A negative length is undefined; a huge one is beyond the budget.
    assert_error(go(text, &ints(&[-1, 0])), ErrorKind::Undefined, Some(0));
    assert_error(
        go(text, &ints(&[i64::MAX, 0])),
        ErrorKind::Unsupported,
        Some(0),
    );
}

#[test]
fn arrays_are_zeroed_with_their_cell_type_and_typed_on_access() {
    let text = "[i0]
        p1 = new_array(2, descr=<ArrayP 8>)
        p2 = getarrayitem_gc_r(p1, 1, descr=<ArrayP 8>)
        p3 = new_array(2, descr=<ArrayF 8>)
        f4 = getarrayitem_gc_f(p3, 0, descr=<ArrayF 8>)
        p5 = new_array(1, descr=arraydescr)
        i6 = getarrayitem_gc_i(p5, 0, descr=arraydescr)
        finish()";
    let trace = parse(text);
    let run = traceopt_interp::run(
        &trace,
        &ints(&[0]),
        &mut traceopt_interp::DefaultEnv,
        Default::default(),
    )
    .unwrap();
    assert_eq!(value(&trace, &run, "p2"), Some(Val::NULL));
    assert_eq!(value(&trace, &run, "f4"), Some(Val::Float(0.0)));
    assert_eq!(value(&trace, &run, "i6"), Some(Val::Int(0)));
    // Reading an int out of a pointer array, or storing one into it.
    assert_error(go("[i0]\np1 = new_array(2, descr=<ArrayP 8>)\ni2 = getarrayitem_gc_i(p1, 0, descr=<ArrayP 8>)\nfinish(i2)", &ints(&[0])), ErrorKind::TypeMismatch, Some(1));
    assert_error(go("[i0]\np1 = new_array(2, descr=<ArrayP 8>)\nsetarrayitem_gc(p1, 0, i0, descr=<ArrayP 8>)\nfinish()", &ints(&[0])), ErrorKind::TypeMismatch, Some(1));
    // An array is not an instance, and the other way round.
    assert_error(go("[i0]\np1 = new_array(2, descr=<ArrayS 8>)\ni2 = getfield_gc_i(p1, descr=valuedescr)\nfinish(i2)", &ints(&[0])), ErrorKind::TypeMismatch, Some(1));
    assert_error(
        go(
            "[i0]\np1 = new(descr=sizedescr)\ni2 = arraylen_gc(p1, descr=<ArrayS 8>)\nfinish(i2)",
            &ints(&[0]),
        ),
        ErrorKind::TypeMismatch,
        Some(1),
    );
}

#[test]
fn null_dereferences() {
    for text in [
        "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i1)",
        "[p0]\nsetfield_gc(p0, 1, descr=valuedescr)\nfinish()",
        "[p0]\ni1 = arraylen_gc(p0, descr=<ArrayS 8>)\nfinish(i1)",
        "[p0]\ni1 = strlen(p0)\nfinish(i1)",
        "[p0]\ni1 = getinteriorfield_gc_i(p0, 0, descr=<InteriorFieldDescr <FieldS entry.key 0>>)\nfinish(i1)",
    ] {
        let err = go(text, &[Val::NULL]).unwrap_err();
        assert!(matches!(err, InterpError { kind: ErrorKind::NullDereference, op_index: Some(0), .. }), "{text}: {err}");
    }
}

#[test]
fn fields_are_keyed_by_descr_and_typed() {
    let text = "[p0, i1]
        setfield_gc(p0, i1, descr=<FieldS W_IntObject.inst_intval 8 pure>)
        setfield_gc(p0, 2.5, descr=<FieldF W_FloatObject.inst_floatval 8>)
        i2 = getfield_gc_i(p0, descr=<FieldS W_IntObject.inst_intval 8 pure>)
        f3 = getfield_gc_f(p0, descr=<FieldF W_FloatObject.inst_floatval 8>)
        p4 = getfield_gc_r(p0, descr=<FieldP W_ListObject.inst_strategy 16>)
        i5 = escape_i(i2)
        f6 = escape_f(f3)
        p7 = escape_r(p4)
        finish()";
    let mut heap = Heap::new();
    let p0 = heap.alloc_object(0);
    let run = go_heap(text, &[p0.into(), Val::Int(9)], heap).unwrap();
    let escaped: Vec<Val> = run.escaped.iter().map(|(_, v)| v[0]).collect();
    assert_eq!(escaped, vec![Val::Int(9), Val::Float(2.5), Val::NULL]);
    // The unknown field's zero was remembered.
    assert_eq!(
        run.heap.field(p0, "<FieldP W_ListObject.inst_strategy 16>"),
        Some(Val::NULL)
    );
    // A ref into an int field.
    let mut heap = Heap::new();
    let p0 = heap.alloc_object(0);
    assert_error(
        go_heap(
            "[p0]\nsetfield_gc(p0, p0, descr=<FieldS W_IntObject.inst_intval 8 pure>)\nfinish()",
            &[p0.into()],
            heap,
        ),
        ErrorKind::TypeMismatch,
        Some(0),
    );
}

#[test]
fn interior_fields_of_arrays_of_structs() {
    let text = "[i0]
        p1 = new_array_clear(3, descr=entries)
        setinteriorfield_gc(p1, 1, i0, descr=<InteriorFieldDescr <FieldS entry.key 0>>)
        setinteriorfield_gc(p1, 1, ConstPtr(value), descr=<InteriorFieldDescr <FieldP entry.value 8>>)
        i2 = getinteriorfield_gc_i(p1, 1, descr=<InteriorFieldDescr <FieldS entry.key 0>>)
        i3 = getinteriorfield_gc_i(p1, 2, descr=<InteriorFieldDescr <FieldS entry.key 0>>)
        p4 = getinteriorfield_gc_r(p1, 1, descr=<InteriorFieldDescr <FieldP entry.value 8>>)
        i5 = ptr_eq(p4, ConstPtr(value))
        i6 = escape_i(i2, i3, i5)
        i7 = getinteriorfield_gc_i(p1, 3, descr=<InteriorFieldDescr <FieldS entry.key 0>>)
        finish()";
    assert_error(go(text, &ints(&[41])), ErrorKind::OutOfBounds, Some(8));
    let text = text.replace(
        "i7 = getinteriorfield_gc_i(p1, 3",
        "i7 = getinteriorfield_gc_i(p1, 2",
    );
    let run = go(&text, &ints(&[41])).unwrap();
    assert_eq!(run.escaped, vec![(7, ints(&[41, 0, 1]))]);
}

#[test]
fn strings_and_unicode() {
    let text = "[i0]
        p1 = newstr(3)
        strsetitem(p1, 0, 104)
        strsetitem(p1, 1, 105)
        strsetitem(p1, 2, i0)
        p2 = newstr(5)
        copystrcontent(p1, p2, 0, 1, 3)
        i3 = strlen(p2)
        i4 = strgetitem(p2, 2)
        i5 = strhash(p1)
        i6 = escape_i(i3, i4, i5)
        finish(p2)";
    let run = go(text, &ints(&[33])).unwrap();
    let hash = traceopt_interp::stable_hash(b"hi!") as i64;
    assert_eq!(run.escaped, vec![(9, ints(&[5, 105, hash]))]);
    assert_eq!(run.heap.str_bytes(ObjId(1)), Some(&b"\0hi!\0"[..]));
    // A character must fit in a byte; copies must stay in bounds.
    assert_error(go(text, &ints(&[256])), ErrorKind::Undefined, Some(3));
    for copy in [
        "copystrcontent(p1, p2, 0, 3, 3)",
        "copystrcontent(p1, p2, 1, 0, 3)",
        "copystrcontent(p1, p2, 0, 0, -1)",
    ] {
        let bad = text.replace("copystrcontent(p1, p2, 0, 1, 3)", copy);
        assert!(
            matches!(
                go(&bad, &ints(&[33])),
                Err(InterpError {
                    kind: ErrorKind::OutOfBounds,
                    op_index: Some(5),
                    ..
                })
            ),
            "{copy}"
        );
    }
    assert!(matches!(
        go(
            &text.replace("strgetitem(p2, 2)", "strgetitem(p2, 5)"),
            &ints(&[33])
        ),
        Err(InterpError {
            kind: ErrorKind::OutOfBounds,
            op_index: Some(7),
            ..
        })
    ));
    // Overlapping copy within one string behaves like memmove.
    let shift = "[i0]
        p1 = newstr(4)
        strsetitem(p1, 0, 1)
        strsetitem(p1, 1, 2)
        strsetitem(p1, 2, 3)
        copystrcontent(p1, p1, 0, 1, 3)
        finish(p1)";
    let run = go(shift, &ints(&[0])).unwrap();
    assert_eq!(run.heap.str_bytes(ObjId(0)), Some(&[1, 1, 2, 3][..]));

    let uni = "[i0]
        p1 = newunicode(2)
        unicodesetitem(p1, 1, i0)
        i2 = unicodegetitem(p1, 1)
        i3 = unicodelen(p1)
        i4 = escape_i(i2, i3)
        finish()";
    assert_eq!(
        go(uni, &ints(&[0x1f600])).unwrap().escaped,
        vec![(4, ints(&[0x1f600, 2]))]
    );
    assert_error(go(uni, &ints(&[0x110000])), ErrorKind::Undefined, Some(1));
    // str ops on a unicode string are type errors.
    let mixed = "[i0]\np1 = newunicode(2)\ni2 = strlen(p1)\nfinish(i2)";
    assert_error(go(mixed, &ints(&[0])), ErrorKind::TypeMismatch, Some(1));
}

#[test]
fn zero_array_clears_a_range_of_items() {
    let text = "[i0, i1]
        p2 = new_array(4, descr=<ArrayS 8>)
        setarrayitem_gc(p2, 0, 1, descr=<ArrayS 8>)
        setarrayitem_gc(p2, 1, 2, descr=<ArrayS 8>)
        setarrayitem_gc(p2, 2, 3, descr=<ArrayS 8>)
        setarrayitem_gc(p2, 3, 4, descr=<ArrayS 8>)
        zero_array(p2, i0, i1, 8, 8, descr=<ArrayS 8>)
        finish(p2)";
    let run = go(text, &ints(&[1, 2])).unwrap();
    assert_eq!(
        run.heap.array_items(ObjId(0)),
        Some(&ints(&[1, 0, 0, 4])[..])
    );
    assert_error(go(text, &ints(&[3, 2])), ErrorKind::OutOfBounds, Some(5));
}

// ---- through the env ----

/// An env that links `new_with_vtable(descr=nodesize)` to
/// `ConstClass(node_vtable)`, says `node_vtable` is a subclass of
/// `object_vtable`, gives 99 for unknown fields (once), raises from calls
/// to function 13, counts calls, fails `guard_not_invalidated` at op 6 and
/// keeps raw memory in a map.
#[derive(Default)]
struct TestEnv {
    calls: Vec<(Option<Val>, Vec<Val>)>,
    unknown_reads: usize,
    raw: std::collections::HashMap<(i64, i64), Val>,
}

impl Env for TestEnv {
    fn class_of_size_descr(&mut self, descr: &Descr, _: MadeBy<'_>) -> i64 {
        let name = if &*descr.text == "nodesize" {
            "node_vtable"
        } else {
            &descr.text
        };
        self.class_address(name)
    }

    fn is_subclass(&mut self, class: i64, of: i64) -> bool {
        class == of
            || (class == self.class_address("node_vtable")
                && of == self.class_address("object_vtable"))
    }

    fn read_unknown_field(
        &mut self,
        _heap: &mut Heap,
        _obj: ObjId,
        _index: Option<usize>,
        _descr: &Descr,
        ty: Type,
    ) -> Result<Val, Fault> {
        self.unknown_reads += 1;
        Ok(if ty == Type::Int {
            Val::Int(99 + self.unknown_reads as i64 - 1)
        } else {
            Val::zero(ty)
        })
    }

    fn call(&mut self, heap: &mut Heap, call: &Call<'_>) -> Result<CallOutcome, Fault> {
        self.calls.push((call.func, call.args.to_vec()));
        if call.func == Some(Val::Int(13)) {
            let exc = heap.alloc_object(self.class_address("ValueError"));
            return Ok(CallOutcome::Raised(Exception {
                class: self.class_address("ValueError"),
                value: Some(exc),
            }));
        }
        if call.result == Type::Int {
            return Ok(CallOutcome::Returned(Val::Int(
                call.args.len() as i64 * 100,
            )));
        }
        traceopt_interp::default_call(call)
    }

    fn guard_holds(&mut self, opcode: Opcode, op_index: usize) -> bool {
        !(opcode == Opcode::GuardNotInvalidated && op_index == 6)
    }

    fn raw_load(&mut self, _heap: &mut Heap, access: &RawAccess<'_>) -> Result<Val, Fault> {
        Ok(self
            .raw
            .get(&(access.address, access.index))
            .copied()
            .unwrap_or(Val::zero(access.ty)))
    }

    fn raw_store(
        &mut self,
        _heap: &mut Heap,
        access: &RawAccess<'_>,
        value: Val,
    ) -> Result<(), Fault> {
        self.raw.insert((access.address, access.index), value);
        Ok(())
    }
}

#[test]
fn classes_come_from_the_env() {
    let text = "[i0]
        p1 = new_with_vtable(descr=nodesize)
        guard_class(p1, ConstClass(node_vtable)) [i0]
        guard_nonnull_class(p1, ConstClass(node_vtable)) [i0]
        guard_gc_type(p1, ConstClass(node_vtable)) [i0]
        guard_subclass(p1, ConstClass(object_vtable)) [i0]
        guard_is_object(p1) [i0]
        guard_class(p1, ConstClass(other_vtable)) [i0]
        finish()";
    let mut env = TestEnv::default();
    let run = go_env(text, &ints(&[5]), &mut env).unwrap();
    assert_eq!(
        run.outcome,
        Outcome::GuardFailed {
            op_index: 6,
            fail_values: vec![Some(Val::Int(5))]
        }
    );
    // With the default env the class is derived from the descr text.
    let run = go(text, &ints(&[5])).unwrap();
    assert!(matches!(
        run.outcome,
        Outcome::GuardFailed { op_index: 1, .. }
    ));
    assert_eq!(
        run.heap.class_of(ObjId(0)),
        Some(traceopt_interp::stable_address("nodesize"))
    );
    // An array is no object and of no class: it fails guard_is_object
    // and the class tests (PyPy's backend compares type ids); the GC
    // type test of one is a type error.
    for guard in [
        "guard_is_object(p1)",
        "guard_class(p1, 8)",
        "guard_nonnull_class(p1, 8)",
    ] {
        let text = format!("[i0]\np1 = new_array(1, descr=<ArrayS 8>)\n{guard} []\nfinish()");
        assert!(matches!(
            go(&text, &ints(&[0])).unwrap().outcome,
            Outcome::GuardFailed { op_index: 1, .. }
        ));
    }
    let text = "[i0]\np1 = new_array(1, descr=<ArrayS 8>)\nguard_gc_type(p1, 8) []\nfinish()";
    assert_error(go(text, &ints(&[0])), ErrorKind::TypeMismatch, Some(1));
}

#[test]
fn unknown_fields_ask_the_env_once() {
    let text = "[p0]
        i1 = getfield_gc_i(p0, descr=valuedescr)
        i2 = getfield_gc_i(p0, descr=valuedescr)
        i3 = getfield_gc_i(p0, descr=otherdescr)
        i4 = escape_i(i1, i2, i3)
        finish()";
    let mut heap = Heap::new();
    let p0 = heap.alloc_object(0);
    let mut env = TestEnv::default();
    let run = traceopt_interp::run_with_heap(
        &parse(text),
        &[p0.into()],
        heap,
        &mut env,
        Default::default(),
    )
    .unwrap();
    assert_eq!(run.escaped, vec![(3, ints(&[99, 99, 100]))]);
    assert_eq!(env.unknown_reads, 2);
}

#[test]
fn calls_exceptions_and_conditional_calls() {
    let text = "[i0]
        i1 = call_i(7, i0, 1, descr=<Calli 8 ii EF=4>)
        guard_no_exception() [i1]
        cond_call(i0, 8, i1, descr=<Callv 0 i EF=4>)
        i2 = cond_call_value_i(i0, 9, descr=<Calli 8 EF=4>)
        call_n(13, descr=<Callv 0 EF=4>)
        p3 = guard_exception(ConstClass(ValueError)) [i2]
        guard_not_invalidated() [i2]
        guard_no_exception() [i2]
        i4 = escape_i(i1, i2)
        p5 = escape_r(p3)
        finish()";
    // i0 = 0: cond_call does not call, cond_call_value_i does.
    let mut env = TestEnv::default();
    let run = go_env(text, &ints(&[0]), &mut env).unwrap();
    assert_eq!(
        env.calls,
        vec![
            (Some(Val::Int(7)), ints(&[0, 1])),
            (Some(Val::Int(9)), vec![]),
            (Some(Val::Int(13)), vec![])
        ]
    );
    // guard_not_invalidated at op 6 fails in this env.
    assert_eq!(
        run.outcome,
        Outcome::GuardFailed {
            op_index: 6,
            fail_values: vec![Some(Val::Int(0))]
        }
    );
    // guard_exception gave the raised object.
    let exc = run
        .heap
        .iter()
        .find(|(_, o)| matches!(o, HeapObject::Object { .. }))
        .map(|(id, _)| id);
    assert_eq!(run.values[1 + 5], exc.map(Val::from));

    // i0 = 3: cond_call calls, cond_call_value_i gives 3 without calling.
    let text = text.replace("guard_not_invalidated() [i2]", "guard_not_forced() [i2]");
    let mut env = TestEnv::default();
    let run = go_env(&text, &ints(&[3]), &mut env).unwrap();
    assert_eq!(
        env.calls,
        vec![
            (Some(Val::Int(7)), ints(&[3, 1])),
            (Some(Val::Int(8)), ints(&[200])),
            (Some(Val::Int(13)), vec![])
        ]
    );
    assert_eq!(run.escaped[0], (8, ints(&[200, 3])));
    assert_eq!(run.outcome, Outcome::Finished { values: vec![] });

    // Without an exception, guard_exception fails; with one, guard_no_exception does.
    let text = "[i0]\np1 = guard_exception(ConstClass(ValueError)) [i0]\nfinish()";
    assert!(matches!(
        go(text, &ints(&[0])).unwrap().outcome,
        Outcome::GuardFailed { op_index: 0, .. }
    ));
    let text = "[i0]\ncall_n(13, descr=<Callv 0 EF=4>)\nguard_no_exception() [i0]\nfinish()";
    let mut env = TestEnv::default();
    assert!(matches!(
        go_env(text, &ints(&[0]), &mut env).unwrap().outcome,
        Outcome::GuardFailed { op_index: 1, .. }
    ));
}

#[test]
fn saved_exceptions_can_be_restored() {
    let text = "[i0]
        call_n(13, descr=<Callv 0 EF=4>)
        i1 = save_exc_class()
        p2 = save_exception()
        guard_no_exception() []
        restore_exception(i1, p2)
        p3 = guard_exception(ConstClass(ValueError)) []
        i4 = ptr_eq(p2, p3)
        finish(i4)";
    let mut env = TestEnv::default();
    assert_eq!(finished(go_env(text, &ints(&[0]), &mut env)), ints(&[1]));
}

#[test]
fn raw_memory_is_the_envs() {
    let text = "[i0]
        setfield_raw(i0, 5, descr=<FieldS rawstruct.x 0>)
        raw_store(i0, 16, 6, descr=<ArrayS 8>)
        setarrayitem_raw(i0, 3, 7, descr=<ArrayS 8>)
        i1 = getfield_raw_i(i0, descr=<FieldS rawstruct.x 0>)
        i2 = raw_load_i(i0, 16, descr=<ArrayS 8>)
        i3 = getarrayitem_raw_i(i0, 3, descr=<ArrayS 8>)
        f4 = raw_load_f(i0, 24, descr=<ArrayF 8>)
        i5 = escape_i(i1, i2, i3)
        finish(f4)";
    let mut env = TestEnv::default();
    let run = go_env(text, &ints(&[4096]), &mut env).unwrap();
    assert_eq!(run.escaped, vec![(7, ints(&[5, 6, 7]))]);
    assert_eq!(
        run.outcome,
        Outcome::Finished {
            values: vec![Val::Float(0.0)]
        }
    );
    // The default env reads zeros and forgets writes.
    assert_eq!(
        go(text, &ints(&[4096])).unwrap().escaped,
        vec![(7, ints(&[0, 0, 0]))]
    );
}

#[test]
fn an_env_answer_of_the_wrong_type_is_an_error() {
    struct Liar;
    impl Env for Liar {
        fn call(&mut self, _heap: &mut Heap, _call: &Call<'_>) -> Result<CallOutcome, Fault> {
            Ok(CallOutcome::Returned(Val::Ref(Some(ObjId(1000)))))
        }
    }
    let text = "[i0]\ni1 = call_i(1, descr=<Calli 8 EF=4>)\nfinish(i1)";
    assert_error(
        go_env(text, &ints(&[0]), &mut Liar),
        ErrorKind::TypeMismatch,
        Some(0),
    );
    let text = "[i0]\np1 = call_r(1, descr=<Callr 8 EF=4>)\nfinish(p1)";
    assert_error(
        go_env(text, &ints(&[0]), &mut Liar),
        ErrorKind::TypeMismatch,
        Some(0),
    );
}

#[test]
fn force_token_is_one_object_per_run_and_vrefs_hold_it_until_finished() {
    let text = "[]
        p0 = new(descr=<SizeDescr 16>)
        p1 = force_token()
        p2 = force_token()
        i3 = ptr_eq(p1, p2)
        p4 = virtual_ref(p0, 0)
        i5 = ptr_eq(p4, p0)
        p6 = getfield_gc_r(p4, descr=<FieldP JitVirtualRef.virtual_token 8>)
        i7 = ptr_eq(p6, p1)
        p8 = getfield_gc_r(p4, descr=<FieldP JitVirtualRef.forced 16>)
        virtual_ref_finish(p4, NULL)
        p9 = getfield_gc_r(p4, descr=<FieldP JitVirtualRef.forced 16>)
        virtual_ref_finish(p4, p0)
        p10 = getfield_gc_r(p4, descr=<FieldP JitVirtualRef.virtual_token 8>)
        p11 = getfield_gc_r(p4, descr=<FieldP JitVirtualRef.forced 16>)
        i12 = ptr_eq(p11, p0)
        i13 = escape_i(i3, i5, i7, i12)
        jump(p8, p9, p10)";
    let run = go(text, &[]);
    assert_eq!(
        run.as_ref().unwrap().escaped,
        vec![(15, ints(&[1, 0, 1, 1]))]
    );
    match run.unwrap().outcome {
        Outcome::Jumped { values, .. } => assert_eq!(values, vec![Val::NULL; 3]),
        other => panic!("expected a jump, got {other:?}"),
    }
}

#[test]
fn narrow_cells_keep_their_low_bytes() {
    let text = "[i0]
        p1 = new_array(1, descr=<ArrayU 1>)
        setarrayitem_gc(p1, 0, 300, descr=<ArrayU 1>)
        i2 = getarrayitem_gc_i(p1, 0, descr=<ArrayU 1>)
        p3 = new_array(1, descr=<ArrayS 1>)
        setarrayitem_gc(p3, 0, 200, descr=<ArrayS 1>)
        i4 = getarrayitem_gc_i(p3, 0, descr=<ArrayS 1>)
        i5 = int_mul(i4, 1000)
        i6 = int_add(i5, i2)
        finish(i6)";
    // 44 and -56.
    assert_eq!(finished(go(text, &ints(&[0]))), ints(&[-55956]));
}

#[test]
fn forcing_a_finished_vref_gives_its_object_and_calls_nothing() {
    // An env whose every call would force the frame: the guard after a
    // call it made fails.
    struct Forcing(u32);
    impl Env for Forcing {
        fn call(&mut self, _heap: &mut Heap, _call: &Call<'_>) -> Result<CallOutcome, Fault> {
            self.0 += 1;
            Ok(CallOutcome::Returned(Val::NULL))
        }
        fn guard_holds(&mut self, opcode: Opcode, _op_index: usize) -> bool {
            opcode != Opcode::GuardNotForced
        }
    }
    let text = |finish: &str| {
        format!(
            "[i0]
            p0 = new(descr=<SizeDescr 16>)
            p1 = virtual_ref(p0, 0)
            {finish}
            p2 = call_may_force_r(ConstClass(jit_force_virtual), p1, descr=<Callr 8 r EF=6 OS=120>)
            guard_not_forced() []
            guard_no_exception() []
            i3 = ptr_eq(p2, p0)
            finish(i3)"
        )
    };
    // Finished with the object: it is the result, and nothing is called.
    let mut env = Forcing(0);
    let run = go_env(&text("virtual_ref_finish(p1, p0)"), &ints(&[0]), &mut env);
    assert_eq!(finished(run), ints(&[1]));
    assert_eq!(env.0, 0);
    // Not finished (its token is the frame's): the call is made.
    let mut env = Forcing(0);
    let run = go_env(&text("escape_n(p1)"), &ints(&[0]), &mut env).unwrap();
    assert!(
        matches!(run.outcome, Outcome::GuardFailed { op_index: 4, .. }),
        "{:?}",
        run.outcome
    );
    assert_eq!(env.0, 1);
    // Built with its object and a token never written (zero, as the
    // fields of a fresh object are): finished too.
    let mut env = Forcing(0);
    let built = "[i0]
        p0 = new(descr=<SizeDescr 16>)
        p1 = new_with_vtable(descr=<SizeDescr 24>)
        setfield_gc(p1, p0, descr=<FieldP JitVirtualRef.forced 16>)
        p9 = new_with_vtable(descr=<SizeDescr 24>)
        p8 = getfield_gc_r(p9, descr=<FieldP JitVirtualRef.virtual_token 8>)
        p2 = call_may_force_r(ConstClass(jit_force_virtual), p1, descr=<Callr 8 r EF=6 OS=120>)
        guard_not_forced() []
        i3 = ptr_eq(p2, p0)
        finish(i3)";
    assert_eq!(finished(go_env(built, &ints(&[0]), &mut env)), ints(&[1]));
    assert_eq!(env.0, 0);
    // Finished with null (nothing in its forced field): RPython's
    // InvalidVirtualRef, undefined.
    let mut env = Forcing(0);
    let run = go_env(&text("virtual_ref_finish(p1, NULL)"), &ints(&[0]), &mut env);
    assert_error(run, ErrorKind::Undefined, Some(3));
}
