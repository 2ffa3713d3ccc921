//! Resume data: what the interpreter that takes over at a failing guard
//! gets. Two traces that fail corresponding guards must hand it the same
//! state: the fail arguments both list (a hole on either side is not
//! compared) and the heap as it is then.
//!
//! A fail argument may be a virtual object, which only exists if the guard
//! fails (its allocation was removed). It agrees with an object of the
//! other trace when that object was allocated by its trace (an object from
//! before the traces cannot be rebuilt) and has the virtual's contents:
//! class, every field the traces use (those the virtual does not list are
//! zero, as in a new object), length and items. A virtual met twice, or
//! inside itself, stands for the same object each time, so shared and
//! cyclic structures compare exactly. Two virtuals compare by their
//! contents.

use std::collections::HashMap;

use traceopt_interp::MadeBy;
use traceopt_ir::{Arg, Descr, FailArg, Op, Opcode, Trace};
use traceopt_smt::{Fun, Solver, SolverError, Sort, Term};

use crate::heap::{fit_cell, pair, Cell, Memory, World};
use crate::reach::Sight;

/// A fail argument: nothing, a value, or a virtual of the guard.
#[derive(Clone, Debug)]
pub(crate) enum Slot {
    Hole,
    Value(Term),
    Virtual(usize),
}

impl Slot {
    /// The slot as a store through `descr` keeps it: a value cut to a
    /// narrow integer cell (what resuming writes into the object).
    fn stored(self, descr: &Descr) -> Slot {
        match self {
            Slot::Value(t) => Slot::Value(fit_cell(descr.narrow_int(), &t)),
            other => other,
        }
    }
}

/// A virtual object's contents, as words.
#[derive(Clone, Debug)]
pub(crate) struct VirtualTerms {
    /// The class a `new_with_vtable` gives it.
    class: Option<Term>,
    /// Field values by field cell.
    fields: Vec<(Cell, Slot)>,
    /// The length cell and item cell of an array or string, and its items.
    items: Option<(Cell, Cell, Vec<Slot>)>,
}

/// One trace's resume data at one guard.
#[derive(Clone)]
pub(crate) struct Resume {
    /// `None` when the guard lists no fail arguments.
    args: Option<Vec<Slot>>,
    virtuals: Vec<VirtualTerms>,
    /// The heap when the guard fails.
    memory: Memory,
    /// The writes the guard makes if it fails: the cell, the key and the
    /// value.
    pending: Vec<(Cell, Term, Slot)>,
}

impl Resume {
    /// The resume data of guard `op`; `value` gives the word of an argument.
    pub fn at(
        trace: &Trace,
        op: &Op,
        memory: &Memory,
        world: &mut World,
        solver: &mut Solver,
        mut value: impl FnMut(Arg) -> Option<Term>,
    ) -> Result<Option<Resume>, SolverError> {
        let mut slot = |arg: &FailArg| match *arg {
            FailArg::Hole => Some(Slot::Hole),
            FailArg::Arg(a) => value(a).map(Slot::Value),
            FailArg::Virtual(k) => Some(Slot::Virtual(k as usize)),
        };
        let args = match &op.fail_args {
            None => None,
            Some(list) => match list.iter().map(&mut slot).collect::<Option<Vec<_>>>() {
                Some(slots) => Some(slots),
                None => return Ok(None),
            },
        };
        let mut virtuals = Vec::new();
        for v in &op.virtuals {
            let descr = v.descr.map(|d| trace.descr(d));
            let class = match v.opcode {
                Opcode::NewWithVtable => {
                    let key = memory.sites.key(MadeBy::Virtual(&v.name, v.site));
                    Some(world.allocated_class(solver, descr, key)?)
                }
                _ => None,
            };
            let mut fields = Vec::new();
            for (d, arg) in &v.fields {
                let Some(s) = slot(arg) else { return Ok(None) };
                let field = trace.descr(*d);
                fields.push((Cell::Field(field.text.clone()), s.stored(field)));
            }
            let items = match v.opcode {
                Opcode::NewArray | Opcode::NewArrayClear => {
                    let text = descr.map_or_else(|| Box::from(""), |d| d.text.clone());
                    Some((Cell::Length, Cell::Item(text)))
                }
                Opcode::Newstr => Some((Cell::StrLength(false), Cell::StrChar(false))),
                Opcode::Newunicode => Some((Cell::StrLength(true), Cell::StrChar(true))),
                _ => None,
            };
            let items = match items {
                Some((length, item)) => {
                    let Some(slots) = v.items.iter().map(&mut slot).collect::<Option<Vec<_>>>()
                    else {
                        return Ok(None);
                    };
                    let slots = match descr {
                        Some(d) => slots.into_iter().map(|s| s.stored(d)).collect(),
                        None => slots,
                    };
                    Some((length, item, slots))
                }
                None => None,
            };
            virtuals.push(VirtualTerms {
                class,
                fields,
                items,
            });
        }
        let mut pending = Vec::new();
        for w in &op.pending {
            let descr = trace.descr(w.descr);
            let text = descr.text.clone();
            let mut word = |arg: Arg| match slot(&FailArg::Arg(arg)) {
                Some(Slot::Value(t)) => Some(t),
                _ => None,
            };
            let (Some(object), index) = (word(w.object), w.index.map(&mut word)) else {
                return Ok(None);
            };
            let (cell, key) = match index {
                None => (Cell::Field(text), object),
                Some(Some(index)) => (Cell::Item(text), pair(&object, &index)),
                Some(None) => return Ok(None),
            };
            let Some(value) = slot(&w.value) else {
                return Ok(None);
            };
            let value = value.stored(descr);
            // Known to the world, so that every snapshot has it.
            world.initial(solver, &cell)?;
            pending.push((cell, key, value));
        }
        Ok(Some(Resume {
            args,
            virtuals,
            memory: memory.clone(),
            pending,
        }))
    }

    /// `heap` (an array for each of `cells`) with the writes the guard
    /// makes when it fails, as far as which of its trace's objects the
    /// cells then hold: what the resumed interpreter reaches, where a
    /// write may overwrite the one store that kept an object reached. A
    /// virtual written is a new object, none of the trace's: null (which
    /// none of them is) stands for it. A write to a cell the heap lacks
    /// is left out, which keeps more in sight, never less.
    pub fn with_pending(&self, heap: &mut [Term], cells: &[Cell]) {
        for (cell, key, value) in &self.pending {
            let value = match value {
                Slot::Value(v) => v.clone(),
                Slot::Virtual(_) => Term::word(0),
                Slot::Hole => continue,
            };
            if let Some(k) = cells.iter().position(|c| c == cell) {
                heap[k] = heap[k].store(key, &value);
            }
        }
    }
}

/// The condition that two traces' resume data agree (BEFORE's first).
/// Called once both traces are encoded, so that the heaps cover every
/// kind of cell either one uses.
///
/// `private` holds each side's objects that nothing after the traces can
/// reach, whose contents are not compared; `allocated`, all the objects
/// each side allocates.
pub(crate) fn agree(
    b: &Resume,
    a: &Resume,
    sights: [&Sight; 2],
    allocated: [&[Term]; 2],
    world: &mut World,
    solver: &mut Solver,
) -> Result<Term, SolverError> {
    let mut b_heap = b.memory.clone().snapshot(world, solver)?;
    let mut a_heap = a.memory.clone().snapshot(world, solver)?;
    let base = world.base(solver)?;
    let cells = world.cells().to_vec();
    // The pending writes of values first; those of virtuals store the
    // object of the other side they must match (below).
    let mut virtual_writes = Vec::new();
    for (side, resume) in [b, a].into_iter().enumerate() {
        for (cell, key, value) in &resume.pending {
            // (`Resume::at` registered the cell; were it missing, the
            // write could not be made, and nothing would be shown alike.)
            let Some(k) = cells.iter().position(|c| c == cell) else {
                return Ok(Term::Bool(false));
            };
            let heap = if side == 0 { &mut b_heap } else { &mut a_heap };
            match value {
                Slot::Value(v) => heap[k] = heap[k].store(key, v),
                Slot::Virtual(j) => virtual_writes.push((side, k, key.clone(), *j)),
                Slot::Hole => {}
            }
        }
    }
    let mut matched_values = Vec::new();
    for (side, k, key, j) in &virtual_writes {
        let other = if *side == 0 { &a_heap } else { &b_heap };
        matched_values.push((*side, *k, key.clone(), *j, other[*k].read(key)));
    }
    for (side, k, key, _, value) in &matched_values {
        let heap = if *side == 0 { &mut b_heap } else { &mut a_heap };
        heap[*k] = heap[*k].store(key, value);
    }
    let any_keys = (cells.iter())
        .map(|cell| world.any_key(solver, cell))
        .collect::<Result<Vec<_>, _>>()?;
    let mut parts = Vec::new();
    let mut facts = Vec::new();
    let mut cmp = Compare {
        world,
        base,
        sides: [(b, &b_heap), (a, &a_heap)],
        allocated,
        bound: [HashMap::new(), HashMap::new()],
        paired: [HashMap::new(), HashMap::new()],
        matched: [Vec::new(), Vec::new()],
        parts: &mut parts,
        facts: &mut facts,
    };
    if let (Some(xs), Some(ys)) = (&b.args, &a.args) {
        if xs.len() == ys.len() {
            for (x, y) in xs.iter().zip(ys) {
                cmp.slots(x, y);
            }
        }
    }
    // A virtual a pending write stores is the object the other side holds
    // there.
    for (side, _, _, j, value) in matched_values {
        let (virtual_, object) = (Slot::Virtual(j), Slot::Value(value));
        match side {
            0 => cmp.slots(&virtual_, &object),
            _ => cmp.slots(&object, &virtual_),
        }
    }
    // An object a virtual of the other trace stands for is compared by
    // its contents above; the rest of the heap must be the same.
    let mut sights = sights.map(Sight::clone);
    for (sight, objects) in sights.iter_mut().zip(cmp.matched) {
        sight.also_hidden.extend(objects);
    }
    for (((x, y), cell), any_key) in b_heap.iter().zip(&a_heap).zip(&cells).zip(&any_keys) {
        let initial = world.initial_array(cell).expect("a cell of the snapshot");
        let x = sights[0].seen(x, &initial, cell, any_key);
        let y = sights[1].seen(y, &initial, cell, any_key);
        parts.push(crate::same_seen(&x, &y));
    }
    Ok(Term::and_all(facts).implies(&Term::and_all(parts)))
}

struct Compare<'a> {
    world: &'a World,
    /// The first object the traces allocate.
    base: Term,
    /// Each side's resume data and heap (BEFORE, AFTER).
    sides: [(&'a Resume, &'a [Term]); 2],
    /// Each side's allocations.
    allocated: [&'a [Term]; 2],
    /// Each side's virtuals already matched with an object of the other.
    bound: [HashMap<usize, Term>; 2],
    /// Each side's virtuals already matched with a virtual of the other.
    paired: [HashMap<usize, usize>; 2],
    /// Each side's objects that a virtual of the other stands for.
    matched: [Vec<Term>; 2],
    parts: &'a mut Vec<Term>,
    /// What the reads of the comparison may assume: an object the traces
    /// allocate held zeros before.
    facts: &'a mut Vec<Term>,
}

impl Compare<'_> {
    fn slots(&mut self, x: &Slot, y: &Slot) {
        match (x, y) {
            (Slot::Hole, _) | (_, Slot::Hole) => {}
            (Slot::Value(x), Slot::Value(y)) => self.parts.push(crate::same(x, y)),
            (Slot::Value(x), Slot::Virtual(k)) => self.object(1, *k, 0, x),
            (Slot::Virtual(k), Slot::Value(y)) => self.object(0, *k, 1, y),
            (Slot::Virtual(j), Slot::Virtual(k)) => self.both_virtual(*j, *k),
        }
    }

    /// Virtual `k` of side `side` against object `obj` of side `other`.
    fn object(&mut self, side: usize, k: usize, other: usize, obj: &Term) {
        if let Some(earlier) = self.bound[side].get(&k) {
            self.parts.push(crate::same(earlier, obj));
            return;
        }
        // Distinct virtuals are materialized as distinct objects.
        for earlier in self.bound[side].values() {
            self.parts.push(obj.eq(earlier).not());
        }
        self.bound[side].insert(k, obj.clone());
        self.matched[other].push(obj.clone());
        let Some(v) = self.sides[side].0.virtuals.get(k).cloned() else {
            self.parts.push(Term::Bool(false));
            return;
        };
        // Allocated by its trace: not null, not from before.
        self.parts.push(self.base.bv(Fun::BvUlt, obj));
        let heap = self.sides[other].1;
        let allocated = self.allocated[other];
        let (world, base) = (self.world, &self.base);
        let mut fresh_zero = Vec::new();
        let mut read = |cell: &Cell, key: &Term| match world.cell_index(cell) {
            Some(i) => {
                if let Some(initial) = world.initial_array(cell) {
                    let fresh = obj.bv(Fun::BvUlt, base).not();
                    fresh_zero.push(fresh.implies(&initial.select(key).eq(&Term::word(0))));
                }
                crate::heap::read_known(&heap[i], key, &|o: &Term| {
                    allocated.iter().position(|a| a == o)
                })
            }
            None => Term::word(0),
        };
        if let Some(class) = &v.class {
            self.parts.push(read(&Cell::Class, obj).eq(class));
        }
        let mut reads = Vec::new();
        for cell in self.world.field_cells() {
            let listed = v.fields.iter().find(|(c, _)| c == cell);
            let held = read(cell, obj);
            match listed {
                Some((_, slot)) => reads.push((held, slot.clone())),
                None => self.parts.push(held.eq(&Term::word(0))),
            }
        }
        for (cell, slot) in &v.fields {
            if self.world.cell_index(cell).is_none() {
                reads.push((Term::word(0), slot.clone()));
            }
        }
        if let Some((length, item, items)) = &v.items {
            let n = items.len() as i64;
            self.parts.push(read(length, obj).eq(&Term::word(n)));
            for (i, slot) in items.iter().enumerate() {
                let held = read(item, &pair(obj, &Term::word(i as i64)));
                match slot {
                    Slot::Hole => self.parts.push(held.eq(&Term::word(0))),
                    _ => reads.push((held, slot.clone())),
                }
            }
        }
        self.facts.extend(fresh_zero);
        for (held, slot) in reads {
            let held = Slot::Value(held);
            if side == 0 {
                self.slots(&slot, &held);
            } else {
                self.slots(&held, &slot);
            }
        }
    }

    /// Two virtuals: the same kind of object with agreeing contents.
    fn both_virtual(&mut self, j: usize, k: usize) {
        let (x, y) = (
            self.sides[0].0.virtuals.get(j).cloned(),
            self.sides[1].0.virtuals.get(k).cloned(),
        );
        let (Some(x), Some(y)) = (x, y) else {
            self.parts.push(Term::Bool(false));
            return;
        };
        // A pair met before (shared or cyclic) agrees if it is the same
        // pair.
        match (self.paired[0].get(&j), self.paired[1].get(&k)) {
            (None, None) => {}
            (x, y) => {
                self.parts.push(Term::Bool(x == Some(&k) && y == Some(&j)));
                return;
            }
        }
        self.paired[0].insert(j, k);
        self.paired[1].insert(k, j);
        let same_shape = x.class == y.class
            && x.items.as_ref().map(|(l, c, i)| (l, c, i.len()))
                == y.items.as_ref().map(|(l, c, i)| (l, c, i.len()));
        if !same_shape {
            self.parts.push(Term::Bool(false));
            return;
        }
        let mut cells: Vec<&Cell> = x.fields.iter().chain(&y.fields).map(|(c, _)| c).collect();
        cells.sort();
        cells.dedup();
        let zero = Slot::Value(Term::word(0));
        for cell in cells {
            let field = |v: &VirtualTerms| {
                v.fields
                    .iter()
                    .find(|(c, _)| c == cell)
                    .map_or(zero.clone(), |(_, s)| s.clone())
            };
            self.slots(&field(&x), &field(&y));
        }
        if let (Some((_, _, xs)), Some((_, _, ys))) = (&x.items, &y.items) {
            for (p, q) in xs.iter().zip(ys) {
                let hole_is_zero = |s: &Slot| match s {
                    Slot::Hole => zero.clone(),
                    other => other.clone(),
                };
                self.slots(&hole_is_zero(p), &hole_is_zero(q));
            }
        }
    }
}

/// Whether `cell`'s keys are (object, index) pairs.
pub(crate) fn wide_keys(cell: &Cell) -> bool {
    cell.sort()
        != (Sort::Array {
            index: 64,
            value: 64,
        })
}
