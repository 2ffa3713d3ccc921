//! Loop peeling (seed 004): a loop trace, whose `jump` goes back to its
//! start, is optimized twice. The first copy, the preamble, runs once on
//! entry and establishes facts; the second, the body, runs from a
//! `label` at the preamble's end for every later pass, and is optimized
//! taking for granted what held at the preamble's jump. The output is
//! `preamble; label(args); body; jump(args)`, the jump going to the
//! label, as PyPy prints its optimized loops.
//!
//! The preamble's jump is not emitted: the state it would pass on is
//! captured (`capture_jump`), virtual objects and all, and each value
//! in it (a jump argument, or what an object holds) becomes a label
//! argument, with its facts (`Fact`: an integer range, a class, not
//! null); a constant stays a constant, and a value met twice is one
//! argument. Fields and array items the heap cache knows of those
//! arguments, and the pure ops and elidable or loop-invariant calls the
//! preamble computed of them that a pass of the loop computes of its
//! start too, become label arguments too (`derive`, PyPy's short
//! preamble); those whose value is a constant are known at the label
//! instead, with no argument. This `LabelState` is where the body
//! starts (`enter`): the objects are virtual again, built over the
//! label's arguments, and the facts and fields are known. The body's
//! own jump must pass on a state of the same shape: then the label's
//! objects are never allocated (they are unboxed). Where it passes on
//! something else at a place of the state, that place becomes a label
//! argument of its own (an object there allocated) and the loop is
//! peeled again (`mismatches`); what is left over falls back to
//! allocating every object at the jumps. Facts the body's jump does not
//! keep are weakened and the body optimized again (they only shrink, so
//! this ends); derived arguments it does not use or must compute again,
//! and known constants it does not keep, are dropped the same way. A
//! repeated value among the label's arguments (at places made arguments
//! of their own) gets a `same_as` of its own, since a label rebinds
//! values.
//!
//! The `LabelState` is the witness the validator proves the loop by
//! (`traceopt_verify::verify_peeled`): the preamble reaches it, and a
//! pass of the body from it reaches it again.

use compact_str::CompactString;
use traceopt_ir::{
    smallvec, Arg, Args, Const, Derived, Descr, DescrId, DescrKind, Fact, FailArg, Flags, Known,
    LabelState, Op, Opcode, Path, Pos, SiteClass, Source, Step, Trace, Type, ValueId, Virtual,
};

use crate::driver::{
    optimize_sharing, End, Ending, Entry, Infeasible, InputTables, Optimized, Optimizer, Passes,
    Start,
};
use crate::heap::Place;
use crate::names::TakenNames;
use crate::virtuals::Mapped;

/// A loop optimized as preamble and body.
#[derive(Clone, Debug)]
pub struct Peeled {
    /// `preamble; label(args); body; jump(args)`; the provenance of each
    /// op is the loop's op it stands for (both copies stand for the same
    /// ops); the rule counts are over both copies.
    pub optimized: Optimized,
    /// The index of the label in the trace.
    pub label: usize,
    /// The loop's inputs in terms of the label's arguments, and what the
    /// body takes for granted of each (the witness of `verify_peeled`).
    pub state: LabelState,
    /// The class the recording saw each object of the state made of,
    /// where its descr does not name one (`recorded_object_classes`): a
    /// trace may enter at the label only with objects known to be of it.
    pub object_classes: Vec<Option<Const>>,
    /// Why objects passed along the loop were allocated after all, if
    /// they were.
    pub forced: Option<String>,
    /// The constant objects whose fields the loop's recording used
    /// (`Trace::recorded_structs`): an entry may read their fields.
    pub structs: Vec<Box<str>>,
}

/// What a body (or an entry) starting at a label is given besides its
/// arguments' facts: its derived arguments and the known constants, to
/// establish again at its jump.
#[derive(Clone, Debug, Default)]
pub(crate) struct Given {
    pub derived: Vec<Derived>,
    pub known: Vec<Known>,
}

/// A derived label argument to add: what gives it, and its value where
/// already known (a preamble's).
type Wanted = (Source, Option<Arg>);

/// A trace optimized: straight, or peeled (a loop, with `Passes::peel`).
// (One per trace, moved once or twice: its size does not matter.)
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Output {
    Straight(Optimized),
    Peeled(Peeled),
}

impl Output {
    /// The output trace, its provenance and rule counts.
    pub fn optimized(&self) -> &Optimized {
        match self {
            Output::Straight(o) => o,
            Output::Peeled(p) => &p.optimized,
        }
    }
}

/// Peels `input` if `passes.peel` is on and it is a loop; else
/// optimizes it as `optimize` does.
pub fn optimize_or_peel(input: &Trace, passes: Passes) -> Result<Output, Infeasible> {
    if passes.peel {
        if let Some(peeled) = peel(input, passes)? {
            return Ok(Output::Peeled(peeled));
        }
    }
    crate::optimize(input, passes).map(Output::Straight)
}

/// How many times the body is optimized before the facts are dropped
/// altogether (each round weakens at least one fact).
const MAX_ROUNDS: usize = 8;

/// Peels `input` if it is a loop (its last op a jump to its start):
/// `Ok(None)` for any other trace, or a loop whose preamble never
/// reaches its jump. Objects the loop passes along stay virtual where
/// the body passes them on alike; otherwise they are allocated at the
/// jumps, and `Peeled::forced` says why.
pub fn peel(input: &Trace, passes: Passes) -> Result<Option<Peeled>, Infeasible> {
    if !input.loops_to_start() {
        return Ok(None);
    }
    // (Every copy of the loop looks up the same things in it: each
    // found in one look at its ops, while they are at hand.)
    let tables = InputTables::default();
    let recorded = Recorded {
        site_classes: SiteClass::of_loop(input, tables.recorded_classes(input)),
        structs: input.recorded_structs(),
    };
    let loop_ = (input, &tables, &recorded);
    if !passes.virtuals {
        return peel_with(loop_, passes, false);
    }
    match peel_with(loop_, passes, true) {
        Ok(Some(peeled)) => Ok(Some(peeled)),
        // The body never reaches its jump, or passes other objects on.
        _ => Ok(peel_with(loop_, passes, false)?.map(|peeled| Peeled {
            forced: Some("the body does not pass the objects on as the preamble does".into()),
            ..peeled
        })),
    }
}

/// How many times the preamble is optimized again with more places of
/// the label's state made arguments of their own.
const MAX_WIDENINGS: usize = 4;

/// Peels with the objects passed along kept virtual (`carry`) or
/// allocated; `None` where the body's jump does not give the label's
/// state. Where the body passes on something else than the preamble at
/// some place of the state (another constant, a repeated value no more
/// repeated, an object where the preamble passed a value or the other
/// way round), that place becomes a label argument of its own (an
/// object there allocated), and the loop is peeled again.
fn peel_with(loop_: Loop, passes: Passes, carry: bool) -> Result<Option<Peeled>, Infeasible> {
    let mut widened = Vec::new();
    for _ in 0..MAX_WIDENINGS {
        match peel_once(loop_, passes, carry, &widened)? {
            Attempt::Done(peeled) => return Ok(peeled.map(|p| *p)),
            Attempt::Widen(more) => widened.extend(more),
        }
    }
    Ok(None)
}

/// What one attempt at peeling gave.
enum Attempt {
    Done(Option<Box<Peeled>>),
    /// These places of the state must be label arguments of their own.
    Widen(Vec<Path>),
}

/// What a loop's recording shows, the same for every attempt at
/// peeling it.
struct Recorded {
    /// The classes its allocations make (`SiteClass::of_loop`).
    site_classes: Vec<SiteClass>,
    /// `Trace::recorded_structs`.
    structs: Vec<Box<str>>,
}

/// A loop to peel, with what every attempt looks up in it.
type Loop<'a> = (&'a Trace, &'a InputTables, &'a Recorded);

/// Peels with the places `widened` label arguments of their own.
fn peel_once(
    (input, tables, recorded): Loop,
    passes: Passes,
    carry: bool,
    widened: &[Path],
) -> Result<Attempt, Infeasible> {
    let start = Start::Loop(&recorded.site_classes);
    let (preamble, ending) = optimize_sharing(
        input,
        tables,
        passes,
        Default::default(),
        start,
        end(carry, widened),
    )?;
    let Some(Ending {
        state: mut label_state,
        mut leaves,
        fresh: first_fresh,
        ..
    }) = ending
    else {
        return Ok(Attempt::Done(None));
    };
    label_state.site_classes = recorded.site_classes.clone();
    label_state.seen_classes = preamble.seen_classes.clone();
    let fresh = label_state.fresh_paths();
    let mut types: Vec<Type> = leaves.iter().map(|&a| preamble.trace.arg_type(a)).collect();
    for (fact, &ty) in label_state.facts.iter_mut().zip(&types) {
        if !fact.fits(ty) {
            *fact = Fact::default();
        }
    }
    // (Named once: the arguments only get fewer from round to round.)
    let label_names = label_names(types.len());
    let mut rounds = 0;
    // (The body's inputs that are no label arguments, those it was made
    // with and does not use, come last.)
    let (body, body_leaves, fresh, unused) = loop {
        rounds += 1;
        let entry = Entry {
            state: &label_state,
            pool: &preamble.trace,
            types: &types,
            names: &label_names[..types.len()],
            first_fresh,
        };
        // A body that must fail a guard takes for granted what held on
        // the first pass only (a branch the preamble took): it takes less
        // (no known constants, then no facts), or the loop is not peeled
        // so (the preamble is the trace's first pass, and may well run to
        // its end).
        let start = Start::Label(&entry);
        let Ok((body, ending)) = optimize_sharing(
            input,
            tables,
            passes,
            Default::default(),
            start,
            end(carry, &fresh),
        ) else {
            if !label_state.known.is_empty() {
                label_state.known.clear();
                continue;
            }
            if label_state.facts.iter().any(|f| *f != Fact::default()) {
                label_state.facts = vec![Fact::default(); label_state.facts.len()];
                continue;
            }
            return Ok(Attempt::Done(None));
        };
        let Some(ending) = ending else {
            return Ok(Attempt::Done(None));
        };
        // Facts a pass of the body does not keep are weakened (they only
        // shrink, so this ends).
        let mut weaker: Vec<Fact> = (label_state.facts.iter().zip(&ending.state.facts))
            .map(|(assumed, held)| weaken(assumed, held))
            .collect();
        if rounds >= MAX_ROUNDS {
            weaker = vec![Fact::default(); weaker.len()];
        }
        let same_count = weaker.len() == label_state.facts.len();
        // Constants known at the label that a pass of the body does not
        // keep are not taken for granted: the body is optimized again
        // (with fewer each time).
        let kept_known: Vec<Known> = (ending.kept_known.iter())
            .map(|&k| label_state.known[k].clone())
            .collect();
        if ending.kept_known.len() + ending.unused_known.len() < label_state.known.len() {
            label_state.known = kept_known;
            if same_count {
                label_state.facts = weaker;
            }
            continue;
        }
        // Those the body never used are not taken for granted: the body
        // is the same without them.
        label_state.known = kept_known;
        if !label_state.same_shape(&preamble.trace, &ending.state, &body.trace) {
            let pools = (&preamble.trace, &body.trace);
            let more: Vec<Path> = (mismatches(&label_state, &ending.state, pools).into_iter())
                .filter(|p| !widened.contains(p))
                .collect();
            return Ok(if more.is_empty() {
                Attempt::Done(None)
            } else {
                Attempt::Widen(more)
            });
        }
        // Fields read and ops computed before the label that the body
        // never uses, or computes again for its jump, are not passed
        // along: they go (with the weakened facts, in one round). The
        // body is optimized again, unless the facts held: it is then the
        // same less those arguments, and what computed them again.
        let (unused, ops_use_them) = unused_derived(&label_state, &body.trace, &ending);
        let facts_held = weaker == label_state.facts;
        if unused.is_empty() && facts_held {
            break (body, ending.leaves, ending.fresh, unused);
        }
        label_state.facts = weaker;
        drop_slots(&mut label_state, &unused);
        remove_at(&mut leaves, &unused);
        remove_at(&mut types, &unused);
        if let Some((fewer, leaves)) = (facts_held && !ops_use_them)
            .then(|| without_slots(body, &unused, passes))
            .flatten()
        {
            break (fewer, leaves, ending.fresh, unused);
        }
    };
    let mut rule_counts = preamble.rule_counts.clone();
    for (total, n) in rule_counts.iter_mut().zip(&body.rule_counts) {
        *total += n;
    }
    let jump = input.ops.len() - 1;
    let names = (tables.numbered_names(input), fresh);
    let body = Body {
        optimized: body,
        leaves: &body_leaves,
        unused: &unused,
    };
    let (trace, provenance, label) = splice(preamble, &leaves, body, jump, names);
    let object_classes = label_state.object_classes_of(&trace, tables.recorded_classes(input));
    Ok(Attempt::Done(Some(Box::new(Peeled {
        optimized: Optimized {
            trace,
            provenance,
            rule_counts,
            seen_classes: label_state.seen_classes.clone(),
        },
        label,
        state: label_state,
        forced: None,
        structs: recorded.structs.clone(),
        object_classes,
    }))))
}

/// How many label arguments' names are made once per process.
const NAMED_LABEL_ARGS: usize = 512;

/// The names of label arguments `0..n` (`label_name`): for most loops,
/// those made once per process (a name made anew is written a byte at
/// a time, then read back whole before the writes land, which waits).
fn label_names(n: usize) -> std::borrow::Cow<'static, [CompactString]> {
    static NAMES: std::sync::OnceLock<Vec<CompactString>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| (0..NAMED_LABEL_ARGS).map(label_name).collect());
    match names.get(..n) {
        Some(first) => std::borrow::Cow::Borrowed(first),
        None => std::borrow::Cow::Owned((0..n).map(label_name).collect()),
    }
}

/// The name of label argument `k` in a body's inputs: `label{k}`.
fn label_name(k: usize) -> CompactString {
    let mut name = CompactString::const_new("label");
    name.push_str(&compact_str::ToCompactString::to_compact_string(&k));
    name
}

/// How a copy of the loop ends: its objects kept (`carry`), `widened`
/// places label arguments of their own; or not.
fn end(carry: bool, widened: &[Path]) -> End<'_> {
    if carry {
        End::Capture(widened)
    } else {
        End::Describe
    }
}

/// The places where `b` (a body's ending) holds something else than `a`
/// (the label's state): another constant, a label argument met first
/// elsewhere, an object of another layout, an object where `a` holds a
/// value or the other way round. `pools` give their constants and
/// descrs.
fn mismatches(a: &LabelState, b: &LabelState, pools: (&Trace, &Trace)) -> Vec<Path> {
    let (first_a, first_b) = (a.paths(), b.paths());
    let mut found = Vec::new();
    let mut pairs: Vec<Option<u32>> = vec![None; a.virtuals.len()];
    let mut stack: Vec<(FailArg, FailArg, Path)> = (a.inputs.iter().zip(&b.inputs))
        .enumerate()
        .rev()
        .map(|(i, (&x, &y))| (x, y, (i, Vec::new())))
        .collect();
    let text =
        |pool: &Trace, d: Option<traceopt_ir::DescrId>| d.map(|d| pool.descr(d).text.clone());
    while let Some((x, y, path)) = stack.pop() {
        let same = match (x, y) {
            (FailArg::Arg(Arg::Const(c)), FailArg::Arg(Arg::Const(d))) => {
                pools.0.constant(c) == pools.1.constant(d)
            }
            (FailArg::Arg(Arg::Value(s)), FailArg::Arg(Arg::Value(t))) => {
                first_a.get(s.0 as usize) == first_b.get(t.0 as usize)
            }
            (FailArg::Virtual(j), FailArg::Virtual(k)) => {
                let (v, w) = (&a.virtuals[j as usize], &b.virtuals[k as usize]);
                let layout = |v: &Virtual, pool: &Trace| {
                    let fields: Vec<_> =
                        v.fields.iter().map(|&(d, _)| text(pool, Some(d))).collect();
                    (v.opcode, text(pool, v.descr), fields, v.items.len())
                };
                match pairs[j as usize] {
                    Some(paired) => paired == k,
                    None if layout(v, pools.0) == layout(w, pools.1) => {
                        pairs[j as usize] = Some(k);
                        let fields = (v.fields.iter().zip(&w.fields))
                            .map(|(&(d, x), &(_, y))| (x, y, Step::Field(d)));
                        let items = (v.items.iter().zip(&w.items).enumerate())
                            .map(|(i, (&x, &y))| (x, y, Step::Item(i as i64, v.descr)));
                        let next: Vec<_> = fields.chain(items).collect();
                        for (x, y, step) in next.into_iter().rev() {
                            let steps = traceopt_ir::fact::extended(&path.1, step);
                            stack.push((x, y, (path.0, steps)));
                        }
                        true
                    }
                    None => false,
                }
            }
            (FailArg::Hole, FailArg::Hole) => true,
            _ => false,
        };
        if !same {
            found.push(path);
        }
    }
    found
}

impl Optimizer<'_> {
    /// Starts from a peeled loop's label (`Entry`).
    pub(crate) fn enter(&mut self, entry: &Entry) {
        let pool = entry.pool;
        let import = |item: FailArg, out: &mut Trace| match item {
            FailArg::Arg(Arg::Const(c)) => FailArg::Arg(Arg::Const(out.const_from(pool, c))),
            other => other,
        };
        let items: Vec<FailArg> = (entry.state.inputs.iter())
            .map(|&item| import(item, &mut self.out))
            .collect();
        let virtuals: Vec<Virtual> = (entry.state.virtuals.iter())
            .map(|v| {
                let mut v = v.clone();
                v.descr = v.descr.map(|d| self.out.descr_from(pool, d));
                for (d, item) in v.fields.iter_mut() {
                    *d = self.out.descr_from(pool, *d);
                    *item = import(*item, &mut self.out);
                }
                for item in v.items.iter_mut() {
                    *item = import(*item, &mut self.out);
                }
                v
            })
            .collect();
        self.enter_state(&items, &virtuals, &entry.state.allocs);
        for fact in &entry.state.site_classes {
            let class = pool.constant(fact.class).clone();
            self.site_classes.insert(fact.site, class);
        }
        for &claim in &entry.state.seen_classes {
            // (One that does not fit, the validator does not take.)
            self.take_seen_class(claim);
        }
        for (k, fact) in entry.state.facts.iter().enumerate() {
            self.assume(Arg::Value(ValueId(k as u32)), fact);
        }
        // The fields read and the pure ops computed before the label
        // give what the label took, or the constants known there.
        let given = self.import_given(entry.state, pool);
        let slots = (given.derived.iter())
            .map(|d| (d.source.clone(), Arg::Value(ValueId(d.slot as u32)), None));
        let constants = (given.known.iter().enumerate())
            .map(|(i, k)| (k.source.clone(), Arg::Const(k.value), Some(i)));
        let sources: Vec<(Source, Arg, Option<usize>)> = slots.chain(constants).collect();
        // Which known constants the body looks up is followed: a field
        // or an item by its place, a pure op by `derived_op`, a reference
        // test by `compare_refs`.
        self.known_used = vec![false; given.known.len()];
        for (index, k) in given.known.iter().enumerate() {
            if let (Some(_), &[a, b]) =
                (crate::values::ref_test(k.source.opcode), &k.source.args[..])
            {
                self.known_ref_tests
                    .entry(crate::values::unordered(a, b))
                    .or_insert(index);
            }
        }
        self.derived = Some(given);
        // (Sized once: a map grown entry by entry is copied each time.)
        self.derived_ops.reserve(sources.len());
        for (source, value, known) in sources {
            let place = match (source.as_field(), source.as_item()) {
                (Some((object, descr)), _) => Some(Place::Field(object, descr)),
                (_, Some((array, index, descr))) => Some(Place::Item(array, index, descr)),
                _ => None,
            };
            match place {
                Some(Place::Field(object, descr)) => self.heap_knows_field(object, descr, value),
                Some(Place::Item(array, index, descr)) => {
                    self.heap_knows_item(array, index, descr, value)
                }
                None => self.know_derived_op(source.opcode, &source.args, value, known),
            }
            if let (Some(place), Some(k)) = (place, known) {
                self.known_places.entry(place).or_insert(k);
            }
        }
    }

    /// Emits the tests of the classes a loop's unnamed allocations make
    /// (`SiteClass::test`), each failing with the loop's inputs, and
    /// takes them for granted after. Test op `n` stands for the loop's
    /// length plus `n` (the validator's first comparison makes the tests
    /// before the loop).
    pub(crate) fn test_site_classes(&mut self, site_classes: &[SiteClass]) {
        let own = self.input.ops.len();
        let fail_args: Vec<FailArg> = (0..self.input.inputs.len())
            .map(|i| FailArg::Arg(Arg::Value(ValueId(i as u32))))
            .collect();
        let mut n = own;
        for fact in site_classes {
            fact.test(self.input, &fail_args, |op| {
                n += 1;
                self.emit_for(op, None, n - 1)
            });
            let class = self.out.constant(fact.class).clone();
            self.site_classes.insert(fact.site, class);
        }
    }

    /// `opcode(args)` is `value` (a label argument, or known constant
    /// `known`): the same op met again is that value.
    fn know_derived_op(&mut self, opcode: Opcode, args: &[Arg], value: Arg, known: Option<usize>) {
        self.know_ref_test(opcode, args, value);
        let number = opcode as usize;
        if self.derived_opcodes.len() <= number {
            self.derived_opcodes.resize(number + 1, false);
        }
        self.derived_opcodes[number] = true;
        self.derived_ops
            .insert((opcode, Args::from_slice(args)), (value, known));
        if let (true, &[a, b]) = (opcode.has(traceopt_ir::Flags::COMM), args) {
            self.derived_ops
                .insert((opcode, Args::from_slice(&[b, a])), (value, known));
        }
    }

    /// A pure op that a label argument already holds, if `opcode(args)`
    /// is one.
    pub(crate) fn derived_op(&mut self, opcode: Opcode, args: &[Arg]) -> Option<Arg> {
        if self.derived_opcodes.get(opcode as usize) != Some(&true) {
            return None;
        }
        let (value, known) = *self.derived_ops.get(&(opcode, Args::from_slice(args)))?;
        if let Some(index) = known {
            self.known_used[index] = true;
        }
        Some(value)
    }

    /// `state`'s derived label arguments and known constants, their
    /// constants and descrs (`pool`'s) made the output's.
    pub(crate) fn import_given(&mut self, state: &LabelState, pool: &Trace) -> Given {
        let import_const = |c, out: &mut Trace| out.const_from(pool, c);
        let import = |source: &Source, out: &mut Trace| {
            let mut source = source.clone();
            for arg in source.args.iter_mut() {
                if let Arg::Const(c) = *arg {
                    *arg = Arg::Const(import_const(c, out));
                }
            }
            source.descr = (source.descr).map(|descr| out.descr_from(pool, descr));
            source
        };
        let derived = (state.derived.iter())
            .map(|d| Derived {
                slot: d.slot,
                source: import(&d.source, &mut self.out),
            })
            .collect();
        let known = (state.known.iter())
            .map(|k| Known {
                source: import(&k.source, &mut self.out),
                value: import_const(k.value, &mut self.out),
            })
            .collect();
        Given { derived, known }
    }

    /// `steps` (of a state in terms of `pool`) in the output's descrs.
    pub(crate) fn import_steps(&mut self, steps: &[Step], pool: &Trace) -> Vec<Step> {
        let mut import = |d: traceopt_ir::DescrId| self.out.descr_from(pool, d);
        (steps.iter())
            .map(|&step| match step {
                Step::Field(d) => Step::Field(import(d)),
                Step::Item(i, d) => Step::Item(i, d.map(&mut import)),
            })
            .collect()
    }

    /// The state the final jump's `args` pass on, its virtuals kept; a
    /// jump with the state's leaves stands in for it until `peel` takes
    /// it out (so that what computes them stays alive).
    pub(crate) fn capture_jump(&mut self, args: &[Arg]) -> Ending {
        // An object where the label wants an argument of its own is
        // allocated.
        // (Taken out while objects are forced, and put back: the places
        // are not copied.)
        let capture = self.capture.take();
        for (input, steps) in capture.iter().flat_map(|paths| paths.iter()) {
            if let Some(&root) = args.get(*input) {
                self.force_at(root, steps);
            }
        }
        self.capture = capture;
        // An entry tests what it does not know of the state it passes on.
        let mut args = args.to_vec();
        if let Some(entering) = self.entering.as_mut() {
            entering.jump_args = args.clone();
        }
        self.test_constants(&mut args);
        let (items, mut virtuals, allocs) = self.capture_state(&args);
        self.cut_narrow_cells(&mut virtuals);
        let mut ending = self.template(items, virtuals, allocs);
        self.test_state_facts(&mut ending);
        // (Only `unused_derived` asks it, of a body given derived
        // arguments: a preamble's capture does not look at every value.)
        if (self.derived.as_ref()).is_some_and(|given| !given.derived.is_empty()) {
            ending.answered = self.answered_inputs();
        }
        if self.passes.heap {
            self.derive(&mut ending);
        }
        let jump = Op::new(Opcode::Jump, ending.leaves.clone());
        self.emit(jump, Some(&crate::driver::UNNAMED));
        ending
    }

    /// The inputs that some input value came to be (`Ending::answered`),
    /// in increasing order.
    fn answered_inputs(&mut self) -> Vec<usize> {
        let mut answered = vec![false; self.out.inputs.len()];
        for i in 0..self.map.len() {
            if let Some(Arg::Value(v)) = self.map[i].map(|a| self.find(a)) {
                if let Some(seen) = answered.get_mut(v.0 as usize) {
                    *seen = true;
                }
            }
        }
        let seen = answered.iter().enumerate().filter(|(_, &seen)| seen);
        seen.map(|(k, _)| k).collect()
    }

    /// Each narrow cell of the captured objects holds what a read of it
    /// gives, the value written to it cut down (`as_read`): a label
    /// argument standing at such a place, and the facts taken for
    /// granted of it, are of what the cell holds, as the validator reads
    /// it out of the object (the cut, where the value may not fit,
    /// goes before the label).
    fn cut_narrow_cells(&mut self, virtuals: &mut [Virtual]) {
        for v in virtuals.iter_mut() {
            for (d, item) in v.fields.iter_mut() {
                self.cut_narrow_cell(item, Opcode::GetfieldGcI, *d);
            }
            if let Some(d) = v.descr {
                for item in v.items.iter_mut() {
                    self.cut_narrow_cell(item, Opcode::GetarrayitemGcI, d);
                }
            }
        }
    }

    /// `item`, a value in a cell that `read` of `descr` reads, made what
    /// the read gives.
    fn cut_narrow_cell(&mut self, item: &mut FailArg, read: Opcode, descr: DescrId) {
        if let FailArg::Arg(a @ Arg::Value(_)) = *item {
            if let Ok(Mapped::Out(cut)) = self.as_read(read, Some(descr), Mapped::Out(a)) {
                *item = FailArg::Arg(self.find(cut));
            }
        }
    }

    /// Adds the derived label arguments: in a body (or an entry), those
    /// it was given, read or computed again where neither the heap cache
    /// nor an op of its own gives them; in a preamble, every field of a
    /// label argument (or a constant) whose value the heap cache knows,
    /// then every pure op it computed of label arguments (PyPy's short
    /// preamble). A body drops those it does not use (`unused_derived`).
    /// Then the known constants: those of a body that still hold, or all
    /// a preamble has.
    fn derive(&mut self, ending: &mut Ending) {
        // What the body used, before its ending looks anything up.
        let used = self.known_used.clone();
        // A preamble's known constants hold; a body's are checked.
        let (wanted, known, checked): (Vec<Wanted>, _, _) = match self.derived.take() {
            None => {
                let (derived, known) = self.derivable(ending);
                (derived, known, false)
            }
            Some(given) => {
                let derived = (given.derived.into_iter())
                    .map(|d| (d.source, None))
                    .collect();
                (derived, given.known, true)
            }
        };
        let arguments = |ending: &Ending, source: &Source| -> Option<Args> {
            // Label argument k is the k-th leaf (derived ones come after
            // the state's, each after those it is made of).
            (source.args.iter())
                .map(|&a| match a {
                    Arg::Value(k) => ending.leaves.get(k.0 as usize).copied(),
                    constant => Some(constant),
                })
                .collect()
        };
        // (Each taken adds one to these, which the state's own fill.)
        ending.leaves.reserve(wanted.len());
        ending.state.facts.reserve(wanted.len());
        ending.state.derived.reserve(wanted.len());
        for (source, found) in wanted {
            // A body whose ending has fewer leaves than the preamble's (an
            // object it passes on virtual that the preamble did not):
            // left out, so that the shapes differ.
            let Some(args) = arguments(ending, &source) else {
                continue;
            };
            let value = match found {
                Some(value) => value,
                None if source.reads() => {
                    let there = self.surely_there(&source, args[0]);
                    let (value, known) = self.derived_read(&source, args);
                    ending.unsafe_read |= !known && !there;
                    value
                }
                None => {
                    let (value, computed) = self.derived_pure(&source, args);
                    if computed {
                        ending.recomputed.push(ending.leaves.len());
                    }
                    value
                }
            };
            let slot = ending.leaves.len();
            self.test_fact(slot, value);
            let value = self.find(value);
            ending.state.derived.push(Derived { slot, source });
            ending.state.facts.push(self.fact(value));
            ending.leaves.push(value);
        }
        ending.state.known.reserve(known.len());
        for (index, k) in known.into_iter().enumerate() {
            if !checked {
                ending.state.known.push(k);
                continue;
            }
            if self.entering.is_none() && used.get(index) == Some(&false) {
                ending.unused_known.push(index);
                continue;
            }
            let Some(args) = arguments(ending, &k.source) else {
                continue;
            };
            let value = if k.source.reads() {
                self.known_read(&k.source, &args)
            } else {
                self.known_pure(k.source.opcode, &args)
            };
            let same = matches!(value, Some(Arg::Const(c))
                if self.out.constant(c) == self.out.constant(k.value));
            if same || self.entering.is_some() && self.test_known_at(index, &k, args) {
                ending.state.known.push(k);
                ending.kept_known.push(index);
            }
        }
    }

    /// What the field or array item `source` reads (of `args`) holds,
    /// as the heap cache knows it (a narrow cell cuts what was written).
    fn known_read(&mut self, source: &Source, args: &[Arg]) -> Option<Arg> {
        let (value, read, descr) = match (source.as_field(), source.as_item()) {
            (Some((_, d)), _) => (self.heap_field(args[0], d)?, Opcode::GetfieldGcI, d),
            (_, Some((_, _, d))) => (
                self.heap_item(args[0], args[1], d)?,
                Opcode::GetarrayitemGcI,
                d,
            ),
            _ => return None,
        };
        let value = self.find(value);
        match self.as_read(read, Some(descr), Mapped::Out(value)) {
            Ok(Mapped::Out(v)) => Some(self.find(v)),
            _ => None,
        }
    }

    /// Whether the field `source` reads of `object` is surely there: it
    /// is known to be a struct. (An array item is not: its length is
    /// not known.) An entry reads nothing else.
    pub(crate) fn surely_there(&self, source: &Source, object: Arg) -> bool {
        let recorded_struct = || match (object, &self.entering) {
            (Arg::Const(c), Some(entering)) => match self.out.constant(c) {
                Const::Ptr(name) => entering.structs.iter().any(|s| **s == **name),
                _ => false,
            },
            _ => false,
        };
        source.as_field().is_some() && (self.ptr_info(object).instance || recorded_struct())
    }

    /// What the field or array item `source` reads (of `args`) holds
    /// here: known to the heap cache (then `true`), or read.
    pub(crate) fn derived_read(&mut self, source: &Source, args: Args) -> (Arg, bool) {
        if let Some(known) = self.known_read(source, &args) {
            return (known, true);
        }
        (Arg::Value(self.emit_derived(source, args)), false)
    }

    /// What pure `opcode(args)` gives here: a label argument that holds
    /// it, an equal op of the trace's own, or the op computed now (then
    /// `true`).
    pub(crate) fn derived_pure(&mut self, source: &Source, args: Args) -> (Arg, bool) {
        if let Some(known) = self.known_pure(source.opcode, &args) {
            return (known, false);
        }
        // An entry's arguments may be constants, or known better.
        if self.entering.is_some() && traceopt_rules::check::is_rule_op(source.opcode) {
            if let Ok(value) = self.int_op(source.opcode, args.clone(), None, 0) {
                return (value, true);
            }
        }
        (Arg::Value(self.emit_derived(source, args)), true)
    }

    /// `source` of `args`, computed at an ending, with what its opcode
    /// alone says of its result (a length is not negative, a narrow
    /// cell holds what fits): a body's ending then keeps such a fact of
    /// the label's, and is not made again without it.
    fn emit_derived(&mut self, source: &Source, args: Args) -> ValueId {
        let op = Op {
            descr: source.descr,
            ..Op::new(source.opcode, args)
        };
        let v = self.emit(op, None);
        if self.passes.bounds {
            self.learn_read_bound(v);
        }
        v
    }

    /// What pure `opcode(args)` is known to give here: a label argument
    /// that holds it, or an equal op (or call) of the trace's own.
    fn known_pure(&mut self, opcode: Opcode, args: &[Arg]) -> Option<Arg> {
        if let Some(known) = self.derived_op(opcode, args) {
            return Some(self.find(known));
        }
        if let Some(known) = self.heap_call(opcode, args) {
            return Some(known);
        }
        if self.passes.cse && (1..=2).contains(&args.len()) && opcode.has(Flags::PURE) {
            let key = self.cse_key(opcode, args);
            if let Some(&known) = self.cse.get(&key) {
                return Some(self.find(known));
            }
        }
        None
    }

    /// The label arguments a preamble's ending can derive: the known
    /// fields and array items of its arguments and constants, then its
    /// pure ops and calls (`Source::may_derive`) of label arguments the
    /// loop passes on unchanged, or that the loop computes of its start
    /// too (`computed_at_start`: a body computes no others of the
    /// label's arguments), in the order it made them; each refers to the
    /// label arguments it is made of, and comes
    /// with its value. Those whose value is a constant are known
    /// constants instead.
    fn derivable(&mut self, ending: &Ending) -> (Vec<Wanted>, Vec<Known>) {
        let fields = self.known_fields();
        let items = self.known_items();
        // (Sized at once: most of a preamble's pure ops are of label
        // arguments, and each taken adds a leaf.)
        let room = fields.len() + items.len() + self.out.ops.len() / 2;
        // Where each leaf first stands among the label's arguments.
        let mut leaves: rustc_hash::FxHashMap<Arg, u32> =
            rustc_hash::FxHashMap::with_capacity_and_hasher(
                ending.leaves.len() + room,
                Default::default(),
            );
        let mut next_leaf: u32 = 0;
        for &l in &ending.leaves {
            leaves.entry(self.find(l)).or_insert(next_leaf);
            next_leaf += 1;
        }
        let template = |leaves: &rustc_hash::FxHashMap<Arg, u32>, arg: Arg| match arg {
            Arg::Const(_) => Some(arg),
            Arg::Value(_) => leaves.get(&arg).map(|&k| Arg::Value(ValueId(k))),
        };
        let mut sources = Vec::with_capacity(room);
        for (object, d, value) in fields {
            // What a read gives: a narrow field cuts what was written.
            let value = match self.as_read(Opcode::GetfieldGcI, Some(d), Mapped::Out(value)) {
                Ok(Mapped::Out(read)) => self.find(read),
                _ => continue,
            };
            let ty = self.out.descr(d).value_type().unwrap_or(Type::Int);
            sources.push((Source::field(object, d, ty), value));
        }
        for (array, index, d, value) in items {
            let value = match self.as_read(Opcode::GetarrayitemGcI, Some(d), Mapped::Out(value)) {
                Ok(Mapped::Out(read)) => self.find(read),
                _ => continue,
            };
            let ty = self.out.descr(d).value_type().unwrap_or(Type::Int);
            sources.push((Source::item(array, index, d, ty), value));
        }
        // Where each leaf first stands among the jump's arguments; it is
        // passed on unchanged where that is the loop's input there.
        let mut at_top = vec![None; ending.leaves.len()];
        for (i, item) in ending.state.inputs.iter().enumerate() {
            if let FailArg::Arg(Arg::Value(k)) = *item {
                at_top[k.0 as usize].get_or_insert(i);
            }
        }
        let unchanged = |k: u32| {
            let k = k as usize;
            at_top[k].is_some_and(|i| ending.leaves[k] == Arg::Value(ValueId(i as u32)))
        };
        let mut of_changed_values = Vec::new();
        if self.passes.cse {
            // The values a derived argument can be made of: the label's,
            // the fields' and items', and those of ops of such values
            // (an op's arguments come before it). An op of any other
            // value is never derived: it is not looked at.
            let mut reachable = vec![false; self.out.num_values()];
            let values = (leaves.keys()).chain(sources.iter().map(|(_, value)| value));
            for &value in values {
                if let Arg::Value(v) = value {
                    reachable[v.0 as usize] = true;
                }
            }
            for index in 0..self.out.ops.len() {
                let op = &self.out.ops[index];
                // Reads come from the heap cache, above.
                if op.opcode.has(Flags::READ) && !op.opcode.has(Flags::CALL) {
                    continue;
                }
                let amount = op.args.get(1).and_then(|&a| self.as_int(a));
                if !Source::may_derive(op.opcode, amount) {
                    continue;
                }
                let (opcode, descr, mut args) = (op.opcode, op.descr, op.args.clone());
                let mut made_of_reachable = true;
                for arg in args.iter_mut() {
                    *arg = self.find(*arg);
                    if let Arg::Value(v) = *arg {
                        made_of_reachable &= reachable[v.0 as usize];
                    }
                }
                if !made_of_reachable {
                    continue;
                }
                let value = self.find(Arg::Value(self.out.value_of_op(index)));
                if let Arg::Value(v) = value {
                    reachable[v.0 as usize] = true;
                }
                let source = Source {
                    opcode,
                    args,
                    descr,
                };
                // The body computes each op of the values its pass starts
                // from: a pure op of a value the loop changes, or of one
                // an object holds, it computes of the label's arguments
                // only where the loop computes it of its own start too
                // (`computed_at_start`); else it would go unused.
                let of_changed = |a: &Arg| leaves.get(a).is_some_and(|&k| !unchanged(k));
                match source.args.iter().any(of_changed) {
                    true => of_changed_values.push((source, value)),
                    false => sources.push((source, value)),
                }
            }
        }
        if !of_changed_values.is_empty() {
            // (Each leaf once, however many of the ops it is in.)
            let mut made_of: Vec<(Arg, u32)> = (of_changed_values.iter())
                .flat_map(|(source, _)| source.args.iter())
                .filter_map(|a| leaves.get(a).map(|&k| (*a, k)))
                .collect();
            made_of.sort_unstable_by_key(|&(_, k)| k);
            made_of.dedup();
            let starts = self.starts_in_input(ending, &at_top, &made_of);
            of_changed_values.retain(|(source, _)| computed_at_start(self.input, source, &starts));
            sources.append(&mut of_changed_values);
        }
        // Those made of derived ones come after them: taken in rounds,
        // each taking what the earlier ones made available.
        let mut wanted = Vec::with_capacity(sources.len());
        let mut known = Vec::new();
        let mut pending = sources;
        // (Those left over go to `later`, which the next round takes.)
        let mut later = Vec::with_capacity(pending.len());
        while !pending.is_empty() {
            let count = pending.len();
            for (mut source, value) in pending.drain(..) {
                let args: Option<Args> = (source.args.iter())
                    .map(|&a| template(&leaves, a))
                    .collect();
                let Some(args) = args else {
                    later.push((source, value));
                    continue;
                };
                source.args = args;
                match value {
                    Arg::Const(c) => known.push(Known { source, value: c }),
                    // A value the label already has (a jump argument, say)
                    // is taken again: the body finds it by its source.
                    Arg::Value(_) => {
                        wanted.push((source, Some(value)));
                        leaves.entry(value).or_insert(next_leaf);
                        next_leaf += 1;
                    }
                }
            }
            if later.len() == count {
                break;
            }
            std::mem::swap(&mut pending, &mut later);
        }
        (wanted, known)
    }

    /// What each of `leaves` (a preamble's values, with their leaf)
    /// stands for at the start of a pass, as the loop's input has it: a
    /// place of the jump's arguments (`at_top`, the first of each leaf)
    /// is the loop's input there, and a field of an object passed there
    /// what the loop's first look at that field reads (not after a write
    /// to it). None elsewhere.
    fn starts_in_input(
        &self,
        ending: &Ending,
        at_top: &[Option<usize>],
        leaves: &[(Arg, u32)],
    ) -> rustc_hash::FxHashMap<Arg, Arg> {
        let input = self.input;
        let state = &ending.state;
        let first_read = |object: usize, field: DescrId| {
            let object = Arg::Value(ValueId(object as u32));
            let touches = |op: &&Op| op.descr == Some(field) && op.args.first() == Some(&object);
            let (index, op) = (input.ops.iter().enumerate()).find(|(_, op)| touches(op))?;
            (op.opcode.has(Flags::READ)).then(|| Arg::Value(input.value_of_op(index)))
        };
        let mut starts = rustc_hash::FxHashMap::default();
        for &(value, k) in leaves {
            let leaf = FailArg::Arg(Arg::Value(ValueId(k)));
            let start = match at_top[k as usize] {
                Some(i) => Some(Arg::Value(ValueId(i as u32))),
                None => (state.inputs.iter().enumerate())
                    .filter_map(|(i, item)| match item {
                        FailArg::Virtual(j) => Some((i, &state.virtuals[*j as usize])),
                        _ => None,
                    })
                    .find_map(|(i, object)| {
                        let (field, _) = object.fields.iter().find(|&&(_, item)| item == leaf)?;
                        Some((i, *field))
                    })
                    .and_then(|(i, field)| first_read(i, field)),
            };
            if let Some(start) = start {
                starts.insert(value, start);
            }
        }
        starts
    }

    /// The trace's ending: the captured state, or the arguments of the
    /// final jump it emitted.
    pub(crate) fn ending(&mut self) -> Option<Ending> {
        if let Some(captured) = self.captured.take() {
            return Some(captured);
        }
        let jump = self.out.ops.last().filter(|op| op.opcode == Opcode::Jump)?;
        let items = jump.args.iter().map(|&a| FailArg::Arg(a)).collect();
        Some(self.template(items, Vec::new(), Vec::new()))
    }

    /// A state in terms of label arguments, in the order of
    /// `LabelState::paths`. As `self.capture` says: without places, each
    /// argument of the jump and each value (not constant) an object holds
    /// is a label argument of its own (a trace's jump described);
    /// with them, constants stay constants and a value met again is the
    /// same label argument, but at those places (a peeled loop's label).
    fn template(
        &self,
        mut items: Vec<FailArg>,
        mut virtuals: Vec<Virtual>,
        allocs: Vec<usize>,
    ) -> Ending {
        // A PYPYLOG names the objects of each trace anew: a label that
        // took a constant object passed on for granted could be entered
        // by no bridge (objects held by objects stay constants).
        let named = self.out.namespace.is_some();
        let kept = |a: Arg, path: &Path| {
            named
                || !path.1.is_empty()
                || !matches!(a, Arg::Const(c) if matches!(self.out.constant(c), Const::Ptr(_)))
        };
        // (At most a leaf per argument and per cell of an object.)
        let cells: usize = (virtuals.iter())
            .map(|v| v.fields.len() + v.items.len())
            .sum();
        let mut slots = Slots {
            kept: &kept,
            widened: self.capture.as_deref(),
            seen: vec![false; virtuals.len()],
            virtuals: &mut virtuals,
            leaves: Vec::with_capacity(items.len() + cells),
        };
        // (One path for all, back to empty after each item.)
        let mut path = (0, Vec::new());
        for (input, item) in items.iter_mut().enumerate() {
            path.0 = input;
            slots.slot(item, &mut path);
        }
        let leaves = slots.leaves;
        let facts = leaves.iter().map(|&a| self.fact(a)).collect();
        Ending {
            state: LabelState {
                inputs: items,
                virtuals,
                allocs,
                facts,
                derived: Vec::new(),
                known: Vec::new(),
                site_classes: Vec::new(),
                seen_classes: Vec::new(),
            },
            leaves,
            recomputed: Vec::new(),
            answered: Vec::new(),
            kept_known: Vec::new(),
            unused_known: Vec::new(),
            unsafe_read: false,
            fresh: self.fresh,
        }
    }
}

/// How `template` makes label arguments of what a state holds.
struct Slots<'a> {
    /// The places that are label arguments of their own, if constants
    /// and repeated values are not (`Optimizer::template`).
    widened: Option<&'a [Path]>,
    virtuals: &'a mut [Virtual],
    seen: Vec<bool>,
    /// The value of each label argument so far.
    leaves: Vec<Arg>,
    /// Whether a constant at a place stays a constant (not one a bridge
    /// could pass under another name).
    kept: &'a dyn Fn(Arg, &Path) -> bool,
}

impl Slots<'_> {
    /// Replaces `item`, at `path`, by its label argument, in depth-first
    /// order through the objects.
    fn slot(&mut self, item: &mut FailArg, path: &mut Path) {
        match *item {
            FailArg::Arg(a) => {
                let own = match self.widened {
                    None => path.1.is_empty() || matches!(a, Arg::Value(_)),
                    Some(widened) => widened.contains(path),
                };
                let again = (!own && self.widened.is_some() && matches!(a, Arg::Value(_)))
                    .then(|| self.leaves.iter().position(|&l| l == a))
                    .flatten();
                let slot = match (own, again) {
                    (false, Some(k)) => k,
                    (false, None) if matches!(a, Arg::Const(_)) && (self.kept)(a, path) => return,
                    _ => {
                        self.leaves.push(a);
                        self.leaves.len() - 1
                    }
                };
                *item = FailArg::Arg(Arg::Value(ValueId(slot as u32)));
            }
            FailArg::Virtual(j) if !self.seen[j as usize] => {
                self.seen[j as usize] = true;
                let object = &mut self.virtuals[j as usize];
                let mut fields = std::mem::take(&mut object.fields);
                let mut items = std::mem::take(&mut object.items);
                let descr = object.descr;
                for (d, value) in fields.iter_mut() {
                    path.1.push(Step::Field(*d));
                    self.slot(value, path);
                    path.1.pop();
                }
                for (index, value) in items.iter_mut().enumerate() {
                    path.1.push(Step::Item(index as i64, descr));
                    self.slot(value, path);
                    path.1.pop();
                }
                let object = &mut self.virtuals[j as usize];
                object.fields = fields;
                object.items = items;
            }
            _ => {}
        }
    }
}

/// Whether the loop `input` computes `source` (of a preamble's values)
/// of the values its pass starts from (`starts`, as the input has
/// them): a body then computes it of the label's arguments.
fn computed_at_start(
    input: &Trace,
    source: &Source,
    starts: &rustc_hash::FxHashMap<Arg, Arg>,
) -> bool {
    let args: Option<Args> = (source.args.iter())
        .map(|a| match a {
            Arg::Const(_) => Some(*a),
            Arg::Value(_) => starts.get(a).copied(),
        })
        .collect();
    let Some(args) = args else {
        return false;
    };
    (input.ops.iter())
        .any(|op| op.opcode == source.opcode && op.descr == source.descr && op.args == args)
}

/// The derived label arguments (slots) that no op of `body` uses (its
/// final jump only in their own places), no op of the loop came to be
/// (`Ending::answered`), and no other derived argument or known constant
/// is made of, in increasing order; and whether an op uses one after all
/// (one the body computed again for its jump, `Ending::recomputed`).
fn unused_derived(state: &LabelState, body: &Trace, ending: &Ending) -> (Vec<usize>, bool) {
    if state.derived.is_empty() {
        return (Vec::new(), false);
    }
    let mut used = vec![false; body.inputs.len()];
    let mark = |used: &mut [bool], v: ValueId| {
        if let Some(u) = used.get_mut(v.0 as usize) {
            *u = true;
        }
    };
    let (jump, ops) = body.ops.split_last().expect("a body ends in its jump");
    for op in ops {
        op.for_each_arg(|arg| {
            if let Arg::Value(v) = arg {
                mark(&mut used, v);
            }
        });
    }
    // Passed on by the jump in another argument's place: it saves
    // computing that one again.
    for (k, &arg) in jump.args.iter().enumerate() {
        if matches!(arg, Arg::Value(v) if v.0 as usize != k) {
            if let Arg::Value(v) = arg {
                mark(&mut used, v);
            }
        }
    }
    let used_by_ops = used.clone();
    for &k in &ending.answered {
        mark(&mut used, ValueId(k as u32));
    }
    for &k in &ending.recomputed {
        if let Some(u) = used.get_mut(k) {
            *u = false;
        }
    }
    // Those the known constants and the kept ones are made of are kept
    // (later ones are made of earlier ones only).
    for k in &state.known {
        for &arg in &k.source.args {
            if let Some(u) = arg_slot(arg).and_then(|k| used.get_mut(k)) {
                *u = true;
            }
        }
    }
    for d in state.derived.iter().rev() {
        if used.get(d.slot).copied().unwrap_or(false) {
            for &arg in &d.source.args {
                if let Some(u) = arg_slot(arg).and_then(|k| used.get_mut(k)) {
                    *u = true;
                }
            }
        }
    }
    let mut unused: Vec<usize> = (state.derived.iter())
        .map(|d| d.slot)
        .filter(|&k| !used.get(k).copied().unwrap_or(false))
        .collect();
    unused.sort_unstable();
    let ops_use_one = unused.iter().any(|&k| used_by_ops[k]);
    (unused, ops_use_one)
}

/// The label argument a template argument names, if not a constant.
fn arg_slot(arg: Arg) -> Option<usize> {
    match arg {
        Arg::Value(k) => Some(k.0 as usize),
        Arg::Const(_) => None,
    }
}

/// `body` passing on none of its label arguments `slots` (ascending),
/// which no op of it uses, and its leaves: what optimizing it again
/// without them would give (what computed them again for its jump goes
/// as dead code). Its inputs stay: `splice` leaves those out.
fn without_slots(
    body: Optimized,
    slots: &[usize],
    passes: Passes,
) -> Option<(Optimized, Vec<Arg>)> {
    let Optimized {
        mut trace,
        provenance,
        rule_counts,
        seen_classes,
    } = body;
    let inputs = trace.inputs.len();
    let jump = trace.ops.last_mut()?;
    if jump.args.len() != inputs || slots.iter().any(|&k| k >= inputs) {
        return None;
    }
    let mut args = jump.args.to_vec();
    remove_at(&mut args, slots);
    jump.args = Args::from_vec(args);
    let (trace, provenance) = match passes.dce {
        true => crate::dce::remove_dead(trace, provenance),
        false => (trace, provenance),
    };
    let leaves = trace.ops.last()?.args.clone();
    let body = Optimized {
        trace,
        provenance,
        rule_counts,
        seen_classes,
    };
    Some((body, leaves.to_vec()))
}

/// Takes the derived label arguments `slots` (increasing) out of the
/// state; the later ones move down, and so do the references to them.
fn drop_slots(state: &mut LabelState, slots: &[usize]) {
    let moved = |k: usize| k - slots.iter().filter(|&&s| s < k).count();
    state.derived.retain(|d| !slots.contains(&d.slot));
    for d in state.derived.iter_mut() {
        d.slot = moved(d.slot);
    }
    let sources = (state.derived.iter_mut().map(|d| &mut d.source))
        .chain(state.known.iter_mut().map(|k| &mut k.source));
    for source in sources {
        for arg in source.args.iter_mut() {
            if let Some(k) = arg_slot(*arg) {
                *arg = Arg::Value(ValueId(moved(k) as u32));
            }
        }
    }
    remove_at(&mut state.facts, slots);
}

/// Takes the items at `indices` (increasing) out of `items`, in one pass
/// (a `remove` each would move the rest once per index: the names of a
/// long body, once per dropped argument).
fn remove_at<T>(items: &mut Vec<T>, indices: &[usize]) {
    let mut index = 0;
    let mut next = 0;
    items.retain(|_| {
        let dropped = indices.get(next) == Some(&index);
        next += usize::from(dropped);
        index += 1;
        !dropped
    });
}

/// What remains of `assumed` when a pass of the body ends with `held`
/// known of the same argument: each part of `assumed` that `held`
/// implies.
pub(crate) fn weaken(assumed: &Fact, held: &Fact) -> Fact {
    let range = assumed.range.and_then(|(lower, upper)| {
        let (l, u) = held.range.unwrap_or((i64::MIN, i64::MAX));
        let lower = if l >= lower { lower } else { i64::MIN };
        let upper = if u <= upper { upper } else { i64::MAX };
        ((lower, upper) != (i64::MIN, i64::MAX)).then_some((lower, upper))
    });
    let class = assumed
        .class
        .clone()
        .filter(|c| held.class.as_ref() == Some(c));
    Fact {
        range,
        nonnull: assumed.nonnull && (held.nonnull || held.class.is_some()),
        class,
    }
}

/// A loop's body, as `splice` takes it.
struct Body<'a> {
    optimized: Optimized,
    /// What its jump passes on.
    leaves: &'a [Arg],
    /// Its inputs that are no label arguments (in increasing order): no
    /// op of it uses them (`without_slots`).
    unused: &'a [usize],
}

/// `preamble` less its jump, the label (taking `leaves`, each a value
/// of its own), then `body` with its inputs read as the label's
/// arguments, and a jump to the label with the body's leaves. The
/// body's names are none of the preamble's (`names`); a value a label
/// argument copies is named from `names`, the input's names and the
/// counter where the body's stopped.
fn splice(
    preamble: Optimized,
    leaves: &[Arg],
    body: Body,
    jump: usize,
    (names, mut fresh): (&TakenNames, u32),
) -> (Trace, Vec<Option<usize>>, usize) {
    let Body {
        optimized: mut body,
        leaves: body_leaves,
        unused,
    } = body;
    let (mut trace, mut provenance) = (preamble.trace, preamble.provenance);
    let more = body.trace.ops.len() + leaves.len() + 1;
    trace.ops.reserve(more);
    trace.op_pos.reserve(more);
    trace.names.reserve(more);
    provenance.reserve(more);
    // The jump (or the stand-in for it) goes.
    trace.ops.pop();
    trace.op_pos.pop();
    trace.names.pop();
    provenance.pop();
    // One value of its own for each label argument.
    let mut label_args = Vec::with_capacity(leaves.len());
    for &arg in leaves {
        let own = matches!(arg, Arg::Value(v) if !label_args.contains(&Arg::Value(v)));
        if own {
            label_args.push(arg);
            continue;
        }
        let ty = trace.arg_type(arg);
        let copy = match ty {
            Type::Int => Opcode::SameAsI,
            Type::Ref => Opcode::SameAsR,
            _ => Opcode::SameAsF,
        };
        let name = names.fresh(ty.letter(), &mut fresh);
        let v = trace.push(Op::new(copy, smallvec![arg]), &name, Pos::default());
        provenance.push(Some(jump));
        label_args.push(Arg::Value(v));
    }
    let token = trace.add_descr(Descr {
        text: "TargetToken(1)".into(),
        kind: DescrKind::TargetToken { address: 1 },
    });
    let label = trace.ops.len();
    trace.push(
        Op {
            descr: Some(token),
            ..Op::new(Opcode::Label, label_args.clone())
        },
        "",
        Pos::default(),
    );
    provenance.push(Some(jump));
    // The body's values here: its inputs are the label's arguments (but
    // those no op uses, which are none).
    let body_ops = body.trace.ops.len() - 1;
    let body_inputs = body.trace.inputs.len();
    let mut map: Vec<Option<Arg>> = Vec::with_capacity(body_inputs + body_ops);
    let mut label_arg = label_args.into_iter();
    for k in 0..body_inputs {
        map.push(match unused.binary_search(&k) {
            Ok(_) => None,
            Err(_) => label_arg.next(),
        });
    }
    let value = |map: &[Option<Arg>], v: ValueId| {
        map[v.0 as usize].expect("the body uses only the label's arguments")
    };
    // The body's ops follow the label, in order.
    let first = trace.names.len();
    map.extend((0..body_ops).map(|i| Some(Arg::Value(ValueId((first + i) as u32)))));
    // (Changed where they are, then moved in one piece, names and all:
    // no op is copied one by one.)
    let mut body_ops_taken = std::mem::take(&mut body.trace.ops);
    body_ops_taken.truncate(body_ops);
    for op in body_ops_taken.iter_mut() {
        trace.import_op_in_place(&body.trace, op, |v| value(&map, v));
    }
    trace.ops.append(&mut body_ops_taken);
    trace
        .op_pos
        .extend_from_slice(&body.trace.op_pos[..body_ops]);
    let body_names = std::mem::take(&mut body.trace.names);
    trace
        .names
        .extend(body_names.into_iter().skip(body_inputs).take(body_ops));
    trace
        .names
        .resize(first + body_ops, CompactString::default());
    provenance.extend_from_slice(&body.provenance[..body_ops]);
    let mut end = trace.import_op(
        &body.trace,
        &Op::new(Opcode::Jump, body_leaves.to_vec()),
        |v| value(&map, v),
    );
    end.descr = Some(token);
    trace.push(end, "", Pos::default());
    provenance.push(Some(jump));
    (trace, provenance, label)
}
