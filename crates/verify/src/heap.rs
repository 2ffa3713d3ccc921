//! The heap, calls and the other non-integer ops, as the validator sees
//! them.
//!
//! Every value is a 64-bit word: an integer, a float's bits, or a
//! reference, an object's identity with 0 for null. The heap is a set of
//! SMT arrays, one per kind of cell (`Cell`): a field descr maps an object
//! to its value; an array descr maps (object, index) to the item; classes
//! and array lengths map an object to a word. Each write makes a new
//! version of its array (`store`); a read selects from the current one.
//! Both traces start from the same initial arrays.
//!
//! Objects the traces allocate are `base + 1`, `base + 2`, ...: BEFORE's
//! in the order it allocates them, AFTER's in the slot of the BEFORE
//! object each stands for (`pairing.rs`), and every object that existed before (inputs,
//! constants, what they point to) is below `base`. So fresh objects are
//! distinct from each other and from everything older, without
//! quantifiers. Two facts about the initial arrays are assumed where they
//! are read: a cell of an object from before holds, if it is a
//! reference, null or an object from before; a cell of a fresh object
//! holds zero (a fresh allocation is cleared), until written.
//!
//! Calls are where the traces meet the outside: the k-th call of both
//! traces returns the same unknown, leaves the same unknown exception, and
//! leaves every cell kind it may write (by its effect info; all of them
//! when unknown) as the same unknown array. Fields and arrays PyPy marks
//! pure (immutable once the object is built, never quasi-immutable) are
//! never written by a call, as PyPy's optimizer assumes. That is sound only if both
//! traces made the same call in the same state, so each call is an
//! observation: its function, arguments and the heap it saw must agree
//! (`Effect::observed`). A `call_loopinvariant_*` is such a call the first
//! time; later ones of the same function give its result and do nothing.
//! Pure calls (`call_pure_*`) are uninterpreted functions of their
//! arguments: equal arguments give equal results, which is all the
//! optimizer may assume of them. Float ops are too at first, with their
//! IEEE meaning kept aside for the proofs that need it (`float_meaning`);
//! floats are values with one NaN (`one_nan`), and moving them through
//! the heap keeps them exactly.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use traceopt_interp::{Heap, HeapObject, MadeBy, ObjId, Val};

use crate::reach::{Seen, Sight};
use crate::sites::Sites;
use crate::strings::{encode_helper, Helper};
use traceopt_ir::{
    Descr, DescrKind, FieldValue, Flags, HeapSet, NamedConst, Namespace, Opcode, Type, VrefLayout,
};
use traceopt_smt::encode::flag;
use traceopt_smt::{Fun, Model, Name, Solver, SolverError, Sort, Term};

/// A kind of heap cell: one SMT array each.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub(crate) enum Cell {
    /// A struct field: object to value.
    Field(Box<str>),
    /// An array descr's items: (object, index) to value.
    Item(Box<str>),
    /// An interior field of an array of structs: (object, index) to value.
    Interior(Box<str>),
    /// Raw memory of a descr: address to value.
    Raw(Box<str>),
    /// An object's class (immutable).
    Class,
    /// An array's length (immutable).
    Length,
    /// A string's length, and its characters (unicode or not).
    StrLength(bool),
    StrChar(bool),
}

impl Cell {
    /// Keys are objects (64 bits) or (object, index) pairs (128 bits).
    pub fn sort(&self) -> Sort {
        let index = match self {
            Cell::Item(_) | Cell::Interior(_) | Cell::StrChar(_) => 128,
            _ => 64,
        };
        Sort::Array { index, value: 64 }
    }

    /// The descr that names it (empty for classes, lengths, strings).
    pub(crate) fn descr_name(&self) -> &str {
        match self {
            Cell::Field(d) | Cell::Item(d) | Cell::Interior(d) | Cell::Raw(d) => d,
            _ => "",
        }
    }

    /// The sort of its keys.
    pub(crate) fn sort_index(&self) -> Sort {
        match self.sort() {
            Sort::Array { index, .. } => Sort::Bv(index),
            other => other,
        }
    }

    /// Calls never change classes, lengths and strings.
    fn immutable(&self) -> bool {
        matches!(
            self,
            Cell::Class | Cell::Length | Cell::StrLength(_) | Cell::StrChar(_)
        )
    }
}

/// What both traces share: the solver names declared, the initial heap
/// and the unknowns of each call.
#[derive(Default)]
pub(crate) struct World {
    declared: HashSet<Name>,
    cells: Vec<Cell>,
    /// The cells of pure fields and arrays, which calls never write.
    unchanged_by_calls: HashSet<Cell>,
    /// The cells a trace reads references from.
    ref_cells: HashSet<Cell>,
    /// Facts about the shared names (constants are objects from before,
    /// ...), to assume; read with `facts`, which adds that constants are
    /// distinct.
    pub lemmas: Vec<Term>,
    /// Class constants by name, each distinct from the others.
    classes: Vec<(Box<str>, Term)>,
    /// Those of `classes` that are the unknown classes of size descrs
    /// naming none (`allocated_class`): not distinct from the others.
    unnamed_classes: Vec<Box<str>>,
    /// The objects constants name, by identity, each distinct from the
    /// others where a namespace names them (not in a log).
    objects: Vec<(Box<str>, Term)>,
    /// The lengths of string constants, by their objects.
    pub string_lengths: Vec<(Term, usize)>,
    /// The string constants' characters (and whether unicode), by name,
    /// for a replay's heap.
    pub string_texts: HashMap<Box<str>, (bool, Vec<u32>)>,
    /// Every read of the initial heap, named, so that a counterexample
    /// gives the heap it needs (`replay_heap`).
    reads: Vec<Read>,
    /// Whether an uninterpreted function was used.
    functions: bool,
    /// Products and quotients of unknowns are functions the solver does
    /// not interpret at first (`opaque_arithmetic`); their meanings, to add
    /// when a proof needs them.
    pub opaque_arithmetic: bool,
    pub arithmetic_meanings: Vec<Term>,
    /// Some of those meanings are IEEE float arithmetic.
    pub float_meanings: bool,
    /// What the traces' descr names mean, where a namespace says.
    pub namespace: Option<Arc<Namespace>>,
    /// A word may be a reference in one place and an integer in another
    /// (a cast, an elidable function of two result types, the traces'
    /// types apart where they meet): the base of fresh objects then stays
    /// an unknown (`facts`).
    pub addresses_exposed: bool,
    /// The result type of the elidable calls of each arity (the function
    /// `pure` is one per arity): two types there also expose addresses.
    pub pure_result_types: HashMap<usize, Type>,
    /// Array versions named so far (`Memory::named`), and their names.
    arrays: u32,
    array_names: HashMap<Term, Term>,
    /// The highest k of a call whose result is an unknown (`call{k}`).
    call_results: u32,
    /// The traces are entered with an exception pending, unknown
    /// (`exc0`, `excvalue0`): BEFORE saves it before any call, as PyPy's
    /// bridges out of a failed guard on an exception do
    /// (`saves_entry_exception`). Else none is pending at the entry.
    pub entered_with_exception: bool,
    /// The fresh objects' slots: how many there are in all, and those
    /// both traces allocate (`pairing.rs`); `None` where not set.
    pub slots: Option<(u32, Vec<u32>)>,
    /// Equalities of spans of characters of unknown length, each with
    /// its witness of a difference (`World::same_span`).
    pub span_equalities: Vec<crate::strings::SpanEquality>,
    /// How exactly those equalities are stated (`SpanMode`).
    pub span_mode: crate::strings::SpanMode,
}

impl World {
    /// Whether the query needs more than bitvectors: arrays (a heap) or
    /// uninterpreted functions. Such queries are not bit-blasted.
    pub fn beyond_bitvectors(&self) -> bool {
        !self.cells.is_empty() || self.functions
    }

    /// Where `cell`'s array is in a snapshot, if a trace uses it.
    pub fn cell_index(&self, cell: &Cell) -> Option<usize> {
        self.cells.iter().position(|c| c == cell)
    }

    /// The array of `cell` before the traces, if a trace uses it.
    pub fn initial_array(&self, cell: &Cell) -> Option<Term> {
        let k = self.cell_index(cell)?;
        Some(Term::name(&Name::invented(&format!("heap{k}"))))
    }

    /// The kinds of cells the traces use, in snapshot order.
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    /// Whether a constant object of this name was made already.
    pub fn has_object(&self, name: &str) -> bool {
        self.objects.iter().any(|(n, _)| &**n == name)
    }

    /// The struct-field cells the traces use.
    pub fn field_cells(&self) -> impl Iterator<Item = &Cell> {
        self.cells.iter().filter(|c| matches!(c, Cell::Field(_)))
    }

    /// The shared variable `name` (declared on first use).
    pub(crate) fn var(
        &mut self,
        solver: &mut Solver,
        name: Name,
        sort: Sort,
    ) -> Result<Term, SolverError> {
        if self.declared.insert(name.clone()) {
            solver.declare(&name, sort)?;
        }
        Ok(Term::name(&name))
    }

    /// A key of `cell`'s heap array about which nothing is assumed, so
    /// that a goal that holds at it holds at every key: what makes two
    /// heap arrays equal without extensionality (the solver compares
    /// reads, and reads of `lambda` arrays reduce). Only goals may use it,
    /// in positive places, never a fact.
    pub fn any_key(&mut self, solver: &mut Solver, cell: &Cell) -> Result<Term, SolverError> {
        let sort = cell.sort_index();
        let Sort::Bv(width) = sort else {
            unreachable!("heap arrays have bit-vector keys")
        };
        self.var(solver, Name::invented(&format!("any_key_{width}")), sort)
    }

    /// Whether `term` is the object a constant names.
    pub fn is_constant_object(&self, term: &Term) -> bool {
        matches!(term, Term::Var(_)) && self.objects.iter().any(|(_, t)| t == term)
    }

    /// Every fact assumed of the shared names: the lemmas, and that the
    /// class constants, and the objects constants name, are each pairwise
    /// distinct (one `distinct` each: hundreds of constants would
    /// otherwise make tens of thousands of disequalities, which z3's
    /// preprocessing drowns in).
    pub fn facts(&self) -> Vec<Term> {
        let terms =
            |list: &[(Box<str>, Term)]| list.iter().map(|(_, t)| t.clone()).collect::<Vec<_>>();
        let mut facts = self.lemmas.clone();
        let named: Vec<(Box<str>, Term)> = (self.classes.iter())
            .filter(|(name, _)| !self.unnamed_classes.contains(name))
            .cloned()
            .collect();
        facts.push(Term::distinct(&terms(&named)));
        // A log's trace may name one object twice (`p50 =
        // same_as_r(ConstPtr(ptr49))` then `guard_value(p50,
        // ConstPtr(ptr71))` passed when recorded): its constant objects
        // may be one. A namespace says which names are one (`object=`).
        if self.namespace.is_some() {
            facts.push(Term::distinct(&terms(&self.objects)));
        }
        let base = Name::invented("base");
        if self.declared.contains(&base) && !self.addresses_exposed {
            facts.push(Term::name(&base).eq(&Term::word(FIXED_BASE)));
        }
        facts.retain(|f| *f != Term::Bool(true));
        facts
    }

    /// The base of fresh objects: objects from before are below it. Where
    /// no word may be a reference in one place and an integer in another
    /// (`addresses_exposed`), `facts` fixes it at `FIXED_BASE`.
    pub fn base(&mut self, solver: &mut Solver) -> Result<Term, SolverError> {
        let name = Name::invented("base");
        let fresh = !self.declared.contains(&name);
        let base = self.var(solver, name, Sort::Bv(64))?;
        if fresh {
            // Room for every fresh object without wrapping around.
            let low = Term::word(2).bv(Fun::BvUle, &base);
            let high = base.bv(Fun::BvUlt, &Term::word(1 << 62));
            self.lemmas.push(low.and(&high));
        }
        Ok(base)
    }

    /// What a reference that comes from outside the trace (a call's result,
    /// or a cell a call may have written) can be: null, an object from
    /// before, one the outside made (past every fresh slot), or a fresh
    /// object both traces allocate. Never one that only one trace
    /// allocates: that one can only get out through what both traces must
    /// show alike (a call's arguments, the heap it sees), which would tell
    /// them apart first.
    pub fn outside_ref(&mut self, solver: &mut Solver, r: &Term) -> Result<Term, SolverError> {
        let Some((count, paired)) = self.slots.clone() else {
            return Ok(Term::Bool(true));
        };
        let base = self.base(solver)?;
        // Not `base` itself (no object) nor a slot only one trace fills;
        // null, older, newer and the paired slots are what is left.
        let unpaired = (0..=count).filter(|s| !paired.contains(s));
        Ok(Term::and_all(unpaired.map(|s| {
            r.eq(&base.bv(Fun::BvAdd, &Term::word(i64::from(s)))).not()
        })))
    }

    /// Null or an object from before the traces.
    pub fn old_or_null(&mut self, solver: &mut Solver, r: &Term) -> Result<Term, SolverError> {
        let base = self.base(solver)?;
        Ok(r.eq(&Term::word(0)).or(&r.bv(Fun::BvUlt, &base)))
    }

    /// The frame's force token: an object from before, one per run.
    pub fn force_token(&mut self, solver: &mut Solver) -> Result<Term, SolverError> {
        self.old_object(solver, "force_token()")
    }

    /// An object from before, named by a constant: a `ConstPtr`'s object
    /// (its name, or a namespace's `object=`) or a string constant's text
    /// (as the interpreter names them). Other names are other objects.
    pub fn old_object(&mut self, solver: &mut Solver, name: &str) -> Result<Term, SolverError> {
        let var = Name::user(name).part("ptr");
        let fresh = !self.declared.contains(&var);
        let r = self.var(solver, var, Sort::Bv(64))?;
        if fresh {
            let base = self.base(solver)?;
            let old = r.bv(Fun::BvUlt, &base).and(&r.eq(&Term::word(0)).not());
            self.lemmas.push(old);
            self.objects.push((name.into(), r.clone()));
        }
        Ok(r)
    }

    /// The class of what `new_with_vtable` of this size descr makes: the
    /// class constant it names; where it names none (a log's
    /// `<SizeDescr 16>`, of whatever class of that size), an unknown
    /// class, which may be any class constant, one per `key` of the
    /// allocation's site (`sites.rs`; a fresh one where there is none);
    /// a vref's (`Err`), the class constant its layout names.
    pub fn allocated_class(
        &mut self,
        solver: &mut Solver,
        descr: Option<&Descr>,
        key: Option<Result<&str, &str>>,
    ) -> Result<Term, SolverError> {
        if !descr.is_some_and(|d| !d.names_class()) {
            return self.class(solver, &class_of_size(descr));
        }
        let name: Box<str> = match key {
            Some(Ok(key)) => key.into(),
            Some(Err(class)) => return self.class(solver, class),
            None => {
                let fresh = self.unnamed_classes.len();
                format!("{} @fresh{fresh}", class_of_size(descr)).into()
            }
        };
        if !self.unnamed_classes.contains(&name) {
            self.unnamed_classes.push(name.clone());
        }
        self.class(solver, &name)
    }

    /// A class constant (`ConstClass(name)`): not zero, and distinct from
    /// every other.
    pub fn class(&mut self, solver: &mut Solver, name: &str) -> Result<Term, SolverError> {
        let var = Name::user(name).part("class");
        let fresh = !self.declared.contains(&var);
        let c = self.var(solver, var, Sort::Bv(64))?;
        if fresh {
            self.lemmas.push(c.eq(&Term::word(0)).not());
            self.classes.push((name.into(), c.clone()));
        }
        Ok(c)
    }

    /// What the namespace says of the constant objects the traces name,
    /// where it cannot have changed since: the class, an array's length,
    /// and the pure and quasi-immutable fields (mutable fields and items
    /// stay unknown). Taken once both traces are encoded, for the cells
    /// they use; a field that names another constant object adds it.
    pub fn constant_facts(
        &mut self,
        solver: &mut Solver,
        namespace: &Namespace,
    ) -> Result<(), SolverError> {
        let mut next = 0;
        while next < self.objects.len() {
            let (identity, obj) = self.objects[next].clone();
            next += 1;
            let Some(NamedConst::Ptr(info)) = namespace.constant(&identity) else {
                continue;
            };
            if info.object != identity {
                continue;
            }
            let mut facts = Vec::new();
            if let (Some(class), Some(heap)) = (&info.class, self.initial_array(&Cell::Class)) {
                facts.push(heap.select(&obj).eq(&self.class(solver, class)?));
                // An object of a class is an instance.
                facts.push(is_kind(self, solver, &obj, ObjKind::Instance)?);
            }
            if let (Some((_, n)), Some(heap)) = (&info.array, self.initial_array(&Cell::Length)) {
                facts.push(heap.select(&obj).eq(&Term::word(*n)));
            }
            let fields: Vec<Cell> = self.field_cells().cloned().collect();
            for cell in fields {
                let Cell::Field(text) = &cell else { continue };
                let Some(DescrKind::Field(f)) = namespace.descr(text).map(|d| &d.kind) else {
                    continue;
                };
                let Some((owner, field)) = f.name.split_once('.') else {
                    continue;
                };
                if !(f.pure || f.quasi_immutable) || info.struct_name.as_deref() != Some(owner) {
                    continue;
                }
                let given = info.fields.iter().find(|(name, _)| &**name == field);
                let value = match given.map(|(_, v)| v) {
                    None => Term::word(0), // "other fields zero"
                    Some(FieldValue::Int(n)) => Term::word(*n),
                    Some(FieldValue::Object(other)) => self.old_object(solver, other)?,
                };
                let heap = self.initial_array(&cell).expect("a cell in use");
                facts.push(heap.select(&obj).eq(&value));
            }
            self.lemmas.extend(facts);
        }
        Ok(())
    }

    /// Assumes that the pure call of `args` (the function first) returns
    /// `result` (and so raises nothing), as a test harness says.
    pub fn pure_result(
        &mut self,
        solver: &mut Solver,
        args: &[Term],
        result: &Term,
    ) -> Result<(), SolverError> {
        let fun = self.function(solver, "pure", args.len())?;
        self.lemmas.push(Term::apply(&fun, args).eq(result));
        let raised = self.function(solver, "pure_exc", args.len())?;
        self.lemmas
            .push(Term::apply(&raised, args).eq(&Term::word(0)));
        Ok(())
    }

    /// A named integer constant (`ConstInt(name)`).
    pub fn named_int(&mut self, solver: &mut Solver, name: &str) -> Result<Term, SolverError> {
        self.var(solver, Name::user(name).part("int"), Sort::Bv(64))
    }

    /// Names a read of the initial heap: its object, its index (for a
    /// keyed cell) and the value, for `replay_heap`.
    /// With `call`, a read of what the k-th call left in the heap (for
    /// `Before::call_writes`).
    #[allow(clippy::too_many_arguments)]
    fn record_read(
        &mut self,
        solver: &mut Solver,
        cell: &Cell,
        obj: &Term,
        key: &Term,
        value: &Term,
        ty: Type,
        call: Option<u32>,
    ) -> Result<(), SolverError> {
        let n = self.reads.len();
        let name = |part: &str| format!("read{n}_{part}");
        solver.define(&name("obj"), Sort::Bv(64), obj)?;
        let kind = self.function(solver, "kind", 1)?;
        let kind = Term::apply(&kind, std::slice::from_ref(obj));
        solver.define(&name("kind"), Sort::Bv(64), &kind)?;
        solver.define(&name("value"), Sort::Bv(64), value)?;
        let keyed = cell.sort()
            == (Sort::Array {
                index: 128,
                value: 64,
            });
        if keyed {
            let index = key.un(Fun::Extract(63, 0));
            solver.define(&name("index"), Sort::Bv(64), &index)?;
        }
        self.reads.push(Read {
            cell: cell.clone(),
            names: (
                Name::invented(&name("obj")),
                keyed.then(|| Name::invented(&name("index"))),
                Name::invented(&name("value")),
            ),
            kind: Name::invented(&name("kind")),
            ty,
            call,
        });
        Ok(())
    }

    /// The lengths of arrays and strings from before the traces are at
    /// most what a replay builds: a preference for the model a
    /// counterexample gives, never an assumption of a proof.
    pub fn replayable_lengths(&self) -> Term {
        Term::and_all(
            (self.reads.iter())
                .filter(|r| matches!(r.cell, Cell::Length | Cell::StrLength(_)))
                .map(|r| {
                    let limit = Term::word(REPLAY_LENGTH as i64);
                    Term::name(&r.names.2).bv(Fun::BvUle, &limit)
                }),
        )
    }

    /// The names whose values a counterexample needs for `replay_heap`.
    pub fn watched(&self) -> Vec<Name> {
        let base = Name::invented("base");
        let mut names: Vec<Name> = self.declared.get(&base).cloned().into_iter().collect();
        for read in &self.reads {
            names.push(read.names.0.clone());
            names.extend(read.names.1.clone());
            names.push(read.names.2.clone());
            names.push(read.kind.clone());
        }
        names.extend(self.call_result_names());
        for (name, _) in &self.classes {
            names.push(Name::user(name).part("class"));
        }
        for (name, _) in &self.objects {
            names.push(Name::user(name).part("ptr"));
        }
        names
    }

    /// The names of the calls' results, the first call's first.
    pub fn call_result_names(&self) -> Vec<Name> {
        (1..=self.call_results)
            .map(|k| Name::invented(&format!("call{k}")))
            .filter(|name| self.declared.contains(name))
            .collect()
    }

    /// Registers the kinds of cell an op touches, so that the calls and
    /// observations of both traces cover the same arrays (call it for
    /// every op of both traces before encoding them).
    pub fn register(&mut self, opcode: Opcode, descr: Option<&Descr>) {
        use Opcode::*;
        let mut cells: Vec<Cell> = cell_of(opcode, descr).into_iter().collect();
        let pure = match descr.map(|d| &d.kind) {
            Some(DescrKind::Field(f)) => f.pure && !f.quasi_immutable,
            Some(DescrKind::Array(a)) => a.pure,
            _ => false,
        };
        if pure {
            if let Some(cell @ (Cell::Field(_) | Cell::Item(_))) = cell_of(opcode, descr) {
                self.unchanged_by_calls.insert(cell);
            }
        }
        if opcode.result_type() == Type::Ref {
            self.ref_cells.extend(cell_of(opcode, descr));
        }
        if let Some(helper) = Helper::of(descr).filter(|_| opcode.has(Flags::CALL)) {
            match helper.copied_items(descr) {
                Some(items) => cells.extend([items, Cell::Length]),
                None => cells.extend([Cell::StrLength(false), Cell::StrChar(false)]),
            }
            if helper == Helper::ToUnicode {
                cells.extend([Cell::StrLength(true), Cell::StrChar(true)]);
            }
        }
        cells.extend(match opcode {
            ArraylenGc | NewArray | NewArrayClear | GetarrayitemGcI | GetarrayitemGcR
            | GetarrayitemGcF | GetarrayitemGcPureI | GetarrayitemGcPureR | GetarrayitemGcPureF
            | SetarrayitemGc | GetinteriorfieldGcI | GetinteriorfieldGcR | GetinteriorfieldGcF
            | SetinteriorfieldGc => Some(Cell::Length),
            Strlen | Strgetitem | Strsetitem | Newstr | Copystrcontent => {
                Some(Cell::StrLength(false))
            }
            Unicodelen | Unicodegetitem | Unicodesetitem | Newunicode | Copyunicodecontent => {
                Some(Cell::StrLength(true))
            }
            NewWithVtable | GuardClass | GuardNonnullClass | RecordExactClass | GuardSubclass => {
                Some(Cell::Class)
            }
            _ => None,
        });
        for cell in cells {
            if !self.cells.contains(&cell) {
                self.cells.push(cell);
            }
        }
    }

    /// Registers the cells of a trace's virtual refs.
    pub fn register_vref(&mut self, layout: &VrefLayout) {
        for cell in [
            Cell::Class,
            Cell::Field(layout.token.clone()),
            Cell::Field(layout.forced.clone()),
        ] {
            if !self.cells.contains(&cell) {
                self.cells.push(cell);
            }
        }
    }

    /// The initial array of a kind of cell.
    pub(crate) fn initial(
        &mut self,
        solver: &mut Solver,
        cell: &Cell,
    ) -> Result<Term, SolverError> {
        let k = match self.cells.iter().position(|c| c == cell) {
            Some(k) => k,
            None => {
                self.cells.push(cell.clone());
                self.cells.len() - 1
            }
        };
        self.var(solver, Name::invented(&format!("heap{k}")), cell.sort())
    }

    /// The array a call leaves for a kind of cell it may write.
    fn after_call(
        &mut self,
        solver: &mut Solver,
        cell: &Cell,
        call: u32,
    ) -> Result<Term, SolverError> {
        self.initial(solver, cell)?;
        let k = self.cells.iter().position(|c| c == cell).unwrap();
        self.var(
            solver,
            Name::invented(&format!("heap{k}_call{call}")),
            cell.sort(),
        )
    }

    /// An unknown word of the k-th call (its result, its exception, ...).
    fn call_unknown(
        &mut self,
        solver: &mut Solver,
        what: &str,
        call: u32,
    ) -> Result<Term, SolverError> {
        if what == "call" {
            self.call_results = self.call_results.max(call);
        }
        self.var(
            solver,
            Name::invented(&format!("{what}{call}")),
            Sort::Bv(64),
        )
    }

    /// `term` with every product and quotient of unknowns (a circuit a
    /// solver bit-blasts slowly, 64 or 128 bits wide) made an
    /// uninterpreted function of its operands, whose meaning is kept in
    /// `arithmetic_meanings`. A proof that holds without the meanings
    /// holds with them: most heap traces multiply, and their proofs rest
    /// on the heap, not on the products (the validator's product lemma
    /// stays, a fact of the real product).
    pub fn opaque(&mut self, solver: &mut Solver, term: &Term) -> Result<Term, SolverError> {
        let Term::App(fun, args) = term else {
            return Ok(term.clone());
        };
        let args = (args.iter())
            .map(|a| self.opaque(solver, a))
            .collect::<Result<Vec<_>, _>>()?;
        let rebuilt = Term::app(*fun, &args);
        let costly = matches!(fun, Fun::BvMul | Fun::BvSdiv | Fun::BvSrem | Fun::BvSmod);
        let constant = |t: &Term| matches!(t, Term::Bv { .. });
        if !costly || args.len() != 2 || args.iter().any(constant) {
            return Ok(rebuilt);
        }
        let width = bit_width(&args[0]);
        self.functions = true;
        let name = Name::invented(&format!("opaque_{fun}_{width}"));
        if self.declared.insert(name.clone()) {
            let sort = Sort::Bv(width);
            solver.declare_fun(&name, &[sort, sort], sort)?;
        }
        let applied = Term::apply(&name, &args);
        self.arithmetic_meanings.push(applied.eq(&rebuilt));
        Ok(applied)
    }

    /// The uninterpreted function `name` of `arity` words.
    fn function(
        &mut self,
        solver: &mut Solver,
        name: &str,
        arity: usize,
    ) -> Result<Name, SolverError> {
        self.functions = true;
        let fun = Name::invented(&format!("{name}_{arity}"));
        if self.declared.insert(fun.clone()) {
            solver.declare_fun(&fun, &vec![Sort::Bv(64); arity], Sort::Bv(64))?;
        }
        Ok(fun)
    }
}

/// A read of the initial heap: which cell, the names of its object, index
/// and value, and whether it holds a reference.
struct Read {
    cell: Cell,
    names: (Name, Option<Name>, Name),
    /// The name of the kind of its object (`ObjKind`).
    kind: Name,
    ty: Type,
    /// `None`: of the heap before the traces; `Some(k)`: of the heap the
    /// k-th call left.
    call: Option<u32>,
}

/// What a counterexample says the world was: the heap before the traces
/// (the objects they read, with what they read of them), the values of
/// class constants and the objects constants name.
pub(crate) struct Before {
    pub heap: Heap,
    /// The object of each word below `base` that names one.
    pub objects: HashMap<u64, ObjId>,
    pub classes: HashMap<Box<str>, i64>,
    /// The object of each constant, by identity.
    pub constants: HashMap<Box<str>, ObjId>,
    /// What the k-th call writes (where a trace reads it after the call).
    pub call_writes: Vec<(u32, CellWrite)>,
}

/// A value put in a cell of an object from before.
pub(crate) struct CellWrite {
    obj: ObjId,
    cell: Cell,
    index: usize,
    /// The value as a word (string characters), and as a value.
    raw: u64,
    value: Val,
}

impl CellWrite {
    /// Puts the value in `heap` (`None`: not a character the string can
    /// hold). A cell out of bounds or of another kind of object is left:
    /// the read there was undefined.
    pub fn apply(&self, heap: &mut Heap) -> Option<()> {
        let (index, raw, value) = (self.index, self.raw, self.value);
        match (&self.cell, heap.get_mut(self.obj)?) {
            (Cell::Field(d), HeapObject::Object { fields, .. }) => {
                fields.insert(d.clone(), value);
            }
            (Cell::Item(_), HeapObject::Array { items, .. }) => {
                if let Some(item) = items.get_mut(index) {
                    *item = value;
                }
            }
            (Cell::Interior(d), HeapObject::Array { items, interior }) if index < items.len() => {
                interior.insert((index, d.clone()), value);
            }
            (Cell::StrChar(_), HeapObject::Str(bytes)) => {
                if let Some(b) = bytes.get_mut(index) {
                    *b = u8::try_from(raw).ok()?;
                }
            }
            (Cell::StrChar(_), HeapObject::Unicode(chars)) => {
                if let Some(c) = chars.get_mut(index) {
                    *c = u32::try_from(raw).ok()?;
                }
            }
            _ => {}
        }
        Some(())
    }
}

impl Before {
    /// The value a word of type `ty` stands for: `None` for a reference
    /// to no object from before.
    pub fn value(&self, word: u64, ty: Type) -> Option<Val> {
        Some(match ty {
            Type::Float => Val::Float(f64::from_bits(word)),
            Type::Ref if word == 0 => Val::NULL,
            Type::Ref => Val::Ref(Some(*self.objects.get(&word)?)),
            _ => Val::Int(word as i64),
        })
    }
}

/// The largest array or string a replay builds.
const REPLAY_LENGTH: u64 = 4096;

/// Builds the heap before the traces from a counterexample: an object for
/// every word below `base` that an input, a constant or a read names, of
/// the kind the model gives it (instance, array, string; else the kind
/// its reads show), holding what the reads of its kind read (a read of
/// another kind belongs to an op that is undefined, or fails, there).
/// `None` if the model cannot be built (an object read as two kinds, a
/// length too long to build).
pub(crate) fn replay_heap(world: &World, model: &Model, ref_inputs: &[u64]) -> Option<Before> {
    let base = model.u64("base").unwrap_or(u64::MAX);
    let old = |w: u64| w != 0 && w < base;
    let word = |name: &Name| model.u64(name);
    // The kind of each old word, from the cells read at it.
    let mut kinds: BTreeMap<u64, Kind> = BTreeMap::new();
    let mut kind_of = |w: u64, k: Kind| -> Option<()> {
        match kinds.insert(w, k) {
            Some(other) if other != k && other != Kind::Any && k != Kind::Any => None,
            Some(other) if k == Kind::Any => {
                kinds.insert(w, other);
                Some(())
            }
            _ => Some(()),
        }
    };
    for &w in ref_inputs.iter().filter(|&&w| old(w)) {
        kind_of(w, Kind::Any)?;
    }
    // What calls returned: an object from before, or one a call made
    // (past every fresh slot), which the replay puts in the heap from the
    // start: nothing reaches it before the call hands it out.
    let slots = world
        .slots
        .as_ref()
        .map_or(0, |(count, _)| u64::from(*count));
    let returned: Vec<u64> = (world.call_result_names().iter())
        .filter_map(&word)
        .collect();
    let made_by_call: HashSet<u64> = (returned.iter().copied())
        .filter(|&w| base != u64::MAX && w > base.wrapping_add(slots))
        .collect();
    let old = |w: u64| old(w) || made_by_call.contains(&w);
    for &w in returned.iter().filter(|&&w| old(w)) {
        kind_of(w, Kind::Any)?;
    }
    let mut constants_words = Vec::new();
    for (name, _) in &world.objects {
        let w = word(&Name::user(name).part("ptr"))?;
        constants_words.push((name.clone(), w));
        kind_of(w, Kind::Any)?;
    }
    for read in world
        .reads
        .iter()
        .filter(|r| !matches!(r.cell, Cell::Raw(_)))
    {
        let obj = word(&read.names.0)?;
        if old(obj) {
            let kind = word(&read.kind).and_then(Kind::from_model);
            kind_of(obj, kind.unwrap_or(Kind::of(&read.cell)))?;
        }
        let value = word(&read.names.2)?;
        if read.ty == Type::Ref && old(obj) && old(value) {
            kind_of(value, Kind::Any)?;
        }
    }
    // Objects first, then their contents.
    let mut before = Before {
        heap: Heap::new(),
        objects: HashMap::new(),
        classes: HashMap::new(),
        constants: HashMap::new(),
        call_writes: Vec::new(),
    };
    let length = |w: u64, cell: &Cell| -> Option<u64> {
        let read = world
            .reads
            .iter()
            .find(|r| &r.cell == cell && word(&r.names.0) == Some(w))?;
        word(&read.names.2)
    };
    for (&w, &kind) in &kinds {
        let object = match kind {
            Kind::Any | Kind::Instance => HeapObject::Object {
                class: length(w, &Cell::Class).unwrap_or(0) as i64,
                fields: BTreeMap::new(),
            },
            Kind::Array => {
                let n = length(w, &Cell::Length).unwrap_or(0);
                (n <= REPLAY_LENGTH).then_some(())?;
                HeapObject::Array {
                    items: vec![Val::Int(0); n as usize],
                    interior: BTreeMap::new(),
                }
            }
            Kind::String(unicode) => {
                let n = length(w, &Cell::StrLength(unicode)).unwrap_or(0);
                (n <= REPLAY_LENGTH).then_some(())?;
                if unicode {
                    HeapObject::Unicode(vec![0; n as usize])
                } else {
                    HeapObject::Str(vec![0; n as usize])
                }
            }
        };
        before.objects.insert(w, before.heap.alloc(object));
    }
    for read in world
        .reads
        .iter()
        .filter(|r| !matches!(r.cell, Cell::Raw(_)))
    {
        let obj = word(&read.names.0)?;
        let Some(&id) = before.objects.get(&obj) else {
            continue; // a fresh object's cell: not part of the heap before
        };
        if !Kind::of(&read.cell).fits(kinds[&obj]) {
            continue;
        }
        let raw = word(&read.names.2)?;
        let index = read.names.1.as_ref().and_then(word).unwrap_or(0) as usize;
        let value = match (before.value(raw, read.ty), read.call) {
            (Some(value), _) => value,
            // A call may leave a pointer to an object of its own.
            (None, Some(_)) => continue,
            (None, None) => return None,
        };
        let write = CellWrite {
            obj: id,
            cell: read.cell.clone(),
            index,
            raw,
            value,
        };
        match read.call {
            None => write.apply(&mut before.heap)?,
            Some(k) => before.call_writes.push((k, write)),
        }
    }
    for (name, _) in &world.classes {
        let w = word(&Name::user(name).part("class"))?;
        before.classes.insert(name.clone(), w as i64);
    }
    for (name, w) in constants_words {
        if let Some(&id) = before.objects.get(&w) {
            // A string constant holds its text (the reads name only the
            // characters the solver looked at).
            if let (Some((unicode, codes)), Some(object)) =
                (world.string_texts.get(&name), before.heap.get_mut(id))
            {
                *object = match unicode {
                    true => HeapObject::Unicode(codes.clone()),
                    false => HeapObject::Str(codes.iter().map(|&c| c as u8).collect()),
                };
            }
            before.constants.insert(name, id);
        }
    }
    Some(before)
}

/// What an object of the heap before is, by the cells read at it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Nothing read says: an instance.
    Any,
    Instance,
    Array,
    String(bool),
}

impl Kind {
    /// The kind a model's value of the `kind` function stands for
    /// (`ObjKind`); `None` for a value no object has.
    fn from_model(value: u64) -> Option<Kind> {
        let kinds = [
            (ObjKind::Instance, Kind::Instance),
            (ObjKind::Array, Kind::Array),
            (ObjKind::Str, Kind::String(false)),
            (ObjKind::Unicode, Kind::String(true)),
        ];
        let found = kinds.into_iter().find(|(k, _)| *k as u64 == value);
        found.map(|(_, kind)| kind)
    }

    /// Whether a cell of this kind is one an object of kind `object` has.
    fn fits(self, object: Kind) -> bool {
        self == object || self == Kind::Any || (self == Kind::Instance && object == Kind::Any)
    }

    fn of(cell: &Cell) -> Kind {
        match cell {
            Cell::Field(_) | Cell::Class => Kind::Instance,
            Cell::Item(_) | Cell::Interior(_) | Cell::Length => Kind::Array,
            Cell::StrLength(u) | Cell::StrChar(u) => Kind::String(*u),
            Cell::Raw(_) => Kind::Any,
        }
    }
}

/// The base of fresh objects where no address is exposed
/// (`World::addresses_exposed`). A trace sees of a reference only which
/// object it is (`ptr_eq`, the object's class, fields, length): any run
/// is a run whose objects are renamed so that the ones from before sit
/// below this base, its fresh ones at `base + 1 ..`, and the ones calls
/// make above those, with no run more or less. That holds where no word
/// is a reference in one place and an integer in another: no cast, no
/// elidable function giving both, and the two traces' types alike
/// wherever their words meet (`types_meet` in `lib.rs`). The solver need not then
/// find that every fresh object differs from every older one through an
/// unknown base: with a known one, reads of the heap at fresh objects
/// decide in its preprocessing (`base64_codec.log:2077`'s class claim at
/// line 2460: 21 s with an unknown base, 0.1 s so).
pub(crate) const FIXED_BASE: i64 = 1 << 61;

/// Copies of at most this many characters, of a known length, are
/// encoded character by character; longer ones as one `lambda` array.
const SHORT_COPY: u128 = 16;

/// One trace's heap: the current version of each array, and how many
/// objects and calls it has made.
#[derive(Clone, Default)]
pub(crate) struct Memory {
    arrays: BTreeMap<Cell, Term>,
    /// The name defined for an array's current version (`named`).
    names: BTreeMap<Cell, (Term, Term)>,
    allocations: u32,
    /// The slot (`base + slot`) of each allocation in order, where the
    /// pairing gives one (`pairing.rs`); else its position from 1.
    pub slots: Vec<u32>,
    calls: u32,
    /// How many of them may have invalidated quasi-immutable fields
    /// (`oopspec::may_invalidate`): a `guard_not_invalidated` depends on
    /// this count only.
    invalidating_calls: u32,
    /// The last call that may have written each kind of cell, and the
    /// array it left.
    written_by_call: BTreeMap<Cell, (u32, Term)>,
    /// The long copies made so far (`copy`): the cell, the source, and the
    /// source's and the target's start.
    copies: Vec<(Cell, [Term; 3])>,
    /// The objects this trace has allocated so far.
    pub allocated: Vec<Term>,
    /// What the next call can see of the fresh objects (`reach.rs`): it
    /// neither observes nor writes the others.
    pub sight_of_call: Option<Sight>,
    /// A `guard_exception` has taken the last call's exception, or the
    /// last call raises none.
    exception_taken: bool,
    /// The exception pending, where known: the one an elidable call
    /// (`call_pure_*`) left, its class and value functions of the call's
    /// arguments, or the one `restore_exception` made pending.
    pure_exception: Option<Pending>,
    /// The last call was a `jit_force_virtual` of a finished vref,
    /// which calls nothing and forces nothing (`force_finished_vref`).
    forced_nothing: bool,
    /// The op being encoded forces a vref the op before it finished
    /// (`reach::forces_finished_vref`).
    pub forces_finished_vref: bool,
    /// The trace's layout of virtual refs.
    pub vref: VrefLayout,
    /// The class keys of its unnamed allocations (`sites.rs`).
    pub sites: std::rc::Rc<Sites>,
    /// What the first `call_loopinvariant_*` of each function returned:
    /// later ones return it again and do nothing. Keyed by the function's
    /// term (a constant, or one value): two values that happen to be equal
    /// are two functions here, which can only leave a pair unproved.
    loop_invariant: HashMap<Term, Option<Term>>,
    /// Facts about the initial heap met by reads since the last op.
    facts: Vec<Term>,
    /// The strings this trace made whose length is a literal, by their
    /// objects and the names their values got (`strings.rs` compares
    /// them character by character).
    pub literal_lengths: Vec<(Term, u64)>,
    /// The op being encoded (from 1; 0 is before the trace), when each
    /// value was made (by term and by name), and when each fresh object
    /// was allocated: an object that existed before an allocation is not
    /// the new one, so a read of it skips the stores to the new one
    /// (`skip_later_objects`).
    pub now: usize,
    made_at: HashMap<Term, usize>,
    allocated_at: HashMap<Term, usize>,
    /// The fresh objects only one of the traces allocates (a slot the
    /// pairing leaves alone), and the references from outside the trace
    /// (`World::outside_ref`), which are never one of them: a read of
    /// such a reference skips the stores to such an object.
    only_one_trace: HashSet<Term>,
    from_outside: HashSet<Term>,
    /// The stores to fields, items and classes, in order.
    stores: BTreeMap<Cell, Vec<Store>>,
}

/// A store to a cell the reads of some objects may skip: the allocation
/// time of the object written if it is fresh, whether only one trace
/// allocates it, and the array before and after.
#[derive(Clone)]
struct Store {
    allocated_at: Option<usize>,
    only_one_trace: bool,
    before: Term,
    after: Term,
}

/// The name of a version of `cell`'s array. The same version in the
/// other trace (both made the same writes) has the same name, so that
/// equal reads are equal terms.
fn name_array(
    world: &mut World,
    solver: &mut Solver,
    cell: &Cell,
    array: &Term,
) -> Result<Term, SolverError> {
    if !matches!(array, Term::App(..) | Term::Lambda(..)) {
        return Ok(array.clone()); // a name already
    }
    if let Some(term) = world.array_names.get(array) {
        return Ok(term.clone());
    }
    world.arrays += 1;
    let name = Name::invented(&format!("mem{}", world.arrays));
    solver.define_for_smt(&name, cell.sort(), array)?;
    let term = Term::name(&name);
    world.array_names.insert(array.clone(), term.clone());
    Ok(term)
}

/// What a non-integer op does.
#[derive(Default)]
pub(crate) struct Effect {
    pub value: Option<Term>,
    /// The op is defined (given that it is reached) if this holds.
    pub defined: Option<Term>,
    /// A guard's condition.
    pub guard: Option<Term>,
    /// Facts true of every run (assumed).
    pub lemmas: Vec<Term>,
    /// An observation point: what must agree between the two traces.
    pub observed: Option<Vec<Seen>>,
}

/// A heap place: a kind of cell, the object, the key in the cell's array
/// (the object, or the object and an index), and the type it holds.
struct Place {
    cell: Cell,
    obj: Term,
    key: Term,
    ty: Type,
    /// An integer cell narrower than a word: its bytes and signedness.
    narrow: Option<(u32, bool)>,
}

impl Place {
    fn new(cell: Cell, obj: &Term, key: Term, ty: Type) -> Place {
        Place {
            cell,
            obj: obj.clone(),
            key,
            ty,
            narrow: None,
        }
    }

    /// The place as its descr sizes it: a field or item of 1, 2 or 4
    /// bytes holds only what fits (a char field: 0 to 255).
    fn sized_by(mut self, descr: Option<&Descr>) -> Place {
        self.narrow = descr.and_then(Descr::narrow_int);
        self
    }

    /// `value` as the place keeps it: the low bytes, extended.
    fn fit(&self, value: &Term) -> Term {
        fit_cell(self.narrow, value)
    }
}

/// `value` as a cell of `narrow` (bytes, signed; `None`: a word) keeps
/// it: the low bytes, extended.
pub(crate) fn fit_cell(narrow: Option<(u32, bool)>, value: &Term) -> Term {
    match narrow {
        None => value.clone(),
        Some((bytes, signed)) => {
            let bits = 8 * bytes;
            let low = value.un(Fun::Extract(bits - 1, 0));
            if signed {
                low.un(Fun::SignExtend(64 - bits))
            } else {
                low.un(Fun::ZeroExtend(64 - bits))
            }
        }
    }
}

/// The type a store's descr says the place holds (an int if it does not
/// say).
fn stored_type(descr: Option<&Descr>) -> Type {
    descr.and_then(Descr::value_type).unwrap_or(Type::Int)
}

/// The 128-bit key of (object, index).
pub(crate) fn pair(obj: &Term, index: &Term) -> Term {
    obj.bv(Fun::Concat, index)
}

/// Which allocation an object term is (equal for the names of one
/// object), or `None` where it may be any object.
pub(crate) type Allocation<'a> = dyn Fn(&Term) -> Option<usize> + 'a;

/// `array[key]`, read through the stores to places surely other than
/// `key` (another allocation, another constant index): the value stored
/// at `key` itself where the chain writes it, so that an object read
/// from a field of an allocation is named as the allocation it is.
pub(crate) fn read_known(array: &Term, key: &Term, allocation: &Allocation) -> Term {
    stored_at(array, key, allocation).unwrap_or_else(|| array.select(key))
}

/// The value a chain of stores surely holds at `key`: one stored there,
/// with only stores to surely other places above it.
pub(crate) fn stored_at(array: &Term, key: &Term, allocation: &Allocation) -> Option<Term> {
    let mut below = array;
    while let Term::App(Fun::Store, parts) = below {
        if parts[1] == *key {
            return Some(parts[2].clone());
        }
        if !surely_apart(&parts[1], key, allocation) {
            return None;
        }
        below = &parts[0];
    }
    None
}

/// Whether two keys surely name different places: different
/// allocations, or different constant indexes of the same object.
fn surely_apart(x: &Term, y: &Term, allocation: &Allocation) -> bool {
    let split = |k: &Term| match k {
        Term::App(Fun::Concat, halves) => (halves[0].clone(), Some(halves[1].clone())),
        _ => (k.clone(), None),
    };
    let ((o1, i1), (o2, i2)) = (split(x), split(y));
    if o1 != o2 {
        return matches!((allocation(&o1), allocation(&o2)), (Some(a), Some(b)) if a != b);
    }
    matches!((i1, i2), (Some(Term::Bv { value: a, .. }), Some(Term::Bv { value: b, .. })) if a != b)
}

/// `c` is a character of a string (a byte) or of a unicode string (a
/// code point), as the interpreter keeps them.
fn is_char(c: &Term, unicode: bool) -> Term {
    let limit = if unicode { 0x11_0000 } else { 0x100 };
    c.bv(Fun::BvUlt, &Term::word(limit))
}

fn nonnull(r: &Term) -> Term {
    r.eq(&Term::word(0)).not()
}

impl Memory {
    fn current(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        cell: &Cell,
    ) -> Result<Term, SolverError> {
        match self.arrays.get(cell) {
            Some(t) => Ok(t.clone()),
            None => world.initial(solver, cell),
        }
    }

    /// Reads a place.
    fn read(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        place: Place,
    ) -> Result<Term, SolverError> {
        let initial = world.initial(solver, &place.cell)?.select(&place.key);
        // What a narrow place held before the traces fits it (and writes
        // fit what they store).
        if place.narrow.is_some() {
            self.facts.push(place.fit(&initial).eq(&initial));
        }
        let Place {
            cell,
            obj,
            key,
            ty,
            narrow,
        } = place;
        let obj = &obj;
        world.record_read(solver, &cell, obj, &key, &initial, ty, None)?;
        // What a call may have written here, so that a replay's call
        // writes it.
        if let Some((k, after)) = self.written_by_call.get(&cell) {
            let (k, left) = (*k, after.select(&key));
            world.record_read(solver, &cell, obj, &key, &left, ty, Some(k))?;
            if ty == Type::Ref {
                self.facts.push(world.outside_ref(solver, &left)?);
            }
        }
        if let Cell::StrChar(unicode) = cell {
            self.facts.push(is_char(&initial, unicode));
        }
        // Where a copy may have taken this character from, so that a
        // replay's source string holds it.
        let copies: Vec<[Term; 3]> = (self.copies.iter())
            .filter(|(c, _)| *c == cell)
            .map(|(_, copy)| copy.clone())
            .collect();
        for [src, src_start, dst_start] in copies {
            let index = key.un(Fun::Extract(63, 0));
            let offset = index.bv(Fun::BvSub, &dst_start).bv(Fun::BvAdd, &src_start);
            let from = pair(&src, &offset);
            let value = world.initial(solver, &cell)?.select(&from);
            if let Cell::StrChar(unicode) = cell {
                self.facts.push(is_char(&value, unicode));
            }
            world.record_read(solver, &cell, &src, &from, &value, ty, None)?;
        }
        let reference = ty == Type::Ref;
        let base = world.base(solver)?;
        let old = obj.bv(Fun::BvUlt, &base);
        if !matches!(cell, Cell::Raw(_)) {
            // Fresh objects start cleared; old ones point to old ones.
            self.facts
                .push(old.not().implies(&initial.eq(&Term::word(0))));
            if reference {
                let old_value = world.old_or_null(solver, &initial)?;
                self.facts.push(old.implies(&old_value));
            }
        }
        // Above a `lambda` (a copy, a string a helper made), the read is
        // made here: no `lambda` for the solver to expand (or, cvc5, to
        // refuse).
        let current = self.current(world, solver, &cell)?;
        // Inputs, constants and what old objects held are made before
        // the trace.
        let made = match world.is_constant_object(obj) {
            true => Some(0),
            false => self.made_at.get(obj).copied(),
        };
        let from_outside = self.from_outside.contains(obj);
        let visible = self.skip_other_objects(&cell, made, from_outside, &current);
        // A place the trace wrote, with only writes to other places since:
        // what it wrote (no array reasoning left to the solver).
        let allocation = |o: &Term| self.allocated_at.get(o).copied();
        if let Some(value) = stored_at(&visible, &key, &allocation) {
            return Ok(value);
        }
        // What an object from before held before the traces is an object
        // from before (the fact above): made before any this trace makes,
        // so later reads of it skip their stores too.
        let from_before = reference
            && !matches!(cell, Cell::Raw(_))
            && made == Some(0)
            && visible == world.initial(solver, &cell)?;
        let value = match visible.read_above_lambda(&key) {
            Some(value) => value,
            None if visible == current => self.named(world, solver, &cell)?.select(&key),
            None => name_array(world, solver, &cell, &visible)?.select(&key),
        };
        if from_before {
            self.made_at.insert(value.clone(), 0);
        }
        // A narrow place holds only what fits it, whoever wrote it (a
        // call too: its unknown writes are stores to memory).
        if narrow.is_some() {
            self.facts.push(fit_cell(narrow, &value).eq(&value));
        }
        Ok(value)
    }

    /// The array a read of an object may take instead of `array`: below
    /// the last stores, those to objects it cannot be: allocated after it
    /// was made, or, for a reference from outside, allocated by one trace
    /// only. Two reads of an object with only such stores between are
    /// then the same term, and so is everything computed from them.
    fn skip_other_objects(
        &self,
        cell: &Cell,
        made: Option<usize>,
        from_outside: bool,
        array: &Term,
    ) -> Term {
        let Some(stores) = self.stores.get(cell) else {
            return array.clone();
        };
        let other = |store: &Store| {
            let later = matches!((made, store.allocated_at), (Some(m), Some(at)) if at > m);
            later || (from_outside && store.only_one_trace)
        };
        let mut visible = array;
        for store in stores.iter().rev() {
            if !(other(store) && store.after == *visible) {
                break;
            }
            visible = &store.before;
        }
        visible.clone()
    }

    /// `name` stands for `term`, made now (or when `term` was made, and
    /// allocated when it was, for a fresh object).
    pub(crate) fn name_made(&mut self, name: &Term, term: &Term) {
        let made = self.made_at.get(term).copied().unwrap_or(self.now);
        self.made_at.entry(name.clone()).or_insert(made);
        if let Some(&at) = self.allocated_at.get(term) {
            self.allocated_at.entry(name.clone()).or_insert(at);
        }
        for set in [&mut self.only_one_trace, &mut self.from_outside] {
            if set.contains(term) {
                set.insert(name.clone());
            }
        }
    }

    /// `r` comes from outside the trace: the fact that says what it can
    /// be (`World::outside_ref`), which lets its reads skip the stores to
    /// objects only one trace allocates; nor is it an object this trace
    /// allocates later (the outside hands out what exists).
    pub(crate) fn outside_ref(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        r: &Term,
    ) -> Result<Term, SolverError> {
        self.from_outside.insert(r.clone());
        let outside = world.outside_ref(solver, r)?;
        let Some((_, paired)) = world.slots.clone() else {
            return Ok(outside);
        };
        let made: HashSet<u32> = (0..self.allocations)
            .map(|k| self.slots.get(k as usize).copied().unwrap_or(k + 1))
            .collect();
        let base = world.base(solver)?;
        let later = (paired.into_iter())
            .filter(|slot| !made.contains(slot))
            .map(|slot| {
                r.eq(&base.bv(Fun::BvAdd, &Term::word(i64::from(slot))))
                    .not()
            });
        Ok(Term::and_all(std::iter::once(outside).chain(later)))
    }

    /// The trace's inputs exist before it.
    pub(crate) fn inputs_made(&mut self, inputs: &[Option<Term>]) {
        for input in inputs.iter().flatten() {
            self.made_at.insert(input.clone(), 0);
        }
    }

    /// An array's or string's length (a read of the heap before where not
    /// written).
    pub(crate) fn length_of(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        cell: &Cell,
        s: &Term,
    ) -> Result<Term, SolverError> {
        self.read(
            world,
            solver,
            Place::new(cell.clone(), s, s.clone(), Type::Int),
        )
    }

    /// `s` is a string (not unicode), not null.
    pub(crate) fn nonnull_string(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        s: &Term,
    ) -> Result<Term, SolverError> {
        nonnull_of_kind(world, solver, s, ObjKind::Str)
    }

    /// Makes `array` the current version of `cell`.
    /// Reads the character (or item) of `s` at `index` in `cell`, as a
    /// replay needs it: what it held before the traces, and where a copy
    /// took it from, are named for `replay_heap`.
    pub(crate) fn item_at(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        cell: &Cell,
        (s, index): (&Term, &Term),
    ) -> Result<Term, SolverError> {
        let place = Place::new(cell.clone(), s, pair(s, index), Type::Int);
        self.read(world, solver, place)
    }

    /// `cell`'s items of a fresh object from `dst_start` on were copied
    /// from `src`'s from `src_start` on (a helper's new string): a read
    /// of them names where they came from.
    pub(crate) fn note_copy(&mut self, cell: &Cell, [src, src_start, dst_start]: [&Term; 3]) {
        let copy = [src.clone(), src_start.clone(), dst_start.clone()];
        self.copies.push((cell.clone(), copy));
    }

    pub(crate) fn set_array(&mut self, cell: &Cell, array: Term) {
        self.arrays.insert(cell.clone(), array);
    }

    /// `copystrcontent(src, dst, src_start, dst_start, length)` on the
    /// characters `cell` (or an array copy on its items): the array that
    /// holds, at each place of dst's span, the character at the same
    /// offset in src's, and elsewhere what it held (the spans are inside
    /// their objects, so nothing wraps).
    fn copy(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        cell: &Cell,
        args: &[Term],
    ) -> Result<(), SolverError> {
        let [src, dst, src_start, dst_start, len] = args else {
            unreachable!("copies have five arguments (the checker's arity, `encode_helper`)")
        };
        // A short copy of a known length: a read and a write per
        // character (every read first, as the interpreter copies), which
        // a replay can rebuild.
        if let Term::Bv { value, width: 64 } = len {
            if *value <= SHORT_COPY {
                let at = |start: &Term, i: u128| start.bv(Fun::BvAdd, &Term::word(i as i64));
                let mut chars = Vec::new();
                for i in 0..*value {
                    let key = pair(src, &at(src_start, i));
                    chars.push(self.read(
                        world,
                        solver,
                        Place::new(cell.clone(), src, key, Type::Int),
                    )?);
                }
                for (i, c) in (0..*value).zip(chars) {
                    let key = pair(dst, &at(dst_start, i));
                    let array = self.current(world, solver, cell)?.store(&key, &c);
                    self.arrays.insert(cell.clone(), array);
                }
                return Ok(());
            }
        }
        let chars = self.named(world, solver, cell)?;
        let key = Term::var("copy_key");
        let (obj, index) = (key.un(Fun::Extract(127, 64)), key.un(Fun::Extract(63, 0)));
        let inside = Term::and_all([
            obj.eq(dst),
            dst_start.bv(Fun::BvSle, &index),
            index.bv(Fun::BvSlt, &dst_start.bv(Fun::BvAdd, len)),
        ]);
        let offset = index.bv(Fun::BvSub, dst_start).bv(Fun::BvAdd, src_start);
        let value = Term::ite(
            &inside,
            &chars.select(&pair(src, &offset)),
            &chars.select(&key),
        );
        self.arrays.insert(
            cell.clone(),
            Term::lambda("copy_key", cell.sort_index(), &value),
        );
        let copy = [src.clone(), src_start.clone(), dst_start.clone()];
        self.copies.push((cell.clone(), copy));
        Ok(())
    }

    /// The current array of `cell` by a name of its own, so that reads
    /// refer to it instead of repeating its stores (which grow with every
    /// write: read by read, the query would grow with their square).
    pub(crate) fn named(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        cell: &Cell,
    ) -> Result<Term, SolverError> {
        let array = self.current(world, solver, cell)?;
        if let Some((version, name)) = self.names.get(cell) {
            if *version == array {
                return Ok(name.clone());
            }
        }
        let term = name_array(world, solver, cell, &array)?;
        self.names.insert(cell.clone(), (array, term.clone()));
        Ok(term)
    }

    /// The class of `obj`.
    fn class_of(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        obj: &Term,
    ) -> Result<Term, SolverError> {
        let place = Place::new(Cell::Class, obj, obj.clone(), Type::Int);
        self.read(world, solver, place)
    }

    /// Writes a place. What it held before the traces is named too (as a
    /// read of the initial heap), so that a counterexample in which a
    /// write makes the difference gives the value it overwrote.
    fn write(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        place: Place,
        value: &Term,
    ) -> Result<(), SolverError> {
        let (cell, key) = (place.cell.clone(), place.key.clone());
        let value = place.fit(value);
        let allocated_at = self.allocated_at.get(&place.obj).copied();
        let only_one_trace = self.only_one_trace.contains(&place.obj);
        self.read(world, solver, place)?;
        let before = self.current(world, solver, &cell)?;
        let array = before.store(&key, &value);
        // Classes too, but not yet lengths and strings: skipping their
        // stores made the counterexample of a wrong array copy stop
        // replaying (opt's virtuals test), a cause not yet found.
        if matches!(cell, Cell::Field(_) | Cell::Item(_) | Cell::Class) {
            self.stores.entry(cell.clone()).or_default().push(Store {
                allocated_at,
                only_one_trace,
                before,
                after: array.clone(),
            });
        }
        self.arrays.insert(cell, array);
        Ok(())
    }

    /// A new object, and its class and length where it has one.
    pub(crate) fn allocate(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        class: Option<Term>,
        length: Option<(Cell, Term)>,
    ) -> Result<Term, SolverError> {
        let slot =
            (self.slots.get(self.allocations as usize).copied()).unwrap_or(self.allocations + 1);
        self.allocations += 1;
        let obj = world
            .base(solver)?
            .bv(Fun::BvAdd, &Term::word(i64::from(slot)));
        self.allocated_at.insert(obj.clone(), self.now);
        self.made_at.insert(obj.clone(), self.now);
        if (world.slots.as_ref()).is_some_and(|(_, paired)| !paired.contains(&slot)) {
            self.only_one_trace.insert(obj.clone());
        }
        if let Some(class) = class {
            let place = Place::new(Cell::Class, &obj, obj.clone(), Type::Int);
            self.write(world, solver, place, &class)?;
        }
        if let Some((cell, n)) = length {
            if let (Cell::StrLength(_), Term::Bv { value, .. }) = (&cell, &n) {
                self.literal_lengths.push((obj.clone(), *value as u64));
            }
            self.write(
                world,
                solver,
                Place::new(cell, &obj, obj.clone(), Type::Int),
                &n,
            )?;
        }
        Ok(obj)
    }

    /// Every array as it is now, for an observation or the end.
    pub fn snapshot(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
    ) -> Result<Vec<Term>, SolverError> {
        let cells: Vec<Cell> = world.cells.clone();
        cells
            .iter()
            .map(|c| self.current(world, solver, c))
            .collect()
    }

    /// The exception pending after the last call (class 0: none, or
    /// taken by a `guard_exception` or `save_exception`). Before any
    /// call, what the trace was entered with: none, or an unknown one
    /// where BEFORE saves it first (`World::entered_with_exception`).
    fn exception(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
    ) -> Result<Pending, SolverError> {
        let none = || Pending {
            class: Term::word(0),
            value: Term::word(0),
            restored: None,
        };
        match (&self.pure_exception, self.calls) {
            _ if self.exception_taken => Ok(none()),
            (Some(known), _) => Ok(known.clone()),
            (None, 0) if !world.entered_with_exception => Ok(none()),
            (None, k) => {
                // (`exc0` and `excvalue0`: the entry's.)
                Ok(Pending {
                    class: world.call_unknown(solver, "exc", k)?,
                    value: world.call_unknown(solver, "excvalue", k)?,
                    restored: None,
                })
            }
        }
    }

    /// How many calls the trace has made so far (the k of `call{k}`).
    pub fn calls(&self) -> u32 {
        self.calls
    }

    /// The array the last call left for `cell`, if it wrote it.
    pub fn left_by_call(&self, cell: &Cell) -> Option<&Term> {
        let (k, after) = self.written_by_call.get(cell)?;
        (*k == self.calls).then_some(after)
    }

    /// A call that may do anything its effect info allows: observed,
    /// then its result and its writes are the k-th call's unknowns.
    fn call(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        descr: Option<&Descr>,
        args: &[Term],
        result: bool,
    ) -> Result<Effect, SolverError> {
        // What the call sees: its arguments and the cells its effect info
        // lets it read or write (PyPy's read set leaves out what the call
        // also writes), and classes, lengths and strings, which never
        // change; but not the objects it cannot reach.
        let mut observed: Vec<Seen> = args.iter().map(Seen::word).collect();
        let info = descr.and_then(Descr::as_call);
        let (reads, writes) = (info.map(|c| &c.reads), info.map(|c| &c.writes));
        let touches = |set: Option<&HeapSet>, cell: &Cell| {
            set.map_or(true, |s| s.may_touch(cell.descr_name()))
        };
        let cells: Vec<Cell> = world.cells.clone();
        let sight = self.sight_of_call.clone();
        let before = self.snapshot(world, solver)?;
        for (cell, array) in cells.iter().zip(&before) {
            if cell.immutable() || touches(reads, cell) || touches(writes, cell) {
                let initial = world.initial(solver, cell)?;
                let key = world.any_key(solver, cell)?;
                observed.push(match &sight {
                    Some(sight) => sight.seen(array, &initial, cell, &key),
                    None => Seen::whole(array, &key),
                });
            }
        }
        self.calls += 1;
        if traceopt_ir::oopspec::may_invalidate(descr) {
            self.invalidating_calls += 1;
        }
        self.exception_taken = !Descr::call_may_raise(descr);
        self.pure_exception = None;
        self.forced_nothing = false;
        let k = self.calls;
        let unchanged: Vec<bool> = (cells.iter())
            .map(|c| c.immutable() || world.unchanged_by_calls.contains(c))
            .collect();
        for ((cell, old), _) in (cells.iter().zip(&before).zip(unchanged)).filter(|(_, same)| !same)
        {
            if touches(writes, cell) {
                let after = world.after_call(solver, cell, k)?;
                let kept = match &sight {
                    Some(sight) => sight.keep(old, &after, cell, world.ref_cells.contains(cell)),
                    None => after.clone(),
                };
                self.arrays.insert(cell.clone(), kept);
                self.written_by_call.insert(cell.clone(), (k, after));
            }
        }
        Ok(Effect {
            value: if result {
                Some(world.call_unknown(solver, "call", k)?)
            } else {
                None
            },
            observed: Some(observed),
            ..Effect::default()
        })
    }
}

/// The cell a heap op's descr names.
pub(crate) fn cell_of(opcode: Opcode, descr: Option<&Descr>) -> Option<Cell> {
    use Opcode::*;
    let text = || descr.map_or_else(|| Box::from(""), |d| d.text.clone());
    Some(match opcode {
        GetfieldGcI | GetfieldGcR | GetfieldGcF | SetfieldGc => Cell::Field(text()),
        GetfieldRawI | GetfieldRawR | GetfieldRawF | SetfieldRaw | GetarrayitemRawI
        | GetarrayitemRawF | SetarrayitemRaw | RawLoadI | RawLoadF | RawStore => Cell::Raw(text()),
        GetarrayitemGcI | GetarrayitemGcR | GetarrayitemGcF | GetarrayitemGcPureI
        | GetarrayitemGcPureR | GetarrayitemGcPureF | SetarrayitemGc => Cell::Item(text()),
        GetinteriorfieldGcI | GetinteriorfieldGcR | GetinteriorfieldGcF | SetinteriorfieldGc => {
            Cell::Interior(text())
        }
        Strlen | Strgetitem | Strsetitem | Copystrcontent => Cell::StrChar(false),
        Unicodelen | Unicodegetitem | Unicodesetitem | Copyunicodecontent => Cell::StrChar(true),
        _ => return None,
    })
}

/// The meaning of a non-integer op, or `None` if the validator does not
/// know it. `args` are the arguments' words; `class_of_size` gives the
/// class a `new_with_vtable` of a size descr makes.
pub(crate) fn encode_heap_op(
    world: &mut World,
    memory: &mut Memory,
    solver: &mut Solver,
    opcode: Opcode,
    args: &[Term],
    descr: Option<&Descr>,
) -> Result<Option<Effect>, SolverError> {
    use Opcode::*;
    if !opcode.info().arity().accepts(args.len()) {
        return Ok(None); // the checker reports it
    }
    if opcode.has(Flags::CALL) {
        if let Some(helper) = Helper::of(descr) {
            let mut effect = encode_helper(world, memory, solver, (helper, descr), args)?;
            if let Some(e) = &mut effect {
                e.lemmas.append(&mut memory.facts);
            }
            return Ok(effect);
        }
        if let Some(effect) = force_finished_vref(world, memory, solver, args)? {
            return Ok(Some(effect));
        }
    }
    let mut e = Effect::default();
    match opcode {
        // Markers and hints that change nothing the validator sees;
        // guard_future_condition is a place where the optimizer may put
        // guards later, and never fails itself.
        GuardFutureCondition
        | DebugMergePoint
        | EnterPortalFrame
        | LeavePortalFrame
        | JitDebug
        | IncrementDebugCounter
        | Keepalive
        | ForceSpill
        | QuasiimmutField
        | CondCallGcWb
        | CondCallGcWbArray => {}
        // The call returns the result: it raises nothing.
        RecordKnownResult => {
            let fun = world.function(solver, "pure", args.len() - 1)?;
            let raised = world.function(solver, "pure_exc", args.len() - 1)?;
            let returns = Term::apply(&fun, &args[1..]).eq(&args[0]);
            e.defined = Some(returns.and(&Term::apply(&raised, &args[1..]).eq(&Term::word(0))));
        }
        AssertNotNone => e.defined = Some(nonnull(&args[0])),
        RecordExactValueI | RecordExactValueR => e.defined = Some(args[0].eq(&args[1])),
        RecordExactClass => {
            let class = memory.class_of(world, solver, &args[0])?;
            let instance = nonnull_of_kind(world, solver, &args[0], ObjKind::Instance)?;
            e.defined = Some(instance.and(&class.eq(&args[1])));
        }
        SameAsR | SameAsF | ConvertFloatBytesToLonglong => e.value = Some(args[0].clone()),
        CastPtrToInt | CastIntToPtr => {
            world.addresses_exposed = true;
            e.value = Some(args[0].clone());
        }
        // Floats are IEEE values with one NaN (`one_nan`): the sign and
        // magnitude ops keep a NaN as it is; arithmetic, conversions and
        // comparisons are functions whose IEEE meaning the solver gets
        // only when a proof needs it (`arithmetic_meanings`).
        FloatNeg | FloatAbs => {
            let bits = match opcode {
                FloatNeg => args[0].bv(Fun::BvXor, &Term::word(i64::MIN)),
                _ => args[0].bv(Fun::BvAnd, &Term::word(i64::MAX)),
            };
            e.value = Some(Term::ite(&is_nan(&args[0]), &args[0], &bits));
        }
        ConvertLonglongBytesToFloat => {
            e.value = Some(Term::ite(&is_nan(&args[0]), &Term::word(NAN), &args[0]))
        }
        FloatAdd
        | FloatSub
        | FloatMul
        | FloatTruediv
        | CastIntToFloat
        | CastFloatToInt
        | CastFloatToSinglefloat
        | CastSinglefloatToFloat => {
            let fun = world.function(solver, opcode.name(), args.len())?;
            let v = Term::apply(&fun, args);
            if matches!(opcode, FloatAdd | FloatMul) {
                // IEEE sums and products of values commute (a fact the
                // first attempt, without the meanings, can use).
                let swapped = Term::apply(&fun, &[args[1].clone(), args[0].clone()]);
                e.lemmas.push(v.eq(&swapped));
            }
            if let Some(meaning) = float_meaning(opcode, args, &v) {
                world.arithmetic_meanings.push(meaning);
                world.float_meanings = true;
            }
            e.value = Some(v);
        }
        FloatLt | FloatLe | FloatEq | FloatNe | FloatGt | FloatGe => {
            let fun = world.function(solver, opcode.name(), args.len())?;
            let v = Term::apply(&fun, args);
            e.lemmas.push(v.bv(Fun::BvUle, &Term::word(1)));
            let (a, b) = (fp(&args[0]), fp(&args[1]));
            let holds = match opcode {
                FloatLt => Term::app(Fun::FpLt, &[a, b]),
                FloatLe => Term::app(Fun::FpLe, &[a, b]),
                FloatGt => Term::app(Fun::FpLt, &[b, a]),
                FloatGe => Term::app(Fun::FpLe, &[b, a]),
                FloatEq => Term::app(Fun::FpEq, &[a, b]),
                _ => Term::app(Fun::FpEq, &[a, b]).not(),
            };
            world.arithmetic_meanings.push(v.eq(&flag(&holds)));
            e.value = Some(v);
        }
        Strhash | Unicodehash => {
            let fun = world.function(solver, opcode.name(), 1)?;
            e.value = Some(Term::apply(&fun, args));
        }
        GuardIsObject => {
            e.defined = Some(nonnull(&args[0]));
            e.guard = Some(is_object(world, solver, &args[0])?);
        }
        GuardSubclass => {
            let class = memory.class_of(world, solver, &args[0])?;
            let fun = world.function(solver, opcode.name(), 2)?;
            e.defined = Some(nonnull_of_kind(world, solver, &args[0], ObjKind::Instance)?);
            e.guard = Some(nonnull(&Term::apply(&fun, &[class, args[1].clone()])));
        }
        // Any object has a GC type id, arrays too (not a class): an
        // unknown of the object, which never changes.
        GuardGcType => {
            e.defined = Some(nonnull(&args[0]));
            e.guard = Some(gc_type(world, solver, &args[0])?.eq(&args[1]));
        }
        // A `JitVirtualRef` holding the frame's force token, until
        // `virtual_ref_finish` clears it and stores the real object (as
        // the interpreter runs them).
        VirtualRef => {
            let layout = memory.vref.clone();
            let class = world.class(solver, &layout.class)?;
            let obj = memory.allocate(world, solver, Some(class), None)?;
            e.lemmas
                .push(is_kind(world, solver, &obj, ObjKind::Instance)?);
            let token = world.force_token(solver)?;
            for (field, value) in [(layout.token, token), (layout.forced, Term::word(0))] {
                let place = Place::new(Cell::Field(field), &obj, obj.clone(), Type::Ref);
                memory.write(world, solver, place, &value)?;
            }
            e.value = Some(obj);
        }
        VirtualRefFinish => {
            let layout = memory.vref.clone();
            e.defined = Some(nonnull_of_kind(world, solver, &args[0], ObjKind::Instance)?);
            let place =
                |field| Place::new(Cell::Field(field), &args[0], args[0].clone(), Type::Ref);
            memory.write(world, solver, place(layout.token), &Term::word(0))?;
            // Null (as PyPy's traces mostly pass) leaves `forced` as it is.
            if args[1] != Term::word(0) {
                let forced = memory.read(world, solver, place(layout.forced.clone()))?;
                let value = Term::ite(&args[1].eq(&Term::word(0)), &forced, &args[1]);
                memory.write(world, solver, place(layout.forced), &value)?;
            }
        }
        PtrEq | InstancePtrEq => e.value = Some(flag(&args[0].eq(&args[1]))),
        PtrNe | InstancePtrNe => e.value = Some(flag(&args[0].eq(&args[1]).not())),
        GuardNonnull => e.guard = Some(nonnull(&args[0])),
        GuardIsnull => e.guard = Some(args[0].eq(&Term::word(0))),
        // A class test reads the object's type: one that is no instance
        // (an array, a string) is of no class, and fails it (as PyPy's
        // backend compares type ids).
        GuardClass | GuardNonnullClass => {
            let class = memory.class_of(world, solver, &args[0])?;
            let instance = is_kind(world, solver, &args[0], ObjKind::Instance)?;
            let same = instance.and(&class.eq(&args[1]));
            if opcode == GuardClass {
                e.defined = Some(nonnull(&args[0]));
                e.guard = Some(same);
            } else {
                e.guard = Some(nonnull(&args[0]).and(&same));
            }
        }
        GuardNoException => e.guard = Some(memory.exception(world, solver)?.none_pending()),
        GuardException => {
            let caught = memory.exception(world, solver)?;
            e.guard = Some(caught.of_class(&args[0]));
            e.value = Some(caught.value);
            // Past the guard the exception is caught: none is pending.
            memory.exception_taken = true;
        }
        // A bridge out of a guard on an exception saves the exception
        // pending (its class, then its value, which clears it) and
        // restores it later (the interpreter's meaning: pending where the
        // class or the value is not 0).
        SaveExcClass => e.value = Some(memory.exception(world, solver)?.class),
        SaveException => {
            e.value = Some(memory.exception(world, solver)?.value);
            memory.exception_taken = true;
        }
        RestoreException => {
            let none = args[0].eq(&Term::word(0)).and(&args[1].eq(&Term::word(0)));
            memory.pure_exception = Some(Pending {
                class: args[0].clone(),
                value: args[1].clone(),
                restored: Some(none.not()),
            });
            memory.exception_taken = false;
        }
        // (Passed where the last may-force call was none: a finished
        // vref's `jit_force_virtual`, which forces nothing.)
        GuardNotForced | GuardNotForced2 if memory.forced_nothing => {}
        GuardNotForced | GuardNotForced2 => {
            let forced = world.call_unknown(solver, "forced", memory.calls)?;
            e.guard = Some(forced.eq(&Term::word(0)));
        }
        GuardNotInvalidated => {
            let invalid = world.call_unknown(solver, "invalid", memory.invalidating_calls)?;
            e.guard = Some(invalid.eq(&Term::word(0)));
        }
        GetfieldGcI | GetfieldGcR | GetfieldGcF => {
            let cell = cell_of(opcode, descr).unwrap();
            e.defined = Some(field_owner(world, solver, &args[0], descr)?);
            e.value = Some(memory.read(
                world,
                solver,
                Place::new(cell, &args[0], args[0].clone(), opcode.result_type()).sized_by(descr),
            )?);
        }
        SetfieldGc => {
            let cell = cell_of(opcode, descr).unwrap();
            e.defined = Some(field_owner(world, solver, &args[0], descr)?);
            let place =
                Place::new(cell, &args[0], args[0].clone(), stored_type(descr)).sized_by(descr);
            memory.write(world, solver, place, &args[1])?;
        }
        GetfieldRawI | GetfieldRawR | GetfieldRawF => {
            let cell = cell_of(opcode, descr).unwrap();
            e.value = Some(memory.read(
                world,
                solver,
                Place::new(cell, &args[0], args[0].clone(), Type::Int),
            )?);
        }
        SetfieldRaw => {
            let cell = cell_of(opcode, descr).unwrap();
            let place =
                Place::new(cell, &args[0], args[0].clone(), stored_type(descr)).sized_by(descr);
            memory.write(world, solver, place, &args[1])?;
        }
        // Raw arrays and raw loads: the cell at the item's address.
        GetarrayitemRawI | GetarrayitemRawF | RawLoadI | RawLoadF => {
            let cell = cell_of(opcode, descr).unwrap();
            let address = raw_address(opcode, args, descr);
            let place = Place::new(cell, &address, address.clone(), opcode.result_type());
            e.value = Some(memory.read(world, solver, place.sized_by(descr))?);
        }
        SetarrayitemRaw | RawStore => {
            let cell = cell_of(opcode, descr).unwrap();
            let address = raw_address(opcode, args, descr);
            let place = Place::new(cell, &address, address.clone(), stored_type(descr));
            memory.write(world, solver, place.sized_by(descr), &args[2])?;
        }
        GetarrayitemGcI | GetarrayitemGcR | GetarrayitemGcF | GetarrayitemGcPureI
        | GetarrayitemGcPureR | GetarrayitemGcPureF | GetinteriorfieldGcI | GetinteriorfieldGcR
        | GetinteriorfieldGcF | Strgetitem | Unicodegetitem => {
            let cell = cell_of(opcode, descr).unwrap();
            e.defined = Some(in_bounds(
                world, memory, solver, opcode, &args[0], &args[1],
            )?);
            if matches!(cell, Cell::Item(_)) {
                let typed = array_type(world, solver, &args[0], descr)?;
                e.defined = e.defined.map(|d| d.and(&typed));
            }
            let key = pair(&args[0], &args[1]);
            e.value = Some(memory.read(
                world,
                solver,
                Place::new(cell, &args[0], key, opcode.result_type()).sized_by(descr),
            )?);
        }
        Copystrcontent | Copyunicodecontent => {
            let cell = cell_of(opcode, descr).unwrap();
            let of = (cell, length_cell(opcode), kind_of_op(opcode));
            e.defined = Some(copy_span(world, memory, solver, of, args)?);
        }
        SetarrayitemGc | SetinteriorfieldGc | Strsetitem | Unicodesetitem => {
            let cell = cell_of(opcode, descr).unwrap();
            let inside = in_bounds(world, memory, solver, opcode, &args[0], &args[1])?;
            // A character outside the string's range is undefined.
            e.defined = Some(match &cell {
                Cell::StrChar(unicode) => inside.and(&is_char(&args[2], *unicode)),
                Cell::Item(_) => inside.and(&array_type(world, solver, &args[0], descr)?),
                _ => inside,
            });
            let ty = match opcode {
                Strsetitem | Unicodesetitem => Type::Int,
                _ => stored_type(descr),
            };
            let place = Place::new(cell, &args[0], pair(&args[0], &args[1]), ty).sized_by(descr);
            memory.write(world, solver, place, &args[2])?;
        }
        ArraylenGc | Strlen | Unicodelen => {
            let cell = length_cell(opcode);
            e.defined = Some(nonnull_of_kind(
                world,
                solver,
                &args[0],
                kind_of_op(opcode),
            )?);
            let n = memory.read(
                world,
                solver,
                Place::new(cell, &args[0], args[0].clone(), Type::Int),
            )?;
            e.lemmas.push(Term::word(0).bv(Fun::BvSle, &n));
            e.value = Some(n);
        }
        New => {
            let obj = memory.allocate(world, solver, None, None)?;
            e.lemmas
                .push(is_kind(world, solver, &obj, ObjKind::Instance)?);
            e.lemmas.push(of_type(world, solver, &obj, descr)?);
            e.value = Some(obj);
        }
        NewWithVtable => {
            let made_by = MadeBy::Op(memory.now - 1);
            let class = world.allocated_class(solver, descr, memory.sites.key(made_by))?;
            let obj = memory.allocate(world, solver, Some(class), None)?;
            e.lemmas
                .push(is_kind(world, solver, &obj, ObjKind::Instance)?);
            e.lemmas.push(is_object(world, solver, &obj)?);
            e.lemmas.push(of_type(world, solver, &obj, descr)?);
            e.value = Some(obj);
        }
        NewArray | NewArrayClear | Newstr | Newunicode => {
            e.defined = Some(Term::word(0).bv(Fun::BvSle, &args[0]));
            let cell = length_cell(match opcode {
                Newstr => Strlen,
                Newunicode => Unicodelen,
                _ => ArraylenGc,
            });
            let obj = memory.allocate(world, solver, None, Some((cell, args[0].clone())))?;
            e.lemmas
                .push(is_kind(world, solver, &obj, kind_of_op(opcode))?);
            if matches!(opcode, NewArray | NewArrayClear) {
                e.lemmas.push(of_type(world, solver, &obj, descr)?);
            }
            e.value = Some(obj);
        }
        // The first call of a function is a call; later ones return what
        // it returned, raise nothing and write nothing (as the interpreter
        // runs them).
        CallLoopinvariantI | CallLoopinvariantR | CallLoopinvariantF | CallLoopinvariantN => {
            let func = args[0].clone();
            if let Some(value) = memory.loop_invariant.get(&func) {
                memory.exception_taken = true;
                e.value = value.clone();
            } else {
                let result = opcode.result_type() != Type::Void;
                let mut e = memory.call(world, solver, descr, args, result)?;
                if let (Type::Ref, Some(v)) = (opcode.result_type(), &e.value) {
                    e.lemmas.push(memory.outside_ref(world, solver, v)?);
                    e.lemmas
                        .extend(instance_result(world, solver, descr, args, v)?);
                }
                memory.loop_invariant.insert(func, e.value.clone());
                return Ok(Some(e));
            }
        }
        // An elidable call: its result, and the exception it raises, are
        // functions of its arguments (PyPy's meaning of elidable; the
        // interpreter, too, makes each call's exception the pending one).
        CallPureI | CallPureR | CallPureF | CallPureN => {
            let fun = world.function(solver, "pure", args.len())?;
            let v = Term::apply(&fun, args);
            if opcode.result_type() == Type::Ref {
                e.lemmas.push(memory.outside_ref(world, solver, &v)?);
            }
            e.value = (opcode.result_type() != Type::Void).then_some(v);
            memory.exception_taken = !Descr::call_may_raise(descr);
            memory.pure_exception = match memory.exception_taken {
                true => None,
                false => {
                    let raised = world.function(solver, "pure_exc", args.len())?;
                    let value = world.function(solver, "pure_excvalue", args.len())?;
                    Some(Pending {
                        class: Term::apply(&raised, args),
                        value: Term::apply(&value, args),
                        restored: None,
                    })
                }
            };
        }
        // A conditional call whose condition is 0 calls nothing, and
        // leaves no exception pending.
        CondCallN if args[0] == Term::word(0) => memory.exception_taken = true,
        _ if opcode.has(Flags::CALL) => {
            let result = opcode.result_type() != Type::Void;
            let mut e = memory.call(world, solver, descr, args, result)?;
            if let (Type::Ref, Some(v)) = (opcode.result_type(), &e.value) {
                e.lemmas.push(memory.outside_ref(world, solver, v)?);
                e.lemmas
                    .extend(instance_result(world, solver, descr, args, v)?);
            }
            e.lemmas.append(&mut memory.facts);
            return Ok(Some(e));
        }
        ForceToken => e.value = Some(world.force_token(solver)?),
        _ => return Ok(None),
    }
    e.lemmas.append(&mut memory.facts);
    Ok(Some(e))
}

/// `jit_force_virtual(vref)` (`OS_JIT_FORCE_VIRTUAL`) right after
/// `virtual_ref_finish(vref, ...)` wrote the vref's token null
/// (`reach::forces_finished_vref`, `memory.forces_finished_vref`):
/// RPython's `force_virtual` then returns the object in its `forced`
/// field and does nothing else: no call, no exception, nothing forced.
/// (With `forced` null it raises `InvalidVirtualRef`, an RPython
/// assertion, not a Python exception: the run is undefined there.)
/// `None` for any other call, a call as any.
fn force_finished_vref(
    world: &mut World,
    memory: &mut Memory,
    solver: &mut Solver,
    args: &[Term],
) -> Result<Option<Effect>, SolverError> {
    if !memory.forces_finished_vref {
        return Ok(None);
    }
    let layout = memory.vref.clone();
    let vref = &args[1];
    let forced = Place::new(Cell::Field(layout.forced), vref, vref.clone(), Type::Ref);
    let forced = memory.read(world, solver, forced)?;
    memory.exception_taken = true;
    memory.pure_exception = None;
    memory.forced_nothing = true;
    let mut lemmas = Vec::new();
    lemmas.append(&mut memory.facts);
    Ok(Some(Effect {
        defined: Some(nonnull(&forced)),
        value: Some(forced),
        lemmas,
        ..Effect::default()
    }))
}

/// What a call that returns an RPython instance or null (a thread-local
/// read of one, `oopspec::returns_instance`) gives: `value`, where not
/// null, is an instance and an object.
fn instance_result(
    world: &mut World,
    solver: &mut Solver,
    descr: Option<&Descr>,
    args: &[Term],
    value: &Term,
) -> Result<Option<Term>, SolverError> {
    let function = (world.classes.iter())
        .find(|(_, term)| Some(term) == args.first())
        .map(|(name, _)| traceopt_ir::Const::Class(name.as_ref().into()));
    if !function.is_some_and(|f| traceopt_ir::oopspec::returns_instance(descr, &f)) {
        return Ok(None);
    }
    let instance = is_kind(world, solver, value, ObjKind::Instance)?;
    let object = is_object(world, solver, value)?;
    Ok(Some(nonnull(value).implies(&instance.and(&object))))
}

/// The width of a product's operand as the validator builds them: a
/// 64-bit word, or one extended (the exact product of `int_mul_ovf`).
fn bit_width(term: &Term) -> u32 {
    match term {
        Term::Bv { width, .. } => *width,
        Term::App(Fun::SignExtend(k) | Fun::ZeroExtend(k), args) => k + bit_width(&args[0]),
        _ => 64,
    }
}

/// The name of the class `new_with_vtable` of a size descr makes: the
/// descr's `vtable`, or (a size descr that does not name its class) a
/// class of its own, named by the descr.
pub(crate) fn class_of_size(descr: Option<&Descr>) -> String {
    descr.map_or_else(String::new, |d| d.class_name().to_string())
}

/// The identity of the object a `ConstPtr(name)` names: the namespace's
/// `object=` (two names may share one), else the name.
pub(crate) fn constant_identity<'n>(namespace: Option<&'n Namespace>, name: &'n str) -> &'n str {
    match namespace.and_then(|ns| ns.constant(name)) {
        Some(NamedConst::Ptr(info)) => &info.object,
        _ => name,
    }
}

/// What an object is: an instance (fields, a class), an array (items, a
/// length), or a string (of bytes or of unicode characters). An object is
/// one of them, so an op that treats it as another is undefined, and the
/// solver may not alias an array with an instance (which no heap, and no
/// replay, has).
#[derive(Clone, Copy)]
pub(crate) enum ObjKind {
    Instance = 1,
    Array = 2,
    Str = 3,
    Unicode = 4,
}

/// `obj` is an object of this kind.
pub(crate) fn is_kind(
    world: &mut World,
    solver: &mut Solver,
    obj: &Term,
    kind: ObjKind,
) -> Result<Term, SolverError> {
    let fun = world.function(solver, "kind", 1)?;
    Ok(Term::apply(&fun, std::slice::from_ref(obj)).eq(&Term::word(kind as i64)))
}

/// `obj` is not null and of this kind.
/// An object's GC type id: an unknown of the object, which never
/// changes.
pub(crate) fn gc_type(
    world: &mut World,
    solver: &mut Solver,
    obj: &Term,
) -> Result<Term, SolverError> {
    let fun = world.function(solver, "gc_type", 1)?;
    Ok(Term::apply(&fun, std::slice::from_ref(obj)))
}

/// An item access through a GC array descr is defined on arrays of that
/// descr's GC type only (`type_id`).
fn array_type(
    world: &mut World,
    solver: &mut Solver,
    obj: &Term,
    descr: Option<&Descr>,
) -> Result<Term, SolverError> {
    match descr {
        Some(d) if matches!(&d.kind, DescrKind::Array(a) if a.gc != Some(false)) => {
            Ok(gc_type(world, solver, obj)?.eq(&type_id(world, solver, &d.text)?))
        }
        _ => Ok(Term::Bool(true)),
    }
}

/// The GC type id of the objects of a size or array descr: the
/// namespace's type id constant of it, else an unknown of the descr.
pub(crate) fn type_id(
    world: &mut World,
    solver: &mut Solver,
    descr: &str,
) -> Result<Term, SolverError> {
    let namespace = world.namespace.clone();
    let name = match namespace.as_deref().and_then(|ns| ns.type_id_of(descr)) {
        Some(name) => name.to_string(),
        None => format!("typeid of {descr}"),
    };
    world.named_int(solver, &name)
}

/// What an allocation makes is of its descr's GC type.
fn of_type(
    world: &mut World,
    solver: &mut Solver,
    obj: &Term,
    descr: Option<&Descr>,
) -> Result<Term, SolverError> {
    match descr {
        Some(d) => Ok(gc_type(world, solver, obj)?.eq(&type_id(world, solver, &d.text)?)),
        None => Ok(Term::Bool(true)),
    }
}

/// Whether an object is an instance of a class (PyPy's `guard_is_object`):
/// an unknown of the object, true of what `new_with_vtable` makes and of
/// what has a field of such a struct.
fn is_object(world: &mut World, solver: &mut Solver, obj: &Term) -> Result<Term, SolverError> {
    let fun = world.function(solver, "is_object", 1)?;
    Ok(nonnull(&Term::apply(&fun, std::slice::from_ref(obj))))
}

/// When a field access is defined: on an instance, which is an object
/// where the namespace says the field's struct starts with a class.
fn field_owner(
    world: &mut World,
    solver: &mut Solver,
    obj: &Term,
    descr: Option<&Descr>,
) -> Result<Term, SolverError> {
    let instance = nonnull_of_kind(world, solver, obj, ObjKind::Instance)?;
    let owner = match descr.map(|d| &d.kind) {
        Some(DescrKind::Field(field)) => field.owner.as_deref(),
        _ => None,
    };
    let namespace = world.namespace.clone();
    let owner = owner.and_then(|name| namespace.as_deref()?.descr(name));
    match owner.map(|d| &d.kind) {
        Some(DescrKind::Size(size)) if size.is_object == Some(true) => {
            Ok(instance.and(&is_object(world, solver, obj)?))
        }
        _ => Ok(instance),
    }
}

/// `obj` is a struct: not null, and an instance (not an array or a
/// string), so that a field of it may be read or written.
pub(crate) fn a_struct(
    world: &mut World,
    solver: &mut Solver,
    obj: &Term,
) -> Result<Term, SolverError> {
    nonnull_of_kind(world, solver, obj, ObjKind::Instance)
}

fn nonnull_of_kind(
    world: &mut World,
    solver: &mut Solver,
    obj: &Term,
    kind: ObjKind,
) -> Result<Term, SolverError> {
    Ok(nonnull(obj).and(&is_kind(world, solver, obj, kind)?))
}

/// The kind of object an op on items or characters works on.
fn kind_of_op(opcode: Opcode) -> ObjKind {
    use Opcode::*;
    match opcode {
        Strlen | Strgetitem | Strsetitem | Newstr | Copystrcontent => ObjKind::Str,
        Unicodelen | Unicodegetitem | Unicodesetitem | Newunicode | Copyunicodecontent => {
            ObjKind::Unicode
        }
        _ => ObjKind::Array,
    }
}

/// Where an op's object keeps its length.
fn length_cell(opcode: Opcode) -> Cell {
    match opcode {
        Opcode::Strlen | Opcode::Strgetitem | Opcode::Strsetitem | Opcode::Copystrcontent => {
            Cell::StrLength(false)
        }
        Opcode::Unicodelen
        | Opcode::Unicodegetitem
        | Opcode::Unicodesetitem
        | Opcode::Copyunicodecontent => Cell::StrLength(true),
        _ => Cell::Length,
    }
}

/// `(src, dst, src_start, dst_start, length)`, strings' characters or
/// arrays' items (`cell`, their lengths in `length`, of `kind`): dst's
/// span takes src's contents. Defined where both spans lie inside their
/// objects.
pub(crate) fn copy_span(
    world: &mut World,
    memory: &mut Memory,
    solver: &mut Solver,
    (cell, length, kind): (Cell, Cell, ObjKind),
    args: &[Term],
) -> Result<Term, SolverError> {
    let len = &args[4];
    let mut spans = vec![Term::word(0).bv(Fun::BvSle, len)];
    for (obj, start) in [(&args[0], &args[2]), (&args[1], &args[3])] {
        let n = memory.length_of(world, solver, &length, obj)?;
        spans.push(nonnull_of_kind(world, solver, obj, kind)?);
        spans.push(Term::word(0).bv(Fun::BvSle, start));
        spans.push(start.bv(Fun::BvSle, &n));
        spans.push(len.bv(Fun::BvSle, &n.bv(Fun::BvSub, start)));
    }
    memory.copy(world, solver, &cell, args)?;
    Ok(Term::and_all(spans))
}

/// `obj` is not null and `index` is within its length (interior fields
/// and items alike).
fn in_bounds(
    world: &mut World,
    memory: &mut Memory,
    solver: &mut Solver,
    opcode: Opcode,
    obj: &Term,
    index: &Term,
) -> Result<Term, SolverError> {
    let n = memory.length_of(world, solver, &length_cell(opcode), obj)?;
    let above = Term::word(0).bv(Fun::BvSle, index);
    let below = index.bv(Fun::BvSlt, &n);
    let object = nonnull_of_kind(world, solver, obj, kind_of_op(opcode))?;
    Ok(Term::and_all([object, above, below]))
}

/// The address a raw array item or raw load/store names: the base plus
/// the index times the item size, or plus the byte offset.
fn raw_address(opcode: Opcode, args: &[Term], descr: Option<&Descr>) -> Term {
    let size = match (opcode, descr.map(|d| &d.kind)) {
        (Opcode::RawLoadI | Opcode::RawLoadF | Opcode::RawStore, _) => 1,
        (_, Some(DescrKind::Array(array))) => array.item_size,
        _ => 1,
    };
    let offset = match size {
        1 => args[1].clone(),
        _ => args[1].bv(Fun::BvMul, &Term::word(size)),
    };
    args[0].bv(Fun::BvAdd, &offset)
}

/// The one NaN the validator's floats have (a quiet NaN).
pub(crate) const NAN: i64 = 0x7ff8_0000_0000_0000;

/// Whether a word is a NaN's bits: all exponent bits set, and some
/// fraction bit.
fn is_nan(word: &Term) -> Term {
    let magnitude = word.bv(Fun::BvAnd, &Term::word(i64::MAX));
    Term::word(0x7ff0_0000_0000_0000).bv(Fun::BvUlt, &magnitude)
}

/// A float's word, if a NaN, is `NAN`. The validator takes floats as IEEE
/// values, not bit patterns: PyPy's optimizer does (it rewrites `x * 1.0`
/// to `x` and `x * y` to `y * x`, which keep a NaN's value but not its
/// payload), so a proof holds up to the payload and sign of NaNs. Every
/// float an op computes has one NaN, and this is assumed of every other
/// float (inputs, reads, call results).
pub(crate) fn one_nan(word: &Term) -> Term {
    is_nan(word).implies(&word.eq(&Term::word(NAN)))
}

/// A word's bits as an IEEE double.
fn fp(word: &Term) -> Term {
    Term::app(Fun::FpOfBits, std::slice::from_ref(word))
}

/// What the word `v` that a float op gives must be: its IEEE result's
/// bits, `NAN` for a NaN. The conversions to and from single floats have
/// none here.
fn float_meaning(opcode: Opcode, args: &[Term], v: &Term) -> Option<Term> {
    use Opcode::*;
    let ieee = |fun: Fun| Term::app(fun, &[fp(&args[0]), fp(&args[1])]);
    let result = match opcode {
        FloatAdd => ieee(Fun::FpAdd),
        FloatSub => ieee(Fun::FpSub),
        FloatMul => ieee(Fun::FpMul),
        FloatTruediv => ieee(Fun::FpDiv),
        CastIntToFloat => Term::app(Fun::FpOfSigned, &args[..1]),
        // Unspecified where it does not fit, as in the interpreter (which
        // refuses to run such a cast).
        CastFloatToInt => return Some(v.eq(&Term::app(Fun::FpToSigned, &[fp(&args[0])]))),
        _ => return None,
    };
    let nan = Term::app(Fun::FpIsNan, std::slice::from_ref(&result));
    Some(Term::ite(&nan, &v.eq(&Term::word(NAN)), &fp(v).eq(&result)))
}

/// An exception state: the class (0 where none is pending) and the
/// value.
#[derive(Clone, Debug)]
pub(crate) struct Pending {
    class: Term,
    value: Term,
    /// Whether one is pending, for one `restore_exception` made: where
    /// the class or the value is not 0 (the interpreter's meaning).
    restored: Option<Term>,
}

impl Pending {
    /// `guard_no_exception` passes.
    fn none_pending(&self) -> Term {
        match &self.restored {
            Some(pending) => pending.not(),
            None => self.class.eq(&Term::word(0)),
        }
    }

    /// `guard_exception(class)` passes.
    fn of_class(&self, class: &Term) -> Term {
        let same = self.class.eq(class);
        match &self.restored {
            Some(pending) => pending.and(&same),
            None => same,
        }
    }
}
