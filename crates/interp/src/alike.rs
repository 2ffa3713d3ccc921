//! Do two runs that started from the same heap end alike?
//!
//! Values compare as `Val::same` does, except references: an object that
//! existed before the runs (its id is below `shared`) is the same object in
//! both heaps, and must be met as itself; objects the runs allocated are
//! compared up to a renaming, which is built as they are met (the k-th
//! fresh object one run reaches must correspond to the same one in the
//! other, every time), and their contents compared in turn, so shared and
//! cyclic structures compare right. At the end every object that existed
//! before must have the same contents in both heaps: a field one run wrote
//! and the other did not is a difference. A field never written or read
//! holds the zero of its type (what a fresh object and `DefaultEnv` give).
//!
//! A difference is described by the path that reaches it, as in
//! `output 1 .next[2]`: `BEFORE` and `AFTER` name the two runs.

use std::collections::{BTreeMap, HashMap};

use crate::heap::{Heap, HeapObject};
use crate::value::{ObjId, Val};
use crate::{Outcome, Run};
use traceopt_ir::Type;

/// The comparison of two runs' values and heaps.
pub struct Alike<'h> {
    before: &'h Heap,
    after: &'h Heap,
    shared: usize,
    renaming: HashMap<ObjId, ObjId>,
    inverse: HashMap<ObjId, ObjId>,
    /// Object pairs whose contents are still to compare, with their path.
    todo: Vec<(ObjId, ObjId, String)>,
}

impl<'h> Alike<'h> {
    /// Runs that started from a heap of `shared` objects.
    pub fn new(before: &'h Heap, after: &'h Heap, shared: usize) -> Alike<'h> {
        Alike {
            before,
            after,
            shared,
            renaming: HashMap::new(),
            inverse: HashMap::new(),
            todo: Vec::new(),
        }
    }

    /// Compares one value of each run; `what` names it in a difference.
    pub fn value(&mut self, what: &str, x: Val, y: Val) -> Result<(), String> {
        let (Val::Ref(x), Val::Ref(y)) = (x, y) else {
            return if x.same(y) {
                Ok(())
            } else {
                Err(format!("{what} differs: BEFORE {x}, AFTER {y}"))
            };
        };
        match (x, y) {
            (None, None) => Ok(()),
            (Some(a), Some(b)) => self.objects(what, a, b),
            _ => Err(format!(
                "{what} differs: BEFORE {}, AFTER {}",
                self.show(x),
                self.show(y)
            )),
        }
    }

    /// Compares what is left: the contents of every object met, and of
    /// every object that existed before the runs.
    pub fn finish(mut self) -> Result<(), String> {
        for id in 0..self.shared as u32 {
            self.todo.push((ObjId(id), ObjId(id), format!("obj{id}")));
        }
        self.drain()
    }

    fn objects(&mut self, what: &str, a: ObjId, b: ObjId) -> Result<(), String> {
        let old = |id: ObjId| (id.0 as usize) < self.shared;
        let same = match (old(a), old(b)) {
            (true, true) => a == b,
            (false, false) => match (self.renaming.get(&a), self.inverse.get(&b)) {
                (None, None) => {
                    self.renaming.insert(a, b);
                    self.inverse.insert(b, a);
                    self.todo.push((a, b, what.to_string()));
                    true
                }
                (Some(&b2), Some(_)) => b2 == b,
                _ => false,
            },
            _ => false,
        };
        if same {
            self.drain()
        } else {
            Err(format!(
                "{what} differs: BEFORE {}, AFTER {}",
                self.show(Some(a)),
                self.show(Some(b))
            ))
        }
    }

    /// Compares the contents of the queued pairs (and what they reach).
    fn drain(&mut self) -> Result<(), String> {
        while let Some((a, b, path)) = self.todo.pop() {
            let (x, y) = (self.before.get(a), self.after.get(b));
            let (Some(x), Some(y)) = (x, y) else {
                return Err(format!("{path}: not in the heap"));
            };
            match (x, y) {
                (
                    HeapObject::Object {
                        class: cx,
                        fields: fx,
                    },
                    HeapObject::Object {
                        class: cy,
                        fields: fy,
                    },
                ) => {
                    if cx != cy {
                        return Err(format!("{path} has class {cx} in BEFORE, {cy} in AFTER"));
                    }
                    for (name, vx, vy) in pairs(fx, fy) {
                        self.value(&format!("{path}.{name}"), vx, vy)?;
                    }
                }
                (
                    HeapObject::Array {
                        items: ix,
                        interior: nx,
                    },
                    HeapObject::Array {
                        items: iy,
                        interior: ny,
                    },
                ) => {
                    if ix.len() != iy.len() {
                        return Err(format!(
                            "{path} has {} items in BEFORE, {} in AFTER",
                            ix.len(),
                            iy.len()
                        ));
                    }
                    for (k, (&vx, &vy)) in ix.iter().zip(iy).enumerate() {
                        self.value(&format!("{path}[{k}]"), vx, vy)?;
                    }
                    for ((k, name), vx, vy) in pairs(nx, ny) {
                        self.value(&format!("{path}[{k}].{name}"), vx, vy)?;
                    }
                }
                (HeapObject::Str(sx), HeapObject::Str(sy)) if sx == sy => {}
                (HeapObject::Unicode(ux), HeapObject::Unicode(uy)) if ux == uy => {}
                _ => {
                    return Err(format!(
                        "{path} is {} in BEFORE, {} in AFTER",
                        describe(x),
                        describe(y)
                    ))
                }
            }
        }
        Ok(())
    }

    /// `null`, `obj3` (an object from before the runs) or `new obj7`.
    fn show(&self, r: Option<ObjId>) -> String {
        match r {
            None => "null".into(),
            Some(id) if (id.0 as usize) < self.shared => format!("obj{}", id.0),
            Some(id) => format!("new obj{}", id.0),
        }
    }
}

/// How a run ended, in words: `finishes with (1, null)`, `fails
/// guard_true at op 3`, `jumps out with (...)`, `loops with (...)`.
pub fn ending(run: &Run) -> String {
    let show = |vs: &[Val]| vs.iter().map(Val::to_string).collect::<Vec<_>>().join(", ");
    match &run.outcome {
        Outcome::Finished { values } => format!("finishes with ({})", show(values)),
        Outcome::GuardFailed { op_index, .. } => format!("fails the guard at op {op_index}"),
        Outcome::Jumped { values, .. } => format!("jumps out with ({})", show(values)),
        Outcome::IterationLimit { values } => format!("loops with ({})", show(values)),
    }
}

/// Whether two runs from the same heap of `shared` objects end alike:
/// both leave at some guard (their resume data is `same_resume`'s, for
/// guards the caller knows to correspond), or
/// both finish, jump out or loop on, with alike values, and the objects
/// from before alike in the end. The difference if not.
pub fn same_ending(before: &Run, after: &Run, shared: usize) -> Result<(), String> {
    use Outcome::*;
    let (op, values) = match (&before.outcome, &after.outcome) {
        (GuardFailed { .. }, GuardFailed { .. }) => return Ok(()),
        (Finished { values: x }, Finished { values: y }) if x.len() == y.len() => {
            ("finish", x.iter().zip(y))
        }
        (Jumped { values: x, .. }, Jumped { values: y, .. })
        | (IterationLimit { values: x }, IterationLimit { values: y })
            if x.len() == y.len() =>
        {
            ("jump", x.iter().zip(y))
        }
        _ => {
            return Err(format!(
                "BEFORE {}; AFTER {}",
                ending(before),
                ending(after)
            ))
        }
    };
    let mut alike = Alike::new(&before.heap, &after.heap, shared);
    for (k, (&x, &y)) in values.enumerate() {
        alike
            .value(&format!("{op} argument {}", k + 1), x, y)
            .map_err(|e| format!("{e} (BEFORE {}; AFTER {})", ending(before), ending(after)))?;
    }
    alike.finish()
}

/// Whether two runs that failed corresponding guards resume alike: the
/// fail arguments both list (a hole on either side is not compared; a
/// materialized virtual compares by contents, as a fresh object) and the
/// objects from before (lists of different lengths are compared where
/// both have an entry, as the validator compares them). The difference
/// if not alike.
pub fn same_resume(before: &Run, after: &Run, shared: usize) -> Result<(), String> {
    let (
        Outcome::GuardFailed {
            fail_values: x,
            op_index: bx,
        },
        Outcome::GuardFailed {
            fail_values: y,
            op_index: ay,
        },
    ) = (&before.outcome, &after.outcome)
    else {
        return Ok(());
    };
    // The fail arguments both list (a test's input often lists none),
    // then the heap.
    let mut alike = Alike::new(&before.heap, &after.heap, shared);
    let context = |e: String| format!("{e} (BEFORE fails the guard at op {bx}, AFTER at op {ay})");
    for (k, (vx, vy)) in x.iter().zip(y).enumerate() {
        if let (Some(vx), Some(vy)) = (vx, vy) {
            alike
                .value(&format!("fail argument {}", k + 1), *vx, *vy)
                .map_err(context)?;
        }
    }
    alike.finish().map_err(context)
}

/// The keys of two maps with their values, a missing one being the zero
/// of the other's type.
fn pairs<'m, K: Ord + Clone>(
    x: &'m BTreeMap<K, Val>,
    y: &'m BTreeMap<K, Val>,
) -> Vec<(K, Val, Val)> {
    let mut keys: Vec<&K> = x.keys().chain(y.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            let (vx, vy) = (x.get(k), y.get(k));
            let zero = |v: Option<&Val>| Val::zero(v.map_or(Type::Int, |v| v.ty()));
            let vx = vx.copied().unwrap_or_else(|| zero(vy));
            let vy = vy.copied().unwrap_or_else(|| zero(Some(&vx)));
            (k.clone(), vx, vy)
        })
        .collect()
}

fn describe(object: &HeapObject) -> String {
    match object {
        HeapObject::Str(s) => format!("the string {:?}", String::from_utf8_lossy(s)),
        HeapObject::Unicode(u) => {
            let text: String = u.iter().filter_map(|&c| char::from_u32(c)).collect();
            format!("the unicode string {text:?}")
        }
        other => other.kind_name().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(heap: &mut Heap, value: i64) -> ObjId {
        let id = heap.alloc_object(1);
        heap.set_field(id, "value", Val::Int(value));
        id
    }

    #[test]
    fn fresh_objects_compare_up_to_renaming() {
        // BEFORE allocates a, b; AFTER allocates them the other way round.
        let (mut x, mut y) = (Heap::new(), Heap::new());
        let (a1, b1) = (node(&mut x, 1), node(&mut x, 2));
        let (b2, a2) = (node(&mut y, 2), node(&mut y, 1));
        let mut alike = Alike::new(&x, &y, 0);
        alike
            .value("out 0", Val::Ref(Some(a1)), Val::Ref(Some(a2)))
            .unwrap();
        alike
            .value("out 1", Val::Ref(Some(b1)), Val::Ref(Some(b2)))
            .unwrap();
        alike.finish().unwrap();
        // The same object twice in one run, two objects in the other.
        let mut alike = Alike::new(&x, &y, 0);
        alike
            .value("out 0", Val::Ref(Some(a1)), Val::Ref(Some(a2)))
            .unwrap();
        let e = alike
            .value("out 1", Val::Ref(Some(a1)), Val::Ref(Some(b2)))
            .unwrap_err();
        assert!(e.contains("out 1 differs"), "{e}");
    }

    #[test]
    fn contents_cycles_and_missing_fields() {
        let (mut x, mut y) = (Heap::new(), Heap::new());
        let (a, b) = (node(&mut x, 1), node(&mut y, 1));
        x.set_field(a, "next", Val::Ref(Some(a)));
        y.set_field(b, "next", Val::Ref(Some(b)));
        // A field only one side has, holding zero, is alike.
        x.set_field(a, "count", Val::Int(0));
        let mut alike = Alike::new(&x, &y, 0);
        alike
            .value("out", Val::Ref(Some(a)), Val::Ref(Some(b)))
            .unwrap();
        alike.finish().unwrap();
        y.set_field(b, "value", Val::Int(2));
        let e = Alike::new(&x, &y, 0)
            .value("out", Val::Ref(Some(a)), Val::Ref(Some(b)))
            .unwrap_err();
        assert_eq!(e, "out.value differs: BEFORE 1, AFTER 2");
    }

    #[test]
    fn objects_from_before_are_themselves_and_must_end_alike() {
        let mut start = Heap::new();
        let old = node(&mut start, 5);
        let (mut x, mut y) = (start.clone(), start.clone());
        let fresh = node(&mut y, 5);
        // An old object is not a fresh copy of it.
        let e = Alike::new(&x, &y, 1)
            .value("out", Val::Ref(Some(old)), Val::Ref(Some(fresh)))
            .unwrap_err();
        assert_eq!(e, "out differs: BEFORE obj0, AFTER new obj1");
        // A write only one run made to an old object is a difference.
        x.set_field(old, "value", Val::Int(6));
        let e = Alike::new(&x, &y, 1).finish().unwrap_err();
        assert_eq!(e, "obj0.value differs: BEFORE 6, AFTER 5");
        y.set_field(old, "value", Val::Int(6));
        Alike::new(&x, &y, 1).finish().unwrap();
    }

    #[test]
    fn arrays_and_strings() {
        let (mut x, mut y) = (Heap::new(), Heap::new());
        let a = x.alloc_array(vec![Val::Int(1), Val::NULL]);
        let b = y.alloc_array(vec![Val::Int(1)]);
        let e = Alike::new(&x, &y, 0)
            .value("out", Val::Ref(Some(a)), Val::Ref(Some(b)))
            .unwrap_err();
        assert_eq!(e, "out has 2 items in BEFORE, 1 in AFTER");
        let s = x.alloc_str(b"ab".to_vec());
        let t = y.alloc_str(b"ac".to_vec());
        let e = Alike::new(&x, &y, 0)
            .value("out", Val::Ref(Some(s)), Val::Ref(Some(t)))
            .unwrap_err();
        assert_eq!(
            e,
            "out is the string \"ab\" in BEFORE, the string \"ac\" in AFTER"
        );
        let e = Alike::new(&x, &y, 0)
            .value("out", Val::Int(1), Val::Float(1.0))
            .unwrap_err();
        assert_eq!(e, "out differs: BEFORE 1, AFTER 1.0");
    }
}
