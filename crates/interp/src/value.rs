//! Runtime values: what a trace variable holds while the interpreter runs.
//!
//! A value is a 64-bit integer, an IEEE double or a GC reference. A
//! reference is an index into the run's `Heap` or null; it is only
//! meaningful together with the heap it came from. Void (the "result" of a
//! `setfield_gc`) and string literals (the text of `debug_merge_point`) are
//! not values.

use std::fmt;
use traceopt_ir::Type;

/// An object in a `Heap`: its index there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjId(pub u32);

/// A runtime value. `Ref(None)` is the null pointer.
///
/// `PartialEq` is IEEE equality on floats (`NaN != NaN`, `0.0 == -0.0`);
/// `Val::same` compares bits, as a differential test wants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    Int(i64),
    Float(f64),
    Ref(Option<ObjId>),
}

impl Val {
    pub const NULL: Val = Val::Ref(None);

    /// The value as a cell of `narrow` (bytes and signedness of an integer
    /// cell narrower than a word, `None` for any other cell) keeps it: an
    /// integer's low bytes, extended as the cell is signed or not, as a
    /// store to memory keeps them.
    pub fn as_stored(self, narrow: Option<(u32, bool)>) -> Val {
        match (narrow, self) {
            (Some((bytes, signed)), Val::Int(x)) if bytes < 8 => {
                let unused = 64 - 8 * bytes;
                let low = x << unused;
                Val::Int(match signed {
                    true => low >> unused,
                    false => ((low as u64) >> unused) as i64,
                })
            }
            _ => self,
        }
    }

    /// The type of the value.
    pub fn ty(self) -> Type {
        match self {
            Val::Int(_) => Type::Int,
            Val::Float(_) => Type::Float,
            Val::Ref(_) => Type::Ref,
        }
    }

    /// The zero of a type: `0`, `0.0` or null. Void and string have no
    /// value; `Int(0)` stands in for them.
    pub fn zero(ty: Type) -> Val {
        match ty {
            Type::Float => Val::Float(0.0),
            Type::Ref => Val::NULL,
            Type::Int | Type::Void | Type::Str => Val::Int(0),
        }
    }

    pub fn as_int(self) -> Option<i64> {
        match self {
            Val::Int(x) => Some(x),
            _ => None,
        }
    }

    pub fn as_float(self) -> Option<f64> {
        match self {
            Val::Float(x) => Some(x),
            _ => None,
        }
    }

    /// `Some(reference)` for a reference (which may itself be null).
    pub fn as_ref(self) -> Option<Option<ObjId>> {
        match self {
            Val::Ref(r) => Some(r),
            _ => None,
        }
    }

    /// Identity: like `==` but floats are compared by their bits.
    pub fn same(self, other: Val) -> bool {
        match (self, other) {
            (Val::Float(a), Val::Float(b)) => a.to_bits() == b.to_bits(),
            _ => self == other,
        }
    }
}

impl From<i64> for Val {
    fn from(x: i64) -> Val {
        Val::Int(x)
    }
}

impl From<f64> for Val {
    fn from(x: f64) -> Val {
        Val::Float(x)
    }
}

impl From<ObjId> for Val {
    fn from(id: ObjId) -> Val {
        Val::Ref(Some(id))
    }
}

/// `5`, `1.5`, `2.0`, `nan`, `-inf`, `null`, `obj3`: floats always show a
/// point or exponent so that they read apart from integers.
impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Val::Int(x) => write!(f, "{x}"),
            Val::Float(x) if x.is_nan() => f.write_str("nan"),
            Val::Float(x) if x.is_infinite() => f.write_str(if x > 0.0 { "inf" } else { "-inf" }),
            Val::Float(x) => write!(f, "{x:?}"),
            Val::Ref(None) => f.write_str("null"),
            Val::Ref(Some(ObjId(id))) => write!(f, "obj{id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        let shown: Vec<String> = [
            Val::Int(5),
            Val::Int(-7),
            Val::Float(1.5),
            Val::Float(2.0),
            Val::Float(f64::NAN),
            Val::Float(f64::NEG_INFINITY),
            Val::NULL,
            Val::Ref(Some(ObjId(3))),
        ]
        .iter()
        .map(|v| v.to_string())
        .collect();
        assert_eq!(
            shown,
            ["5", "-7", "1.5", "2.0", "nan", "-inf", "null", "obj3"]
        );
    }

    #[test]
    fn same_compares_float_bits() {
        assert!(Val::Float(f64::NAN).same(Val::Float(f64::NAN)));
        assert!(!Val::Float(0.0).same(Val::Float(-0.0)));
        assert_eq!(Val::Float(0.0), Val::Float(-0.0));
        assert!(!Val::Int(0).same(Val::NULL));
    }
}
