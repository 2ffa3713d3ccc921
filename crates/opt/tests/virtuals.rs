//! Allocation removal: each output is compared with the expected text and
//! proved equivalent to its input guard by guard; a wrong twin of each
//! expected output (a resume value, a forced write or a folded read
//! changed) is refuted, and with the pass switched off the allocations
//! stay. Descr names are those of the peer set's namespace.

mod common;

use common::{
    optimizes_with, parse, proved_output, twin_not_proved, twin_refuted, without_virtuals,
};
use traceopt_ir::print_trace;
use traceopt_opt::{optimize, Passes};

#[test]
fn an_object_that_never_escapes_is_never_allocated() {
    // Its reads are what was written, or zero where nothing was; it is
    // not null (a guard or an assertion of it is void), has its class,
    // and is no other object. A marker of its fields is void too.
    let before = "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\nassert_not_none(p2)\n\
        quasiimmut_field(p2, descr=valuedescr)\n\
        setfield_gc(p2, i1, descr=valuedescr)\ni3 = getfield_gc_i(p2, descr=valuedescr)\n\
        p4 = getfield_gc_r(p2, descr=nextdescr)\ni5 = ptr_eq(p4, NULL)\n\
        guard_nonnull_class(p2, ConstClass(node_vtable)) []\ni6 = ptr_eq(p2, p0)\n\
        p7 = new_array_clear(3, descr=arraydescr)\nsetarrayitem_gc(p7, 2, i3, descr=arraydescr)\n\
        i8 = getarrayitem_gc_i(p7, 2, descr=arraydescr)\ni9 = getarrayitem_gc_i(p7, 0, descr=arraydescr)\n\
        i10 = arraylen_gc(p7, descr=arraydescr)\njump(i3, i5, i6, i8, i9, i10)\n";
    let after = "[p0, i1]\njump(i1, 1, 0, i1, 0, 3)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "i1, 1, 0, i1, 0, 3", "i1, 1, 0, i1, 0, 2");
    // Switched off, the objects are allocated.
    let input = parse(before);
    let kept = optimize(&input, without_virtuals()).unwrap();
    assert!(print_trace(&kept.trace).contains("new_with_vtable"));
}

#[test]
fn a_guard_describes_the_virtuals_it_would_need() {
    // Shared, nested and cyclic objects go into the guard's resume data;
    // the allocation is never done on the path that passes.
    let before = "[i0, i1]\np2 = new_with_vtable(descr=nodesize)\n\
        p3 = new_array_clear(3, descr=gcarraydescr)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        setfield_gc(p2, p2, descr=nextdescr)\nsetarrayitem_gc(p3, 1, p2, descr=gcarraydescr)\n\
        guard_true(i0) [p3, i1, p2]\ni4 = arraylen_gc(p3, descr=gcarraydescr)\njump(i4)\n";
    let after = "[i0, i1]\nguard_true(i0) [p3, i1, p2] where \
        p3 = new_array_clear(descr=gcarraydescr) [None, p2, None], \
        p2 = new_with_vtable(descr=nodesize) {valuedescr=i1, nextdescr=p2}\njump(3)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "{valuedescr=i1", "{valuedescr=i0");
    twin_refuted(before, after, ", nextdescr=p2}", "}");
    twin_refuted(before, after, "[None, p2, None]", "[p2, None, None]");
}

#[test]
fn an_escaping_object_is_built_just_before_its_use() {
    // Stored into an object that exists, it is forced there: allocated,
    // its fields written, the objects it holds forced first (a cycle
    // closes on the object being built). Reads of it then come from the
    // heap cache.
    let before = "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\n\
        p3 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        setfield_gc(p2, p3, descr=nextdescr)\nsetfield_gc(p3, p2, descr=nextdescr)\n\
        i4 = getfield_gc_i(p0, descr=valuedescr)\nsetfield_gc(p0, p2, descr=nextdescr)\n\
        i5 = getfield_gc_i(p2, descr=valuedescr)\njump(i4, i5)\n";
    let after = "[p0, i1]\ni4 = getfield_gc_i(p0, descr=valuedescr)\n\
        p2 = new_with_vtable(descr=nodesize)\nsetfield_gc(p2, i1, descr=valuedescr)\n\
        p3 = new_with_vtable(descr=nodesize)\nsetfield_gc(p3, p2, descr=nextdescr)\n\
        setfield_gc(p2, p3, descr=nextdescr)\nsetfield_gc(p0, p2, descr=nextdescr)\n\
        jump(i4, i1)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "setfield_gc(p3, p2, descr=nextdescr)\n", "");
    twin_refuted(before, after, "setfield_gc(p2, i1,", "setfield_gc(p2, i4,");
}

#[test]
fn a_call_and_the_loop_end_force_their_virtual_arguments() {
    let before = "[i0]\np1 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p1, i0, descr=valuedescr)\ncall_n(123, p1, descr=plaincalldescr)\n\
        p2 = new_array(2, descr=arraydescr)\nsetarrayitem_gc(p2, 0, i0, descr=arraydescr)\n\
        jump(p1, p2)\n";
    let after = "[i0]\np1 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p1, i0, descr=valuedescr)\ncall_n(123, p1, descr=plaincalldescr)\n\
        p2 = new_array(2, descr=arraydescr)\nsetarrayitem_gc(p2, 0, i0, descr=arraydescr)\n\
        jump(p1, p2)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(
        before,
        after,
        "setarrayitem_gc(p2, 0,",
        "setarrayitem_gc(p2, 1,",
    );
}

#[test]
fn a_virtual_ref_holds_the_force_token_and_leaves_its_frame_virtual() {
    // PyPy's meaning: the vref object holds the frame's force token, not
    // the frame, so the frame stays virtual; virtual_ref_finish clears
    // the token.
    let before = "[i0]\np1 = new_with_vtable(descr=nodesize)\np2 = virtual_ref(p1, 0)\n\
        guard_true(i0) [p2]\nvirtual_ref_finish(p2, NULL)\njump(i0)\n";
    let after = "[i0]\nr7 = force_token()\nguard_true(i0) [p2] where \
        p2 = new_with_vtable(descr=vref_descr) {virtualtokendescr=r7}\njump(i0)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "{virtualtokendescr=r7}", "{}");
    // Escaped, the vref is built (its token written); the frame is built
    // where virtual_ref_finish stores it. The output keeps the input's
    // namespace, so the vref's fields are the same cells in both.
    let before = "[i1]\np1 = new_with_vtable(descr=nodesize)\np2 = virtual_ref(p1, 7)\n\
        escape_n(p2)\nvirtual_ref_finish(p2, p1)\ncall_may_force_n(i1, descr=mayforcevirtdescr)\n\
        guard_not_forced() []\njump(i1)\n";
    let after = "[i1]\nr9 = force_token()\np2 = new_with_vtable(descr=vref_descr)\n\
        setfield_gc(p2, r9, descr=virtualtokendescr)\nescape_n(p2)\n\
        p1 = new_with_vtable(descr=nodesize)\nvirtual_ref_finish(p2, p1)\n\
        call_may_force_n(i1, descr=mayforcevirtdescr)\nguard_not_forced() []\njump(i1)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "virtual_ref_finish(p2, p1)\n", "");
}

#[test]
fn a_virtual_ref_finished_with_a_frame_that_may_be_null_stays_virtual() {
    // Its forced field still holds null: storing the frame, null or
    // not, is what virtual_ref_finish does.
    let before = "[p0, i0]\np2 = virtual_ref(p0, 0)\nvirtual_ref_finish(p2, p0)\n\
        guard_true(i0) [p2]\njump(i0)\n";
    let after = "[p0, i0]\nguard_true(i0) [p2] where p2 = new_with_vtable(descr=vref_descr) \
        {virtualtokendescr=NULL, virtualforceddescr=p0}\njump(i0)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, ", virtualforceddescr=p0", "");
    // Once it holds an object, a frame that may be null may not replace
    // it (a null one leaves it), so the vref is built.
    let before = "[p0, p1, i0]\nguard_nonnull(p1) []\np2 = virtual_ref(p0, 0)\n\
        virtual_ref_finish(p2, p1)\nvirtual_ref_finish(p2, p0)\nguard_true(i0) [p2]\njump(i0)\n";
    let after = "[p0, p1, i0]\nguard_nonnull(p1) []\np2 = new_with_vtable(descr=vref_descr)\n\
        setfield_gc(p2, p1, descr=virtualforceddescr)\nvirtual_ref_finish(p2, p0)\n\
        guard_true(i0) [p2]\njump(i0)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(
        before,
        after,
        "p2 = new_with_vtable(descr=vref_descr)\n\
        setfield_gc(p2, p1, descr=virtualforceddescr)\nvirtual_ref_finish(p2, p0)\n\
        guard_true(i0) [p2]\n",
        "guard_true(i0) [p2] where p2 = new_with_vtable(descr=vref_descr) \
        {virtualtokendescr=NULL, virtualforceddescr=p0}\n",
    );
}

#[test]
fn an_array_copy_between_virtual_arrays_moves_the_items() {
    // PyPy's list growth: a new array, the old items copied in. Nothing
    // is called; what escapes is allocated with the moved items.
    let before = "[i0, i1, p9]\np1 = new_array(2, descr=arraydescr)\n\
        setarrayitem_gc(p1, 0, i0, descr=arraydescr)\nsetarrayitem_gc(p1, 1, i1, descr=arraydescr)\n\
        p2 = new_array_clear(3, descr=arraydescr)\ncall_n(0, p1, p2, 0, 1, 2, descr=arraycopydescr)\n\
        i2 = getarrayitem_gc_i(p2, 2, descr=arraydescr)\nsetfield_gc(p9, p2, descr=nextdescr)\n\
        finish(i2)\n";
    let after = "[i0, i1, p9]\np2 = new_array_clear(3, descr=arraydescr)\n\
        setarrayitem_gc(p2, 1, i0, descr=arraydescr)\nsetarrayitem_gc(p2, 2, i1, descr=arraydescr)\n\
        setfield_gc(p9, p2, descr=nextdescr)\nfinish(i1)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "p2, 1, i0", "p2, 0, i0");
    twin_refuted(before, after, "finish(i1)", "finish(i0)");
    // A copy of nothing is none.
    let nothing = "[p0, p1]\ncall_n(0, p0, p1, 0, 0, 0, descr=arraycopydescr)\nfinish()\n";
    optimizes_with(Passes::default(), nothing, "[p0, p1]\nfinish()\n");
    // A copy out of bounds, or of an array that exists, is made.
    for (from, to) in [("0, 1, 2", "0, 2, 2"), ("p1, p2", "p9, p2")] {
        let input = parse(&before.replace(from, to));
        let output = optimize(&input, Passes::default()).unwrap();
        assert!(
            print_trace(&output.trace).contains("call_n"),
            "{from} -> {to}"
        );
    }
}

#[test]
fn strings_of_constant_length_are_virtual_until_they_escape() {
    // Characters written, copied from a constant or read back, and the
    // length: no string is made.
    let before = "[i0]\np1 = newstr(3)\nstrsetitem(p1, 0, i0)\n\
        copystrcontent(s\"xy\", p1, 0, 1, 2)\ni1 = strgetitem(p1, 0)\ni2 = strgetitem(p1, 2)\n\
        i3 = strlen(p1)\nescape_n(i1, i2, i3)\nfinish()\n";
    let after = "[i0]\nescape_n(i0, 121, 3)\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "i0, 121, 3", "i0, 120, 3");
    // One that escapes is made with its characters just before; a guard
    // that holds one has it made first (resume data holds objects).
    let before = "[i0, i9]\np1 = newunicode(2)\nunicodesetitem(p1, 1, i0)\n\
        guard_true(i9) [p1]\nescape_n(p1)\nfinish()\n";
    let after = "[i0, i9]\np1 = newunicode(2)\nunicodesetitem(p1, 1, i0)\n\
        guard_true(i9) [p1]\nescape_n(p1)\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(
        before,
        after,
        "unicodesetitem(p1, 1, i0)",
        "unicodesetitem(p1, 0, i0)",
    );
}

#[test]
fn string_helpers_on_virtual_strings_are_done_by_the_optimizer() {
    // A concatenation and a slice of strings whose characters are known
    // are new virtual strings; an equality of one character is an int_eq,
    // of different lengths 0, with null 0.
    let before = "[i0, i1]\np0 = newstr(1)\nstrsetitem(p0, 0, i0)\np1 = newstr(1)\n\
        strsetitem(p1, 0, i1)\np2 = call_r(0, p0, p1, descr=strconcatdescr)\n\
        p3 = call_r(0, p2, 1, 2, descr=strslicedescr)\ni2 = strgetitem(p3, 0)\n\
        i3 = call_i(0, p3, s\"x\", descr=strequaldescr)\ni4 = call_i(0, p2, p0, descr=strequaldescr)\n\
        i5 = call_i(0, NULL, p0, descr=strequaldescr)\nescape_n(i2, i3, i4, i5)\nfinish()\n";
    let after = "[i0, i1]\ni3 = int_eq(i1, 120)\nescape_n(i1, i3, 0, 0)\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "int_eq(i1, 120)", "int_eq(i0, 120)");
    // A string the optimizer does not know is compared by the helper.
    let unknown = "[p0]\ni0 = call_i(0, p0, s\"x\", descr=strequaldescr)\nfinish(i0)\n";
    optimizes_with(Passes::default(), unknown, unknown);
}

#[test]
fn strings_built_alike_are_equal() {
    // The same characters, written one by one or concatenated: equal.
    let before = "[i0, i1]\np0 = newstr(2)\nstrsetitem(p0, 0, i0)\nstrsetitem(p0, 1, i1)\n\
        p1 = newstr(1)\nstrsetitem(p1, 0, i0)\np2 = newstr(1)\nstrsetitem(p2, 0, i1)\n\
        p3 = call_r(0, p1, p2, descr=strconcatdescr)\ni4 = call_i(0, p0, p3, descr=strequaldescr)\n\
        finish(i4)\n";
    let after = "[i0, i1]\nfinish(1)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "finish(1)", "finish(0)");
}

#[test]
fn characters_of_a_virtual_string_copied_into_a_real_one_are_written() {
    let before = "[i0]\np1 = newstr(1)\nstrsetitem(p1, 0, i0)\np2 = newstr(1)\nescape_n(p2)\n\
        copystrcontent(p1, p2, 0, 0, 1)\nfinish()\n";
    let after = "[i0]\np2 = newstr(1)\nescape_n(p2)\nstrsetitem(p2, 0, i0)\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(
        before,
        after,
        "strsetitem(p2, 0, i0)",
        "strsetitem(p2, 0, 0)",
    );
    // Two characters to the middle of the real string: each to its place.
    let before = "[i0, i1]\np1 = newstr(2)\nstrsetitem(p1, 0, i0)\nstrsetitem(p1, 1, i1)\n\
        p2 = newstr(4)\nescape_n(p2)\ncopystrcontent(p1, p2, 0, 1, 2)\nfinish()\n";
    let after = "[i0, i1]\np2 = newstr(4)\nescape_n(p2)\nstrsetitem(p2, 1, i0)\n\
        strsetitem(p2, 2, i1)\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(
        before,
        after,
        "strsetitem(p2, 2, i1)",
        "strsetitem(p2, 1, i1)",
    );
    // From a constant, the copy stays one op.
    let constant = "[p2]\ncopystrcontent(s\"ab\", p2, 0, 0, 2)\nfinish()\n";
    optimizes_with(Passes::default(), constant, constant);
}

#[test]
fn a_virtual_resumes_with_what_its_narrow_field_keeps() {
    // 256 written to a byte field is stored as 0. The guard's virtual
    // holds the 256 that was written, and resuming stores it as the
    // write would have: the two traces resume alike (the validator cuts
    // the value as the field does; fuzzing found it did not). A virtual
    // that holds 257 (stored as 1) is refuted.
    let before = "[i0]\np1 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p1, 256, descr=chardescr)\nguard_true(i0) [p1]\nfinish()\n";
    let after = "[i0]\nguard_true(i0) [p1] where \
        p1 = new_with_vtable(descr=nodesize) {chardescr=256}\nfinish()\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(before, after, "{chardescr=256}", "{chardescr=257}");
}

#[test]
fn an_elidable_call_leaves_kept_writes_kept() {
    // An inlined frame's vref, written to a field and restored around an
    // elidable call (a log's `rbigint` helpers between enter and leave
    // of a frame): the call's result depends on its arguments alone, so
    // the write waits in the resume data of the call's exception guard,
    // and the vref is never built. A plain call of unknown effects sees
    // the field: the write goes out before it, and the vref with it.
    let around = |call: &str| {
        format!(
            "[p0, i0]\np1 = virtual_ref(p0, 0)\nsetfield_gc(p0, p1, descr=nextdescr)\n\
             i1 = {call}\nguard_no_exception() [p0]\nguard_true(i0) [p0]\n\
             setfield_gc(p0, NULL, descr=nextdescr)\nvirtual_ref_finish(p1, NULL)\nfinish(i1)\n"
        )
    };
    let pure = around("call_pure_i(123, i0, descr=elidable3calldescr)");
    let after =
        "[p0, i0]\nr11 = force_token()\ni1 = call_pure_i(123, i0, descr=elidable3calldescr)\n\
        guard_no_exception() [p0] where p1 = new_with_vtable(descr=vref_descr) \
        {virtualtokendescr=r11} writes setfield_gc(p0, p1, descr=nextdescr)\n\
        guard_true(i0) [p0] where p1 = new_with_vtable(descr=vref_descr) \
        {virtualtokendescr=r11} writes setfield_gc(p0, p1, descr=nextdescr)\n\
        setfield_gc(p0, NULL, descr=nextdescr)\nfinish(i1)\n";
    optimizes_with(Passes::default(), &pure, after);
    // (The write dropped where the input fails, not where the call
    // raises: the replay makes no call raise.)
    let kept = " writes setfield_gc(p0, p1, descr=nextdescr)\nsetfield_gc";
    twin_refuted(&pure, after, kept, "\nsetfield_gc");
    let plain = proved_output(
        Passes::default(),
        &around("call_i(123, i0, descr=plaincalldescr)"),
    );
    assert!(
        plain.contains("new_with_vtable(descr=vref_descr)\n"),
        "{plain}"
    );
}

#[test]
fn finishing_a_vref_that_exists_is_a_kept_write_of_its_token() {
    // virtual_ref_finish(vref, NULL) of a built vref only clears its
    // token: a write like any other (written out before the guard, as a
    // value that exists), and no reason to write out the others kept.
    // So a second vref kept as a field's value and overwritten stays
    // virtual (PyPy's `topframeref`, set to each inlined frame's vref in
    // turn). Nor does a marker such as `assert_not_none`.
    let before = "[p0, i0]\np1 = virtual_ref(p0, 0)\nescape_n(p1)\n\
        p2 = virtual_ref(p0, 1)\nsetfield_gc(p0, p2, descr=nextdescr)\nassert_not_none(p0)\n\
        virtual_ref_finish(p1, NULL)\nguard_true(i0) [p0]\n\
        setfield_gc(p0, NULL, descr=nextdescr)\nvirtual_ref_finish(p2, NULL)\njump(p0, i0)\n";
    let after = "[p0, i0]\nr13 = force_token()\np1 = new_with_vtable(descr=vref_descr)\n\
        setfield_gc(p1, r13, descr=virtualtokendescr)\nescape_n(p1)\nr14 = force_token()\n\
        setfield_gc(p1, NULL, descr=virtualtokendescr)\n\
        guard_true(i0) [p0] where p2 = new_with_vtable(descr=vref_descr) \
        {virtualtokendescr=r14} writes setfield_gc(p0, p2, descr=nextdescr)\n\
        setfield_gc(p0, NULL, descr=nextdescr)\njump(p0, i0)\n";
    optimizes_with(Passes::default(), before, after);
    twin_refuted(
        before,
        after,
        "setfield_gc(p1, NULL, descr=virtualtokendescr)\n",
        "",
    );
    // Where the frame stored is not null, the op stays.
    let stays = before.replace("virtual_ref_finish(p1, NULL)", "virtual_ref_finish(p1, p0)");
    let out = proved_output(Passes::default(), &stays);
    assert!(out.contains("virtual_ref_finish(p1, p0)"), "{out}");
}

#[test]
fn a_finished_vref_is_forced_to_its_frame_with_no_call() {
    // `jit_force_virtual` of a vref that `virtual_ref_finish` finished
    // with the frame: RPython's `force_virtual` returns the frame and does
    // nothing else, so the call and its guards go, and the frame and the
    // vref stay virtual (PyPy's virtualize.py; `super()` in a method
    // traces so).
    let before = "[p0, i1]\np2 = new_with_vtable(descr=nodesize)\n\
        setfield_gc(p2, i1, descr=valuedescr)\np3 = virtual_ref(p2, 0)\n\
        setfield_gc(p0, p3, descr=nextdescr)\nvirtual_ref_finish(p3, p2)\n\
        p4 = call_may_force_r(123, p3, descr=<Callr 8 r EF=6 OS=120>)\n\
        guard_not_forced() [p0]\nguard_no_exception() [p0]\n\
        i5 = getfield_gc_i(p4, descr=valuedescr)\n\
        setfield_gc(p0, NULL, descr=nextdescr)\nfinish(i5)\n";
    let after = "[p0, i1]\nsetfield_gc(p0, NULL, descr=nextdescr)\nfinish(i1)\n";
    optimizes_with(Passes::default(), before, after);
    // The vref itself is no stand-in for the frame.
    let wrong = "[p0, i1]\np3 = new_with_vtable(descr=vref_descr)\n\
        i5 = getfield_gc_i(p3, descr=valuedescr)\n\
        setfield_gc(p0, NULL, descr=nextdescr)\nfinish(i5)\n";
    twin_refuted(before, wrong, "finish(i5)", "finish(i5)");
    // Not finished, the vref still holds the frame's token: the call
    // forces the frame, and stays.
    let unfinished = before.replace("virtual_ref_finish(p3, p2)\n", "");
    let out = proved_output(Passes::default(), &unfinished);
    assert!(out.contains("call_may_force_r(123, p3"), "{out}");
    twin_not_proved(&unfinished, after, "finish(i1)", "finish(i1)");
    // The frame written into its forced field, the token still the
    // frame's: the same.
    let written = before.replace(
        "virtual_ref_finish(p3, p2)",
        "setfield_gc(p3, p2, descr=virtualforceddescr)",
    );
    let out = proved_output(Passes::default(), &written);
    assert!(out.contains("call_may_force_r(123, p3"), "{out}");
    // Finished with what may be null: where it is, the call fails with
    // RPython's fatal InvalidVirtualRef; elsewhere it gives that value.
    let maybe_null = before
        .replace("[p0, i1]", "[p0, i1, p6]")
        .replace("virtual_ref_finish(p3, p2)", "virtual_ref_finish(p3, p6)");
    let expected = "[p0, i1, p6]\ni5 = getfield_gc_i(p6, descr=valuedescr)\n\
                    setfield_gc(p0, NULL, descr=nextdescr)\nfinish(i5)\n";
    optimizes_with(Passes::default(), &maybe_null, expected);
    twin_refuted(&maybe_null, expected, "(p6, descr", "(p0, descr");
}
