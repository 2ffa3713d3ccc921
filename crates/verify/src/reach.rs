//! Which objects a trace allocates can still be reached after it.
//!
//! Heaps are compared where something outside the trace can see them:
//! objects from before, and the fresh objects that outlive the trace. An
//! object a trace allocates is
//!
//! - *escaped* where the trace hands it out: an output, an escape, a call
//!   argument, a fail argument (at guards), or a store into an escaped
//!   object (or one from before) that a later call could see;
//! - *private* where every use reads or writes it in place, compares it,
//!   or stores it into private objects: nothing can reach it;
//! - *stored* otherwise: it is reached only through the cells it was
//!   stored in, and only if, at the end, one of them still holds it and
//!   its owner is reached (`live`): a node stored into an input's field
//!   and overwritten later is not.

use traceopt_ir::{Arg, Flags, Op, Opcode, Trace};
use traceopt_smt::{Fun, Term};

use crate::heap::{cell_of, pair, Cell};
use crate::strings::Helper;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Reach {
    Private,
    Stored,
    Escaped,
}

/// A store of a fresh object: where it went.
pub(crate) struct Store {
    /// The value id of the object stored.
    pub value: usize,
    pub cell: Cell,
    /// The owner, and the constant-or-value index of an item.
    pub owner: Arg,
    pub index: Option<Arg>,
    /// A later call could see the cell, if it reaches the owner.
    pub seen_by_call: bool,
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

/// The string helper `op` calls, if any (`strings.rs`).
pub(crate) fn helper(trace: &Trace, op: &Op) -> Option<Helper> {
    let descr = op.descr.map(|d| trace.descr(d));
    Helper::of(descr).filter(|_| op.opcode.has(Flags::CALL))
}

/// How each value id of `trace` is reached after its first `end` ops,
/// `None` for what is not an allocation among them. With `resume`, at the
/// guard that ends them: an object in resume data is escaped, and a stored
/// one counts as reached (resume comparisons leave out only private
/// objects).
pub(crate) fn reach(trace: &Trace, resume: bool, end: usize) -> (Vec<Option<Reach>>, Vec<Store>) {
    use Opcode::*;
    let first = trace.inputs.len();
    let ops = &trace.ops[..end];
    let mut reach: Vec<Option<Reach>> = (0..first + trace.ops.len())
        .map(|id| {
            (id >= first && id - first < end && allocates(trace, &trace.ops[id - first]))
                .then_some(Reach::Private)
        })
        .collect();
    let last_call = ops.iter().rposition(|o| o.opcode.has(Flags::CALL));
    let escape = |reach: &mut Vec<Option<Reach>>, arg: &Arg| {
        if let Arg::Value(v) = arg {
            if reach[v.0 as usize].is_some() {
                reach[v.0 as usize] = Some(Reach::Escaped);
            }
        }
    };
    let mut stores = Vec::new();
    for (index, op) in ops.iter().enumerate() {
        // A store's value is reachable from its object.
        let (value_at, index_at) = match op.opcode {
            SetfieldGc => (Some(1), None),
            SetarrayitemGc | SetinteriorfieldGc => (Some(2), Some(1)),
            VirtualRefFinish => (Some(1), None),
            _ => (None, None),
        };
        if let Some(Arg::Value(v)) = value_at.and_then(|k| op.args.get(k)) {
            if reach[v.0 as usize].is_some() {
                let descr = op.descr.map(|d| trace.descr(d));
                // A later call could see the cell and take the object.
                let seen_by_call = last_call.is_some_and(|c| c >= index);
                let cell = match op.opcode {
                    VirtualRefFinish => Some(Cell::Field(trace.vref_layout().forced)),
                    _ => cell_of(op.opcode, descr),
                };
                match cell {
                    Some(cell) => stores.push(Store {
                        value: v.0 as usize,
                        cell,
                        owner: op.args[0],
                        index: index_at.map(|k| op.args[k]),
                        seen_by_call,
                    }),
                    _ => escape(&mut reach, &op.args[value_at.unwrap()]),
                }
            }
        }
        // Which argument positions only use the object in place (a
        // stored value is followed above).
        let reads_strings = helper(trace, op).is_some();
        let in_place = |k: usize| {
            Some(k) == value_at
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
                escape(&mut reach, arg);
            }
        }
        for arg in op.resume_args().filter(|_| resume) {
            escape(&mut reach, &arg);
        }
    }
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
            // A later call may take it from an owner that escapes.
            if store.seen_by_call
                && into == Reach::Escaped
                && reach[store.value].is_some_and(|r| r != Reach::Escaped)
            {
                reach[store.value] = Some(Reach::Escaped);
                changed = true;
            } else if into != Reach::Private && reach[store.value] == Some(Reach::Private) {
                reach[store.value] = Some(if resume {
                    Reach::Escaped
                } else {
                    Reach::Stored
                });
                changed = true;
            }
        }
    }
    (reach, stores)
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

/// The fresh objects whose contents the end comparison leaves out, each
/// with the condition under which it does: private ones always, stored
/// ones where nothing reaches them at the end. `values` are the trace's
/// value terms, `end` its heap at the end (`cells` in snapshot order);
/// objects from before are below `base`, and those calls make past
/// `base + slots`. A stored object with a store the validator has no
/// terms for (in `unsited`) is always compared.
pub(crate) struct Unreached<'a> {
    pub reach: &'a [Option<Reach>],
    pub sites: &'a [Site],
    pub unsited: &'a [usize],
    pub values: &'a [Option<Term>],
    pub end: &'a [Term],
    pub cells: &'a [Cell],
    pub base: Term,
    pub slots: u32,
}

impl Unreached<'_> {
    pub fn hidden(&self) -> Vec<(Term, Term)> {
        let stored: Vec<usize> = (0..self.reach.len())
            .filter(|&v| self.reach[v] == Some(Reach::Stored))
            .collect();
        // live[v]: whether stored object v is reached at the end; each
        // round follows one more store.
        let mut live: Vec<Term> = vec![Term::Bool(false); self.reach.len()];
        for _ in 0..stored.len() {
            let next: Vec<(usize, Term)> = (stored.iter())
                .map(|&v| (v, self.reached_through_stores(v, &live)))
                .collect();
            for (v, term) in next {
                live[v] = term;
            }
        }
        let mut hidden = Vec::new();
        for (v, reach) in self.reach.iter().enumerate() {
            let Some(obj) = self.values.get(v).cloned().flatten() else {
                continue;
            };
            match reach {
                Some(Reach::Private) => hidden.push((obj, Term::Bool(true))),
                Some(Reach::Stored) => hidden.push((obj, live[v].not())),
                _ => {}
            }
        }
        hidden
    }

    /// Some store of `v` still holds it at the end, in an owner that is
    /// reached (`live` for the stored objects so far).
    fn reached_through_stores(&self, v: usize, live: &[Term]) -> Term {
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
            let holds = self.end[k].select(&site.key).eq(obj);
            ways.push(holds.and(&self.owner_reached(&site.owner, &site.owner_word, live)));
        }
        Term::or_all(ways)
    }

    /// Whether the object `owner` (the trace's argument `arg`) is reached.
    fn owner_reached(&self, arg: &Arg, owner: &Term, live: &[Term]) -> Term {
        let fresh = |v: usize| match self.reach[v] {
            Some(Reach::Escaped) => Term::Bool(true),
            Some(Reach::Private) => Term::Bool(false),
            Some(Reach::Stored) => live[v].clone(),
            None => Term::Bool(true),
        };
        match arg {
            Arg::Const(_) => Term::Bool(true),
            Arg::Value(v) if self.reach[v.0 as usize].is_some() => fresh(v.0 as usize),
            Arg::Value(_) => {
                // Any object: from before or made outside, or one of ours.
                let outside = owner.bv(Fun::BvUlt, &self.base).or(&self
                    .base
                    .bv(Fun::BvAdd, &Term::word(i64::from(self.slots)))
                    .bv(Fun::BvUlt, owner));
                let ours = (0..self.reach.len())
                    .filter(|&o| self.reach[o].is_some())
                    .filter_map(|o| {
                        let term = self.values.get(o).cloned().flatten()?;
                        Some(owner.eq(&term).and(&fresh(o)))
                    });
                Term::or_all(std::iter::once(outside).chain(ours))
            }
        }
    }
}
