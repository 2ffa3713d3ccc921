//! The optimizer on heap traces: each output is compared with the
//! expected text and proved equivalent to its input by the validator,
//! guard by guard. Descr names are those of the peer set's namespace.

mod common;

use common::{
    all_but, optimizes_with, parse, proved_output, solver, twin_not_proved, twin_refuted,
    without_virtuals,
};
use traceopt_ir::print_trace;
use traceopt_opt::{malformed_output, optimize, Passes};
use traceopt_verify::{verify, verify_never_ends, Verdict};

#[test]
fn unused_loads_and_allocations_are_dead_code() {
    // A load nothing uses and an allocation nothing uses go; the
    // allocation that is written to stays, and so does the write.
    let before = "[p0, i1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\n\
        i3 = getarrayitem_gc_i(p0, i1, descr=arraydescr)\np4 = new(descr=ssize)\n\
        p5 = new_with_vtable(descr=nodesize)\nsetfield_gc(p5, i1, descr=valuedescr)\n\
        p6 = newstr(i1)\ni7 = strlen(p6)\njump(p5)\n";
    let after = "[p0, i1]\np5 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p5, i1, descr=valuedescr)\njump(p5)\n";
    optimizes_with(Passes::default(), before, after);
    // Without dead-code removal, everything stays (the write waits
    // until the jump could see it) but the length of the new string,
    // which is its allocation's.
    let without = Passes {
        dce: false,
        ..without_virtuals()
    };
    let waited = before.replace(
        "setfield_gc(p5, i1, descr=valuedescr)\n\
        p6 = newstr(i1)\ni7 = strlen(p6)\n",
        "p6 = newstr(i1)\nsetfield_gc(p5, i1, descr=valuedescr)\n",
    );
    optimizes_with(without, before, &waited);
}

#[test]
fn a_passed_comparison_with_null_tells_nullness() {
    // `p0 != NULL` passed: p0 is not null, its guard goes; `p1 == NULL`
    // passed: p1 is null from there on. A twin that drops the first
    // comparison's guard too is refuted.
    let before = "[p0, p1]\ni2 = ptr_ne(p0, NULL)\nguard_true(i2) []\n\
        guard_nonnull(p0) []\ni3 = instance_ptr_eq(NULL, p1)\nguard_true(i3) []\n\
        escape_n(p0, p1)\nfinish()\n";
    let after = "[p0, p1]\ni2 = ptr_ne(p0, NULL)\nguard_true(i2) []\n\
        i3 = instance_ptr_eq(NULL, p1)\nguard_true(i3) []\nescape_n(p0, NULL)\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "guard_true(i2) []\n", "");
}

#[test]
fn known_classes_and_nullness_remove_later_guards() {
    // A class guard teaches the class and that the object is not null.
    let before = "[p0, p1]\nguard_class(p0, ConstClass(node_vtable)) []\n\
        guard_nonnull(p0) []\nguard_class(p0, ConstClass(node_vtable)) []\n\
        guard_nonnull_class(p0, ConstClass(node_vtable)) []\n\
        guard_nonnull(p1) []\nguard_nonnull(p1) []\njump(p0, p1)\n";
    let after = "[p0, p1]\nguard_class(p0, ConstClass(node_vtable)) []\n\
        guard_nonnull(p1) []\njump(p0, p1)\n";
    optimizes_with(Passes::default(), before, after);
    // Another class is not known: its guard stays.
    let other = "[p0]\nguard_class(p0, ConstClass(node_vtable)) []\n\
        guard_class(p0, ConstClass(node_vtable2)) []\njump(p0)\n";
    optimizes_with(Passes::default(), other, other);
    // An allocation has its size descr's class and is not null.
    let before =
        "[i0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p1, i0, descr=valuedescr)\n\
        guard_nonnull_class(p1, ConstClass(node_vtable)) []\ni2 = ptr_eq(p1, NULL)\n\
        i3 = ptr_ne(p1, p1)\njump(p1, i2, i3)\n";
    let after =
        "[i0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p1, i0, descr=valuedescr)\n\
        jump(p1, 0, 0)\n";
    optimizes_with(Passes::default(), before, after);
    // An assertion that a reference is not null teaches it and goes.
    let before = "[p0]\nassert_not_none(p0)\nguard_nonnull(p0) []\nfinish()\n";
    optimizes_with(Passes::default(), before, "[p0]\nfinish()\n");
    // Without the assertion, the guard cannot go.
    let unasserted = before.replace("assert_not_none(p0)\n", "");
    twin_refuted(&unasserted, "[p0]\nfinish()\n", "finish()", "finish()");
    // guard_isnull makes later uses null.
    let before =
        "[p0]\nguard_isnull(p0) []\ni1 = ptr_eq(p0, NULL)\nguard_isnull(p0) []\njump(i1)\n";
    let after = "[p0]\nguard_isnull(p0) []\njump(1)\n";
    optimizes_with(Passes::default(), before, after);
    // Switched off, every guard stays.
    let without = all_but("guards");
    let kept = "[p0]\nguard_class(p0, ConstClass(node_vtable)) []\n\
        guard_nonnull(p0) []\njump(p0)\n";
    optimizes_with(without, kept, kept);
}

#[test]
fn a_guard_that_must_fail_makes_the_trace_infeasible() {
    let input = parse("[p0]\np1 = new(descr=ssize)\nguard_isnull(p1) []\njump(p1)\n");
    let err = optimize(&input, without_virtuals()).unwrap_err();
    assert!(err.reason.contains("known to be not null"), "{err}");
    // Where the allocation is virtual, it is a new object all the same.
    let err = optimize(&input, Passes::default()).unwrap_err();
    assert!(err.reason.contains("a new object"), "{err}");
    // The claim is proved; a trace whose guard can pass is not infeasible.
    let verdict = verify_never_ends(&input, &mut solver()).unwrap();
    assert_eq!(verdict, Verdict::Proved);
    let passing = parse("[p0]\np1 = new(descr=ssize)\nguard_nonnull(p1) []\njump(p1)\n");
    let verdict = verify_never_ends(&passing, &mut solver()).unwrap();
    assert!(matches!(verdict, Verdict::Refuted(_)), "{verdict:?}");
}

#[test]
fn the_heap_cache_forwards_reads_it_knows() {
    // A read after a read, and after a write, of the same place.
    let before = "[p0, i1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\n\
        i3 = getfield_gc_i(p0, descr=valuedescr)\nsetfield_gc(p0, i1, descr=nextdescr)\n\
        p4 = getfield_gc_r(p0, descr=nextdescr)\njump(i2, i3, p4)\n";
    let after = "[p0, i1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\n\
        setfield_gc(p0, i1, descr=nextdescr)\njump(i2, i2, i1)\n";
    optimizes_with(
        Passes::default(),
        &before.replace("i1]", "p1]").replace("p0, i1,", "p0, p1,"),
        &after
            .replace("i1]", "p1]")
            .replace("p0, i1,", "p0, p1,")
            .replace("i2, i1)", "i2, p1)"),
    );
    // A write through another reference may change it; a write to a new
    // object, or to another field, does not.
    let before = "[p0, p1, i2]\ni3 = getfield_gc_i(p0, descr=valuedescr)\n\
        p4 = new_with_vtable(descr=nodesize)\nsetfield_gc(p4, i2, descr=valuedescr)\n\
        setfield_gc(p1, p0, descr=nextdescr)\ni5 = getfield_gc_i(p0, descr=valuedescr)\n\
        setfield_gc(p1, i2, descr=valuedescr)\ni6 = getfield_gc_i(p0, descr=valuedescr)\n\
        i7 = getfield_gc_i(p4, descr=valuedescr)\njump(i3, i5, i6, i7, p4)\n";
    // (The write of p1's nextdescr waits until the jump could see it.)
    let after = "[p0, p1, i2]\ni3 = getfield_gc_i(p0, descr=valuedescr)\n\
        p4 = new_with_vtable(descr=nodesize)\nsetfield_gc(p4, i2, descr=valuedescr)\n\
        setfield_gc(p1, i2, descr=valuedescr)\ni6 = getfield_gc_i(p0, descr=valuedescr)\n\
        setfield_gc(p1, p0, descr=nextdescr)\njump(i3, i3, i6, i2, p4)\n";
    optimizes_with(without_virtuals(), before, after);
    // Switched off, every read stays.
    let without = Passes {
        heap: false,
        ..without_virtuals()
    };
    optimizes_with(without, before, before);
}

#[test]
fn calls_forget_what_their_effect_info_says_they_may_write() {
    // A call that writes nothing keeps the cache; one with random effects
    // drops it, except for pure fields, which never change.
    let before = "[p0, i1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\n\
        i3 = getfield_gc_i(p0, descr=valuedescr3)\ni4 = call_i(123, i1, descr=nonwritedescr)\n\
        i5 = getfield_gc_i(p0, descr=valuedescr)\ni6 = call_i(123, i1, descr=plaincalldescr)\n\
        i7 = getfield_gc_i(p0, descr=valuedescr)\ni8 = getfield_gc_i(p0, descr=valuedescr3)\n\
        jump(i2, i3, i4, i5, i6, i7, i8)\n";
    let after = "[p0, i1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\n\
        i3 = getfield_gc_i(p0, descr=valuedescr3)\ni4 = call_i(123, i1, descr=nonwritedescr)\n\
        i6 = call_i(123, i1, descr=plaincalldescr)\ni7 = getfield_gc_i(p0, descr=valuedescr)\n\
        jump(i2, i3, i4, i2, i6, i7, i3)\n";
    optimizes_with(Passes::default(), before, after);
}

#[test]
fn array_items_at_other_constant_indexes_stay_known() {
    let before = "[p0, i1, i2]\nsetarrayitem_gc(p0, 0, i1, descr=arraydescr)\n\
        setarrayitem_gc(p0, 1, i2, descr=arraydescr)\ni3 = getarrayitem_gc_i(p0, 0, descr=arraydescr)\n\
        setarrayitem_gc(p0, i1, i2, descr=arraydescr)\ni4 = getarrayitem_gc_i(p0, 0, descr=arraydescr)\n\
        jump(i3, i4)\n";
    let after = "[p0, i1, i2]\nsetarrayitem_gc(p0, 0, i1, descr=arraydescr)\n\
        setarrayitem_gc(p0, 1, i2, descr=arraydescr)\nsetarrayitem_gc(p0, i1, i2, descr=arraydescr)\n\
        i4 = getarrayitem_gc_i(p0, 0, descr=arraydescr)\njump(i1, i4)\n";
    optimizes_with(Passes::default(), before, after);
}

#[test]
fn a_trace_not_invalidated_stays_so_until_a_call() {
    let before = "[p0, i1]\nquasiimmut_field(p0, descr=quasiimmutdescr)\nguard_not_invalidated() []\n\
        i2 = getfield_gc_i(p0, descr=quasifielddescr)\nquasiimmut_field(p0, descr=quasiimmutdescr)\n\
        guard_not_invalidated() []\ni3 = call_i(123, i1, descr=plaincalldescr)\n\
        guard_not_invalidated() []\np4 = same_as_r(p0)\njump(p4, i2, i3)\n";
    let after =
        "[p0, i1]\nguard_not_invalidated() []\ni2 = getfield_gc_i(p0, descr=quasifielddescr)\n\
        i3 = call_i(123, i1, descr=plaincalldescr)\nguard_not_invalidated() []\njump(p0, i2, i3)\n";
    optimizes_with(Passes::default(), before, after);
    // The heap pass switched off keeps every guard_not_invalidated, and
    // the quasiimmut_field it drops.
    let twice = "[p0]\nquasiimmut_field(p0, descr=quasiimmutdescr)\nguard_not_invalidated() []\n\
        quasiimmut_field(p0, descr=quasiimmutdescr)\nguard_not_invalidated() []\njump(p0)\n";
    let without = all_but("heap");
    optimizes_with(without, twice, twice);
}

#[test]
fn ops_that_write_nothing_keep_the_trace_valid() {
    // A reference comparison and float arithmetic go out unchanged and
    // touch no memory: the second guard_not_invalidated goes.
    let before = "[p0, p1, f1]\nguard_not_invalidated() []\ni2 = ptr_eq(p0, p1)\n\
        f3 = float_add(f1, f1)\nguard_not_invalidated() []\njump(i2, f3)\n";
    let after = before.replacen("guard_not_invalidated() []\njump", "jump", 1);
    optimizes_with(Passes::default(), before, &after);
}

#[test]
fn an_elidable_call_of_a_log_keeps_the_trace_valid() {
    // A PyPy log's call descr does not say can_invalidate: an elidable
    // one (EF=0) writes nothing, so it cannot invalidate, and the second
    // guard_not_invalidated goes; after one of random effects (EF=7) the
    // third stays.
    let before = "[i1]\nguard_not_invalidated() []\n\
        i2 = call_i(123, i1, descr=<Calli 8 i EF=0>)\nguard_not_invalidated() []\n\
        i3 = call_i(124, i2, descr=<Calli 8 i EF=7>)\nguard_no_exception() []\n\
        guard_not_invalidated() []\njump(i3)\n";
    let after = before.replacen("EF=0>)\nguard_not_invalidated() []\n", "EF=0>)\n", 1);
    optimizes_with(Passes::default(), before, &after);
    // Dropping the guard after the call of random effects too is not
    // proved.
    twin_not_proved(
        before,
        &after,
        "guard_no_exception() []\nguard_not_invalidated() []\n",
        "guard_no_exception() []\n",
    );
}

#[test]
fn calls_that_cannot_invalidate_keep_the_trace_valid() {
    // An array copy, and a call whose effect info does not say
    // can_invalidate, leave quasi-immutable fields valid: the second
    // guard_not_invalidated goes. After a call that can invalidate, the
    // third stays.
    let before = "[p0, p1, i1]\nguard_not_invalidated() []\n\
        call_n(123, p0, p1, 0, 0, 1, descr=arraycopydescr)\n\
        i3 = call_i(124, i1, descr=nonwritedescr)\nguard_no_exception() []\n\
        guard_not_invalidated() []\ni4 = call_i(125, i1, descr=plaincalldescr)\n\
        guard_not_invalidated() []\njump(i3, i4)\n";
    let after = before.replacen(
        "guard_no_exception() []\nguard_not_invalidated() []\n",
        "guard_no_exception() []\n",
        1,
    );
    optimizes_with(Passes::default(), before, &after);
    // The third one dropped too is not proved (the interpreter cannot
    // invalidate, so the counterexample does not replay).
    twin_not_proved(before, &after, "guard_not_invalidated() []\njump", "jump");
    // In a PYPYLOG, which gives no can_invalidate, an array copy (OS=1)
    // cannot, any other call may.
    let log = "[p0, p1, i1]\nguard_not_invalidated() []\n\
        call_n(123, p0, p1, 0, 0, 1, descr=<Callv 0 rriii EF=2 OS=1>)\n\
        guard_not_invalidated() []\ni2 = call_i(124, i1, descr=<Calli 8 i EF=2>)\n\
        guard_not_invalidated() []\njump(i2)\n";
    let after = log.replacen("OS=1>)\nguard_not_invalidated() []\n", "OS=1>)\n", 1);
    optimizes_with(Passes::default(), log, &after);
}

#[test]
fn pure_and_loop_invariant_calls_are_made_once() {
    // A second pure call of the same arguments, and a second
    // loop-invariant call of the same function, give the first one's
    // result: they go, with the guards on their exceptions.
    let before = "[p0, i1, i2]\ni3 = call_pure_i(123, i1, descr=elidablecalldescr)\n\
        guard_no_exception() []\ni4 = call_pure_i(123, i1, descr=elidablecalldescr)\n\
        guard_no_exception() []\ni5 = call_pure_i(123, i2, descr=elidablecalldescr)\n\
        guard_no_exception() []\ni6 = call_loopinvariant_i(456, 1, descr=plaincalldescr)\n\
        guard_no_exception() []\ni7 = call_loopinvariant_i(456, 1, descr=plaincalldescr)\n\
        guard_no_exception() []\njump(i3, i4, i5, i6, i7)\n";
    let after = "[p0, i1, i2]\ni3 = call_pure_i(123, i1, descr=elidablecalldescr)\n\
        guard_no_exception() []\ni5 = call_pure_i(123, i2, descr=elidablecalldescr)\n\
        guard_no_exception() []\ni6 = call_loopinvariant_i(456, 1, descr=plaincalldescr)\n\
        guard_no_exception() []\njump(i3, i3, i5, i6, i6)\n";
    optimizes_with(Passes::default(), before, after);
    // Calls of other arguments may give other results (which the
    // interpreter, calling no real function, cannot show: not replayed).
    let twin = after.replacen("jump(i3, i3, i5", "jump(i3, i3, i3", 1);
    let verdict = verify(&parse(before), &parse(&twin), &mut solver()).unwrap();
    assert!(
        matches!(verdict, Verdict::Refuted(_) | Verdict::Unreplayed(_)),
        "{verdict:?}"
    );
}

#[test]
fn writes_wait_until_something_could_see_them() {
    // p0's field is set to a new node and back around a guard (as PyPy's
    // traces do with the frame chain around an inlined call): the first
    // write waits in the guard's resume data, the node stays virtual
    // there, and the writes overwritten before anything reads them go.
    let before = "[i0, i1]\np0 = call_r(123, descr=plain_r_calldescr)\nguard_no_exception() []\n\
        p2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        setfield_gc(p0, p2, descr=nextdescr)\nguard_true(i0) []\n\
        setfield_gc(p0, NULL, descr=nextdescr)\nsetfield_gc(p0, p2, descr=nextdescr)\n\
        setfield_gc(p0, NULL, descr=nextdescr)\nescape_n(p2)\nfinish()\n";
    let after = "[i0, i1]\np0 = call_r(123, descr=plain_r_calldescr)\nguard_no_exception() []\n\
        guard_true(i0) [] where p2 = new_with_vtable(descr=nodesize) {valuedescr=i1} \
        writes setfield_gc(p0, p2, descr=nextdescr)\nsetfield_gc(p0, NULL, descr=nextdescr)\n\
        p2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        escape_n(p2)\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    // The same with p0 an input, where the interpreter can replay what
    // the wrong twins get wrong: the pending write forgotten, the last
    // write dropped.
    let call = "[i0, i1]\np0 = call_r(123, descr=plain_r_calldescr)\nguard_no_exception() []\n";
    let (before, after) = (
        before.replace(call, "[p0, i0, i1]\n"),
        after.replace(call, "[p0, i0, i1]\n"),
    );
    optimizes_with(Passes::default(), &before, &after);
    let forgotten = after.replacen(" writes setfield_gc(p0, p2, descr=nextdescr)", "", 1);
    let forgotten = forgotten.replacen(
        " where p2 = new_with_vtable(descr=nodesize) {valuedescr=i1}",
        "",
        1,
    );
    let dropped = after.replacen("setfield_gc(p0, NULL, descr=nextdescr)\n", "", 1);
    for twin in [forgotten, dropped] {
        let verdict = verify(&parse(&before), &parse(&twin), &mut solver()).unwrap();
        assert!(
            matches!(verdict, Verdict::Refuted(_)),
            "{twin}\ngave {verdict:?}"
        );
    }
}

#[test]
fn an_output_must_end_as_its_input_does() {
    // A whole input (ending in a jump) must give a whole output; a
    // partial one (stopping early, as in a log cut short) may give a
    // partial output.
    let whole = "[i0]\ni1 = int_add(i0, 1)\njump(i1)\n";
    let cut = "[i0]\ni1 = int_add(i0, 1)\n";
    let problem = malformed_output(&parse(whole), &parse(cut)).unwrap();
    assert!(problem.contains("to end with jump or finish"), "{problem}");
    assert_eq!(malformed_output(&parse(cut), &parse(cut)), None);
    assert_eq!(malformed_output(&parse(whole), &parse(whole)), None);
}

#[test]
fn a_waiting_write_goes_before_an_overflow_checked_op() {
    // The overflow guard must follow its op at once (the checker says
    // so): the write the guard would emit goes before the op. The trace
    // base64_codec.log:298 of the corpus had it between them.
    let before = "[p0, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\n\
        i3 = int_add_ovf(i2, 3)\nguard_no_overflow() []\njump(p0, i3)\n";
    optimizes_with(Passes::default(), before, before);
    // The output the optimizer gave before, with the write between the
    // op and its guard, is one the output check rejects, with its place.
    let between = "[p0, i1, i2]\ni3 = int_add_ovf(i2, 3)\n\
        setfield_gc(p0, i1, descr=valuedescr)\nguard_no_overflow() []\njump(p0, i3)\n";
    let problem = malformed_output(&parse(before), &parse(between)).unwrap();
    assert!(
        problem.contains("line 4") && problem.contains("guard_no_overflow"),
        "{problem}"
    );
    // A write of a virtual waits in the guard's resume data as before.
    let before = "[p0, i1, i2]\np4 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p0, p4, descr=nextdescr)\n\
        i3 = int_add_ovf(i2, 3)\nguard_no_overflow() []\n\
        setfield_gc(p0, NULL, descr=nextdescr)\njump(p0, i3)\n";
    let after = "[p0, i1, i2]\ni3 = int_add_ovf(i2, 3)\n\
        guard_no_overflow() [] where p4 = new_with_vtable(descr=nodesize) {} \
        writes setfield_gc(p0, p4, descr=nextdescr)\n\
        setfield_gc(p0, NULL, descr=nextdescr)\njump(p0, i3)\n";
    optimizes_with(Passes::default(), before, after);
}

#[test]
fn a_field_set_and_set_back_is_not_written() {
    // The frame-chain pattern: read a field, set it to a new object, pass
    // a guard, set it back. Nothing is written; the guard's resume data
    // makes the write if it fails.
    let before = "[p0, i1]\np2 = getfield_gc_r(p0, descr=nextdescr)\n\
        p3 = new_with_vtable(descr=nodesize)\nsetfield_gc(p0, p3, descr=nextdescr)\n\
        guard_true(i1) []\nsetfield_gc(p0, p2, descr=nextdescr)\njump(p0)\n";
    let after = "[p0, i1]\nguard_true(i1) [] where p3 = new_with_vtable(descr=nodesize) {} \
        writes setfield_gc(p0, p3, descr=nextdescr)\njump(p0)\n";
    optimizes_with(Passes::default(), before, after);
    // A wrong twin that leaves p0's field at the new object.
    let twin = "[p0, i1]\nguard_true(i1) [] where p3 = new_with_vtable(descr=nodesize) {} \
        writes setfield_gc(p0, p3, descr=nextdescr)\np3 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p0, p3, descr=nextdescr)\njump(p0)\n";
    let verdict = verify(&parse(before), &parse(twin), &mut solver()).unwrap();
    assert!(matches!(verdict, Verdict::Refuted(_)), "{verdict:?}");
}

#[test]
fn a_conditional_call_of_condition_zero_calls_nothing() {
    // It goes, with the guard on its exception, and the object it would
    // have been given stays virtual.
    let before =
        "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        cond_call(0, 123, p2, descr=plaincalldescr)\nguard_no_exception() []\n\
        i3 = getfield_gc_i(p2, descr=valuedescr)\nfinish(i3)\n";
    optimizes_with(Passes::default(), before, "[p0, i1]\nfinish(i1)\n");
    // With a condition that may hold, the call may change the field.
    let maybe = before.replace("cond_call(0,", "cond_call(i1,");
    let verdict = verify(
        &parse(&maybe),
        &parse("[p0, i1]\nfinish(i1)\n"),
        &mut solver(),
    )
    .unwrap();
    assert!(
        matches!(verdict, Verdict::Refuted(_) | Verdict::Unreplayed(_)),
        "{verdict:?}"
    );
}

#[test]
fn lengths_characters_and_narrow_cells_bound_what_is_read() {
    // A length is not negative, a character is a byte, a one-byte field
    // holds 0 to 255: guards that say so go.
    let before = "[p0, p1, p2]\ni1 = arraylen_gc(p0, descr=arraydescr)\ni2 = int_ge(i1, 0)\n\
        guard_true(i2) []\ni3 = strgetitem(p1, 0)\ni4 = int_lt(i3, 256)\nguard_true(i4) []\n\
        i5 = getfield_gc_i(p2, descr=chardescr)\ni6 = int_le(i5, 255)\nguard_true(i6) []\n\
        i7 = int_ge(i5, 0)\nguard_true(i7) []\njump(i1, i3, i5)\n";
    let after = "[p0, p1, p2]\ni1 = arraylen_gc(p0, descr=arraydescr)\n\
        i3 = strgetitem(p1, 0)\ni5 = getfield_gc_i(p2, descr=chardescr)\njump(i1, i3, i5)\n";
    optimizes_with(Passes::default(), before, after);
    // One past the bound is not known: the guard stays.
    let past = before.replace("int_le(i5, 255)", "int_le(i5, 254)");
    let kept = after.replace("jump(", "i6 = int_le(i5, 254)\nguard_true(i6) []\njump(");
    optimizes_with(Passes::default(), &past, &kept);
    // A bound one too narrow (the guard dropped) is refuted.
    twin_refuted(
        &past,
        &kept,
        "i6 = int_le(i5, 254)\nguard_true(i6) []\n",
        "",
    );
    // Without the integer domain, the guards stay.
    let without = all_but("bounds");
    let output = proved_output(without, before);
    assert!(output.contains("int_ge(i1, 0)"));
    // A signed byte holds -128 to 127: both ends known, one past either
    // end not.
    let signed = "[p0]\ni1 = getarrayitem_gc_i(p0, 0, descr=<ArrayS 1>)\ni2 = int_ge(i1, -128)\n\
        guard_true(i2) []\ni3 = int_le(i1, 127)\nguard_true(i3) []\nfinish(i1)\n";
    let read = "[p0]\ni1 = getarrayitem_gc_i(p0, 0, descr=<ArrayS 1>)\nfinish(i1)\n";
    optimizes_with(Passes::default(), signed, read);
    for past in ["int_ge(i1, -127)", "int_le(i1, 126)"] {
        let trace = format!(
            "[p0]\ni1 = getarrayitem_gc_i(p0, 0, descr=<ArrayS 1>)\ni2 = {past}\n\
             guard_true(i2) []\nfinish(i1)\n"
        );
        optimizes_with(Passes::default(), &trace, &trace);
    }
}

#[test]
fn python_division_by_one_and_the_bound_of_a_quotient() {
    // Division by one is the dividend, modulo one is zero: no call.
    let before = "[i0]\ni1 = call_pure_i(321, i0, 1, descr=int_py_div_descr)\n\
        i2 = call_pure_i(321, i0, 1, descr=int_py_mod_descr)\njump(i1, i2)\n";
    optimizes_with(Passes::default(), before, "[i0]\njump(i0, 0)\n");
    twin_refuted(before, "[i0]\njump(i0, 0)\n", "jump(i0, 0)", "jump(i0, 1)");
    // By a power of two, an arithmetic shift (it rounds down) and the
    // low bits, negative dividends too; a logical shift is refuted.
    let before = "[i0]\ni1 = call_pure_i(321, i0, 8, descr=int_py_div_descr)\n\
        i2 = call_pure_i(321, i0, 8, descr=int_py_mod_descr)\njump(i1, i2)\n";
    let after = "[i0]\ni1 = int_rshift(i0, 3)\ni2 = int_and(i0, 7)\njump(i1, i2)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "int_rshift", "uint_rshift");
    // A quotient by at least 3 cannot overflow when 50 is added.
    let before = "[i0, i1]\ni4 = int_ge(i1, 3)\nguard_true(i4) []\n\
        i2 = call_pure_i(321, i0, i1, descr=int_py_div_descr)\ni3 = int_add_ovf(i2, 50)\n\
        guard_no_overflow() []\njump(i3, i1)\n";
    let after = "[i0, i1]\ni4 = int_ge(i1, 3)\nguard_true(i4) []\n\
        i2 = call_pure_i(321, i0, i1, descr=int_py_div_descr)\ni3 = int_add(i2, 50)\n\
        jump(i3, i1)\n";
    optimizes_with(Passes::default(), before, after);
    // By 1 or more, it can: the check stays.
    // Where the divisor may be 1, dropping the check is refuted.
    let weaker_dropped = after.replace("int_ge(i1, 3)", "int_ge(i1, 1)");
    twin_refuted(
        &before.replace("int_ge(i1, 3)", "int_ge(i1, 1)"),
        &weaker_dropped,
        "i4",
        "i4",
    );
    let weaker = before.replace("int_ge(i1, 3)", "int_ge(i1, 1)");
    let output = proved_output(Passes::default(), &weaker);
    assert!(output.contains("int_add_ovf"));
}

#[test]
fn float_identities_and_common_float_ops() {
    let before = "[f0, f1]\nf2 = float_mul(1.0, f0)\nf3 = float_mul(f0, f1)\n\
        f4 = float_mul(f1, f0)\nf5 = float_abs(f3)\nf6 = float_abs(f5)\nf7 = float_neg(f6)\n\
        f8 = float_neg(f7)\nescape_n(f2, f4, f6, f8)\nfinish()\n";
    let after = "[f0, f1]\nf3 = float_mul(f0, f1)\nf5 = float_abs(f3)\n\
        escape_n(f0, f3, f5, f5)\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "f5, f5)", "f5, f3)");
    // Times 2.0 is no identity, and subtraction does not commute.
    let other = "[f0, f1]\nf2 = float_mul(2.0, f0)\nf3 = float_sub(f0, f1)\n\
        f4 = float_sub(f1, f0)\nescape_n(f2, f3, f4)\nfinish()\n";
    optimizes_with(Passes::default(), other, other);
    // Casts, bit reinterpretations and comparisons of floats too (a
    // cast of another argument is another value).
    let casts = "[i0, i1, f2]\nf3 = convert_longlong_bytes_to_float(i0)\n\
        f4 = convert_longlong_bytes_to_float(i0)\nf5 = convert_longlong_bytes_to_float(i1)\n\
        i6 = convert_float_bytes_to_longlong(f2)\ni7 = convert_float_bytes_to_longlong(f2)\n\
        f8 = cast_int_to_float(i0)\nf9 = cast_int_to_float(i0)\ni10 = float_lt(f2, f3)\n\
        i11 = float_lt(f2, f4)\nescape_n(f3, f4, f5, i6, i7, f8, f9, i10, i11)\nfinish()\n";
    let cast = "[i0, i1, f2]\nf3 = convert_longlong_bytes_to_float(i0)\n\
        f5 = convert_longlong_bytes_to_float(i1)\ni6 = convert_float_bytes_to_longlong(f2)\n\
        f8 = cast_int_to_float(i0)\ni10 = float_lt(f2, f3)\n\
        escape_n(f3, f3, f5, i6, i6, f8, f8, i10, i10)\nfinish()\n";
    optimizes_with(Passes::default(), casts, cast);
    twin_refuted(casts, cast, "f3, f3, f5", "f3, f5, f5");
    // String constants of different texts are different objects.
    let strings = "[]\ni0 = ptr_eq(s\"abc\", s\" \")\ni1 = ptr_ne(s\"a\", s\"b\")\nfinish(i0)\n";
    optimizes_with(Passes::default(), strings, "[]\nfinish(0)\n");
    twin_refuted(strings, "[]\nfinish(0)\n", "finish(0)", "finish(1)");
}

#[test]
fn lengths_of_allocations_and_copies_of_nothing() {
    // A new string's or array's length is what it was made with, even
    // after it escaped; a copy of no characters is none.
    let before = "[i0, p5, p6]\np0 = newstr(i0)\nescape_n(p0)\ni1 = strlen(p0)\n\
        p2 = new_array(i0, descr=arraydescr)\nescape_n(p2)\ni3 = arraylen_gc(p2, descr=arraydescr)\n\
        i4 = int_eq(i0, 0)\nguard_true(i4) []\ncopystrcontent(p5, p6, 0, 0, i0)\njump(i1, i3)\n";
    let after = "[i0, p5, p6]\np0 = newstr(i0)\nescape_n(p0)\n\
        p2 = new_array(i0, descr=arraydescr)\nescape_n(p2)\ni4 = int_eq(i0, 0)\n\
        guard_true(i4) []\njump(0, 0)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "jump(0, 0)", "jump(0, 1)");
    // Another string's length is read.
    let other = "[i0, p1]\np0 = newstr(i0)\ni1 = strlen(p1)\njump(i1)\n";
    optimizes_with(
        Passes::default(),
        other,
        "[i0, p1]\ni1 = strlen(p1)\njump(i1)\n",
    );
}

#[test]
fn characters_read_or_written_are_known_until_a_string_changes() {
    let before = "[p0, i0, p1]\ni1 = strgetitem(p0, i0)\ni2 = strgetitem(p0, i0)\n\
        strsetitem(p1, 0, 65)\ni3 = strgetitem(p1, 0)\ni4 = strgetitem(p0, i0)\n\
        escape_n(i1, i2, i3, i4)\nfinish()\n";
    // The write to p1 (which may be p0) forgets p0's character.
    let after = "[p0, i0, p1]\ni1 = strgetitem(p0, i0)\nstrsetitem(p1, 0, 65)\n\
        i4 = strgetitem(p0, i0)\nescape_n(i1, i1, 65, i4)\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    // Forwarded across the write to p1, p0's character is refuted.
    twin_refuted(before, after, "65, i4)", "65, i1)");
}

#[test]
fn pure_fields_of_constant_objects_and_writes_outside_virtual_arrays() {
    // myptr3's value is 7 in the namespace, and never changes; a field
    // that may change is read.
    let before = "[p0]\ni1 = getfield_gc_i(ConstPtr(myptr3), descr=valuedescr3)\n\
        i2 = getfield_gc_i(ConstPtr(myptr), descr=valuedescr)\njump(i1, i2)\n";
    let after = "[p0]\ni2 = getfield_gc_i(ConstPtr(myptr), descr=valuedescr)\njump(7, i2)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "jump(7, i2)", "jump(8, i2)");
    // A write outside a virtual array is undefined: nothing is done.
    let before = "[i2]\np1 = new_array(10, descr=arraydescr)\n\
        setarrayitem_gc(p1, 10, i2, descr=arraydescr)\njump()\n";
    optimizes_with(Passes::default(), before, "[i2]\njump()\n");
    // Inside, it is kept (and made when the array escapes).
    let inside = before
        .replace("p1, 10,", "p1, 9,")
        .replace("jump()", "jump(p1)");
    let output = proved_output(Passes::default(), &inside);
    assert!(output.contains("setarrayitem_gc(p1, 9, i2"));
}

#[test]
fn a_call_sees_only_the_waiting_writes_of_fields_it_reads_or_writes() {
    // readadescr reads adescr only: the write of valuedescr waits past
    // it (and the first one is overwritten), the write of adescr is made.
    let before = "[p1, i1, p2, i2]\nsetfield_gc(p1, i1, descr=valuedescr)\n\
        setfield_gc(p2, i2, descr=adescr)\ni3 = call_i(i1, descr=readadescr)\n\
        setfield_gc(p1, i3, descr=valuedescr)\nsetfield_gc(p2, i3, descr=adescr)\n\
        jump(p1, i1, p2, i2)\n";
    let after = "[p1, i1, p2, i2]\nsetfield_gc(p2, i2, descr=adescr)\n\
        i3 = call_i(i1, descr=readadescr)\nsetfield_gc(p1, i3, descr=valuedescr)\n\
        setfield_gc(p2, i3, descr=adescr)\njump(p1, i1, p2, i2)\n";
    optimizes_with(Passes::default(), before, after);
    // The write readadescr reads, kept past it, is not proved (the call
    // sees a different heap; the replay's calls ignore the heap).
    twin_not_proved(before, after, "setfield_gc(p2, i2, descr=adescr)\n", "");
    // A call that may read every field sees both.
    let opaque = before.replace("readadescr", "plaincalldescr");
    let text = proved_output(Passes::default(), &opaque);
    assert!(
        text.contains("setfield_gc(p1, i1, descr=valuedescr)"),
        "{text}"
    );
}

#[test]
fn the_gc_type_an_access_shows_removes_its_guards() {
    // An item of gcarraydescr was written: the object is such an array.
    // A field of NODE was read: it is an instance (NODE is an object).
    let before = "[p0, p1, p2]\nsetarrayitem_gc(p0, 1, p1, descr=gcarraydescr)\n\
        guard_gc_type(p0, ConstInt(gcarraydescr_tid)) []\ni1 = getfield_gc_i(p2, descr=valuedescr)\n\
        guard_is_object(p2) []\nfinish(i1)\n";
    let after = "[p0, p1, p2]\nsetarrayitem_gc(p0, 1, p1, descr=gcarraydescr)\n\
        i1 = getfield_gc_i(p2, descr=valuedescr)\nfinish(i1)\n";
    optimizes_with(Passes::default(), before, after);
    // Another type id is not known: its guard stays.
    let other = before.replace("gcarraydescr_tid", "node_tid");
    let output = proved_output(Passes::default(), &other);
    assert!(output.contains("guard_gc_type"));
}

#[test]
fn arrays_of_different_lengths_are_different_objects() {
    let before = "[p1, p2, p3, p4]\ni2 = arraylen_gc(p1, descr=arraydescr2)\nguard_value(i2, 10) []\n\
        i3 = arraylen_gc(p2, descr=arraydescr2)\nguard_value(i3, 15) []\n\
        setarrayitem_gc(p1, 0, p3, descr=arraydescr2)\nsetarrayitem_gc(p2, 0, p4, descr=arraydescr2)\n\
        p5 = getarrayitem_gc_r(p1, 0, descr=arraydescr2)\ni1 = ptr_eq(p1, p2)\n\
        i5 = arraylen_gc(p1, descr=arraydescr2)\njump(p5, i1, i5)\n";
    let after = "[p1, p2, p3, p4]\ni2 = arraylen_gc(p1, descr=arraydescr2)\nguard_value(i2, 10) []\n\
        i3 = arraylen_gc(p2, descr=arraydescr2)\nguard_value(i3, 15) []\n\
        setarrayitem_gc(p1, 0, p3, descr=arraydescr2)\nsetarrayitem_gc(p2, 0, p4, descr=arraydescr2)\n\
        jump(p3, 0, 10)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "jump(p3, 0, 10)", "jump(p3, 1, 10)");
    // Lengths that may be equal say nothing.
    let maybe = before.replace("guard_value(i3, 15)", "guard_value(i3, 10)");
    let output = proved_output(Passes::default(), &maybe);
    assert!(output.contains("ptr_eq"));
}

#[test]
fn a_field_access_does_not_tell_the_exact_gc_type() {
    // valuedescr is NODE's, which NODE2 inherits: the object may be a
    // NODE2, so a guard on NODE's type id stays (an instance, though).
    let before = "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\n\
        guard_gc_type(p0, ConstInt(node_tid)) []\nguard_is_object(p0) []\nfinish(i1)\n";
    let after = "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\n\
        guard_gc_type(p0, ConstInt(node_tid)) []\nfinish(i1)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(
        before,
        after,
        "guard_gc_type(p0, ConstInt(node_tid)) []\n",
        "",
    );
}

#[test]
fn a_float_field_read_after_a_write_gives_what_was_written() {
    // The float pass only folds and shares float arithmetic; a float load
    // is the heap cache's, which forwards the value written.
    let before = "[p0, f0]\nf1 = getfield_gc_f(p0, descr=floatdescr)\n\
        setfield_gc(p0, f0, descr=floatdescr)\nf2 = getfield_gc_f(p0, descr=floatdescr)\n\
        f3 = float_add(f1, f2)\nfinish(f3)\n";
    // (The write waits until the end.)
    let after = "[p0, f0]\nf1 = getfield_gc_f(p0, descr=floatdescr)\n\
        f3 = float_add(f1, f0)\nsetfield_gc(p0, f0, descr=floatdescr)\nfinish(f3)\n";
    optimizes_with(Passes::default(), before, after);
    // After an escape the field may have changed: read again, not shared
    // with the first read.
    let escaped = "[p0, f0]\nf1 = getfield_gc_f(p0, descr=floatdescr)\n\
        setfield_gc(p0, f0, descr=floatdescr)\nescape_n(p0)\n\
        f2 = getfield_gc_f(p0, descr=floatdescr)\nf3 = float_add(f1, f2)\nfinish(f3)\n";
    optimizes_with(Passes::default(), escaped, escaped);
}

#[test]
fn a_copy_of_a_reference_or_float_is_its_argument_when_folding() {
    let before = "[p0, f1]\np2 = same_as_r(p0)\nf3 = same_as_f(f1)\njump(p2, f3)\n";
    let after = "[p0, f1]\njump(p0, f1)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "jump(p0, f1)", "jump(p0, 1.0)");
    // Folding switched off, the copies stay.
    let without = all_but("fold");
    optimizes_with(without, before, before);
}

#[test]
fn a_narrow_field_read_after_a_write_gives_what_fits() {
    // chardescr holds a byte: what is read back is the written value cut
    // to a byte, not the value itself (the validator refuted forwarding
    // it, which peeling's proofs brought to light).
    for (before, expected) in [
        (
            // An object that exists: the write waits, the read is cut.
            "[p6, i10]\nsetfield_gc(p6, i10, descr=chardescr)\n\
             i2 = getfield_gc_i(p6, descr=chardescr)\nfinish(i2)\n",
            "[p6, i10]\ni6 = int_and(i10, 255)\nsetfield_gc(p6, i10, descr=chardescr)\nfinish(i6)\n",
        ),
        (
            // A virtual object.
            "[i10]\np6 = new_with_vtable(descr=nodesize)\n\
             setfield_gc(p6, i10, descr=chardescr)\n\
             i2 = getfield_gc_i(p6, descr=chardescr)\nfinish(i2)\n",
            "[i10]\ni6 = int_and(i10, 255)\nfinish(i6)\n",
        ),
        (
            // A value that fits is forwarded as it is.
            "[p6, i0]\ni10 = int_and(i0, 127)\nsetfield_gc(p6, i10, descr=chardescr)\n\
             i2 = getfield_gc_i(p6, descr=chardescr)\nfinish(i2)\n",
            "[p6, i0]\ni10 = int_and(i0, 127)\nsetfield_gc(p6, i10, descr=chardescr)\nfinish(i10)\n",
        ),
    ] {
        optimizes_with(Passes::default(), before, expected);
    }
    twin_refuted(
        "[p6, i10]\nsetfield_gc(p6, i10, descr=chardescr)\n\
         i2 = getfield_gc_i(p6, descr=chardescr)\nfinish(i2)\n",
        "[p6, i10]\nsetfield_gc(p6, i10, descr=chardescr)\nfinish(i10)\n",
        "finish(i10)",
        "finish(i10)",
    );
}

#[test]
fn a_two_byte_item_is_bounded_as_two_bytes() {
    // int16arraydescr items are signed 16-bit: a guard at their bounds
    // goes, one inside them stays.
    let before = "[p0]\ni1 = getarrayitem_gc_i(p0, 0, descr=int16arraydescr)\n\
        i2 = int_le(i1, 32767)\nguard_true(i2) []\ni3 = int_lt(i1, 100)\nguard_true(i3) []\n\
        finish(i1)\n";
    let after = "[p0]\ni1 = getarrayitem_gc_i(p0, 0, descr=int16arraydescr)\n\
        i3 = int_lt(i1, 100)\nguard_true(i3) []\nfinish(i1)\n";
    optimizes_with(Passes::default(), before, after);
}

#[test]
fn a_value_the_optimizer_makes_takes_no_name_of_the_input() {
    // The cut of the narrow read is a new value; the counter behind new
    // names would call it i7, which the input already uses.
    let before = "[p0, i1]\nsetfield_gc(p0, i1, descr=chardescr)\n\
        i2 = getfield_gc_i(p0, descr=chardescr)\ni7 = int_add(i2, 1)\nfinish(i7)\n";
    let after = "[p0, i1]\ni8 = int_and(i1, 255)\ni7 = int_add(i8, 1)\n\
        setfield_gc(p0, i1, descr=chardescr)\nfinish(i7)\n";
    optimizes_with(Passes::default(), before, after);
}

#[test]
fn the_future_condition_marker_goes() {
    // guard_future_condition marks where PyPy's peeling may add guards;
    // it never fails, and the guard pass drops it.
    let before = "[p0, i0]\nguard_future_condition() []\njump(p0, i0)\n";
    optimizes_with(Passes::default(), before, "[p0, i0]\njump(p0, i0)\n");
    let without = all_but("guards");
    optimizes_with(without, before, before);
}

#[test]
fn writes_to_strings_and_raw_memory_keep_the_heap_cache() {
    // Neither a string's characters nor raw memory is a field of an
    // object: the second read goes.
    let before = "[p0, p1, i1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\nstrsetitem(p1, 0, i1)\n\
        setarrayitem_raw(i1, 0, i1, descr=rawarraydescr)\ni4 = getfield_gc_i(p0, descr=valuedescr)\n\
        jump(i2, i4)\n";
    let after = "[p0, p1, i1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\nstrsetitem(p1, 0, i1)\n\
        setarrayitem_raw(i1, 0, i1, descr=rawarraydescr)\njump(i2, i2)\n";
    optimizes_with(Passes::default(), before, after);
}

#[test]
fn a_class_test_strengthens_the_null_test_before_it() {
    // PyPy's guard_nonnull_class: the class test goes, and the null test
    // before it (past a read, which leaves no trace) tests the class
    // too, with its own resume data.
    let before = "[p0, i1]\nguard_nonnull(p0) [i1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\n\
        guard_class(p0, ConstClass(node_vtable)) [i2]\nescape_n(i2)\njump(p0, i1)\n";
    let after = "[p0, i1]\nguard_nonnull_class(p0, ConstClass(node_vtable)) [i1]\n\
        i2 = getfield_gc_i(p0, descr=valuedescr)\nescape_n(i2)\njump(p0, i1)\n";
    optimizes_with(Passes::default(), before, after);
    // Past an escape too: the interpreter resuming at the null test
    // makes it itself.
    let escaping = before.replace("guard_class", "escape_n(i1)\nguard_class");
    let merged = after.replace("escape_n(i2)", "escape_n(i1)\nescape_n(i2)");
    optimizes_with(Passes::default(), &escaping, &merged);
    // Not past a conditional call (one left out is a guard that never
    // fails, not one to fail in the place of).
    let calling = before.replace(
        "guard_class",
        "cond_call(i1, 123, i1, descr=plaincalldescr)\nguard_class",
    );
    optimizes_with(Passes::default(), &calling, &calling);
    // Nor past a vref's finish (the state the class test would resume
    // with still holds the vref's token, which the validator does not
    // take the interpreter to clear: a corpus loop, list_sort.log:1753,
    // was unprovable).
    let finishing = "[p0, i1]\np2 = virtual_ref(p0, 0)\nescape_n(p2)\nguard_nonnull(p0) [i1]\n\
        virtual_ref_finish(p2, NULL)\nguard_class(p0, ConstClass(node_vtable)) [i1]\njump(p0, i1)\n";
    let out = proved_output(Passes::default(), finishing);
    assert!(
        out.contains("guard_nonnull(p0)") && out.contains("guard_class(p0"),
        "{out}"
    );
    // Past other guards too (the class test failing early, the input
    // fails one of them or its own later), up to the validator's limit.
    let tests = |n: usize| {
        (0..n)
            .map(|k| {
                format!(
                    "i{} = int_ne(i1, {})\nguard_true(i{}) [i1]\n",
                    k + 3,
                    k + 10,
                    k + 3
                )
            })
            .collect::<String>()
    };
    let guarded = |n: usize| before.replace("guard_class", &format!("{}guard_class", tests(n)));
    let n = traceopt_ir::MAX_GUARDS_FAILED_EARLY - 1;
    let merged = after.replace("escape_n", &format!("{}escape_n", tests(n)));
    optimizes_with(Passes::default(), &guarded(n), &merged);
    // One more, and the validator would not take it: both stay.
    optimizes_with(Passes::default(), &guarded(n + 1), &guarded(n + 1));
}

#[test]
fn hints_are_taken_as_passed_guards_and_dropped() {
    // A trace is undefined where its hints do not hold (PyPy's meaning):
    // the class test, the value test and the call go with them.
    let before = "[p0, i1]\nrecord_exact_class(p0, ConstClass(node_vtable))\n\
        guard_class(p0, ConstClass(node_vtable)) []\nrecord_exact_value_i(i1, 5)\n\
        i2 = int_eq(i1, 5)\nguard_true(i2) []\nrecord_known_result(7, 123, i1, descr=elidable2calldescr)\n\
        i3 = call_pure_i(123, i1, descr=elidable2calldescr)\nguard_no_exception() []\nfinish(i3)\n";
    optimizes_with(Passes::default(), before, "[p0, i1]\nfinish(7)\n");
    // A class test of another class fails where the hint holds.
    let other = before.replace(
        "guard_class(p0, ConstClass(node_vtable))",
        "guard_class(p0, ConstClass(node_vtable2))",
    );
    twin_refuted(&other, "[p0, i1]\nfinish(7)\n", "finish(7)", "finish(7)");
}

#[test]
fn a_reference_written_through_is_not_null() {
    // A field write is undefined on null: the null test after it goes.
    let before = "[p0]\nsetfield_gc(p0, 5, descr=valuedescr)\ni1 = ptr_ne(p0, NULL)\n\
        guard_true(i1) []\njump(p0)\n";
    optimizes_with(
        Passes::default(),
        before,
        "[p0]\nsetfield_gc(p0, 5, descr=valuedescr)\njump(p0)\n",
    );
    // Before the write, the test stays.
    let first = "[p0]\ni1 = ptr_ne(p0, NULL)\nguard_true(i1) []\n\
        setfield_gc(p0, 5, descr=valuedescr)\njump(p0)\n";
    optimizes_with(Passes::default(), first, first);
}

#[test]
fn a_constant_object_has_the_class_the_namespace_gives() {
    // myptr is a node_vtable: no object of another class is it.
    let before = "[p1]\nguard_class(p1, ConstClass(node_vtable2)) []\n\
        i2 = instance_ptr_ne(ConstPtr(myptr), p1)\nguard_true(i2) []\nfinish(p1)\n";
    optimizes_with(
        Passes::default(),
        before,
        "[p1]\nguard_class(p1, ConstClass(node_vtable2)) []\nfinish(p1)\n",
    );
    // One of its class may be it: the test stays.
    let same = before.replace("node_vtable2", "node_vtable");
    optimizes_with(Passes::default(), &same, &same);
}

#[test]
fn a_cast_undoes_the_opposite_cast() {
    let before = "[p0]\ni1 = cast_ptr_to_int(p0)\np2 = cast_int_to_ptr(i1)\njump(p2)\n";
    optimizes_with(Passes::default(), before, "[p0]\njump(p0)\n");
    twin_refuted(before, "[p0]\njump(p0)\n", "jump(p0)", "jump(NULL)");
    let before = "[i3]\np4 = cast_int_to_ptr(i3)\ni5 = cast_ptr_to_int(p4)\njump(i5)\n";
    optimizes_with(Passes::default(), before, "[i3]\njump(i3)\n");
    // A cast of anything else stays.
    let other = "[i0]\np1 = cast_int_to_ptr(i0)\nescape_n(p1)\nfinish(i0)\n";
    optimizes_with(Passes::default(), other, other);
}

#[test]
fn a_value_test_of_a_constant_object_strengthens_the_null_test_before_it() {
    // PyPy's guard strengthening again: the null test becomes the value
    // test, with its own resume data.
    let before = "[p0, i1, i2]\nguard_nonnull(p0) [i1]\ni3 = int_add(i1, i2)\n\
        guard_value(p0, ConstPtr(myptr)) [i2]\njump(p0, i3, i2)\n";
    let after = "[p0, i1, i2]\nguard_value(p0, ConstPtr(myptr)) [i1]\ni3 = int_add(i1, i2)\n\
        jump(ConstPtr(myptr), i3, i2)\n";
    optimizes_with(Passes::default(), before, after);
    // Past an escape too.
    let escaping = before.replace("guard_value", "escape_n(i3)\nguard_value");
    let merged = after.replace("\njump", "\nescape_n(i3)\njump");
    optimizes_with(Passes::default(), &escaping, &merged);
}

#[test]
fn a_recorded_class_test_on_an_own_allocation_passed() {
    // A log's recorded trace boxes an integer with `<SizeDescr 16>`, which
    // names no class, then tests the box's class: the test passed when
    // PyPy recorded the trace, and the class of what an op allocates is
    // a constant of the op, so it passes always. The optimizer drops it
    // and keeps the box virtual; the validator, told the same of the
    // recorded ops, proves it.
    let log = "[1] {jit-log-noopt\n# Traced loop or bridge with 5 ops\n[i0]\n\
               p1 = new_with_vtable(descr=<SizeDescr 16>)\n\
               setfield_gc(p1, i0, descr=<FieldS W_IntObject.inst_intval 8>)\n\
               guard_class(p1, ConstClass(W_IntObject))\n\
               i2 = getfield_gc_i(p1, descr=<FieldS W_IntObject.inst_intval 8>)\n\
               finish(i2)\n[2] jit-log-noopt}\n";
    let parsed = traceopt_ir::parse_log(log, "boxed.log").unwrap();
    let recorded = parsed.pairs[0].recorded.as_ref().unwrap().trace.clone();
    let out = traceopt_opt::optimize_assuming(&recorded, Passes::default(), &[]).unwrap();
    assert_eq!(print_trace(&out.trace), "[i0]\nfinish(i0)\n");
    let verdict = traceopt_verify::verify_optimized(
        &recorded,
        &out.trace,
        &out.provenance,
        &out.seen_classes,
        &mut solver(),
    );
    assert_eq!(verdict.unwrap(), Verdict::Proved);
    // Not recorded (a hand-written trace), the test may fail: it stays,
    // and the box is allocated for it.
    let mut written = recorded.clone();
    written.recorded = 0..0;
    let kept = optimize(&written, Passes::default()).unwrap();
    assert!(
        print_trace(&kept.trace).contains("guard_class(p1"),
        "{}",
        print_trace(&kept.trace)
    );
    let verdict = traceopt_verify::verify_optimized(
        &written,
        &out.trace,
        &out.provenance,
        &out.seen_classes,
        &mut solver(),
    );
    assert!(matches!(verdict.unwrap(), Verdict::Refuted(_)));
}

#[test]
fn a_recorded_class_test_through_the_heap_is_a_claim_the_validator_proves() {
    // The box is stored into a fresh array and read back before its
    // class is tested: the text does not say the test is of the box,
    // the optimizer sees it (the read is of its virtual array). It
    // claims so; the validator proves the claim, then the output.
    let log = |guarded: &str| {
        format!(
            "[1] {{jit-log-noopt\n# Traced loop or bridge with 9 ops\n[i0, p9]\n\
             p5 = new_with_vtable(descr=<SizeDescr 16>)\n\
             p1 = new_with_vtable(descr=<SizeDescr 16>)\n\
             setfield_gc(p1, i0, descr=<FieldS W_IntObject.inst_intval 8>)\n\
             p2 = new_array_clear(2, descr=<ArrayP 8>)\n\
             setarrayitem_gc(p2, 0, p1, descr=<ArrayP 8>)\n\
             p3 = getarrayitem_gc_r(p2, 0, descr=<ArrayP 8>)\n\
             guard_class({guarded}, ConstClass(W_IntObject))\n\
             i4 = getfield_gc_i(p3, descr=<FieldS W_IntObject.inst_intval 8>)\n\
             finish(i4, p5)\n[2] jit-log-noopt}}\n"
        )
    };
    let recorded = |text: &str| {
        let parsed = traceopt_ir::parse_log(text, "boxed.log").unwrap();
        parsed.pairs[0].recorded.as_ref().unwrap().trace.clone()
    };
    let through_heap = recorded(&log("p3"));
    let out = optimize(&through_heap, Passes::default()).unwrap();
    assert_eq!(
        print_trace(&out.trace),
        "[i0, p9]\np5 = new_with_vtable(descr=<SizeDescr 16>)\nfinish(i0, p5)\n"
    );
    let claim = traceopt_ir::SeenClass { site: 1, guard: 6 };
    assert_eq!(out.seen_classes, vec![claim]);
    let verify = |before: &traceopt_ir::Trace, seen: &[traceopt_ir::SeenClass]| {
        traceopt_verify::verify_optimized(before, &out.trace, &out.provenance, seen, &mut solver())
    };
    assert_eq!(verify(&through_heap, &[claim]).unwrap(), Verdict::Proved);
    // Without the claim, the dropped test is a difference.
    assert!(matches!(
        verify(&through_heap, &[]).unwrap(),
        Verdict::Refuted(_)
    ));
    // A claim of the other allocation (which is not what is tested) is
    // refuted, and nothing is proved.
    let wrong = traceopt_ir::SeenClass { site: 0, guard: 6 };
    let Verdict::Unknown(why) = verify(&through_heap, &[wrong]).unwrap() else {
        panic!("a false claim must not be taken");
    };
    assert!(why.contains("is refuted"), "{why}");
    // Where the test is of an input, the same claim is refuted too, and
    // the optimizer makes none (the test stays).
    let of_input = recorded(&log("p9"));
    let kept = optimize(&of_input, Passes::default()).unwrap();
    assert!(kept.seen_classes.is_empty());
    assert!(print_trace(&kept.trace).contains("guard_class(p9"));
    assert!(matches!(
        verify(&of_input, &[claim]).unwrap(),
        Verdict::Unknown(why) if why.contains("is refuted")
    ));
    // A claim that names no class guard does not fit.
    let misfit = traceopt_ir::SeenClass { site: 1, guard: 7 };
    assert!(matches!(
        verify(&through_heap, &[misfit]),
        Err(traceopt_verify::VerifyError::Unsupported { .. })
    ));
    // A bridge that knows facts of its inputs claims the same; the
    // validator proves the claim from inputs with those facts (its ops
    // come after their tests there).
    let facts = vec![
        traceopt_ir::Fact {
            range: Some((0, 9)),
            ..Default::default()
        },
        traceopt_ir::Fact {
            nonnull: true,
            ..Default::default()
        },
    ];
    let bridge = traceopt_opt::optimize_assuming(&through_heap, Passes::default(), &facts).unwrap();
    assert_eq!(bridge.seen_classes, vec![claim]);
    let verdict = traceopt_verify::verify_assuming(
        &through_heap,
        &bridge.trace,
        &bridge.provenance,
        &facts,
        &bridge.seen_classes,
        &mut solver(),
    );
    assert_eq!(verdict.unwrap(), Verdict::Proved);
    // Not recorded (a hand-written trace), nothing is claimed.
    let mut written = through_heap.clone();
    written.recorded = 0..0;
    let kept = optimize(&written, Passes::default()).unwrap();
    assert!(kept.seen_classes.is_empty());
    assert!(print_trace(&kept.trace).contains("guard_class("));
}

#[test]
fn the_exception_a_guard_catches_is_its_value() {
    // `guard_exception` gives the exception it caught: later ops use it.
    // (It once went out with no value, and the first use of it panicked;
    // PyPy's logs have it wherever Python code catches an exception.)
    let before = "[i0]\ni1 = call_i(123, i0, descr=plaincalldescr)\n\
                  p2 = guard_exception(ConstClass(node_vtable)) []\n\
                  guard_class(p2, ConstClass(node_vtable)) []\n\
                  i3 = getfield_gc_i(p2, descr=valuedescr)\n\
                  i4 = getfield_gc_i(p2, descr=valuedescr)\n\
                  i5 = int_add(i3, i4)\nfinish(i5)\n";
    let expected = "[i0]\ni1 = call_i(123, i0, descr=plaincalldescr)\n\
                    p2 = guard_exception(ConstClass(node_vtable)) []\n\
                    guard_class(p2, ConstClass(node_vtable)) []\n\
                    i3 = getfield_gc_i(p2, descr=valuedescr)\n\
                    i5 = int_lshift(i3, 1)\nfinish(i5)\n";
    optimizes_with(Passes::default(), before, expected);
    // (The exception comes of the call: the interpreter cannot replay it.)
    twin_not_proved(before, expected, "int_lshift(i3, 1)", "int_lshift(i1, 1)");
}

#[test]
fn an_unused_pure_call_that_may_raise_stays() {
    // An elidable call's result may go unused, but if the call can raise,
    // whether it raises decides the `guard_no_exception` after it: the
    // call stays. One that cannot raise goes.
    let before = "[i0]\ni1 = call_pure_i(123, i0, descr=elidable3calldescr)\n\
                  guard_no_exception() []\n\
                  i2 = call_pure_i(456, i0, descr=elidablecalldescr)\n\
                  guard_no_exception() []\nfinish(i0)\n";
    let expected = "[i0]\ni1 = call_pure_i(123, i0, descr=elidable3calldescr)\n\
                    guard_no_exception() []\n\
                    guard_no_exception() []\nfinish(i0)\n";
    optimizes_with(Passes::default(), before, expected);
    // Dropped, the call could no longer fail the guard.
    twin_not_proved(
        before,
        expected,
        "i1 = call_pure_i(123, i0, descr=elidable3calldescr)\n",
        "",
    );
}

#[test]
fn a_virtualizable_force_read_from_a_log_keeps_the_heap_cache() {
    // A PYPYLOG prints the call that forces a virtualizable as
    // `<Callv 0 r EF=2 OS=121>`, with no effect sets; PyPy gives that
    // call one effect info, which reads and writes nothing. The read of
    // the field after it is the one before.
    let force = |level: u32| {
        format!(
            "[p0, p1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\n\
             cond_call(i2, 123, p1, descr=<Callv 0 r EF={level} OS=121>)\n\
             i3 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i3)\n"
        )
    };
    let before = force(2);
    let expected = "[p0, p1]\ni2 = getfield_gc_i(p0, descr=valuedescr)\n\
                    cond_call(i2, 123, p1, descr=<Callv 0 r EF=2 OS=121>)\nfinish(i2)\n";
    optimizes_with(Passes::default(), &before, expected);
    // Another effect level is not PyPy's force: it may write the field.
    let cautious = force(5);
    let out = proved_output(Passes::default(), &cautious);
    assert!(out.contains("i3 = getfield_gc_i(p0"), "{out}");
    twin_not_proved(
        &cautious,
        &expected.replace("EF=2", "EF=5"),
        "finish(i2)",
        "finish(i2)",
    );
}
