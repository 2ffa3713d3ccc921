//! Per-op semantics where they are easy to get wrong: undefined shifts,
//! Python division, unsigned compares, overflow guards, casts, hints.

mod common;

use common::*;
use traceopt_interp::{ErrorKind, InterpError, Outcome, Val};

fn binop(op: &str, a: i64, b: i64) -> Result<Val, InterpError> {
    result_of(
        &format!("[i0, i1]\ni2 = {op}(i0, i1)\nfinish(i2)"),
        &ints(&[a, b]),
    )
}

fn int(op: &str, a: i64, b: i64) -> i64 {
    match binop(op, a, b) {
        Ok(Val::Int(x)) => x,
        other => panic!("{op}({a}, {b}) gave {other:?}"),
    }
}

#[test]
fn shift_counts_outside_0_to_63_are_undefined() {
    for op in ["int_lshift", "int_rshift", "uint_rshift"] {
        for count in [64, 65, -1, i64::MIN, i64::MAX] {
            let err = binop(op, 1, count).unwrap_err();
            match &err {
                InterpError {
                    kind: ErrorKind::Undefined,
                    op_index,
                    pos,
                    message,
                } => {
                    assert_eq!(*op_index, Some(0));
                    assert_eq!((pos.line, pos.col), (2, 6));
                    assert!(
                        message.contains(op) && message.contains(&count.to_string()),
                        "{message}"
                    );
                }
                other => panic!("{op} by {count}: {other:?}"),
            }
            assert!(err.to_string().starts_with("2:6: undefined: "), "{err}");
        }
    }
    assert_eq!(int("int_lshift", 3, 62), i64::MIN + (1 << 62));
    assert_eq!(int("int_rshift", -1, 63), -1);
    assert_eq!(int("uint_rshift", -1, 63), 1);
    assert_eq!(int("int_rshift", -95, 22), -1);
    assert_eq!(int("int_lshift", 5, 0), 5);
}

#[test]
fn python_floor_division_and_modulo() {
    assert_eq!(int("int_pydiv", 7, -2), -4);
    assert_eq!(int("int_pymod", 7, -2), -1);
    assert_eq!(int("int_pydiv", -7, 2), -4);
    assert_eq!(int("int_pymod", -7, 2), 1);
    assert_eq!(int("int_pydiv", -7, -2), 3);
    assert_eq!(int("int_pymod", -7, -2), -1);
    assert_eq!(int("int_pydiv", i64::MIN, -1), i64::MIN);
    assert_eq!(int("int_pymod", i64::MIN, -1), 0);
    for op in ["int_pydiv", "int_pymod"] {
        assert!(matches!(
            binop(op, 5, 0),
            Err(InterpError {
                kind: ErrorKind::Undefined,
                ..
            })
        ));
    }
}

#[test]
fn python_division_through_oopspec_calls() {
    let call = |os: u32, op: &str, a: i64, b: i64| {
        result_of(
            &format!(
                "[i0, i1]\ni2 = {op}(ConstClass(ll_int_py_div__Signed_Signed), i0, i1, descr=<Calli 8 ii EF=0 OS={os}>)\nfinish(i2)"
            ),
            &ints(&[a, b]),
        )
    };
    assert_eq!(call(12, "call_pure_i", 7, -2), Ok(Val::Int(-4)));
    assert_eq!(call(14, "call_pure_i", 7, -2), Ok(Val::Int(-1)));
    assert_eq!(call(12, "call_i", -7, 2), Ok(Val::Int(-4)));
    assert_eq!(call(14, "call_i", -7, 2), Ok(Val::Int(1)));
    assert!(matches!(
        call(12, "call_pure_i", 1, 0),
        Err(InterpError {
            kind: ErrorKind::Undefined,
            ..
        })
    ));
    // Another oopspec is an ordinary call: zero by default.
    assert_eq!(call(4, "call_pure_i", 7, -2), Ok(Val::Int(0)));
}

#[test]
fn unsigned_comparisons_see_negatives_as_large() {
    assert_eq!(int("uint_lt", -1, 0), 0);
    assert_eq!(int("int_lt", -1, 0), 1);
    assert_eq!(int("uint_gt", -1, 0), 1);
    assert_eq!(int("uint_ge", -95, 57), 1);
    assert_eq!(int("uint_ge", -86, -6), 0);
    assert_eq!(int("uint_le", i64::MAX, i64::MIN), 1);
    assert_eq!(int("int_le", i64::MAX, i64::MIN), 0);
}

#[test]
fn uint_mul_high_and_signext() {
    assert_eq!(int("uint_mul_high", -1, -1), -2);
    assert_eq!(int("uint_mul_high", -1, 2), 1);
    assert_eq!(int("uint_mul_high", 1 << 40, 1 << 40), 1 << 16);
    assert_eq!(int("uint_mul_high", 12345, 678), 0);
    assert_eq!(int("int_signext", 0x80, 1), -128);
    assert_eq!(int("int_signext", 0x12_7fff, 2), 0x7fff);
    assert_eq!(int("int_signext", 0x8000_0000, 4), -0x8000_0000);
    assert_eq!(int("int_signext", i64::MIN, 8), i64::MIN);
    for bytes in [0, 3, 5, 9] {
        assert!(matches!(
            binop("int_signext", 1, bytes),
            Err(InterpError {
                kind: ErrorKind::Undefined,
                ..
            })
        ));
    }
}

#[test]
fn wrapping_arithmetic() {
    assert_eq!(int("int_add", i64::MAX, 1), i64::MIN);
    assert_eq!(int("int_sub", i64::MIN, 1), i64::MAX);
    assert_eq!(int("int_mul", 1 << 62, 4), 0);
    let neg = "[i0]\ni1 = int_neg(i0)\nfinish(i1)";
    assert_eq!(result_of(neg, &ints(&[i64::MIN])), Ok(Val::Int(i64::MIN)));
    let unary =
        |op: &str, x: i64| result_of(&format!("[i0]\ni1 = {op}(i0)\nfinish(i1)"), &ints(&[x]));
    assert_eq!(unary("int_invert", 5), Ok(Val::Int(-6)));
    assert_eq!(unary("int_force_ge_zero", -5), Ok(Val::Int(0)));
    assert_eq!(unary("int_force_ge_zero", 5), Ok(Val::Int(5)));
    assert_eq!(unary("int_is_true", i64::MIN), Ok(Val::Int(1)));
    assert_eq!(unary("int_is_zero", 0), Ok(Val::Int(1)));
}

#[test]
fn overflow_flag_drives_the_overflow_guards() {
    let trace = |op: &str, guard: &str| {
        format!("[i0, i1]\ni2 = {op}(i0, i1)\n{guard}() [i0, i2]\nfinish(i2)")
    };
    for (op, a, b, overflows, wrapped) in [
        ("int_add_ovf", i64::MAX, 1, true, i64::MIN),
        ("int_add_ovf", 2, 3, false, 5),
        ("int_sub_ovf", i64::MIN, 1, true, i64::MAX),
        ("int_sub_ovf", -2, 3, false, -5),
        ("int_mul_ovf", 1 << 32, 1 << 31, true, i64::MIN),
        ("int_mul_ovf", i64::MIN, -1, true, i64::MIN),
        ("int_mul_ovf", -(1 << 31), 1 << 32, false, i64::MIN),
    ] {
        let no = go(&trace(op, "guard_no_overflow"), &ints(&[a, b]))
            .unwrap()
            .outcome;
        let yes = go(&trace(op, "guard_overflow"), &ints(&[a, b]))
            .unwrap()
            .outcome;
        let failed = Outcome::GuardFailed {
            op_index: 1,
            fail_values: vec![Some(Val::Int(a)), Some(Val::Int(wrapped))],
        };
        let finished = Outcome::Finished {
            values: vec![Val::Int(wrapped)],
        };
        if overflows {
            assert_eq!((no, yes), (failed, finished), "{op}({a}, {b})");
        } else {
            assert_eq!((no, yes), (finished, failed), "{op}({a}, {b})");
        }
    }
}

#[test]
fn floats_and_casts() {
    let f = |text: &str, inputs: &[Val]| result_of(text, inputs);
    assert_eq!(
        f(
            "[f0, f1]\nf2 = float_truediv(f0, f1)\nfinish(f2)",
            &[1.0.into(), 4.0.into()]
        ),
        Ok(Val::Float(0.25))
    );
    assert_eq!(
        f(
            "[f0]\ni1 = cast_float_to_int(f0)\nfinish(i1)",
            &[(-3.99).into()]
        ),
        Ok(Val::Int(-3))
    );
    for bad in [f64::NAN, f64::INFINITY, 1e19] {
        assert!(matches!(
            f(
                "[f0]\ni1 = cast_float_to_int(f0)\nfinish(i1)",
                &[bad.into()]
            ),
            Err(InterpError {
                kind: ErrorKind::Undefined,
                ..
            })
        ));
    }
    assert_eq!(
        f("[i0]\nf1 = cast_int_to_float(i0)\nfinish(f1)", &ints(&[-7])),
        Ok(Val::Float(-7.0))
    );
    assert_eq!(
        f("[f0]\ni1 = convert_float_bytes_to_longlong(f0)\nf2 = convert_longlong_bytes_to_float(i1)\nfinish(f2)", &[(-0.0).into()]),
        Ok(Val::Float(-0.0))
    );
    assert_eq!(
        f(
            "[f0]\ni1 = cast_float_to_singlefloat(f0)\nfinish(i1)",
            &[(-2.0).into()]
        ),
        Ok(Val::Int(0xc000_0000))
    );
    assert_eq!(
        f(
            "[f0]\nf1 = float_neg(f0)\nf2 = float_abs(f1)\ni3 = float_eq(f2, 2.5)\nfinish(i3)",
            &[2.5.into()]
        ),
        Ok(Val::Int(1))
    );
    assert_eq!(
        f(
            "[f0]\ni1 = float_ne(f0, f0)\nfinish(i1)",
            &[f64::NAN.into()]
        ),
        Ok(Val::Int(1))
    );
}

#[test]
fn guard_value_compares_with_ieee_equality() {
    let text = "[f0]\nguard_value(f0, 0.0) [f0]\nfinish(f0)";
    assert_eq!(finished(go(text, &[(-0.0).into()])), vec![Val::Float(-0.0)]);
    let run = go(text, &[f64::NAN.into()]).unwrap();
    assert!(matches!(
        run.outcome,
        Outcome::GuardFailed { op_index: 0, .. }
    ));
    let ints_text = "[i0]\nguard_value(i0, 7) []\nfinish(i0)";
    assert_eq!(finished(go(ints_text, &ints(&[7]))), ints(&[7]));
    assert!(matches!(
        go(ints_text, &ints(&[8])).unwrap().outcome,
        Outcome::GuardFailed { op_index: 0, .. }
    ));
}

#[test]
fn pointers_casts_and_comparisons() {
    let text = "[i0]
        p1 = new(descr=sizedescr)
        p2 = new(descr=sizedescr)
        i3 = cast_ptr_to_int(p1)
        i4 = cast_ptr_to_int(p2)
        i5 = int_ne(i3, i4)
        p6 = cast_int_to_ptr(i3)
        i7 = ptr_eq(p6, p1)
        i8 = instance_ptr_ne(p1, p2)
        i9 = cast_ptr_to_int(NULL)
        p10 = cast_int_to_ptr(0)
        i11 = ptr_eq(p10, ConstPtr(null))
        p12 = same_as_r(p2)
        i13 = ptr_ne(p12, p2)
        finish(i5, i7, i8, i9, i11, i13)";
    // finish takes at most one argument in the table; run the pieces.
    let trace = parse(text);
    let mut env = traceopt_interp::DefaultEnv;
    assert_error(
        traceopt_interp::run(&trace, &ints(&[0]), &mut env, Default::default()),
        ErrorKind::Malformed,
        Some(13),
    );
    let text = text.replace(
        "finish(i5, i7, i8, i9, i11, i13)",
        "i14 = escape_i(i5, i7, i8, i9, i11, i13)\nfinish()",
    );
    let run = go(&text, &ints(&[0])).unwrap();
    assert_eq!(run.escaped, vec![(13, ints(&[1, 1, 1, 0, 1, 0]))]);
    let unknown = "[i0]\np1 = cast_int_to_ptr(i0)\nfinish(p1)";
    assert!(matches!(
        go(unknown, &ints(&[12345])),
        Err(InterpError {
            kind: ErrorKind::Unsupported,
            ..
        })
    ));
}

#[test]
fn constants_of_classes_and_pointers_are_stable() {
    let run = go(
        "[i0]
        i1 = escape_i(ConstClass(node_vtable))
        i2 = escape_i(ConstClass(node_vtable))
        i3 = int_eq(i1, i2)
        i4 = ptr_eq(ConstPtr(ptr1), ConstPtr(ptr1))
        i5 = ptr_eq(ConstPtr(ptr1), ConstPtr(ptr2))
        i6 = escape_i(i3, i4, i5)
        finish()",
        &ints(&[0]),
    )
    .unwrap();
    let class = traceopt_interp::stable_address("node_vtable");
    assert_eq!(run.escaped[0], (0, ints(&[class])));
    assert_eq!(run.escaped[2], (5, ints(&[1, 1, 0])));
    assert_eq!(run.heap.len(), 2);
}

#[test]
fn hints_that_do_not_hold_are_errors() {
    let not_none = "[p0]\nassert_not_none(p0)\nfinish()";
    assert_error(go(not_none, &[Val::NULL]), ErrorKind::HintViolated, Some(0));
    let exact = "[i0]\nrecord_exact_value_i(i0, 5)\nrecord_exact_class(NULL, 3)\nrecord_known_result(i0, 1, i0, descr=<Calli 8 i EF=0>)\nfinish(i0)";
    assert_eq!(finished(go(exact, &ints(&[5]))), ints(&[5]));
    assert_error(go(exact, &ints(&[6])), ErrorKind::HintViolated, Some(0));
    let exact_r = "[p0]\nrecord_exact_value_r(p0, ConstPtr(null))\nfinish()";
    assert!(go(exact_r, &[Val::NULL]).is_ok());
}

#[test]
fn markers_do_nothing() {
    let text = "[i0, p1]
        debug_merge_point(0, 0, '<code object f> #12 LOAD_FAST')
        enter_portal_frame(4, 0)
        increment_debug_counter(i0)
        keepalive(p1)
        force_spill(i0)
        jit_debug(i0, p1)
        quasiimmut_field(p1, descr=<QuasiImmutDescr object at 0x7f>)
        cond_call_gc_wb(p1, descr=<WriteBarrierDescr object at 0x7f>)
        leave_portal_frame(4)
        finish(i0)";
    assert_eq!(finished(go(text, &[Val::Int(3), Val::NULL])), ints(&[3]));
}

#[test]
fn escape_gives_its_first_argument_or_zero() {
    let run = go(
        "[i0, f1]
        i2 = escape_i(i0, f1)
        i3 = escape_i(f1)
        f4 = escape_f(f1)
        p5 = escape_r(i0)
        escape_n()
        i6 = escape_i()
        finish(i3)",
        &[Val::Int(4), Val::Float(1.5)],
    )
    .unwrap();
    let values: Vec<Option<Val>> = run.values[2..].to_vec();
    assert_eq!(
        values,
        vec![
            Some(Val::Int(4)),
            Some(Val::Int(0)),
            Some(Val::Float(1.5)),
            Some(Val::NULL),
            None,
            Some(Val::Int(0)),
            None
        ]
    );
    assert_eq!(run.escaped.len(), 6);
    assert_eq!(run.escaped[0], (0, vec![Val::Int(4), Val::Float(1.5)]));
    assert_eq!(run.escaped[4], (4, vec![]));
}

#[test]
fn backend_only_ops_are_refused() {
    let text = "[p0]\ni1 = gc_load_i(p0, 8, 8)\nfinish(i1)";
    assert_error(go(text, &[Val::NULL]), ErrorKind::Unsupported, Some(0));
}
