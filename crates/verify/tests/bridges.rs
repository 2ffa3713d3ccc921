//! PyPy's bridges verified in context (`verify_bridge`), on a small log
//! written by hand: a loop whose preamble guard and body guard each have
//! a bridge, recorded and optimized.

use traceopt_ir::{read_log, Header, Log, LogTrace};
use traceopt_smt::Solver;
use traceopt_verify::{verify_bridge, BridgeVerdict, Scope};

const INTVAL: &str = "descr=<FieldS W_IntObject.inst_intval 8 pure>";

/// A section of a log.
fn section(name: &str, header: &str, body: &str) -> String {
    format!("[1a] {{{name}\n# {header}\n{body}[1b] {name}}}\n")
}

/// The loop: a preamble that checks `p0`'s class and `i1 < p0.intval`,
/// then a body that counts `i1` up to it.
fn the_loop() -> String {
    let recorded = format!(
        "[p0, i1]\nguard_nonnull_class(p0, ConstClass(W_IntObject))\ni2 = getfield_gc_i(p0, {INTVAL})\n\
         i3 = int_lt(i1, i2)\nguard_true(i3)\ni4 = int_add(i1, 1)\njump(p0, i4, descr=<Loop1>)\n"
    );
    let optimized = format!(
        "[p0, i1]\nguard_true(i1, descr=<Guard0x5>) [p0, i1]\nlabel(p0, i1, descr=TargetToken(100))\n\
         guard_nonnull_class(p0, ConstClass(W_IntObject), descr=<Guard0x10>) [p0, i1]\n\
         i2 = getfield_gc_i(p0, {INTVAL})\ni3 = int_lt(i1, i2)\n\
         guard_true(i3, descr=<Guard0x20>) [p0, i1]\ni4 = int_add(i1, 1)\n\
         label(p0, i4, i2, descr=TargetToken(200))\ni5 = int_lt(i4, i2)\n\
         guard_true(i5, descr=<Guard0x30>) [p0, i4]\ni6 = int_add(i4, 1)\n\
         jump(p0, i6, i2, descr=TargetToken(200))\n"
    );
    section(
        "jit-log-noopt",
        "Traced loop or bridge with 6 ops",
        &recorded,
    ) + &section(
        "jit-log-opt-loop",
        "Loop 1 (x) : loop with 12 ops",
        &optimized,
    )
}

/// A bridge out of `guard`: recorded (it re-checks `p0`'s class, then
/// jumps to the loop with `i1 - p0.intval`) and optimized as `optimized`.
fn log_with_bridge(guard: &str, optimized: &str) -> Log {
    let recorded = format!(
        "[p0, i1]\nguard_nonnull_class(p0, ConstClass(W_IntObject))\ni2 = getfield_gc_i(p0, {INTVAL})\n\
         i3 = int_sub(i1, i2)\njump(p0, i3, descr=<Loop1>)\n"
    );
    let text = the_loop()
        + &section(
            "jit-log-noopt",
            "Traced loop or bridge with 4 ops",
            &recorded,
        )
        + &section(
            "jit-log-opt-bridge",
            &format!("bridge out of Guard {guard} with 6 ops"),
            optimized,
        );
    let log = read_log(&text, "bridges.log");
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    log
}

/// PyPy's bridge: no class check (the parent made it), the loop's
/// preamble check inlined, and a jump to the body's label.
fn optimized_bridge(op: &str) -> String {
    format!(
        "[p0, i1]\ni2 = getfield_gc_i(p0, {INTVAL})\ni3 = {op}(i1, i2)\ni4 = int_lt(i3, i2)\n\
         guard_true(i4, descr=<Guard0x40>) [p0, i3]\ni5 = int_add(i3, 1)\n\
         jump(p0, i5, i2, descr=TargetToken(200))\n"
    )
}

fn bridge_verdict(log: &Log) -> BridgeVerdict {
    let optimized: Vec<&LogTrace> = log
        .pairs
        .iter()
        .filter_map(|p| p.optimized.as_ref())
        .collect();
    let pair = log.pairs.last().unwrap();
    let bridge = pair.optimized.as_ref().unwrap();
    let Some(Header::Bridge { guard, .. }) = bridge.header else {
        panic!("not a bridge: {:?}", bridge.header);
    };
    let recorded = &pair.recorded.as_ref().unwrap().trace;
    let mut solver = Solver::start(None, std::time::Duration::from_secs(20)).unwrap();
    verify_bridge(recorded, &bridge.trace, guard, &optimized, &mut solver).unwrap()
}

#[test]
fn a_bridge_that_relies_on_its_parent_and_skips_the_preamble_is_proved() {
    let log = log_with_bridge("0x20", &optimized_bridge("int_sub"));
    assert_eq!(bridge_verdict(&log), BridgeVerdict::Proved(Scope::Whole));
}

#[test]
fn a_wrong_bridge_differs() {
    let log = log_with_bridge("0x20", &optimized_bridge("int_add"));
    match bridge_verdict(&log) {
        BridgeVerdict::Differs(_) => {}
        other => panic!("expected a refutation, got {other:?}"),
    }
}

#[test]
fn a_bridge_out_of_the_body_is_proved_for_the_first_pass() {
    // The recorded bridge takes (p0, i4): out of the body's guard, whose
    // fail arguments are those.
    let log = log_with_bridge("0x30", &optimized_bridge("int_sub"));
    assert_eq!(
        bridge_verdict(&log),
        BridgeVerdict::Proved(Scope::FirstPass)
    );
}

#[test]
fn a_bridge_without_its_parent_is_not_comparable() {
    let log = log_with_bridge("0x99", &optimized_bridge("int_sub"));
    match bridge_verdict(&log) {
        BridgeVerdict::Unknown(why) => assert!(why.contains("no optimized trace"), "{why}"),
        other => panic!("expected not comparable, got {other:?}"),
    }
}

/// A log whose optimized parent (a loop with no label) runs `parent`,
/// then `guard` (address 0x50, fail arguments `[i0, p1]`) and finishes; a
/// bridge out of the guard re-checks what its failure says (`recorded`)
/// and PyPy's drops the check. Both finish with `i0`.
fn guard_log(parent: &str, guard: &str, recheck: &str) -> Log {
    let with_descr = match guard.strip_suffix("()") {
        Some(name) => format!("{name}(descr=<Guard0x50>)"),
        None => format!("{}, descr=<Guard0x50>)", &guard[..guard.len() - 1]),
    };
    let optimized_parent = format!("[i0, p1]\n{parent}{with_descr} [i0, p1]\nfinish(i0)\n");
    let text = section(
        "jit-log-noopt",
        "Traced loop or bridge with 3 ops",
        "[i0, p1]\nfinish(i0)\n",
    ) + &section(
        "jit-log-opt-loop",
        "Loop 5 (g) : loop with 3 ops",
        &optimized_parent,
    ) + &section(
        "jit-log-noopt",
        "Traced loop or bridge with 3 ops",
        &format!("[i0, p1]\n{recheck}finish(i0)\n"),
    ) + &section(
        "jit-log-opt-bridge",
        "bridge out of Guard 0x50 with 1 ops",
        "[i0, p1]\nfinish(i0)\n",
    );
    let log = read_log(&text, "guards.log");
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    log
}

#[test]
fn the_parent_guard_fails_in_the_bridges_context() {
    let max = i64::MAX;
    // (what the parent computes, its guard, what its failure makes true,
    // re-checked by the recorded bridge and dropped by PyPy's)
    let cases = [
        (
            "i2 = int_lt(i0, 10)\n",
            "guard_true(i2)",
            "i3 = int_ge(i0, 10)\nguard_true(i3)\n",
        ),
        (
            "i2 = int_lt(i0, 10)\n",
            "guard_false(i2)",
            "i3 = int_lt(i0, 10)\nguard_true(i3)\n",
        ),
        ("", "guard_isnull(p1)", "guard_nonnull(p1)\n"),
        ("", "guard_nonnull(p1)", "guard_isnull(p1)\n"),
        (
            "i2 = int_add_ovf(i0, 1)\n",
            "guard_no_overflow()",
            &format!("i3 = int_eq(i0, {max})\nguard_true(i3)\n"),
        ),
        (
            "i2 = int_add_ovf(i0, 1)\n",
            "guard_overflow()",
            &format!("i3 = int_ne(i0, {max})\nguard_true(i3)\n"),
        ),
        (
            "",
            "guard_value(i0, 5)",
            "i3 = int_ne(i0, 5)\nguard_true(i3)\n",
        ),
        (
            "",
            "guard_value(p1, ConstPtr(ptr7))",
            "i3 = ptr_ne(p1, ConstPtr(ptr7))\nguard_true(i3)\n",
        ),
    ];
    for (parent, guard, recheck) in cases {
        let log = guard_log(parent, guard, recheck);
        assert_eq!(
            bridge_verdict(&log),
            BridgeVerdict::Proved(Scope::Whole),
            "{guard}: {recheck}"
        );
    }
    // What the failure does not say, PyPy may not drop.
    let log = guard_log(
        "",
        "guard_value(i0, 5)",
        "i3 = int_ne(i0, 6)\nguard_true(i3)\n",
    );
    assert!(matches!(bridge_verdict(&log), BridgeVerdict::Differs(_)));
}

#[test]
fn a_bridge_that_takes_other_inputs_than_the_guard_gives_is_not_comparable() {
    let log = guard_log("", "guard_value(i0, 5)", "");
    let mut log = log;
    let bridge = log.pairs.last_mut().unwrap().optimized.as_mut().unwrap();
    let mut trace = traceopt_ir::Trace::new();
    trace.add_input(traceopt_ir::Type::Int, "i0");
    let finish = traceopt_ir::Op::new(traceopt_ir::Opcode::Finish, Vec::new());
    trace.push(finish, "", traceopt_ir::Pos::default());
    bridge.trace = trace;
    match bridge_verdict(&log) {
        BridgeVerdict::Unknown(why) => assert!(why.contains("fail arguments"), "{why}"),
        other => panic!("expected not comparable, got {other:?}"),
    }
}
