//! Heap traces: what the generator builds and what calls do in the
//! fuzzer's runs.

use traceopt_fuzz::campaign::samples;
use traceopt_fuzz::entropy::Entropy;
use traceopt_fuzz::heapgen::generate_heap;
use traceopt_fuzz::oracle::{run_limited, run_on};
use traceopt_fuzz::sketch::Operand;
use traceopt_fuzz::{ExampleObject, ExampleValue};
use traceopt_interp::{Outcome, Val};
use traceopt_ir::Opcode;

#[test]
fn heap_traces_hold_objects_calls_aliasing_and_resume_data() {
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    for seed in 0..200 {
        let sketch = generate_heap(Entropy::seeded(seed), 30);
        let trace = sketch
            .trace()
            .unwrap_or_else(|e| panic!("{e}\n{}", sketch.text()));
        let errors = traceopt_ir::check(&trace, "fuzz", Default::default());
        assert!(errors.is_empty(), "{}\n{}", errors[0], sketch.text());
        // Every guard passes on the example's first pass, but for a last
        // one that contradicts the guard before it (now and then).
        let example = run_limited(&trace, &sketch.heap, &sketch.example(), 1).unwrap();
        let mut count = |what| *seen.entry(what).or_insert(0) += 1;
        match example.outcome {
            Outcome::Finished { .. } => {}
            Outcome::IterationLimit { .. } => count("loop"),
            Outcome::GuardFailed { op_index, .. } if op_index + 1 == trace.ops.len() - 1 => {
                count("guard that must fail")
            }
            _ => panic!("{}", sketch.text()),
        }
        let refs: Vec<i64> = (sketch.inputs.iter())
            .filter(|(n, _)| n.starts_with('p'))
            .map(|(_, v)| *v)
            .collect();
        if (1..refs.len()).any(|k| refs[..k].contains(&refs[k])) {
            count("aliasing inputs");
        }
        if sketch
            .heap
            .iter()
            .any(|o| matches!(o, ExampleObject::Text { .. }))
        {
            count("string given");
        }
        for line in &sketch.lines {
            match line.opcode {
                Opcode::NewWithVtable | Opcode::NewArray => count("allocation"),
                Opcode::SetfieldGc | Opcode::SetarrayitemGc => count("write"),
                Opcode::GetfieldGcI | Opcode::GetfieldGcR | Opcode::GetarrayitemGcI => {
                    count("read")
                }
                Opcode::CallI | Opcode::CallPureI => count("call"),
                Opcode::CallR => count("string helper"),
                Opcode::CallN => count("array copy"),
                Opcode::GetfieldGcF => count("float field read"),
                Opcode::FloatAdd
                | Opcode::FloatSub
                | Opcode::FloatMul
                | Opcode::FloatTruediv
                | Opcode::FloatNeg
                | Opcode::FloatAbs => count("float arithmetic"),
                Opcode::Newstr | Opcode::Newunicode => count("new string"),
                Opcode::Strsetitem | Opcode::Unicodesetitem => count("character write"),
                Opcode::Copystrcontent | Opcode::Copyunicodecontent => count("string copy"),
                Opcode::EscapeN => count("escape"),
                Opcode::GuardClass | Opcode::GuardNonnullClass | Opcode::GuardIsnull => {
                    count("guard on a reference")
                }
                _ => {}
            }
            if line.opcode.is_guard()
                && (line.fail_args.iter())
                    .any(|a| matches!(a, Operand::Value(n) if n.starts_with('p')))
            {
                count("guard holding an object");
            }
        }
    }
    for what in [
        "aliasing inputs",
        "allocation",
        "write",
        "read",
        "call",
        "escape",
        "guard on a reference",
        "guard holding an object",
        "float field read",
        "float arithmetic",
        "new string",
        "character write",
        "string given",
        "loop",
    ] {
        let n = seen.get(what).copied().unwrap_or(0);
        assert!(n >= 40, "only {n} of '{what}' in 200 traces: {seen:?}");
    }
    // Rarer: a copy needs two strings of a kind, a helper byte strings,
    // an array copy an array.
    for what in ["string copy", "string helper", "array copy"] {
        let n = seen.get(what).copied().unwrap_or(0);
        assert!(n >= 20, "only {n} of '{what}' in 200 traces: {seen:?}");
    }
}

/// One box, whose head is 1.
fn one_box() -> Vec<ExampleObject> {
    vec![ExampleObject::Instance {
        class: "box_vtable".into(),
        fields: vec![("headdescr".into(), ExampleValue::Int(1))],
    }]
}

#[test]
fn calls_write_only_what_they_can_reach() {
    let ns = Some(traceopt_fuzz::heapgen::namespace());
    for escaped in [false, true] {
        // A box given, and a box the trace makes, escaped or not, then a
        // call that may write every head field.
        let text = format!(
            "[p0]\np1 = new_with_vtable(descr=boxsize)\nsetfield_gc(p1, 5, descr=headdescr)\n{}\
             i2 = call_i(1, descr=opaquecalldescr)\ni3 = getfield_gc_i(p1, descr=headdescr)\n\
             i4 = getfield_gc_i(p0, descr=headdescr)\nescape_n(i3, i4)\nfinish()\n",
            if escaped { "escape_n(p1)\n" } else { "" }
        );
        let trace = traceopt_ir::parse_trace_with(&text, "t", ns.clone()).unwrap();
        let run = run_on(&trace, &one_box(), &[0]).unwrap();
        assert!(matches!(run.outcome, Outcome::Finished { .. }));
        let values = &run.escaped.last().unwrap().1;
        // The given box's head is the call's; the new box keeps 5 unless
        // it escaped first.
        assert_ne!(values[1], Val::Int(1), "the call wrote nothing it reaches");
        assert_eq!(values[0] == Val::Int(5), !escaped, "escaped: {escaped}");
    }
    // A call that writes nothing leaves the given box alone.
    let text = "[p0]\ni2 = call_i(1, descr=quietcalldescr)\n\
        i4 = getfield_gc_i(p0, descr=headdescr)\nfinish(i4)\n";
    let trace = traceopt_ir::parse_trace_with(text, "t", ns).unwrap();
    let run = run_on(&trace, &one_box(), &[0]).unwrap();
    assert!(matches!(run.outcome, Outcome::Finished { values } if values == [Val::Int(1)]));
}

#[test]
fn calls_write_float_fields_and_read_them() {
    let ns = Some(traceopt_fuzz::heapgen::namespace());
    let text = "[p0]\nsetfield_gc(p0, 2.5, descr=ratiodescr)\n\
        i1 = call_i(1, descr=opaquecalldescr)\nf2 = getfield_gc_f(p0, descr=ratiodescr)\n\
        finish(f2)\n";
    let trace = traceopt_ir::parse_trace_with(text, "t", ns.clone()).unwrap();
    let run = run_on(&trace, &one_box(), &[0]).unwrap();
    let Outcome::Finished { values } = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert!(matches!(values[0], Val::Float(x) if x != 2.5), "{values:?}");
    // The call's result depends on the float it may read.
    let result = |x: &str| {
        let text = format!(
            "[p0]\nsetfield_gc(p0, {x}, descr=ratiodescr)\n\
             i1 = call_i(1, descr=quietcalldescr)\nfinish(i1)\n"
        );
        let trace = traceopt_ir::parse_trace_with(&text, "t", ns.clone()).unwrap();
        run_on(&trace, &one_box(), &[0]).unwrap().outcome
    };
    assert_ne!(
        format!("{:?}", result("1.0")),
        format!("{:?}", result("2.0"))
    );
}

#[test]
fn samples_move_references_to_objects_of_their_kind() {
    let sketch = (0..50)
        .map(|seed| generate_heap(Entropy::seeded(seed), 10))
        .find(|s| {
            let boxes = |i: i64| s.heap[i as usize].kind() == "box_vtable";
            s.heap.iter().filter(|o| o.kind() == "box_vtable").count() >= 2
                && (s.inputs.iter()).any(|(n, v)| n.starts_with('p') && boxes(*v))
        })
        .expect("a trace with two boxes");
    let mut moved = false;
    for sample in samples(7, &sketch, 40) {
        for ((name, example), value) in sketch.inputs.iter().zip(&sample) {
            if !name.starts_with('p') || *value == -1 {
                continue;
            }
            let kind = |i: i64| sketch.heap[i as usize].kind();
            assert_eq!(kind(*value), kind(*example), "{name}");
            moved |= value != example;
        }
    }
    assert!(moved, "no sample moved a reference");
}

#[test]
fn a_call_result_depends_on_what_it_may_read() {
    let ns = Some(traceopt_fuzz::heapgen::namespace());
    let result = |field: &str, value: i64| {
        let text = format!(
            "[p0]\nsetfield_gc(p0, {value}, descr={field})\n\
             i1 = call_i(1, descr=tailreadercalldescr)\nfinish(i1)\n"
        );
        let trace = traceopt_ir::parse_trace_with(&text, "t", ns.clone()).unwrap();
        let run = run_on(&trace, &one_box(), &[0]).unwrap();
        match run.outcome {
            Outcome::Finished { values } => values[0],
            other => panic!("{other:?}"),
        }
    };
    // It reads the tail field, not the head.
    assert_ne!(result("taildescr", 3), result("taildescr", 4));
    assert_eq!(result("headdescr", 3), result("headdescr", 4));
}

#[test]
fn example_values_show_floats_by_value() {
    let shown = |v: ExampleValue| format!("{v:?}");
    assert_eq!(
        shown(ExampleValue::Float((-2.5f64).to_bits())),
        "Float(-2.5)"
    );
    assert_eq!(shown(ExampleValue::Float(f64::NAN.to_bits())), "Float(nan)");
    assert_eq!(shown(ExampleValue::Int(-3)), "Int(-3)");
    assert_eq!(shown(ExampleValue::Ref(None)), "Ref(None)");
}

#[test]
fn calls_that_may_raise_do_now_and_then() {
    // Over 40 inputs, a call that may raise fails its guard sometimes
    // and passes it mostly; one that cannot raise always passes it.
    let ns = Some(traceopt_fuzz::heapgen::namespace());
    let raised = |descr: &str| {
        let text = format!(
            "[i0]\ni1 = call_i(1, i0, descr={descr})\nguard_no_exception() []\nfinish(i1)\n"
        );
        let trace = traceopt_ir::parse_trace_with(&text, "t", ns.clone()).unwrap();
        (0..40)
            .filter(|&i| {
                let run = run_on(&trace, &[], &[i]).unwrap();
                matches!(run.outcome, Outcome::GuardFailed { .. })
            })
            .count()
    };
    let opaque = raised("opaquecalldescr");
    assert!((2..=20).contains(&opaque), "{opaque} of 40 raised");
    assert_eq!(raised("quietcalldescr"), 0);
}
