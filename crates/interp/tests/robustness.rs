//! The interpreter never panics: on every trace of the PyPy corpus, and on
//! random traces that mostly do not pass the checker (wrong arities,
//! wrong types, forward references, odd descrs and constants).

use traceopt_interp::{run, run_with_heap, DefaultEnv, Heap, Limits, Outcome, Val};
use traceopt_ir::{
    parse_log, Arg, Const, Descr, FailArg, Op, Opcode, Pos, Trace, Type, ValueId, Virtual, OP_TABLE,
};

fn zero_inputs(trace: &Trace) -> Vec<Val> {
    trace.inputs.iter().map(|&ty| Val::zero(ty)).collect()
}

/// Reference inputs point to distinct fresh instances instead of null, so
/// that runs get past the first field read.
fn object_inputs(trace: &Trace) -> (Vec<Val>, Heap) {
    let mut heap = Heap::new();
    let inputs = trace
        .inputs
        .iter()
        .map(|&ty| match ty {
            Type::Ref => Val::Ref(Some(heap.alloc_object(0))),
            ty => Val::zero(ty),
        })
        .collect();
    (inputs, heap)
}

#[test]
fn every_corpus_trace_runs_without_panic() {
    let dir = traceopt_ir::shared_dir().join("corpus/pypy-7.3.11");
    // The corpus must be there (CI checks out ../shared): a missing one
    // fails the test rather than skipping it.
    let logs = traceopt_ir::log::log_files(&dir).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the shared corpus sits beside the repo)",
            dir.display()
        )
    });
    assert!(!logs.is_empty(), "{}: no .log files", dir.display());
    let limits = Limits { max_iterations: 3 };
    let (mut traces, mut finished_or_left, mut errors) = (0, 0, 0);
    for path in &logs {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.display().to_string();
        let log = parse_log(&text, &name).unwrap_or_else(|e| panic!("{e}"));
        for lt in log.traces() {
            traces += 1;
            let result = run(&lt.trace, &zero_inputs(&lt.trace), &mut DefaultEnv, limits);
            let (inputs, heap) = object_inputs(&lt.trace);
            let with_objects = run_with_heap(&lt.trace, &inputs, heap, &mut DefaultEnv, limits);
            for r in [result, with_objects] {
                match r {
                    Ok(run) => {
                        finished_or_left += 1;
                        assert!(run.iterations <= limits.max_iterations);
                        if let Outcome::GuardFailed { op_index, .. } = run.outcome {
                            assert!(lt.trace.ops[op_index].opcode.is_guard());
                        }
                    }
                    Err(e) => {
                        errors += 1;
                        // Errors point at an op of the trace (or its end).
                        assert!(e.op_index.map_or(true, |i| i <= lt.trace.ops.len()), "{e}");
                    }
                }
            }
        }
    }
    println!(
        "{traces} corpus traces: {finished_or_left} runs ended, {errors} stopped with an error"
    );
    assert!(
        logs.is_empty() || traces > 100,
        "expected the corpus to hold many traces"
    );
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const DESCRS: &[&str] = &[
    "valuedescr",
    "<ArrayS 8>",
    "<ArrayP 8>",
    "<ArrayF 8>",
    "<FieldS node.value 8>",
    "<FieldP node.next 16>",
    "<FieldF node.f 24>",
    "<InteriorFieldDescr <FieldS entry.key 0>>",
    "<Calli 8 ii EF=0 OS=12>",
    "<Calli 8 ii EF=0 OS=14>",
    "<Callr 8 i EF=4>",
    "<SizeDescr 16>",
    "TargetToken(1)",
    "TargetToken(2)",
    "<Loop-1>",
    "<Loop3>",
];

fn random_const(rng: &mut Rng) -> Const {
    match rng.below(9) {
        0 => Const::Int(*rng.pick(&[0, 1, -1, 2, 7, 63, 64, i64::MIN, i64::MAX])),
        1 | 2 => Const::Int(rng.below(8) as i64 - 2),
        3 => Const::float(*rng.pick(&[0.0, -0.0, 1.5, f64::NAN, f64::INFINITY, 1e300])),
        4 => Const::Null,
        5 => Const::Ptr(rng.pick(&["a", "b"]).to_string().into()),
        6 => Const::Class(rng.pick(&["node_vtable", "other"]).to_string().into()),
        7 => Const::Str("text".into()),
        _ => Const::Int(rng.next() as i64),
    }
}

fn random_arg(rng: &mut Rng, trace: &mut Trace) -> Arg {
    let defined = trace.num_values();
    if defined > 0 && rng.below(3) > 0 {
        // Mostly earlier values, sometimes the op itself or a later one.
        Arg::Value(ValueId(rng.below(defined + 2) as u32))
    } else {
        let c = random_const(rng);
        Arg::Const(trace.add_const(c))
    }
}

fn random_trace(rng: &mut Rng) -> (Trace, Vec<Val>) {
    let mut trace = Trace::new();
    let mut inputs = Vec::new();
    for k in 0..rng.below(5) {
        let ty = *rng.pick(&[Type::Int, Type::Int, Type::Ref, Type::Float]);
        trace.add_input(ty, &format!("{}{k}", ty.letter()));
        inputs.push(match ty {
            Type::Int => Val::Int(rng.below(20) as i64 - 5),
            Type::Float => Val::Float(rng.below(5) as f64 - 1.5),
            _ => Val::NULL,
        });
    }
    let ops = 1 + rng.below(25);
    for i in 0..ops {
        let info = if i + 1 == ops && rng.below(4) > 0 {
            Opcode::Jump.info()
        } else {
            rng.pick(OP_TABLE)
        };
        // Usually the right number of arguments, sometimes not.
        let wanted = match info.arity() {
            traceopt_ir::Arity::Fixed(n) => n,
            traceopt_ir::Arity::AtLeast(n) => n + rng.below(3),
            traceopt_ir::Arity::Range(lo, hi) => lo + rng.below(hi - lo + 1),
        };
        let count = if rng.below(10) == 0 {
            rng.below(5)
        } else {
            wanted
        };
        let args: Vec<_> = (0..count).map(|_| random_arg(rng, &mut trace)).collect();
        let mut op = Op::new(info.opcode, args);
        if rng.below(4) > 0 {
            let text = DESCRS[rng.below(DESCRS.len())];
            op.descr = Some(trace.add_descr(Descr::parse(text).unwrap()));
        }
        if info.opcode.is_guard() && rng.below(2) == 0 {
            // Resume data, virtuals included, their references sometimes
            // out of range and their kinds and descrs sometimes wrong.
            let item = |rng: &mut Rng, trace: &mut Trace| match rng.below(6) {
                0 => FailArg::Hole,
                1 => FailArg::Virtual(rng.below(4) as u32),
                _ => FailArg::Arg(random_arg(rng, trace)),
            };
            op.fail_args = Some((0..rng.below(4)).map(|_| item(rng, &mut trace)).collect());
            for k in 0..rng.below(3) {
                let opcode = [
                    Opcode::New,
                    Opcode::NewWithVtable,
                    Opcode::NewArray,
                    Opcode::Newstr,
                    Opcode::Newunicode,
                    Opcode::IntAdd,
                ][rng.below(6)];
                let descr = (rng.below(3) > 0).then(|| {
                    let text = DESCRS[rng.below(DESCRS.len())];
                    trace.add_descr(Descr::parse(text).unwrap())
                });
                let fields = (0..rng.below(3))
                    .map(|_| {
                        let text = DESCRS[rng.below(DESCRS.len())];
                        (
                            trace.add_descr(Descr::parse(text).unwrap()),
                            item(rng, &mut trace),
                        )
                    })
                    .collect();
                let items = (0..rng.below(4)).map(|_| item(rng, &mut trace)).collect();
                op.virtuals.push(Virtual {
                    name: format!("pv{k}").into(),
                    opcode,
                    descr,
                    fields,
                    items,
                    site: None,
                });
            }
        }
        let name = format!("{}{}", info.result.letter(), trace.num_values());
        trace.push(op, &name, Pos::default());
    }
    (trace, inputs)
}

#[test]
fn random_traces_run_without_panic() {
    let limits = Limits { max_iterations: 3 };
    let mut outcomes = [0usize; 2];
    for seed in 1..=20_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let (trace, inputs) = random_trace(&mut rng);
        let result = std::panic::catch_unwind(|| run(&trace, &inputs, &mut DefaultEnv, limits));
        match result {
            Ok(r) => outcomes[usize::from(r.is_err())] += 1,
            Err(_) => panic!(
                "seed {seed} panicked on inputs {inputs:?} and trace\n{}",
                traceopt_ir::print_trace(&trace)
            ),
        }
    }
    // Both kinds of result occur, so the generator reaches the interesting parts.
    assert!(outcomes[0] > 500 && outcomes[1] > 500, "{outcomes:?}");
}
