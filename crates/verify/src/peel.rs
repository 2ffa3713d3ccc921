//! A peeled loop, proved by induction. The optimizer turned a loop (one
//! iteration ending in a jump to its start) into `preamble; label(L);
//! body; jump(L')`, and exports the witness (`LabelState`): what each
//! input of the loop is in terms of the label's arguments (one of them,
//! a constant, or an object the peeled loop never allocates, whose
//! contents are label arguments, constants or such objects), and the
//! facts the body takes for granted of each label argument, the label
//! arguments derived from others (a field read or a pure op of them),
//! and the ops of label arguments known to give a constant there. Two
//! straight-line comparisons, each checked by `verify_optimized`, cover
//! every run:
//!
//! (a) the first pass: the loop's iteration from its inputs, with guards
//!     for the facts on what its jump passes on (read out of its objects
//!     where the state says), against the preamble followed by the
//!     state's objects built from the label's arguments and a jump. Both
//!     fail alike or jump with the same values, objects and contents
//!     (the state's objects are paired with the loop's allocations that
//!     made them), and the facts hold (guards of BEFORE that AFTER lacks
//!     must always pass);
//! (b) any later pass: from label arguments that satisfy the facts (both
//!     sides start with the same fact guards), the loop's iteration on
//!     the state (its objects built fresh: in a real run they were made
//!     by the previous pass and reached by nothing else), with the fact
//!     guards at its end, against the body followed by the state built
//!     from its jump's arguments. Both fail alike or end alike, and the
//!     facts hold again.
//!
//! The state's objects built in (b) are of the classes of the loop's
//! allocations that made them where their descr names none
//! (`sites.rs`): the body allocates them with that descr where it must
//! (an op of the body that allocates the label's object `j` stands for
//! its build: its provenance is the loop's length plus `j`, as is the
//! site of a virtual of it). A trace entering at the label must show its
//! objects of those classes (`verify_entry`): one descr text may be two
//! classes.
//!
//! The classes the body takes for granted of what the loop's own
//! allocations make (`LabelState::site_classes`, each the same on every
//! pass) are tested where BEFORE starts in (a), each a probe of that
//! op's descr and its class guard failing with the loop's inputs (the
//! interpreter resumed so goes on at the loop's start, as if the loop
//! had not been entered), and assumed on both sides in (b). A trace
//! entering at the label cannot test them, and such an entry is not
//! taken.
//!
//! Each side's final jump passes, after the loop's inputs, every label
//! argument: BEFORE's as read out of its objects (or derived), on which
//! it checks the facts; AFTER's as the preamble, the body or an entry
//! passes them. So the facts are shown of what AFTER's label actually takes,
//! not only of what its objects hold (a value written to a narrow cell
//! and passed on uncut would differ from what a read of the cell
//! gives).
//!
//! By induction on the number of passes, the peeled loop and the loop
//! fail alike or go on in related states, for ever. Everything but the
//! witness is taken from the output itself (split at its label), so the
//! splicing of preamble and body is checked too; a wrong witness makes
//! (a) or (b) fail.
//!
//! A trace that jumps to the loop's label instead of its start (a
//! bridge entering the peeled loop, `verify_entry`) takes the place of
//! the preamble in (a), with its own state of the same shape and facts.
//! Its input makes the entry's tests before its jump (`entry_pass`),
//! each a guard that fails with the jump's arguments: the interpreter
//! resumed so goes on at the loop's start, which is what the jump does.

use traceopt_ir::{
    Arg, Const, ConstId, Descr, DescrId, EntryTest, Fact, FailArg, JumpTarget, LabelState, Op,
    Opcode, Path, Pos, Source, Step, Trace, Type, ValueId,
};
use traceopt_smt::Solver;

use crate::exit::assuming_in;
use crate::seen::prove_seen_classes;
use crate::{verify_optimized_given, Given, Verdict, VerifyError};

/// Proves `output` (peeled from `looped`; `provenance` gives for each of
/// its ops the loop's op it stands for) by induction on `state`.
pub fn verify_peeled(
    looped: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    state: &LabelState,
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    let shape = |what: &str| unsupported(format!("a peeled loop {what}"));
    let jump = (looped.ops.len().checked_sub(1)).ok_or_else(|| shape("of an empty loop"))?;
    let Some(end) = output.ops.last().filter(|op| op.opcode == Opcode::Jump) else {
        return Err(shape("that does not end in a jump"));
    };
    let JumpTarget::Label(label) = output.jump_target(end) else {
        return Err(shape("whose jump does not go to a label"));
    };
    let slots = state.facts.len();
    let label_args = &output.ops[label].args;
    if label_args.len() != slots
        || state.inputs.len() != looped.inputs.len()
        || !witness_fits(state, looped, jump, output)
    {
        return Err(shape("whose label state does not fit its label and loop"));
    }
    // The body reads the label's arguments and its own values only, and
    // the label rebinds each value once.
    let own = |v: ValueId| {
        output.op_index(v).is_some_and(|i| i > label) || label_args.contains(&Arg::Value(v))
    };
    let body_closed = (output.ops[label + 1..].iter())
        .flat_map(|op| op.all_args())
        .all(|a| !matches!(a, Arg::Value(v) if !own(v)));
    let distinct = (label_args.iter().enumerate())
        .all(|(i, a)| matches!(a, Arg::Value(_)) && !label_args[..i].contains(a));
    if !body_closed || !distinct || provenance.len() != output.ops.len() {
        return Err(shape(
            "whose body reads values of the preamble, or whose label repeats one",
        ));
    }
    let seen = match prove_seen_classes(looped, &state.seen_classes, solver)? {
        Ok(classes) => classes,
        Err(not_proved) => return Ok(named(not_proved, "the preamble")),
    };
    let verdict = prove(
        first_pass(looped, output, provenance, label, state, jump),
        &seen,
        solver,
    )?;
    if verdict != Verdict::Proved {
        return Ok(named(verdict, "the preamble"));
    }
    let verdict = prove(
        later_pass(looped, output, provenance, label, state, jump),
        &seen,
        solver,
    )?;
    Ok(named(verdict, "a pass of the body"))
}

/// Proves `output`, optimized from `input` to jump to the label of the
/// peeled loop `loop_output` instead of to the loop's start
/// (`traceopt_opt::enter_peeled`). `state` says what the output's jump
/// arguments stand for (its objects made by `input`'s allocations); it
/// must have the shape and the facts of the loop's witness `loop_state`.
/// Comparison (a), with the output's final jump in the place of the
/// label, from inputs that satisfy `assumed` (`verify_assuming`): both
/// fail alike, or the input jumps with what the state builds
/// from the output's jump arguments, and those satisfy the facts. With
/// the loop proved by induction on `loop_state` (`verify_peeled`), the
/// output followed by the loop's body runs as the input followed by the
/// loop. The constant objects whose fields the loop's recording
/// (`loop_input`) used are structs there too, where `input` does not
/// name objects alike (a log names each trace's constants anew).
pub fn verify_entry(
    input: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    state: &LabelState,
    (loop_input, loop_output, loop_state): (&Trace, &Trace, &LabelState),
    assumed: &[Fact],
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    let shape = |what: &str| unsupported(format!("an entry to a peeled loop {what}"));
    let is_jump = |t: &Trace| t.ops.last().is_some_and(|op| op.opcode == Opcode::Jump);
    if !is_jump(input) || !is_jump(output) {
        return Err(shape("that does not end in a jump"));
    }
    let (jump, end) = (input.ops.len() - 1, output.ops.len() - 1);
    if output.ops[end].args.len() != state.facts.len()
        || state.inputs.len() != input.ops[jump].args.len()
        || provenance.len() != output.ops.len()
        || !witness_fits(state, input, jump, output)
    {
        return Err(shape("whose state does not fit its jump"));
    }
    if !state.same_shape(output, loop_state, loop_output) || state.facts != loop_state.facts {
        return Err(shape("whose state is not the loop's"));
    }
    if !loop_state.site_classes.is_empty() {
        return Err(shape(
            "whose body takes the classes of the loop's allocations for granted (its \
             preamble tests them)",
        ));
    }
    // The loop's body makes its label's objects with the descrs of the
    // loop's allocations, of their classes: an entry's objects must be
    // known to be of those (one descr text may be two classes).
    let classes = state.recorded_object_classes(output, input);
    let loop_classes = loop_state.recorded_object_classes(loop_output, loop_input);
    if let Some(n) = state.unknown_object_class(output, &classes, &loop_classes) {
        return Ok(Verdict::Unknown(format!(
            "the entry: object {n} of its state is of a size descr that names no class, and \
             the recordings do not show it of the class of the loop's object"
        )));
    }
    // The input's constants and descrs are the output's first ones
    // (the optimizer adds its own after them): the comparison copies
    // the input's ops beside the witness's, in the output's.
    let prefix = input.num_consts() <= output.num_consts()
        && input.num_descrs() <= output.num_descrs()
        && (0..input.num_consts()).all(|c| {
            let c = ConstId(c as u32);
            input.constant(c) == output.constant(c)
        })
        && (0..input.num_descrs()).all(|d| {
            let d = DescrId(d as u32);
            input.descr(d) == output.descr(d)
        });
    if !prefix {
        return Err(shape(
            "whose constants and descrs are not its input's and more",
        ));
    }
    // The loop's constants, where the input does not name objects alike.
    let structs: Vec<Box<str>> = (loop_input.recorded_structs().into_iter())
        .filter(|name| !input.names_object(name))
        .collect();
    // Both start with the guards of what the input is known to satisfy.
    let (input, output, provenance, guards) =
        assuming_in(input, output, provenance, assumed, output);
    let mut state = state.clone();
    for alloc in state.allocs.iter_mut() {
        *alloc += guards;
    }
    let (jump, end) = (jump + guards, end + guards);
    let Pair {
        before,
        after,
        provenance,
        checks: tests,
        ..
    } = entry_pass(&input, &output, &provenance, end, &state, jump);
    let given = Given {
        checked_tail: tests,
        tail_guards_leave: true,
        structs: &structs,
        ..Given::default()
    };
    let verdict = verify_optimized_given(&before, &after, &provenance, given, solver)?;
    Ok(named(verdict, "the entry"))
}

/// Proves one comparison: the checks at the end of its BEFORE must be
/// defined wherever they are reached (proved, not assumed).
/// The loop's classes proved of its recording (`seen`, by its op) are
/// lemmas of both, of BEFORE's copies of those ops.
fn prove(pair: Pair, seen: &[(usize, Const)], solver: &mut Solver) -> Result<Verdict, VerifyError> {
    let seen_classes: Vec<(usize, Const)> = (seen.iter())
        .map(|(site, class)| (site + pair.at, class.clone()))
        .collect();
    let given = Given {
        checked_tail: pair.checks,
        built: &pair.built,
        seen_classes: &seen_classes,
        ..Given::default()
    };
    verify_optimized_given(&pair.before, &pair.after, &pair.provenance, given, solver)
}

/// An output (AFTER) whose shape or witness the induction cannot take.
fn unsupported(what: String) -> VerifyError {
    VerifyError::Unsupported {
        side: "AFTER",
        line: 0,
        what,
    }
}

/// Whether every reference in the witness names something it has: label
/// arguments below its number of facts, objects among its virtuals (no
/// holes where a value is needed), allocations before the loop's jump,
/// and each label argument either reached from the loop's state or
/// derived from a field of one that is (never both); its constants and
/// descrs are `pool`'s (the output's).
fn witness_fits(state: &LabelState, looped: &Trace, jump: usize, pool: &Trace) -> bool {
    let slots = state.facts.len();
    let constant = |c: &ConstId| (c.0 as usize) < pool.num_consts();
    let descr = |d: &DescrId| (d.0 as usize) < pool.num_descrs();
    let item = |x: &FailArg, hole_ok: bool| match x {
        FailArg::Arg(Arg::Value(k)) => (k.0 as usize) < slots,
        FailArg::Arg(Arg::Const(c)) => constant(c),
        FailArg::Virtual(j) => (*j as usize) < state.virtuals.len(),
        FailArg::Hole => hole_ok,
    };
    let objects = (state.virtuals.iter()).all(|v| {
        v.descr.iter().all(descr)
            && v.fields.iter().all(|(d, x)| descr(d) && item(x, false))
            && v.items.iter().all(|x| item(x, true))
    });
    let derived = |k: usize| state.derived.iter().any(|d| d.slot == k);
    // Each derived one or known constant is a field read or an op that
    // may derive, of label arguments of the state or derived before it
    // (any, for a known constant), and constants.
    let source_fits = |source: &Source, earlier: &dyn Fn(usize) -> bool| {
        let amount = match source.args.get(1) {
            Some(&Arg::Const(c)) if constant(&c) => match pool.constant(c) {
                Const::Int(k) => Some(*k),
                _ => None,
            },
            _ => None,
        };
        Source::may_derive(source.opcode, amount)
            && source.opcode.info().arity().accepts(source.args.len())
            && source.descr.iter().all(descr)
            && (source.reads()
                || source.opcode.has(traceopt_ir::Flags::CALL)
                || !source.opcode.has(traceopt_ir::Flags::READ))
            && source.args.iter().all(|a| match *a {
                Arg::Value(k) => {
                    let k = k.0 as usize;
                    k < slots && (!derived(k) || earlier(k))
                }
                Arg::Const(c) => constant(&c),
            })
    };
    let sources_fit = (state.derived.iter().enumerate()).all(|(n, d)| {
        let earlier = |k: usize| state.derived[..n].iter().any(|e| e.slot == k);
        d.slot < slots && source_fits(&d.source, &earlier)
    }) && (state.known.iter())
        .all(|k| source_fits(&k.source, &|_| true) && constant(&k.value));
    // A class fact is of an unnamed allocation of the loop, and a
    // class constant: by name, or the address a log prints for one
    // (`guard_class(p7, 140737336165720)`).
    let site_classes = state.site_classes.iter().all(|fact| {
        let allocates = (looped.ops.get(fact.site))
            .is_some_and(|op| looped.makes_unnamed_class(op.opcode, op.descr));
        allocates
            && fact.site < jump
            && constant(&fact.class)
            && matches!(pool.constant(fact.class), Const::Class(_) | Const::Int(_))
    });
    if !(state.inputs.iter().all(|x| item(x, false))
        && site_classes
        && objects
        && sources_fit
        && state.allocs.len() == state.virtuals.len()
        && state.allocs.iter().all(|&a| a < jump))
    {
        return false;
    }
    (state.paths().iter().enumerate()).all(|(k, path)| path.is_some() != derived(k))
}

/// Says which comparison a verdict that is not a proof is about.
fn named(verdict: Verdict, part: &str) -> Verdict {
    match verdict {
        Verdict::Proved => Verdict::Proved,
        Verdict::Refuted(mut cex) => {
            cex.difference = format!("{part}: {}", cex.difference);
            Verdict::Refuted(cex)
        }
        Verdict::Unknown(why) => Verdict::Unknown(format!("{part}: {why}")),
        Verdict::Unreplayed(why) => Verdict::Unreplayed(format!("{part}: {why}")),
    }
}

/// A trace sharing `pool`'s constants and descrs, with these inputs.
pub(crate) fn new_trace(pool: &Trace, inputs: impl IntoIterator<Item = (Type, String)>) -> Trace {
    let mut trace = Trace::new();
    trace.share_interned(pool);
    trace.namespace = pool.namespace.clone();
    for (ty, name) in inputs {
        trace.add_input(ty, &name);
    }
    trace
}

pub(crate) fn inputs_of(trace: &Trace) -> Vec<(Type, String)> {
    (trace.inputs.iter().enumerate())
        .map(|(i, &ty)| (ty, trace.name(ValueId(i as u32)).to_string()))
        .collect()
}

pub(crate) fn mapped(arg: Arg, map: &[Arg]) -> Arg {
    match arg {
        Arg::Value(v) => map[v.0 as usize],
        constant => constant,
    }
}

/// Where the ops `copy_ops` copies come from: the provenance of the
/// trace copied (an optimizer's output), and where each op it names is
/// in the comparison (`None` where nowhere).
pub(crate) type Origin<'o> = Option<(&'o [Option<usize>], &'o dyn Fn(usize) -> Option<usize>)>;

/// Copies `from.ops[range]` into `to` (which shares `from`'s interned
/// items), each value `v` read as `map[v]`, which it extends; the
/// provenance of each copy, and the op each of its virtuals stands for,
/// moved as `origin` says (none without it).
pub(crate) fn copy_ops(
    to: &mut Trace,
    from: &Trace,
    range: std::ops::Range<usize>,
    map: &mut [Arg],
    origin: Origin<'_>,
    provenance: &mut Vec<Option<usize>>,
) {
    // Recorded ops copied with all that comes before them are recorded
    // still (the first such copy).
    if range.start == 0 && to.recorded.is_empty() && !from.recorded.is_empty() {
        let at = to.ops.len();
        to.recorded = at + from.recorded.start..at + from.recorded.end.min(range.end);
    }
    for i in range {
        let mut copy = from.ops[i].clone();
        copy.for_each_arg_mut(|arg| *arg = mapped(*arg, map));
        for v in &mut copy.virtuals {
            v.site = v
                .site
                .zip(origin)
                .and_then(|(site, (_, moved))| moved(site));
        }
        let v = from.value_of_op(i);
        let pos = from.op_pos.get(i).copied().unwrap_or(Pos::default());
        map[v.0 as usize] = Arg::Value(to.push(copy, from.name(v), pos));
        provenance.push(origin.and_then(|(of, moved)| moved((*of.get(i)?)?)));
    }
}

fn push(
    trace: &mut Trace,
    op: Op,
    provenance: &mut Vec<Option<usize>>,
    prov: Option<usize>,
) -> Arg {
    provenance.push(prov);
    Arg::Value(trace.push(op, "", Pos::default()))
}

/// Builds the state's objects from the label arguments `slots`: each
/// allocation (its provenance the loop's op that made the object, as
/// `at` moves it), then their contents. The loop's inputs, as built.
fn materialize(
    trace: &mut Trace,
    state: &LabelState,
    slots: &[Arg],
    provenance: &mut Vec<Option<usize>>,
    at: &dyn Fn(usize) -> Option<usize>,
) -> Vec<Arg> {
    let mut objects = Vec::new();
    for (v, &alloc) in state.virtuals.iter().zip(&state.allocs) {
        let mut op = match v.opcode {
            Opcode::NewArray | Opcode::NewArrayClear => {
                let length = trace.add_const(Const::Int(v.items.len() as i64));
                Op::new(v.opcode, vec![Arg::Const(length)])
            }
            opcode => Op::new(opcode, Vec::new()),
        };
        op.descr = v.descr;
        objects.push(push(trace, op, provenance, at(alloc)));
    }
    let value = |item: FailArg| match item {
        FailArg::Arg(Arg::Value(k)) => Some(slots[k.0 as usize]),
        FailArg::Arg(constant) => Some(constant),
        FailArg::Virtual(j) => Some(objects[j as usize]),
        FailArg::Hole => None,
    };
    for (v, &object) in state.virtuals.iter().zip(&objects) {
        for &(descr, item) in &v.fields {
            let mut op = Op::new(Opcode::SetfieldGc, vec![object, value(item).unwrap()]);
            op.descr = Some(descr);
            push(trace, op, provenance, None);
        }
        for (index, &item) in v.items.iter().enumerate() {
            if let Some(x) = value(item) {
                let index = Arg::Const(trace.add_const(Const::Int(index as i64)));
                let mut op = Op::new(Opcode::SetarrayitemGc, vec![object, index, x]);
                op.descr = v.descr;
                push(trace, op, provenance, None);
            }
        }
    }
    state
        .inputs
        .iter()
        .map(|&item| value(item).unwrap())
        .collect()
}

/// What the state `inputs` holds at `path`, read out of its objects (a
/// value of type `ty`).
fn read_place(trace: &mut Trace, inputs: &[Arg], path: &Path, ty: Type) -> Arg {
    let (input, steps) = path;
    let mut value = inputs[*input];
    for (s, step) in steps.iter().enumerate() {
        let ty = if s + 1 == steps.len() { ty } else { Type::Ref };
        let op = match *step {
            Step::Field(descr) => Op {
                descr: Some(descr),
                ..Op::new(read(Opcode::GetfieldGcI, ty), vec![value])
            },
            Step::Item(index, descr) => {
                let index = Arg::Const(trace.add_const(Const::Int(index)));
                Op {
                    descr,
                    ..Op::new(read(Opcode::GetarrayitemGcI, ty), vec![value, index])
                }
            }
        };
        value = Arg::Value(trace.push(op, "", Pos::default()));
    }
    value
}

/// The label arguments the state `inputs` holds at the places of the
/// witness, read out of its objects (`None` for the derived ones).
fn read_places(
    trace: &mut Trace,
    state: &LabelState,
    inputs: &[Arg],
    types: &[Type],
) -> Vec<Option<Arg>> {
    let mut values: Vec<Option<Arg>> = vec![None; types.len()];
    for (k, path) in state.paths().into_iter().enumerate() {
        if let Some(path) = path {
            values[k] = Some(read_place(trace, inputs, &path, types[k]));
        }
    }
    values
}

/// The label arguments as the loop's state `inputs` holds them: read
/// out of its objects, or (derived ones) out of a field; then the guards
/// of their facts. Their values, and how many ops that took.
fn check_facts(
    trace: &mut Trace,
    state: &LabelState,
    inputs: &[Arg],
    types: &[Type],
) -> (Vec<Arg>, usize) {
    let before = trace.ops.len();
    let mut values = read_places(trace, state, inputs, types);
    let all = state.derived.len();
    derive_up_to(trace, state, types, &mut values, &mut 0, all);
    let slots: Vec<Arg> = values
        .into_iter()
        .map(|v| v.expect("every slot read"))
        .collect();
    for (fact, &value) in state.facts.iter().zip(&slots) {
        fact.guards(trace, value);
    }
    check_known(trace, state, &slots);
    (slots, trace.ops.len() - before)
}

/// The guards that each known constant holds, of the label arguments
/// `slots`.
fn check_known(trace: &mut Trace, state: &LabelState, slots: &[Arg]) {
    for k in &state.known {
        let ty = trace.constant(k.value).ty();
        let value = derive_returned(trace, &k.source, on_slots(&k.source, slots), ty);
        guard_equal(trace, value, Arg::Const(k.value), ty);
    }
}

/// The arguments of `source` where label argument k is `slots[k]`.
fn on_slots(source: &Source, slots: &[Arg]) -> Vec<Arg> {
    (source.args.iter())
        .map(|&a| match a {
            Arg::Value(k) => slots[k.0 as usize],
            constant => constant,
        })
        .collect()
}

/// A guard that `a` and `b`, of type `ty`, are the same value (floats
/// bit for bit: `float_eq` would take -0.0 for 0.0, and no NaN for
/// itself).
fn guard_equal(trace: &mut Trace, a: Arg, b: Arg, ty: Type) {
    let mut bits = |x: Arg| {
        let op = Op::new(Opcode::ConvertFloatBytesToLonglong, vec![x]);
        Arg::Value(trace.push(op, "", Pos::default()))
    };
    let (eq, a, b) = match ty {
        Type::Ref => (Opcode::PtrEq, a, b),
        Type::Float => (Opcode::IntEq, bits(a), bits(b)),
        _ => (Opcode::IntEq, a, b),
    };
    let same = trace.push(Op::new(eq, vec![a, b]), "", Pos::default());
    let guard = Op {
        fail_args: Some(Default::default()),
        ..Op::new(Opcode::GuardTrue, vec![Arg::Value(same)])
    };
    trace.push(guard, "", Pos::default());
}

/// Appends the op of `source`, on `args`: a read of its field (as a
/// value of type `ty`) or array item, or its pure op or call.
fn derive(trace: &mut Trace, source: &Source, args: Vec<Arg>, ty: Type) -> Arg {
    let opcode = match source.as_field() {
        Some(_) => read(Opcode::GetfieldGcI, ty),
        None => source.opcode,
    };
    let op = Op {
        descr: source.descr,
        ..Op::new(opcode, args)
    };
    Arg::Value(trace.push(op, "", Pos::default()))
}

/// `derive`, and where the source is an elidable call that may raise,
/// a test that it raised nothing: a pure call's result the label takes
/// comes from a call that returned (and raises what it raised again:
/// nothing, `heap.rs`).
fn derive_returned(trace: &mut Trace, source: &Source, args: Vec<Arg>, ty: Type) -> Arg {
    let value = derive(trace, source, args, ty);
    let raising = source.opcode.has(traceopt_ir::Flags::CALL)
        && Descr::call_may_raise(source.descr.map(|d| trace.descr(d)));
    if raising {
        trace.push(
            Op::new(Opcode::GuardNoException, Vec::new()),
            "",
            Pos::default(),
        );
    }
    value
}

/// The tests of the classes the loop's unnamed allocations make
/// (`SiteClass::test`), each guard failing with `fail_args`: each
/// probe, and the loop's op that makes what it probes (op, site).
fn test_site_classes(
    trace: &mut Trace,
    looped: &Trace,
    state: &LabelState,
    fail_args: &[FailArg],
) -> Vec<(usize, usize)> {
    let mut probes = Vec::new();
    for fact in &state.site_classes {
        probes.push((trace.ops.len(), fact.site));
        fact.test(looped, fail_args, |op| trace.push(op, "", Pos::default()));
    }
    probes
}

/// The guards of the facts of the label arguments `slots`, then those
/// that each derived one is what its field holds or its op gives, and
/// that each known constant holds; how many ops.
fn assume(
    trace: &mut Trace,
    looped: &Trace,
    state: &LabelState,
    slots: &[Arg],
    types: &[Type],
) -> (usize, Vec<(usize, usize)>) {
    let before = trace.ops.len();
    let probes = test_site_classes(trace, looped, state, &[]);
    for (fact, &slot) in state.facts.iter().zip(slots) {
        fact.guards(trace, slot);
    }
    for d in &state.derived {
        let ty = types[d.slot];
        let value = derive_returned(trace, &d.source, on_slots(&d.source, slots), ty);
        guard_equal(trace, value, slots[d.slot], ty);
    }
    check_known(trace, state, slots);
    (trace.ops.len() - before, probes)
}

/// The read of that kind for a value of type `ty`.
fn read(int: Opcode, ty: Type) -> Opcode {
    match (int, ty) {
        (Opcode::GetfieldGcI, Type::Ref) => Opcode::GetfieldGcR,
        (Opcode::GetfieldGcI, Type::Float) => Opcode::GetfieldGcF,
        (Opcode::GetarrayitemGcI, Type::Ref) => Opcode::GetarrayitemGcR,
        (Opcode::GetarrayitemGcI, Type::Float) => Opcode::GetarrayitemGcF,
        (op, _) => op,
    }
}

/// A jump like `looped`'s (back to its start) with these arguments
/// (with no descr where they do not fit `to`'s inputs).
fn jump_like(
    to: &mut Trace,
    looped: &Trace,
    args: Vec<Arg>,
    provenance: &mut Vec<Option<usize>>,
    prov: Option<usize>,
) {
    let original = &looped.ops[looped.ops.len() - 1];
    // With more values than `to` takes (the label's arguments), it
    // is no jump back to `to`'s start: the replay leaves there too.
    let back = args.len() == to.inputs.len()
        && (args.iter().zip(&to.inputs)).all(|(&a, &ty)| to.try_arg_type(a) == Some(ty));
    let mut jump = Op::new(Opcode::Jump, args);
    jump.descr = original.descr.filter(|_| back);
    push(to, jump, provenance, prov);
}

/// One comparison of the induction.
struct Pair {
    before: Trace,
    after: Trace,
    /// AFTER's.
    provenance: Vec<Option<usize>>,
    /// How many ops at BEFORE's end (before its jump) check the witness.
    checks: usize,
    /// The ops of BEFORE that build what another makes (`Given::built`).
    built: Vec<(usize, usize)>,
    /// Where BEFORE's copy of the loop's (or the input's) ops starts.
    at: usize,
}

/// Each value of `trace` as itself.
pub(crate) fn identity(trace: &Trace) -> Vec<Arg> {
    (0..trace.num_values())
        .map(|v| Arg::Value(ValueId(v as u32)))
        .collect()
}

/// Appends the loop's iteration (its inputs read as `map` says), the
/// guards of the facts of what its jump passes on and the tests of the
/// classes its allocations make, and its jump with the label arguments
/// as read out of what it passes on after its own; how many ops the
/// checks took, and each probe with the loop's op whose class it tests.
fn iteration(
    before: &mut Trace,
    looped: &Trace,
    state: &LabelState,
    mut map: Vec<Arg>,
    types: &[Type],
    jump: usize,
) -> (usize, Vec<(usize, usize)>) {
    let mut unused = Vec::new();
    copy_ops(before, looped, 0..jump, &mut map, None, &mut unused);
    let mut jump_args: Vec<Arg> = (looped.ops[jump].args.iter())
        .map(|&a| mapped(a, &map))
        .collect();
    let (slots, checks) = check_facts(before, state, &jump_args, types);
    // The classes the body takes for granted hold at the jump too.
    let probes = test_site_classes(before, looped, state, &[]);
    jump_args.extend(slots);
    jump_like(before, looped, jump_args, &mut unused, None);
    (checks + 2 * probes.len(), probes)
}

/// Comparison (a): the loop's iteration with the facts checked at its
/// jump, against the preamble, the state built, and a jump.
fn first_pass(
    looped: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    label: usize,
    state: &LabelState,
    jump: usize,
) -> Pair {
    let types = arg_types(output, label);
    let mut before = new_trace(output, inputs_of(looped));
    // The tests of the classes the loop's allocations make first,
    // failing with its inputs (resumed so, the interpreter goes on at
    // the loop's start, as if the loop had not been entered).
    let inputs: Vec<FailArg> = (0..looped.inputs.len())
        .map(|i| FailArg::Arg(Arg::Value(ValueId(i as u32))))
        .collect();
    let probes = test_site_classes(&mut before, looped, state, &inputs);
    let tests = before.ops.len();
    let (checks, checked) = iteration(&mut before, looped, state, identity(looped), &types, jump);
    // (No op of the preamble makes a label's object: `later_pass`. Its
    // test op `n` of those classes stands for the loop's length plus
    // `n`.)
    let own = looped.ops.len();
    let moved = |p: usize| match p.checked_sub(own) {
        Some(n) => (n < tests).then_some(n),
        None if p >= jump => Some(p + tests + checks),
        None => Some(p + tests),
    };
    let (after, prov) = up_to_built_state(
        output,
        label,
        state,
        looped,
        (provenance, &moved),
        jump + tests + checks,
    );
    // Each probe makes what the loop's op it probes makes.
    let built = (probes.into_iter().chain(checked))
        .map(|(probe, site)| (probe, site + tests))
        .collect();
    Pair {
        before,
        after,
        provenance: prov,
        checks,
        built,
        at: tests,
    }
}

/// The types of the arguments of `trace`'s op `at` (a label, or a jump
/// standing for one).
fn arg_types(trace: &Trace, at: usize) -> Vec<Type> {
    trace.ops[at]
        .args
        .iter()
        .map(|&a| trace.arg_type(a))
        .collect()
}

/// `output` up to its op `label` (its provenance moved as `origin` says),
/// then the state's objects built from the label's arguments and a
/// jump like `looped`'s with them and the label's arguments (its
/// provenance BEFORE's jump, `jump`): the AFTER of comparison (a).
fn up_to_built_state(
    output: &Trace,
    label: usize,
    state: &LabelState,
    looped: &Trace,
    origin: (&[Option<usize>], &dyn Fn(usize) -> Option<usize>),
    jump: usize,
) -> (Trace, Vec<Option<usize>>) {
    let mut after = new_trace(output, inputs_of(output));
    let mut provenance = Vec::new();
    let mut map = identity(output);
    copy_ops(
        &mut after,
        output,
        0..label,
        &mut map,
        Some(origin),
        &mut provenance,
    );
    let slots: Vec<Arg> = (output.ops[label].args.iter())
        .map(|&a| mapped(a, &map))
        .collect();
    // Each object's allocation stands for the loop's op that made it,
    // where the comparison has it.
    let at = origin.1;
    let mut inputs = materialize(&mut after, state, &slots, &mut provenance, at);
    inputs.extend(slots);
    jump_like(&mut after, looped, inputs, &mut provenance, Some(jump));
    (after, provenance)
}

/// Comparison (a) for a trace entering the loop at its label: the
/// input up to its jump, then its tests of the state it passes on
/// (`LabelState::entry_tests`), each a guard that fails with the jump's
/// arguments (as good as the jump to the loop's start the input makes:
/// the interpreter goes on from there), then a jump with the label's
/// arguments; against the output up to its jump, the state built from
/// its jump's arguments, and a jump. An output guard that makes one of
/// the tests stands for it: its provenance is the input's length plus
/// the test's number. How many ops the tests took is the second count.
fn entry_pass(
    input: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    end: usize,
    state: &LabelState,
    jump: usize,
) -> Pair {
    let types = arg_types(output, end);
    let mut before = new_trace(output, inputs_of(input));
    let mut map = identity(input);
    let mut unused = Vec::new();
    copy_ops(&mut before, input, 0..jump, &mut map, None, &mut unused);
    let jump_args: Vec<Arg> = (input.ops[jump].args.iter())
        .map(|&a| mapped(a, &map))
        .collect();
    let leave: Vec<FailArg> = jump_args.iter().map(|&a| FailArg::Arg(a)).collect();
    let start = before.ops.len();
    let mut values = read_places(&mut before, state, &jump_args, &types);
    let constants = state.constant_places();
    let mut derived_done = 0;
    let mut test_guards = Vec::new();
    for test in state.entry_tests() {
        // A derived argument is computed before its own tests, after
        // those of what it is made of.
        let upto = match test {
            EntryTest::AtLeast(s) | EntryTest::AtMost(s) | EntryTest::Object(s) => {
                (state.derived.iter().position(|d| d.slot == s)).map_or(0, |n| n + 1)
            }
            EntryTest::Known(_) => state.derived.len(),
            EntryTest::Constant(_) => 0,
        };
        derive_up_to(
            &mut before,
            state,
            &types,
            &mut values,
            &mut derived_done,
            upto,
        );
        let value = |s: usize| values[s].expect("a slot computed before its tests");
        match test {
            EntryTest::Constant(i) => {
                let (path, c) = &constants[i];
                let ty = before.constant(*c).ty();
                let held = read_place(&mut before, &jump_args, path, ty);
                guard_equal(&mut before, held, Arg::Const(*c), ty);
            }
            EntryTest::AtLeast(s) => state.facts[s].guard_lower(&mut before, value(s)),
            EntryTest::AtMost(s) => state.facts[s].guard_upper(&mut before, value(s)),
            EntryTest::Object(s) => state.facts[s].guard_object(&mut before, value(s)),
            EntryTest::Known(i) => {
                let k = &state.known[i];
                let ty = before.constant(k.value).ty();
                let args = on_values(&k.source, &values);
                let held = derive_returned(&mut before, &k.source, args, ty);
                guard_equal(&mut before, held, Arg::Const(k.value), ty);
            }
        }
        let guard = before.ops.len() - 1;
        before.ops[guard].fail_args = Some(leave.as_slice().into());
        test_guards.push(guard);
    }
    let all = state.derived.len();
    derive_up_to(
        &mut before,
        state,
        &types,
        &mut values,
        &mut derived_done,
        all,
    );
    let tests = before.ops.len() - start;
    let mut label_args = jump_args;
    label_args.extend(values.into_iter().map(|v| v.expect("every slot computed")));
    jump_like(&mut before, input, label_args, &mut unused, None);

    let moved = |p: usize| match p.checked_sub(input.ops.len()) {
        Some(test) => test_guards.get(test).copied(),
        None if p >= jump => Some(p + tests),
        None => Some(p),
    };
    let (after, prov) = up_to_built_state(
        output,
        end,
        state,
        input,
        (provenance, &moved),
        jump + tests,
    );
    Pair {
        before,
        after,
        provenance: prov,
        checks: tests,
        built: Vec::new(),
        at: 0,
    }
}

/// Computes the derived arguments from number `*done` up to (not
/// including) number `upto`, of the slot `values` (each made of slots
/// computed before it).
fn derive_up_to(
    trace: &mut Trace,
    state: &LabelState,
    types: &[Type],
    values: &mut [Option<Arg>],
    done: &mut usize,
    upto: usize,
) {
    for d in state.derived.iter().take(upto).skip(*done) {
        let args = on_values(&d.source, values);
        values[d.slot] = Some(derive_returned(trace, &d.source, args, types[d.slot]));
    }
    *done = (*done).max(upto);
}

/// The arguments of `source` where label argument k is `values[k]`
/// (computed before it).
fn on_values(source: &Source, values: &[Option<Arg>]) -> Vec<Arg> {
    (source.args.iter())
        .map(|&a| match a {
            Arg::Value(k) => values[k.0 as usize]
                .expect("a derived slot is made of slots of the state or derived before"),
            constant => constant,
        })
        .collect()
}

/// Comparison (b): from label arguments with the facts, the loop's
/// iteration on the state built from them, the facts checked at its
/// jump, against the body, the state built from its jump, and a jump.
fn later_pass(
    looped: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    label: usize,
    state: &LabelState,
    jump: usize,
) -> Pair {
    let label_args = &output.ops[label].args;
    let types = arg_types(output, label);
    let named: Vec<(Type, String)> = (label_args.iter().zip(&types))
        .map(|(&a, &ty)| {
            (
                ty,
                format!(
                    "L{}",
                    match a {
                        Arg::Value(v) => output.name(v).to_string(),
                        _ => String::new(),
                    }
                ),
            )
        })
        .collect();
    let slots: Vec<Arg> = (0..types.len())
        .map(|k| Arg::Value(ValueId(k as u32)))
        .collect();
    let mut unused = Vec::new();
    let mut before = new_trace(output, named.clone());
    let (assumed, probes) = assume(&mut before, looped, state, &slots, &types);
    let start = before.ops.len();
    let inputs = materialize(&mut before, state, &slots, &mut unused, &Some);
    let built = before.ops.len() - start;
    let mut map = identity(looped);
    map[..inputs.len()].copy_from_slice(&inputs);
    let (checks, checked) = iteration(&mut before, looped, state, map, &types, jump);

    // The body, its inputs the label's arguments, after the same fact
    // guards.
    let mut after = new_trace(output, named);
    let mut prov: Vec<Option<usize>> = Vec::new();
    assume(&mut after, looped, state, &slots, &types);
    prov.extend((0..assumed).map(Some));
    let offset = assumed + built;
    // The body's op that makes the label's object `j` (which a previous
    // pass made) stands for its build here (`Optimized::provenance`).
    let own = looped.ops.len();
    let moved = |p: usize| {
        Some(match p.checked_sub(own) {
            Some(j) if j < state.virtuals.len() => start + j,
            Some(_) => return None,
            None if p >= jump => p + offset + checks,
            None => p + offset,
        })
    };
    let mut map: Vec<Arg> = vec![Arg::Value(ValueId(u32::MAX)); output.num_values()];
    for (&arg, &slot) in label_args.iter().zip(&slots) {
        if let Arg::Value(v) = arg {
            map[v.0 as usize] = slot;
        }
    }
    let end = output.ops.len() - 1;
    copy_ops(
        &mut after,
        output,
        label + 1..end,
        &mut map,
        Some((provenance, &moved)),
        &mut prov,
    );
    let body_slots: Vec<Arg> = output.ops[end]
        .args
        .iter()
        .map(|&a| mapped(a, &map))
        .collect();
    let at = |alloc: usize| Some(alloc + offset);
    let mut inputs = materialize(&mut after, state, &body_slots, &mut prov, &at);
    inputs.extend(body_slots);
    jump_like(
        &mut after,
        looped,
        inputs,
        &mut prov,
        Some(jump + offset + checks),
    );
    // BEFORE's label objects are the loop's allocations' (an entry must
    // show its own of their classes: `verify_entry`).
    let built = (state.allocs.iter().enumerate())
        .map(|(j, &alloc)| (start + j, alloc + offset))
        .chain((probes.into_iter().chain(checked)).map(|(probe, site)| (probe, site + offset)))
        .collect();
    Pair {
        before,
        after,
        provenance: prov,
        checks,
        built,
        at: offset,
    }
}
