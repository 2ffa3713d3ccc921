//! Bridges: what they know on entry, and entering a peeled loop at its
//! label.
//!
//! A bridge leaves its parent trace at a guard, and what the parent had
//! established by then still holds of the values it takes (PyPy's
//! bridges know the classes their parent checked). `facts_on_exit` finds
//! those facts by optimizing the parent's run up to the guard
//! (`Trace::exit_at`); `optimize_assuming` optimizes the bridge knowing
//! them. The validator proves both halves: the facts hold at the guard
//! (`traceopt_verify::verify_exit_facts`), and the bridge is equivalent
//! to its output wherever its inputs satisfy them.
//!
//! A trace that ends by jumping to
//! the start of a loop (a bridge: PyPy's `jump(..., descr=<LoopN>)`)
//! would run that loop's preamble again; where the loop was peeled, the
//! jump may go to its label instead, as PyPy's bridges do, when the
//! trace passes on a state of the label's shape (the same objects, kept
//! virtual and unboxed into the label's arguments). The fields the label
//! reads out of its arguments (its derived arguments) are read before
//! the jump, unless the heap cache knows them. What the body takes for
//! granted and the trace does not know, it tests there (PyPy's short
//! preamble, `LabelState::entry_tests`): that a place holds the label's
//! constant, an argument's range, class or non-null, a known constant;
//! each a guard that, failing, goes on at the loop's start with the
//! jump's arguments, as the jump did. It reads only what it can tell is
//! there (a field of what it knows to be a struct: one it read or wrote
//! a field of, class-tested or allocated; no array item of unknown
//! length), as the validator must show every read of the entry
//! defined; where a read is not, a test cannot hold or the shapes
//! differ, the trace keeps its jump to the start.
//!
//! The witness is the trace's own state at its jump (a `LabelState`
//! whose objects are the trace's own allocations) with the loop's facts;
//! `traceopt_verify::verify_entry` proves that the entry reaches the
//! state the loop's induction starts from.

use traceopt_ir::{
    smallvec, Arg, Const, EntryTest, Fact, FailArg, Known, LabelState, Op, Opcode, Trace, Type,
};

use crate::driver::{
    optimize_knowing, End, Ending, Infeasible, Optimized, Optimizer, Passes, Start,
};
use crate::peel::{weaken, Peeled};
use crate::virtuals::Mapped;

/// A trace optimized to jump to a peeled loop's label.
#[derive(Clone, Debug)]
pub struct Entered {
    /// The output, its final jump going to the loop's label (its descr
    /// is the label's).
    pub optimized: Optimized,
    /// What the jump's arguments stand for: the loop's inputs in terms
    /// of them, with the facts the loop's body takes for granted.
    pub state: LabelState,
}

/// What holds of each value the run `exit` (`Trace::exit_at`) passes on
/// at its final jump, as far as the optimizer can tell; `None` where it
/// finds the run can never get there.
pub fn facts_on_exit(exit: &Trace, passes: Passes) -> Option<Vec<Fact>> {
    let start = Start::Inputs(&[]);
    let (_, ending) =
        optimize_knowing(exit, passes, Default::default(), start, End::Describe).ok()?;
    let facts = ending?.state.facts;
    let arity = exit.ops.last().map_or(0, |jump| jump.args.len());
    (facts.len() == arity).then_some(facts)
}

/// Optimizes `input` knowing `assumed` of its inputs (one fact for each,
/// or none).
pub fn optimize_assuming(
    input: &Trace,
    passes: Passes,
    assumed: &[Fact],
) -> Result<Optimized, Infeasible> {
    let start = Start::Inputs(assumed);
    optimize_knowing(input, passes, Default::default(), start, End::Plain)
        .map(|(optimized, _)| optimized)
}

/// Why a trace that jumps to a peeled loop does not enter it at its
/// label (it is then optimized to jump to the loop's start, as recorded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoEntry {
    /// The trace does not end in a jump, or the loop has no label.
    NoJump,
    /// The label's argument `n` is of another type than the trace's.
    Types(usize),
    /// The loop's body takes a fact of label argument `n` for granted
    /// that the trace neither knows nor can test.
    Fact(usize),
    /// Object `n` of the state is of a size descr that names no class,
    /// and the recordings do not show it of the class of the loop's
    /// object there (which the body makes it with where it must).
    Class(usize),
    /// The loop's body takes for granted the classes some of the loop's
    /// allocations make (`LabelState::site_classes`), which its preamble
    /// tests and a trace entering at the label cannot (it has no op of
    /// the loop's to test).
    SiteClasses,
    /// Testing what the body takes for granted would read a field of
    /// what may be no struct, or an item of an array of unknown length.
    UnsafeRead,
    /// What the trace passes along is not what the label takes (another
    /// constant, another class, other fields, a virtual where the label
    /// takes a reference, or the reverse): where, in words.
    Shape(String),
}

impl std::fmt::Display for NoEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoEntry::NoJump => write!(f, "it ends in no jump to a label"),
            NoEntry::Types(n) => write!(f, "label argument {n} is of another type"),
            NoEntry::Fact(n) => write!(
                f,
                "the loop takes a fact of label argument {n} for granted that the trace \
                 cannot test"
            ),
            NoEntry::Class(n) => write!(
                f,
                "object {n} of the state may be of another class than the loop's (its size \
                 descr names none, and the recordings do not show it the same)"
            ),
            NoEntry::SiteClasses => write!(
                f,
                "the loop takes the classes its allocations make for granted, which its \
                 preamble tests and the trace cannot"
            ),
            NoEntry::UnsafeRead => write!(
                f,
                "testing what the loop takes for granted would read what may not be there"
            ),
            NoEntry::Shape(where_) => write!(f, "{where_}"),
        }
    }
}

/// Optimizes `input`, whose final jump goes to the start of the loop
/// `target` was peeled from, to jump to `target`'s label, knowing
/// `assumed` of its inputs; the reason where its state at the jump does
/// not fit the label's (the trace is then optimized as any other).
pub fn enter_peeled(
    input: &Trace,
    passes: Passes,
    assumed: &[Fact],
    target: &Peeled,
) -> Result<Result<Entered, NoEntry>, Infeasible> {
    let pool = &target.optimized.trace;
    let label = &pool.ops[target.label];
    let ends_in_jump = input.ops.last().map(|op| op.opcode) == Some(Opcode::Jump);
    if !ends_in_jump || label.opcode != Opcode::Label {
        return Ok(Err(NoEntry::NoJump));
    }
    if !target.state.site_classes.is_empty() {
        return Ok(Err(NoEntry::SiteClasses));
    }
    // The constants the recordings show to be structs: the loop's (where
    // the trace does not name objects alike) and the trace's own.
    let mut structs: Vec<Box<str>> = (target.structs.iter())
        .filter(|name| !input.names_object(name))
        .cloned()
        .chain(input.recorded_structs())
        .collect();
    structs.sort_unstable();
    structs.dedup();
    let end = End::Enter(&target.state, pool, &structs);
    let start = Start::Inputs(assumed);
    let (mut optimized, ending) = optimize_knowing(input, passes, Default::default(), start, end)?;
    let Some(ending) = ending else {
        return Ok(Err(NoEntry::NoJump));
    };
    let trace = &optimized.trace;
    // A log names the objects of each trace anew: a name the loop's
    // label state and the trace both use may be two objects, which the
    // entry would take for one.
    if pool.namespace.is_none() {
        let own: Vec<&str> = (input.consts())
            .filter_map(|c| match c {
                Const::Ptr(name) => Some(&**name),
                _ => None,
            })
            .collect();
        let clash = object_constants(&target.state, pool)
            .into_iter()
            .find(|name| own.contains(name));
        if let Some(name) = clash {
            let why = format!(
                "the loop's label state and the trace both name an object ConstPtr({name}), \
                 which in a log may be two objects"
            );
            return Ok(Err(NoEntry::Shape(why)));
        }
    }
    let same_count = label.args.len() == ending.leaves.len();
    if !same_count || !target.state.same_shape(pool, &ending.state, trace) {
        let why = target.state.shape_difference(pool, &ending.state, trace);
        return Ok(Err(NoEntry::Shape(why)));
    }
    let mismatch = (label.args.iter().zip(&ending.leaves))
        .position(|(&a, &b)| pool.arg_type(a) != trace.arg_type(b));
    if let Some(n) = mismatch {
        return Ok(Err(NoEntry::Types(n)));
    }
    let classes = ending.state.recorded_object_classes(trace, input);
    let loop_classes = &target.object_classes;
    if let Some(n) = (ending.state).unknown_object_class(trace, &classes, loop_classes) {
        return Ok(Err(NoEntry::Class(n)));
    }
    let unknown = (target.state.facts.iter().zip(&ending.state.facts))
        .position(|(assumed, held)| weaken(assumed, held) != *assumed);
    if let Some(n) = unknown {
        return Ok(Err(NoEntry::Fact(n)));
    }
    if ending.unsafe_read {
        return Ok(Err(NoEntry::UnsafeRead));
    }
    let token = label.descr.map(|d| optimized.trace.descr_from(pool, d));
    let jump = optimized.trace.ops.last_mut().expect("the captured jump");
    jump.descr = token;
    Ok(Ok(Entered {
        optimized,
        state: LabelState {
            facts: target.state.facts.clone(),
            ..ending.state
        },
    }))
}

/// The names of the constant objects (`ConstPtr`) a label state holds:
/// among the loop's inputs, in its objects, as known constants, or as
/// what a derived or known value is read or computed of.
fn object_constants<'p>(state: &LabelState, pool: &'p Trace) -> Vec<&'p str> {
    let name = |c: traceopt_ir::ConstId| match pool.constant(c) {
        Const::Ptr(name) => Some(&**name),
        _ => None,
    };
    let contents = state.virtuals.iter().flat_map(|v| {
        let fields = v.fields.iter().map(|(_, f)| f);
        fields.chain(&v.items)
    });
    let held = state
        .inputs
        .iter()
        .chain(contents)
        .filter_map(|item| match item {
            FailArg::Arg(Arg::Const(c)) => Some(*c),
            _ => None,
        });
    let sources =
        (state.derived.iter().map(|d| &d.source)).chain(state.known.iter().map(|k| &k.source));
    let used = sources.flat_map(|s| &s.args).filter_map(|a| match a {
        Arg::Const(c) => Some(*c),
        Arg::Value(_) => None,
    });
    let known = state.known.iter().map(|k| k.value);
    held.chain(used).chain(known).filter_map(name).collect()
}

/// What an entry into a peeled loop tests where it does not know the
/// outcome (`LabelState::entry_tests`): the loop's label state (its
/// constants and descrs `pool`'s), its tests, and the input's jump
/// arguments, which each test's guard resumes with (failing, it goes to
/// the loop's start, as the jump it replaces did).
pub(crate) struct Entering<'a> {
    pub state: &'a LabelState,
    pub pool: &'a Trace,
    pub tests: Vec<EntryTest>,
    pub jump_args: Vec<Arg>,
    /// The constant objects known to be structs (`enter_peeled`).
    pub structs: &'a [Box<str>],
}

impl<'a> Entering<'a> {
    pub(crate) fn new(state: &'a LabelState, pool: &'a Trace, structs: &'a [Box<str>]) -> Self {
        Entering {
            state,
            pool,
            tests: state.entry_tests(),
            jump_args: Vec::new(),
            structs,
        }
    }
}

impl Optimizer<'_> {
    /// Where the label's state holds a constant and the jump's
    /// arguments `args` (input values) hold another value there, a
    /// guard that it is the constant, which it is from then on (a
    /// top-level place in `args` itself). Places inside objects that are
    /// not virtual here are left: the shapes differ.
    pub(crate) fn test_constants(&mut self, args: &mut [Arg]) {
        let Some(entering) = &self.entering else {
            return;
        };
        let (pool, places) = (entering.pool, entering.state.constant_places());
        for (i, ((input, steps), c)) in places.into_iter().enumerate() {
            let Some(&root) = args.get(input) else {
                continue;
            };
            let steps = self.import_steps(&steps, pool);
            let Some(Mapped::Out(held)) = self.at_place(root, &steps) else {
                continue;
            };
            let wanted = pool.constant(c).clone();
            if self.constant_of(held).as_ref() == Some(&wanted) || !self.may_be(held, &wanted) {
                continue;
            }
            let constant = Arg::Const(self.out.add_const(wanted));
            let test = EntryTest::Constant(i);
            if !self.leave_unless(test, Opcode::GuardValue, vec![held, constant]) {
                continue;
            }
            self.learn_from_guard(Opcode::GuardValue, &[held, constant]);
            if steps.is_empty() {
                args[input] = constant;
            } else {
                self.set_place(root, &steps, constant);
            }
        }
    }

    /// The tests of label argument `slot`'s fact that `value` is not
    /// known to pass: a guard each, after which it is known.
    pub(crate) fn test_fact(&mut self, slot: usize, value: Arg) {
        let Some(entering) = &self.entering else {
            return;
        };
        let Some(wanted) = entering.state.facts.get(slot).cloned() else {
            return;
        };
        let held = self.fact(value);
        if weaken(&wanted, &held) == wanted {
            return;
        }
        let (lower, upper) = wanted.range.unwrap_or((i64::MIN, i64::MAX));
        let bound = self.bound(value);
        for (test, compare, limit, known) in [
            (
                EntryTest::AtLeast(slot),
                Opcode::IntGe,
                lower,
                bound.lower >= lower,
            ),
            (
                EntryTest::AtMost(slot),
                Opcode::IntLe,
                upper,
                bound.upper <= upper,
            ),
        ] {
            if wanted.range.is_none() || known {
                continue;
            }
            let limit = self.int_const(limit);
            let test_value = self.emit(Op::new(compare, smallvec![value, limit]), None);
            let truth = Arg::Value(test_value);
            if !self.leave_unless(test, Opcode::GuardTrue, vec![truth]) {
                return;
            }
        }
        if let Some((lower, upper)) = wanted.range {
            let (narrowed, _) = self.bound(value).intersect_range(lower, upper);
            self.narrow(value, narrowed, 0);
        }
        let info = self.ptr_info(value);
        let test = EntryTest::Object(slot);
        let (opcode, args) = match &wanted.class {
            Some(class) if info.class.as_ref() == Some(class) => return,
            // Another class, or null: the entry fails its facts.
            Some(_) if info.class.is_some() || self.is_null(value) => return,
            Some(class) => {
                let c = Arg::Const(self.out.add_const(class.clone()));
                match info.nonnull {
                    true => (Opcode::GuardClass, vec![value, c]),
                    false => (Opcode::GuardNonnullClass, vec![value, c]),
                }
            }
            None if wanted.nonnull && !info.nonnull && !self.is_null(value) => {
                (Opcode::GuardNonnull, vec![value])
            }
            None => return,
        };
        if self.leave_unless(test, opcode, args.clone()) {
            self.learn_from_guard(opcode, &args);
        }
    }

    /// The test that known constant `index` holds of `value`: a guard
    /// that it is `constant`, after which it is (none where it is that
    /// constant already). Whether it holds or is tested.
    pub(crate) fn test_known(&mut self, index: usize, value: Arg, constant: Arg) -> bool {
        let Some(wanted) = self.constant_of(constant) else {
            return false;
        };
        if self.constant_of(value).as_ref() == Some(&wanted) {
            return true;
        }
        if !self.may_be(value, &wanted) {
            return false;
        }
        let test = EntryTest::Known(index);
        if !self.leave_unless(test, Opcode::GuardValue, vec![value, constant]) {
            return false;
        }
        self.learn_from_guard(Opcode::GuardValue, &[value, constant]);
        true
    }

    /// Whether `held` may be the constant `wanted` (an integer or a
    /// reference): a value its bounds or facts allow. In a log, where
    /// each trace names its objects anew, a constant object of another
    /// name may be it (a test tells).
    fn may_be(&self, held: Arg, wanted: &Const) -> bool {
        let ty = wanted.ty();
        let log = self.out.namespace.is_none();
        let fits = match held {
            Arg::Const(h) => match (self.out.constant(h), wanted) {
                (Const::Ptr(_), Const::Ptr(_)) => log,
                (constant, _) => constant == wanted,
            },
            Arg::Value(_) => match wanted {
                Const::Int(k) => self.bound(held).contains(*k),
                Const::Null => !self.ptr_info(held).nonnull,
                Const::Ptr(_) | Const::Class(_) => ty == Type::Ref,
                _ => false,
            },
        };
        fits && matches!(ty, Type::Int | Type::Ref) && self.out.arg_type(held) == ty
    }

    /// The tests of the facts of the label arguments the state itself
    /// holds (before the derived ones), where the ending has as many.
    pub(crate) fn test_state_facts(&mut self, ending: &mut Ending) {
        let Some(entering) = &self.entering else {
            return;
        };
        let own = entering.state.facts.len() - entering.state.derived.len();
        if ending.leaves.len() != own {
            return;
        }
        for slot in 0..own {
            self.test_fact(slot, ending.leaves[slot]);
            ending.leaves[slot] = self.find(ending.leaves[slot]);
            ending.state.facts[slot] = self.fact(ending.leaves[slot]);
        }
    }

    /// The test that known constant `index` (`known`, of label arguments
    /// `args`) holds: its field read or op computed where nothing gives
    /// it, and a guard. Whether it is made.
    pub(crate) fn test_known_at(
        &mut self,
        index: usize,
        known: &Known,
        args: traceopt_ir::Args,
    ) -> bool {
        let value = match known.source.reads() {
            // What it cannot tell is there is not read.
            true => {
                let there = self.surely_there(&known.source, args[0]);
                match self.derived_read(&known.source, args) {
                    (_, false) if !there => return false,
                    (value, _) => value,
                }
            }
            false => self.derived_pure(&known.source, args).0,
        };
        let constant = Arg::Const(known.value);
        self.test_known(index, value, constant)
    }

    /// Emits `opcode(args)`, the guard of entry test `test`: where it
    /// fails, the interpreter goes on at the loop's start with the jump's
    /// arguments (its virtuals described). Its provenance is the
    /// input's length plus the test's number (the validator's entry
    /// comparison makes the tests after the input's ops). Whether it
    /// is one of the loop's tests (and so made).
    fn leave_unless(&mut self, test: EntryTest, opcode: Opcode, args: Vec<Arg>) -> bool {
        let Some(entering) = &self.entering else {
            return false;
        };
        let Some(number) = entering.tests.iter().position(|&t| t == test) else {
            return false;
        };
        let fail_args = entering
            .jump_args
            .iter()
            .map(|&a| FailArg::Arg(a))
            .collect();
        let mut guard = Op {
            fail_args: Some(fail_args),
            ..Op::new(opcode, args)
        };
        self.resume_data(&mut guard);
        self.emit_for(
            guard,
            Some(&crate::driver::UNNAMED),
            self.input.ops.len() + number,
        );
        true
    }
}
