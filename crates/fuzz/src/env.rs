//! What calls do in the fuzzer's runs (`FuzzEnv`): what their effect
//! info allows, to the objects they can reach, the same in every run
//! that makes the same calls.
//!
//! A call that is not elidable is the k-th such call of its run. It
//! returns a hash of k, the function, its integer arguments and the int
//! and float fields its effect info lets it read, and writes, into every
//! int or float field and int array item its effect info lets it write,
//! a hash of k and the field, but only in objects it can reach: the
//! objects the trace was given, every object passed to a call or an
//! `escape_*` so far, and what those hold (through the fields it may
//! read, for its reads).
//! The helpers PyPy knows (array copy, string helpers, Python division)
//! do what they do. An object the trace allocated and kept to itself is
//! out of its reach, which is what lets an
//! optimizer keep it virtual across the call. An elidable call returns a
//! hash of its function and integer arguments, and writes nothing. A
//! call whose effect info lets it raise raises where its hash is a
//! multiple of five (the same in both runs), so that the guards on its
//! exception are tested too.
//!
//! The namespace's constant box is an object every call can reach; its
//! fields start as the namespace gives them.
//!
//! Object identities differ between the runs of a trace and of its
//! optimized version (one allocates what the other keeps virtual), so
//! nothing here depends on them.

use std::collections::BTreeSet;

use traceopt_interp::{
    default_call, default_escape, known_helper, stable_address, stable_hash, Call, CallOutcome,
    Env, Exception, Fault, Heap, HeapObject, ObjId, Val,
};
use traceopt_ir::{CallDescr, HeapSet, Type};

use crate::heapgen::{CONST_BOX, FLOAT_FIELDS, INT_ARRAY, INT_FIELDS};

pub struct FuzzEnv {
    /// Objects of the heap the run was given (ids below this).
    shared: u32,
    /// Objects handed to calls or escapes.
    escaped: Vec<ObjId>,
    /// Calls that are not elidable, so far.
    calls: u64,
    /// The namespace's constant box, once the run has met it.
    constant: Option<ObjId>,
}

impl FuzzEnv {
    pub fn new(shared: usize) -> FuzzEnv {
        FuzzEnv {
            shared: shared as u32,
            escaped: Vec::new(),
            calls: 0,
            constant: None,
        }
    }

    fn escape_all(&mut self, args: &[Val]) {
        self.escaped.extend(args.iter().filter_map(|v| match v {
            Val::Ref(Some(id)) => Some(*id),
            _ => None,
        }));
    }

    /// The objects a call that may read `reads` can reach now: through
    /// the reference fields it may read.
    fn reachable(&self, heap: &Heap, reads: &HeapSet) -> BTreeSet<u32> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<ObjId> = (0..self.shared).map(ObjId).collect();
        stack.extend(&self.escaped);
        // A constant object is there for every call to find.
        stack.extend(self.constant);
        while let Some(id) = stack.pop() {
            if !seen.insert(id.0) {
                continue;
            }
            let held: Vec<&Val> = match heap.get(id) {
                Some(HeapObject::Object { fields, .. }) => (fields.iter())
                    .filter(|(name, _)| reads.may_touch(name))
                    .map(|(_, v)| v)
                    .collect(),
                Some(HeapObject::Array { items, .. }) => items.iter().collect(),
                _ => Vec::new(),
            };
            stack.extend(held.into_iter().filter_map(|v| match v {
                Val::Ref(Some(o)) => Some(*o),
                _ => None,
            }));
        }
        seen
    }
}

/// A field a call may write: its name, the address of the class that
/// has it, and its integer cell (bytes, signed), or `None` for a float.
type Written<'a> = (&'a str, i64, Option<(u32, bool)>);

fn hash_of(parts: &[i64]) -> i64 {
    let bytes: Vec<u8> = parts.iter().flat_map(|p| p.to_le_bytes()).collect();
    stable_hash(&bytes) as i64
}

impl Env for FuzzEnv {
    fn call(&mut self, heap: &mut Heap, call: &Call<'_>) -> Result<CallOutcome, Fault> {
        // The helpers PyPy knows, and Python's division, do what they do.
        if let Some(outcome) = known_helper(heap, call) {
            return outcome;
        }
        let info = call.descr.and_then(|d| d.as_call());
        if info.and_then(|c| c.oopspec).is_some() {
            return default_call(call);
        }
        let elidable = info
            .and_then(|c| c.effect)
            .is_some_and(|e| e.ignores_writes());
        let func = match call.func {
            Some(Val::Int(f)) => f,
            _ => 0,
        };
        let ints = call.args.iter().filter_map(|v| match v {
            Val::Int(i) => Some(*i),
            _ => None,
        });
        let mut parts = vec![func];
        // The constant box is there for every call, whether the run has
        // met it or not (an optimized trace may not read it).
        self.const_ptr(CONST_BOX.0, heap);
        if !elidable {
            self.calls += 1;
            parts.push(self.calls as i64);
            self.escape_all(call.args);
            // What it reads of what it reaches decides its result.
            let reads = info.map_or(HeapSet::All, |c| c.reads.clone());
            parts.push(self.read_sum(heap, &reads));
            let writes = info.map_or(HeapSet::All, |c| c.writes.clone());
            self.write(heap, &reads, &writes);
        }
        parts.extend(ints);
        let hash = hash_of(&parts);
        // A call whose effect info lets it raise does so now and then (a
        // fifth of the time, as its hash says): its `guard_no_exception`
        // must then fail, in both traces alike.
        let may_raise = info.map_or(true, CallDescr::can_raise);
        if may_raise && hash.rem_euclid(5) == 0 {
            return Ok(CallOutcome::Raised(Exception {
                class: 1,
                value: None,
            }));
        }
        let result = match call.result {
            Type::Int => Val::Int(hash),
            other => Val::zero(other),
        };
        Ok(CallOutcome::Returned(result))
    }

    /// The namespace's constant box: of its class, its fields as the
    /// namespace gives them; the same object each time in a run.
    fn const_ptr(&mut self, name: &str, heap: &mut Heap) -> ObjId {
        if name != CONST_BOX.0 {
            return heap.alloc_object(0);
        }
        if let Some(id) = self.constant {
            return id;
        }
        let id = heap.alloc_object(stable_address("box_vtable"));
        for (field, value) in CONST_BOX.1 {
            heap.set_field(id, field, Val::Int(value));
        }
        self.constant = Some(id);
        id
    }

    fn escape(&mut self, heap: &mut Heap, op_index: usize, result: Type, args: &[Val]) -> Val {
        let _ = (heap, op_index);
        self.escape_all(args);
        default_escape(result, args)
    }
}

impl FuzzEnv {
    /// A sum (so that no order of objects matters) of a hash of every
    /// int or float field `reads` names, with its value (a float's
    /// bits), in the objects in reach.
    fn read_sum(&self, heap: &Heap, reads: &HeapSet) -> i64 {
        let mut sum = 0i64;
        for id in self.reachable(heap, reads) {
            if let Some(HeapObject::Object { fields, .. }) = heap.get(ObjId(id)) {
                for (name, value) in fields {
                    // A field never written reads 0, whether the run
                    // has it in its map (once read) or not.
                    let v = match value {
                        Val::Int(v) => *v,
                        Val::Float(x) => x.to_bits() as i64,
                        Val::Ref(_) => 0,
                    };
                    if v != 0 && reads.may_touch(name) {
                        let h = hash_of(&[stable_hash(name.as_bytes()) as i64, v]);
                        sum = sum.wrapping_add(h);
                    }
                }
            }
        }
        sum
    }

    /// The k-th call's writes: every int field or int array item that
    /// `writes` names of an object in reach (through what `reads` names:
    /// a call finds an object by reading a reference to it).
    fn write(&self, heap: &mut Heap, reads: &HeapSet, writes: &HeapSet) {
        let k = self.calls as i64;
        let ints =
            INT_FIELDS.map(|(field, class, bytes, signed)| (field, class, Some((bytes, signed))));
        let floats = FLOAT_FIELDS.map(|(field, class)| (field, class, None));
        let fields: Vec<Written> = (ints.iter().chain(&floats))
            .filter(|(field, _, _)| writes.may_touch(field))
            .map(|&(field, class, cell)| (field, stable_address(class), cell))
            .collect();
        let arrays = writes.may_touch(INT_ARRAY);
        for id in self.reachable(heap, reads) {
            match heap.get_mut(ObjId(id)) {
                Some(HeapObject::Object {
                    class,
                    fields: held,
                }) => {
                    for &(field, owner, cell) in &fields {
                        if owner == *class {
                            let value = hash_of(&[k, stable_hash(field.as_bytes()) as i64]);
                            let value = match cell {
                                // What fits the cell, as a store keeps.
                                Some(cell) => Val::Int(value).as_stored(Some(cell)),
                                // A float of a few bits, exact in binary.
                                None => Val::Float((value % 64) as f64 / 4.0),
                            };
                            held.insert(field.into(), value);
                        }
                    }
                }
                Some(HeapObject::Array { items, .. }) if arrays => {
                    for (i, item) in items.iter_mut().enumerate() {
                        *item = Val::Int(hash_of(&[k, i as i64]));
                    }
                }
                _ => {}
            }
        }
    }
}
