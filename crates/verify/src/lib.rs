//! Translation validation: does an optimized trace (AFTER) behave like its
//! input (BEFORE) for every input value?
//!
//! Both traces are encoded into one solver session over shared input
//! variables. For each trace we get: `pass`, the condition under which
//! every guard holds and the trace reaches its `jump`/`finish`; `defined`,
//! the condition that every op it executes is defined; its outputs (the
//! final op's arguments); and its escapes (the arguments of each
//! `escape_*`, whose results are shared fresh values, the k-th escape of
//! one trace giving the same value as the k-th of the other). The claim
//! proved is, for all inputs on which BEFORE is defined:
//!
//! - AFTER is defined too (an optimized trace may be more defined than its
//!   input, never less);
//! - both leave early (fail some guard) or both run to the end;
//! - when they run to the end, they end the same way (`jump` or `finish`),
//!   with equal outputs and equal escaped values.
//!
//! Where both fail the same guard (one with the same condition in both,
//! or, in the aligned form, one AFTER says it stands for), they must also
//! resume alike (`resume.rs`): the fail arguments both list, virtual
//! objects by their contents, and the heap. End to end, where AFTER fails
//! a guard with resume data that no BEFORE guard matches by condition,
//! BEFORE must fail one that resumes alike. Escapes of a run that leaves
//! early are not compared. This is the end-to-end form,
//! for any two traces (hand-written files, PyPy's expected outputs).
//! `verify_aligned` is the guard-by-guard form for traces whose guards
//! name the input guard they stand for, as an optimizer records. There an
//! AFTER guard may fail where the one it stands for passes, if BEFORE
//! then fails one of the next guards (`later_guards`): the two resume
//! alike at the earlier guard, and the interpreter resumed there does
//! what BEFORE does up to the later one (PyPy's guard strengthening rests
//! on this; so does every guard failure of a trace).
//! `verify_never_ends` checks an optimizer's claim that a trace can never
//! run to its end: wherever it is defined, some guard fails.
//!
//! A counterexample is replayed in the reference interpreter, which names
//! the first point where the two runs differ and both values; if the replay
//! shows no difference, the result is `Unreplayed` (an encoding bug or a
//! solver that lies), never a claim.
//! Integer ops are encoded here; the heap, calls and the other
//! non-integer ops in `heap.rs`. An op neither knows is reported by name.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use traceopt_interp::{
    default_call, ending, known_helper, run_with_heap, same_ending, same_resume, stable_address,
    Alike, Call, CallOutcome, DefaultEnv, Env, Fault, Heap, InterpError, Limits, MadeBy, ObjId,
    Outcome as Ended, Run, Val, KNOWN_HELPERS,
};
use traceopt_ir::{
    Arg, Const, Descr, Flags, Namespace, Op, Opcode, PureResult, SeenClass, Trace, Type, ValueId,
};
use traceopt_smt::encode::{
    encode, moved_off_constant, power_of_two_quotient, py_division_oopspec, truthy,
};

mod bridge;
mod copies;
mod equations;
pub use bridge::Scope;
mod exit;
mod heap;
mod loops;
mod pairing;
mod peel;
pub use exit::{verify_assuming, verify_exit_facts};
pub use peel::{verify_entry, verify_peeled};
mod reach;
mod slice;
mod strings;
use reach::{allocates, Seen, Sight, Site, Unreached};
mod resume;
mod seen;
mod sites;
use heap::{class_of_size, constant_identity, encode_heap_op, replay_heap, Before, Memory, World};
use resume::Resume;
use sites::Sites;
use slice::Slicer;
use strings::SpanMode;
use traceopt_smt::{Fun, Model, Name, Outcome, Solver, SolverError, SolverKind, Sort, Term};

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("{side}:{line}: {what} is not supported by the validator yet")]
    Unsupported {
        side: &'static str,
        line: u32,
        what: String,
    },
    #[error("the traces' inputs differ: BEFORE has ({before}), AFTER has ({after})")]
    Inputs { before: String, after: String },
    #[error("AFTER:{line}: {what} names no guard of BEFORE it stands for (the aligned form needs one for every guard)")]
    Provenance { line: u32, what: String },
    #[error(transparent)]
    Solver(#[from] SolverError),
}

/// A counterexample: input values and where the two runs part.
#[derive(Clone, Debug, PartialEq)]
pub struct Counterexample {
    pub inputs: Vec<(String, i64)>,
    /// Values of the escape results the counterexample needs, in order.
    pub escapes: Vec<i64>,
    pub difference: String,
}

impl fmt::Display for Counterexample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inputs: Vec<String> = self
            .inputs
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        write!(f, "inputs: {}", inputs.join(", "))?;
        if !self.escapes.is_empty() {
            write!(f, "; escape results: {:?}", self.escapes)?;
        }
        write!(f, "\n{}", self.difference)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Proved,
    /// A counterexample whose replay in the interpreter shows the runs
    /// differ (or, in the aligned form, a guard that breaks its alignment).
    Refuted(Counterexample),
    /// The solver did not decide (a timeout, usually).
    Unknown(String),
    /// The solver gave a counterexample on which the interpreter's runs of
    /// the two traces do not differ: an encoding bug or a solver that
    /// lies. Neither proved nor refuted; the text says why.
    Unreplayed(String),
}

/// The types of the words a trace shows where the two traces meet: its
/// observations (escapes and calls, their arguments and results, in
/// order), the results of its calls by number (`call{k}`) and of its
/// escapes (`esc{k}`). See `types_meet`.
#[derive(Default)]
struct Shown {
    observations: Vec<(Vec<Type>, Type)>,
    call_results: Vec<(u32, Type)>,
    escape_results: Vec<Type>,
}

/// What one trace does, as terms.
struct Side<'t> {
    pass: Term,
    /// Each partial op's "defined if", given that the op is reached.
    defined: Vec<Defined>,
    end: Option<(Opcode, Vec<Term>)>,
    escapes: Vec<Vec<Seen>>,
    /// Facts true of all inputs that help the solver (see `Encoded::lemma`).
    lemmas: Vec<Term>,
    guards: Vec<Guard>,
    /// The heap at the end.
    memory: Memory,
    trace: &'t Trace,
    /// Every value's term.
    values: Vec<Option<Term>>,
    /// Every object the trace allocates.
    allocated: Vec<Term>,
    /// Whether a call may have seen each fresh object (`reach.rs`).
    seen: Vec<Term>,
    /// What each call that observes the heap could see, in order.
    call_sights: Vec<Sight>,
    /// The types of what the trace shows the other (`types_meet`).
    shown: Shown,
    /// The prefix of the side's names.
    prefix: &'static str,
}

/// What makes an op defined: `cond`, where it is reached (`reached`;
/// `term` is `reached => cond`), for the op at `op`.
#[derive(Clone, PartialEq)]
struct Defined {
    op: usize,
    cond: Term,
    reached: Term,
    term: Term,
}

/// A guard: its op, its condition, and the condition of reaching it.
#[derive(Clone)]
struct Guard {
    op_index: usize,
    cond: Term,
    reached: Term,
    /// What the interpreter resumes with if it fails (`None` where a fail
    /// argument has no word: the guard's resume data is not compared).
    resume: Option<Resume>,
    /// What the interpreter that resumes can see of the fresh objects.
    sight: Sight,
    /// How many observations (escapes, calls) the trace made before it.
    observed: usize,
}

/// The end-to-end form's obligation that where AFTER fails a guard no
/// BEFORE guard matches, BEFORE fails one that resumes alike.
const UNMATCHED: &str =
    "AFTER fails a guard that no guard of BEFORE matches, and BEFORE fails none that resumes alike";

/// Proves `after` equivalent to `before` (end-to-end), or refutes it.
pub fn verify(before: &Trace, after: &Trace, solver: &mut Solver) -> Result<Verdict, VerifyError> {
    check(before, after, None, Given::default(), solver)
}

/// What a caller may add to a comparison.
#[derive(Clone, Copy, Default)]
pub struct Given<'g> {
    /// What pure calls of constant arguments return, as a test harness
    /// says (PyPy's `call_pure_results`): an optimizer may fold them.
    pub pure_results: &'g [PureResult],
    /// Leave resume data out (where the two traces' guards fail into
    /// layouts of their own, as PyPy's recorded and optimized bridges do).
    pub no_resume: bool,
    /// How many ops before BEFORE's final one check a claim of the
    /// caller's (the facts an optimizer says hold there): where reached,
    /// they must be defined, which is proved, not assumed. (Assumed, an
    /// undefined check would make BEFORE's run undefined, and any AFTER
    /// would do there.)
    pub checked_tail: usize,
    /// The ops of `checked_tail` are BEFORE's own, its guards too (an
    /// entry's tests of the state it passes on, which leave for the
    /// loop's start where they fail): their definedness alone is proved,
    /// and AFTER's guards may stand for them.
    pub tail_guards_leave: bool,
    /// Constant objects another recorded trace shows to be structs
    /// (`Trace::recorded_structs`): an entry's tests read fields of its
    /// loop's constants.
    pub structs: &'g [Box<str>],
    /// Guards of BEFORE that stand for a claim (`calls_left_out`): each
    /// must never fail, and none stands for a guard of AFTER.
    pub never_fail: &'g [usize],
    /// Ops of BEFORE that build what another of its ops makes (op, the
    /// other op): a peeled loop's label objects, made by the loop's
    /// allocation, of its class (`sites.rs`).
    pub built: &'g [(usize, usize)],
    /// The optimizer's provenance where the check is end to end: it still
    /// says which allocation of BEFORE each of AFTER's stands for.
    pub provenance: Option<&'g [Option<usize>]>,
    /// The classes of unnamed allocations of BEFORE (op, class) that
    /// claims of the optimizer gave, proved (`seen.rs`).
    pub seen_classes: &'g [(usize, Const)],
}

impl Given<'_> {
    /// The index of BEFORE's first op whose definedness is proved (its
    /// length where none is: a test fragment may end without a jump).
    fn defined_from(&self, before: &Trace) -> usize {
        match self.checked_tail {
            0 => before.ops.len(),
            tail => (before.ops.len().saturating_sub(1)).saturating_sub(tail),
        }
    }

    /// The index of BEFORE's first op that checks a claim: a guard from
    /// there on is no guard of BEFORE's own (its length where none is).
    fn checks_from(&self, before: &Trace) -> usize {
        match self.tail_guards_leave {
            true => before.ops.len(),
            false => self.defined_from(before),
        }
    }
}

/// `verify`, given more (see `Given`).
pub fn verify_given(
    before: &Trace,
    after: &Trace,
    given: Given<'_>,
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    check(before, after, None, given, solver)
}

/// How a PyPy bridge compares with the one PyPy recorded, in context.
#[derive(Clone, Debug, PartialEq)]
pub enum BridgeVerdict {
    /// For the runs the scope says.
    Proved(Scope),
    /// A counterexample, replayed in context. Not a refutation of PyPy:
    /// the context leaves out what PyPy knew from the loop's earlier
    /// iterations and from its own caches (calls are paired by order, fresh
    /// objects by where they go).
    Differs(Counterexample),
    Unknown(String),
}

/// A PyPy bridge, recorded and optimized, verified in context (see
/// `bridge`): `guard` is the address of its parent guard, `traces` the
/// log's optimized traces.
pub fn verify_bridge(
    recorded: &Trace,
    optimized: &Trace,
    guard: u64,
    traces: &[&traceopt_ir::LogTrace],
    solver: &mut Solver,
) -> Result<BridgeVerdict, VerifyError> {
    let pair = match bridge::bridge_in_context(recorded, optimized, guard, traces) {
        Ok(pair) => pair,
        Err(why) => return Ok(BridgeVerdict::Unknown(format!("not comparable: {why}"))),
    };
    let given = Given {
        no_resume: true,
        ..Given::default()
    };
    Ok(match check(&pair.before, &pair.after, None, given, solver)? {
        Verdict::Proved => BridgeVerdict::Proved(pair.scope),
        // Fresh objects are paired by where they go (`pairing`), a
        // heuristic; PyPy's optimizer delays and drops allocations.
        Verdict::Refuted(cex) if allocations(&pair.before) != allocations(&pair.after) => {
            BridgeVerdict::Unknown(format!(
                "the sides allocate different objects, and the validator pairs them by where they go, not by contents: its counterexample ({cex}) may rest on a wrong pairing"
            ))
        }
        Verdict::Refuted(cex) => BridgeVerdict::Differs(cex),
        Verdict::Unknown(why) | Verdict::Unreplayed(why) => BridgeVerdict::Unknown(why),
    })
}

/// What a trace allocates, in order (the op and its descr).
fn allocations(trace: &Trace) -> Vec<(Opcode, Option<&str>)> {
    (trace.ops.iter())
        .filter(|op| allocates(trace, op))
        .map(|op| (op.opcode, op.descr.map(|d| &*trace.descr(d).text)))
        .collect()
}

/// The guard-aligned form, for an optimizer's output: `provenance[k]` is,
/// for op `k` of AFTER, the index of the op of BEFORE it stands for, and
/// every guard of AFTER must have one. Taking BEFORE's guards in order,
/// each one kept must have the same condition as the AFTER guards that
/// stand for it, given that all earlier guards held; each one removed must
/// be always true there. Then the ends must agree as in `verify`. Smaller
/// queries than the end-to-end form, and a failure names the guard.
pub fn verify_aligned(
    before: &Trace,
    after: &Trace,
    provenance: &[Option<usize>],
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    check(before, after, Some(provenance), Given::default(), solver)
}

/// The validator for an optimizer's output (`traceopt opt --verify` and
/// the fuzzer): the guard-aligned form first, whose queries are smaller
/// and whose pairing of the two traces' allocations is the optimizer's
/// own (its provenance); where that settles nothing (a timeout, a
/// counterexample that does not replay, or guards that do not line up
/// although the runs end alike), the end-to-end form. An undecided answer
/// says why each form gave up. The optimizer's claims of the classes
/// its recorded guards saw (`seen`) are proved first (`seen.rs`).
pub fn verify_optimized(
    before: &Trace,
    after: &Trace,
    provenance: &[Option<usize>],
    seen: &[SeenClass],
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    let seen_classes = match seen::prove_seen_classes(before, seen, solver)? {
        Ok(classes) => classes,
        Err(not_proved) => return Ok(not_proved),
    };
    let given = Given {
        seen_classes: &seen_classes,
        ..Given::default()
    };
    verify_optimized_given(before, after, provenance, given, solver)
}

/// `verify_optimized`, given more (see `Given`).
pub(crate) fn verify_optimized_given(
    before: &Trace,
    after: &Trace,
    provenance: &[Option<usize>],
    given: Given<'_>,
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    let (tested, never_fail) = calls_left_out(before, provenance);
    let before = tested.as_ref().unwrap_or(before);
    let given = Given {
        never_fail: &never_fail,
        ..given
    };
    let aligned = check(before, after, Some(provenance), given, solver);
    match &aligned {
        Ok(Verdict::Proved) => return aligned,
        Ok(Verdict::Refuted(cex)) if !cex.difference.contains(ENDS_ALIKE) => return aligned,
        _ => {}
    }
    let given = Given {
        provenance: Some(provenance),
        ..given
    };
    let end_to_end = check(before, after, None, given, solver)?;
    let stuck = match aligned {
        Ok(Verdict::Unknown(why) | Verdict::Unreplayed(why)) => why,
        Ok(Verdict::Refuted(cex)) => cex.to_string(),
        Err(VerifyError::Solver(e)) => e.to_string(),
        _ => return Ok(end_to_end),
    };
    Ok(match end_to_end {
        Verdict::Unknown(why) => Verdict::Unknown(format!("{why}; guard by guard: {stuck}")),
        Verdict::Unreplayed(why) => Verdict::Unreplayed(format!("{why}; guard by guard: {stuck}")),
        decided => decided,
    })
}

/// BEFORE with each conditional call that no op of AFTER stands for
/// (`provenance`) made a guard that its condition is 0: the optimizer
/// claims the call is never made (it knew the condition), and a guard of
/// BEFORE that AFTER leaves out must be shown never to fail. Where the
/// condition is 0 the two mean the same: no call and no effect. Nor an
/// exception pending (which the call that is not made would leave so),
/// where it makes a difference: only calls are taken that follow no
/// call, or a `guard_no_exception` since the last one, or whose
/// exception state no guard tests before the next call. With the
/// indexes of those guards; `None` where there is none.
fn calls_left_out(before: &Trace, provenance: &[Option<usize>]) -> (Option<Trace>, Vec<usize>) {
    let kept: HashSet<usize> = provenance.iter().flatten().copied().collect();
    let left_out: Vec<usize> = (0..before.ops.len())
        .filter(|i| !kept.contains(i) && may_stand_as_guard(before, *i))
        .collect();
    if left_out.is_empty() {
        return (None, left_out);
    }
    let mut trace = before.clone();
    for &i in &left_out {
        let condition = trace.ops[i].args[0];
        trace.ops[i] = Op {
            fail_args: Some(Default::default()),
            ..Op::new(Opcode::GuardFalse, vec![condition])
        };
    }
    (Some(trace), left_out)
}

/// Whether BEFORE's op `i` is a conditional call on a value that a guard
/// that the condition is 0 may stand for where the call is not made: the
/// two leave the heap alike, and the exception state too where that
/// matters (`calls_left_out`).
pub(crate) fn may_stand_as_guard(before: &Trace, i: usize) -> bool {
    let op = &before.ops[i];
    if op.opcode != Opcode::CondCallN || !matches!(op.args.first(), Some(Arg::Value(_))) {
        return false;
    }
    use Opcode::{GuardException, GuardNoException, RestoreException, SaveExcClass, SaveException};
    let tests_exception = |op: &Op| {
        matches!(
            op.opcode,
            GuardNoException | GuardException | SaveExcClass | SaveException
        )
    };
    // (What sets the exception state: a call, or `restore_exception`.)
    let sets_exception = |op: &Op| op.opcode.has(Flags::CALL) || op.opcode == RestoreException;
    // (At the start, nothing is pending: a trace entered with an
    // exception saves it before any call, and the walk back meets that.)
    let nothing_pending = || {
        let mut back = (before.ops[..i].iter().rev())
            .skip_while(|op| !tests_exception(op) && !sets_exception(op));
        back.next().map_or(true, |op| {
            matches!(op.opcode, GuardNoException | SaveException)
        })
    };
    let untested = || {
        let mut on = (before.ops[i + 1..].iter())
            .skip_while(|op| !tests_exception(op) && !sets_exception(op));
        on.next().map_or(true, |op| !tests_exception(op))
    };
    nothing_pending() || untested()
}

/// Whether `trace` reads the exception pending at its entry: it saves
/// it (`save_exc_class`, `save_exception`) before any call, as PyPy's
/// bridges out of a failed guard on an exception do. Then it may be
/// entered with one pending (`World::entered_with_exception`); else the
/// validator takes it to be entered with none.
pub(crate) fn saves_entry_exception(trace: &Trace) -> bool {
    (trace.ops.iter())
        .take_while(|op| !op.opcode.has(Flags::CALL))
        .any(|op| matches!(op.opcode, Opcode::SaveExcClass | Opcode::SaveException))
}

/// Proves that `trace` can never run to its end (its `jump` or
/// `finish`): on every input where it is defined, some guard fails. This
/// is the claim an optimizer makes when it finds a guard that always
/// fails and drops the rest of the trace. `Refuted` gives inputs on which
/// the interpreter runs the trace to its end.
pub fn verify_never_ends(trace: &Trace, solver: &mut Solver) -> Result<Verdict, VerifyError> {
    let Unknowns {
        inputs,
        escapes: escape_vars,
        all: vars,
    } = solver_inputs(&[trace], "BEFORE")?;
    solver.push()?;
    let mut world = World::default();
    world.entered_with_exception = saves_entry_exception(trace);
    let slots = pairing::Slots::alone(trace);
    world.slots = Some((slots.count, slots.paired));
    let sites = Rc::new(Sites::before(trace, &[]));
    let result = (|| {
        begin(&[trace], &inputs, &vars, &sites, &mut world, solver)?;
        let side = encode_side(
            trace,
            ("BEFORE", "b", false),
            (&[], sites.clone()),
            &mut Shared::default(),
            &mut world,
            solver,
        )?;
        let facts = Term::and_all(world.facts().into_iter().chain(side.lemmas.iter().cloned()));
        let definedness = side.defined.iter().map(|d| d.term.clone());
        let assumptions = Term::and_all(std::iter::once(facts.clone()).chain(definedness));
        let goal = assumptions.implies(&side.pass.not());
        Ok::<_, VerifyError>(match prove(solver, &world, &goal, &vars)? {
            Outcome::Proved => consistent(solver, &world, &facts)?,
            other => other,
        })
    })();
    solver.pop()?;
    Ok(match result? {
        Outcome::Proved => Verdict::Proved,
        Outcome::Unknown(reason) => Verdict::Unknown(reason),
        Outcome::Counterexample(model) => {
            let (values, esc) = (words(&model, &inputs), words(&model, &escape_vars));
            let Some(start) = Start::from_model(trace, &world, &model, &values, &esc) else {
                return Ok(Verdict::Unreplayed(NOT_BUILT.into()));
            };
            let run = replay_run(trace, &start, &sites);
            let text = describe(trace, &run);
            if !run.is_ok_and(|r| !matches!(r.outcome, Ended::GuardFailed { .. })) {
                return Ok(Verdict::Unreplayed(format!(
                    "the solver's inputs {values:?} do not run the trace to its end in the interpreter (it {text}): an encoding bug, or a solver that lies"
                )));
            }
            Verdict::Refuted(Counterexample {
                inputs: named_inputs(trace, &values),
                escapes: esc,
                difference: format!("the trace runs to its end: it {text}"),
            })
        }
    })
}

/// The solver variables of a trace's inputs and of its escapes' results.
struct Unknowns {
    inputs: Vec<String>,
    escapes: Vec<String>,
    /// Both, in that order.
    all: Vec<String>,
}

/// Proves `goal` from the assumptions: first from those in its cone (a
/// proof there is a proof), then without what products and quotients
/// mean (likewise), then from everything; a counterexample, where arrays
/// are in play, one a replay can build.
fn settle(
    solver: &mut Solver,
    world: &World,
    (slicer, meanings, vars): (&Slicer, &Term, &[String]),
    goal: &Term,
) -> Result<Outcome, SolverError> {
    // (A cone takes long to find in a large trace.)
    if let Some(why) = solver.out_of_time() {
        return Ok(Outcome::Unknown(why.into()));
    }
    if let Some(cone) = slicer.cone(solver, goal) {
        if proves(solver, world, &cone.implies(goal))? {
            return Ok(Outcome::Proved);
        }
    }
    let assumptions = slicer.all();
    if *meanings != Term::Bool(true) && proves(solver, world, &assumptions.implies(goal))? {
        return Ok(Outcome::Proved);
    }
    let assumed = assumptions.and(meanings);
    match decide(solver, world, &assumed.implies(goal), vars)? {
        Outcome::Counterexample(_) if world.replayable_lengths() != Term::Bool(true) => {
            let small = assumed.and(&world.replayable_lengths());
            Ok(match prove(solver, world, &small.implies(goal), vars)? {
                Outcome::Proved => Outcome::Unknown(
                    "a difference only with an array or string longer than a replay builds".into(),
                ),
                other => other,
            })
        }
        other => Ok(other),
    }
}

/// `settle`, and where the solver gives up on a conjunction (outputs,
/// escapes and heap cells compared at once), each conjunct on its own, in
/// order, until one is not proved: a conjunct's counterexample is one of
/// the whole; one left open leaves the whole open. Smaller queries decide
/// what the whole leaves open (string comparisons of several outputs).
fn settle_or_split(
    solver: &mut Solver,
    world: &World,
    given: (&Slicer, &Term, &[String]),
    goal: &Term,
) -> Result<Outcome, SolverError> {
    let outcome = settle(solver, world, given, goal)?;
    if !matches!(outcome, Outcome::Unknown(_)) {
        return Ok(outcome);
    }
    let parts = conjuncts(goal);
    if parts.len() < 2 {
        return Ok(outcome);
    }
    for part in &parts {
        match settle(solver, world, given, part)? {
            Outcome::Proved => {}
            Outcome::Unknown(_) => return Ok(outcome),
            refuted => return Ok(refuted),
        }
    }
    Ok(Outcome::Proved)
}

/// The conjuncts of `goal`, nested conjunctions flattened, a premise
/// kept on each (`p -> (a and b)` is `p -> a`, `p -> b`).
fn conjuncts(goal: &Term) -> Vec<Term> {
    match goal {
        Term::App(Fun::And, parts) => parts.iter().flat_map(conjuncts).collect(),
        Term::App(Fun::Implies, parts) if parts.len() == 2 => conjuncts(&parts[1])
            .into_iter()
            .map(|q| parts[0].implies(&q))
            .collect(),
        other => vec![other.clone()],
    }
}

/// What the aligned form's refutation says where the guards do not line
/// up but the two runs end alike.
pub const ENDS_ALIKE: &str = "the two runs end alike on these inputs";

const NOT_BUILT: &str = "the solver's counterexample asks for a heap the interpreter cannot \
     build (an object read as two kinds, or too long an array): not a verdict";

/// Declares the unknowns of traces that share their inputs, registers the
/// heap cells their ops touch, and states that reference inputs are null
/// or objects from before.
fn begin(
    traces: &[&Trace],
    inputs: &[String],
    vars: &[String],
    sites: &Sites,
    world: &mut World,
    solver: &mut Solver,
) -> Result<(), VerifyError> {
    for name in vars {
        solver.declare(name, Sort::Bv(64))?;
    }
    for trace in traces {
        for op in &trace.ops {
            world.register(op.opcode, op.descr.map(|d| trace.descr(d)));
        }
        let vrefs = [Opcode::VirtualRef, Opcode::VirtualRefFinish];
        if trace.ops.iter().any(|op| vrefs.contains(&op.opcode)) {
            world.register_vref(&trace.vref_layout());
        }
        // String constants, with their contents (and cells).
        for c in trace.consts().filter(|c| matches!(c, Const::String { .. })) {
            constant(trace, c, world, solver)?;
        }
    }
    world.namespace = traces[0].namespace.clone();
    // What BEFORE's recording saw of the classes of its allocations.
    for (k, class) in traces[0].recorded_classes() {
        class_lemma(traces[0], (k, &class), sites, world, solver)?;
    }
    // What its recording shows to be structs.
    recorded_structs(traces[0], &traces[0].recorded_structs(), world, solver)?;
    for (name, ty) in inputs.iter().zip(&traces[0].inputs) {
        if *ty == Type::Ref {
            let fact = world.old_or_null(solver, &Term::var(name))?;
            world.lemmas.push(fact);
        }
        if *ty == Type::Float {
            world.lemmas.push(heap::one_nan(&Term::var(name)));
        }
    }
    Ok(())
}

/// States that BEFORE's op `k` makes objects of class `class`.
fn class_lemma(
    before: &Trace,
    (k, class): (usize, &Const),
    sites: &Sites,
    world: &mut World,
    solver: &mut Solver,
) -> Result<(), VerifyError> {
    let descr = before.ops[k].descr.map(|d| before.descr(d));
    let allocated = world.allocated_class(solver, descr, sites.key(MadeBy::Op(k)))?;
    let seen = constant(before, class, world, solver)?;
    world.lemmas.push(allocated.eq(&seen));
    Ok(())
}

/// States that the constant objects a recording shows to be structs
/// (`names`, as `trace` names them) are.
fn recorded_structs(
    trace: &Trace,
    names: &[Box<str>],
    world: &mut World,
    solver: &mut Solver,
) -> Result<(), VerifyError> {
    for name in names {
        let object = constant(trace, &Const::Ptr(name.as_ref().into()), world, solver)?;
        let is_struct = heap::a_struct(world, solver, &object)?;
        world.lemmas.push(is_struct);
    }
    Ok(())
}

/// A proof, unless the encoding's own `facts` (what it assumes of every
/// run, not what the traces do) contradict each other: a proof from
/// contradictory facts proves nothing (an encoding bug), and is
/// `Unknown`. The facts are built to hold together (a heap of zeros but
/// for what string constants and the namespace say of constant objects
/// satisfies them), so a contradiction is an encoding bug or contradictory
/// input, and shows quickly (two kinds for one object, two results of one
/// pure call); where the solver does not find their model within the
/// timeout (very large traces), the check has found nothing and the proof
/// stands.
fn consistent(solver: &mut Solver, world: &World, facts: &Term) -> Result<Outcome, SolverError> {
    let not = facts.not();
    let outcome = match world.beyond_bitvectors() {
        true => solver.prove_smt(&not, &[])?,
        false => solver.prove_bv_names(&not, &[])?,
    };
    Ok(match outcome {
        Outcome::Counterexample(_) | Outcome::Unknown(_) => Outcome::Proved,
        Outcome::Proved => Outcome::Unknown(
            "the validator's own facts about these traces contradict each other (an encoding \
             bug), so its proof proves nothing"
                .into(),
        ),
    })
}

/// Proves `goal`: bit-blasted where it is only bitvectors.
fn prove(
    solver: &mut Solver,
    world: &World,
    goal: &Term,
    vars: &[String],
) -> Result<Outcome, SolverError> {
    let mut names: Vec<Name> = vars.iter().map(|v| Name::invented(v)).collect();
    names.extend(world.watched());
    prove_naming(solver, world, goal, &names)
}

/// Whether `goal` is proved, where a counterexample would not be used:
/// no model is asked for (reading one back can take longer than
/// finding it).
fn proves(solver: &mut Solver, world: &World, goal: &Term) -> Result<bool, SolverError> {
    Ok(prove_naming(solver, world, goal, &[])? == Outcome::Proved)
}

/// `prove`, reading back the values of `names` on a counterexample.
fn prove_naming(
    solver: &mut Solver,
    world: &World,
    goal: &Term,
    names: &[Name],
) -> Result<Outcome, SolverError> {
    if world.span_mode != SpanMode::Witness {
        // Character-by-character string equalities: z3's equation
        // solving decides some of these queries fast and blows others up,
        // so where it gives up the query is asked once more without.
        let outcome = solver.prove_smt(goal, names)?;
        if !matches!(outcome, Outcome::Unknown(_)) {
            return Ok(outcome);
        }
        solver.prove_smt_keeping_equations(goal, names)
    } else if world.beyond_bitvectors() {
        solver.prove_smt(goal, names)
    } else {
        solver.prove_bv_names(goal, names)
    }
}

/// `prove`, with cvc5's answer where it is installed and decides: first
/// on IEEE float arithmetic (z3 4.8 times out on most of it), else where
/// z3 gives up; neither where the solver is set to ask no second opinion
/// (a fuzzing campaign, which cannot wait for a second process).
fn decide(
    solver: &mut Solver,
    world: &World,
    query: &Term,
    vars: &[String],
) -> Result<Outcome, SolverError> {
    if world.float_meanings && solver.second_opinions() {
        if let Some(outcome) = second_opinion(solver, world, query, vars) {
            return Ok(outcome);
        }
    }
    let outcome = prove(solver, world, query, vars)?;
    if matches!(outcome, Outcome::Unknown(_)) && !world.float_meanings && solver.second_opinions() {
        return Ok(second_opinion(solver, world, query, vars).unwrap_or(outcome));
    }
    Ok(outcome)
}

/// `prove` by cvc5 instead of z3, if cvc5 is installed and decides it.
fn second_opinion(
    solver: &mut Solver,
    world: &World,
    goal: &Term,
    vars: &[String],
) -> Option<Outcome> {
    if solver.kind() != SolverKind::Z3 {
        return None;
    }
    let mut names: Vec<Name> = vars.iter().map(|v| Name::invented(v)).collect();
    names.extend(world.watched());
    match solver.prove_smt_by(SolverKind::Cvc5, goal, &names) {
        Ok(outcome @ (Outcome::Proved | Outcome::Counterexample(_))) => Some(outcome),
        _ => None,
    }
}

/// The unknowns of traces that share their inputs (the first one's),
/// after checking that the validator takes those inputs.
fn solver_inputs(traces: &[&Trace], side: &'static str) -> Result<Unknowns, VerifyError> {
    let trace = traces[0];
    for (i, &ty) in trace.inputs.iter().enumerate() {
        if !matches!(ty, Type::Int | Type::Ref | Type::Float) {
            let what = format!("input {} of type {ty}", trace.name(ValueId(i as u32)));
            return Err(VerifyError::Unsupported {
                side,
                line: trace.input_pos.line,
                what,
            });
        }
    }
    let inputs: Vec<String> = (0..trace.inputs.len()).map(|i| format!("in{i}")).collect();
    let escapes = traces
        .iter()
        .map(|t| t.ops.iter().filter(|op| is_escape(op.opcode)).count())
        .max()
        .unwrap_or(0);
    let escape_vars: Vec<String> = (0..escapes).map(|k| format!("esc{k}")).collect();
    let all: Vec<String> = inputs.iter().chain(&escape_vars).cloned().collect();
    Ok(Unknowns {
        inputs,
        escapes: escape_vars,
        all,
    })
}

/// The model's values of the named words (0 where it gives none).
fn words(model: &Model, names: &[String]) -> Vec<i64> {
    names.iter().map(|n| model.i64(n).unwrap_or(0)).collect()
}

/// Input values paired with the trace's names for them.
fn named_inputs(trace: &Trace, values: &[i64]) -> Vec<(String, i64)> {
    (0..values.len())
        .map(|i| (trace.name(ValueId(i as u32)).to_string(), values[i]))
        .collect()
}

/// Compares the two traces: as loops where either loops back to a label
/// inside it (`loops.rs`), else by one run of each (`check_one_pass`).
fn check(
    before: &Trace,
    after: &Trace,
    provenance: Option<&[Option<usize>]>,
    given: Given<'_>,
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    // Encoding the traces takes long where they are large: not when no
    // query would be asked.
    if let Some(why) = solver.out_of_time() {
        return Ok(Verdict::Unknown(why.into()));
    }
    match loops::check_loops(before, after, provenance, given, solver)? {
        Some(verdict) => Ok(verdict),
        None => check_one_pass(before, after, provenance, given, solver),
    }
}

/// One run of each trace from its start compared (where a trace loops
/// back to a label inside it, its first pass only: `loops.rs`):
/// `check_once`, and where its counterexample does not replay and the
/// traces compare strings of unknown length, again with those equalities
/// stated exactly where short (`strings::SpanMode::ShortExact`): a larger
/// query, which decides them where the first leaves them open; and last
/// with every such span assumed short (`ShortOnly`), whose refutation
/// alone counts, as its proof covers short spans only. Where the exact
/// query gives up, the verdict is unknown (the solver's limit) rather
/// than the first query's counterexample that does not replay (which
/// reads as an encoding bug).
fn check_one_pass(
    before: &Trace,
    after: &Trace,
    provenance: Option<&[Option<usize>]>,
    given: Given<'_>,
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    let (before, after) = (
        copies::with_typed_array_copies(before),
        copies::with_typed_array_copies(after),
    );
    let mut once = |mode| check_once(&before, &after, provenance, given, mode, solver);
    let (verdict, spans) = once(SpanMode::Witness)?;
    if !matches!(verdict, Verdict::Unreplayed(_)) || !spans {
        return Ok(verdict);
    }
    let (again, _) = once(SpanMode::ShortExact)?;
    if matches!(again, Verdict::Proved | Verdict::Refuted(_)) {
        return Ok(again);
    }
    let (short_only, _) = once(SpanMode::ShortOnly)?;
    Ok(match (short_only, again) {
        (refuted @ Verdict::Refuted(_), _) => refuted,
        // The exact query gave up: the solver's limit, not a sign of an
        // encoding bug, which the first counterexample alone would suggest.
        (_, Verdict::Unknown(why)) => Verdict::Unknown(format!(
            "{why} (asked again with short strings compared character by character, after a \
             counterexample that needed them and did not replay)"
        )),
        _ => verdict,
    })
}

/// Proves `after` equivalent to `before`, or refutes it, with string
/// equalities of unknown length stated as `span_mode` says. Also says
/// whether there were any.
fn check_once(
    before: &Trace,
    after: &Trace,
    provenance: Option<&[Option<usize>]>,
    given: Given<'_>,
    span_mode: SpanMode,
    solver: &mut Solver,
) -> Result<(Verdict, bool), VerifyError> {
    let pure_results = given.pure_results;
    let types = |t: &Trace| {
        t.inputs
            .iter()
            .map(|ty| ty.letter().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if before.inputs != after.inputs {
        return Err(VerifyError::Inputs {
            before: types(before),
            after: types(after),
        });
    }
    let Unknowns {
        inputs,
        escapes: escape_vars,
        all: vars,
    } = solver_inputs(&[before, after], "BEFORE")?;

    solver.push()?;
    let mut world = World::default();
    world.opaque_arithmetic = [before, after].iter().any(|t| uses_heap(t));
    world.entered_with_exception = saves_entry_exception(before);
    world.span_mode = span_mode;
    // The guards of BEFORE and AFTER, by op, whose resume data is compared.
    let mut failing_pairs: Vec<(usize, usize)> = Vec::new();
    // End to end, the optimizer's provenance still pairs the allocations
    // (in order alone, a dropped one takes the place of a kept one).
    let claimed = provenance.or(given.provenance);
    let slots = pairing::Slots::of(before, after, claimed);
    let b_sites = Rc::new(Sites::before(before, given.built));
    let a_sites = Sites::after(after, (before, &b_sites), claimed, &slots.partners);
    let a_sites = Rc::new(a_sites);
    let result = (|| {
        begin(
            &[before, after],
            &inputs,
            &vars,
            &b_sites,
            &mut world,
            solver,
        )?;
        recorded_structs(before, given.structs, &mut world, solver)?;
        for (k, class) in given.seen_classes {
            class_lemma(before, (*k, class), &b_sites, &mut world, solver)?;
        }
        let mut shared = Shared::default();
        world.slots = Some((slots.count, slots.paired.clone()));
        let mut b = encode_side(
            before,
            ("BEFORE", "b", true),
            (&[], b_sites.clone()),
            &mut shared,
            &mut world,
            solver,
        )?;
        let mut a = encode_side(
            after,
            ("AFTER", "a", true),
            (&slots.after, a_sites.clone()),
            &mut shared,
            &mut world,
            solver,
        )?;
        let same_end = match (&b.end, &a.end) {
            (Some((bo, bv)), Some((ao, av))) if bo == ao && bv.len() == av.len() => {
                Term::and_all(bv.iter().zip(av).map(|(x, y)| same(x, y)))
            }
            // Partial traces (test fragments) end without outputs.
            (None, None) => Term::Bool(true),
            _ => Term::Bool(false),
        };
        let same_escapes = if b.escapes.len() == a.escapes.len() {
            Term::and_all(b.escapes.iter().zip(&a.escapes).flat_map(|(x, y)| {
                let same_len = Term::Bool(x.len() == y.len());
                std::iter::once(same_len).chain(x.iter().zip(y).map(|(p, q)| same_seen(p, q)))
            }))
        } else {
            Term::Bool(false)
        };
        // Taken once both traces are encoded, so that both cover every
        // kind of cell either one touches.
        let b_heap = b.memory.snapshot(&mut world, solver)?;
        let a_heap = a.memory.snapshot(&mut world, solver)?;
        let cells = world.cells().to_vec();
        let mut in_sight = |side: &mut Side| {
            let values = side.values.clone();
            let end = Point {
                trace: side.trace,
                end: side.trace.ops.len(),
                failing: false,
                values: &values,
                seen: &side.seen,
                name: format!("{}_reached", side.prefix),
                resume: None,
                call: None,
            };
            Ok::<_, VerifyError>(
                end.unreached(&mut side.memory, &mut shared, &mut world, solver)?
                    .0,
            )
        };
        let (b_sight, a_sight) = (in_sight(&mut b)?, in_sight(&mut a)?);
        let mut same_heap = Vec::new();
        let mut cleared = Vec::new();
        let base = world.base(solver)?;
        for ((x, y), cell) in b_heap.iter().zip(&a_heap).zip(&cells) {
            let initial = world.initial_array(cell).expect("a cell of the snapshot");
            let key = world.any_key(solver, cell)?;
            // What a fresh array holds there before the traces write it
            // is zero, as a read of it says (`Memory::read`): a copy of a
            // fresh array's zeros into another is no difference.
            if matches!(cell, heap::Cell::Item(_)) {
                let old = reach::key_object(&key, cell).bv(Fun::BvUlt, &base);
                cleared.push(old.not().implies(&initial.select(&key).eq(&Term::word(0))));
            }
            let x = b_sight.seen(x, &initial, cell, &key);
            let y = a_sight.seen(y, &initial, cell, &key);
            same_heap.push(same_seen(&x, &y));
        }
        let same_heap = Term::and_all(same_heap);
        for given in pure_results {
            let args = (given.args.iter())
                .map(|c| constant(before, c, &mut world, solver))
                .collect::<Result<Vec<_>, _>>()?;
            let result = constant(before, &given.result, &mut world, solver)?;
            world.pure_result(solver, &args, &result)?;
        }
        if let Some(namespace) = before.namespace.as_deref() {
            world.constant_facts(solver, namespace)?;
        }
        if !types_meet(&b, &a) {
            world.addresses_exposed = true;
        }
        let mut assumed: Vec<Term> = world.facts();
        assumed.extend(b.lemmas.iter().chain(&a.lemmas).cloned());
        assumed.extend(cleared);
        // The encoding's own facts, which some heap must satisfy: if they
        // contradict each other, every goal follows (see below).
        let facts = Term::and_all(assumed.clone());
        // BEFORE's own ops are defined; the checks at its end are shown
        // to be.
        let checks_from = given.checks_from(before);
        let defined_from = given.defined_from(before);
        let (b_own, b_checks): (Vec<&Defined>, Vec<&Defined>) =
            b.defined.iter().partition(|d| d.op < defined_from);
        assumed.extend(b_own.iter().map(|d| d.term.clone()));
        let checks_defined = Term::and_all(b_checks.iter().map(|d| d.term.clone()));
        let end = Term::and_all([same_end, same_escapes, same_heap]);
        // AFTER's definedness, less what BEFORE's already gives.
        let a_defined = Term::and_all(
            (a.defined.iter())
                .filter(|d| !b.defined.iter().any(|e| e.term == d.term))
                .map(|d| match provenance {
                    Some(p) => defined_where_before_is(&b, &a, p, d),
                    None => d.term.clone(),
                }),
        );
        let pairs = match provenance {
            None => shared_guards(&b, &a, checks_from, given.never_fail),
            Some(provenance) => aligned_guards(&b, &a, provenance),
        };
        // The first `alignment` obligations are the aligned form's guard
        // by guard ones, which a counterexample refutes even where the
        // runs end alike; the others need a replayed difference.
        let (mut obligations, alignment) = match provenance {
            None => (end_to_end_obligations(&b, &a, end, given.never_fail), 0),
            Some(provenance) => {
                let mut obligations = guard_obligations(
                    before,
                    after,
                    (&b, &a),
                    provenance,
                    checks_from,
                    given.never_fail,
                )?;
                let alignment = obligations.len();
                obligations.push(("the traces end differently".into(), b.pass.implies(&end)));
                (obligations, alignment)
            }
        };

        let mut resumes = Vec::new();
        let compared = if given.no_resume { &[][..] } else { &pairs[..] };
        for &(g, m) in compared {
            let (g, m) = (&b.guards[g], &a.guards[m]);
            if let (Some(x), Some(y)) = (&g.resume, &m.resume) {
                // AFTER's guard fails: so does BEFORE's, or a later one
                // that AFTER's fails in the place of (`guard_obligations`).
                let both_fail = Term::and_all([g.reached.clone(), m.reached.clone(), m.cond.not()]);
                let sights = [&g.sight, &m.sight];
                let allocated = [b.allocated.as_slice(), a.allocated.as_slice()];
                let agree = resume::agree(x, y, sights, allocated, &mut world, solver)?;
                resumes.push(both_fail.implies(&agree));
            }
        }
        // One obligation per pair of guards: together, one query had to
        // be split into every cell of every pair.
        for resume in resumes {
            obligations.push((
                "the traces resume differently where they fail the same guard".into(),
                resume,
            ));
        }
        // End to end, the pairs above are guards with the same condition.
        // Where AFTER fails a guard with resume data of its own that no
        // BEFORE guard matches so, BEFORE must fail some guard there that
        // resumes alike.
        if provenance.is_none() && !given.no_resume {
            let paired: HashSet<usize> = pairs.iter().map(|&(_, m)| m).collect();
            let mut unmatched = Vec::new();
            for (j, h) in a.guards.iter().enumerate() {
                let explicit = after.ops[h.op_index].fail_args.is_some();
                let Some(y) = h
                    .resume
                    .as_ref()
                    .filter(|_| explicit && !paired.contains(&j))
                else {
                    continue;
                };
                let mut alike = Vec::new();
                let partners = (b.guards.iter()).filter(|g| {
                    g.op_index < checks_from && !given.never_fail.contains(&g.op_index)
                });
                for g in partners {
                    let Some(x) = &g.resume else { continue };
                    let sights = [&g.sight, &h.sight];
                    let allocated = [b.allocated.as_slice(), a.allocated.as_slice()];
                    let agree = resume::agree(x, y, sights, allocated, &mut world, solver)?;
                    alike.push(Term::and_all([g.reached.clone(), g.cond.not(), agree]));
                }
                let fails = h.reached.and(&h.cond.not());
                unmatched.push(fails.implies(&Term::or_all(alike)));
            }
            obligations.push((UNMATCHED.into(), Term::and_all(unmatched)));
        }
        failing_pairs = compared
            .iter()
            .map(|&(g, m)| (b.guards[g].op_index, a.guards[m].op_index))
            .collect();
        obligations.push(("AFTER is less defined than BEFORE".into(), a_defined));
        obligations.push((
            "a check of what the optimizer claims is undefined".into(),
            checks_defined,
        ));
        // The traces' reach proved alike where they name it apart
        // (`sight_equations`): BEFORE's name then stands for AFTER's.
        let calls = b.call_sights.iter().zip(&a.call_sights);
        let guards = (pairs.iter()).map(|&(g, m)| (&b.guards[g].sight, &a.guards[m].sight));
        let points = calls.chain(guards).chain([(&b_sight, &a_sight)]);
        let equations = equations::sight_equations(points);
        if !equations.is_empty() {
            let slicer = Slicer::new(solver, &assumed);
            for (x, y) in equations::proved_equations(solver, &world, &slicer, equations)? {
                if let Term::Var(name) = &x {
                    solver.alias(name, &y);
                }
            }
        }
        let assumptions = Slicer::new(solver, &assumed);
        let meanings = Term::and_all(world.arithmetic_meanings.clone());
        let mut asked = false;
        for (k, (what, goal)) in obligations.into_iter().enumerate() {
            let what = (what, k < alignment);
            if goal == Term::Bool(true) {
                continue; // settled here: both traces compute it alike
            }
            asked = true;
            let given = (&assumptions, &meanings, &vars[..]);
            match settle_or_split(solver, &world, given, &goal)? {
                Outcome::Proved => {}
                other => return Ok((what, other)),
            }
        }
        // The products' and quotients' meanings are definitions of what
        // the facts leave opaque: the facts alone are checked.
        let proved = match asked {
            true => consistent(solver, &world, &facts)?,
            false => Outcome::Proved,
        };
        Ok::<_, VerifyError>(((String::new(), false), proved))
    })();
    solver.pop()?;
    let ((what, alignment), outcome) = result?;
    let spans = !world.span_equalities.is_empty();
    let verdict = (|| -> Result<Verdict, VerifyError> {
        Ok(match outcome {
            Outcome::Proved => Verdict::Proved,
            Outcome::Unknown(reason) if what.is_empty() => Verdict::Unknown(reason),
            Outcome::Unknown(reason) => Verdict::Unknown(format!("{reason} ({what})")),
            Outcome::Counterexample(model) => {
                let (values, esc) = (words(&model, &inputs), words(&model, &escape_vars));
                let Some(mut start) = Start::from_model(before, &world, &model, &values, &esc)
                else {
                    return Ok(Verdict::Unreplayed(NOT_BUILT.into()));
                };
                start.pure_results = pure_results.to_vec();
                let defined_from = given.defined_from(before);
                let sites = [&*b_sites, &*a_sites];
                let replayed = replay(before, after, &start, sites, &failing_pairs, defined_from);
                let difference = match (replayed, alignment) {
                    (Some(difference), _) if what.is_empty() => difference,
                    (Some(difference), _) => format!("{what}: {difference}"),
                    // A broken alignment refutes the aligned form even when the
                    // two runs end alike on these inputs.
                    (None, true) => format!("{what} ({ENDS_ALIKE})"),
                    (None, false) if what == UNMATCHED => {
                        return Ok(Verdict::Unknown(format!(
                            "{what}: on inputs {values:?} the solver finds resume data that may differ, which the replay does not show"
                        )));
                    }
                    (None, false) => {
                        let claim = if what.is_empty() {
                            String::new()
                        } else {
                            format!(" ({what})")
                        };
                        return Ok(Verdict::Unreplayed(format!(
                        "the solver's counterexample{claim} {values:?} does not replay in the interpreter (a meaning the validator gives an op that the interpreter does not, an encoding bug, or a solver that lies)"
                    )));
                    }
                };
                if let Some(helpers) = helper_calls_differ(before, after) {
                    return Ok(Verdict::Unknown(format!(
                    "the traces call helpers PyPy knows the meaning of differently ({helpers}); the validator takes a call as any function, so its counterexample ({difference}) may be no run of the real helpers"
                )));
                }
                Verdict::Refuted(Counterexample {
                    inputs: named_inputs(before, &values),
                    escapes: esc,
                    difference,
                })
            }
        })
    })()?;
    Ok((verdict, spans))
}

/// Where the two traces call helpers with an oopspec (`OS=N`: array
/// copies, unicode helpers, ...) that the interpreter does not run (it
/// runs Python division and the byte-string helpers), and not alike: each trace's helper calls, as function
/// and oopspec, in order. An optimizer that knows a helper's meaning may
/// replace or drop its calls; the validator, which does not, would
/// refute what is right.
fn helper_calls_differ(before: &Trace, after: &Trace) -> Option<String> {
    // None, py_div, py_mod, and jit_force_virtual: both run a finished
    // vref's alike (`heap::force_finished_vref`), and take any other as
    // a call of any function, which only an optimizer that drops it
    // tells apart.
    const MODELED: [u32; 4] = [0, 12, 14, traceopt_ir::oopspec::JIT_FORCE_VIRTUAL];
    let modeled = |os: &u32| MODELED.contains(os) || KNOWN_HELPERS.contains(os);
    let helpers = |trace: &Trace| -> Vec<(String, u32)> {
        (trace.ops.iter())
            .filter(|op| op.opcode.has(traceopt_ir::Flags::CALL))
            .filter_map(|op| {
                let descr = trace.descr(op.descr?);
                let os = descr.as_call()?.oopspec.filter(|os| !modeled(os))?;
                let func = match op.args.first() {
                    Some(Arg::Const(c)) => {
                        let mut text = String::new();
                        traceopt_ir::print::write_const(&mut text, trace.constant(*c));
                        text
                    }
                    _ => "?".into(),
                };
                Some((func, os))
            })
            .collect()
    };
    let (b, a) = (helpers(before), helpers(after));
    if b == a {
        return None;
    }
    let show = |calls: &[(String, u32)]| match calls.len() {
        0 => "none".to_string(),
        _ => (calls.iter())
            .map(|(f, os)| format!("{f} OS={os}"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    Some(format!("BEFORE: {}; AFTER: {}", show(&b), show(&a)))
}

/// `x == y`, settled without the solver when both are the same term.
fn same(x: &Term, y: &Term) -> Term {
    if x == y {
        Term::Bool(true)
    } else {
        x.eq(y)
    }
}

/// Two traces' views of a kind of cell (or of a word) agree: the same
/// stores onto the same array, values included, or else the same at the
/// comparison's key.
fn same_seen(x: &Seen, y: &Seen) -> Term {
    let (mut a, mut b) = (&x.stores, &y.stores);
    let mut values = Vec::new();
    loop {
        match (a, b) {
            (Term::App(Fun::Store, p), Term::App(Fun::Store, q)) if p[1] == q[1] => {
                values.push(same(&p[2], &q[2]));
                (a, b) = (&p[0], &q[0]);
            }
            // Equal stored values are enough, and far easier for the
            // solver than the key, with every key a possible alias.
            _ if shallow_eq(a, b) => {
                return match Term::and_all(values) {
                    Term::Bool(true) => Term::Bool(true),
                    values => values.or(&same(&x.at_key, &y.at_key)),
                }
            }
            _ => return same(&x.at_key, &y.at_key),
        }
    }
}

/// `a == b` known without walking either term: the same node, or equal
/// leaves. (A structural comparison walks a shared subterm once per path
/// to it, which is exponential on the heaps `resume::without` builds.)
fn shallow_eq(a: &Term, b: &Term) -> bool {
    match (a, b) {
        (Term::App(f, p), Term::App(g, q)) => f == g && std::rc::Rc::ptr_eq(p, q),
        (Term::App(..) | Term::Forall(..), _) | (_, Term::App(..) | Term::Forall(..)) => false,
        _ => a == b,
    }
}

/// The obligation of the end-to-end form. BEFORE runs to its end where
/// all its guard conditions hold: those AFTER has too (`common`) and the
/// ones it dropped (`removed`); AFTER where `common` and its own new ones
/// (`new`) hold. So the claim is: given `common`, `removed` holds exactly
/// when `new` does, and then the ends agree. Asked this way, the guards
/// both traces keep (usually most, with their `guard_value`s) are plain
/// facts the solver propagates before it bit-blasts, and one query covers
/// the whole claim. (`b.pass == a.pass` in one query hides every guard in
/// a disjunction, and is hundreds of times slower on some traces.) The
/// obligation's name stays empty: a counterexample is described by its
/// replay.
fn end_to_end_obligations(
    b: &Side,
    a: &Side,
    end: Term,
    never_fail: &[usize],
) -> Vec<(String, Term)> {
    let b_conds: HashSet<&Term> = b.guards.iter().map(|g| &g.cond).collect();
    let a_conds: HashSet<&Term> = a.guards.iter().map(|g| &g.cond).collect();
    // A claim's guard is never common: it must hold, as a removed one.
    let common = |g: &&Guard| a_conds.contains(&g.cond) && !never_fail.contains(&g.op_index);
    let conds = |gs: &mut dyn Iterator<Item = &Guard>| Term::and_all(gs.map(|g| g.cond.clone()));
    let common_conds = conds(&mut b.guards.iter().filter(common));
    let removed = conds(&mut b.guards.iter().filter(|g| !common(g)));
    let new = conds(&mut a.guards.iter().filter(|g| !b_conds.contains(&g.cond)));
    let agree = if new == Term::Bool(true) {
        removed.and(&end)
    } else {
        Term::and_all([removed.eq(&new), removed.implies(&end)])
    };
    vec![(String::new(), common_conds.implies(&agree))]
}

/// The guards both traces have (the same condition, the k-th such guard
/// of one with the k-th of the other), as indices into `guards`.
fn shared_guards(
    b: &Side,
    a: &Side,
    checks_from: usize,
    never_fail: &[usize],
) -> Vec<(usize, usize)> {
    let mut used = vec![false; a.guards.len()];
    let mut pairs = Vec::new();
    // BEFORE's own guards (not the checks of a caller's claim, which no
    // guard of AFTER stands for).
    let own = b.guards.iter().take_while(|g| g.op_index < checks_from);
    for (i, g) in own.enumerate() {
        if never_fail.contains(&g.op_index) {
            continue;
        }
        let found = a
            .guards
            .iter()
            .enumerate()
            .position(|(j, m)| !used[j] && m.cond == g.cond);
        if let Some(j) = found {
            used[j] = true;
            pairs.push((i, j));
        }
    }
    pairs
}

/// The guards of AFTER with the BEFORE guard they stand for.
fn aligned_guards(b: &Side, a: &Side, provenance: &[Option<usize>]) -> Vec<(usize, usize)> {
    a.guards
        .iter()
        .enumerate()
        .filter_map(|(j, m)| {
            let origin = provenance.get(m.op_index).copied().flatten()?;
            let i = b.guards.iter().position(|g| g.op_index == origin)?;
            Some((i, j))
        })
        .collect()
}

/// The per-guard obligations of the aligned form, in BEFORE's order.
fn guard_obligations(
    before: &Trace,
    after: &Trace,
    (b, a): (&Side, &Side),
    provenance: &[Option<usize>],
    checks_from: usize,
    never_fail: &[usize],
) -> Result<Vec<(String, Term)>, VerifyError> {
    // An op the comparison added (a check, an entry's test) has no line:
    // its index names it.
    let line = |t: &Trace, i: usize| match t.op_pos.get(i).map_or(0, |p| p.line) {
        0 => format!("op {i}"),
        n => format!("line {n}"),
    };
    let mut stands_for: Vec<Vec<&Guard>> = vec![Vec::new(); b.guards.len()];
    for guard in &a.guards {
        // A guard of BEFORE's own: not a check of a caller's claim.
        let origin =
            (provenance.get(guard.op_index).copied().flatten()).filter(|&o| o < checks_from);
        let k = origin.and_then(|o| b.guards.iter().position(|g| g.op_index == o));
        let Some(k) = k else {
            return Err(VerifyError::Provenance {
                line: after.op_pos.get(guard.op_index).map_or(0, |p| p.line),
                what: after.ops[guard.op_index].opcode.name().into(),
            });
        };
        stands_for[k].push(guard);
    }
    let later = later_guards(before, b, checks_from, never_fail);
    let mut obligations = Vec::new();
    for (k, (g, matched)) in b.guards.iter().zip(&stands_for).enumerate() {
        let name = format!(
            "{} at {}",
            before.ops[g.op_index].opcode,
            line(before, g.op_index)
        );
        if matched.is_empty() {
            // Where an AFTER guard standing for an earlier one that may
            // fail in this one's place passed, so did this one.
            // (Those with BEFORE's very condition add nothing.)
            // (`later` looks no further than this many guards on.)
            let first = k.saturating_sub(traceopt_ir::MAX_GUARDS_FAILED_EARLY);
            let earlier = (first..k).filter(|&j| later[j].contains(&k));
            let held = Term::and_all(earlier.flat_map(|j| {
                (stands_for[j].iter())
                    .filter(move |m| m.cond != b.guards[j].cond)
                    .map(|m| m.reached.implies(&m.cond))
            }));
            obligations.push((
                format!("BEFORE's {name} was removed but can fail"),
                g.reached.and(&held).implies(&g.cond),
            ));
        }
        for m in matched {
            let what = format!(
                "BEFORE's {name} and AFTER's {} at {} differ",
                after.ops[m.op_index].opcode,
                line(after, m.op_index)
            );
            // AFTER's may fail where BEFORE's passes if BEFORE then fails
            // a later guard, AFTER having observed as much as BEFORE at
            // this one (what BEFORE observes between, the interpreter
            // resumed here does).
            let agree = if later[k].is_empty() || m.cond == g.cond || m.observed != g.observed {
                same(&g.cond, &m.cond)
            } else {
                let fails_later = Term::or_all(
                    (later[k].iter()).map(|&j| b.guards[j].reached.and(&b.guards[j].cond.not())),
                );
                let early = g.cond.and(&m.cond.not());
                Term::and_all([m.cond.implies(&g.cond), early.implies(&fails_later)])
            };
            obligations.push((what, g.reached.and(&m.reached).implies(&agree)));
        }
    }
    Ok(obligations)
}

/// For each guard of BEFORE, the later guards that an AFTER guard
/// standing for it may fail in the place of: the next ones, before the
/// checks of a caller's claim (`Given::checked_tail`: not guards of the
/// trace) and any conditional call taken as a guard (`never_fail`: its
/// failure is a call, not an exit).
/// Failing early is PyPy's guard strengthening (`guard_nonnull` then
/// `guard_class` become one `guard_nonnull_class` with the first one's
/// resume data), and rests on what makes a trace a trace: resumed at
/// the earlier guard with its state, the interpreter does what the trace
/// does from there (its writes and calls included, which the trace then
/// has not done) and meets the later guard's test itself. The
/// obligations ask that the early failure be one the later guard (or one
/// between) would make, and that the states agree at the earlier one.
fn later_guards(
    before: &Trace,
    b: &Side,
    checks_from: usize,
    never_fail: &[usize],
) -> Vec<Vec<usize>> {
    // How many guards on a guard may fail in the place of (the
    // obligations grow with it; the optimizer merges within it).
    const MAX_LATER: usize = traceopt_ir::MAX_GUARDS_FAILED_EARLY;
    let exit = |h: &Guard| {
        h.op_index < checks_from
            && before.ops[h.op_index].opcode.is_guard()
            && !never_fail.contains(&h.op_index)
    };
    (0..b.guards.len())
        .map(|k| {
            (b.guards.iter().enumerate().skip(k + 1).take(MAX_LATER))
                .take_while(|(_, h)| exit(h))
                .map(|(j, _)| j)
                .collect()
        })
        .collect()
}

fn is_escape(opcode: Opcode) -> bool {
    matches!(
        opcode,
        Opcode::EscapeI | Opcode::EscapeR | Opcode::EscapeF | Opcode::EscapeN
    )
}

/// The definitions sent to the solver, shared by both traces: a term
/// defined once is named once, so what the two traces compute alike is
/// the same term, and obligations about it are settled without the
/// solver (and the query is smaller).
#[derive(Default)]
struct Shared {
    names: HashMap<Term, Term>,
    /// The other way: each name's term.
    terms: HashMap<Term, Term>,
}

impl Shared {
    /// The name of `value`: an earlier one for the same term, or `name`,
    /// newly defined.
    fn define(
        &mut self,
        solver: &mut Solver,
        name: String,
        sort: Sort,
        value: Term,
    ) -> Result<Term, VerifyError> {
        if let Some(known) = self.names.get(&value) {
            return Ok(known.clone());
        }
        solver.define_for_smt(&name, sort, &value)?;
        let var = Term::var(&name);
        self.terms.insert(var.clone(), value.clone());
        self.names.insert(value, var.clone());
        Ok(var)
    }

    /// The term `name` stands for, or `name` itself.
    fn term<'t>(&'t self, name: &'t Term) -> &'t Term {
        self.terms.get(name).unwrap_or(name)
    }
}

/// Encodes one trace (named `side`) into the solver under the name
/// prefix `p`, its allocations in `slots` (in order from 1 where empty),
/// their classes keyed by `sites`.
fn encode_side<'t>(
    trace: &'t Trace,
    (side, p, resumes): (&'static str, &'static str, bool),
    (slots, sites): (&[u32], Rc<Sites>),
    shared: &mut Shared,
    world: &mut World,
    solver: &mut Solver,
) -> Result<Side<'t>, VerifyError> {
    let mut memory = Memory::default();
    memory.slots = slots.to_vec();
    memory.sites = sites;
    memory.vref = trace.vref_layout();
    let reach = reach::reach(trace, false, trace.ops.len()).reach;
    // Escape ops so far (calls are observed among them, but have no
    // escape result).
    let mut escaped = 0;
    let mut values: Vec<Option<Term>> = (0..trace.inputs.len())
        .map(|i| Some(Term::var(&format!("in{i}"))))
        .collect();
    let mut pass = Term::Bool(true);
    let mut defined = Vec::new();
    let mut no_overflow: Option<Term> = None;
    let mut escapes = Vec::new();
    let mut end = None;
    let mut guards = Vec::new();
    let mut lemmas = Vec::new();
    memory.inputs_made(&values);
    let mut seen = Vec::new();
    let mut call_sites = Vec::new();
    let mut call_sights = Vec::new();
    let mut shown = Shown::default();
    for (index, op) in trace.ops.iter().enumerate() {
        memory.now = index + 1;
        // The fresh objects a call cannot see, and those it may keep from
        // now on. An elidable call that gives a reference observes no
        // heap, but it cannot give a fresh object it cannot reach either
        // (its arguments, or what a call saw before): `reach` takes no
        // call's result for one of the trace's objects. Without this, its
        // result could be an object the trace never handed out, reached in
        // one trace through a read that the other forwards (the preamble
        // of word_freq.log:1784, `ll_lower` giving `_ll_stringslice`'s).
        memory.forces_finished_vref = reach::forces_finished_vref(trace, index);
        let observes = observes_heap(trace, op) && !memory.forces_finished_vref;
        let fresh = world.slots.as_ref().is_some_and(|(count, _)| *count > 0);
        let mut pure_sight = None;
        if fresh && (observes || gives_ref_purely(trace, op)) {
            let kind = if observes { "seen" } else { "pure" };
            let call = Point {
                trace,
                end: index + 1,
                failing: false,
                values: &values,
                seen: &seen,
                name: format!("{p}_{kind}{index}"),
                resume: None,
                call: Some(op),
            };
            let (sight, reached, sites) = call.unreached(&mut memory, shared, world, solver)?;
            if observes {
                call_sights.push(sight.clone());
                (memory.sight_of_call, seen, call_sites) = (Some(sight), reached, sites);
            } else {
                pure_sight = Some(sight);
            }
        }
        let line = trace.op_pos.get(index).map_or(0, |p| p.line);
        let unsupported = |what: String| VerifyError::Unsupported { side, line, what };
        let mut args = Vec::with_capacity(op.args.len());
        for &arg in &op.args {
            args.push(match arg {
                Arg::Value(v) => {
                    values.get(v.0 as usize).cloned().flatten().ok_or_else(|| {
                        unsupported(format!("{} of a value without one", op.opcode))
                    })?
                }
                Arg::Const(c) => constant(trace, trace.constant(c), world, solver)?,
            });
        }
        let descr = op.descr.map(|d| trace.descr(d));
        let mut result = None;
        let guard = match op.opcode {
            Opcode::DebugMergePoint | Opcode::Label => None,
            Opcode::GuardTrue => Some(truthy(&args[0])),
            Opcode::GuardFalse => Some(truthy(&args[0]).not()),
            Opcode::GuardValue => Some(args[0].eq(&args[1])),
            Opcode::GuardNoOverflow | Opcode::GuardOverflow => {
                let flag = no_overflow.clone().ok_or_else(|| {
                    unsupported(format!("{} without an *_ovf op before it", op.opcode))
                })?;
                Some(if op.opcode == Opcode::GuardNoOverflow {
                    flag
                } else {
                    flag.not()
                })
            }
            Opcode::Jump | Opcode::Finish => {
                end = Some((op.opcode, args));
                break;
            }
            Opcode::EscapeI | Opcode::EscapeR | Opcode::EscapeF | Opcode::EscapeN => {
                let k = escaped;
                escaped += 1;
                escapes.push(args.iter().map(Seen::word).collect());
                shown
                    .observations
                    .push((arg_types(trace, op), op.opcode.result_type()));
                shown.escape_results.push(op.opcode.result_type());
                if op.opcode != Opcode::EscapeN {
                    let value = Term::var(&format!("esc{k}"));
                    if op.opcode == Opcode::EscapeR {
                        // An object from outside: null or from before.
                        lemmas.push(world.old_or_null(solver, &value)?);
                    }
                    result = Some(value);
                }
                None
            }
            opcode => match encode(opcode, &args, descr) {
                Some(mut enc) => {
                    // A quotient by `1 << k` an earlier op computed: the
                    // lemma sees through that op's name.
                    let quotient = match opcode {
                        Opcode::IntPydiv => Some((&args[0], &args[1])),
                        _ if py_division_oopspec(descr) == Some(Opcode::IntPydiv) => {
                            Some((&args[1], &args[2]))
                        }
                        _ => None,
                    };
                    if let (None, Some((x, divisor))) = (&enc.lemma, quotient) {
                        enc.lemma = power_of_two_quotient(x, shared.term(divisor), &enc.value);
                    }
                    if let (None, [x, y]) = (&enc.lemma, &args[..]) {
                        // `x - (x == c)` is not c (`y + (y == c)` neither).
                        enc.lemma = moved_off_constant(opcode, x, shared.term(y), &enc.value)
                            .or_else(|| {
                                (opcode == Opcode::IntAdd).then_some(())?;
                                moved_off_constant(opcode, y, shared.term(x), &enc.value)
                            });
                    }
                    if world.opaque_arithmetic {
                        enc.value = world.opaque(solver, &enc.value)?;
                        enc.defined = world.opaque(solver, &enc.defined)?;
                        if let Some(flag) = &enc.no_overflow {
                            enc.no_overflow = Some(world.opaque(solver, flag)?);
                        }
                        if let Some(lemma) = &enc.lemma {
                            enc.lemma = Some(world.opaque(solver, lemma)?);
                        }
                    }
                    push_defined(&mut defined, index, &pass, enc.defined);
                    lemmas.extend(enc.lemma);
                    if let Some(flag) = enc.no_overflow {
                        no_overflow = Some(flag);
                    }
                    result = Some(enc.value);
                    None
                }
                None => {
                    // An integer a recording computes as a sum whose terms
                    // cancel (a copy's length `(start + 12) - start`) is
                    // given as the constant it is, as the other trace may
                    // give it: a short copy is then a few stores, alike.
                    let args: Vec<Term> = (args.iter())
                        .map(
                            |a| match a.constant_sum(&|t| shared.terms.get(t).cloned()) {
                                Some(c) if matches!(a, Term::Var(_)) => Term::word(c as i64),
                                _ => a.clone(),
                            },
                        )
                        .collect();
                    let calls_before = memory.calls();
                    let effect = encode_heap_op(world, &mut memory, solver, opcode, &args, descr)?
                        .ok_or_else(|| unsupported(opcode.name().to_string()))?;
                    let ty = op.opcode.result_type();
                    if memory.calls() > calls_before && ty != Type::Void {
                        shown.call_results.push((memory.calls(), ty));
                    }
                    if effect.observed.is_some() {
                        shown.observations.push((arg_types(trace, op), ty));
                    }
                    if matches!(
                        opcode,
                        Opcode::CallPureI
                            | Opcode::CallPureR
                            | Opcode::CallPureF
                            | Opcode::CallPureN
                    ) {
                        let known = *world.pure_result_types.entry(args.len()).or_insert(ty);
                        world.addresses_exposed |= known != ty;
                    }
                    if let Some(cond) = effect.defined {
                        push_defined(&mut defined, index, &pass, cond);
                    }
                    lemmas.extend(effect.lemmas);
                    escapes.extend(effect.observed);
                    result = effect.value;
                    effect.guard
                }
            },
        };
        // A call cannot give an object it cannot see (not even one made
        // later), nor leave one where it was stored.
        if let Some(sight) = &memory.sight_of_call {
            if let (Some(value), Type::Ref) = (&result, op.opcode.result_type()) {
                lemmas.push(sight.hides(value).not());
            }
            for site in call_sites.drain(..) {
                let (Some(obj), Some(after)) =
                    (&values[site.value], memory.left_by_call(&site.cell))
                else {
                    continue;
                };
                lemmas.push(
                    sight
                        .hides(obj)
                        .implies(&after.select(&site.key).eq(obj).not()),
                );
            }
        }
        memory.sight_of_call = None;
        if let (Some(sight), Some(value)) = (&pure_sight, &result) {
            lemmas.push(sight.hides(value).not());
        }
        if let Some(cond) = guard {
            let name = format!("{p}_guard{}", guards.len());
            let next = shared.define(solver, name, Sort::Bool, pass.and(&cond))?;
            // (A side whose resume data nobody compares does without.)
            let (resume, sight) = match resumes {
                true => {
                    let mut words = Vec::new();
                    for arg in op.resume_args() {
                        let word = match arg {
                            Arg::Value(v) => values.get(v.0 as usize).cloned().flatten(),
                            Arg::Const(c) => {
                                Some(constant(trace, trace.constant(c), world, solver)?)
                            }
                        };
                        words.push((arg, word));
                    }
                    let word = |arg: Arg| words.iter().find(|(a, _)| *a == arg)?.1.clone();
                    let resume = Resume::at(trace, op, &memory, world, solver, word)?;
                    // What the resumed interpreter can reach.
                    let failing = Point {
                        trace,
                        end: index + 1,
                        failing: true,
                        values: &values,
                        seen: &seen,
                        name: format!("{p}_resumed{index}"),
                        resume: resume.as_ref(),
                        call: None,
                    };
                    let sight = failing.unreached(&mut memory, shared, world, solver)?.0;
                    (resume, sight)
                }
                false => (None, Sight::of_nothing()),
            };
            guards.push(Guard {
                op_index: index,
                cond,
                reached: pass,
                resume,
                sight,
                observed: escapes.len(),
            });
            pass = next;
        }
        let id = trace.inputs.len() + index;
        values.resize(id + 1, None);
        if let Some(value) = result {
            if op.opcode.result_type() == Type::Float {
                lemmas.push(heap::one_nan(&value));
            }
            let name = format!("{p}_v{id}");
            let term = value.clone();
            let value = shared.define(solver, name, Sort::Bv(64), value)?;
            memory.name_value(&value, &term);
            if reach[id].is_some() {
                memory.allocated.push(value.clone());
            }
            values[id] = Some(value);
        }
    }
    let terms = |ids: Vec<usize>| {
        ids.into_iter()
            .filter_map(|v| values.get(v).cloned().flatten())
            .collect()
    };
    let allocated = terms(
        (0..trace.ops.len())
            .filter(|&i| allocates(trace, &trace.ops[i]))
            .map(|i| trace.inputs.len() + i)
            .collect(),
    );
    Ok(Side {
        pass,
        defined,
        end,
        escapes,
        lemmas,
        guards,
        memory,
        trace,
        values,
        allocated,
        seen,
        call_sights,
        shown,
        prefix: p,
    })
}

fn arg_types(trace: &Trace, op: &Op) -> Vec<Type> {
    op.args.iter().map(|&a| trace.arg_type(a)).collect()
}

/// The type of a fail argument or resume content: `None` for a hole, a
/// virtual being a reference.
fn fail_arg_type(trace: &Trace, arg: &traceopt_ir::FailArg) -> Option<Type> {
    match *arg {
        traceopt_ir::FailArg::Hole => None,
        traceopt_ir::FailArg::Arg(a) => Some(trace.arg_type(a)),
        traceopt_ir::FailArg::Virtual(_) => Some(Type::Ref),
    }
}

/// The type of each fail argument of guard `op` (`fail_arg_type`).
fn fail_types(trace: &Trace, op: &Op) -> Vec<Option<Type>> {
    (op.fail_args.iter().flatten())
        .map(|arg| fail_arg_type(trace, arg))
        .collect()
}

/// Whether the two traces show words of one type wherever a word of one
/// meets a word of the other: the ends' arguments, the observations in
/// order, the calls' and escapes' shared results, and the fail
/// arguments of every pair of guards. Where they do not, an integer of
/// one may be compared with an object's address in the other, and the
/// base of fresh objects must stay unknown (`World::addresses_exposed`).
fn types_meet(b: &Side, a: &Side) -> bool {
    let end_types = |side: &Side| -> Option<Vec<Type>> {
        let op = side
            .trace
            .ops
            .iter()
            .find(|op| matches!(op.opcode, Opcode::Jump | Opcode::Finish))?;
        Some(arg_types(side.trace, op))
    };
    let ends = end_types(b) == end_types(a);
    let (x, y) = (&b.shown, &a.shown);
    let observations = (x.observations.iter().zip(&y.observations)).all(|(p, q)| p == q);
    let calls =
        (x.call_results.iter()).all(|(k, t)| y.call_results.iter().all(|(j, u)| j != k || t == u));
    let escapes = (x.escape_results.iter().zip(&y.escape_results)).all(|(t, u)| t == u);
    let guard_types = |side: &Side| -> Vec<Vec<Option<Type>>> {
        (side.guards.iter())
            .map(|g| fail_types(side.trace, &side.trace.ops[g.op_index]))
            .collect()
    };
    let (b_guards, a_guards) = (guard_types(b), guard_types(a));
    let guards = (b_guards.iter()).all(|g| {
        (a_guards.iter())
            .all(|h| (g.iter().zip(h)).all(|(t, u)| t.is_none() || u.is_none() || t == u))
    });
    let contents = [b.trace, a.trace].iter().all(|trace| contents_typed(trace));
    ends && observations && calls && escapes && guards && contents
}

/// Whether every value a guard's resume data stores (a virtual's field
/// or item, a pending write) has the type its descr gives (characters
/// being integers): what the resumed heap holds is then typed as the
/// traces' own stores, which the checker types.
fn contents_typed(trace: &Trace) -> bool {
    let type_of = |arg: &traceopt_ir::FailArg| fail_arg_type(trace, arg);
    let fits = |descr: Option<traceopt_ir::DescrId>, arg: &traceopt_ir::FailArg| {
        let wanted = descr.and_then(|d| trace.descr(d).value_type());
        type_of(arg).is_none() || (wanted.is_some() && type_of(arg) == wanted)
    };
    trace.ops.iter().all(|op| {
        let virtuals = op.virtuals.iter().all(|v| {
            let fields = v.fields.iter().all(|(d, arg)| fits(Some(*d), arg));
            let items = v.items.iter().all(|arg| match v.opcode {
                Opcode::Newstr | Opcode::Newunicode => {
                    type_of(arg).map_or(true, |t| t == Type::Int)
                }
                _ => fits(v.descr, arg),
            });
            fields && items
        });
        virtuals && op.pending.iter().all(|w| fits(Some(w.descr), &w.value))
    })
}

/// A point of a trace: after its first `end` ops, where the last one, a
/// guard, fails (`failing`) or not.
struct Point<'a> {
    trace: &'a Trace,
    end: usize,
    failing: bool,
    /// The trace's value terms so far.
    values: &'a [Option<Term>],
    /// Whether a call before the point may have seen each fresh object.
    seen: &'a [Term],
    /// The prefix of the names of the conditions.
    name: String,
    /// At a failing guard, its resume data: the writes it makes when it
    /// fails are made before anything is reached.
    resume: Option<&'a Resume>,
    /// At a call, the op: it reaches a stored object only through the
    /// cells its effect info lets it read or write.
    call: Option<&'a Op>,
}

impl Point<'_> {
    /// What the outside can see of the fresh objects at the point
    /// (`memory`); where each value, if a fresh object, may be reached;
    /// and the stores that may keep them.
    fn unreached(
        &self,
        memory: &mut Memory,
        shared: &mut Shared,
        world: &mut World,
        solver: &mut Solver,
    ) -> Result<(Sight, Vec<Term>, Vec<Site>), VerifyError> {
        let reach::Reachability {
            reach,
            stores,
            handed_out,
            may_be,
        } = reach::reach(self.trace, self.failing, self.end);
        let (mut sites, unsited) = sites_of(self.trace, &stores, self.values, world, solver)?;
        if let Some(call) = self.call {
            sites.retain(|site| call_may_follow(self.trace, call, &site.cell));
        }
        let mut heap = memory.snapshot(world, solver)?;
        let cells = world.cells().to_vec();
        if let Some(resume) = self.resume {
            resume.with_pending(&mut heap, &cells);
        }
        // Named once: each term `reached` defines reads the heap, and a
        // heap written inline would be printed again in every one of
        // them (a 2,000-op trace's guard: 1,500 of them, 200 kB each).
        let heap = (heap.into_iter().zip(&cells).enumerate())
            .map(|(k, (array, cell))| {
                let name = format!("{}_heap{k}", self.name);
                shared.define(solver, name, cell.sort(), array)
            })
            .collect::<Result<Vec<Term>, _>>()?;
        let unreached = Unreached {
            reach: &reach,
            may_be: &may_be,
            handed_out: &handed_out,
            sites: &sites,
            unsited: &unsited,
            values: self.values,
            heap: &heap,
            cells: &cells,
            base: world.base(solver)?,
            slots: world.slots.as_ref().map_or(0, |(count, _)| *count),
        };
        let mut k = 0;
        let reached = unreached.reached(self.seen, &mut |term, sort| {
            k += 1;
            shared.define(solver, format!("{}_{k}", self.name), sort, term)
        })?;
        // Each object by its name and by the term it names (a store as it
        // is allocated uses the latter).
        let (mut objects, mut names) = (Vec::new(), HashMap::new());
        for v in (0..reach.len()).filter(|&v| reach[v].is_some()) {
            if let Some(name) = self.values.get(v).cloned().flatten() {
                let term = shared.term(&name).clone();
                if term != name {
                    objects.push((term.clone(), reached[v].clone()));
                    names.insert(name.clone(), term);
                }
                objects.push((name, reached[v].clone()));
            }
        }
        let mut sight = Sight {
            base: unreached.base.clone(),
            slots: unreached.slots,
            reached: objects,
            names,
            also_hidden: Vec::new(),
            slot_reached: None,
        };
        if let Some(array) = sight.by_slot().filter(|_| sight.settled_slots().is_none()) {
            let sort = Sort::Array {
                index: 64,
                value: 1,
            };
            let name = format!("{}_slots", self.name);
            sight.slot_reached = Some(shared.define(solver, name, sort, array)?);
        }
        Ok((sight, reached, sites))
    }
}

/// Notes that op `op`, reached where `pass` holds, is defined where
/// `cond` holds.
fn push_defined(defined: &mut Vec<Defined>, op: usize, pass: &Term, cond: Term) {
    let term = pass.implies(&cond);
    if term != Term::Bool(true) && !defined.iter().any(|d| d.term == term) {
        defined.push(Defined {
            op,
            cond,
            reached: pass.clone(),
            term,
        });
    }
}

/// What AFTER's op must satisfy to be as defined as BEFORE, in the
/// aligned form (`d` its definedness): nothing, where BEFORE needs the
/// same condition at an op of its own no later than the one `d`'s op
/// stands for; the condition wherever AFTER reaches the op, given that
/// of that op, where BEFORE needs another; else the condition wherever
/// AFTER reaches the op. The first two hold when AFTER has passed,
/// before `d`'s op, a guard standing for each of BEFORE's guards before
/// that op that it kept: where AFTER reaches its op, BEFORE then reaches
/// its own (the removed guards cannot fail, and the kept ones agree: the
/// other obligations), which is defined. Smaller queries than the whole
/// runs.
fn defined_where_before_is(b: &Side, a: &Side, provenance: &[Option<usize>], d: &Defined) -> Term {
    let Some(origin) = provenance.get(d.op).copied().flatten() else {
        return d.term.clone();
    };
    let reached_by_after = |e: &Defined| {
        b.guards.iter().filter(|g| g.op_index < e.op).all(|g| {
            let kept = (a.guards.iter())
                .filter(|m| provenance.get(m.op_index).copied().flatten() == Some(g.op_index));
            let mut kept = kept.peekable();
            kept.peek().is_none() || kept.any(|m| m.op_index < d.op)
        })
    };
    let mut before = b.defined.iter().filter(|e| e.op <= origin);
    if before
        .clone()
        .any(|e| e.cond == d.cond && reached_by_after(e))
    {
        return Term::Bool(true);
    }
    match before
        .find(|e| e.op == origin)
        .filter(|e| reached_by_after(e))
    {
        // Reached in AFTER, BEFORE passed the same guards to `e`, and
        // `e` is defined (BEFORE's own ops are): under AFTER's guards, as
        // BEFORE's may make the two conditions one.
        Some(e) => d.reached.implies(&e.cond.implies(&d.cond)),
        None => d.term.clone(),
    }
}

/// Whether `op` is a call that sees the heap (`Effect::observed`).
fn observes_heap(trace: &Trace, op: &Op) -> bool {
    op.opcode.has(Flags::CALL) && !op.opcode.has(Flags::PURE) && reach::helper(trace, op).is_none()
}

/// Whether call `op` may follow a reference held in a cell of this kind
/// to what it points to: its effect info lets it read or write the
/// field, array or interior field (a call with no such list may touch
/// any; other kinds of cells are taken as followed).
fn call_may_follow(trace: &Trace, op: &Op, cell: &heap::Cell) -> bool {
    let info = op.descr.and_then(|d| trace.descr(d).as_call());
    match (info, cell) {
        (
            Some(info),
            heap::Cell::Field(name) | heap::Cell::Item(name) | heap::Cell::Interior(name),
        ) => info.reads.may_touch(name) || info.writes.may_touch(name),
        _ => true,
    }
}

/// Whether `op` is an elidable call (no string helper) that gives a
/// reference.
fn gives_ref_purely(trace: &Trace, op: &Op) -> bool {
    op.opcode.has(Flags::CALL)
        && op.opcode.has(Flags::PURE)
        && op.opcode.result_type() == Type::Ref
        && reach::helper(trace, op).is_none()
}

/// The stores of fresh objects as terms (`values` the trace's value
/// terms so far), and the objects stored where the validator has no
/// terms for the place.
fn sites_of(
    trace: &Trace,
    stores: &[reach::Store],
    values: &[Option<Term>],
    world: &mut World,
    solver: &mut Solver,
) -> Result<(Vec<Site>, Vec<usize>), VerifyError> {
    let (mut sites, mut unsited) = (Vec::new(), Vec::new());
    for store in stores {
        let mut word = |arg: Arg| -> Result<Option<Term>, VerifyError> {
            Ok(match arg {
                Arg::Value(v) => values.get(v.0 as usize).cloned().flatten(),
                Arg::Const(c) => Some(constant(trace, trace.constant(c), world, solver)?),
            })
        };
        let owner = word(store.owner)?;
        let index = store.index.map(&mut word).transpose()?;
        match (owner, index) {
            (Some(owner), None) => sites.push(store.site(owner, None)),
            (Some(owner), Some(Some(index))) => sites.push(store.site(owner, Some(index))),
            _ => unsited.push(store.value),
        }
    }
    Ok((sites, unsited))
}

/// Whether `trace` takes or makes references, or has an op the integer
/// encoding does not cover (heap, calls).
fn uses_heap(trace: &Trace) -> bool {
    let words = [Term::word(0), Term::word(0), Term::word(0)];
    trace.inputs.contains(&Type::Ref)
        || trace.ops.iter().any(|op| {
            let n = op.args.len().min(words.len());
            !matches!(
                op.opcode,
                Opcode::DebugMergePoint | Opcode::Label | Opcode::Jump | Opcode::Finish
            ) && !op.opcode.is_guard()
                && !is_escape(op.opcode)
                && encode(op.opcode, &words[..n], op.descr.map(|d| trace.descr(d))).is_none()
        })
}

/// The word of a constant.
fn constant(
    trace: &Trace,
    c: &Const,
    world: &mut World,
    solver: &mut Solver,
) -> Result<Term, SolverError> {
    Ok(match c {
        Const::Int(x) => Term::word(*x),
        Const::Float(bits) if f64::from_bits(*bits).is_nan() => Term::word(heap::NAN),
        Const::Float(bits) => Term::word(*bits as i64),
        Const::Null => Term::word(0),
        Const::Ptr(name) => {
            world.old_object(solver, constant_identity(trace.namespace.as_deref(), name))?
        }
        Const::Class(name) => world.class(solver, name)?,
        Const::IntName(name) => world.named_int(solver, name)?,
        string @ Const::String { unicode, text } => {
            let mut name = String::new();
            traceopt_ir::print::write_const(&mut name, string);
            world.string_constant(solver, &name, *unicode, text)?
        }
        // The text of debug_merge_point: never a value.
        Const::Str(_) => Term::word(0),
    })
}

/// What a counterexample says the runs start from: the inputs, the heap
/// before the traces, and what the environment gives (escape results,
/// classes, constant objects).
struct Start {
    inputs: Vec<Val>,
    escapes: Vec<i64>,
    /// What the k-th call returns (`call{k}`), where the model says.
    calls: Vec<Option<i64>>,
    before: Before,
    namespace: Option<Arc<Namespace>>,
    /// What pure calls of these arguments return, as the caller says.
    pure_results: Vec<PureResult>,
}

impl Start {
    /// `None` if the model's heap cannot be built.
    fn from_model(
        trace: &Trace,
        world: &World,
        model: &Model,
        inputs: &[i64],
        escapes: &[i64],
    ) -> Option<Start> {
        // Words that may name objects from before: reference inputs and
        // escape results.
        let refs: Vec<u64> = inputs
            .iter()
            .zip(&trace.inputs)
            .filter(|(_, &ty)| ty == Type::Ref)
            .map(|(&w, _)| w as u64)
            .chain(escapes.iter().map(|&w| w as u64))
            .collect();
        let before = replay_heap(world, model, &refs)?;
        let inputs = inputs
            .iter()
            .zip(&trace.inputs)
            .map(|(&w, &ty)| before.value(w as u64, ty))
            .collect::<Option<Vec<Val>>>()?;
        let calls = (1..=world.call_result_names().len())
            .map(|k| model.i64(&Name::invented(&format!("call{k}"))))
            .collect();
        Some(Start {
            inputs,
            escapes: escapes.to_vec(),
            calls,
            before,
            namespace: trace.namespace.clone(),
            pure_results: Vec::new(),
        })
    }

    /// The value of a constant in the replayed heap (`None`: an object the
    /// counterexample does not build).
    fn value_of(&self, c: &Const) -> Option<Val> {
        Some(match c {
            Const::Int(x) => Val::Int(*x),
            Const::Float(bits) => Val::Float(f64::from_bits(*bits)),
            Const::Null => Val::NULL,
            Const::Ptr(name) => {
                let identity = constant_identity(self.namespace.as_deref(), name);
                Val::Ref(Some(*self.before.constants.get(identity)?))
            }
            _ => return None,
        })
    }

    /// What the caller says a pure call of `func` and `args` returns.
    fn pure_result(&self, func: Option<Val>, args: &[Val]) -> Option<Val> {
        let called: Vec<Val> = func.into_iter().chain(args.iter().copied()).collect();
        self.pure_results.iter().find_map(|given| {
            let same = given.args.len() == called.len()
                && (given.args.iter())
                    .zip(&called)
                    .all(|(c, v)| self.value_of(c) == Some(*v));
            same.then(|| self.value_of(&given.result)).flatten()
        })
    }
}

/// The environment of a replay: what the counterexample says of escape
/// results, classes and constant objects; the interpreter's defaults for
/// the rest.
struct ReplayEnv<'s> {
    start: &'s Start,
    /// The class keys of the trace's unnamed allocations.
    sites: &'s Sites,
    next: usize,
    /// Calls made so far whose result the validator leaves unknown.
    calls: usize,
    /// Their arguments, by op (the validator observes them).
    observed: Vec<(usize, Vec<Val>)>,
}

impl Env for ReplayEnv<'_> {
    fn escape(&mut self, _heap: &mut Heap, _op_index: usize, result: Type, _args: &[Val]) -> Val {
        let word = self.start.escapes.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        let value = self.start.before.value(word as u64, result);
        value.unwrap_or_else(|| Val::zero(result))
    }

    /// A call the validator leaves unknown returns what the model says
    /// the k-th call returns (its writes are not replayed); pure calls and
    /// those it encodes as arithmetic are the interpreter's.
    fn call(&mut self, heap: &mut Heap, call: &Call<'_>) -> Result<CallOutcome, Fault> {
        use Opcode::*;
        let pure = matches!(call.opcode, CallPureI | CallPureR | CallPureF | CallPureN);
        if let Some(value) = pure
            .then(|| self.start.pure_result(call.func, call.args))
            .flatten()
        {
            return Ok(CallOutcome::Returned(value));
        }
        // A string helper is no call for the validator: it is run.
        if let Some(outcome) = known_helper(heap, call) {
            return outcome;
        }
        let words = vec![Term::word(0); call.args.len() + 1];
        if pure || encode(call.opcode, &words, call.descr).is_some() {
            return default_call(call);
        }
        self.calls += 1;
        // What the model says the call wrote where a trace reads it.
        for (k, write) in &self.start.before.call_writes {
            if *k as usize == self.calls {
                let _ = write.apply(heap);
            }
        }
        let mut seen = call.func.into_iter().collect::<Vec<_>>();
        seen.extend_from_slice(call.args);
        self.observed.push((call.op_index, seen));
        if call.result == Type::Void {
            return Ok(CallOutcome::Returned(Val::zero(Type::Void)));
        }
        let word = self.start.calls.get(self.calls - 1).copied().flatten();
        let value = word.and_then(|w| self.start.before.value(w as u64, call.result));
        match value {
            Some(v) => Ok(CallOutcome::Returned(v)),
            None => default_call(call),
        }
    }

    fn class_address(&mut self, name: &str) -> i64 {
        let known = self.start.before.classes.get(name).copied();
        known.unwrap_or_else(|| stable_address(name))
    }

    fn class_of_size_descr(&mut self, descr: &Descr, made_by: MadeBy<'_>) -> i64 {
        match self.sites.key(made_by) {
            Some(Ok(key) | Err(key)) => self.class_address(key),
            None => self.class_address(&class_of_size(Some(descr))),
        }
    }

    fn const_ptr(&mut self, name: &str, heap: &mut Heap) -> ObjId {
        let identity = constant_identity(self.start.namespace.as_deref(), name);
        match self.start.before.constants.get(identity) {
            Some(&id) => id,
            None => heap.alloc_object(0),
        }
    }

    fn const_string(&mut self, name: &str, unicode: bool, text: &str, heap: &mut Heap) -> ObjId {
        match self.start.before.constants.get(name) {
            Some(&id) => id,
            None => DefaultEnv.const_string(name, unicode, text, heap),
        }
    }
}

/// A run of `trace` from a counterexample's start (an error: the trace is
/// undefined there).
fn replay_run(trace: &Trace, start: &Start, sites: &Sites) -> Result<Run, InterpError> {
    let mut env = ReplayEnv {
        start,
        sites,
        next: 0,
        calls: 0,
        observed: Vec::new(),
    };
    let heap = start.before.heap.clone();
    // A test fragment stops without jump or finish; the validator takes
    // its end as reached there, and so does the replay.
    let ended;
    let trace = match trace.ops.last().map(|op| op.opcode) {
        Some(Opcode::Jump | Opcode::Finish) => trace,
        _ => {
            let mut whole = trace.clone();
            let finish = traceopt_ir::Op::new(Opcode::Finish, Vec::new());
            whole.push(finish, "", traceopt_ir::Pos::default());
            ended = whole;
            &ended
        }
    };
    let limits = Limits { max_iterations: 1 };
    let mut run = run_with_heap(trace, &start.inputs, heap, &mut env, limits)?;
    // The validator observes calls among the escapes, in trace order.
    run.escaped.append(&mut env.observed);
    run.escaped.sort_by_key(|(op_index, _)| *op_index);
    Ok(run)
}

/// How a run went, in words, naming a failed guard by its line.
fn describe(trace: &Trace, run: &Result<Run, InterpError>) -> String {
    match run {
        Err(e) => format!("is undefined: {e}"),
        Ok(r) => match &r.outcome {
            Ended::GuardFailed { op_index, .. } => format!(
                "fails {} at line {}",
                trace.ops[*op_index].opcode,
                trace.op_pos.get(*op_index).map_or(0, |p| p.line)
            ),
            _ => ending(r),
        },
    }
}

/// The first difference between the two runs on these inputs, or `None`
/// if they behave alike: both leave at a guard (resuming alike,
/// `same_resume`, where the guards are a pair of `pairs`), or both reach
/// their end alike (`same_ending`), having escaped alike values.
fn replay(
    before: &Trace,
    after: &Trace,
    start: &Start,
    [b_sites, a_sites]: [&Sites; 2],
    pairs: &[(usize, usize)],
    defined_from: usize,
) -> Option<String> {
    let b = replay_run(before, start, b_sites);
    let a = replay_run(after, start, a_sites);
    // Objects from before are themselves in both runs.
    let shared = start.before.heap.len();
    let both = || {
        format!(
            "BEFORE {}; AFTER {}",
            describe(before, &b),
            describe(after, &a)
        )
    };
    // BEFORE undefined: any AFTER is fine, unless what is undefined is
    // a check of a claim (`Given::checked_tail`).
    if let Err(e) = &b {
        if e.op_index
            .is_some_and(|k| k >= defined_from && k + 1 < before.ops.len())
        {
            return Some(format!(
                "BEFORE's check of the claim {}",
                describe(before, &b)
            ));
        }
    }
    let b_run = b.as_ref().ok()?;
    let Ok(a_run) = &a else {
        return Some(both());
    };
    let left = |r: &Run| matches!(r.outcome, Ended::GuardFailed { .. });
    match (left(b_run), left(a_run)) {
        (true, true) => {
            let failed = |r: &Run| match r.outcome {
                Ended::GuardFailed { op_index, .. } => op_index,
                _ => usize::MAX,
            };
            // Paired guards resume alike; so does an AFTER guard with
            // resume data that none is paired with (end to end, guards
            // with other conditions) and the BEFORE guard failed there.
            let (fb, fa) = (failed(b_run), failed(a_run));
            let explicit =
                |t: &Trace, i: usize| t.ops.get(i).is_some_and(|op| op.fail_args.is_some());
            let unpaired =
                !pairs.iter().any(|&(_, m)| m == fa) && explicit(after, fa) && explicit(before, fb);
            if !pairs.contains(&(fb, fa)) && !unpaired {
                return None;
            }
            return same_resume(b_run, a_run, shared).err();
        }
        (false, false) => {}
        _ => return Some(both()),
    }
    if std::mem::discriminant(&b_run.outcome) != std::mem::discriminant(&a_run.outcome) {
        return Some(both());
    }
    if b_run.escaped.len() != a_run.escaped.len() {
        return Some(format!(
            "BEFORE escapes {} time(s), AFTER {}",
            b_run.escaped.len(),
            a_run.escaped.len()
        ));
    }
    let mut alike = Alike::new(&b_run.heap, &a_run.heap, shared);
    for (k, ((_, x), (_, y))) in b_run.escaped.iter().zip(&a_run.escaped).enumerate() {
        if x.len() != y.len() {
            return Some(format!(
                "escape #{} has {} values in BEFORE, {} in AFTER",
                k + 1,
                x.len(),
                y.len()
            ));
        }
        for (j, (&vx, &vy)) in x.iter().zip(y).enumerate() {
            if let Err(e) = alike.value(&format!("escape #{} argument {}", k + 1, j + 1), vx, vy) {
                return Some(e);
            }
        }
    }
    same_ending(b_run, a_run, shared).err()
}
