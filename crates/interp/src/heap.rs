//! The heap: every GC object a run creates or is given.
//!
//! Four kinds of object, no memory layout: an instance (a class number and
//! fields keyed by the text of their descr), an array (items, plus interior
//! fields keyed by item index and descr text for arrays of structs), a byte
//! string and a unicode string (code points). An `ObjId` is an index into
//! the heap; objects are never freed. Every accessor is total: a wrong id or
//! kind gives `None` or `false`, never a panic.
//!
//! Objects have fake but stable addresses (`address_of`) so that
//! `cast_ptr_to_int` is deterministic and `cast_int_to_ptr` can undo it.

use crate::value::{ObjId, Val};
use std::collections::BTreeMap;

/// First fake address; objects are 16 bytes apart from there.
const ADDRESS_BASE: i64 = 0x2000_0000_0000;
const ADDRESS_STEP: i64 = 16;

/// The interior fields of an array of structs, by item index and descr text.
pub type Interior = BTreeMap<(usize, Box<str>), Val>;

#[derive(Clone, Debug, PartialEq)]
pub enum HeapObject {
    /// An instance. `new` gives class 0, `new_with_vtable` the class its
    /// `Env` assigns to the size descr.
    Object {
        class: i64,
        fields: BTreeMap<Box<str>, Val>,
    },
    /// A GC array; `interior` holds the fields of an array of structs.
    Array {
        items: Vec<Val>,
        interior: Interior,
    },
    Str(Vec<u8>),
    Unicode(Vec<u32>),
}

impl HeapObject {
    /// "an instance", "an array", ... for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            HeapObject::Object { .. } => "an instance",
            HeapObject::Array { .. } => "an array",
            HeapObject::Str(_) => "a string",
            HeapObject::Unicode(_) => "a unicode string",
        }
    }

    /// Items, bytes or code points: what the size budget counts.
    fn cells(&self) -> usize {
        match self {
            HeapObject::Object { .. } => 1,
            HeapObject::Array { items, .. } => items.len().max(1),
            HeapObject::Str(s) => s.len().max(1),
            HeapObject::Unicode(s) => s.len().max(1),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Heap {
    objects: Vec<HeapObject>,
    cells: usize,
}

impl Heap {
    pub fn new() -> Heap {
        Heap::default()
    }

    pub fn alloc(&mut self, object: HeapObject) -> ObjId {
        self.cells += object.cells();
        self.objects.push(object);
        ObjId(self.objects.len() as u32 - 1)
    }

    pub fn alloc_object(&mut self, class: i64) -> ObjId {
        self.alloc(HeapObject::Object {
            class,
            fields: BTreeMap::new(),
        })
    }

    pub fn alloc_array(&mut self, items: Vec<Val>) -> ObjId {
        self.alloc(HeapObject::Array {
            items,
            interior: BTreeMap::new(),
        })
    }

    pub fn alloc_str(&mut self, bytes: Vec<u8>) -> ObjId {
        self.alloc(HeapObject::Str(bytes))
    }

    pub fn alloc_unicode(&mut self, chars: Vec<u32>) -> ObjId {
        self.alloc(HeapObject::Unicode(chars))
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Items, bytes and objects allocated so far (the size budget's unit).
    pub fn cells(&self) -> usize {
        self.cells
    }

    pub fn contains(&self, id: ObjId) -> bool {
        (id.0 as usize) < self.objects.len()
    }

    pub fn get(&self, id: ObjId) -> Option<&HeapObject> {
        self.objects.get(id.0 as usize)
    }

    pub fn get_mut(&mut self, id: ObjId) -> Option<&mut HeapObject> {
        self.objects.get_mut(id.0 as usize)
    }

    /// All objects with their ids, in allocation order.
    pub fn iter(&self) -> impl Iterator<Item = (ObjId, &HeapObject)> {
        self.objects
            .iter()
            .enumerate()
            .map(|(i, o)| (ObjId(i as u32), o))
    }

    /// The class of an instance; `None` for other objects.
    pub fn class_of(&self, id: ObjId) -> Option<i64> {
        match self.get(id)? {
            HeapObject::Object { class, .. } => Some(*class),
            _ => None,
        }
    }

    /// A field of an instance, if it was written (or read once).
    pub fn field(&self, id: ObjId, descr: &str) -> Option<Val> {
        match self.get(id)? {
            HeapObject::Object { fields, .. } => fields.get(descr).copied(),
            _ => None,
        }
    }

    /// Writes a field of an instance; `false` if `id` is not an instance.
    pub fn set_field(&mut self, id: ObjId, descr: &str, value: Val) -> bool {
        match self.get_mut(id) {
            Some(HeapObject::Object { fields, .. }) => {
                fields.insert(descr.into(), value);
                true
            }
            _ => false,
        }
    }

    pub fn array_items(&self, id: ObjId) -> Option<&[Val]> {
        match self.get(id)? {
            HeapObject::Array { items, .. } => Some(items),
            _ => None,
        }
    }

    pub fn str_bytes(&self, id: ObjId) -> Option<&[u8]> {
        match self.get(id)? {
            HeapObject::Str(bytes) => Some(bytes),
            _ => None,
        }
    }

    pub fn unicode_chars(&self, id: ObjId) -> Option<&[u32]> {
        match self.get(id)? {
            HeapObject::Unicode(chars) => Some(chars),
            _ => None,
        }
    }

    /// The fake address `cast_ptr_to_int` gives an object.
    pub fn address_of(id: ObjId) -> i64 {
        ADDRESS_BASE + ADDRESS_STEP * i64::from(id.0)
    }

    /// The object at a fake address, if there is one.
    pub fn object_at(&self, address: i64) -> Option<ObjId> {
        let offset = address.checked_sub(ADDRESS_BASE)?;
        if offset < 0 || offset % ADDRESS_STEP != 0 {
            return None;
        }
        let id = ObjId(u32::try_from(offset / ADDRESS_STEP).ok()?);
        self.contains(id).then_some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_are_total() {
        let mut heap = Heap::new();
        let obj = heap.alloc_object(7);
        let arr = heap.alloc_array(vec![Val::Int(1), Val::Int(2)]);
        let s = heap.alloc_str(b"ab".to_vec());
        assert_eq!(heap.class_of(obj), Some(7));
        assert_eq!(heap.class_of(arr), None);
        assert!(heap.set_field(obj, "f", Val::Int(3)));
        assert!(!heap.set_field(arr, "f", Val::Int(3)));
        assert_eq!(heap.field(obj, "f"), Some(Val::Int(3)));
        assert_eq!(heap.field(obj, "g"), None);
        assert_eq!(heap.array_items(arr), Some(&[Val::Int(1), Val::Int(2)][..]));
        assert_eq!(heap.str_bytes(s), Some(&b"ab"[..]));
        assert_eq!(heap.get(ObjId(99)), None);
        assert_eq!(heap.class_of(ObjId(99)), None);
        assert_eq!(heap.cells(), 1 + 2 + 2);
    }

    #[test]
    fn addresses_round_trip() {
        let mut heap = Heap::new();
        let a = heap.alloc_object(0);
        let b = heap.alloc_object(0);
        assert_ne!(Heap::address_of(a), Heap::address_of(b));
        assert_eq!(heap.object_at(Heap::address_of(b)), Some(b));
        assert_eq!(heap.object_at(Heap::address_of(b) + 1), None);
        assert_eq!(heap.object_at(Heap::address_of(ObjId(5))), None);
        assert_eq!(heap.object_at(0), None);
        assert_eq!(heap.object_at(i64::MIN), None);
    }
}
