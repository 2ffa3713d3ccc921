//! The paper's running example (seed 001, "Allocation Removal by Partial
//! Evaluation in a Tracing JIT"): `examples/paper-figure2.trace`, its
//! Figure 2, becomes its Figure 4 by allocation removal alone, and seed
//! 004's peeled, unboxed loop with peeling; each output is the example
//! file's, op for op, and proved.

use std::sync::Arc;
use std::time::Duration;

use traceopt_ir::{parse_trace_with, print_trace, Namespace, Trace};
use traceopt_opt::{optimize, peel, Passes};
use traceopt_smt::Solver;
use traceopt_verify::{verify_aligned, verify_peeled, Verdict};

fn example(name: &str) -> Trace {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap();
    let namespace = Namespace::parse(&read("descrs.txt"), "descrs.txt").unwrap();
    parse_trace_with(&read(name), name, Some(Arc::new(namespace))).unwrap()
}

fn solver() -> Solver {
    Solver::start(None, Duration::from_secs(20)).expect("an SMT solver")
}

#[test]
fn figure_4_is_figure_2_after_allocation_removal() {
    let input = example("paper-figure2.trace");
    let passes = Passes::parse("virtuals,dce").unwrap();
    let out = optimize(&input, passes).unwrap();
    let expected = example("paper-figure4.trace");
    assert_eq!(print_trace(&out.trace), print_trace(&expected));
    // Two allocations of five, three class guards of seven (the paper's
    // count).
    let count = |opcode: traceopt_ir::Opcode| {
        out.trace
            .ops
            .iter()
            .filter(|op| op.opcode == opcode)
            .count()
    };
    assert_eq!(count(traceopt_ir::Opcode::NewWithVtable), 2);
    assert_eq!(count(traceopt_ir::Opcode::GuardClass), 3);
    let verdict = verify_aligned(&input, &out.trace, &out.provenance, &mut solver()).unwrap();
    assert_eq!(verdict, Verdict::Proved);
}

#[test]
fn peeled_it_is_seed_004s_unboxed_loop() {
    let input = example("paper-figure2.trace");
    let peeled = peel(&input, Passes::default()).unwrap().expect("a loop");
    let expected = example("paper-peeled.trace");
    assert_eq!(print_trace(&peeled.optimized.trace), print_trace(&expected));
    let out = &peeled.optimized;
    let verdict = verify_peeled(
        &input,
        &out.trace,
        &out.provenance,
        &peeled.state,
        &mut solver(),
    )
    .unwrap();
    assert_eq!(verdict, Verdict::Proved);
}

#[test]
fn the_peeled_loop_optimized_again_is_itself() {
    // Past its label, the loop's values are the label's arguments, which
    // each jump passes anew: nothing the preamble knew of them holds
    // there (the body's `i14 - 1` is no `i3 - 2`).
    let input = example("paper-peeled.trace");
    let out = optimize(&input, Passes::default()).unwrap();
    assert_eq!(print_trace(&out.trace), print_trace(&input));
    assert_eq!(traceopt_opt::malformed_output(&input, &out.trace), None);
    let verdict = verify_aligned(&input, &out.trace, &out.provenance, &mut solver()).unwrap();
    assert_eq!(verdict, Verdict::Proved);
}
