//! Which objects a trace allocates can still be reached after it.
//!
//! Heaps are compared where something outside the trace can see them:
//! objects from before, and the fresh objects that outlive the trace. An
//! object a trace allocates is
//!
//! - *escaped* where the trace hands it out: an output, an escape, a call
//!   argument or a fail argument (at guards);
//! - *private* where every use reads or writes it in place, compares it,
//!   names it in a marker (`assert_not_none`), or stores it into private
//!   objects: nothing can reach it;
//! - *stored* otherwise: it is reached only through the cells it was
//!   stored in, and only where one of them still holds it and its owner
//!   is reached: a node stored into an input's field and overwritten
//!   later is not. A call that could reach it then (`Unreached::reached`
//!   at the call) may keep it, so from that call on it counts as reached.
//!
//! A reference read from the heap may be any object stored before into a
//! cell of its kind: where such a read is stored, so are they; where it
//! escapes, each of them is reached where it is what the read gave (a
//! node stored into a field, overwritten, and the field read and passed
//! on, is not reached). Read from an input or a constant (an object from
//! before), it is none of those stored into fresh objects.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use traceopt_ir::{Arg, Const, Flags, Op, Opcode, Trace, Type};
use traceopt_smt::{Fun, Sort, Term};

use crate::heap::{cell_of, pair, Cell};
use crate::strings::Helper;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Reach {
    Private,
    Stored,
    Escaped,
}

/// A fresh object that a value read from the heap may be, where that
/// value escapes: the object is handed out if the read gave it.
#[derive(PartialEq)]
pub(crate) struct HandedOut {
    /// The value ids of the object and of the read.
    pub object: usize,
    pub read: usize,
}

/// A store of a fresh object: where it went.
pub(crate) struct Store {
    /// The value id of the object stored.
    pub value: usize,
    pub cell: Cell,
    /// The owner, and the constant-or-value index of an item.
    pub owner: Arg,
    pub index: Option<Arg>,
    /// Whether a later store of the first ops writes the same place
    /// (same cell, same owner and index values) with no call in between
    /// (`overwritten_stores`): the place no longer holds the object.
    pub overwritten: bool,
}

/// The argument positions of a store's value and index, if `opcode`
/// stores.
fn store_positions(opcode: Opcode) -> (Option<usize>, Option<usize>) {
    use Opcode::*;
    match opcode {
        SetfieldGc | VirtualRefFinish => (Some(1), None),
        SetarrayitemGc | SetinteriorfieldGc => (Some(2), Some(1)),
        _ => (None, None),
    }
}

/// The kind of cell a store writes, where the validator knows it.
fn store_cell(trace: &Trace, op: &Op) -> Option<Cell> {
    match op.opcode {
        Opcode::VirtualRefFinish => Some(Cell::Field(trace.vref_layout().forced)),
        opcode => cell_of(opcode, op.descr.map(|d| trace.descr(d))),
    }
}

/// For each of `ops`, whether it is a store whose place a later one of
/// `ops` writes again before any call. A call could keep what the place
/// held then (`Unreached::reached` counts what a call sees as reached
/// from then on, but not a private object); a read in between is
/// followed by `may_be`; an escape hands out words only. Backwards: the
/// places written since the last call.
fn overwritten_stores(trace: &Trace, ops: &[Op]) -> Vec<bool> {
    let mut written: HashSet<(Cell, Arg, Option<Arg>)> = HashSet::new();
    let mut overwritten = vec![false; ops.len()];
    for (index, op) in ops.iter().enumerate().rev() {
        if op.opcode.has(Flags::CALL) {
            written.clear();
            continue;
        }
        let (Some(_), index_at) = store_positions(op.opcode) else {
            continue;
        };
        if let Some(cell) = store_cell(trace, op) {
            let place = (cell, op.args[0], index_at.map(|k| op.args[k]));
            overwritten[index] = !written.insert(place);
        }
    }
    overwritten
}

/// Whether `op` of `trace` allocates an object (one the comparison may
/// leave out): an allocation op, or a string helper that makes a string.
pub(crate) fn allocates(trace: &Trace, op: &Op) -> bool {
    use Opcode::*;
    matches!(
        op.opcode,
        New | NewWithVtable | NewArray | NewArrayClear | Newstr | Newunicode | VirtualRef
    ) || helper(trace, op).is_some_and(Helper::allocates)
}

/// Whether op `index` of `trace` is `jit_force_virtual` (`OS=120`) of
/// the vref the op just before it finished (`virtual_ref_finish`, which
/// writes its token null): a read of its `forced` field that calls
/// nothing (`heap::force_finished_vref`).
pub(crate) fn forces_finished_vref(trace: &Trace, index: usize) -> bool {
    let op = &trace.ops[index];
    let descr = op.descr.map(|d| trace.descr(d));
    let forces = op.opcode == Opcode::CallMayForceR
        && traceopt_ir::oopspec::forces_virtual(descr)
        && op.args.len() == 2;
    let finished = |before: &Op| {
        before.opcode == Opcode::VirtualRefFinish && before.args.first() == op.args.get(1)
    };
    forces && index > 0 && finished(&trace.ops[index - 1])
}

/// The string helper `op` calls, if any (`strings.rs`).
pub(crate) fn helper(trace: &Trace, op: &Op) -> Option<Helper> {
    let descr = op.descr.map(|d| trace.descr(d));
    Helper::of(descr).filter(|_| op.opcode.has(Flags::CALL))
}

/// What `reach` finds of a trace's first ops.
pub(crate) struct Reachability {
    /// How each value id is reached after them, `None` for what is not an
    /// allocation among them.
    pub reach: Vec<Option<Reach>>,
    /// The stores of fresh objects among them.
    pub stores: Vec<Store>,
    /// The objects escaped only as what a read may have given: those
    /// count as stored.
    pub handed_out: Vec<HandedOut>,
    /// The fresh objects each value id may be, where that is known: an
    /// input none, an allocation itself, a read what was stored before
    /// into a cell of its kind. (A fresh object a call put into the heap
    /// is not among them, but that call could reach it, so it counts as
    /// reached from the first round on, and a chain through it needs no
    /// round more.) `None`, for a call's result or a copy: any.
    pub may_be: Vec<Option<Vec<usize>>>,
}

/// How each value id of `trace` is reached after its first `end` ops
/// (`Reachability`). With `failing`, the last of them is a guard that
/// fails: its fail arguments escape.
pub(crate) fn reach(trace: &Trace, failing: bool, end: usize) -> Reachability {
    use Opcode::*;
    let first = trace.inputs.len();
    let ops = &trace.ops[..end];
    let mut reach: Vec<Option<Reach>> = (0..first + trace.ops.len())
        .map(|id| {
            (id >= first && id - first < end && allocates(trace, &trace.ops[id - first]))
                .then_some(Reach::Private)
        })
        .collect();
    // The fresh objects each value may be: an allocation is itself, a
    // reference read is any object stored before into a cell of its kind
    // (into any cell, for a load without a descr).
    let mut may_be: Vec<Vec<usize>> = (0..reach.len())
        .map(|v| {
            if reach[v].is_some() {
                vec![v]
            } else {
                Vec::new()
            }
        })
        .collect();
    // Sets, so that objects read and stored again do not pile up.
    let mut in_cell: HashMap<Cell, BTreeSet<usize>> = HashMap::new();
    let mut in_any_cell: BTreeSet<usize> = BTreeSet::new();
    let mut stored: HashSet<(usize, Cell, Arg, Option<Arg>, bool)> = HashSet::new();
    let mut handed_out: Vec<HandedOut> = Vec::new();
    let mut escape = |reach: &mut Vec<Option<Reach>>, may_be: &[Vec<usize>], arg: &Arg| {
        let Arg::Value(v) = arg else { return };
        let read = v.0 as usize;
        for &o in &may_be[read] {
            if o == read {
                reach[o] = Some(Reach::Escaped);
            } else {
                if reach[o] == Some(Reach::Private) {
                    reach[o] = Some(Reach::Stored);
                }
                let handed = HandedOut { object: o, read };
                if !handed_out.contains(&handed) {
                    handed_out.push(handed);
                }
            }
        }
    };
    let overwritten = overwritten_stores(trace, ops);
    let mut stores: Vec<Store> = Vec::new();
    let mut known: Vec<bool> = (0..may_be.len())
        .map(|v| v < first || reach[v].is_some())
        .collect();
    for (index, op) in ops.iter().enumerate() {
        let descr = op.descr.map(|d| trace.descr(d));
        let forces_finished = forces_finished_vref(trace, index);
        if forces_finished {
            // What the vref's `forced` field holds.
            let cell = Cell::Field(trace.vref_layout().forced);
            may_be[first + index] = in_cell.get(&cell).into_iter().flatten().copied().collect();
            known[first + index] = true;
        } else if op.opcode.result_type() == Type::Ref
            && op.opcode.has(Flags::READ)
            && !op.opcode.has(Flags::CALL)
        {
            // An input or a constant is an object from before: never a
            // fresh one, so not what was stored into a fresh one.
            let old_base = match op.args.first() {
                Some(Arg::Value(b)) => (b.0 as usize) < first,
                Some(Arg::Const(_)) => true,
                None => false,
            };
            let fresh =
                |owner: &Arg| matches!(owner, Arg::Value(o) if reach[o.0 as usize].is_some());
            may_be[first + index] = match cell_of(op.opcode, descr) {
                Some(cell) if old_base => (stores.iter())
                    .filter(|s| s.cell == cell && !fresh(&s.owner))
                    .map(|s| s.value)
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
                Some(cell) => in_cell.get(&cell).into_iter().flatten().copied().collect(),
                None => in_any_cell.iter().copied().collect(),
            };
            known[first + index] = true;
        }
        // A store's value is reachable from its object.
        let (value_at, index_at) = store_positions(op.opcode);
        if let Some(Arg::Value(v)) = value_at.and_then(|k| op.args.get(k)) {
            match store_cell(trace, op) {
                Some(cell) => {
                    let (owner, at) = (op.args[0], index_at.map(|k| op.args[k]));
                    let overwritten = overwritten[index];
                    for &o in &may_be[v.0 as usize] {
                        if !stored.insert((o, cell.clone(), owner, at, overwritten)) {
                            continue;
                        }
                        stores.push(Store {
                            value: o,
                            cell: cell.clone(),
                            owner,
                            index: at,
                            overwritten,
                        });
                        in_cell.entry(cell.clone()).or_default().insert(o);
                        in_any_cell.insert(o);
                    }
                }
                None => escape(&mut reach, &may_be, &op.args[value_at.unwrap()]),
            }
        }
        // Which argument positions only use the object in place (a
        // stored value is followed above).
        let reads_strings = helper(trace, op).is_some();
        let never_calls = op.opcode == CondCallN
            && matches!(op.args[0], Arg::Const(c) if *trace.constant(c) == Const::Int(0));
        let in_place = |k: usize| {
            Some(k) == value_at
                // A marker (`assert_not_none`, `keepalive`,
                // `record_exact_class`, ...) hands nothing out.
                || op.opcode.has(Flags::MARKER)
                // A conditional call of condition 0 takes nothing, nor
                // does the force of a finished vref (it reads it).
                || never_calls
                || forces_finished
                // A string helper reads its strings (past the function).
                || (reads_strings && k > 0)
                || match op.opcode {
                    GetfieldGcI | GetfieldGcR | GetfieldGcF | SetfieldGc | GetarrayitemGcI
                    | GetarrayitemGcR | GetarrayitemGcF | SetarrayitemGc | ArraylenGc | Strlen
                    | Strgetitem | Strsetitem | Unicodelen | Unicodegetitem | Unicodesetitem
                    | GetinteriorfieldGcI | GetinteriorfieldGcR | GetinteriorfieldGcF
                    | SetinteriorfieldGc | GuardClass | GuardNonnullClass | GuardNonnull
                    | GuardIsnull | GuardGcType | GuardIsObject | GuardSubclass
                    | VirtualRefFinish => k == 0,
                    // What a virtual ref stands for is not in it.
                    VirtualRef => true,
                    PtrEq | PtrNe | InstancePtrEq | InstancePtrNe | GuardValue => true,
                    // Characters copied from one string into another.
                    Copystrcontent | Copyunicodecontent => k < 2,
                    _ => false,
                }
        };
        for (k, arg) in op.args.iter().enumerate() {
            if !in_place(k) {
                escape(&mut reach, &may_be, arg);
            }
        }
        for arg in op.resume_args().filter(|_| failing && index + 1 == end) {
            escape(&mut reach, &may_be, &arg);
        }
    }
    // A store overwritten before anything could see it holds nothing at
    // the end (reads of it in between are followed above).
    stores.retain(|s| !s.overwritten);
    // Stored into an object that is not private (or not fresh), an object
    // may be reached.
    let mut changed = true;
    while changed {
        changed = false;
        for store in &stores {
            let into = match store.owner {
                Arg::Value(c) => reach[c.0 as usize].unwrap_or(Reach::Escaped),
                Arg::Const(_) => Reach::Escaped,
            };
            if into != Reach::Private && reach[store.value] == Some(Reach::Private) {
                reach[store.value] = Some(Reach::Stored);
                changed = true;
            }
        }
    }
    let may_be = (may_be.into_iter().zip(known))
        .map(|(objects, known)| known.then_some(objects))
        .collect();
    Reachability {
        reach,
        stores,
        handed_out,
        may_be,
    }
}

/// A store of a fresh object, as terms: the cell and key it went to, and
/// its owner (the trace's argument and its word).
pub(crate) struct Site {
    pub value: usize,
    pub cell: Cell,
    pub key: Term,
    pub owner: Arg,
    pub owner_word: Term,
}

impl Store {
    /// The store as terms, given the words of its owner and index.
    pub fn site(&self, owner_word: Term, index: Option<Term>) -> Site {
        let key = match index {
            None => owner_word.clone(),
            Some(index) => pair(&owner_word, &index),
        };
        Site {
            value: self.value,
            cell: self.cell.clone(),
            key,
            owner: self.owner,
            owner_word,
        }
    }
}

/// Which fresh objects something outside the trace can reach at a point
/// (a call, or the end), each under a condition: escaped ones always,
/// private ones never, stored ones where a call saw them before (`seen`)
/// or a store still holds them in an owner that is reached. `values` are
/// the trace's value terms, `heap` its heap at that point (`cells` in
/// snapshot order); objects from before are below `base`, and those
/// calls make past `base + slots`. A stored object with a store the
/// validator has no terms for (in `unsited`) always counts as reached.
pub(crate) struct Unreached<'a> {
    pub reach: &'a [Option<Reach>],
    /// `Reachability::may_be`.
    pub may_be: &'a [Option<Vec<usize>>],
    pub handed_out: &'a [HandedOut],
    pub sites: &'a [Site],
    pub unsited: &'a [usize],
    pub values: &'a [Option<Term>],
    pub heap: &'a [Term],
    pub cells: &'a [Cell],
    pub base: Term,
    pub slots: u32,
}

impl Unreached<'_> {
    /// Whether each value id, if it is a fresh object, is reached (false
    /// for the others); `name` names each condition, so that chains of
    /// stores stay small.
    pub fn reached<E>(
        &self,
        seen: &[Term],
        name: &mut impl FnMut(Term, Sort) -> Result<Term, E>,
    ) -> Result<Vec<Term>, E> {
        // Seen by a call before, or handed out as what a read gave.
        let seen_or_handed = |v: usize| {
            let seen = seen.get(v).cloned().unwrap_or(Term::Bool(false));
            let handed = (self.handed_out.iter().filter(|h| h.object == v)).map(|h| {
                match (&self.values[h.read], &self.values[v]) {
                    (Some(read), Some(object)) => read.eq(object),
                    _ => Term::Bool(true),
                }
            });
            Term::or_all(std::iter::once(seen).chain(handed))
        };
        let stored: Vec<usize> = (0..self.reach.len())
            .filter(|&v| self.reach[v] == Some(Reach::Stored))
            .collect();
        let rounds = self.rounds(&stored);
        let mut reached: Vec<Term> = (self.reach.iter().enumerate())
            .map(|(v, r)| match r {
                Some(Reach::Escaped) => Term::Bool(true),
                Some(Reach::Stored) => seen_or_handed(v),
                _ => Term::Bool(false),
            })
            .collect();
        // Named once where every round reads it.
        if rounds > 0 {
            for &v in &stored {
                reached[v] = name(reached[v].clone(), Sort::Bool)?;
            }
        }
        let first = reached.clone();
        // Each round follows one more store.
        for _ in 0..rounds {
            // Which of our objects are reached, as one array named once
            // a round, for the stores into owners that may be any object
            // (the solver is given it only where one reads it): spelled
            // out in each such store instead, a 2,000-op trace's 45
            // stored objects made 45 rounds of 45 terms, each with an
            // alternative per object, at each of its guards.
            let ours = name(self.ours_reached(&reached), OURS_REACHED)?;
            let mut next = Vec::with_capacity(stored.len());
            for &v in &stored {
                let through = self.reached_through_stores(v, &reached, &ours);
                next.push((v, name(first[v].or(&through), Sort::Bool)?));
            }
            for (v, term) in next {
                reached[v] = term;
            }
        }
        Ok(reached)
    }

    /// How many rounds `reached` needs: the longest chain of stored
    /// objects stored in one another (all of them, where there is a cycle
    /// or an owner that may be any object). An owner read from the heap
    /// may be only the objects stored before into a cell of its kind
    /// (`may_be`): a frame's array read from an input, into which boxes
    /// are stored, is none of them, and the chain stops there.
    fn rounds(&self, stored: &[usize]) -> usize {
        let mut depth = vec![1; self.reach.len()];
        for _ in 0..stored.len() {
            let mut changed = false;
            for site in self.sites {
                let owners: Vec<usize> = match site.owner {
                    Arg::Value(u) if self.reach[u.0 as usize].is_some() => vec![u.0 as usize],
                    Arg::Value(u) => match self.may_be.get(u.0 as usize) {
                        Some(Some(objects)) => objects.clone(),
                        _ => stored.to_vec(),
                    },
                    Arg::Const(_) => Vec::new(),
                };
                for u in owners.into_iter().filter(|u| stored.contains(u)) {
                    if depth[site.value] <= depth[u] {
                        depth[site.value] = depth[u] + 1;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let deepest = stored.iter().map(|&v| depth[v]).max().unwrap_or(0);
        deepest.min(stored.len())
    }

    /// Some store of `v` holds it, in an owner that is `reached`.
    fn reached_through_stores(&self, v: usize, reached: &[Term], ours: &Term) -> Term {
        let Some(obj) = self.values[v]
            .as_ref()
            .filter(|_| !self.unsited.contains(&v))
        else {
            return Term::Bool(true); // cannot tell: compared
        };
        let mut ways = Vec::new();
        for site in self.sites.iter().filter(|s| s.value == v) {
            let Some(k) = self.cells.iter().position(|c| *c == site.cell) else {
                return Term::Bool(true);
            };
            let holds = self.heap[k].read(&site.key).eq(obj);
            ways.push(holds.and(&self.owner_reached(&site.owner, &site.owner_word, reached, ours)));
        }
        Term::or_all(ways)
    }

    /// Whether the object `owner` (the trace's argument `arg`) is reached.
    /// `ours` is `ours_reached` of `reached`, named: where the owner may
    /// be any object, it is one of ours that is reached, or older.
    fn owner_reached(&self, arg: &Arg, owner: &Term, reached: &[Term], ours: &Term) -> Term {
        match arg {
            Arg::Const(_) => Term::Bool(true),
            Arg::Value(v) if self.reach[v.0 as usize].is_some() => reached[v.0 as usize].clone(),
            Arg::Value(_) => {
                // Any object: from before or made outside, or one of ours.
                let outside = owner.bv(Fun::BvUlt, &self.base).or(&self
                    .base
                    .bv(Fun::BvAdd, &Term::word(i64::from(self.slots)))
                    .bv(Fun::BvUlt, owner));
                outside.or(&ours.select(owner).eq(&bit(1)))
            }
        }
    }

    /// The array from each of our escaped and stored objects to whether
    /// it is reached (1 where it is, 0 elsewhere). Each object's entry
    /// keeps what an earlier one of the same word gave, so that the
    /// array is the disjunction over our objects however they alias.
    fn ours_reached(&self, reached: &[Term]) -> Term {
        let none = Term::lambda("o", Sort::Bv(64), &bit(0));
        (0..self.reach.len())
            .filter(|&o| matches!(self.reach[o], Some(Reach::Escaped | Reach::Stored)))
            .filter_map(|o| Some((self.values.get(o).cloned().flatten()?, &reached[o])))
            .fold(none, |array, (object, reached)| {
                let before = array.select(&object).eq(&bit(1));
                let entry = Term::ite(&reached.or(&before), &bit(1), &bit(0));
                array.store(&object, &entry)
            })
    }
}

/// The sort of `Unreached::ours_reached`.
const OURS_REACHED: Sort = Sort::Array {
    index: 64,
    value: 1,
};

fn bit(value: u128) -> Term {
    Term::Bv { value, width: 1 }
}

/// What something outside a trace can see of the fresh objects at a
/// point. The fresh slots are `base + 1 ..= base + slots`: one the trace
/// has not filled, or whose object nothing reaches there, is out of
/// sight, and so is each object of `also_hidden` (one compared some other
/// way). Objects from before and those calls make are always in sight.
#[derive(Clone, Debug)]
pub(crate) struct Sight {
    pub base: Term,
    pub slots: u32,
    /// The trace's fresh objects so far, each with where it is reached.
    pub reached: Vec<(Term, Term)>,
    /// The objects among them known by a name too: the term each names.
    pub names: HashMap<Term, Term>,
    pub also_hidden: Vec<Term>,
    /// Where the objects of `reached` at fixed slots are reached, as an
    /// array from slot to a bit (`by_slot`, by a name): each test of an
    /// object reads it once, where it would list them all.
    pub slot_reached: Option<Term>,
}

impl Sight {
    /// A sight that hides nothing, where none is asked for.
    pub fn of_nothing() -> Sight {
        Sight {
            base: Term::word(0),
            slots: 0,
            reached: Vec::new(),
            names: HashMap::new(),
            also_hidden: Vec::new(),
            slot_reached: None,
        }
    }

    /// Whether the object `obj` is out of sight.
    pub fn hides(&self, obj: &Term) -> Term {
        let last = self.base.bv(Fun::BvAdd, &Term::word(i64::from(self.slots)));
        let fresh = self
            .base
            .bv(Fun::BvUlt, obj)
            .and(&obj.bv(Fun::BvUle, &last));
        if let Some(slots) = self.settled_slots() {
            // Spelled out, the same for both traces where their calls see
            // the same slots, so that the solver need not compare arrays.
            let seen = slots.iter().map(|&slot| obj.eq(&self.slot(slot)));
            let unreached = fresh.and(&Term::or_all(seen).not());
            return Term::or_all(
                std::iter::once(unreached).chain(self.also_hidden.iter().map(|o| obj.eq(o))),
            );
        }
        let listed = (self.reached.iter())
            .filter(|(o, _)| self.slot_reached.is_none() || self.slot_of(o).is_none())
            .map(|(o, when)| obj.eq(o).and(when));
        let by_slot = (self.slot_reached.iter()).map(|array| {
            let slot = obj.bv(Fun::BvSub, &self.base);
            array.select(&slot).eq(&Term::Bv { value: 1, width: 1 })
        });
        let reached = Term::or_all(listed.chain(by_slot));
        let unreached = match self.slots {
            0 => Term::Bool(false),
            _ => fresh.and(&reached.not()),
        };
        Term::or_all(std::iter::once(unreached).chain(self.also_hidden.iter().map(|o| obj.eq(o))))
    }

    /// The slots reached, in order, where every object of `reached` is at
    /// a fixed slot and reached always or never (not where that depends):
    /// then `hides` needs neither a list of conditions nor `by_slot`.
    pub fn settled_slots(&self) -> Option<BTreeSet<u128>> {
        let mut slots = BTreeSet::new();
        for (o, when) in &self.reached {
            match (self.slot_of(o)?, when) {
                (slot, Term::Bool(true)) => slots.insert(slot),
                (_, Term::Bool(false)) => false,
                _ => return None,
            };
        }
        Some(slots)
    }

    /// The fixed slots of the objects of `reached` that may be reached.
    pub fn listed_slots(&self) -> BTreeSet<u128> {
        (self.reached.iter())
            .filter(|(_, when)| *when != Term::Bool(false))
            .filter_map(|(o, _)| self.slot_of(o))
            .collect()
    }

    /// The object at fixed slot `slot`.
    fn slot(&self, slot: u128) -> Term {
        self.base.bv(
            Fun::BvAdd,
            &Term::Bv {
                value: slot,
                width: 64,
            },
        )
    }

    /// The array `slot_reached` names: slot by slot, 1 where an object of
    /// `reached` at that slot is reached (0 elsewhere); `None` where no
    /// object has a fixed slot.
    pub fn by_slot(&self) -> Option<Term> {
        let mut whens: BTreeMap<u128, Vec<Term>> = BTreeMap::new();
        for (o, when) in &self.reached {
            if let Some(slot) = self.slot_of(o) {
                whens.entry(slot).or_default().push(when.clone());
            }
        }
        if whens.is_empty() {
            return None;
        }
        let slot = Term::var("slot");
        let bit = |value| Term::Bv { value, width: 1 };
        let body = (whens.into_iter().rev()).fold(bit(0), |rest, (k, whens)| {
            let at = slot.eq(&Term::Bv {
                value: k,
                width: 64,
            });
            Term::ite(
                &at,
                &Term::ite(&Term::or_all(whens), &bit(1), &bit(0)),
                &rest,
            )
        });
        Some(Term::lambda("slot", Sort::Bv(64), &body))
    }

    /// The slot of the trace's object `obj` (or a name of it) is, where it
    /// is a literal.
    fn slot_of(&self, obj: &Term) -> Option<u128> {
        let obj = self.names.get(obj).unwrap_or(obj);
        let Term::App(Fun::BvAdd, parts) = obj else {
            return None;
        };
        match (&parts[1], parts[0] == self.base) {
            (Term::Bv { value, .. }, true) => Some(*value),
            _ => None,
        }
    }

    /// A kind of cell as seen from outside, at `key`: the cells of the
    /// objects out of sight hold what they held before the traces
    /// (`initial`).
    pub fn seen(&self, array: &Term, initial: &Term, cell: &Cell, key: &Term) -> Seen {
        if self.sees_all(cell) {
            return Seen::whole(array, key);
        }
        let hidden = self.hides(&key_object(key, cell));
        // Without the stores to objects out of sight, the same where in
        // sight.
        let stores = self.in_sight(array, cell).unwrap_or_else(|| array.clone());
        let stores = self.in_order(&stores, initial, cell).unwrap_or(stores);
        Seen {
            at_key: Term::ite(&hidden, &initial.select(key), &stores.read(key)),
            stores,
        }
    }

    /// `array` less its stores to objects surely out of sight, or `None`
    /// where that is `array` itself (so that unchanged chains stay
    /// shared).
    fn in_sight(&self, array: &Term, cell: &Cell) -> Option<Term> {
        let Term::App(Fun::Store, parts) = array else {
            return None;
        };
        let below = self.in_sight(&parts[0], cell);
        if self.surely_hides(&key_object(&parts[1], cell)) {
            return Some(below.unwrap_or_else(|| parts[0].clone()));
        }
        below.map(|below| below.store(&parts[1], &parts[2]))
    }

    /// `array` with the stores on its top that go to fixed places of the
    /// trace's objects (an object, or one of its items at a constant
    /// index) made in one order, by slot and index, and the last store to
    /// each place only: stores to different places commute, so two traces
    /// that store the same into their objects in another order (one of
    /// them forced its virtuals later) show the same chain. Right on the
    /// heap from before (`initial`), a store of 0 goes too: the trace's
    /// objects start cleared there, as reads of them assume. `None` where
    /// that is `array` itself.
    fn in_order(&self, array: &Term, initial: &Term, cell: &Cell) -> Option<Term> {
        let mut run: Vec<((u64, u64), Term, &Term)> = Vec::new();
        let (mut below, mut same) = (array, true);
        while let Term::App(Fun::Store, parts) = below {
            let Some((place, key)) = self.fixed_place(&parts[1], cell) else {
                break;
            };
            let last = run.iter().all(|(p, ..)| *p != place);
            same &= last && key == parts[1];
            if last {
                run.push((place, key, &parts[2]));
            }
            below = &parts[0];
        }
        // The chain lists the run from its top: rebuilt from below.
        run.reverse();
        if below == initial {
            let cleared = run.len();
            run.retain(|(.., value)| **value != Term::word(0));
            same &= run.len() == cleared;
        }
        if same && run.windows(2).all(|w| w[0].0 < w[1].0) {
            return None;
        }
        run.sort_by_key(|(place, ..)| *place);
        Some(
            run.iter()
                .fold(below.clone(), |a, (_, key, value)| a.store(key, value)),
        )
    }

    /// The slot of the trace's object a key names and the index for an
    /// item key, where both are literals; and the key with the object as
    /// the term it is (not a name of it), so that keys of one place are
    /// one term.
    fn fixed_place(&self, key: &Term, cell: &Cell) -> Option<((u64, u64), Term)> {
        let obj = key_object(key, cell);
        let slot = self.slot_of(&obj)? as u64;
        let obj = self.names.get(&obj).unwrap_or(&obj);
        match (crate::resume::wide_keys(cell), key) {
            (false, _) => Some(((slot, 0), obj.clone())),
            (true, Term::App(Fun::Concat, halves)) => match &halves[1] {
                Term::Bv { value, .. } => Some(((slot, *value as u64), pair(obj, &halves[1]))),
                _ => None,
            },
            (true, _) => None,
        }
    }

    /// Whether `obj`, one of the trace's objects named as such, is surely
    /// out of sight (not where that depends).
    fn surely_hides(&self, obj: &Term) -> bool {
        self.also_hidden.contains(obj)
            || (self.reached.iter()).any(|(o, when)| o == obj && *when == Term::Bool(false))
    }

    /// The array a call that wrote `after` leaves: the cells of the
    /// objects out of its sight keep what they held (`before`), since a
    /// call cannot write what it cannot reach; and where the cells hold
    /// references (`refs`), neither does one the call would set to an
    /// object out of its sight (made later, or private), which the call
    /// cannot name.
    pub fn keep(&self, before: &Term, after: &Term, cell: &Cell, refs: bool) -> Term {
        if self.sees_all(cell) {
            return after.clone();
        }
        let key = Term::var("sight_key");
        let written = after.select(&key);
        let mut kept = self.hides(&key_object(&key, cell));
        if refs {
            kept = kept.or(&self.hides(&written));
        }
        // Read through (`Term::read`): where `before` is the `lambda` of
        // an earlier call, its body for this key, so that the calls make
        // one flat `lambda` that a read at a key reduces to a term (a
        // `lambda` within a `lambda` is left to the solver, which then
        // reasons about arrays to learn what one read gave).
        let body = Term::ite(&kept, &before.read(&key), &written);
        Term::lambda("sight_key", cell.sort_index(), &body)
    }

    /// Whether everything of `cell` is in sight: raw memory holds no
    /// objects, and without fresh slots nothing is hidden.
    fn sees_all(&self, cell: &Cell) -> bool {
        matches!(cell, Cell::Raw(_)) || (self.slots == 0 && self.also_hidden.is_empty())
    }
}

/// The object of a key of `cell`'s array.
pub(crate) fn key_object(key: &Term, cell: &Cell) -> Term {
    match (crate::resume::wide_keys(cell), key) {
        (false, _) => key.clone(),
        (true, Term::App(Fun::Concat, halves)) => halves[0].clone(),
        (true, _) => key.un(Fun::Extract(127, 64)),
    }
}

/// A kind of cell as one trace shows it at a comparison: two traces agree
/// on it if, less the stores nobody sees, they made the same stores onto
/// the same array (no solver needed), or else if they hold the same at
/// the comparison's key (a goal, never a fact: the key is any key).
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub stores: Term,
    pub at_key: Term,
}

impl Seen {
    /// A word.
    pub fn word(term: &Term) -> Seen {
        Seen {
            stores: term.clone(),
            at_key: term.clone(),
        }
    }

    /// An array all of which is seen.
    pub fn whole(array: &Term, key: &Term) -> Seen {
        let at_key = array.read(key);
        Seen {
            stores: array.clone(),
            at_key,
        }
    }
}
