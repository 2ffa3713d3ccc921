//! The oracle's categories: a pair the validator cannot take is its own
//! category, never agreement; an infeasibility claim is proved by the
//! validator when a solver is there, and sampled only when not.

use std::time::Duration;
use traceopt_fuzz::oracle::{check, Cleared};
use traceopt_ir::parse_trace;
use traceopt_opt::Passes;
use traceopt_smt::Solver;

fn solver() -> Solver {
    Solver::start(None, Duration::from_secs(10)).expect("an SMT solver (scripts/test installs z3)")
}

#[test]
fn a_pair_beyond_the_validator_is_counted_as_such() {
    let text = "[p0, p1, i2]\ni9 = gc_load_i(p0, 8, 8)\ni3 = int_add(i2, 0)\nfinish(i3)\n";
    let trace = parse_trace(text, "t").unwrap();
    let cleared = check(
        &trace,
        &[],
        &[0, 0, 5],
        &[],
        Passes::default(),
        Some(&mut solver()),
    );
    let Ok(Cleared::ValidatorError(why)) = cleared else {
        panic!("expected a validator error, got {cleared:?}");
    };
    assert!(why.contains("not supported"), "{why}");
    // Without a solver, only the runs were asked.
    let cleared = check(&trace, &[], &[0, 0, 5], &[], Passes::default(), None);
    assert_eq!(cleared, Ok(Cleared::RunsAgree { infeasible: false }));
}

#[test]
fn an_infeasibility_claim_is_proved_by_the_validator() {
    let text = "[i0]\ni1 = int_and(i0, 7)\ni2 = int_lt(i1, 8)\nguard_false(i2) []\nfinish(i1)\n";
    let trace = parse_trace(text, "t").unwrap();
    let samples = vec![vec![3], vec![-1]];
    let cleared = check(
        &trace,
        &[],
        &[0],
        &samples,
        Passes::default(),
        Some(&mut solver()),
    );
    assert_eq!(cleared, Ok(Cleared::Proved { infeasible: true }));
    let cleared = check(&trace, &[], &[0], &samples, Passes::default(), None);
    assert_eq!(cleared, Ok(Cleared::RunsAgree { infeasible: true }));
}

#[test]
fn the_oracle_pairs_allocations_as_the_optimizer_did() {
    // BEFORE allocates two boxes and lets the second out through two
    // reads of its link; AFTER allocates only that one. Paired in order,
    // AFTER's box would stand for BEFORE's first, and the end-to-end
    // counterexample would not replay; the optimizer's provenance pairs
    // them right, and the pair is proved.
    let text = "[p0]\np1 = new_with_vtable(descr=boxsize)\n\
        p2 = new_with_vtable(descr=boxsize)\nsetfield_gc(p2, p2, descr=linkdescr)\n\
        p4 = getfield_gc_r(p2, descr=linkdescr)\np9 = getfield_gc_r(p4, descr=linkdescr)\n\
        escape_n(p9)\nfinish()\n";
    let ns = Some(traceopt_fuzz::heapgen::namespace());
    let trace = traceopt_ir::parse_trace_with(text, "t", ns).unwrap();
    let cleared = check(
        &trace,
        &[],
        &[-1],
        &[],
        Passes::default(),
        Some(&mut solver()),
    );
    assert_eq!(cleared, Ok(Cleared::Proved { infeasible: false }));
}

#[test]
fn a_peeled_loop_is_compared_by_its_label_only_where_that_takes_the_inputs_as_they_are() {
    // The label takes i0 and i0 * 3 (carried); the loop's second input is
    // the constant 0, taken for granted. As many label arguments as
    // inputs, but not the inputs: comparing them place by place once
    // made a false finding.
    let text = "[i0, i1]\ni2 = int_mul(i0, 3)\nescape_n(i2)\njump(i0, 0)\n";
    let trace = parse_trace(text, "t").unwrap();
    let passes = Passes {
        peel: true,
        ..Passes::default()
    };
    let cleared = check(&trace, &[], &[5, 7], &[], passes, Some(&mut solver()));
    assert_eq!(cleared, Ok(Cleared::Proved { infeasible: false }));
}
