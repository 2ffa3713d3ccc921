//! The optimizer's driver: one forward pass over the input trace, and
//! what every pass shares (the output trace, the map from input values to
//! output ones, each output value's bound, the interned constants).
//!
//! Each input op is looked at once, in order. Its arguments are first
//! mapped to what they became in the output (a union-find over output
//! values: PyPy's `make_equal_to`/`find`). Then it goes to the passes
//! of its kind (`op`):
//!
//! - an integer op, in this order (`int_op`):
//!   1. `fold`: constant folding, when every argument is a constant;
//!   2. `rules`: the peephole rules (generated from `rules/*.rules`),
//!      whose checks read the integer domain; a rule's new ops are
//!      optimized in turn, as PyPy's `send_extra_operation` does;
//!   3. `intbounds`: a result whose bound is a single value becomes that
//!      constant; an `*_ovf` op that cannot overflow becomes the plain op
//!      and its guard goes;
//!   4. `relations`: a comparison that known orderings decide;
//!   5. `cse`: a pure op equal to an earlier one is replaced by it;
//! - a guard: `guards` (removed where known to pass; else it teaches);
//! - any other op, in this order: a `cond_call` of condition 0 and
//!   Python's division by 1 fold; `virtuals` (allocations delayed, their
//!   fields and items kept, array copies between them made); `lazy`
//!   (field writes delayed); a reference comparison `values` decides;
//!   `floats` (identities and common subexpressions of float ops); the
//!   `heap` cache (a read or pure call already known); else it is copied
//!   with its arguments forwarded, never moved, and teaches the heap
//!   cache and `intbounds` (what a read or a division gives).
//!
//! After the pass, `dce` drops what nothing uses. Each output op records
//! the input op it stands for (`provenance`), so that the validator can
//! align guards.

use compact_str::CompactString;
use rustc_hash::FxHashMap as HashMap;

use traceopt_domains::IntBound;
use traceopt_ir::{
    smallvec, Arg, Args, Const, ConstId, DescrId, Fact, Flags, LabelState, Op, Opcode, Path, Pos,
    SeenClass, Trace, Type, ValueId,
};
use traceopt_rules::check::is_rule_op;
use traceopt_rules::runtime::Built;

use crate::heap::{HeapCache, HeapStep};
use crate::inject::Bug;
use crate::intbounds;
use crate::names::TakenNames;
use crate::relations::Relations;
use crate::rules::{self, RULES};
use crate::values::{Info, Value};
use crate::virtuals::{Mapped, Virtuals};

/// Which parts of the optimizer run (all by default).
#[derive(Clone, Copy, Debug)]
pub struct Passes {
    pub fold: bool,
    pub rules: bool,
    pub bounds: bool,
    pub cse: bool,
    pub guards: bool,
    /// The heap cache (`heap`).
    pub heap: bool,
    /// Allocation removal (`virtuals`).
    pub virtuals: bool,
    /// Relational facts (`x < y`, `y < z` give `x < z`).
    pub relations: bool,
    pub dce: bool,
    /// Loop peeling (`peel`), which `optimize_or_peel` does for a loop
    /// (off by default; not one of the `NAMES`: `optimize` alone never
    /// peels).
    pub peel: bool,
    /// A known miscompilation switched on, to test the fuzzer (never in
    /// normal use).
    pub bug: Option<Bug>,
}

impl Default for Passes {
    fn default() -> Passes {
        Passes {
            fold: true,
            rules: true,
            bounds: true,
            cse: true,
            guards: true,
            heap: true,
            virtuals: true,
            relations: true,
            dce: true,
            peel: false,
            bug: None,
        }
    }
}

impl Passes {
    pub const NAMES: &'static [&'static str] = &[
        "fold",
        "rules",
        "bounds",
        "cse",
        "guards",
        "heap",
        "virtuals",
        "relations",
        "dce",
    ];

    /// Parses a comma-separated list such as `fold,rules`; `all` is every
    /// pass, `none` none.
    pub fn parse(list: &str) -> Result<Passes, String> {
        let mut passes = Passes {
            fold: false,
            rules: false,
            bounds: false,
            cse: false,
            guards: false,
            heap: false,
            virtuals: false,
            relations: false,
            dce: false,
            peel: false,
            bug: None,
        };
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "all" => passes = Passes::default(),
                "none" => {}
                "fold" => passes.fold = true,
                "rules" => passes.rules = true,
                "bounds" => passes.bounds = true,
                "cse" => passes.cse = true,
                "guards" => passes.guards = true,
                "heap" => passes.heap = true,
                "virtuals" => passes.virtuals = true,
                "dce" => passes.dce = true,
                "relations" => passes.relations = true,
                other => {
                    return Err(format!(
                        "unknown pass '{other}' (passes: {}, all, none)",
                        Passes::NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(passes)
    }
}

/// The result of optimizing one trace.
#[derive(Clone, Debug)]
pub struct Optimized {
    pub trace: Trace,
    /// For each output op, the index of the input op it stands for; in a
    /// peeled loop's body, `n + j` (`n` the input's length) for the
    /// allocation of the label's object `j` (`LabelState::virtuals`),
    /// which a previous pass made.
    pub provenance: Vec<Option<usize>>,
    /// How often each rule of `RULES` fired.
    pub rule_counts: Vec<u32>,
    /// The classes of unnamed allocations the output takes for granted
    /// because a recorded class guard tests, through the heap, what one
    /// of them made (`SeenClass`): a claim the validator proves.
    pub seen_classes: Vec<SeenClass>,
}

/// The trace can never run to its end: a guard must always fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Infeasible {
    /// The input op (index) of the guard that always fails.
    pub op_index: usize,
    pub line: u32,
    pub reason: String,
}

impl std::fmt::Display for Infeasible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "this trace can never run to the end: {} (line {})",
            self.reason, self.line
        )
    }
}

/// The name of an op without a result (and so of none).
pub(crate) const UNNAMED: CompactString = CompactString::const_new("");

/// Depth limit for rewriting the ops a rule builds (rules lower the
/// cost, so this is a safety net, never reached by terminating rules).
const MAX_REWRITE_DEPTH: u32 = 16;

/// The integer constants `0..SMALL_INTS`, which `int_const` finds by
/// index.
const SMALL_INTS: usize = 16;

/// An integer op for CSE: opcode and (up to) two arguments.
pub(crate) type CseKey = (Opcode, Arg, Arg);

/// How far a narrowed bound is passed back through the ops that
/// produced it.
pub(crate) const MAX_BACKWARD_DEPTH: u32 = 4;

pub(crate) struct Optimizer<'a> {
    pub(crate) input: &'a Trace,
    pub(crate) passes: Passes,
    pub(crate) out: Trace,
    pub(crate) provenance: Vec<Option<usize>>,
    /// Input value -> output argument.
    pub(crate) map: Vec<Option<Arg>>,
    /// Output value -> what the passes keep of it (one list, not one
    /// per kind: one push per value).
    pub(crate) values: Vec<Value>,
    pub(crate) cse: HashMap<CseKey, Arg>,
    /// Integer constants of the output, by value: the small ones (most
    /// asked for: 0 and 1 of every known comparison) by index, the
    /// others hashed.
    pub(crate) small_int_consts: [Option<ConstId>; SMALL_INTS],
    pub(crate) int_consts: HashMap<i64, ConstId>,
    /// What the trace has read and written (`heap`).
    pub(crate) heap: HeapCache,
    /// The allocations not done (yet) (`virtuals`).
    pub(crate) virtuals: Virtuals,
    /// The output's null constant, once made.
    pub(crate) null: Option<ConstId>,
    /// The output descrs of the virtual ref layout, once looked up.
    pub(crate) vref_descrs: Option<Option<[DescrId; 3]>>,
    pub(crate) relations: Relations,
    /// Reference tests emitted: (a, b) -> (the test, whether it is
    /// `ptr_eq` rather than `ptr_ne`).
    pub(crate) ref_tests: HashMap<(Arg, Arg), (Arg, bool)>,
    /// The `guard_nonnull` that made each reference known not null (its
    /// index in the output), for a class test to strengthen.
    pub(crate) nonnull_guards: HashMap<Arg, usize>,
    pub(crate) rule_counts: Vec<u32>,
    /// The last `*_ovf` input op was made plain: drop its guard.
    pub(crate) drop_overflow_guard: bool,
    /// The last input op was a call the optimizer removed: the
    /// `guard_no_exception` and `guard_not_forced` after it go too.
    pub(crate) call_removed: bool,
    /// The writes not emitted yet (`lazy.rs`).
    pub(crate) lazy: Vec<crate::lazy::LazyWrite>,
    /// Rules switched off (by index in `RULES`) until the first rule
    /// fires, for analyses.
    pub(crate) disabled: Disabled<'a>,
    pub(crate) any_rule_fired: bool,
    /// The input op being optimized.
    pub(crate) current: usize,
    /// The class of what each allocating op of the input makes, where
    /// its descr does not name it: as a peeled loop's preamble tested
    /// (`SiteClass`), or a claim was taken; else as its recording saw
    /// (`recorded_classes`, found when first asked).
    pub(crate) site_classes: rustc_hash::FxHashMap<usize, Const>,
    /// What is looked up in the input once (`InputTables`).
    pub(crate) tables: &'a InputTables,
    /// Those seen where a class guard of the recording tests what the
    /// optimizer knows one of its allocations made (`SeenClass`), by a
    /// pass from the trace's start (`may_see_classes`): a body starts
    /// from its label's facts, which the recording's run need not have
    /// met.
    pub(crate) seen_classes: Vec<SeenClass>,
    pub(crate) may_see_classes: bool,
    pub(crate) fresh: u32,
    /// Every value is given a fresh name (a peeled loop's body: its
    /// input's names are its preamble's, which the body follows).
    pub(crate) fresh_names_only: bool,
    /// Keep the final jump's virtual arguments (`optimize_knowing`), with
    /// the places where the ending has label arguments of its own
    /// (`End::Capture`).
    pub(crate) capture: Option<std::borrow::Cow<'a, [Path]>>,
    /// What the final jump passed on, captured.
    pub(crate) captured: Option<Ending>,
    /// The derived label arguments and known constants a peeled body (or
    /// an entry into one) was given, to establish again at its jump;
    /// `None` in a preamble, which derives what it can.
    pub(crate) derived: Option<crate::peel::Given>,
    /// The pure ops whose results label arguments hold (by opcode and
    /// arguments), in a body that starts at a label; with the index of
    /// the known constant it is, if it is one.
    pub(crate) derived_ops: HashMap<(Opcode, Args), (Arg, Option<usize>)>,
    /// Whether `derived_ops` has an op of each opcode (by its number):
    /// most ops are of none, and are not hashed.
    pub(crate) derived_opcodes: Vec<bool>,
    /// The heap places of the known constants a body was given, and
    /// whether the body has used each (looked it up, by its place, its
    /// op or its pair of references).
    pub(crate) known_places: HashMap<crate::heap::Place, usize>,
    pub(crate) known_used: Vec<bool>,
    /// The reference tests among those known constants, by the pair of
    /// references they compare (`values::unordered`).
    pub(crate) known_ref_tests: HashMap<(Arg, Arg), usize>,
    /// The loop an entry jumps into at its label, and what it tests
    /// (`End::Enter`).
    pub(crate) entering: Option<crate::entry::Entering<'a>>,
    /// The output ops from here on may be looked into (`defining_op`):
    /// past a label inside the input, those after it.
    pub(crate) label_floor: usize,
}

/// Optimizes `input` with the given passes. `input` must pass the
/// checker (`traceopt_ir::check`): arities, types and definitions are
/// taken as checked.
pub fn optimize(input: &Trace, passes: Passes) -> Result<Optimized, Infeasible> {
    optimize_without(input, passes, &[])
}

/// `optimize` with some rules switched off until the first rule fires
/// (to choose which of two rules goes first): `disabled[i]` for rule `i`
/// of `RULES` (missing entries are enabled).
pub fn optimize_without(
    input: &Trace,
    passes: Passes,
    disabled: &[bool],
) -> Result<Optimized, Infeasible> {
    let disabled = Disabled {
        rules: disabled,
        for_good: false,
    };
    let start = Start::Inputs(&[]);
    optimize_knowing(input, passes, disabled, start, End::Plain).map(|(optimized, _)| optimized)
}

/// `optimize` as if the rules `removed[i]` (rule `i` of `RULES`) were
/// not in the rule set: what the rest of the optimizer does without
/// them (`traceopt synth` asks it).
pub fn optimize_without_rules(
    input: &Trace,
    passes: Passes,
    removed: &[bool],
) -> Result<Optimized, Infeasible> {
    let disabled = Disabled {
        rules: removed,
        for_good: true,
    };
    let start = Start::Inputs(&[]);
    optimize_knowing(input, passes, disabled, start, End::Plain).map(|(optimized, _)| optimized)
}

/// Rules switched off (`disabled[i]` for rule `i` of `RULES`, missing
/// entries enabled): until a rule fires, or for good.
#[derive(Clone, Copy, Default)]
pub(crate) struct Disabled<'a> {
    pub rules: &'a [bool],
    pub for_good: bool,
}

/// Where a peeled loop's body starts (`peel`): its inputs are the
/// label's arguments (`types`, `names`), the loop's inputs are what
/// `state` says in terms of them (`pool` holds its constants and
/// descrs), and its facts are taken for granted.
pub(crate) struct Entry<'a> {
    pub state: &'a LabelState,
    pub pool: &'a Trace,
    pub types: &'a [Type],
    pub names: &'a [compact_str::CompactString],
    /// Where the counter of fresh names starts: past those its preamble
    /// took (`Ending::fresh`).
    pub first_fresh: u32,
}

/// How the optimized trace ended: the state its final jump (back to the
/// start) passes on, in terms of `leaves`, its output arguments (label
/// argument `k` of the state is `leaves[k]`), with what is known of
/// each.
pub(crate) struct Ending {
    pub state: LabelState,
    pub leaves: Vec<Arg>,
    /// The derived label arguments whose pure op had to be computed
    /// again at the end (its arguments changed): carrying them saves
    /// nothing.
    pub recomputed: Vec<usize>,
    /// The inputs of the trace (a body's: the label's arguments) that
    /// some op of the loop came to be (a read the heap cache answered
    /// with one, a pure op a label argument gives): carrying them saves
    /// that op, whatever uses it. (Found for a body given derived
    /// arguments only, the one ending `unused_derived` looks at.)
    pub answered: Vec<usize>,
    /// Which of the known constants it was given still hold at the end
    /// (their indexes).
    pub kept_known: Vec<usize>,
    /// Which of them the body never used (left out of `kept_known`
    /// unchecked: without them the body is the same).
    pub unused_known: Vec<usize>,
    /// An entry had to read an array item it cannot tell is there (its
    /// array's length unknown): it may not jump to the label.
    pub unsafe_read: bool,
    /// The counter of fresh names at the end (`fresh_name`): a name it
    /// gives after that is none of the trace's.
    pub fresh: u32,
}

/// Where the optimizer starts (`optimize_knowing`).
#[derive(Clone, Copy)]
pub(crate) enum Start<'a> {
    /// From the trace's inputs, knowing these facts of them (one for each
    /// input, or none).
    Inputs(&'a [Fact]),
    /// From a loop's inputs, testing first that its unnamed allocations
    /// make these classes (a peeled loop's preamble).
    Loop(&'a [traceopt_ir::SiteClass]),
    /// From a peeled loop's label.
    Label(&'a Entry<'a>),
}

/// What becomes of the final jump (`optimize_knowing`).
#[derive(Clone, Copy)]
pub(crate) enum End<'a> {
    /// Emitted, its virtual arguments forced.
    Plain,
    /// The same, and the ending is its arguments.
    Describe,
    /// Not emitted: its virtual arguments stay virtual, and the ending
    /// describes them: constants stay constants and a value met again is
    /// the same label argument, but at these places, each a label
    /// argument of its own (an object there is allocated).
    Capture(&'a [Path]),
    /// Captured as for `Capture`, with the fields a peeled loop's label
    /// state (in terms of its trace) reads out of its arguments: the
    /// jump of a trace that enters that loop at its label.
    Enter(&'a LabelState, &'a Trace, &'a [Box<str>]),
}

/// What the optimizer looks up in its input, found when first asked
/// and kept for every pass over that input (a peeled loop's preamble and
/// bodies).
#[derive(Default)]
pub(crate) struct InputTables {
    /// `Trace::recorded_classes` of the input, in the order of the
    /// allocating ops (once each).
    recorded_classes: std::cell::OnceCell<Vec<(usize, Const)>>,
    /// The input's value names a fresh name could meet
    /// (`Optimizer::fresh_name`).
    numbered_names: std::cell::OnceCell<TakenNames>,
}

impl InputTables {
    /// `Trace::recorded_classes` of `input` (the input of these tables),
    /// sorted by allocating op.
    pub(crate) fn recorded_classes(&self, input: &Trace) -> &[(usize, Const)] {
        self.recorded_classes.get_or_init(|| {
            let mut classes = input.recorded_classes();
            classes.sort_unstable_by_key(|&(site, _)| site);
            classes
        })
    }

    /// The names of `input` (the input of these tables) a fresh name
    /// could meet: those of a letter and a number past its count of
    /// values, where the counter of fresh names starts.
    pub(crate) fn numbered_names(&self, input: &Trace) -> &TakenNames {
        (self.numbered_names).get_or_init(|| TakenNames::of(&input.names, input.num_values()))
    }
}

/// `optimize_without`, starting as `start` says (from the input's inputs,
/// with facts known of them, or from a peeled loop's label), ending as
/// `end` says.
pub(crate) fn optimize_knowing(
    input: &Trace,
    passes: Passes,
    disabled: Disabled,
    start: Start,
    end: End,
) -> Result<(Optimized, Option<Ending>), Infeasible> {
    let tables = InputTables::default();
    optimize_sharing(input, &tables, passes, disabled, start, end)
}

/// `optimize_knowing`, with what is looked up in `input` kept in
/// `tables` (for `input` only).
pub(crate) fn optimize_sharing(
    input: &Trace,
    tables: &InputTables,
    passes: Passes,
    disabled: Disabled,
    start: Start,
    end: End,
) -> Result<(Optimized, Option<Ending>), Infeasible> {
    let mut opt = Optimizer {
        disabled,
        any_rule_fired: false,
        input,
        passes,
        out: Trace::new(),
        provenance: Vec::new(),
        map: vec![None; input.num_values()],
        values: Vec::with_capacity(input.num_values()),
        // (Sized for the trace: a comparison a guard decides leaves
        // four entries, and growing step by step cost more than they.)
        cse: HashMap::with_capacity_and_hasher(input.ops.len() * 3 / 2, Default::default()),
        small_int_consts: [None; SMALL_INTS],
        int_consts: HashMap::default(),
        null: None,
        heap: HeapCache::for_trace(input.ops.len()),
        virtuals: if passes.virtuals {
            Virtuals::for_inputs(input.num_values())
        } else {
            Virtuals::default()
        },
        vref_descrs: None,
        relations: Relations::default(),
        ref_tests: HashMap::default(),
        nonnull_guards: HashMap::default(),
        rule_counts: vec![0; RULES.len()],
        drop_overflow_guard: false,
        call_removed: false,
        lazy: Vec::new(),
        current: 0,
        fresh: match start {
            Start::Label(entry) => entry.first_fresh,
            _ => input.num_values() as u32,
        },
        fresh_names_only: matches!(start, Start::Label(_)),
        site_classes: Default::default(),
        tables,
        seen_classes: Vec::new(),
        may_see_classes: matches!(start, Start::Inputs(_) | Start::Loop(_))
            && !matches!(end, End::Enter(..)),
        capture: None,
        captured: None,
        derived: None,
        derived_ops: HashMap::default(),
        derived_opcodes: Vec::new(),
        known_places: HashMap::default(),
        known_used: Vec::new(),
        known_ref_tests: HashMap::default(),
        entering: None,
        label_floor: 0,
    };
    opt.capture = match end {
        End::Capture(widened) => Some(widened.into()),
        End::Enter(..) => Some(Vec::new().into()),
        _ => None,
    };
    // The output is about as long as the input, or shorter: sized once,
    // its ops and names are not copied as it grows. (A peeled loop's
    // preamble gets its body after it: room for both.)
    let inputs = match start {
        Start::Label(entry) => entry.types.len(),
        _ => input.inputs.len(),
    };
    let ops = match start {
        Start::Loop(_) => 2 * input.ops.len(),
        _ => input.ops.len(),
    };
    opt.out.inputs.reserve(inputs);
    opt.out.ops.reserve(ops);
    opt.out.op_pos.reserve(ops);
    opt.out.names.reserve(inputs + ops);
    opt.provenance.reserve(ops);
    match start {
        Start::Inputs(_) | Start::Loop(_) => {
            // The input's inputs, names copied as they are (`add_input`
            // would make each anew from its text).
            opt.out.inputs.extend_from_slice(&input.inputs);
            opt.out
                .names
                .extend_from_slice(&input.names[..input.inputs.len()]);
            for i in 0..input.inputs.len() {
                let v = ValueId(i as u32);
                opt.new_value(v);
                opt.map[i] = Some(Arg::Value(v));
            }
        }
        Start::Label(entry) => {
            for (ty, name) in entry.types.iter().zip(entry.names) {
                let v = opt.out.add_input(*ty, name);
                opt.new_value(v);
            }
        }
    }
    opt.out.input_pos = input.input_pos;
    // The same names mean the same descrs and constants (the vref layout).
    opt.out.namespace = input.namespace.clone();
    // The output's constants and descrs are the input's, with the same
    // ids (new ones are added after them).
    opt.out.share_interned(input);
    match start {
        Start::Inputs(facts) => {
            for (i, fact) in facts.iter().enumerate().take(input.inputs.len()) {
                if fact.fits(input.inputs[i]) {
                    opt.assume(Arg::Value(ValueId(i as u32)), fact);
                }
            }
        }
        Start::Loop(site_classes) => opt.test_site_classes(site_classes),
        Start::Label(entry) => opt.enter(entry),
    }
    if let End::Enter(state, pool, structs) = end {
        opt.entering = Some(crate::entry::Entering::new(state, pool, structs));
        opt.derived = Some(opt.import_given(state, pool));
        // The places where the label has arguments of its own, in the
        // output's descrs.
        let paths = (state.fresh_paths().into_iter())
            .map(|(input, steps)| (input, opt.import_steps(&steps, pool)))
            .collect();
        opt.capture = Some(std::borrow::Cow::<[Path]>::Owned(paths));
    }
    for (index, op) in input.ops.iter().enumerate() {
        opt.current = index;
        opt.op(index, op)?;
    }
    let ending = (!matches!(end, End::Plain)).then(|| opt.ending()).flatten();
    let (trace, provenance) = if passes.dce {
        crate::dce::remove_dead(opt.out, opt.provenance)
    } else {
        (opt.out, opt.provenance)
    };
    // The leaves as the output (renumbered by `dce`) has them: the final
    // jump's arguments, or its stand-in's.
    let fresh = opt.fresh;
    let ending = ending.map(|e| Ending {
        fresh,
        leaves: trace
            .ops
            .last()
            .map_or_else(|| e.leaves.clone(), |jump| jump.args.to_vec()),
        ..e
    });
    let optimized = Optimized {
        trace,
        provenance,
        rule_counts: opt.rule_counts,
        seen_classes: opt.seen_classes,
    };
    Ok((optimized, ending))
}

impl Optimizer<'_> {
    pub(crate) fn new_value(&mut self, v: ValueId) {
        // Values come in order: this is one push each, as a rule.
        while self.values.len() <= v.0 as usize {
            self.values.push(Value::default());
        }
    }

    /// What an output argument stands for now (path-compressing find;
    /// most values were never replaced, and cost one look).
    #[inline]
    pub(crate) fn find(&mut self, arg: Arg) -> Arg {
        match arg {
            Arg::Value(v) if self.values[v.0 as usize].replaced.is_some() => self.find_replaced(v),
            _ => arg,
        }
    }

    fn find_replaced(&mut self, v: ValueId) -> Arg {
        let mut root = Arg::Value(v);
        while let Arg::Value(r) = root {
            match self.values[r.0 as usize].replaced {
                Some(next) => root = next,
                None => break,
            }
        }
        // Every value on the way now points at the root.
        let mut at = v;
        while let Some(next) = self.values[at.0 as usize].replaced {
            self.values[at.0 as usize].replaced = Some(root);
            match next {
                Arg::Value(n) if next != root => at = n,
                _ => break,
            }
        }
        root
    }

    pub(crate) fn make_equal_to(&mut self, v: ValueId, to: Arg) {
        if Arg::Value(v) != to {
            self.values[v.0 as usize].replaced = Some(to);
        }
    }

    /// An input argument, forwarded (a virtual one is forced).
    #[inline]
    pub(crate) fn arg(&mut self, arg: Arg) -> Arg {
        let mapped = match arg {
            Arg::Value(v) => match self.map[v.0 as usize] {
                Some(a) => a,
                None => self.virtual_arg(v),
            },
            // The output's constants are the input's, with the same ids.
            constant => constant,
        };
        self.find(mapped)
    }

    /// `arg` of an input value that stands for a virtual: the output
    /// value it was forced into, forced now if need be. (Out of line:
    /// `arg`'s common case is one look into `map`.)
    #[inline(never)]
    fn virtual_arg(&mut self, v: ValueId) -> Arg {
        match self.virtuals.forced(v) {
            Some(forced) => Arg::Value(forced),
            None => {
                let k = (self.virtuals.of(v)).expect("checked traces define before use");
                Arg::Value(self.force(k))
            }
        }
    }

    pub(crate) fn int_const(&mut self, value: i64) -> Arg {
        let out = &mut self.out;
        let new = || out.add_const(Const::Int(value));
        Arg::Const(match usize::try_from(value) {
            Ok(i) if i < SMALL_INTS => *self.small_int_consts[i].get_or_insert_with(new),
            _ => *self.int_consts.entry(value).or_insert_with(new),
        })
    }

    pub(crate) fn as_int(&self, arg: Arg) -> Option<i64> {
        match arg {
            Arg::Const(c) => match self.out.constant(c) {
                Const::Int(v) => Some(*v),
                _ => None,
            },
            Arg::Value(_) => None,
        }
    }

    pub(crate) fn bound(&self, arg: Arg) -> IntBound {
        match arg {
            Arg::Const(_) => match self.as_int(arg) {
                Some(v) => IntBound::constant(v),
                None => IntBound::unbounded(),
            },
            Arg::Value(v) => self.value_bound(v),
        }
    }

    /// The class of what input op `site` allocates, where its descr does
    /// not name it and it is known (`site_classes`).
    pub(crate) fn site_class(&self, site: usize) -> Option<Const> {
        let recorded = || {
            let classes = self.tables.recorded_classes(self.input);
            let found = classes.binary_search_by_key(&site, |&(k, _)| k).ok();
            found.map(|i| classes[i].1.clone())
        };
        self.site_classes.get(&site).cloned().or_else(recorded)
    }

    pub(crate) fn emit(&mut self, op: Op, name: Option<&CompactString>) -> ValueId {
        self.emit_for(op, name, self.current)
    }

    /// Emits `op` standing for input op `index` (its provenance and
    /// position).
    pub(crate) fn emit_for(
        &mut self,
        op: Op,
        name: Option<&CompactString>,
        index: usize,
    ) -> ValueId {
        let pos = self
            .input
            .op_pos
            .get(index)
            .copied()
            .unwrap_or(Pos::default());
        let name = match name {
            Some(n) if !self.fresh_names_only => n.clone(),
            _ => self.fresh_name(op.opcode.result_type()),
        };
        let instance = self.returns_instance(&op);
        let v = self.push_output(op, name, pos, index);
        if instance {
            self.learn_instance(v);
        }
        v
    }

    /// Emits input op `index`, a `debug_merge_point` of constants, as
    /// it is. (`emit_for`, less what a marker never needs: it has a
    /// name, returns no instance, and its value comes next.)
    fn emit_marker(&mut self, index: usize, op: &Op) {
        let marker = Op {
            descr: op.descr,
            offset: op.offset,
            ..Op::new(op.opcode, Args::from_slice(&op.args))
        };
        let input = self.input;
        let name = input.compact_name(input.value_of_op(index)).clone();
        let pos = input.op_pos.get(index).copied().unwrap_or_default();
        self.push_output(marker, name, pos, index);
    }

    /// Appends `op` to the output, standing for input op `index`: its
    /// value's id. (`Trace::push`, by hand: every output op comes this
    /// way, and the call cost more than the three pushes.)
    #[inline(always)]
    fn push_output(&mut self, op: Op, name: CompactString, pos: Pos, index: usize) -> ValueId {
        let out = &mut self.out;
        out.ops.push(op);
        out.op_pos.push(pos);
        out.names.push(name);
        let v = ValueId(out.names.len() as u32 - 1);
        self.provenance.push(Some(index));
        self.new_value(v);
        v
    }

    /// A name for a value the optimizer makes: none the input uses
    /// (`names`).
    pub(crate) fn fresh_name(&mut self, ty: Type) -> CompactString {
        if ty == Type::Void {
            return UNNAMED;
        }
        (self.tables.numbered_names(self.input)).fresh(ty.letter(), &mut self.fresh)
    }

    /// Optimizes input op `index`, `op`.
    #[inline]
    pub(crate) fn op(&mut self, index: usize, op: &Op) -> Result<(), Infeasible> {
        // A `debug_merge_point` (one op in seven of a log) of constants
        // goes out as it is: it reads, writes and tells nothing. (Before
        // the call: the rest's frame is large.)
        if op.opcode == Opcode::DebugMergePoint
            && op.args.iter().all(|a| matches!(a, Arg::Const(_)))
        {
            self.emit_marker(index, op);
            return Ok(());
        }
        // The ops most of a recorded trace is, whose optimizing is simple
        // (a write into a virtual object, an allocation, ...), are done
        // at once (`virtual_write`, `quick_op`: each out of line, lean).
        let quick = match op.opcode {
            Opcode::SetfieldGc | Opcode::SetarrayitemGc => {
                self.passes.virtuals && self.virtual_write(op)
            }
            opcode if crate::virtuals::may_be_quick(opcode) && self.passes.virtuals => {
                self.quick_op(index, op);
                true
            }
            // A `quasiimmut_field` (one op in twenty) only marks a field
            // the next `guard_not_invalidated` watches, and that guard
            // is needed once until a call: with no writes kept to emit
            // before them, the heap pass drops both here, as
            // `forwarded_op` and `guard` would after the dispatch.
            Opcode::QuasiimmutField | Opcode::GuardNotInvalidated => {
                let dropped = self.passes.heap
                    && self.lazy.is_empty()
                    && (op.opcode == Opcode::QuasiimmutField || self.heap.not_invalidated);
                if dropped {
                    self.call_removed = false;
                }
                dropped
            }
            _ => false,
        };
        if quick {
            return Ok(());
        }
        self.optimize_op(index, op)
    }

    /// `op` of any op but a marker of constants.
    #[inline(never)]
    fn optimize_op(&mut self, index: usize, op: &Op) -> Result<(), Infeasible> {
        if self.capture.is_some() && op.opcode == Opcode::Jump && index + 1 == self.input.ops.len()
        {
            // What a jump could see of the heap is written first.
            if self.passes.heap {
                self.lazy_op(index, op);
            }
            self.captured = Some(self.capture_jump(&op.args));
            return Ok(());
        }
        let input_value = self.input.value_of_op(index);
        self.learn_dereference(op);
        use Opcode::{DebugMergePoint, GuardNoException, GuardNotForced};
        if !matches!(
            op.opcode,
            GuardNoException | GuardNotForced | DebugMergePoint
        ) {
            self.call_removed = false;
        }
        // A conditional call whose condition is 0 calls nothing (and its
        // arguments need not exist).
        if op.opcode == Opcode::CondCallN && self.passes.fold {
            let condition = self.arg(op.args[0]);
            if self.as_int(condition) == Some(0) {
                self.call_removed = true;
                return Ok(());
            }
        }
        // A copy of no characters does nothing.
        if matches!(
            op.opcode,
            Opcode::Copystrcontent | Opcode::Copyunicodecontent
        ) && self.passes.heap
        {
            let length = self.arg(op.args[4]);
            if self.as_int(length) == Some(0) {
                return Ok(());
            }
        }
        // Python's division by a power of two is an arithmetic shift (it
        // rounds down), its modulo the low bits (of either sign); by 1,
        // the dividend and 0. The call raises nothing then.
        let division = (op.opcode.has(Flags::CALL))
            .then(|| {
                crate::intbounds::python_division(op.opcode, op.descr.map(|d| self.input.descr(d)))
            })
            .flatten();
        if let (Some(os), true, 3) = (division, self.passes.fold, op.args.len()) {
            let divisor = self.arg(op.args[2]);
            let divisor = self.as_int(divisor);
            if let Some(k) = divisor.filter(|&d| d > 0 && d & (d - 1) == 0) {
                let dividend = self.arg(op.args[1]);
                let (opcode, by) = match os {
                    Opcode::IntPydiv => (Opcode::IntRshift, i64::from(k.trailing_zeros())),
                    _ => (Opcode::IntAnd, k - 1),
                };
                let by = self.int_const(by);
                let name = self.input.compact_name(input_value).clone();
                let value = self.int_op(opcode, smallvec![dividend, by], Some(&name), 0)?;
                self.map[input_value.0 as usize] = Some(value);
                self.call_removed = true;
                return Ok(());
            }
        }
        if self.passes.virtuals && self.virtual_op(index, op)? {
            return Ok(());
        }
        if self.passes.heap && self.lazy_op(index, op) {
            return Ok(());
        }
        self.forwarded_op(index, op)
    }

    /// The rest of `op`, for an op neither `virtuals` nor `lazy` took:
    /// its arguments forwarded, it goes to the passes of its kind. (Out
    /// of line: the ops handled above, most of a trace, do not pay for
    /// this part's frame.)
    #[inline(never)]
    fn forwarded_op(&mut self, index: usize, op: &Op) -> Result<(), Infeasible> {
        let inside = op.opcode == Opcode::Label && self.after_first_op(index);
        if inside && !self.bug(Bug::LabelKeepsFacts) {
            self.label_inside(op);
            return Ok(());
        }
        let input_value = self.input.value_of_op(index);
        // (Forwarded in place where they fit, and looked at there; a
        // list of the op's own is made only where an op is made.)
        let mut inline = [Arg::Const(ConstId(0)); 3];
        let spilled: Args;
        let args: &[Arg] = match op.args.len() {
            n if n <= inline.len() => {
                for (slot, &a) in inline.iter_mut().zip(&op.args) {
                    *slot = self.arg(a);
                }
                &inline[..n]
            }
            _ => {
                spilled = op.args.iter().map(|&a| self.arg(a)).collect();
                &spilled
            }
        };
        if self.passes.guards && self.take_hint(op.opcode, args) {
            return Ok(());
        }
        if let Some(undone) = self.undo_cast(op.opcode, args).filter(|_| self.passes.fold) {
            self.map[input_value.0 as usize] = Some(self.find(undone));
            return Ok(());
        }
        let derived = (!self.derived_ops.is_empty())
            .then(|| self.derived_op(op.opcode, args))
            .flatten();
        if let Some(known) = derived {
            self.map[input_value.0 as usize] = Some(self.find(known));
            // An elidable call the label gives raises nothing.
            self.call_removed = op.opcode.has(Flags::CALL);
            return Ok(());
        }
        if is_rule_op(op.opcode) {
            let input = self.input;
            let name = Some(input.compact_name(input_value));
            let result = self.int_op(op.opcode, Args::from_slice(args), name, 0)?;
            self.map[input_value.0 as usize] = Some(result);
            return Ok(());
        }
        if op.opcode.is_guard() {
            return self.guard(index, op, Args::from_slice(args));
        }
        match op.opcode {
            // A copy is its argument (`same_as_i` is a rule's).
            Opcode::SameAsR | Opcode::SameAsF if self.passes.fold => {
                self.map[input_value.0 as usize] = Some(args[0]);
                return Ok(());
            }
            Opcode::QuasiimmutField if self.passes.heap => return Ok(()),
            // Null there is undefined: from here on it is not null, and
            // nothing needs doing.
            Opcode::AssertNotNone if self.passes.guards => {
                self.learn_ptr(args[0], true, None);
                return Ok(());
            }
            _ => {}
        }
        if self.passes.guards && args.len() == 2 {
            if let Some(known) = self.compare_refs(op.opcode, args[0], args[1]) {
                self.map[input_value.0 as usize] = Some(known);
                return Ok(());
            }
        }
        let float_args = match self.passes.cse && crate::floats::is_float_op(op.opcode) {
            true => {
                if let Some(known) = self.float_op(op.opcode, args) {
                    self.map[input_value.0 as usize] = Some(known);
                    return Ok(());
                }
                Some(Args::from_slice(args))
            }
            false => None,
        };
        let copy = self.output_op(op, Args::from_slice(args));
        if self.passes.heap {
            if let HeapStep::Known(value) = self.heap_before(copy.opcode, &copy.args, copy.descr) {
                let value = match self.as_read(copy.opcode, copy.descr, Mapped::Out(value))? {
                    Mapped::Out(value) => value,
                    Mapped::Virtual(_) => value,
                };
                self.map[input_value.0 as usize] = Some(value);
                // The guards on the call's exception and forcing go with it.
                self.call_removed = copy.opcode.has(Flags::CALL);
                return Ok(());
            }
        }
        let input = self.input;
        let ref_test = (self.passes.guards && copy.args.len() == 2)
            .then(|| [copy.args[0], copy.args[1]])
            .filter(|_| crate::values::ref_test(op.opcode).is_some());
        // The cache learns from the op before it goes out (it needs only
        // the op and the id its result will have).
        let next = ValueId(self.out.num_values() as u32);
        if self.passes.heap {
            let result = (op.opcode.result_type() != Type::Void).then_some(next);
            self.heap_after(&copy, result);
        }
        let v = self.emit(copy, Some(input.compact_name(input_value)));
        debug_assert_eq!(v, next, "the heap cache learnt of the id the op gets");
        // (The calls only for the ops they can teach of.)
        if op.opcode.has(Flags::ALLOC) {
            self.learn_allocation(op, v, Some(self.current));
        }
        if self.passes.bounds && op.opcode.result_type() == Type::Int {
            self.learn_read_bound(v);
        }
        if let Some(args) = float_args {
            self.remember_float(op.opcode, &args, Arg::Value(v));
        }
        if let Some(args) = ref_test {
            self.learn_ref_test(op.opcode, &args, v);
        }
        self.map[input_value.0 as usize] = Some(Arg::Value(v));
        Ok(())
    }

    /// The index of the output op that makes `v`, where the passes may
    /// look into it: not before a label inside the input, past which
    /// `v` is what the label was passed, made by no op.
    pub(crate) fn defining_op(&self, v: ValueId) -> Option<usize> {
        self.out
            .op_index(v)
            .filter(|&index| index >= self.label_floor)
    }

    /// Whether input op `index` comes after an op other than a marker.
    fn after_first_op(&self, index: usize) -> bool {
        (self.input.ops[..index].iter()).any(|op| op.opcode != Opcode::DebugMergePoint)
    }

    /// A label inside the input (a peeled loop's, say, optimized again):
    /// past it, the trace's values are the label's arguments, which each
    /// jump to it passes anew. The label goes out with one value of its
    /// own per argument (a `same_as` for a constant or a value another
    /// argument passes), and nothing known before it holds of them: the
    /// values, the tables and the caches start afresh, as at the start.
    #[inline(never)]
    fn label_inside(&mut self, op: &Op) {
        let mut own: Args = Args::new();
        for (i, &arg) in op.args.iter().enumerate() {
            if let Some(first) = op.args[..i].iter().position(|&a| a == arg) {
                own.push(own[first]);
                continue;
            }
            let forwarded = self.arg(arg);
            let value = match forwarded {
                Arg::Value(_) if !own.contains(&forwarded) => forwarded,
                _ => {
                    let copy = match self.out.arg_type(forwarded) {
                        Type::Int => Opcode::SameAsI,
                        Type::Ref => Opcode::SameAsR,
                        _ => Opcode::SameAsF,
                    };
                    Arg::Value(self.emit(Op::new(copy, smallvec![forwarded]), None))
                }
            };
            own.push(value);
        }
        let label = self.output_op(op, own.clone());
        self.emit(label, None);
        self.label_floor = self.out.ops.len();
        self.cse.clear();
        self.relations = Relations::default();
        self.ref_tests.clear();
        self.nonnull_guards.clear();
        self.heap = HeapCache::default();
        self.drop_overflow_guard = false;
        self.call_removed = false;
        for (&arg, &value) in op.args.iter().zip(&own) {
            if let (Arg::Value(input), Arg::Value(v)) = (arg, value) {
                self.map[input.0 as usize] = Some(value);
                let value = &mut self.values[v.0 as usize];
                (value.info, value.no_overflow) = (Info::Nothing, false);
            }
        }
    }

    /// An input op as an output op: the given (forwarded) arguments, its
    /// descr and fail arguments moved to the output.
    pub(crate) fn output_op(&mut self, op: &Op, args: Args) -> Op {
        let mut out = Op {
            opcode: op.opcode,
            args,
            descr: op.descr,
            fail_args: op.fail_args.clone(),
            virtuals: op.virtuals.clone(),
            pending: op.pending.clone(),
            offset: op.offset,
        };
        self.resume_data(&mut out);
        out
    }

    /// The trace cannot pass input guard `op` (at `index`), for `reason`.
    pub(crate) fn infeasible(&self, index: usize, op: &Op, reason: &str) -> Infeasible {
        Infeasible {
            op_index: index,
            line: self.input.op_pos.get(index).map_or(0, |p| p.line),
            reason: format!("{} always fails: {reason}", op.opcode.name()),
        }
    }

    /// An integer op with output arguments; gives what stands for its
    /// result.
    pub(crate) fn int_op(
        &mut self,
        opcode: Opcode,
        args: Args,
        name: Option<&CompactString>,
        depth: u32,
    ) -> Result<Arg, Infeasible> {
        let ovf = opcode.has(Flags::OVF);
        if self.passes.fold {
            if let Some(folded) = self.fold(opcode, &args) {
                if ovf {
                    self.drop_overflow_guard = true;
                }
                return Ok(folded);
            }
        }
        if self.passes.rules && depth < MAX_REWRITE_DEPTH {
            if let Some((rule, built)) = rules::rewrite(&*self, opcode, &args) {
                self.rule_counts[rule] += 1;
                self.any_rule_fired = true;
                if ovf && !matches!(&built, Built::Op(op, _) if op.has(Flags::OVF)) {
                    self.drop_overflow_guard = true;
                }
                return self.build(built, name, depth + 1);
            }
        }
        let arg_bounds = [
            self.bound(args[0]),
            args.get(1)
                .map_or(IntBound::unbounded(), |&a| self.bound(a)),
        ];
        let arg_bounds = &arg_bounds[..args.len().min(2)];
        let mut opcode = opcode;
        if self.passes.bounds
            && ovf
            && intbounds::cannot_overflow(opcode, arg_bounds[0], arg_bounds[1])
            || self.injected_recursion(opcode, arg_bounds)
        {
            opcode = intbounds::without_overflow_check(opcode);
            self.drop_overflow_guard = true;
            return self.int_op(opcode, args, name, depth);
        }
        self.injected_endless_loop(opcode);
        let bound = intbounds::forward(opcode, arg_bounds).unwrap_or_else(IntBound::unbounded);
        if self.passes.bounds && !ovf {
            if let Some(c) = bound.as_constant() {
                return Ok(self.int_const(c));
            }
        }
        let pure = opcode.has(Flags::PURE);
        if self.passes.relations {
            if let Some(known) = self.compare_by_relations(opcode, &args) {
                return Ok(self.int_const(i64::from(known)));
            }
        }
        if self.passes.cse && (pure || ovf) {
            let key = self.cse_key(opcode, &args);
            if let Some(&earlier) = self.cse.get(&key) {
                if ovf {
                    self.drop_overflow_guard = true;
                }
                return Ok(self.find(earlier));
            }
        }
        let (first, second) = (args[0], args.get(1).copied());
        let v = self.emit(Op::new(opcode, args), name);
        // An `*_ovf` result is bounded only once its guard passed.
        if !ovf {
            self.set_bound(v, bound);
            if self.passes.relations {
                self.learn_offset(opcode, first, second, v);
            }
        }
        if self.passes.cse && pure {
            let args = [first, second.unwrap_or(first)];
            let arity = 1 + usize::from(second.is_some());
            self.remember(opcode, &args[..arity], Arg::Value(v));
        }
        if self.passes.bug == Some(Bug::SubOvfAfterAdd) && opcode == Opcode::IntAdd {
            if let Some(y) = second {
                self.cse
                    .insert((Opcode::IntSubOvf, Arg::Value(v), y), first);
                self.cse
                    .insert((Opcode::IntSubOvf, Arg::Value(v), first), y);
            }
        }
        Ok(Arg::Value(v))
    }

    /// `v = x + c` (or `x - c`) for a constant `c` where the bounds of
    /// `x` say it cannot wrap: `v` is below `x` or above it (a relation,
    /// `relations.rs`).
    fn learn_offset(&mut self, opcode: Opcode, first: Arg, second: Option<Arg>, v: ValueId) {
        let Some(second) = second else { return };
        let (x, c) = match (opcode, self.as_int(first), self.as_int(second)) {
            (Opcode::IntAdd, Some(c), None) => (second, Some(c)),
            (Opcode::IntAdd, None, Some(c)) => (first, Some(c)),
            (Opcode::IntSub, None, Some(c)) => (first, c.checked_neg()),
            _ => return,
        };
        let Some(c) = c.filter(|&c| c != 0) else {
            return;
        };
        let bound = self.bound(x);
        let wraps = match c > 0 {
            true => bound.upper.checked_add(c).is_none(),
            false => bound.lower.checked_add(c).is_none(),
        };
        if wraps {
            return;
        }
        let v = Arg::Value(v);
        match c > 0 {
            true => self.relations.add(x, v, true),
            false => self.relations.add(v, x, true),
        }
    }

    pub(crate) fn last_output_value(&self) -> Option<Arg> {
        let n = self.out.ops.len();
        let last = self.out.ops.last()?;
        (last.opcode.result_type() != Type::Void).then(|| Arg::Value(self.out.value_of_op(n - 1)))
    }

    /// `find` without path compression, for the matcher's `&self` view.
    pub(crate) fn find_const(&self, mut arg: Arg) -> Arg {
        while let Arg::Value(v) = arg {
            match self
                .values
                .get(v.0 as usize)
                .and_then(|value| value.replaced)
            {
                Some(next) => arg = next,
                None => break,
            }
        }
        arg
    }
}
