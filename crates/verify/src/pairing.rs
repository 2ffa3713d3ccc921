//! Which object AFTER allocates stands for which object BEFORE allocates.
//!
//! The validator names fresh objects `base + slot`. Any injective naming
//! is a legitimate run of the allocator, so a proof under one pairing of
//! the two traces' allocations proves the traces equal up to a renaming
//! of fresh objects; a bad pairing can only make a proof fail (and its
//! counterexample then does not replay, since the interpreter compares up
//! to any renaming). The pairing is therefore a heuristic, chosen to be
//! the one an optimizer means:
//!
//! 1. an allocation of AFTER whose provenance names one of BEFORE;
//! 2. allocations in the same place of the traces' roots: the final op's
//!    arguments, the k-th escape's, the k-th call's of each function;
//! 3. allocations last stored into the same place (the same field or
//!    constant-index item of the same input, constant or paired object),
//!    repeated while it pairs more;
//! 4. the rest in order, each with the first unpaired allocation of BEFORE
//!    of the same op and descr.
//!
//! BEFORE's k-th allocation takes slot k (from 1); AFTER's take their
//! partner's slot, or a slot past all of BEFORE's. PyPy's optimizer drops
//! and delays allocations, so pairing by order alone would compare the
//! wrong objects.

use std::collections::HashMap;

use traceopt_ir::{Arg, Const, Flags, Op, Opcode, Trace};

use crate::heap::class_of_size;
use crate::reach::allocates;

/// What fresh object `op` makes (one slot each), as a kind that pairs
/// only with its own: the op and descr, or for a string helper the
/// `newstr` it stands for.
fn fresh_object_kind(trace: &Trace, op: &Op) -> Option<String> {
    if let Some(helper) = crate::reach::helper(trace, op).filter(|h| h.allocates()) {
        return Some(helper.kind().to_string());
    }
    let descr = op.descr.map(|d| trace.descr(d));
    match op.opcode {
        // Instances pair by class: a virtual ref with the object of its
        // class that an optimizer builds in its place.
        Opcode::NewWithVtable => Some(format!("instance of {}", class_of_size(descr))),
        Opcode::VirtualRef => Some(format!("instance of {}", trace.vref_layout().class)),
        _ if allocates(trace, op) => {
            Some(format!("{} {}", op.opcode, descr.map_or("", |d| &*d.text)))
        }
        _ => None,
    }
}

/// How many fresh objects `trace` allocates.
fn allocation_count(trace: &Trace) -> u32 {
    (trace.ops.iter())
        .filter(|op| fresh_object_kind(trace, op).is_some())
        .count() as u32
}

/// One trace's allocations: for each value id that an allocation defines,
/// its index among the trace's allocations.
struct Allocations {
    /// (op index, what it is: opcode and descr text), in order.
    ops: Vec<(usize, String)>,
    by_value: HashMap<u32, usize>,
}

impl Allocations {
    fn of(trace: &Trace) -> Allocations {
        let mut ops = Vec::new();
        let mut by_value = HashMap::new();
        for (i, op) in trace.ops.iter().enumerate() {
            if let Some(kind) = fresh_object_kind(trace, op) {
                by_value.insert((trace.inputs.len() + i) as u32, ops.len());
                ops.push((i, kind));
            }
        }
        Allocations { ops, by_value }
    }

    /// The allocation `arg` is, if it is one.
    fn of_arg(&self, arg: &Arg) -> Option<usize> {
        match arg {
            Arg::Value(v) => self.by_value.get(&v.0).copied(),
            Arg::Const(_) => None,
        }
    }
}

/// The fresh objects' slots of a pair of traces.
pub(crate) struct Slots {
    /// The slot of each allocation of AFTER, in order (BEFORE's k-th takes
    /// slot k + 1).
    pub after: Vec<u32>,
    /// How many slots there are, and those both traces fill.
    pub count: u32,
    pub paired: Vec<u32>,
    /// For each op of AFTER, the op of BEFORE whose object it is paired
    /// with, if it allocates one that is.
    pub partners: Vec<Option<usize>>,
}

impl Slots {
    /// `provenance[i]`, where given, is the BEFORE op that AFTER's op `i`
    /// stands for.
    pub fn of(before: &Trace, after: &Trace, provenance: Option<&[Option<usize>]>) -> Slots {
        let (b, a) = (Allocations::of(before), Allocations::of(after));
        let slots = after_slots((before, &b), (after, &a), provenance);
        let allocated = b.ops.len() as u32;
        let mut partners = vec![None; after.ops.len()];
        for (&(op, _), &slot) in a.ops.iter().zip(&slots) {
            partners[op] = (b.ops.get(slot as usize - 1)).map(|&(partner, _)| partner);
        }
        Slots {
            paired: slots.iter().copied().filter(|&s| s <= allocated).collect(),
            count: slots.iter().copied().fold(allocated, u32::max),
            after: slots,
            partners,
        }
    }

    /// One trace alone: each of its objects is its own.
    pub fn alone(trace: &Trace) -> Slots {
        let count = allocation_count(trace);
        Slots {
            after: Vec::new(),
            count,
            paired: (1..=count).collect(),
            partners: Vec::new(),
        }
    }
}

/// The slot of each allocation of AFTER, in order (BEFORE's k-th takes
/// slot k + 1).
fn after_slots(
    (before, b): (&Trace, &Allocations),
    (after, a): (&Trace, &Allocations),
    provenance: Option<&[Option<usize>]>,
) -> Vec<u32> {
    let mut pairs = Pairs {
        of_after: vec![None; a.ops.len()],
        taken: vec![false; b.ops.len()],
        b,
        a,
    };
    // 1. Provenance.
    for (j, &(op, _)) in a.ops.iter().enumerate() {
        let origin = provenance.and_then(|p| p.get(op).copied().flatten());
        if let Some(i) = origin.and_then(|o| b.ops.iter().position(|&(bo, _)| bo == o)) {
            pairs.pair(i, j);
        }
    }
    // 2. Roots, position by position.
    let after_roots = roots(after);
    for (key, x) in roots(before) {
        let Some(y) = after_roots.get(&key) else {
            continue;
        };
        for (p, q) in x.iter().zip(y) {
            if let (Some(i), Some(j)) = (b.of_arg(p), a.of_arg(q)) {
                pairs.pair(i, j);
            }
        }
    }
    // 3. Places, while that pairs more.
    loop {
        let (sb, sa) = (
            stores(before, b, None),
            stores(after, a, Some(&pairs.of_after)),
        );
        let mut more = false;
        for (place, p) in &sb {
            if let Some(q) = sa.get(place) {
                if let (Some(i), Some(j)) = (b.of_arg(p), a.of_arg(q)) {
                    more |= pairs.pair(i, j);
                }
            }
        }
        if !more {
            break;
        }
    }
    // 4. In order, by kind.
    for j in 0..a.ops.len() {
        if pairs.of_after[j].is_none() {
            if let Some(i) = (0..b.ops.len()).find(|&i| !pairs.taken[i] && b.ops[i].1 == a.ops[j].1)
            {
                pairs.pair(i, j);
            }
        }
    }
    let mut next = b.ops.len() as u32;
    (pairs.of_after.iter())
        .map(|partner| match partner {
            Some(i) => *i as u32 + 1,
            None => {
                next += 1;
                next
            }
        })
        .collect()
}

struct Pairs<'t> {
    of_after: Vec<Option<usize>>,
    taken: Vec<bool>,
    b: &'t Allocations,
    a: &'t Allocations,
}

impl Pairs<'_> {
    /// Pairs BEFORE's `i` with AFTER's `j` if both are free and of the
    /// same kind.
    fn pair(&mut self, i: usize, j: usize) -> bool {
        let free = !self.taken[i] && self.of_after[j].is_none();
        if free && self.b.ops[i].1 == self.a.ops[j].1 {
            self.taken[i] = true;
            self.of_after[j] = Some(i);
            return true;
        }
        false
    }
}

/// The arguments through which objects leave a trace, by a key that
/// names the same group in both traces: the final op's, the k-th
/// escape's, the k-th call of each function.
fn roots(trace: &Trace) -> HashMap<String, Vec<Arg>> {
    let mut groups = HashMap::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for op in &trace.ops {
        let kind = if op.opcode.is_final() {
            "end".to_string()
        } else if op.opcode.name().starts_with("escape_") {
            "escape".to_string()
        } else if op.opcode.has(Flags::CALL) {
            // The function, where the first argument names it.
            let mut text = format!("{} ", op.opcode);
            if let Some(Arg::Const(c)) = op.args.first() {
                traceopt_ir::print::write_const(&mut text, trace.constant(*c));
            }
            text
        } else {
            continue;
        };
        let k = seen.entry(kind.clone()).or_default();
        groups.insert(format!("{kind} #{k}"), op.args.to_vec());
        *k += 1;
    }
    groups
}

/// A place a store writes, named alike in both traces: the object (an
/// input by position, a constant by its text, or an allocation by its
/// BEFORE index), the descr, and a constant index.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Place {
    object: String,
    descr: String,
    index: Option<i64>,
}

/// The value last stored at each place a trace writes. For AFTER,
/// `paired` renames its allocations to their BEFORE partners; an unpaired
/// one names no comparable place.
fn stores(
    trace: &Trace,
    allocations: &Allocations,
    paired: Option<&[Option<usize>]>,
) -> HashMap<Place, Arg> {
    let mut last = HashMap::new();
    for op in &trace.ops {
        let (value_at, index_at) = match op.opcode {
            Opcode::SetfieldGc => (1, None),
            Opcode::SetarrayitemGc | Opcode::SetinteriorfieldGc => (2, Some(1)),
            _ => continue,
        };
        let object = match &op.args[0] {
            Arg::Value(v) if (v.0 as usize) < trace.inputs.len() => format!("input {}", v.0),
            Arg::Const(c) => {
                let mut text = String::new();
                traceopt_ir::print::write_const(&mut text, trace.constant(*c));
                text
            }
            arg => match allocations.of_arg(arg) {
                Some(k) => match paired {
                    None => format!("new {k}"),
                    Some(p) => match p[k] {
                        Some(i) => format!("new {i}"),
                        None => continue,
                    },
                },
                None => continue,
            },
        };
        let index = match index_at.map(|k| &op.args[k]) {
            None => None,
            Some(Arg::Const(c)) => match trace.constant(*c) {
                Const::Int(i) => Some(*i),
                _ => continue,
            },
            Some(Arg::Value(_)) => continue,
        };
        let descr = op
            .descr
            .map_or(String::new(), |d| trace.descr(d).text.to_string());
        last.insert(
            Place {
                object,
                descr,
                index,
            },
            op.args[value_at],
        );
    }
    last
}
