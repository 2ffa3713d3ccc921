//! The validator on heap ops and calls: what the heap's meaning proves
//! (reads of writes, fresh objects, classes, lengths, calls that cannot
//! write a field) and what it must not (aliasing writes, dropped stores,
//! loads moved past calls that write, changed calls). A pair that is not
//! equivalent is never proved: it is refuted, its counterexample replayed
//! in the interpreter on a heap built from the solver's model (calls
//! returning what the model says, their arguments compared); where the
//! difference lies in what a call writes or sees, or what a float op
//! returns, which the replay leaves to the interpreter's defaults, it may
//! not replay, and is then `Unreplayed`, never proved.

use std::sync::Arc;
use std::time::Duration;
use traceopt_ir::{check, parse_trace_with, CheckOptions, Const, Namespace, PureResult};
use traceopt_smt::Solver;
use traceopt_verify::{verify_given, Given, Verdict};

fn namespace() -> Arc<Namespace> {
    let path = traceopt_ir::shared_dir().join("peer/heap/descrs.txt");
    let mut text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // A call of these tests' own: it writes p.next and lists no read.
    text.push_str(
        "\nwritenextdescr = call args=i result=i ressize=8 effect=5/can_raise \
         reads=none writes=fields[nextdescr]\n",
    );
    Arc::new(Namespace::parse(&text, "descrs.txt").unwrap())
}

fn verdict(before: &str, after: &str) -> Verdict {
    verdict_given(before, after, &[])
}

/// `verdict`, given what pure calls of these arguments return.
fn verdict_given(before: &str, after: &str, pure_results: &[PureResult]) -> Verdict {
    verdict_within(before, after, pure_results, Duration::from_secs(20))
}

/// `verdict_given`, with each solver query given `timeout`.
fn verdict_within(
    before: &str,
    after: &str,
    pure_results: &[PureResult],
    timeout: Duration,
) -> Verdict {
    let ns = Some(namespace());
    let before = parse_trace_with(before, "before", ns.clone()).unwrap_or_else(|e| panic!("{e}"));
    let after = parse_trace_with(after, "after", ns).unwrap_or_else(|e| panic!("{e}"));
    let options = CheckOptions {
        require_fail_args: false,
        partial: false,
    };
    for (trace, name) in [(&before, "before"), (&after, "after")] {
        let errors = check(trace, name, options);
        assert!(errors.is_empty(), "{}", errors[0]);
    }
    let mut solver = Solver::start(None, timeout)
        .unwrap_or_else(|e| panic!("{e}\n(the test command installs z3: see README)"));
    let given = Given {
        pure_results,
        ..Given::default()
    };
    verify_given(&before, &after, given, &mut solver).unwrap()
}

fn proved(before: &str, after: &str) {
    assert_eq!(
        verdict(before, after),
        Verdict::Proved,
        "\n{before}\n{after}"
    );
}

fn not_proved(before: &str, after: &str) {
    match verdict(before, after) {
        Verdict::Refuted(_) => {}
        other => panic!("expected a counterexample, got {other:?}\n{before}\n{after}"),
    }
}

/// Not proved, where the difference is in what a call or a float op
/// gives, which the replay does not reproduce.
fn not_proved_nor_replayed(before: &str, after: &str) {
    match verdict(before, after) {
        Verdict::Refuted(_) | Verdict::Unreplayed(_) => {}
        other => panic!("expected a counterexample, got {other:?}\n{before}\n{after}"),
    }
}

#[test]
fn a_read_after_a_write_sees_the_value() {
    let before = "[p0, i1]\nsetfield_gc(p0, i1, descr=valuedescr)\ni2 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i2)\n";
    proved(
        before,
        "[p0, i1]\nsetfield_gc(p0, i1, descr=valuedescr)\nfinish(i1)\n",
    );
    // Another field of the same object does not change it.
    let before =
        "[p0, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\nsetfield_gc(p0, i2, descr=adescr)\n\
                  i3 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i3)\n";
    proved(
        before,
        "[p0, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\nsetfield_gc(p0, i2, descr=adescr)\nfinish(i1)\n",
    );
}

#[test]
fn a_write_to_an_object_that_may_alias_is_not_forgotten() {
    let before = "[p0, p1, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\nsetfield_gc(p1, i2, descr=valuedescr)\n\
                  i3 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i3)\n";
    let after = "[p0, p1, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\nsetfield_gc(p1, i2, descr=valuedescr)\nfinish(i1)\n";
    not_proved(before, after);
    // A fresh object is not an alias of anything older.
    let before = "[p0, i1, i2]\np1 = new(descr=ssize)\nsetfield_gc(p0, i1, descr=adescr)\nsetfield_gc(p1, i2, descr=adescr)\n\
                  i3 = getfield_gc_i(p0, descr=adescr)\njump(i3, p1)\n";
    let after = "[p0, i1, i2]\np1 = new(descr=ssize)\nsetfield_gc(p0, i1, descr=adescr)\nsetfield_gc(p1, i2, descr=adescr)\njump(i1, p1)\n";
    proved(before, after);
}

#[test]
fn fresh_objects_are_cleared_distinct_and_of_their_class() {
    let before = "[p0]\np1 = new_with_vtable(descr=nodesize)\ni2 = getfield_gc_i(p1, descr=valuedescr)\n\
                  guard_class(p1, ConstClass(node_vtable)) []\ni3 = ptr_eq(p1, p0)\njump(i2, i3, p1)\n";
    let after = "[p0]\np1 = new_with_vtable(descr=nodesize)\njump(0, 0, p1)\n";
    proved(before, after);
    // The class of an input is not known.
    let before = "[p0]\nguard_class(p0, ConstClass(node_vtable)) []\nfinish(p0)\n";
    not_proved(before, "[p0]\nfinish(p0)\n");
}

#[test]
fn an_address_is_no_fixed_number() {
    // A fresh object's address is not known: not as an integer, nor as
    // the integer another trace gives in its place (at the end, escaped,
    // as a fail argument, as a call's result). The validator fixes the
    // base of fresh objects only where no word is both (a fixed base
    // without that check proved each of these).
    let before = "[p0]\np1 = new(descr=ssize)\ni2 = cast_ptr_to_int(p1)\nfinish(i2)\n";
    let after = "[p0]\np1 = new(descr=ssize)\nfinish(2305843009213693953)\n";
    not_proved_nor_replayed(before, after);
    // Nor is a fresh object the one at that number.
    let before = "[i0]\np1 = cast_int_to_ptr(2305843009213693953)\np3 = new(descr=ssize)\n\
                  i4 = ptr_eq(p1, p3)\nfinish(i4)\n";
    not_proved_nor_replayed(before, "[i0]\np3 = new(descr=ssize)\nfinish(1)\n");
    let fresh = "[p0]\np1 = new(descr=ssize)\n";
    let number = "2305843009213693953";
    for (b, a) in [
        ("finish(p1)\n", format!("finish({number})\n")),
        (
            "escape_n(p1)\nfinish()\n",
            format!("escape_n({number})\nfinish()\n"),
        ),
        (
            "guard_true(0) [p1]\nfinish()\n",
            format!("guard_true(0) [{number}]\nfinish()\n"),
        ),
    ] {
        not_proved_nor_replayed(&format!("{fresh}{b}"), &format!("{fresh}{a}"));
    }
    // An integer that resume data stores into a reference field.
    not_proved_nor_replayed(
        &format!(
            "{fresh}p2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, p1, descr=nextdescr)\n\
             guard_true(0) [p2]\nfinish()\n"
        ),
        &format!(
            "{fresh}guard_true(0) [p5] where p5 = new_with_vtable(descr=nodesize) \
             {{nextdescr={number}}}\nfinish()\n"
        ),
    );
    // A word one trace takes as an object and the other as an integer:
    // a call's result, an elidable call's.
    for (b, a) in [
        (
            "p2 = call_r(123, p1, descr=<Callr 8 r EF=5>)\ni3 = ptr_eq(p2, p1)\nfinish(i3)\n",
            format!(
                "i2 = call_i(123, p1, descr=<Calli 8 r EF=5>)\ni3 = int_eq(i2, {number})\nfinish(i3)\n"
            ),
        ),
        (
            "p2 = call_pure_r(123, p1, descr=<Callr 8 r EF=0>)\ni3 = ptr_eq(p2, p1)\nfinish(i3)\n",
            format!(
                "i2 = call_pure_i(123, p1, descr=<Calli 8 r EF=0>)\ni3 = int_eq(i2, {number})\nfinish(i3)\n"
            ),
        ),
    ] {
        not_proved_nor_replayed(&format!("{fresh}{b}"), &format!("{fresh}{a}"));
    }
}

#[test]
fn a_dropped_store_is_a_difference() {
    let before = "[p0, i1]\nsetfield_gc(p0, i1, descr=valuedescr)\nfinish(i1)\n";
    not_proved(before, "[p0, i1]\nfinish(i1)\n");
    // A store of what the field already holds may go.
    let before = "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\nsetfield_gc(p0, i1, descr=valuedescr)\nfinish(i1)\n";
    proved(
        before,
        "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i1)\n",
    );
}

#[test]
fn calls_write_what_their_effect_info_says() {
    let load_twice = |call: &str| {
        format!(
            "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\ni2 = call_i(123, i1, descr={call})\n\
             i3 = getfield_gc_i(p0, descr=valuedescr)\njump(i3, i2)\n"
        )
    };
    let load_once = |call: &str| {
        format!(
            "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\ni2 = call_i(123, i1, descr={call})\njump(i1, i2)\n"
        )
    };
    // A call that writes only adescr keeps valuedescr.
    proved(&load_twice("writeadescr"), &load_once("writeadescr"));
    // One that may write anything does not.
    // (the replayed call writes what the counterexample says it does)
    refuted_with(
        &load_twice("plaincalldescr"),
        &load_once("plaincalldescr"),
        "jump argument 1 differs",
    );
    // A call with other arguments is another call.
    let other =
        "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\ni2 = call_i(123, 7, descr=writeadescr)\n\
                 i3 = getfield_gc_i(p0, descr=valuedescr)\njump(i3, i2)\n";
    not_proved(&load_twice("writeadescr"), other);
    // The heap a call sees is part of it: the cells its effect info lets
    // it read or write. A store it cannot see may move past it (as PyPy
    // delays such stores); one it may read or write may not.
    let moved = |call: &str| {
        let before = format!(
            "[p0, i5]\nsetfield_gc(p0, i5, descr=adescr)\ni2 = call_i(123, 1, descr={call})\n\
             setfield_gc(p0, 0, descr=adescr)\nfinish(i2)\n"
        );
        let after = format!(
            "[p0, i5]\ni2 = call_i(123, 1, descr={call})\nsetfield_gc(p0, 0, descr=adescr)\nfinish(i2)\n"
        );
        (before, after)
    };
    let (before, after) = moved("nonwritedescr");
    proved(&before, &after);
    for call in ["readadescr", "writeadescr", "plaincalldescr"] {
        let (before, after) = moved(call);
        not_proved_nor_replayed(&before, &after);
    }
}

#[test]
fn pure_calls_of_equal_arguments_are_equal() {
    let before = "[i0]\ni1 = call_pure_i(123, i0, descr=elidablecalldescr)\ni2 = call_pure_i(123, i0, descr=elidablecalldescr)\n\
                  i3 = int_sub(i1, i2)\nfinish(i3)\n";
    proved(before, "[i0]\nfinish(0)\n");
    let before = "[i0]\ni1 = call_pure_i(123, i0, descr=elidablecalldescr)\nfinish(i1)\n";
    not_proved_nor_replayed(
        before,
        "[i0]\ni1 = call_pure_i(123, 5, descr=elidablecalldescr)\nfinish(i1)\n",
    );
}

/// An elidable call cannot give a fresh object it cannot reach (here
/// `p1`, which no call has seen), as no other call can. Otherwise, where
/// BEFORE reads its result back from a field (a read that may be `p1`,
/// stored there before) and passes it to a call, `p1` is handed out in
/// BEFORE, while in AFTER, which forwards the read, the call's result is
/// no fresh object to `reach`: `p1` is private, the call writes it in
/// BEFORE only, and the solver's counterexample did not replay (the
/// preamble of word_freq.log:1784, `ll_lower`'s result taken for
/// `_ll_stringslice`'s). Giving back its fresh argument stays possible.
#[test]
fn an_elidable_call_gives_no_fresh_object_it_cannot_reach() {
    let trace = |read: &str, passed: &str| {
        format!(
            "[p0]\np1 = new_with_vtable(descr=nodesize)\n\
             p2 = call_pure_r(123, p0, descr=<Callr 8 r EF=0>)\n\
             p3 = new_with_vtable(descr=nodesize)\nsetfield_gc(p3, p1, descr=nextdescr)\n\
             setfield_gc(p3, p2, descr=nextdescr)\n{read}\
             call_n(123, {passed}, descr=<Callv 0 r EF=5>)\nfinish()\n"
        )
    };
    let read = "p4 = getfield_gc_r(p3, descr=nextdescr)\n";
    proved(&trace(read, "p4"), &trace("", "p2"));
    // Its own fresh argument it may give back.
    let before = "[p0]\np1 = new_with_vtable(descr=nodesize)\n\
                  p2 = call_pure_r(123, p1, descr=<Callr 8 r EF=0>)\n\
                  setfield_gc(p2, 5, descr=valuedescr)\ni3 = getfield_gc_i(p1, descr=valuedescr)\n\
                  finish(i3)\n";
    let after = "[p0]\np1 = new_with_vtable(descr=nodesize)\n\
                 p2 = call_pure_r(123, p1, descr=<Callr 8 r EF=0>)\n\
                 setfield_gc(p2, 5, descr=valuedescr)\nfinish(0)\n";
    not_proved_nor_replayed(before, after);
}

#[test]
fn arrays_lengths_and_floats() {
    let before = "[i0, i1]\np2 = new_array(5, descr=arraydescr)\nsetarrayitem_gc(p2, 1, i0, descr=arraydescr)\n\
                  i3 = getarrayitem_gc_i(p2, 1, descr=arraydescr)\ni4 = arraylen_gc(p2, descr=arraydescr)\n\
                  i5 = getarrayitem_gc_i(p2, 2, descr=arraydescr)\njump(i3, i4, i5, p2)\n";
    let after = "[i0, i1]\np2 = new_array(5, descr=arraydescr)\nsetarrayitem_gc(p2, 1, i0, descr=arraydescr)\njump(i0, 5, 0, p2)\n";
    proved(before, after);
    // Out of bounds is undefined: anything goes after it.
    let before = "[p0]\ni1 = getarrayitem_gc_i(p0, -1, descr=arraydescr)\nfinish(i1)\n";
    proved(before, "[p0]\nfinish(42)\n");
    // A float keeps its bits through the heap.
    let before = "[p0, f1]\nsetfield_gc(p0, f1, descr=floatdescr)\nf2 = getfield_gc_f(p0, descr=floatdescr)\nfinish(f2)\n";
    proved(
        before,
        "[p0, f1]\nsetfield_gc(p0, f1, descr=floatdescr)\nfinish(f1)\n",
    );
    // Float arithmetic is not known beyond equal arguments, equal results.
    let before = "[f0]\nf1 = float_add(f0, 0.0)\nfinish(f1)\n";
    not_proved_nor_replayed(before, "[f0]\nfinish(f0)\n");
}

#[test]
fn what_a_call_leaves_pending_is_its_own_exception() {
    // Each call replaces the pending exception with its own: after one
    // whose effect info says it cannot raise, none is pending, whatever
    // an earlier call left (here one that may raise, untested).
    let calls = |second: &str, guard: &str| {
        format!("[i0]\ni1 = call_i(123, i0, descr=nonwritedescr)\n{second}\n{guard}finish(i2)\n")
    };
    let cannot = "i2 = call_i(7, i1, descr=elidablecalldescr)";
    proved(
        &calls(cannot, "guard_no_exception() []\n"),
        &calls(cannot, ""),
    );
    let can = "i2 = call_i(7, i1, descr=nonwritedescr)";
    not_proved_nor_replayed(&calls(can, "guard_no_exception() []\n"), &calls(can, ""));
    // An elidable call too: it raises what its arguments make it raise.
    let pure = "i2 = call_pure_i(7, i1, descr=elidablecalldescr)";
    proved(&calls(pure, "guard_no_exception() []\n"), &calls(pure, ""));
    let raising = "i2 = call_pure_i(7, i1, descr=elidable3calldescr)";
    not_proved_nor_replayed(
        &calls(raising, "guard_no_exception() []\n"),
        &calls(raising, ""),
    );
    // The same arguments, the same exception: the second test of it goes.
    let twice = format!(
        "{raising}\nguard_no_exception() []\ni3 = call_pure_i(7, i1, descr=elidable3calldescr)\n\
         guard_no_exception() []\ni4 = int_sub(i2, i3)\ni5 = int_add(i2, i4)"
    );
    let once = format!("{raising}\nguard_no_exception() []\ni5 = same_as_i(i2)");
    proved(
        &calls(&twice, "").replace("finish(i2)", "finish(i5)"),
        &calls(&once, "").replace("finish(i2)", "finish(i5)"),
    );
    // The exception an elidable call raises is its own, not the one the
    // call before it raised.
    let caught = "[i0]\ni1 = call_i(123, i0, descr=plaincalldescr)\n\
        p3 = guard_exception(ConstClass(node_vtable)) []\n\
        i2 = call_pure_i(7, i0, descr=elidable3calldescr)\n\
        p4 = guard_exception(ConstClass(node_vtable)) []\nfinish(p4)\n";
    not_proved_nor_replayed(caught, &caught.replace("finish(p4)", "finish(p3)"));
}

#[test]
fn a_caught_exception_is_no_longer_pending() {
    // Past guard_exception, guard_no_exception holds: so the two ends
    // below are reached, and they differ.
    let before = "[i0]\ni1 = call_i(123, i0, descr=plaincalldescr)\np2 = guard_exception(ConstClass(node_vtable)) []\n\
                  guard_no_exception() []\nfinish(1)\n";
    let after = "[i0]\ni1 = call_i(123, i0, descr=plaincalldescr)\np2 = guard_exception(ConstClass(node_vtable)) []\n\
                 guard_no_exception() []\nfinish(2)\n";
    not_proved_nor_replayed(before, after);
    // Without the call there is no exception to catch.
    let before = "[i0]\np2 = guard_exception(ConstClass(node_vtable)) []\nfinish(1)\n";
    proved(
        before,
        "[i0]\np2 = guard_exception(ConstClass(node_vtable)) []\nfinish(2)\n",
    );
}

#[test]
fn a_bridge_that_saves_the_exception_is_entered_with_one_pending() {
    // (PyPy's bridges out of a failed guard on an exception start so.)
    let saves = "[p0]\ni1 = save_exc_class()\np2 = save_exception()\n";
    // What is pending at the entry is unknown: not none.
    not_proved_nor_replayed(&format!("{saves}finish(i1)\n"), "[p0]\nfinish(0)\n");
    not_proved_nor_replayed(&format!("{saves}finish(p2)\n"), "[p0]\nfinish(NULL)\n");
    // Saving its value clears it; saving its class does not.
    let cleared = format!("{saves}guard_no_exception() []\nfinish(i1)\n");
    proved(&cleared, &format!("{saves}finish(i1)\n"));
    let class_only = "[p0]\ni1 = save_exc_class()\nguard_no_exception() []\nfinish(i1)\n";
    not_proved_nor_replayed(class_only, "[p0]\ni1 = save_exc_class()\nfinish(i1)\n");
    // Restored, it is pending again, and a guard_exception of its class
    // catches the value saved.
    let restored = format!(
        "{saves}restore_exception(i1, p2)\np3 = guard_exception(ConstClass(node_vtable)) []\n"
    );
    proved(
        &format!("{restored}finish(p3)\n"),
        &format!("{restored}finish(p2)\n"),
    );
    not_proved_nor_replayed(
        &format!("{restored}finish(p3)\n"),
        &format!("{restored}finish(p0)\n"),
    );
    // A restored class 0 and null value is none pending; a value with
    // class 0 is one pending (as the interpreter has it).
    let none = "[p0]\nrestore_exception(0, NULL)\nguard_no_exception() []\nfinish(1)\n";
    proved(none, "[p0]\nrestore_exception(0, NULL)\nfinish(1)\n");
    let some = "[p0]\nguard_nonnull(p0) []\nrestore_exception(0, p0)\nguard_no_exception() []\nfinish(1)\n";
    not_proved(
        some,
        "[p0]\nguard_nonnull(p0) []\nrestore_exception(0, p0)\nfinish(1)\n",
    );
}

#[test]
fn a_write_only_the_optimized_trace_makes_is_a_difference() {
    let after = "[p0]\nsetfield_gc(p0, 1, descr=valuedescr)\nfinish(0)\n";
    not_proved("[p0]\nfinish(0)\n", after);
    let after = "[p0]\nsetarrayitem_gc(p0, 0, 1, descr=arraydescr)\nfinish(0)\n";
    not_proved("[p0]\nfinish(0)\n", after);
}

/// Each fact the heap's meaning assumes, shown needed: the optimization
/// beside it is proved with the fact and would not be without it.
#[test]
fn each_assumed_fact_is_needed_somewhere() {
    // Old objects point to old objects (or null): not to a fresh one.
    let before = "[p0]\np1 = new(descr=ssize)\np2 = getfield_gc_r(p0, descr=nextdescr)\ni3 = ptr_eq(p1, p2)\njump(i3, p1)\n";
    proved(
        before,
        "[p0]\np1 = new(descr=ssize)\np2 = getfield_gc_r(p0, descr=nextdescr)\njump(0, p1)\n",
    );
    // A fresh object is not null.
    let before = "[i0]\np1 = new(descr=ssize)\nguard_nonnull(p1) []\nfinish(p1)\n";
    proved(before, "[i0]\np1 = new(descr=ssize)\nfinish(p1)\n");
    // Lengths are not negative.
    let before = "[p0]\ni1 = arraylen_gc(p0, descr=arraydescr)\ni2 = int_lt(i1, 0)\nfinish(i2)\n";
    proved(
        before,
        "[p0]\ni1 = arraylen_gc(p0, descr=arraydescr)\nfinish(0)\n",
    );
    // Two classes are two values.
    let before = "[p0]\nguard_class(p0, ConstClass(node_vtable)) []\nguard_class(p0, ConstClass(node_vtable2)) []\nfinish(p0)\n";
    let trace = traceopt_ir::parse_trace_with(before, "t", Some(namespace())).unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(20)).unwrap();
    assert_eq!(
        traceopt_verify::verify_never_ends(&trace, &mut solver).unwrap(),
        Verdict::Proved
    );
    // Two constant objects are two objects...
    let before = "[i0]\ni1 = ptr_eq(ConstPtr(myptr), ConstPtr(myptrb))\nfinish(i1)\n";
    proved(before, "[i0]\nfinish(0)\n");
    // ... unless the namespace says they are one (myptr is nodeaddr).
    let before = "[i0]\ni1 = ptr_eq(ConstPtr(myptr), ConstPtr(nodeaddr))\nfinish(i1)\n";
    proved(before, "[i0]\nfinish(1)\n");
    not_proved(before, "[i0]\nfinish(0)\n");
    // A float comparison gives 0 or 1.
    let before = "[f0, f1]\ni2 = float_lt(f0, f1)\ni3 = int_and(i2, 1)\nfinish(i3)\n";
    proved(before, "[f0, f1]\ni2 = float_lt(f0, f1)\nfinish(i2)\n");
}

#[test]
fn a_narrow_field_holds_what_fits() {
    // chardescr is one unsigned byte: what it holds is below 256...
    let before = "[p0]\ni0 = getfield_gc_i(p0, descr=chardescr)\ni1 = int_lt(i0, 256)\nguard_true(i1) []\nfinish(i0)\n";
    proved(
        before,
        "[p0]\ni0 = getfield_gc_i(p0, descr=chardescr)\nfinish(i0)\n",
    );
    // ... and a store keeps the low byte: 300 reads back as 44.
    let before = "[p0]\nsetfield_gc(p0, 300, descr=chardescr)\ni1 = getfield_gc_i(p0, descr=chardescr)\nfinish(i1)\n";
    proved(
        before,
        "[p0]\nsetfield_gc(p0, 300, descr=chardescr)\nfinish(44)\n",
    );
    not_proved(
        before,
        "[p0]\nsetfield_gc(p0, 300, descr=chardescr)\nfinish(300)\n",
    );
    // A word-sized field holds any word.
    let before = "[p0]\ni0 = getfield_gc_i(p0, descr=valuedescr)\ni1 = int_lt(i0, 256)\nguard_true(i1) []\nfinish(i0)\n";
    not_proved(
        before,
        "[p0]\ni0 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i0)\n",
    );
}

/// Refuted, with a replayed difference that contains `expected`, where
/// `objN` stands for any object from before (their numbers follow the
/// solver's model).
fn refuted_with(before: &str, after: &str, expected: &str) {
    match verdict(before, after) {
        Verdict::Refuted(c) => assert!(
            any_object_number(&c.difference).contains(expected),
            "expected a difference mentioning {expected:?}, got {c}\n{before}\n{after}"
        ),
        other => panic!("expected a counterexample, got {other:?}\n{before}\n{after}"),
    }
}

/// `text` with the number of each object from before (`objK`, not a
/// fresh `new objK`) replaced by `N`.
fn any_object_number(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("obj") {
        out.push_str(&rest[..at + 3]);
        rest = &rest[at + 3..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && !out.ends_with("new obj") {
            out.push('N');
            rest = &rest[digits..];
        }
    }
    out + rest
}

#[test]
fn only_objects_from_before_match_any_object_number() {
    let text = "obj12.next differs: BEFORE new obj3, AFTER obj0";
    assert_eq!(
        any_object_number(text),
        "objN.next differs: BEFORE new obj3, AFTER objN"
    );
    assert!(!any_object_number("new obj2.value differs").contains("objN.value"));
}

// Resume data: where both traces fail the same guard, the interpreter
// that takes over must get the same fail arguments and heap.

/// BEFORE allocates a node and fills it before a guard that lists it.
const NODE_BEFORE_GUARD: &str = "[p0, i1, i2]\np3 = new_with_vtable(descr=nodesize)\n\
    setfield_gc(p3, i1, descr=valuedescr)\nguard_true(i2) [i1, p3]\n\
    setfield_gc(p0, p3, descr=nextdescr)\nfinish(i1)\n";

/// AFTER with the allocation moved past the guard, whose resume data
/// describes the node as `virtual`.
fn node_after_guard(virtual_node: &str) -> String {
    format!(
        "[p0, i1, i2]\nguard_true(i2) [i1, p3] where p3 = {virtual_node}\n\
         p3 = new_with_vtable(descr=nodesize)\nsetfield_gc(p3, i1, descr=valuedescr)\n\
         setfield_gc(p0, p3, descr=nextdescr)\nfinish(i1)\n"
    )
}

#[test]
fn a_virtual_with_the_objects_contents_resumes_alike() {
    let after = node_after_guard("new_with_vtable(descr=nodesize) {valuedescr=i1}");
    proved(NODE_BEFORE_GUARD, &after);
}

#[test]
fn a_virtual_with_a_wrong_or_missing_field_or_class_is_refuted() {
    let wrong_value = node_after_guard("new_with_vtable(descr=nodesize) {valuedescr=i2}");
    refuted_with(
        NODE_BEFORE_GUARD,
        &wrong_value,
        "fail argument 2.valuedescr differs",
    );
    let missing = node_after_guard("new_with_vtable(descr=nodesize) {}");
    refuted_with(
        NODE_BEFORE_GUARD,
        &missing,
        "fail argument 2.valuedescr differs",
    );
    let other_class = node_after_guard("new_with_vtable(descr=nodesize2) {valuedescr=i1}");
    refuted_with(NODE_BEFORE_GUARD, &other_class, "fail argument 2 has class");
}

#[test]
fn a_virtual_cannot_stand_for_an_object_from_before() {
    let before = "[p0, i1, i2]\nguard_true(i2) [p0]\nfinish(i1)\n";
    let after = "[p0, i1, i2]\nguard_true(i2) [p3] where p3 = new_with_vtable(descr=nodesize) {}\n\
                 finish(i1)\n";
    refuted_with(before, after, "fail argument 1 differs");
}

#[test]
fn cyclic_virtuals_compare_exactly() {
    let before = "[p0, i1, i2]\np3 = new_with_vtable(descr=nodesize)\n\
                  setfield_gc(p3, p3, descr=nextdescr)\nguard_true(i2) [p3]\nfinish(i1)\n";
    let after = |virtuals: &str| {
        format!(
            "[p0, i1, i2]\nguard_true(i2) [p3] where {virtuals}\n\
             p3 = new_with_vtable(descr=nodesize)\nsetfield_gc(p3, p3, descr=nextdescr)\nfinish(i1)\n"
        )
    };
    proved(
        before,
        &after("p3 = new_with_vtable(descr=nodesize) {nextdescr=p3}"),
    );
    // Two nodes pointing at each other are not one pointing at itself.
    let two = after(
        "p3 = new_with_vtable(descr=nodesize) {nextdescr=p4}, \
         p4 = new_with_vtable(descr=nodesize) {nextdescr=p3}",
    );
    refuted_with(before, &two, "fail argument 1.nextdescr differs");
}

#[test]
fn a_changed_fail_argument_or_a_store_moved_past_a_guard_is_refuted() {
    let before = "[p0, i1, i2]\nguard_true(i2) [i1]\nfinish(i1)\n";
    let after = "[p0, i1, i2]\nguard_true(i2) [i2]\nfinish(i1)\n";
    refuted_with(before, after, "fail argument 1 differs");
    // The end is the same, but not the heap the guard leaves.
    let before =
        "[p0, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\nguard_true(i2) [i1]\nfinish(i1)\n";
    let after =
        "[p0, i1, i2]\nguard_true(i2) [i1]\nsetfield_gc(p0, i1, descr=valuedescr)\nfinish(i1)\n";
    refuted_with(before, after, "objN.valuedescr differs");
    // Also where the two guards list other fail arguments (as a test's
    // input lists none): the heap is still compared, and the replay shows
    // it.
    let before =
        "[p0, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\nguard_true(i2) []\nfinish(i1)\n";
    refuted_with(before, after, "objN.valuedescr differs");
}

#[test]
fn only_what_outlives_the_trace_is_compared() {
    // Nothing after the trace can reach the node: its contents do not
    // matter.
    let before =
        "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
                  i3 = getfield_gc_i(p2, descr=valuedescr)\nfinish(i3)\n";
    proved(before, "[p0, i1]\nfinish(i1)\n");
    // Stored into an object from before, it is reached: a store to it
    // dropped is a difference.
    let before =
        "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
                  setfield_gc(p0, p2, descr=nextdescr)\nfinish(i1)\n";
    let after = "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p0, p2, descr=nextdescr)\nfinish(i1)\n";
    refuted_with(before, after, "objN.nextdescr.valuedescr differs");
    // Output, it is reached too.
    let before = "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\nfinish(p2)\n";
    let after = "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nfinish(p2)\n";
    refuted_with(before, after, "valuedescr differs");
    // Stored into an object from before and overwritten there, it is not
    // reached at the end.
    let stored = |then: &str| {
        format!(
            "[p0, p1, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
             setfield_gc(p0, p2, descr=nextdescr)\n{then}finish(i1)\n"
        )
    };
    let overwritten = "setfield_gc(p0, p1, descr=nextdescr)\n";
    let after = "[p0, p1, i1]\nsetfield_gc(p0, p1, descr=nextdescr)\nfinish(i1)\n";
    proved(&stored(overwritten), after);
    // Overwritten only after a call, it may be kept where the call copied
    // the field, and written later: its contents count (a validator that
    // took the store for overwritten across the call hid the node).
    let called = |write: &str| {
        format!(
            "[p0, p1, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p0, p2, descr=nextdescr)\n\
             call_n(123, i1, descr=plaincalldescr)\n{write}setfield_gc(p0, p1, descr=nextdescr)\nfinish(i1)\n"
        )
    };
    let write = "setfield_gc(p2, i1, descr=valuedescr)\n";
    not_proved_nor_replayed(&called(write), &called(""));
    // An item is overwritten by a store at the same index only: at
    // another, the node stays, and so do its contents.
    let items = |write: &str, second: &str| {
        format!(
            "[p0, p1, i1]\np2 = new_with_vtable(descr=nodesize)\n{write}\
             setarrayitem_gc(p0, 0, p2, descr=gcarraydescr)\n\
             setarrayitem_gc(p0, {second}, p1, descr=gcarraydescr)\nfinish(i1)\n"
        )
    };
    proved(&items(write, "0"), &items("", "0"));
    refuted_with(&items(write, "1"), &items("", "1"), "valuedescr differs");
    // The field read again and handed out: what the read gave is, and the
    // overwritten node is not (it was reached through any escaping read
    // of the field, which made a peeled preamble that sets and restores
    // `topframeref` unprovable).
    let handed = |then: &str| {
        format!(
            "[p0, p1, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
             setfield_gc(p0, p2, descr=nextdescr)\n{then}p3 = getfield_gc_r(p0, descr=nextdescr)\n\
             escape_n(p3)\nfinish(i1)\n"
        )
    };
    let after = "[p0, p1, i1]\nsetfield_gc(p0, p1, descr=nextdescr)\nescape_n(p1)\nfinish(i1)\n";
    proved(&handed(overwritten), after);
    // Not overwritten, the read gives the node, whose contents count.
    let after = "[p0, p1, i1]\np2 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p0, p2, descr=nextdescr)\nescape_n(p2)\nfinish(i1)\n";
    refuted_with(&handed(""), after, "valuedescr differs");
    // A marker hands nothing out: a node only asserted not null is not
    // reached (a peeled loop's state object, asserted so by the loop,
    // made its body unprovable).
    let before =
        "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        assert_not_none(p2)\nkeepalive(p2)\nfinish(i1)\n";
    proved(before, "[p0, i1]\nfinish(i1)\n");
    // Kept in a node nothing reaches, it is handed out by the read alone.
    let before =
        "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\np4 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p4, p2, descr=nextdescr)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        p3 = getfield_gc_r(p4, descr=nextdescr)\nescape_n(p3)\nfinish(i1)\n";
    let after = "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nescape_n(p2)\nfinish(i1)\n";
    refuted_with(before, after, "valuedescr differs");
    // Overwritten through another object, it is reached unless the two are
    // the same object.
    let elsewhere = "setfield_gc(p1, p1, descr=nextdescr)\n";
    let after = "[p0, p1, i1]\nsetfield_gc(p1, p1, descr=nextdescr)\nfinish(i1)\n";
    refuted_with(&stored(elsewhere), after, "nextdescr");
    // Reached through a fresh object that is itself reached.
    let before =
        "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\np3 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p3, i1, descr=valuedescr)\nsetfield_gc(p2, p3, descr=nextdescr)\n\
        setfield_gc(p0, p2, descr=nextdescr)\nfinish(i1)\n";
    let after =
        "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\np3 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p2, p3, descr=nextdescr)\nsetfield_gc(p0, p2, descr=nextdescr)\nfinish(i1)\n";
    refuted_with(before, after, "valuedescr differs");
    // Reached through a fresh object read back from the heap: the read
    // may be the node stored there, and the chain is two stores long (a
    // validator that took the read for an object from before, or gave
    // the chain one round, hid the node it leads to).
    let chained = |value: &str| {
        format!(
            "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\np3 = new_with_vtable(descr=nodesize)\n\
             {value}setfield_gc(p0, p2, descr=nextdescr)\np4 = getfield_gc_r(p0, descr=nextdescr)\n\
             setfield_gc(p4, p3, descr=nextdescr)\nfinish(i1)\n"
        )
    };
    let value = "setfield_gc(p3, i1, descr=valuedescr)\n";
    refuted_with(&chained(value), &chained(""), "valuedescr differs");
    // Read from an object from before that holds none of ours, the owner
    // is no fresh object: what is stored into it is reached through it.
    let from_before = |value: &str| {
        format!(
            "[p0, i1]\np3 = new_with_vtable(descr=nodesize)\n{value}\
             p4 = getfield_gc_r(p0, descr=nextdescr)\nsetfield_gc(p4, p3, descr=nextdescr)\nfinish(i1)\n"
        )
    };
    refuted_with(&from_before(value), &from_before(""), "valuedescr differs");
}

#[test]
fn objects_an_optimizer_keeps_are_paired_with_the_ones_they_stand_for() {
    // BEFORE allocates two nodes the optimizer removes, then the one it
    // keeps: the kept object is BEFORE's third, not its first.
    let before =
        "[p0, i0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p1, i0, descr=valuedescr)\n\
        p2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, p1, descr=nextdescr)\n\
        i1 = getfield_gc_i(p1, descr=valuedescr)\np3 = new_with_vtable(descr=nodesize2)\n\
        setfield_gc(p3, i1, descr=valuedescr)\nsetfield_gc(p0, p3, descr=nextdescr)\nfinish(p3)\n";
    let after =
        "[p0, i0]\np3 = new_with_vtable(descr=nodesize2)\nsetfield_gc(p3, i0, descr=valuedescr)\n\
        setfield_gc(p0, p3, descr=nextdescr)\nfinish(p3)\n";
    proved(before, after);
    // Allocated in the other order (a forced object comes later), paired
    // by where each one goes.
    let before =
        "[p0, i0]\np1 = new_with_vtable(descr=nodesize)\np2 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p1, i0, descr=valuedescr)\nsetfield_gc(p0, p1, descr=nextdescr)\nfinish(p2)\n";
    let after =
        "[p0, i0]\np2 = new_with_vtable(descr=nodesize)\np1 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p1, i0, descr=valuedescr)\nsetfield_gc(p0, p1, descr=nextdescr)\nfinish(p2)\n";
    proved(before, after);
    // The kept object with a field the removed one had: refuted.
    let wrong =
        "[p0, i0]\np3 = new_with_vtable(descr=nodesize2)\nsetfield_gc(p3, i0, descr=valuedescr)\n\
        setfield_gc(p0, p0, descr=nextdescr)\nfinish(p3)\n";
    let before =
        "[p0, i0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p1, i0, descr=valuedescr)\n\
        p3 = new_with_vtable(descr=nodesize2)\nsetfield_gc(p3, i0, descr=valuedescr)\n\
        setfield_gc(p0, p3, descr=nextdescr)\nfinish(p3)\n";
    refuted_with(before, wrong, "objN.nextdescr differs");
    // Two outputs swapped: no pairing proves it.
    let before =
        "[i0]\np1 = new_with_vtable(descr=nodesize)\np2 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p1, i0, descr=valuedescr)\njump(p1, p2)\n";
    let after =
        "[i0]\np1 = new_with_vtable(descr=nodesize)\np2 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p1, i0, descr=valuedescr)\njump(p2, p1)\n";
    not_proved_nor_replayed(before, after);
}

#[test]
fn a_copy_whose_length_is_a_sum_of_cancelling_terms_is_one_of_known_length() {
    // The recording computes the length as (start + 2) - start; the
    // optimizer folds it to 2. Both copies are then the same two reads
    // and stores, and the traces are alike with no question to the
    // solver (read as a copy of unknown length, BEFORE's needs three).
    let before = "[p0, i1]\ni2 = int_add(i1, 2)\ni3 = int_sub(i2, i1)\np2 = newstr(3)\n\
        escape_n(p2)\ncopystrcontent(p0, p2, i1, 1, i3)\nfinish()\n";
    let after = "[p0, i1]\ni2 = int_add(i1, 2)\np2 = newstr(3)\nescape_n(p2)\n\
        copystrcontent(p0, p2, i1, 1, 2)\nfinish()\n";
    let ns = Some(namespace());
    let before = parse_trace_with(before, "before", ns.clone()).unwrap();
    let after = parse_trace_with(after, "after", ns).unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(20)).unwrap();
    let verdict = verify_given(&before, &after, Given::default(), &mut solver).unwrap();
    assert_eq!(verdict, Verdict::Proved);
    assert_eq!(solver.queries(), 0);
}

#[test]
fn where_the_traces_name_their_reach_apart_it_is_proved_one_and_assumed() {
    // A node stored into an input's field is reached where the field
    // still holds it; BEFORE wrote the field before (a dead write AFTER
    // leaves out), so the two traces' reach at the call is two terms of
    // one meaning. The equation of the two is proved and assumed.
    let before = "[p0, i0]\np1 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p1, i0, descr=valuedescr)\nsetfield_gc(p0, NULL, descr=nextdescr)\n\
        setfield_gc(p0, p1, descr=nextdescr)\ni2 = call_i(123, i0, descr=plaincalldescr)\nfinish(i2)\n";
    let after = "[p0, i0]\np1 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p1, i0, descr=valuedescr)\nsetfield_gc(p0, p1, descr=nextdescr)\n\
        i2 = call_i(123, i0, descr=plaincalldescr)\nfinish(i2)\n";
    let ns = Some(namespace());
    let before = parse_trace_with(before, "before", ns.clone()).unwrap();
    let after = parse_trace_with(after, "after", ns).unwrap();
    let dir = std::env::temp_dir().join(format!("traceopt-verify-sights-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut solver = Solver::start(None, Duration::from_secs(20)).unwrap();
    solver.dump_to(&dir).unwrap();
    let verdict = verify_given(&before, &after, Given::default(), &mut solver).unwrap();
    let queries: Vec<String> = (std::fs::read_dir(&dir).unwrap())
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(verdict, Verdict::Proved);
    let equation = asks_reach_alike(&queries);
    assert!(equation, "no query proves the two traces' reach one");
}

/// Whether a query asks that a slot array of BEFORE's is one of AFTER's.
fn asks_reach_alike(queries: &[String]) -> bool {
    queries.iter().any(|q| {
        q.match_indices("(= i.b_").any(|(at, _)| {
            let rest = &q[at..];
            let end = rest.find(')').unwrap_or(rest.len());
            let eq = &rest[..end];
            eq.contains("_slots i.a_") && eq.ends_with("_slots")
        })
    })
}

#[test]
fn copied_characters_are_the_sources() {
    // A copy of a known length, character by character.
    let before =
        "[i0]\np1 = newstr(2)\nstrsetitem(p1, 0, i0)\nstrsetitem(p1, 1, 7)\np2 = newstr(3)\n\
        escape_n(p2)\ncopystrcontent(p1, p2, 0, 1, 2)\nfinish()\n";
    let after = "[i0]\np2 = newstr(3)\nescape_n(p2)\nstrsetitem(p2, 1, i0)\nstrsetitem(p2, 2, 7)\nfinish()\n";
    proved(before, after);
    let shifted = "[i0]\np2 = newstr(3)\nescape_n(p2)\nstrsetitem(p2, 0, i0)\nstrsetitem(p2, 1, 7)\nfinish()\n";
    refuted_with(before, shifted, "the string");
    // A copy of any length, from a string from before.
    let before = "[p0, i1]\ni2 = int_gt(i1, 0)\nguard_true(i2) []\np2 = newunicode(i1)\n\
        copyunicodecontent(p0, p2, 0, 0, i1)\ni3 = unicodegetitem(p2, 0)\nfinish(i3)\n";
    let after = "[p0, i1]\ni2 = int_gt(i1, 0)\nguard_true(i2) []\ni4 = unicodelen(p0)\n\
        i5 = int_le(i1, i4)\nguard_true(i5) []\ni3 = unicodegetitem(p0, 0)\nfinish(i3)\n";
    proved(before, after);
    refuted_with(
        before,
        &after.replace("unicodegetitem(p0, 0)", "unicodegetitem(p0, 1)"),
        "differs",
    );
    // Characters are bytes: storing 256 is undefined, so an optimizer may
    // not introduce it.
    let before = "[i0]\np1 = newstr(1)\nstrsetitem(p1, 0, i0)\nfinish(p1)\n";
    let after = "[i0]\np1 = newstr(1)\ni1 = int_add(i0, 256)\nstrsetitem(p1, 0, i1)\nfinish(p1)\n";
    not_proved_nor_replayed(before, after);
}

#[test]
fn string_helpers_mean_what_pypy_makes_of_them() {
    let not_proved = |before: &str, after: &str| {
        assert_ne!(
            verdict(before, after),
            Verdict::Proved,
            "\n{before}\n{after}"
        );
    };
    // A concatenation is a new string holding both.
    let before = "[p1, p2]\np3 = call_r(0, p1, p2, descr=strconcatdescr)\njump(p2, p3)\n";
    let after = |first: &str, second: &str| {
        format!(
            "[p1, p2]\ni1 = strlen(p1)\ni2 = strlen(p2)\ni3 = int_add(i1, i2)\np3 = newstr(i3)\n\
             copystrcontent({first}, p3, 0, 0, i1)\ncopystrcontent({second}, p3, 0, i1, i2)\njump(p2, p3)\n"
        )
    };
    proved(before, &after("p1", "p2"));
    not_proved(before, &after("p2", "p1"));
    // A string with two known characters appended: the end heaps hold
    // fresh strings of unknown length, compared at any index.
    let before = "[i0, i1, p2]\np1 = newstr(2)\nstrsetitem(p1, 0, i0)\nstrsetitem(p1, 1, i1)\n\
        p3 = call_r(0, p2, p1, descr=strconcatdescr)\njump(p3)\n";
    let after = |second: &str| {
        format!(
            "[i0, i1, p2]\ni2 = strlen(p2)\ni3 = int_add(i2, 2)\np3 = newstr(i3)\n\
             copystrcontent(p2, p3, 0, 0, i2)\nstrsetitem(p3, i2, i0)\ni4 = int_add(i2, 1)\n\
             strsetitem(p3, i4, {second})\njump(p3)\n"
        )
    };
    proved(before, &after("i1"));
    not_proved(before, &after("i0"));
    // A slice of a slice is one copy, from the sum of the starts.
    let before = "[p1, i1, i2, i3, i4]\np2 = call_r(0, p1, i1, i2, descr=strslicedescr)\n\
        p3 = call_r(0, p2, i3, i4, descr=strslicedescr)\njump(p3)\n";
    let after = |start: &str| {
        format!(
            "[p1, i1, i2, i3, i4]\ni5 = int_sub(i4, i3)\ni6 = int_add(i1, {start})\n\
             p3 = newstr(i5)\ncopystrcontent(p1, p3, i6, 0, i5)\njump(p3)\n"
        )
    };
    proved(before, &after("i3"));
    not_proved(before, &after("0"));
    // A slice's characters are the source's.
    let before =
        "[p1]\np2 = call_r(0, p1, 1, 3, descr=strslicedescr)\ni3 = strgetitem(p2, 1)\nfinish(i3)\n";
    let after = |i: i64| {
        format!(
            "[p1]\ni0 = strlen(p1)\ni1 = int_ge(i0, 3)\nguard_true(i1) []\ni3 = strgetitem(p1, {i})\nfinish(i3)\n"
        )
    };
    proved(before, &after(2));
    not_proved(before, &after(1));
    // Equality: of a string with itself, with a constant of its contents.
    let equal = |a: &str, b: &str| {
        format!("[p1, p2]\ni1 = call_i(0, {a}, {b}, descr=strequaldescr)\nfinish(i1)\n")
    };
    proved(&equal("p1", "p1"), "[p1, p2]\nfinish(1)\n");
    not_proved(&equal("p1", "p2"), "[p1, p2]\nfinish(1)\n");
    let before = "[p1]\np2 = newstr(1)\nstrsetitem(p2, 0, 120)\ni1 = call_i(0, p2, s\"x\", descr=strequaldescr)\nfinish(i1)\n";
    proved(before, "[p1]\nfinish(1)\n");
    not_proved(&before.replace("120", "121"), "[p1]\nfinish(1)\n");
    // Equal to a constant of one character: that character, compared
    // one by one (a constant's length is known).
    let before = "[i1]\np1 = newstr(1)\nstrsetitem(p1, 0, i1)\n\
        i0 = call_i(0, p1, s\"x\", descr=strequaldescr)\nfinish(i0)\n";
    proved(before, "[i1]\ni0 = int_eq(i1, 120)\nfinish(i0)\n");
    not_proved(before, "[i1]\ni0 = int_eq(i1, 121)\nfinish(i0)\n");
    // Every character counts, the last too.
    let before = "[i1, i2]\np1 = newstr(2)\nstrsetitem(p1, 0, i1)\nstrsetitem(p1, 1, i2)\n\
        i0 = call_i(0, p1, s\"xy\", descr=strequaldescr)\nfinish(i0)\n";
    let after =
        "[i1, i2]\ni3 = int_eq(i1, 120)\ni4 = int_eq(i2, 121)\ni0 = int_and(i3, i4)\nfinish(i0)\n";
    proved(before, after);
    not_proved(before, "[i1, i2]\ni0 = int_eq(i1, 120)\nfinish(i0)\n");
    let before = "[p1]\ni0 = call_i(0, s\"x\", p1, descr=strequaldescr)\nfinish(i0)\n";
    let after = |c: i64| {
        format!("[p1]\ni0 = call_i(0, p1, {c}, descr=streq_checknull_char_descr)\nfinish(i0)\n")
    };
    proved(before, &after(120));
    not_proved(before, &after(121));
    // A string constant's length and characters.
    let before = "[i0]\ni1 = strlen(s\"abc\")\ni2 = strgetitem(s\"abc\", 1)\njump(i1, i2)\n";
    proved(before, "[i0]\njump(3, 98)\n");
    not_proved(before, "[i0]\njump(3, 97)\n");
}

#[test]
fn strings_of_unknown_length_compare_by_a_witness_of_their_difference() {
    // A slice compared with a string is the helper that compares the
    // span in place (PyPy's test_str_equal_slice2); neither length is
    // known. Wrong lengths and starts are refuted, with a replayed run.
    let before = "[p1, i1, i2, p3]\np4 = call_r(0, p1, i1, i2, descr=strslicedescr)\n\
        i0 = call_i(0, p3, p4, descr=strequaldescr)\nfinish(i0)\n";
    let after = |length: &str, start: &str| {
        format!(
            "[p1, i1, i2, p3]\ni4 = int_sub(i2, {length})\ni5 = int_add({start}, 0)\n\
             i0 = call_i(0, p1, i5, i4, p3, descr=streq_slice_checknull_descr)\nfinish(i0)\n"
        )
    };
    proved(before, &after("i1", "i1"));
    not_proved(before, &after("1", "i1"));
    not_proved(before, &after("i1", "0"));
    let shifted = after("i1", "i1").replace("int_add(i1, 0)", "int_add(i1, 1)");
    not_proved(before, &shifted);
    // Two new strings of unknown length: equality is symmetric, and
    // compares the characters of both.
    let equal_slices = |first: &str, second: &str| {
        format!(
            "[p1, p2, i1]\np3 = call_r(0, {first}, 0, i1, descr=strslicedescr)\n\
             p4 = call_r(0, {second}, 0, i1, descr=strslicedescr)\n\
             i0 = call_i(0, p3, p4, descr=strequaldescr)\nfinish(i0)\n"
        )
    };
    proved(&equal_slices("p1", "p2"), &equal_slices("p2", "p1"));
    let wrong = equal_slices("p2", "p1").replace("p2, 0, i1", "p2, 1, i1");
    not_proved(&equal_slices("p1", "p2"), &wrong);
    // Strings that differ in one character are unequal, where no literal
    // gives their length (a proof that needs the equality at every index).
    let two = |second: i64| {
        format!(
            "[i9]\ni1 = int_add(i9, 2)\np1 = newstr(i1)\nstrsetitem(p1, 0, 97)\nstrsetitem(p1, 1, 98)\n\
             p2 = newstr(i1)\nstrsetitem(p2, 0, 97)\nstrsetitem(p2, 1, {second})\n\
             i0 = call_i(0, p1, p2, descr=strequaldescr)\nfinish(i0)\n"
        )
    };
    // A replay's string constant holds its text, the characters the
    // solver compared one by one too.
    let before = "[i9]\np1 = newstr(1)\nstrsetitem(p1, 0, 120)\n\
        i1 = call_i(0, p1, s\"x\", descr=strequaldescr)\nfinish(i1)\n";
    not_proved(before, "[i9]\nfinish(0)\n");
    let zero = "[i9]\ni2 = int_eq(i9, 0)\nguard_true(i2) []\nfinish(0)\n";
    proved(
        &two(97).replace("[i9]\n", "[i9]\ni2 = int_eq(i9, 0)\nguard_true(i2) []\n"),
        zero,
    );
    not_proved(
        &two(98).replace("[i9]\n", "[i9]\ni2 = int_eq(i9, 0)\nguard_true(i2) []\n"),
        zero,
    );
}

#[test]
fn equal_strings_of_unknown_length_are_decided_character_by_character() {
    // Batch 1173 of the 10,000-case string-helper cross-check: the
    // witness alone leaves `pv0 == px0` open ("ba" and "aa", whose length
    // an op gives), so the validator asks again with short spans stated
    // exactly; with z3's equation solving that query was still open after
    // five minutes. The interpreter's values prove, one changed refutes.
    let before = "[]\n\
         ps0 = newstr(2)\n\
         strsetitem(ps0, 0, 98)\n\
         strsetitem(ps0, 1, 97)\n\
         pt0 = newstr(2)\n\
         strsetitem(pt0, 0, 97)\n\
         strsetitem(pt0, 1, 98)\n\
         ipvn0 = int_add(2, 0)\n\
         pv0 = newstr(ipvn0)\n\
         strsetitem(pv0, 0, 98)\n\
         strsetitem(pv0, 1, 97)\n\
         ipxn0 = int_add(2, 0)\n\
         px0 = newstr(ipxn0)\n\
         strsetitem(px0, 0, 97)\n\
         strsetitem(px0, 1, 97)\n\
         in0 = call_i(0, ps0, s\"ba\", descr=streq_nonnull_descr)\n\
         ih0 = call_i(0, ps0, 2, 2, 97, descr=streq_slice_char_descr)\n\
         iv0 = call_i(0, pv0, px0, descr=strequaldescr)\n\
         ps1 = newstr(1)\n\
         strsetitem(ps1, 0, 97)\n\
         pt1 = newstr(0)\n\
         ipvn1 = int_add(1, 0)\n\
         pv1 = newstr(ipvn1)\n\
         strsetitem(pv1, 0, 98)\n\
         ipxn1 = int_add(1, 0)\n\
         px1 = newstr(ipxn1)\n\
         strsetitem(px1, 0, 97)\n\
         pc1 = call_r(0, ps1, pt1, descr=strconcatdescr)\n\
         ipc1 = strlen(pc1)\n\
         icpc1 = strgetitem(pc1, 0)\n\
         in1 = call_i(0, ps1, s\"b\", descr=streq_nonnull_descr)\n\
         iv1 = call_i(0, pv1, px1, descr=strequaldescr)\n\
         escape_n(in0, ih0, iv0, ipc1, icpc1, in1, iv1)\n\
         finish()\n\
         ";
    let after = |iv0: i64| format!("[]\nescape_n(1, 0, {iv0}, 1, 97, 0, 0)\nfinish()\n");
    // The exact query is first left open, then proved by a second try in
    // 15 to 20 s: with the usual 20 s per query it passed or timed out
    // from run to run (af23936 too), so each query gets 30 s here.
    let within = |after: &str| verdict_within(before, after, &[], Duration::from_secs(30));
    assert_eq!(within(&after(0)), Verdict::Proved);
    assert!(matches!(within(&after(1)), Verdict::Refuted(_)));
}

#[test]
fn an_exact_query_that_gives_up_is_not_an_unreplayed_counterexample() {
    // Batch 2131 of the 10,000-case string-helper cross-check: the
    // witness query's counterexample (`pv0 == px0` of "b" and "a", whose
    // length an op gives) does not replay, and the query that states the
    // short spans exactly was still open after five minutes. That is the
    // solver's limit, reported as unknown, not as a counterexample that
    // does not replay (which reads as an encoding bug). Each half of the
    // trace alone is proved in a second.
    let before = "[]\n\
         ps0 = newstr(2)\n\
         strsetitem(ps0, 0, 97)\n\
         strsetitem(ps0, 1, 97)\n\
         pt0 = newstr(2)\n\
         strsetitem(pt0, 0, 97)\n\
         strsetitem(pt0, 1, 98)\n\
         ipvn0 = int_add(1, 0)\n\
         pv0 = newstr(ipvn0)\n\
         strsetitem(pv0, 0, 98)\n\
         ipxn0 = int_add(1, 0)\n\
         px0 = newstr(ipxn0)\n\
         strsetitem(px0, 0, 97)\n\
         pc0 = call_r(0, ps0, pt0, descr=strconcatdescr)\n\
         ipc0 = strlen(pc0)\n\
         icpc0 = strgetitem(pc0, 0)\n\
         iv0 = call_i(0, pv0, px0, descr=strequaldescr)\n\
         ih0 = call_i(0, ps0, 2, 2, 98, descr=streq_slice_char_descr)\n\
         ps1 = newstr(2)\n\
         strsetitem(ps1, 0, 98)\n\
         strsetitem(ps1, 1, 97)\n\
         pt1 = newstr(0)\n\
         ipvn1 = int_add(2, 0)\n\
         pv1 = newstr(ipvn1)\n\
         strsetitem(pv1, 0, 98)\n\
         strsetitem(pv1, 1, 98)\n\
         ipxn1 = int_add(2, 0)\n\
         px1 = newstr(ipxn1)\n\
         strsetitem(px1, 0, 98)\n\
         strsetitem(px1, 1, 97)\n\
         io1 = call_i(0, ps1, s\"ba\", descr=streq_lengthok_descr)\n\
         ib1 = call_i(0, ps1, 0, 0, s\"\", descr=streq_slice_nonnull_descr)\n\
         ie1 = call_i(0, ps1, NULL, descr=strequaldescr)\n\
         escape_n(ipc0, icpc0, iv0, ih0, io1, ib1, ie1)\n\
         finish()\n\
         ";
    let after = "[]\nescape_n(4, 97, 0, 0, 1, 1, 0)\nfinish()\n";
    // Within a second the exact query gives up: unknown for the timeout,
    // or proved once the outputs are asked one by one (as fast as the
    // machine allows); never a counterexample that does not replay. A
    // wrong value is never proved.
    let seconds = Duration::from_secs(1);
    match verdict_within(before, after, &[], seconds) {
        Verdict::Proved => {}
        Verdict::Unknown(why) => assert!(why.contains("timeout"), "{why}"),
        other => panic!("expected proved or a timeout, got {other:?}"),
    }
    let wrong = after.replace("escape_n(4,", "escape_n(3,");
    assert_ne!(
        verdict_within(before, &wrong, &[], seconds),
        Verdict::Proved
    );
    let outputs = "escape_n(ipc0, icpc0, iv0, ih0, io1, ib1, ie1)";
    let half = |escape: &str| before.replace(outputs, escape);
    proved(
        &half("escape_n(ipc0, icpc0, iv0, ih0)"),
        "[]\nescape_n(4, 97, 0, 0)\nfinish()\n",
    );
    proved(
        &half("escape_n(io1, ib1, ie1)"),
        "[]\nescape_n(1, 1, 0)\nfinish()\n",
    );
}

#[test]
fn outputs_the_solver_cannot_compare_at_once_are_compared_one_by_one() {
    // Batch 4018 of the 10,000-case string-helper cross-check: each of
    // the five outputs is proved in a second, all five at once were still
    // open after two minutes. The validator then proves them one by one.
    let before = "[]\n\
         ps0 = newstr(1)\n\
         strsetitem(ps0, 0, 97)\n\
         pt0 = newstr(2)\n\
         strsetitem(pt0, 0, 98)\n\
         strsetitem(pt0, 1, 98)\n\
         ipvn0 = int_add(2, 0)\n\
         pv0 = newstr(ipvn0)\n\
         strsetitem(pv0, 0, 97)\n\
         strsetitem(pv0, 1, 97)\n\
         ipxn0 = int_add(1, 0)\n\
         px0 = newstr(ipxn0)\n\
         strsetitem(px0, 0, 97)\n\
         iw0 = int_add(1, 0)\n\
         iy0 = call_i(0, ps0, 0, iw0, px0, descr=streq_slice_checknull_descr)\n\
         pc0 = call_r(0, ps0, pt0, descr=strconcatdescr)\n\
         ipc0 = strlen(pc0)\n\
         icpc0 = strgetitem(pc0, 0)\n\
         iv0 = call_i(0, pv0, px0, descr=strequaldescr)\n\
         escape_n(iw0, iy0, ipc0, icpc0, iv0)\n\
         finish()\n\
         ";
    let after = |v: &str| format!("[]\nescape_n(1, 1, 3, 97, {v})\nfinish()\n");
    let seconds = Duration::from_secs(5);
    assert_eq!(
        verdict_within(before, &after("0"), &[], seconds),
        Verdict::Proved
    );
    // Wrong twin: "aa" is not "a".
    match verdict_within(before, &after("1"), &[], seconds) {
        Verdict::Refuted(_) => {}
        other => panic!("expected a counterexample, got {other:?}"),
    }
}

#[test]
fn an_array_copy_copies_the_span_its_arguments_name() {
    // With effect info that names the array descr it writes, and as a
    // PYPYLOG prints it, without: the trace's own array ops give it.
    for (items, copy) in [
        ("arraydescr", "arraycopydescr"),
        ("<ArrayS 8>", "<Callv 0 rriii EF=2 OS=1>"),
    ] {
        let before = copy_between_arrays(items, copy);
        proved(&before, "[i0]\njump(3, i0)\n");
        assert_ne!(verdict(&before, "[i0]\njump(3, 0)\n"), Verdict::Proved);
        assert_ne!(verdict(&before, "[i0]\njump(i0, i0)\n"), Verdict::Proved);
    }
}

/// Two arrays of `items` descr, items of the first copied into the
/// second by a call of `copy` descr; the trace ends with two of them.
fn copy_between_arrays(items: &str, copy: &str) -> String {
    format!(
        "[i0]\np1 = new_array(3, descr={items})\np2 = new_array(3, descr={items})\n\
         setarrayitem_gc(p1, 1, i0, descr={items})\nsetarrayitem_gc(p2, 0, 3, descr={items})\n\
         call_n(0, p1, p2, 1, 1, 2, descr={copy})\ni2 = getarrayitem_gc_i(p2, 0, descr={items})\n\
         i3 = getarrayitem_gc_i(p2, 1, descr={items})\njump(i2, i3)\n"
    )
}

#[test]
fn an_array_copy_without_effect_info_needs_its_arrays_type() {
    let copy = "<Callv 0 rriii EF=2 OS=1>";
    let before = copy_between_arrays("<ArrayS 8>", copy);
    // Arrays the trace knows nothing of: a call that may do anything,
    // which may not be dropped.
    let unknown = format!("[p0, p1]\ncall_n(0, p0, p1, 0, 0, 1, descr={copy})\nfinish(0)\n");
    assert_ne!(verdict(&unknown, "[p0, p1]\nfinish(0)\n"), Verdict::Proved);
    // Arrays of two types answer nothing either: not proved.
    let mixed = before.replacen(
        "p2 = new_array(3, descr=<ArrayS 8>)",
        "p2 = new_array(3, descr=<ArrayU 8>)",
        1,
    );
    assert_ne!(verdict(&mixed, "[i0]\njump(3, i0)\n"), Verdict::Proved);
}

#[test]
fn a_reference_read_from_an_input_is_no_object_stored_into_a_fresh_one() {
    // BEFORE fills a list that nothing reaches; a call is given what an
    // input's field holds, which cannot be that list (list_sort.log:4124).
    let call = "p9 = getfield_gc_r(p7, descr=lstorage)\ni3 = getfield_gc_i(p9, descr=length)\n\
        call_n(123, p9, descr=<Callv 0 r EF=5>)\nfinish(i3)\n";
    let fill = "p2 = new(descr=<SizeDescr 24>)\nsetfield_gc(p2, i1, descr=length)\n\
        p3 = new_with_vtable(descr=<SizeDescr 24>)\nsetfield_gc(p3, p2, descr=lstorage)\n";
    let names = |t: &str| {
        t.replace(
            "descr=lstorage",
            "descr=<FieldP W_ListObject.inst_lstorage 8>",
        )
        .replace("descr=length", "descr=<FieldS list.length 8>")
    };
    proved(
        &names(&format!("[p7, i1]\n{fill}{call}")),
        &names(&format!("[p7, i1]\n{call}")),
    );
    // Read from what may be that fresh object, it may be the list: given
    // to a call after its owner forgot it, the list is seen.
    let escaped = names(
        "[p7, i1]\np3 = new_with_vtable(descr=<SizeDescr 24>)\np2 = new(descr=<SizeDescr 24>)\n\
         setfield_gc(p2, i1, descr=length)\nsetfield_gc(p3, p2, descr=lstorage)\n\
         setfield_gc(p7, p3, descr=lstorage)\np9 = getfield_gc_r(p7, descr=lstorage)\n\
         p10 = getfield_gc_r(p9, descr=lstorage)\nsetfield_gc(p3, NULL, descr=lstorage)\n\
         call_n(123, p10, descr=<Callv 0 r EF=5>)\nfinish()\n",
    );
    let other = escaped.replacen("setfield_gc(p2, i1,", "setfield_gc(p2, 0,", 1);
    not_proved(&escaped, &other);
}

#[test]
fn a_reference_held_before_the_trace_is_older_than_what_it_makes() {
    // list_sort.log:9281, reduced: BEFORE boxes a product it never uses;
    // the later read of another box (read from an input's cell) is then
    // the same term in both traces, and the modulo of it needs no
    // bit-blasting (the query timed out before).
    let intval = "<FieldS pypy.objspace.std.intobject.W_IntObject.inst_intval 8 pure>";
    let cell = "<FieldP pypy.interpreter.nestedscope.Cell.inst_w_value 16>";
    // The two traces differ in the boxes they make and the guards they
    // keep (`start`, `boxed`, `end`); the rest is the same.
    let trace = |start: &str, boxed: &str, end: &str| {
        format!(
            "[p0, p1, p2, p3, p4, i5, i6, p7, p8, p9, p10, p11, p12, p13, p14]\n\
             i17 = getfield_gc_i(p12, descr=<FieldS W_IntRangeIterator.inst_current 8>)\n\
             {start}p27 = getfield_gc_r(p9, descr={cell})\n\
             i29 = getfield_gc_i(p27, descr={intval})\ni30 = int_mul_ovf(i29, i17)\nguard_no_overflow()\n\
             {boxed}p37 = getfield_gc_r(p10, descr={cell})\ni39 = getfield_gc_i(p37, descr={intval})\n\
             i40 = int_add_ovf(i30, i39)\nguard_no_overflow()\n\
             i50 = call_pure_i(7007, i40, 7, descr=<Calli 8 ii EF=0 OS=14>)\n\
             p56 = getfield_gc_r(p11, descr=<FieldP W_ListObject.inst_lstorage 8>)\n\
             i57 = getfield_gc_i(p56, descr=<FieldS list.length 8>)\n\
             p65 = getfield_gc_r(p56, descr=<FieldP list.items 16>)\n\
             setarrayitem_gc(p65, i57, i50, descr=<ArrayS 8>)\n\
             {end}jump(p0, p1, NULL, NULL, p4, 6, 4, p7, p22, p9, p10, p11, p12, NULL, NULL, descr=<Loop-1>)\n"
        )
    };
    let nlocals = "i23 = getfield_gc_i(p2, descr=<FieldS PyCode.inst_co_nlocals 176 pure>)\n";
    let box22 = "p22 = new_with_vtable(descr=<SizeDescr 16>)\n";
    let before = trace(
        &format!("{box22}{nlocals}i25 = int_add(0, i23)\nguard_value(i25, 2)\n"),
        &format!(
            "p31 = new_with_vtable(descr=<SizeDescr 16>)\nsetfield_gc(p31, i30, descr={intval})\n\
             i35 = int_add(1, i23)\nguard_value(i35, 3)\n"
        ),
        "",
    );
    let after = trace(&format!("{nlocals}guard_value(i23, 2)\n"), "", box22);
    proved(&before, &after);
    // Where a fresh object went into that cell first, the read is it.
    let stored = "[p10, i1]\np31 = new_with_vtable(descr=<SizeDescr 16>)\n\
        setfield_gc(p31, i1, descr=<FieldS W_IntObject.inst_intval 8 pure>)\n\
        setfield_gc(p10, p31, descr=<FieldP Cell.inst_w_value 16>)\n\
        p37 = getfield_gc_r(p10, descr=<FieldP Cell.inst_w_value 16>)\n\
        i39 = getfield_gc_i(p37, descr=<FieldS W_IntObject.inst_intval 8 pure>)\nfinish(i39)\n";
    let forwarded = stored.replace("finish(i39)", "finish(i1)");
    proved(stored, &forwarded);
    not_proved(stored, &stored.replace("finish(i39)", "finish(0)"));
}

#[test]
fn what_a_constant_holds_skips_what_the_trace_makes() {
    // BEFORE makes a box that AFTER leaves out. A later read of the box a
    // constant's cell holds is then the same term in both traces (the
    // constant's object is older than the new box, so the read passes
    // the store to it), and the modulo of it needs no bit-blasting.
    let intval = "<FieldS pypy.objspace.std.intobject.W_IntObject.inst_intval 8 pure>";
    let cell = "<FieldP pypy.interpreter.nestedscope.Cell.inst_w_value 16>";
    let trace = |made: &str| {
        format!(
            "[p0, i1]\n{made}p3 = getfield_gc_r(ConstPtr(myptr), descr={cell})\n\
             i4 = getfield_gc_i(p3, descr={intval})\ni6 = int_mul_ovf(i4, i1)\nguard_no_overflow()\n\
             i7 = call_pure_i(7007, i6, 7, descr=<Calli 8 ii EF=0 OS=14>)\nfinish(i7)\n"
        )
    };
    let made = format!(
        "p9 = new_with_vtable(descr=<SizeDescr 16>)\nsetfield_gc(p9, i1, descr={intval})\n"
    );
    proved(&trace(&made), &trace(""));
    // A store into the constant's own cell is not passed: the read is the
    // box stored there.
    let stored = format!(
        "[p0, i1]\n{made}setfield_gc(ConstPtr(myptr), p9, descr={cell})\n\
         p3 = getfield_gc_r(ConstPtr(myptr), descr={cell})\ni4 = getfield_gc_i(p3, descr={intval})\n\
         finish(i4)\n"
    );
    proved(&stored, &stored.replace("finish(i4)", "finish(i1)"));
    not_proved(&stored, &stored.replace("finish(i4)", "finish(0)"));
}

/// The queries a proof of `after` against `before` takes (none where the
/// validator sees the two alike), or a panic where it is no proof.
fn queries_to_prove(before: &str, after: &str) -> usize {
    let ns = Some(namespace());
    let parse = |text: &str| parse_trace_with(text, "t", ns.clone()).unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(20)).unwrap();
    let verdict = verify_given(&parse(before), &parse(after), Given::default(), &mut solver);
    assert_eq!(verdict.unwrap(), Verdict::Proved, "\n{before}\n{after}");
    solver.queries()
}

#[test]
fn a_guard_on_an_old_object_past_what_only_before_makes_is_settled_without_the_solver() {
    // BEFORE makes a node AFTER leaves out. The class of the input read
    // after it is the initial heap's, under the same name in both
    // traces: the guards are the same term, and nothing is asked.
    let node = "p1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p1, 5, descr=valuedescr)\n";
    let trace = |made: &str| {
        format!(
            "[p0]\n{made}guard_class(p0, ConstClass(node_vtable))\n\
             i2 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i2)\n"
        )
    };
    assert_eq!(queries_to_prove(&trace(node), &trace("")), 0);
    // Nor is a call's result: it is never an object only one trace
    // makes, so its reads skip the stores to that one (BEFORE's node,
    // hidden from the call, made before it).
    let trace = |made: &str| {
        format!(
            "[i0]\n{made}p2 = call_r(123, i0, descr=nonwritedescr)\n\
             guard_class(p2, ConstClass(node_vtable))\n\
             i3 = getfield_gc_i(p2, descr=valuedescr)\nfinish(i3)\n"
        )
    };
    assert_eq!(queries_to_prove(&trace(node), &trace("")), 0);
    // The class of the new node itself is the one it was made with.
    let made = "[p0]\np1 = new_with_vtable(descr=nodesize)\n\
        guard_class(p1, ConstClass(node_vtable))\nfinish(p1)\n";
    proved(
        made,
        &made.replace("guard_class(p1, ConstClass(node_vtable))\n", ""),
    );
}

#[test]
fn stores_into_new_objects_in_another_order_are_the_same_heap() {
    // AFTER forces its nodes in another order: the heaps it leaves are
    // the same chain of stores, and nothing is asked.
    let nodes =
        "[i0]\np1 = new_with_vtable(descr=nodesize)\np2 = new_with_vtable(descr=nodesize)\n";
    let (one, two) = (
        "setfield_gc(p1, i0, descr=valuedescr)\n",
        "setfield_gc(p2, 7, descr=valuedescr)\n",
    );
    let call = "call_n(123, p1, p2, descr=nonwritedescr)\nfinish(p1)\n";
    let before = format!("{nodes}{one}{two}{call}");
    assert_eq!(
        queries_to_prove(&before, &format!("{nodes}{two}{one}{call}")),
        0
    );
    // A store of 0 into a new object is what it held: AFTER may leave it
    // out.
    let zero = "setfield_gc(p2, 0, descr=valuedescr)\n";
    assert_eq!(
        queries_to_prove(
            &format!("{nodes}{one}{zero}{call}"),
            &format!("{nodes}{one}{call}")
        ),
        0
    );
    // But not one that overwrites another store, nor one over what a
    // call may have written.
    not_proved(
        &format!("{nodes}{one}{two}{zero}{call}"),
        &format!("{nodes}{one}{two}{call}"),
    );
    let writes = "call_n(123, p2, descr=plaincalldescr)\n";
    not_proved_nor_replayed(
        &format!("{nodes}{writes}{zero}{call}"),
        &format!("{nodes}{writes}{call}"),
    );
}

#[test]
fn what_a_call_returns_is_no_object_only_one_trace_made() {
    // A node the call never saw cannot be what it returns: AFTER, which
    // does not allocate the node, may fold the comparison.
    let before =
        "[i0]\np1 = new_with_vtable(descr=nodesize)\np2 = call_r(123, i0, descr=nonwritedescr)\n\
        i3 = ptr_eq(p2, p1)\nfinish(i3)\n";
    let after = "[i0]\np2 = call_r(123, i0, descr=nonwritedescr)\nfinish(0)\n";
    proved(before, after);
    // A node both traces pass to the call may come back.
    let before =
        "[i0]\np1 = new_with_vtable(descr=nodesize)\np2 = call_r(123, p1, descr=nonwritedescr)\n\
        i3 = ptr_eq(p2, p1)\nfinish(i3)\n";
    let after =
        "[i0]\np1 = new_with_vtable(descr=nodesize)\np2 = call_r(123, p1, descr=nonwritedescr)\n\
        finish(0)\n";
    not_proved_nor_replayed(before, after);
    // So its reads see the stores to such a node, made after the call.
    let node =
        "[i0]\np1 = new_with_vtable(descr=nodesize)\np2 = call_r(123, p1, descr=nonwritedescr)\n";
    let (store, read) = (
        "setfield_gc(p1, 7, descr=valuedescr)\n",
        "i3 = getfield_gc_i(p2, descr=valuedescr)\n",
    );
    not_proved_nor_replayed(
        &format!("{node}{store}{read}finish(i3)\n"),
        &format!("{node}{read}{store}finish(i3)\n"),
    );
    // A call sees what it can reach: an object filled only after the
    // call that was given it (and reads its field) is another call.
    let call = "call_n(123, p1, descr=readadescr)\n";
    let store = "setfield_gc(p1, i0, descr=adescr)\n";
    let node = "[i0]\np1 = new(descr=ssize)\n";
    let before = format!("{node}{store}{call}finish(p1)\n");
    let after = format!("{node}{call}{store}finish(p1)\n");
    not_proved_nor_replayed(&before, &after);
    // But one it cannot reach (never given it) is not part of what it sees.
    let before = "[i0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p1, i0, descr=valuedescr)\n\
        call_n(123, i0, descr=nonwritedescr)\ni2 = getfield_gc_i(p1, descr=valuedescr)\nfinish(i2)\n";
    proved(
        before,
        "[i0]\ncall_n(123, i0, descr=nonwritedescr)\nfinish(i0)\n",
    );
}

/// Hand-made wrong heap rewrites, each of a kind an optimizer could get
/// wrong: every one is refuted with a counterexample the interpreter
/// replays (a `Refuted` verdict is only given after the replay shows the
/// difference).
#[test]
fn twenty_wrong_heap_rewrites_are_refuted_and_replayed() {
    let node = "p3 = new_with_vtable(descr=nodesize)";
    let cases: Vec<(&str, String, String)> = vec![
        (
            "a load forwarded past a store through a possible alias",
            "[p0, p1, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\nsetfield_gc(p1, i2, descr=valuedescr)\ni3 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i3)\n".into(),
            "[p0, p1, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\nsetfield_gc(p1, i2, descr=valuedescr)\nfinish(i1)\n".into(),
        ),
        (
            "a load forwarded from another field",
            "[p0, i1]\nsetfield_gc(p0, i1, descr=valuedescr)\ni2 = getfield_gc_i(p0, descr=chardescr)\nfinish(i2)\n".into(),
            "[p0, i1]\nsetfield_gc(p0, i1, descr=valuedescr)\nfinish(i1)\n".into(),
        ),
        (
            "a store dropped",
            "[p0, i1]\nsetfield_gc(p0, i1, descr=valuedescr)\nfinish(i1)\n".into(),
            "[p0, i1]\nfinish(i1)\n".into(),
        ),
        (
            "a store added",
            "[p0]\nfinish(0)\n".into(),
            "[p0]\nsetfield_gc(p0, 1, descr=valuedescr)\nfinish(0)\n".into(),
        ),
        (
            "an array store dropped",
            "[p0, i1]\nsetarrayitem_gc(p0, 0, i1, descr=arraydescr)\nfinish(i1)\n".into(),
            "[p0, i1]\ni2 = arraylen_gc(p0, descr=arraydescr)\ni3 = int_gt(i2, 0)\nguard_true(i3) []\nfinish(i1)\n".into(),
        ),
        (
            "an array store to another index",
            "[p0, i1]\nsetarrayitem_gc(p0, 0, i1, descr=arraydescr)\ni2 = getarrayitem_gc_i(p0, 1, descr=arraydescr)\nfinish(i2)\n".into(),
            "[p0, i1]\nsetarrayitem_gc(p0, 0, i1, descr=arraydescr)\ni2 = getarrayitem_gc_i(p0, 1, descr=arraydescr)\nfinish(i1)\n".into(),
        ),
        (
            "an array length folded wrong",
            "[i0]\np1 = new_array(5, descr=arraydescr)\ni2 = arraylen_gc(p1, descr=arraydescr)\nfinish(i2)\n".into(),
            "[i0]\nfinish(4)\n".into(),
        ),
        (
            "a string length folded wrong",
            "[i0]\np1 = newstr(3)\ni2 = strlen(p1)\nfinish(i2)\n".into(),
            "[i0]\nfinish(4)\n".into(),
        ),
        (
            "a string character forwarded wrong",
            "[i0]\np1 = newstr(2)\nstrsetitem(p1, 0, 65)\ni2 = strgetitem(p1, 1)\nfinish(i2)\n".into(),
            "[i0]\nfinish(65)\n".into(),
        ),
        (
            "a narrow field read back whole",
            "[p0, i1]\nsetfield_gc(p0, i1, descr=chardescr)\ni2 = getfield_gc_i(p0, descr=chardescr)\nfinish(i2)\n".into(),
            "[p0, i1]\nsetfield_gc(p0, i1, descr=chardescr)\nfinish(i1)\n".into(),
        ),
        (
            "a guard_class removed on an object of unknown class",
            "[p0]\nguard_class(p0, ConstClass(node_vtable)) []\nfinish(p0)\n".into(),
            "[p0]\nfinish(p0)\n".into(),
        ),
        (
            "a guard_nonnull removed",
            "[p0]\nguard_nonnull(p0) []\nfinish(1)\n".into(),
            "[p0]\nfinish(1)\n".into(),
        ),
        (
            "two inputs taken to be different objects",
            "[p0, p1]\ni2 = ptr_eq(p0, p1)\nfinish(i2)\n".into(),
            "[p0, p1]\nfinish(0)\n".into(),
        ),
        (
            "a new object taken to be an input",
            format!("[p0]\n{node}\ni2 = ptr_eq(p3, p0)\nfinish(i2)\n"),
            format!("[p0]\n{node}\nfinish(1)\n"),
        ),
        (
            "a store to a reachable new object dropped",
            format!("[p0, i1]\n{node}\nsetfield_gc(p3, i1, descr=valuedescr)\nsetfield_gc(p0, p3, descr=nextdescr)\nfinish(i1)\n"),
            format!("[p0, i1]\n{node}\nsetfield_gc(p0, p3, descr=nextdescr)\nfinish(i1)\n"),
        ),
        (
            "a store moved past a guard",
            "[p0, i1, i2]\nsetfield_gc(p0, i1, descr=valuedescr)\nguard_true(i2) [i1]\nfinish(i1)\n".into(),
            "[p0, i1, i2]\nguard_true(i2) [i1]\nsetfield_gc(p0, i1, descr=valuedescr)\nfinish(i1)\n".into(),
        ),
        (
            "a fail argument changed",
            "[p0, i1, i2]\nguard_true(i2) [i1]\nfinish(i1)\n".into(),
            "[p0, i1, i2]\nguard_true(i2) [i2]\nfinish(i1)\n".into(),
        ),
        (
            "a virtual whose field is missing from resume data",
            NODE_BEFORE_GUARD.into(),
            node_after_guard("new_with_vtable(descr=nodesize) {}"),
        ),
        (
            "a virtual with the wrong class",
            NODE_BEFORE_GUARD.into(),
            node_after_guard("new_with_vtable(descr=nodesize2) {valuedescr=i1}"),
        ),
        (
            "a virtual standing for an object from before",
            "[p0, i1, i2]\nguard_true(i2) [p0]\nfinish(i1)\n".into(),
            "[p0, i1, i2]\nguard_true(i2) [p3] where p3 = new_with_vtable(descr=nodesize) {}\nfinish(i1)\n".into(),
        ),
        (
            "a load forwarded past a call that writes its field",
            "[p0, i1]\ni2 = getfield_gc_i(p0, descr=adescr)\ni3 = call_i(1, i1, descr=writeadescr)\ni4 = getfield_gc_i(p0, descr=adescr)\nfinish(i4)\n".into(),
            "[p0, i1]\ni2 = getfield_gc_i(p0, descr=adescr)\ni3 = call_i(1, i1, descr=writeadescr)\nfinish(i2)\n".into(),
        ),
        (
            "an array item forwarded past a call that may write anything",
            "[p0, i1]\ni2 = getarrayitem_gc_i(p0, 0, descr=arraydescr)\ni3 = call_i(1, i1, descr=plaincalldescr)\ni4 = getarrayitem_gc_i(p0, 0, descr=arraydescr)\nfinish(i4)\n".into(),
            "[p0, i1]\ni2 = getarrayitem_gc_i(p0, 0, descr=arraydescr)\ni3 = call_i(1, i1, descr=plaincalldescr)\nfinish(i2)\n".into(),
        ),
        (
            "a virtual array with an item wrong",
            "[p0, i1, i2]\np3 = new_array_clear(2, descr=arraydescr)\nsetarrayitem_gc(p3, 1, i1, descr=arraydescr)\nguard_true(i2) [p3]\nfinish(i1)\n".into(),
            "[p0, i1, i2]\nguard_true(i2) [p3] where p3 = new_array_clear(descr=arraydescr) [i1, None]\nfinish(i1)\n".into(),
        ),
    ];
    assert!(cases.len() >= 20);
    for (what, before, after) in &cases {
        match verdict(before, after) {
            Verdict::Refuted(_) => {}
            other => panic!(
                "{what}: expected a replayed counterexample, got {other:?}\n{before}\n{after}"
            ),
        }
    }
}

#[test]
fn constant_objects_keep_their_class_length_and_pure_fields() {
    // myptr3's valuedescr3 is pure and 7, by the namespace.
    let read = "[i0]\ni1 = getfield_gc_i(ConstPtr(myptr3), descr=valuedescr3)\nfinish(i1)\n";
    proved(read, "[i0]\nfinish(7)\n");
    refuted_with(read, "[i0]\nfinish(8)\n", "finish argument 1 differs");
    // myptr's valuedescr is 5 in the namespace, but mutable: it may have
    // changed since.
    let mutable = "[i0]\ni1 = getfield_gc_i(ConstPtr(myptr), descr=valuedescr)\nfinish(i1)\n";
    not_proved(mutable, "[i0]\nfinish(5)\n");
    // myptr is a node.
    let class = "[i0]\nguard_class(ConstPtr(myptr), ConstClass(node_vtable)) []\nfinish(i0)\n";
    proved(class, "[i0]\nfinish(i0)\n");
    let other = "[i0]\nguard_class(ConstPtr(myptr), ConstClass(node_vtable2)) []\nfinish(i0)\n";
    not_proved(other, "[i0]\nfinish(i0)\n");
}

#[test]
fn pure_results_a_harness_gives_are_assumed_and_replayed() {
    let before = "[i0]\ni1 = call_pure_i(123, 4, descr=nonwritedescr)\nfinish(i1)\n";
    let given = [PureResult {
        args: vec![Const::Int(123), Const::Int(4)],
        result: Const::Int(5),
    }];
    assert_eq!(
        verdict_given(before, "[i0]\nfinish(5)\n", &given),
        Verdict::Proved
    );
    // Without it, 5 is a guess; with it, 6 is wrong (and replays so).
    assert_ne!(verdict(before, "[i0]\nfinish(5)\n"), Verdict::Proved);
    match verdict_given(before, "[i0]\nfinish(6)\n", &given) {
        Verdict::Refuted(c) => assert!(c.difference.contains("BEFORE 5, AFTER 6"), "{c}"),
        other => panic!("expected a refutation, got {other:?}"),
    }
    // Other arguments are another call.
    let other = "[i0]\ni1 = call_pure_i(123, 3, descr=nonwritedescr)\nfinish(i1)\n";
    assert_ne!(
        verdict_given(other, "[i0]\nfinish(5)\n", &given),
        Verdict::Proved
    );
    // Results that contradict each other would prove anything: the
    // validator finds its facts inconsistent and proves nothing.
    let contradictory = [
        given[0].clone(),
        PureResult {
            args: vec![Const::Int(123), Const::Int(4)],
            result: Const::Int(6),
        },
    ];
    match verdict_given(before, "[i0]\nfinish(7)\n", &contradictory) {
        Verdict::Unknown(why) => assert!(why.contains("contradict"), "{why}"),
        other => panic!("expected no proof, got {other:?}"),
    }
}

#[test]
fn a_difference_in_calls_of_helpers_pypy_knows_is_not_a_refutation() {
    // An unsigned division replaced: PyPy may know why; the interpreter
    // does not run the helper, so the validator says neither proved nor
    // refuted.
    let before = "[i0, i1]\ni2 = call_i(0, i0, i1, descr=int_udiv_descr)\nfinish(i2)\n";
    match verdict(before, "[i0, i1]\nfinish(0)\n") {
        Verdict::Unknown(why) => assert!(why.contains("OS=13"), "{why}"),
        other => panic!("expected unknown, got {other:?}"),
    }
    // An array copy, which the interpreter runs, dropped is not proved.
    let before = "[p0, p1]\ncall_n(0, p0, p1, 0, 0, 1, descr=arraycopydescr)\nfinish(0)\n";
    match verdict(before, "[p0, p1]\nfinish(0)\n") {
        Verdict::Refuted(_) | Verdict::Unreplayed(_) => {}
        other => panic!("expected a counterexample, got {other:?}"),
    }
    // A call of a helper it does not know, dropped, is refuted.
    let before = "[i0]\ni1 = call_i(123, i0, descr=plaincalldescr)\nfinish(0)\n";
    not_proved(before, "[i0]\nfinish(0)\n");
}

#[test]
fn products_in_heap_traces_are_proved_first_without_their_meaning() {
    // A square read from the heap is never negative: the product lemma
    // settles it with the product opaque.
    let square = |guard: &str| {
        format!(
            "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\ni2 = int_mul_ovf(i1, i1)\nguard_no_overflow() []\n\
             {guard}setfield_gc(p0, i2, descr=valuedescr)\nfinish(i2)\n"
        )
    };
    let after = square("");
    proved(&square("i3 = int_lt(i2, 0)\nguard_false(i3) []\n"), &after);
    // It may be 0: that needs the product's meaning, and replays.
    refuted_with(
        &square("i3 = int_lt(i2, 1)\nguard_false(i3) []\n"),
        &after,
        "BEFORE fails guard_false",
    );
    // A product of another value is another product.
    let other = "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\ni2 = int_mul_ovf(i1, 3)\nguard_no_overflow() []\n\
                 setfield_gc(p0, i2, descr=valuedescr)\nfinish(i2)\n";
    not_proved(&after, other);
}

#[test]
fn a_loop_invariant_call_is_made_once() {
    let call = |n: usize| {
        (0..n)
            .map(|k| {
                format!(
                    "i{k}0 = call_loopinvariant_i(1, i0, descr=nonwritedescr)\n\
                     guard_no_exception() []\nguard_value(i{k}0, 1) []\n"
                )
            })
            .collect::<String>()
    };
    let before = format!("[i0]\n{}finish(i0)\n", call(3));
    let once = "[i0]\ni2 = call_i(1, i0, descr=nonwritedescr)\nguard_no_exception() []\n\
                guard_value(i2, 1) []\nfinish(i0)\n";
    proved(&before, once);
    // Made as often as it is written: calls that may differ.
    let twice = "[i0]\ni2 = call_i(1, i0, descr=nonwritedescr)\nguard_no_exception() []\n\
                 guard_value(i2, 1) []\ni3 = call_i(1, i0, descr=nonwritedescr)\n\
                 guard_no_exception() []\nguard_value(i3, 1) []\nfinish(i0)\n";
    not_proved(&before, twice);
    // Another function is another call.
    let before_two = "[i0]\ni1 = call_loopinvariant_i(1, i0, descr=nonwritedescr)\n\
                      i2 = call_loopinvariant_i(2, i0, descr=nonwritedescr)\njump(i1, i2)\n";
    not_proved(
        before_two,
        "[i0]\ni1 = call_i(1, i0, descr=nonwritedescr)\njump(i1, i1)\n",
    );
}

#[test]
fn a_virtual_ref_holds_the_force_token_until_finished() {
    // PyPy's test_vref_virtual_1: the vref built as an object, the node
    // it stands for built only after the call that may force it.
    let before = "[p0, i1]\np1 = new_with_vtable(descr=nodesize)\n\
                  p1b = new_with_vtable(descr=nodesize)\n\
                  setfield_gc(p1b, 252, descr=valuedescr)\n\
                  setfield_gc(p1, p1b, descr=nextdescr)\n\
                  p2 = virtual_ref(p1, 3)\nsetfield_gc(p0, p2, descr=nextdescr)\n\
                  call_may_force_n(i1, descr=mayforcevirtdescr)\n\
                  guard_not_forced() [i1]\nvirtual_ref_finish(p2, p1)\n\
                  setfield_gc(p0, NULL, descr=nextdescr)\njump(p0, i1)\n";
    let after = |token_cleared: &str, forced: &str| {
        format!(
            "[p0, i1]\np3 = force_token()\np2 = new_with_vtable(descr=vref_descr)\n\
             setfield_gc(p2, p3, descr=virtualtokendescr)\n\
             setfield_gc(p2, NULL, descr=virtualforceddescr)\n\
             setfield_gc(p0, p2, descr=nextdescr)\n\
             call_may_force_n(i1, descr=mayforcevirtdescr)\nguard_not_forced() [i1]\n\
             setfield_gc(p0, NULL, descr=nextdescr)\n\
             setfield_gc(p2, {token_cleared}, descr=virtualtokendescr)\n\
             p1 = new_with_vtable(descr=nodesize)\np1b = new_with_vtable(descr=nodesize)\n\
             setfield_gc(p1b, 252, descr=valuedescr)\nsetfield_gc(p1, p1b, descr=nextdescr)\n\
             setfield_gc(p2, {forced}, descr=virtualforceddescr)\njump(p0, i1)\n"
        )
    };
    proved(before, &after("NULL", "p1"));
    // The token left in place, or the real object not stored: what the
    // call may have kept of the vref sees it (the replay keeps nothing).
    not_proved_nor_replayed(before, &after("p3", "p1"));
    not_proved_nor_replayed(before, &after("NULL", "NULL"));
    // Without its writes, a vref is a plain object nothing reaches.
    let unused = "[p1]\np2 = virtual_ref(p1, 5)\nvirtual_ref_finish(p2, p1)\njump(p1)\n";
    proved(unused, "[p1]\np0 = force_token()\njump(p1)\n");
}

#[test]
fn floats_are_ieee_values_with_one_nan() {
    let unary = |op: &str| format!("[f0]\nf1 = {op}\nf2 = escape_f(f1)\njump(f2)\n");
    // PyPy's rewrites: exact up to a NaN's payload and sign.
    proved(
        &unary("float_mul(1.0, f0)"),
        "[f0]\nf2 = escape_f(f0)\njump(f2)\n",
    );
    proved(&unary("float_mul(-1.0, f0)"), &unary("float_neg(f0)"));
    proved(
        &unary("float_truediv(f0, -0.25)"),
        &unary("float_mul(f0, -4.0)"),
    );
    let product = |a: &str, b: &str| format!("[f0, f1]\nf2 = float_mul({a}, {b})\njump(f2)\n");
    proved(&product("f0", "f1"), &product("f1", "f0"));
    // Their wrong twins: a reciprocal that is not exact, a sign lost, an
    // order that matters.
    not_proved(
        &unary("float_truediv(f0, 3.0)"),
        &unary("float_mul(f0, 0.3333333333333333)"),
    );
    not_proved(
        &unary("float_mul(-1.0, f0)"),
        "[f0]\nf2 = escape_f(f0)\njump(f2)\n",
    );
    let difference = |a: &str, b: &str| format!("[f0, f1]\nf2 = float_sub({a}, {b})\njump(f2)\n");
    not_proved(&difference("f0", "f1"), &difference("f1", "f0"));
    // Comparisons mean IEEE's: NaN is unordered, -0.0 equals 0.0.
    let compare = |op: &str| format!("[f0]\ni1 = {op}\njump(i1)\n");
    proved(&compare("float_lt(f0, f0)"), "[f0]\njump(0)\n");
    not_proved(&compare("float_eq(f0, f0)"), "[f0]\njump(1)\n");
    proved(
        &compare("float_eq(f0, 0.0)"),
        &compare("float_eq(f0, -0.0)"),
    );
}

#[test]
fn what_a_field_or_item_access_says_about_its_object() {
    // A field of a struct that starts with a class: the object is one.
    let is_object = |descr: &str| {
        format!("[p0]\ni1 = getfield_gc_i(p0, descr={descr})\nguard_is_object(p0) []\nfinish(i1)\n")
    };
    let without =
        |descr: &str| format!("[p0]\ni1 = getfield_gc_i(p0, descr={descr})\nfinish(i1)\n");
    proved(&is_object("valuedescr"), &without("valuedescr"));
    // A plain struct's field says nothing.
    not_proved_nor_replayed(&is_object("adescr"), &without("adescr"));
    // An item of a GC array descr: the object has that array's type id.
    let gc_type = |tid: &str| {
        format!(
            "[p0, p1]\nsetarrayitem_gc(p0, 1, p1, descr=gcarraydescr)\n\
             guard_gc_type(p0, ConstInt({tid})) []\njump(p0, p1)\n"
        )
    };
    let stored = "[p0, p1]\nsetarrayitem_gc(p0, 1, p1, descr=gcarraydescr)\njump(p0, p1)\n";
    proved(&gc_type("gcarraydescr_tid"), stored);
    not_proved_nor_replayed(&gc_type("node_tid"), stored);
}

#[test]
fn raw_array_items_are_memory_at_their_address() {
    // An unsigned byte holds less than 256 (not less than 255).
    let bound = |n: u32| {
        format!(
            "[i0]\ni1 = getarrayitem_raw_i(i0, 0, descr=rawarraydescr_char)\n\
             i2 = int_lt(i1, {n})\nguard_true(i2) []\nfinish()\n"
        )
    };
    let read = "[i0]\ni1 = getarrayitem_raw_i(i0, 0, descr=rawarraydescr_char)\nfinish()\n";
    proved(&bound(256), read);
    not_proved_nor_replayed(&bound(255), read);
    // A write read back at the same item, and at the same address through
    // raw_load; another item is another address.
    let write = |read: &str| {
        format!(
            "[i0, i1]\nsetarrayitem_raw(i0, 2, i1, descr=rawarraydescr)\n\
             i2 = {read}\nfinish(i2)\n"
        )
    };
    let same = write("getarrayitem_raw_i(i0, 2, descr=rawarraydescr)");
    proved(
        &same,
        "[i0, i1]\nsetarrayitem_raw(i0, 2, i1, descr=rawarraydescr)\nfinish(i1)\n",
    );
    let loaded = write("raw_load_i(i0, 16, descr=rawarraydescr)");
    proved(
        &loaded,
        "[i0, i1]\nsetarrayitem_raw(i0, 2, i1, descr=rawarraydescr)\nfinish(i1)\n",
    );
    let other = write("getarrayitem_raw_i(i0, 1, descr=rawarraydescr)");
    not_proved_nor_replayed(
        &other,
        "[i0, i1]\nsetarrayitem_raw(i0, 2, i1, descr=rawarraydescr)\nfinish(i1)\n",
    );
}

#[test]
fn a_quotient_by_a_shifted_one_is_an_arithmetic_shift() {
    let before = |bound: i64| {
        format!(
            "[i0, i1]\ni2 = int_ge(i0, 0)\nguard_true(i2) []\ni3 = int_lt(i0, {bound})\n\
             guard_true(i3) []\ni4 = int_lshift(1, i0)\n\
             i5 = call_pure_i(321, i1, i4, descr=int_py_div_descr)\nfinish(i5)\n"
        )
    };
    let after = |bound: i64, shift: &str| {
        format!(
            "[i0, i1]\ni2 = int_ge(i0, 0)\nguard_true(i2) []\ni3 = int_lt(i0, {bound})\n\
             guard_true(i3) []\ni4 = int_lshift(1, i0)\ni5 = {shift}(i1, i0)\nfinish(i5)\n"
        )
    };
    proved(&before(63), &after(63, "int_rshift"));
    // A logical shift, or a shift by 63 (1 << 63 is negative): wrong.
    refuted_with(&before(63), &after(63, "uint_rshift"), "finish");
    refuted_with(&before(64), &after(64, "int_rshift"), "finish");
}

#[test]
fn calls_never_write_pure_fields() {
    // A pure field reads the same across a call with random effects; a
    // mutable one may not.
    let before = |field: &str| {
        format!(
            "[p0, i1]\ni2 = getfield_gc_i(p0, descr={field})\ni3 = call_i(123, i1, descr=plaincalldescr)\n\
             i4 = getfield_gc_i(p0, descr={field})\njump(i2, i3, i4)\n"
        )
    };
    let after = |field: &str| {
        format!(
            "[p0, i1]\ni2 = getfield_gc_i(p0, descr={field})\ni3 = call_i(123, i1, descr=plaincalldescr)\n\
             jump(i2, i3, i2)\n"
        )
    };
    proved(&before("valuedescr3"), &after("valuedescr3"));
    not_proved(&before("valuedescr"), &after("valuedescr"));
    // A quasi-immutable field may change (a call may invalidate it).
    not_proved(&before("quasifielddescr"), &after("quasifielddescr"));
}

#[test]
fn a_read_skips_only_stores_to_objects_newer_than_its_object() {
    // p2 is read after p1 was allocated and stored into p0: it may be p1,
    // so the store to p1 is seen through it.
    let before =
        "[p0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p0, p1, descr=nextdescr)\n\
        p2 = getfield_gc_r(p0, descr=nextdescr)\nsetfield_gc(p1, 7, descr=valuedescr)\n\
        i3 = getfield_gc_i(p2, descr=valuedescr)\nfinish(i3)\n";
    let after = |v: i64| {
        format!(
            "[p0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p0, p1, descr=nextdescr)\n\
             setfield_gc(p1, 7, descr=valuedescr)\nfinish({v})\n"
        )
    };
    proved(before, &after(7));
    not_proved(before, &after(0));
    // p0, an input, is not p1: the store to p1 leaves p0's field.
    let before = "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\np2 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p2, 7, descr=valuedescr)\ni3 = getfield_gc_i(p0, descr=valuedescr)\njump(i3, p2)\n";
    let after = |v: &str| {
        format!(
            "[p0]\ni1 = getfield_gc_i(p0, descr=valuedescr)\np2 = new_with_vtable(descr=nodesize)\n\
             setfield_gc(p2, 7, descr=valuedescr)\njump({v}, p2)\n"
        )
    };
    proved(before, &after("i1"));
    not_proved(before, &after("7"));
}

#[test]
fn a_read_of_a_written_place_is_the_value_written_past_other_places() {
    // Writes to another allocation and to another constant index lie
    // between: the read is the first value written.
    let before = "[i1, i2, i3]\np4 = new_array_clear(3, descr=arraydescr)\n\
        p5 = new_array_clear(3, descr=arraydescr)\nsetarrayitem_gc(p4, 0, i1, descr=arraydescr)\n\
        setarrayitem_gc(p4, 1, i2, descr=arraydescr)\nsetarrayitem_gc(p5, 0, i3, descr=arraydescr)\n\
        i6 = getarrayitem_gc_i(p4, 0, descr=arraydescr)\nfinish(i6)\n";
    let after = |v: &str| before.replace("finish(i6)", &format!("finish({v})"));
    proved(before, &after("i1"));
    not_proved(before, &after("i2"));
    not_proved(before, &after("i3"));
    // A write at an index that may be the same one is not passed.
    let before = "[i0, i1, i2]\np4 = new_array_clear(3, descr=arraydescr)\n\
        setarrayitem_gc(p4, 0, i1, descr=arraydescr)\nsetarrayitem_gc(p4, i0, i2, descr=arraydescr)\n\
        i6 = getarrayitem_gc_i(p4, 0, descr=arraydescr)\nfinish(i6)\n";
    let after = |v: &str| before.replace("finish(i6)", &format!("finish({v})"));
    not_proved(before, &after("i1"));
    // Nor is a write to an object that may be the same one.
    let before = "[p0, i1, i2]\np4 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p4, p4, descr=nextdescr)\nsetfield_gc(p4, i1, descr=valuedescr)\n\
        p5 = getfield_gc_r(p4, descr=nextdescr)\nsetfield_gc(p5, i2, descr=valuedescr)\n\
        i6 = getfield_gc_i(p4, descr=valuedescr)\nfinish(i6)\n";
    let after = |v: &str| before.replace("finish(i6)", &format!("finish({v})"));
    proved(before, &after("i2"));
    not_proved(before, &after("i1"));
}

#[test]
fn a_fresh_array_holds_zeros_until_written() {
    // The fuzzer's case: a copy of a fresh array's zeros into another
    // fresh array that is handed out changes nothing, and may go. The
    // comparison at the end knows a fresh array's items are zero where
    // nothing wrote them, as a read of one does.
    let copied = |source: &str, fill: &str| {
        format!(
            "[p1]\n{source}p2 = new_array_clear(3, descr=arraydescr)\n{fill}\
             call_n(0, p1, p2, 1, 2, 1, descr=arraycopydescr)\nfinish(p2)\n"
        )
    };
    let dropped = "[p1]\np2 = new_array_clear(3, descr=arraydescr)\nfinish(p2)\n";
    let fresh = "p1 = new_array_clear(3, descr=arraydescr)\n";
    proved(&copied(fresh, "").replacen("[p1]", "[p0]", 1), dropped);
    // Wrong twins: the item copied was written first, or the source is
    // the array given, from before, whose items are not known to be zero.
    let written = "setarrayitem_gc(p1, 1, 5, descr=arraydescr)\n";
    not_proved(&copied(fresh, written).replacen("[p1]", "[p0]", 1), dropped);
    not_proved(&copied("", ""), dropped);
    // Nor are an old array's items zero where a copy of zeros into it
    // was left out. (The replay does not make the item the difference is
    // at: nothing reads it.)
    let zeroed = "[p1]\np3 = new_array_clear(3, descr=arraydescr)\n\
                  call_n(0, p3, p1, 1, 2, 1, descr=arraycopydescr)\nfinish(p1)\n";
    not_proved_nor_replayed(zeroed, "[p1]\nfinish(p1)\n");
}

#[test]
fn a_call_reaches_a_stored_object_only_through_cells_it_reads() {
    // The fuzzer's case: a node stored into p0's next field, and a call
    // that reads only adescr. The call cannot follow p0.next to the
    // node, so the node and its store may move past the call (as the
    // optimizer's delayed writes do), and what the call sees is alike.
    let made_after = |call: &str| {
        let before = format!(
            "[p0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p0, p1, descr=nextdescr)\n\
             i2 = call_i(123, 1, descr={call})\nfinish(i2)\n"
        );
        let after = format!(
            "[p0]\ni2 = call_i(123, 1, descr={call})\np1 = new_with_vtable(descr=nodesize)\n\
             setfield_gc(p0, p1, descr=nextdescr)\nfinish(i2)\n"
        );
        (before, after)
    };
    let (before, after) = made_after("readadescr");
    proved(&before, &after);
    // Nor can it see the node's value field: a store into it moves past.
    let filled_after = |call: &str| {
        let stored =
            "[p0]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p0, p1, descr=nextdescr)\n";
        let fill = "setfield_gc(p1, 5, descr=valuedescr)\n";
        let call = format!("i2 = call_i(123, 1, descr={call})\n");
        (
            format!("{stored}{fill}{call}finish(i2)\n"),
            format!("{stored}{call}{fill}finish(i2)\n"),
        )
    };
    let (before, after) = filled_after("readadescr");
    proved(&before, &after);
    // Wrong twins: a call that reads any field reaches the node through
    // p0.next and sees its value (5 before the move, 0 after); one that
    // reads p0.next sees the node itself there, or not.
    let (before, after) = filled_after("plaincalldescr");
    not_proved_nor_replayed(&before, &after);
    let (before, after) = made_after("mayforcevirtdescr");
    not_proved_nor_replayed(&before, &after);
}

#[test]
fn a_call_may_read_the_cells_it_writes() {
    // PyPy lists a field a call reads and writes among its writes only:
    // a call that writes next fields (and lists no read) may read p0.next,
    // reach the node stored there, and write the node's own next field.
    // The read of it after the call is not the value stored before.
    let stored = |call: &str, last: &str| {
        format!(
            "[p0, p9]\np1 = new_with_vtable(descr=nodesize)\nsetfield_gc(p1, p9, descr=nextdescr)\n\
             setfield_gc(p0, p1, descr=nextdescr)\ni2 = call_i(123, 1, descr={call})\n{last}"
        )
    };
    let read = "p3 = getfield_gc_r(p1, descr=nextdescr)\nfinish(p3)\n";
    not_proved_nor_replayed(
        &stored("writenextdescr", read),
        &stored("writenextdescr", "finish(p9)\n"),
    );
    // A call that writes only adescr reaches nothing through p0.next.
    proved(
        &stored("writeadescr", read),
        &stored("writeadescr", "finish(p9)\n"),
    );
}

#[test]
fn a_call_leaves_alone_the_objects_it_cannot_reach() {
    // p2 sits in the array the call gets only before the call: the call
    // cannot write its field, so the field read after it is still i1.
    let before = |between: &str, passed: &str| {
        format!(
            "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
             p3 = new_array_clear(2, descr=gcarraydescr)\nsetarrayitem_gc(p3, 0, p2, descr=gcarraydescr)\n\
             {between}i9 = call_i(123, {passed}, descr=plaincalldescr)\nguard_no_exception()\n\
             i5 = getfield_gc_i(p2, descr=valuedescr)\njump(p0, i5)\n"
        )
    };
    let cleared = "setarrayitem_gc(p3, 0, NULL, descr=gcarraydescr)\n";
    // The optimized trace never makes p2 at all.
    let after = |between: &str, passed: &str| {
        format!(
            "[p0, i1]\np3 = new_array_clear(2, descr=gcarraydescr)\n{between}\
             i9 = call_i(123, {passed}, descr=plaincalldescr)\nguard_no_exception()\njump(p0, i1)\n"
        )
    };
    proved(&before(cleared, "p3"), &after("", "p3"));
    // Wrong twins: the call can reach p2 (still in the array, or read
    // back from it and passed), so it may have changed the field.
    let kept = "";
    not_proved_nor_replayed(&before(kept, "p3"), &after(kept, "p3"));
    let read_back = format!("p5 = getarrayitem_gc_r(p3, 0, descr=gcarraydescr)\n{cleared}");
    let forced =
        "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        p3 = new_array_clear(2, descr=gcarraydescr)\ni9 = call_i(123, p2, descr=plaincalldescr)\n\
        guard_no_exception()\n";
    proved(
        &before(&read_back, "p5"),
        &format!("{forced}i5 = getfield_gc_i(p2, descr=valuedescr)\njump(p0, i5)\n"),
    );
    not_proved_nor_replayed(
        &before(&read_back, "p5"),
        &format!("{forced}jump(p0, i1)\n"),
    );
}

#[test]
fn a_call_cannot_store_an_object_it_cannot_name() {
    // sieve.log:1318 in short: the node moves past a call that may write
    // p0's next field. The call can store no node it cannot reach (p2,
    // private at the call, or not made yet in AFTER), so what the guard
    // sees after the call is the same in both traces.
    let moved = "[p0, p1]\np2 = new_with_vtable(descr=nodesize)\n\
        call_n(123, p1, descr=plaincalldescr)\np3 = getfield_gc_r(p0, descr=nextdescr)\n\
        guard_class(p3, ConstClass(node_vtable2)) []\njump(p2)\n";
    proved(
        moved,
        "[p0, p1]\ncall_n(123, p1, descr=plaincalldescr)\n\
         p3 = getfield_gc_r(p0, descr=nextdescr)\nguard_class(p3, ConstClass(node_vtable2)) []\n\
         p2 = new_with_vtable(descr=nodesize)\njump(p2)\n",
    );
    let compared = |passed: &str| {
        format!(
            "[p0, p1]\np2 = new_with_vtable(descr=nodesize)\n\
             call_n(123, {passed}, descr=plaincalldescr)\n\
             p3 = getfield_gc_r(p0, descr=nextdescr)\ni4 = ptr_eq(p3, p2)\nfinish(i4)\n"
        )
    };
    let unequal = |passed: &str| {
        format!(
            "[p0, p1]\np2 = new_with_vtable(descr=nodesize)\n\
             call_n(123, {passed}, descr=plaincalldescr)\nfinish(0)\n"
        )
    };
    proved(&compared("p1"), &unequal("p1"));
    // Wrong twin: passed to the call, p2 may be what it stores.
    not_proved_nor_replayed(&compared("p2"), &unequal("p2"));
}

#[test]
fn a_pending_write_is_made_where_the_guard_fails() {
    // BEFORE stores a new node into p0 before the guard and takes it out
    // after; AFTER keeps the node virtual, the store pending in the guard.
    let before = "[p0, i1, i2]\np3 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p3, i1, descr=valuedescr)\nsetfield_gc(p0, p3, descr=nextdescr)\n\
        guard_true(i2) [i1]\nsetfield_gc(p0, NULL, descr=nextdescr)\nfinish(i1)\n";
    let after = |resume: &str| {
        format!(
            "[p0, i1, i2]\nguard_true(i2) [i1]{resume}\n\
             setfield_gc(p0, NULL, descr=nextdescr)\nfinish(i1)\n"
        )
    };
    let node = " where p3 = new_with_vtable(descr=nodesize) {valuedescr=i1}";
    proved(
        before,
        &after(&format!(
            "{node} writes setfield_gc(p0, p3, descr=nextdescr)"
        )),
    );
    // Wrong twins: no write, another value, a node with other contents.
    refuted_with(before, &after(""), "nextdescr differs");
    let null = " writes setfield_gc(p0, NULL, descr=nextdescr)";
    refuted_with(before, &after(null), "nextdescr differs");
    let other = " where p3 = new_with_vtable(descr=nodesize) {valuedescr=5} \
        writes setfield_gc(p0, p3, descr=nextdescr)";
    refuted_with(before, &after(other), "valuedescr differs");
}

#[test]
fn a_pending_write_hides_what_it_overwrites() {
    // BEFORE stores node p3 into p0, then node p4 over it, and fails the
    // guard with p3 out of reach. AFTER keeps p4 virtual, its store
    // pending in the guard: the resumed interpreter finds p4 there, not
    // p3, so p3's contents (which AFTER wrote differently) are not seen.
    let before = |also: &str, undo: &str| {
        format!(
            "[p0, p5, i1, i2]\np3 = new_with_vtable(descr=nodesize)\n\
             setfield_gc(p3, i1, descr=valuedescr)\nsetfield_gc(p0, p3, descr=nextdescr)\n{also}\
             p4 = new_with_vtable(descr=nodesize)\nsetfield_gc(p4, 7, descr=valuedescr)\n\
             setfield_gc(p0, p4, descr=nextdescr)\nguard_true(i2) [i1]\n{undo}\
             setfield_gc(p0, NULL, descr=nextdescr)\nfinish(i1)\n"
        )
    };
    let after = |also: &str, undo: &str| {
        format!(
            "[p0, p5, i1, i2]\np3 = new_with_vtable(descr=nodesize)\n\
             setfield_gc(p3, 5, descr=valuedescr)\nsetfield_gc(p0, p3, descr=nextdescr)\n{also}\
             guard_true(i2) [i1] where p4 = new_with_vtable(descr=nodesize) {{valuedescr=7}} \
             writes setfield_gc(p0, p4, descr=nextdescr)\n{undo}\
             setfield_gc(p0, NULL, descr=nextdescr)\nfinish(i1)\n"
        )
    };
    proved(&before("", ""), &after("", ""));
    // Wrong twin: p3 is also in p5 until the guard, which the pending
    // write leaves (where p5 is not p0): at the guard p3 is in sight, and
    // holds i1 in BEFORE, 5 in AFTER (at the end it is out of reach).
    let (kept, undo) = (
        "setfield_gc(p5, p3, descr=nextdescr)\n",
        "setfield_gc(p5, NULL, descr=nextdescr)\n",
    );
    not_proved(&before(kept, undo), &after(kept, undo));
}

#[test]
fn guards_with_other_conditions_still_resume_alike() {
    // End to end, guards pair by condition; a guard written another way
    // (or moved, or merged) pairs with none, and its resume data must
    // still be what BEFORE's failing guard resumes with.
    let before = "[i0, i1]\nguard_true(i0) [i1]\njump(i0, i1)\n";
    proved(
        before,
        "[i0, i1]\ni2 = int_is_zero(i0)\nguard_false(i2) [i1]\njump(i0, i1)\n",
    );
    not_proved(
        before,
        "[i0, i1]\ni2 = int_is_zero(i0)\nguard_false(i2) [i0]\njump(i0, i1)\n",
    );
    // A class check merged into an earlier guard_nonnull, resuming with
    // the later guard's state: refuted where p0 is null.
    not_proved(
        "[p0, i0]\nguard_nonnull(p0) [i0]\ni1 = int_add(i0, 1)\n\
         guard_class(p0, ConstClass(node_vtable)) [i1]\njump(p0, i1)\n",
        "[p0, i0]\ni1 = int_add(i0, 1)\n\
         guard_nonnull_class(p0, ConstClass(node_vtable)) [i1]\njump(p0, i1)\n",
    );
    // Failing before a write that BEFORE does before it fails: the heap
    // it resumes with differs.
    not_proved(
        "[p0, p1, i0]\nguard_nonnull(p0) []\nsetfield_gc(p1, i0, descr=valuedescr)\n\
         guard_class(p0, ConstClass(node_vtable)) []\njump(p0, i0)\n",
        "[p0, p1, i0]\nguard_nonnull_class(p0, ConstClass(node_vtable)) []\n\
         setfield_gc(p1, i0, descr=valuedescr)\njump(p0, i0)\n",
    );
}

#[test]
fn an_array_fails_a_class_test() {
    // A class test reads the object's type: an array is of no class and
    // fails it (PyPy's backend compares type ids), so the test may not
    // go. Were the test undefined on arrays, as it once was here, any
    // AFTER would do where the input is one, and this would be proved.
    // The replay builds the object of the kind the model gives it (the
    // class cell read of an array is no cell of it), so the refutation
    // is replayed; built by the cells read, it was two kinds at once.
    let before = "[p0]\ni1 = arraylen_gc(p0, descr=arraydescr)\n\
                  guard_class(p0, ConstClass(node_vtable)) []\nfinish(i1)\n";
    let after = "[p0]\ni1 = arraylen_gc(p0, descr=arraydescr)\nfinish(i1)\n";
    for before in [
        before.to_string(),
        before.replace("guard_class", "guard_nonnull_class"),
    ] {
        let v = verdict(&before, after);
        assert!(matches!(v, Verdict::Refuted(_)), "{v:?}");
    }
}

#[test]
fn a_call_returns_no_object_its_trace_allocates_later() {
    // A pure call's result read before BEFORE's node is made (AFTER makes
    // it too, later): the call cannot return an object that does not
    // exist yet, so the read is the same in both and the pair is proved.
    let node = "p5 = new_with_vtable(descr=nodesize)\nsetfield_gc(p5, 7, descr=valuedescr)\n";
    let read = "p2 = call_pure_r(123, i0, descr=nonwritedescr)\nguard_nonnull(p2) []\n\
                i3 = getfield_gc_i(p2, descr=valuedescr)\n";
    let before = format!("[i0]\n{node}{read}jump(i3, p5)\n");
    let after = format!("[i0]\n{read}{node}jump(i3, p5)\n");
    proved(&before, &after);
}

#[test]
fn a_size_descr_that_names_no_class_makes_objects_of_any_class() {
    // A log's `<SizeDescr 16>` does not say which class its objects are
    // of (W_IntObject and W_FloatObject are both 16 bytes). Taken to be
    // a class of its own, distinct from every named one, the class test
    // would always fail in BEFORE, and whatever follows it (here a wrong
    // result) would go unchecked and be proved.
    let before = "[i0]\np1 = new_with_vtable(descr=<SizeDescr 16>)\n\
                  guard_class(p1, ConstClass(node_vtable)) []\nfinish(i0)\n";
    let after = "[i0]\np1 = new_with_vtable(descr=<SizeDescr 16>)\n\
                 guard_class(p1, ConstClass(node_vtable)) []\nfinish(1)\n";
    not_proved(before, after);
    // The test may also fail: it cannot go without what the recording
    // saw (see `a_recorded_class_test_on_an_own_allocation_passed`).
    let unguarded = "[i0]\np1 = new_with_vtable(descr=<SizeDescr 16>)\nfinish(i0)\n";
    not_proved(before, unguarded);
}

#[test]
fn each_op_of_a_size_descr_that_names_no_class_makes_a_class_of_its_own() {
    // Two ops of one unnamed size descr may make two classes (an int and
    // a float box are both 16 bytes): taken to make one, the two class
    // tests below could not both pass, and whatever follows them would
    // go unchecked.
    let two = "p1 = new_with_vtable(descr=<SizeDescr 16>)\n\
               p2 = new_with_vtable(descr=<SizeDescr 16>)\n\
               guard_class(p1, ConstClass(node_vtable)) []\n\
               guard_class(p2, ConstClass(node_vtable2)) []\n";
    let before = format!("[i0]\n{two}finish(i0)\n");
    not_proved(&before, &format!("[i0]\n{two}finish(1)\n"));
    // Nor may AFTER test the other object: the classes are the ops'.
    let swapped = two
        .replace(
            "(p1, ConstClass(node_vtable))",
            "(p1, ConstClass(node_vtable2))",
        )
        .replace(
            "(p2, ConstClass(node_vtable2))",
            "(p2, ConstClass(node_vtable))",
        );
    not_proved(&before, &format!("[i0]\n{swapped}finish(i0)\n"));
    // Read alike, the same ops make the same classes: the trace is
    // itself, and a test the other one settles is dropped.
    proved(&before, &before);
    let settled = "[i0]\np1 = new_with_vtable(descr=<SizeDescr 16>)\n\
                   guard_class(p1, ConstClass(node_vtable)) []\n\
                   guard_class(p1, ConstClass(node_vtable)) []\nfinish(i0)\n";
    let once = "[i0]\np1 = new_with_vtable(descr=<SizeDescr 16>)\n\
                guard_class(p1, ConstClass(node_vtable)) []\nfinish(i0)\n";
    proved(settled, once);
}

#[test]
fn a_virtual_named_after_a_vref_is_of_the_vrefs_class() {
    // A log's vref layout names its class by the size descr (`<SizeDescr
    // 24>`): an optimizer that removes a `virtual_ref` describes it as a
    // `new_with_vtable` of that descr, named after it. Of another name,
    // it stands for no vref, and its class is its own.
    let next = "descr=<FieldP Frame.inst_next 8>";
    let before = format!(
        "[p0, i0]\np1 = virtual_ref(p0, 0)\nsetfield_gc(p0, p1, {next})\nguard_true(i0) [p0]\n\
         setfield_gc(p0, NULL, {next})\nvirtual_ref_finish(p1, NULL)\nfinish(i0)\n"
    );
    let after = |name: &str| {
        format!(
            "[p0, i0]\nr11 = force_token()\nguard_true(i0) [p0] where {name} = \
             new_with_vtable(descr=<SizeDescr 24>) {{<FieldP JitVirtualRef.virtual_token 8>=r11}} \
             writes setfield_gc(p0, {name}, {next})\nsetfield_gc(p0, NULL, {next})\nfinish(i0)\n"
        )
    };
    let verdict = |after: &str| {
        let before = traceopt_ir::parse_trace(&before, "before").unwrap();
        let after = traceopt_ir::parse_trace(after, "after").unwrap();
        let mut solver = Solver::start(None, Duration::from_secs(20)).unwrap();
        verify_given(&before, &after, Given::default(), &mut solver).unwrap()
    };
    assert_eq!(verdict(&after("p1")), Verdict::Proved);
    let other = verdict(&after("p9"));
    assert!(matches!(other, Verdict::Refuted(_)), "{other:?}");
}

#[test]
fn a_log_may_name_one_object_twice() {
    // PyPy recorded `p1 = same_as_r(ConstPtr(ptr49))` then a passing
    // `guard_value(p1, ConstPtr(ptr71))`: a log's names of constant
    // objects are not each another object. Taken to be, the guard would
    // always fail and a wrong result after it would be proved.
    let text = |result: i64| {
        format!(
            "[i0]\np1 = same_as_r(ConstPtr(ptr49))\nguard_value(p1, ConstPtr(ptr71)) []\n\
             finish({result})\n"
        )
    };
    let before = traceopt_ir::parse_trace(&text(0), "before").unwrap();
    let after = traceopt_ir::parse_trace(&text(1), "after").unwrap();
    let mut solver = traceopt_smt::Solver::start(None, Duration::from_secs(20)).unwrap();
    let verdict = traceopt_verify::verify(&before, &after, &mut solver).unwrap();
    assert!(matches!(verdict, Verdict::Refuted(_)), "{verdict:?}");
}

#[test]
fn a_thread_local_typed_as_an_instance_has_fields() {
    // PyPy's thread-local read of a `Ptr(GcStruct object)` (the
    // execution context) gives an instance or null: a field read of it,
    // not null, may move before a guard. A helper of another type gives
    // no such thing, and the moved read is less defined.
    let text = |helper: &str, moved: bool| {
        let read = "i2 = getfield_gc_i(p1, descr=<FieldS ExecutionContext.inst_x 8 pure>)\n";
        let (early, late) = if moved { (read, "") } else { ("", read) };
        format!(
            "[i0]\np1 = call_loopinvariant_r(ConstClass({helper}), 64, \
             descr=<Callr 8 i EF=1 OS=5>)\nguard_nonnull(p1) []\n{early}\
             guard_true(i0) []\n{late}finish(i2)\n"
        )
    };
    let verdict_for = |helper: &str| {
        let before = traceopt_ir::parse_trace(&text(helper, false), "before").unwrap();
        let after = traceopt_ir::parse_trace(&text(helper, true), "after").unwrap();
        let mut solver = traceopt_smt::Solver::start(None, Duration::from_secs(20)).unwrap();
        traceopt_verify::verify(&before, &after, &mut solver).unwrap()
    };
    let context = "_ll_1_threadlocalref_get__Ptr_GcStruct_objectLlT_Signed";
    assert_eq!(verdict_for(context), Verdict::Proved);
    let other = verdict_for("_ll_1_threadlocalref_get__Ptr_GcArray_SignedLlT_Signed");
    assert!(!matches!(other, Verdict::Proved), "{other:?}");
}

/// The verdict on `after`, against `before` as a trace PyPy recorded (its
/// ops all ran) or not.
fn verdict_recorded(before: &str, after: &str, recorded: bool) -> Verdict {
    let mut before = traceopt_ir::parse_trace(before, "before").unwrap();
    if recorded {
        before.recorded = 0..before.ops.len();
    }
    let after = traceopt_ir::parse_trace(after, "after").unwrap();
    let mut solver = traceopt_smt::Solver::start(None, Duration::from_secs(20)).unwrap();
    traceopt_verify::verify(&before, &after, &mut solver).unwrap()
}

#[test]
fn a_recording_shows_its_constants_to_be_structs_not_what_its_fields_hold() {
    // The recording read a field of ConstPtr(ptr1): a constant stays the
    // object it is, so that read may move before a guard. Of a trace not
    // recorded, nothing is known, and the moved read is less defined. Nor
    // does a read of what field `next` held show what the field holds in
    // another run: PyPy erases the types of some fields (mapdict's
    // `_value0` holds an instance in one object, an array in another).
    let constant = "i1 = getfield_gc_i(ConstPtr(ptr1), descr=<FieldS A.inst_x 8 pure>)\n";
    let contents = "i1 = getfield_gc_i(p2, descr=<FieldS B.inst_y 8 pure>)\n";
    for read in [constant, contents] {
        let text = |moved: bool| {
            let (early, late) = if moved { (read, "") } else { ("", read) };
            format!(
                "[p0, i0]\np2 = getfield_gc_r(p0, descr=<FieldP A.inst_next 16>)\n\
                 guard_nonnull(p2) []\n{early}guard_true(i0) []\n{late}finish(i1)\n"
            )
        };
        let (before, after) = (text(false), text(true));
        let recorded = verdict_recorded(&before, &after, true);
        let proved = recorded == Verdict::Proved;
        assert_eq!(proved, read == constant, "{after}\n{recorded:?}");
        let unknown = verdict_recorded(&before, &after, false);
        assert!(!matches!(unknown, Verdict::Proved), "{after}\n{unknown:?}");
    }
}

/// The verdict on `after` with its provenance (which op of `before` each
/// of its ops stands for).
fn verdict_with_provenance(before: &str, after: &str, provenance: &[Option<usize>]) -> Verdict {
    let ns = Some(namespace());
    let before = parse_trace_with(before, "before", ns.clone()).unwrap();
    let after = parse_trace_with(after, "after", ns).unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(20)).unwrap();
    traceopt_verify::verify_optimized(&before, &after, provenance, &[], &mut solver).unwrap()
}

#[test]
fn a_conditional_call_left_out_is_never_made() {
    // The optimizer knew the condition is 0 (the guard before says so)
    // and left the call out: proved. Where the guard says the condition
    // holds, the call is made and may write the field read after it:
    // leaving it out is not proved.
    let text = |guard: &str, call: bool| {
        let call = if call {
            "cond_call(i0, 123, p0, descr=plaincalldescr)\n"
        } else {
            ""
        };
        format!(
            "[i0, p0]\n{guard}(i0) []\n{call}i2 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i2)\n"
        )
    };
    let provenance = [Some(0), Some(2), Some(3)];
    let never = verdict_with_provenance(
        &text("guard_false", true),
        &text("guard_false", false),
        &provenance,
    );
    assert_eq!(never, Verdict::Proved);
    let made = verdict_with_provenance(
        &text("guard_true", true),
        &text("guard_true", false),
        &provenance,
    );
    assert!(!matches!(made, Verdict::Proved), "{made:?}");
    // An AFTER that fails a guard of the same condition in the call's
    // place (resuming with nothing) is not BEFORE, which makes the call:
    // the guard standing for the claim pairs with no guard of AFTER.
    let before = "[i0, p0]\ncond_call(i0, 123, p0, descr=plaincalldescr)\n\
        i2 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i2)\n";
    let after =
        "[i0, p0]\nguard_false(i0) []\ni2 = getfield_gc_i(p0, descr=valuedescr)\nfinish(i2)\n";
    let exits = verdict_with_provenance(before, after, &[None, Some(1), Some(2)]);
    assert!(!matches!(exits, Verdict::Proved), "{exits:?}");
}

/// `n` objects, each stored into an object read from an input (which may
/// be any object, one of the others included), each followed by a call
/// that may reach what is reachable; BEFORE computes its result once
/// more than AFTER.
fn stored_into_unknown_owners(n: usize) -> (String, String) {
    let mut body = String::from("[p0, i0]\n");
    for k in 0..n {
        let (object, owner, result) = (3 * k + 1, 3 * k + 2, 3 * k + 3);
        body += &format!(
            "p{object} = new_with_vtable(descr=nodesize)\n\
             p{owner} = getfield_gc_r(p0, descr=nextdescr)\n\
             setfield_gc(p{owner}, p{object}, descr=nextdescr)\n\
             i{result} = call_i(123, i0, descr=plaincalldescr)\n\
             guard_no_exception() []\n"
        );
    }
    let last = 3 * n;
    let before = format!(
        "{body}i{} = int_add(i{last}, 0)\nfinish(i{})\n",
        last + 1,
        last + 1
    );
    (before, format!("{body}finish(i{last})\n"))
}

#[test]
fn objects_stored_into_owners_that_may_be_any_object_are_encoded_in_square_size() {
    // Where each owner may be any object, an object is reached through
    // a chain of up to n stores: n rounds, each deciding n objects. The
    // objects one of ours may be are one term a round; spelled out in
    // each store instead (n terms in each of n^2), the 32 objects here
    // give the solver 68 MB (15 MB as one term); with each heap a call
    // reads spelled out in each of them too, 256 MB; a 2,000-op trace of
    // the corpus ran out of 24 GB.
    let (before, after) = stored_into_unknown_owners(32);
    let ns = Some(namespace());
    let before = parse_trace_with(&before, "before", ns.clone()).unwrap();
    let after = parse_trace_with(&after, "after", ns).unwrap();
    let dir = std::env::temp_dir().join(format!("traceopt-verify-reach-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut solver = Solver::start(None, Duration::from_secs(20)).unwrap();
    solver.dump_to(&dir).unwrap();
    let verdict = verify_given(&before, &after, Given::default(), &mut solver).unwrap();
    assert_eq!(verdict, Verdict::Proved);
    let bytes: u64 = (std::fs::read_dir(&dir).unwrap())
        .map(|entry| entry.unwrap().metadata().unwrap().len())
        .sum();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        bytes < 30_000_000,
        "the queries of 32 objects stored into unknown owners take {bytes} bytes"
    );
}

/// A loop's two virtual refs, the first finished at once: the optimizer
/// drops it and builds the second as a plain object, which a call may see
/// through `p0.next`. Paired in order, AFTER's object would stand for
/// BEFORE's first ref, and the call's writes to one for writes to the
/// other (a counterexample the interpreter does not replay). End to end,
/// the optimizer's provenance pairs them, as it does guard by guard.
#[test]
fn end_to_end_the_optimizers_provenance_pairs_the_allocations() {
    let before = "[p0]\n\
        p1 = new_with_vtable(descr=nodesize)\n\
        p2 = virtual_ref(p1, 0)\n\
        virtual_ref_finish(p2, NULL)\n\
        p3 = new_with_vtable(descr=nodesize)\n\
        p4 = virtual_ref(p3, 0)\n\
        setfield_gc(p0, p4, descr=nextdescr)\n\
        call_n(1, p3, descr=plaincalldescr)\n\
        setfield_gc(p0, NULL, descr=nextdescr)\n\
        virtual_ref_finish(p4, NULL)\n\
        jump(p0, p3)\n";
    let after = "[p0]\n\
        p5 = force_token()\n\
        p4 = new_with_vtable(descr=vref_descr)\n\
        setfield_gc(p4, p5, descr=virtualtokendescr)\n\
        setfield_gc(p4, NULL, descr=virtualforceddescr)\n\
        setfield_gc(p0, p4, descr=nextdescr)\n\
        p3 = new_with_vtable(descr=nodesize)\n\
        call_n(1, p3, descr=plaincalldescr)\n\
        setfield_gc(p0, NULL, descr=nextdescr)\n\
        setfield_gc(p4, NULL, descr=virtualtokendescr)\n\
        jump(p0, p3)\n";
    let ns = Some(namespace());
    let verdict = |after: &str, provenance: &[Option<usize>]| {
        let before = parse_trace_with(before, "before", ns.clone()).unwrap();
        let after = parse_trace_with(after, "after", ns.clone()).unwrap();
        let mut solver = Solver::start(None, Duration::from_secs(20)).unwrap();
        let given = Given {
            provenance: Some(provenance),
            ..Given::default()
        };
        verify_given(&before, &after, given, &mut solver).unwrap()
    };
    // AFTER's op k stands for BEFORE's op provenance[k].
    let provenance = [4, 4, 4, 4, 5, 3, 6, 7, 8, 9].map(Some);
    assert_eq!(verdict(after, &provenance), Verdict::Proved);
    // A provenance that names the dropped ref proves nothing.
    let wrong = [1, 1, 1, 1, 5, 3, 6, 7, 8, 9].map(Some);
    assert!(matches!(verdict(after, &wrong), Verdict::Unreplayed(_)));
    // A wrong twin, p0.next left pointing at the ref, is refuted.
    let kept = after.replace("setfield_gc(p0, NULL, descr=nextdescr)\n", "");
    let provenance = [4, 4, 4, 4, 5, 3, 6, 8, 9].map(Some);
    assert!(matches!(verdict(&kept, &provenance), Verdict::Refuted(_)));
}

#[test]
fn a_read_after_calls_that_hide_fresh_objects_is_a_term_not_an_array_question() {
    // Each call that writes `nextdescr` leaves it as a `lambda` that keeps
    // what the call cannot see (BEFORE's box, which AFTER leaves out).
    // Built over the previous call's `lambda`, the read of p0.next after
    // three calls was a question about arrays the solver must expand (a
    // `lambda` within a `lambda`, which `Term::read` did not reduce): on
    // stack_vm.log:6063 the class guard of an object read so, after three
    // calls, timed out where BEFORE's class array holds fresh boxes. Read
    // through, the calls make one flat `lambda` and a read is a term.
    let before = "[p0, i0]\np1 = new_with_vtable(descr=<SizeDescr 16>)\n\
                  i11 = call_i(123, i0, descr=plaincalldescr)\nguard_no_exception() []\n\
                  i12 = call_i(123, i0, descr=plaincalldescr)\nguard_no_exception() []\n\
                  i13 = call_i(123, i0, descr=plaincalldescr)\nguard_no_exception() []\n\
                  p5 = getfield_gc_r(p0, descr=nextdescr)\n\
                  p6 = getfield_gc_r(p5, descr=nextdescr)\n\
                  guard_class(p6, ConstClass(node_vtable)) []\nfinish(p6)\n";
    let after = before.replace("p1 = new_with_vtable(descr=<SizeDescr 16>)\n", "");
    let dir = std::env::temp_dir().join(format!("traceopt-flat-sight-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ns = Some(namespace());
    let parse = |text: &str, name| parse_trace_with(text, name, ns.clone()).unwrap();
    let mut solver = Solver::start(None, Duration::from_secs(20)).unwrap();
    solver.dump_to(&dir).unwrap();
    let verdict = verify_given(
        &parse(before, "before"),
        &parse(&after, "after"),
        Given::default(),
        &mut solver,
    )
    .unwrap();
    assert_eq!(verdict, Verdict::Proved);
    // No query leaves a read of a `lambda` to the solver.
    let mut queries = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        queries += 1;
        assert!(!text.contains("(select (lambda"), "{text}");
    }
    assert!(queries > 0);
    let _ = std::fs::remove_dir_all(&dir);
    // Wrong twins are still refuted: a class test of p0.next instead of
    // p0.next.next, and p0.next read before the calls that may write it.
    let tests_p5 = after.replace("guard_class(p6,", "guard_class(p5,");
    not_proved(before, &tests_p5);
    let moved = after
        .replace("p5 = getfield_gc_r(p0, descr=nextdescr)\n", "")
        .replace(
            "[p0, i0]\n",
            "[p0, i0]\np5 = getfield_gc_r(p0, descr=nextdescr)\n",
        );
    not_proved(before, &moved);
}

#[test]
fn forcing_a_vref_just_finished_reads_it_and_calls_nothing() {
    // `jit_force_virtual` right after `virtual_ref_finish` returns the
    // object finished with: no call (so none of the exception an earlier
    // call may have left is pending after it), nothing forced.
    let vref = "p2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        p3 = virtual_ref(p2, 0)\n";
    let force = "p4 = call_may_force_r(123, p3, descr=<Callr 8 r EF=6 OS=120>)\n\
        guard_not_forced() []\nguard_no_exception() []\n\
        i5 = getfield_gc_i(p4, descr=valuedescr)\nfinish(i5)\n";
    let raising = "call_n(456, p0, descr=writenextdescr)\n";
    let before = format!("[p0, i1]\n{raising}{vref}virtual_ref_finish(p3, p2)\n{force}");
    proved(&before, &format!("[p0, i1]\n{raising}finish(i1)\n"));
    // Forcing a vref that holds nothing (finished with null) is
    // RPython's InvalidVirtualRef, a fatal error: undefined, so the
    // object it gives may be taken not to be null.
    let maybe_null = "[p0, i1]\np3 = virtual_ref(p0, 0)\nvirtual_ref_finish(p3, p0)\n\
        p4 = call_may_force_r(123, p3, descr=<Callr 8 r EF=6 OS=120>)\n\
        guard_not_forced() []\nguard_no_exception() []\ni5 = ptr_ne(p4, NULL)\nfinish(i5)\n";
    proved(maybe_null, "[p0, i1]\nfinish(1)\n");
    // Not the vref itself.
    not_proved(
        &before,
        &format!("[p0, i1]\n{raising}{vref}i5 = getfield_gc_i(p3, descr=valuedescr)\nfinish(i5)\n"),
    );
    // Not finished (its token is the frame's), or not just before: the
    // call may force the frame, return anything, raise.
    for (gap, kept) in [
        ("", ""),
        (
            "virtual_ref_finish(p3, p2)\nescape_n(p0)\n",
            "escape_n(p0)\n",
        ),
    ] {
        let before = format!("[p0, i1]\n{vref}{gap}{force}");
        not_proved_nor_replayed(&before, &format!("[p0, i1]\n{kept}finish(i1)\n"));
    }
}
