//! Control flow: guards and their fail arguments, loops back to the start
//! or to a label, jumps out of the trace, the iteration limit, liveness
//! after labels, and traces that do not end properly.

mod common;

use common::*;
use traceopt_interp::{run, DefaultEnv, ErrorKind, InterpError, Limits, Outcome, Run, Val};

#[test]
fn guard_failure_reports_fail_values_with_holes_and_constants() {
    let text = "[i0, p1]
        i2 = int_add(i0, 1)
        i3 = int_gt(i2, 10)
        guard_false(i3) [i2, None, p1, 42, i0]
        finish(i2)";
    let run = go(text, &[Val::Int(10), Val::NULL]).unwrap();
    assert_eq!(
        run.outcome,
        Outcome::GuardFailed {
            op_index: 2,
            fail_values: vec![
                Some(Val::Int(11)),
                None,
                Some(Val::NULL),
                Some(Val::Int(42)),
                Some(Val::Int(10))
            ],
        }
    );
    assert_eq!(finished(go(text, &[Val::Int(3), Val::NULL])), ints(&[4]));
}

#[test]
fn guards_on_references() {
    let text = "[p0]\nguard_nonnull(p0) [p0]\nfinish()";
    assert!(matches!(
        go(text, &[Val::NULL]).unwrap().outcome,
        Outcome::GuardFailed { op_index: 0, .. }
    ));
    let text = "[p0]\nguard_isnull(p0) [p0]\nfinish()";
    assert!(matches!(
        go(text, &[Val::NULL]).unwrap().outcome,
        Outcome::Finished { .. }
    ));
    let text = "[p0]\nguard_nonnull_class(p0, ConstClass(node_vtable)) []\nfinish()";
    assert!(matches!(
        go(text, &[Val::NULL]).unwrap().outcome,
        Outcome::GuardFailed { op_index: 0, .. }
    ));
    let text = "[p0]\nguard_class(p0, ConstClass(node_vtable)) []\nfinish()";
    assert_error(go(text, &[Val::NULL]), ErrorKind::NullDereference, Some(0));
    let text = "[i0]\nguard_always_fails() [i0]\nfinish()";
    assert_eq!(
        go(text, &ints(&[1])).unwrap().outcome,
        Outcome::GuardFailed {
            op_index: 0,
            fail_values: vec![Some(Val::Int(1))]
        }
    );
}

#[test]
fn guards_the_default_env_lets_hold() {
    let text = "[i0]
        guard_not_invalidated() []
        guard_not_forced() []
        guard_not_forced_2() []
        guard_future_condition() []
        guard_no_exception() []
        finish(i0)";
    assert_eq!(finished(go(text, &ints(&[3]))), ints(&[3]));
}

const COUNTDOWN: &str = "[i0]
    i1 = int_sub(i0, 1)
    i2 = int_gt(i1, 0)
    guard_true(i2) [i1]
    jump(i1)";

#[test]
fn countdown_loop_exits_through_its_guard() {
    let run = go(COUNTDOWN, &ints(&[5])).unwrap();
    assert_eq!(
        run.outcome,
        Outcome::GuardFailed {
            op_index: 2,
            fail_values: vec![Some(Val::Int(0))]
        }
    );
    assert_eq!(run.iterations, 4);
    // The values are those of the last pass.
    assert_eq!(
        run.values,
        vec![
            Some(Val::Int(1)),
            Some(Val::Int(0)),
            Some(Val::Int(0)),
            None,
            None
        ]
    );
}

#[test]
fn a_loop_stops_at_the_iteration_limit() {
    let text = "[i0]
        i1 = int_add(i0, 1)
        i2 = escape_i(i1)
        jump(i1)";
    for n in [1, 2, 7, 1000] {
        let run = run(
            &parse(text),
            &ints(&[0]),
            &mut DefaultEnv,
            Limits { max_iterations: n },
        )
        .unwrap();
        assert_eq!(run.iterations, n);
        assert_eq!(
            run.outcome,
            Outcome::IterationLimit {
                values: ints(&[n as i64])
            }
        );
        // The body ran n times.
        assert_eq!(run.escaped.len() as u64, n);
        assert_eq!(run.escaped.last(), Some(&(1, ints(&[n as i64]))));
    }
    // Countdown from 5 within a limit of 3.
    let run = run(
        &parse(COUNTDOWN),
        &ints(&[5]),
        &mut DefaultEnv,
        Limits { max_iterations: 3 },
    )
    .unwrap();
    assert_eq!(run.outcome, Outcome::IterationLimit { values: ints(&[2]) });
}

/// The shape of PyPy's optimized loops: a preamble between two labels,
/// the loop body after the second, which the jump targets.
const TWO_LABELS: &str = "[i0, i1]
    label(i0, i1, descr=TargetToken(1))
    i2 = int_mul(i1, 2)
    i3 = int_add(i0, i2)
    label(i3, i2, descr=TargetToken(2))
    i4 = int_sub(i3, 1)
    i5 = int_gt(i4, 0)
    guard_true(i5) [i4, i2]
    i6 = escape_i(i4)
    jump(i4, i2, descr=TargetToken(2))";

#[test]
fn jump_to_the_second_label_skips_the_preamble() {
    let trace = parse(TWO_LABELS);
    let run = run(&trace, &ints(&[1, 3]), &mut DefaultEnv, Limits::default()).unwrap();
    // Preamble once: i2 = 6, i3 = 7. Then i4 = 6, 5, ..., 1, and 0 fails.
    let escaped: Vec<Val> = run.escaped.iter().map(|(_, v)| v[0]).collect();
    assert_eq!(escaped, ints(&[6, 5, 4, 3, 2, 1]));
    assert_eq!(run.iterations, 6);
    assert_eq!(
        run.outcome,
        Outcome::GuardFailed {
            op_index: 6,
            fail_values: vec![Some(Val::Int(0)), Some(Val::Int(6))]
        }
    );
    // The preamble's values and the first label's arguments are dead now.
    assert_eq!(value(&trace, &run, "i0"), None);
    assert_eq!(value(&trace, &run, "i3"), Some(Val::Int(1)));
}

#[test]
fn after_a_label_only_its_arguments_are_live() {
    let text = "[i0, i1]
        label(i0, descr=TargetToken(1))
        i2 = int_add(i0, i1)
        finish(i2)";
    let err = go(text, &ints(&[1, 2])).unwrap_err();
    match &err {
        InterpError {
            kind: ErrorKind::Malformed,
            op_index: Some(1),
            message,
            ..
        } => {
            assert!(
                message.contains("i1") && message.contains("not live"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn jumps_that_leave_the_trace() {
    // A bridge jumping into loop 3.
    let bridge = "[i0]\ni1 = int_add(i0, 1)\njump(i1, descr=<Loop3>)";
    assert_eq!(
        go(bridge, &ints(&[1])).unwrap().outcome,
        Outcome::Jumped {
            op_index: 1,
            values: ints(&[2])
        }
    );
    // An optimized bridge: its jump targets a label of another trace.
    let bridge = "[i0]\ni1 = int_add(i0, 1)\njump(i1, i0, descr=TargetToken(140737287342704))";
    assert_eq!(
        go(bridge, &ints(&[1])).unwrap().outcome,
        Outcome::Jumped {
            op_index: 1,
            values: ints(&[2, 1])
        }
    );
    // A jump to a target token no label of this trace has.
    let other = "[i0]\nlabel(i0, descr=TargetToken(1))\njump(i0, descr=TargetToken(9))";
    assert_eq!(
        go(other, &ints(&[1])).unwrap().outcome,
        Outcome::Jumped {
            op_index: 1,
            values: ints(&[1])
        }
    );
}

#[test]
fn jumps_that_go_back_to_the_start() {
    let limits = Limits { max_iterations: 5 };
    for jump in [
        "jump(i1)",
        "jump(i1, descr=<Loop-1>)",
        "jump(i1, descr=looptoken)",
    ] {
        let text = format!("[i0]\ni1 = int_add(i0, 2)\n{jump}");
        let run = run(&parse(&text), &ints(&[0]), &mut DefaultEnv, limits).unwrap();
        assert_eq!(
            run.outcome,
            Outcome::IterationLimit {
                values: ints(&[10])
            },
            "{jump}"
        );
    }
    // A recorded loop with labels still loops back on <Loop-1>.
    let text =
        "[i0]\nlabel(i0, descr=TargetToken(1))\ni1 = int_add(i0, 2)\njump(i1, descr=<Loop-1>)";
    let run = run(&parse(text), &ints(&[0]), &mut DefaultEnv, limits).unwrap();
    assert_eq!(
        run.outcome,
        Outcome::IterationLimit {
            values: ints(&[10])
        }
    );
}

#[test]
fn a_jump_must_fit_its_target() {
    // Without a descr, a jump that does not fit the inputs leaves the trace
    // (PyPy's tests end that way); one that closes the loop must fit.
    let text = "[i0]\ni1 = int_add(i0, 2)\njump(i1, i0)";
    assert!(matches!(
        go(text, &ints(&[0])),
        Ok(Run {
            outcome: Outcome::Jumped { op_index: 1, .. },
            ..
        })
    ));
    let text = "[i0]\ni1 = int_add(i0, 2)\njump(i1, i0, descr=<Loop-1>)";
    assert_error(go(text, &ints(&[0])), ErrorKind::WrongInputs, Some(1));
    let text = "[i0]\nf1 = cast_int_to_float(i0)\njump(f1, descr=<Loop-1>)";
    assert_error(go(text, &ints(&[0])), ErrorKind::WrongInputs, Some(1));
    let text = "[i0]\nlabel(i0, descr=TargetToken(1))\njump(i0, i0, descr=TargetToken(1))";
    assert_error(go(text, &ints(&[0])), ErrorKind::Malformed, Some(1));
    let text = "[i0]\nlabel(i0, descr=TargetToken(1))\nf1 = cast_int_to_float(i0)\njump(f1, descr=TargetToken(1))";
    assert_error(go(text, &ints(&[0])), ErrorKind::TypeMismatch, Some(2));
}

#[test]
fn inputs_must_match_in_number_and_type() {
    let text = "[i0, p1, f2]\nfinish(i0)";
    assert_eq!(
        finished(go(text, &[Val::Int(1), Val::NULL, Val::Float(0.5)])),
        ints(&[1])
    );
    for inputs in [
        vec![],
        vec![Val::Int(1), Val::NULL],
        vec![Val::Int(1), Val::Int(0), Val::Float(0.5)],
        vec![Val::Int(1), Val::NULL, Val::Float(0.5), Val::Int(2)],
        // A reference to an object the (empty) heap does not have.
        vec![
            Val::Int(1),
            Val::Ref(Some(traceopt_interp::ObjId(0))),
            Val::Float(0.5),
        ],
    ] {
        let err = go(text, &inputs).unwrap_err();
        assert!(err.to_string().starts_with("1:1: wrong inputs: "), "{err}");
        assert_error(Err::<(), _>(err), ErrorKind::WrongInputs, None);
    }
}

#[test]
fn traces_the_checker_would_reject_give_errors() {
    let malformed = |text: &str, index: usize| {
        let err = go(text, &ints(&[1])).unwrap_err();
        assert!(
            matches!(err, InterpError { kind: ErrorKind::Malformed, op_index: Some(op_index), .. } if op_index == index),
            "{text}: {err}"
        );
    };
    // No jump or finish at the end.
    malformed("[i0]\ni1 = int_add(i0, 1)", 1);
    malformed("[i0]", 0);
    // Wrong argument count.
    malformed("[i0]\ni1 = int_add(i0)\nfinish(i1)", 0);
    // A value the label does not pass on is dead after it.
    malformed("[i0]\nlabel(descr=TargetToken(1))\nfinish(i0)", 1);
    // Missing descr.
    malformed("[i0]\np1 = new()\nfinish(p1)", 0);
    // Wrong argument types are type mismatches.
    assert_error(
        go("[i0]\nf1 = float_add(i0, 1.5)\nfinish(f1)", &ints(&[1])),
        ErrorKind::TypeMismatch,
        Some(0),
    );
    assert_error(
        go("[i0]\ni1 = int_add(i0, 'text')\nfinish(i1)", &ints(&[1])),
        ErrorKind::TypeMismatch,
        Some(0),
    );
    assert_error(
        go("[i0]\nguard_value(i0, 1.5) []\nfinish(i0)", &ints(&[1])),
        ErrorKind::TypeMismatch,
        Some(0),
    );
}

#[test]
fn programmatic_traces_with_bad_references_give_errors() {
    use traceopt_ir::{Arg, Op, Opcode, Pos, Trace, Type, ValueId};
    // A use before definition and a use of a void op's result.
    let mut t = Trace::new();
    let i0 = t.add_input(Type::Int, "i0");
    t.push(
        Op::new(Opcode::IntAdd, vec![Arg::Value(i0), Arg::Value(ValueId(5))]),
        "i1",
        Pos::default(),
    );
    t.push(Op::new(Opcode::Finish, vec![]), "", Pos::default());
    assert_error(
        run(&t, &ints(&[1]), &mut DefaultEnv, Limits::default()),
        ErrorKind::Malformed,
        Some(0),
    );

    let mut t = Trace::new();
    let i0 = t.add_input(Type::Int, "i0");
    let void = t.push(
        Op::new(Opcode::Keepalive, vec![Arg::Value(i0)]),
        "",
        Pos::default(),
    );
    t.push(
        Op::new(Opcode::Finish, vec![Arg::Value(void)]),
        "",
        Pos::default(),
    );
    assert_error(
        run(&t, &ints(&[1]), &mut DefaultEnv, Limits::default()),
        ErrorKind::Malformed,
        Some(1),
    );

    // A descr id and a constant id that do not exist.
    let mut t = Trace::new();
    t.add_input(Type::Int, "i0");
    let mut op = Op::new(Opcode::New, vec![]);
    op.descr = Some(traceopt_ir::DescrId(7));
    t.push(op, "p1", Pos::default());
    assert_error(
        run(&t, &ints(&[1]), &mut DefaultEnv, Limits::default()),
        ErrorKind::Malformed,
        Some(0),
    );
    let mut t = Trace::new();
    t.push(
        Op::new(Opcode::Finish, vec![Arg::Const(traceopt_ir::ConstId(3))]),
        "",
        Pos::default(),
    );
    assert_error(
        run(&t, &[], &mut DefaultEnv, Limits::default()),
        ErrorKind::Malformed,
        Some(0),
    );
}
