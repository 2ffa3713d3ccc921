//! The environment: everything a trace can observe that the trace itself
//! does not define.
//!
//! A trace calls functions, reads raw memory, compares against class
//! addresses and constant objects of the process it was recorded in, and
//! asks whether it was invalidated or forced meanwhile. None of that is in
//! the trace text, so the interpreter asks an `Env`. Every method has a
//! deterministic default, and `DefaultEnv` uses them all:
//!
//! - class addresses (`ConstClass(name)`) and the class `new_with_vtable`
//!   gives for a size descr are a hash of the name or descr text
//!   (`stable_address`); a test env can link the two;
//! - `ConstPtr(name)` is a fresh instance of class 0, and a string
//!   constant a fresh string of its text (asked once per name per run;
//!   the interpreter remembers the answer);
//! - a field read before any write reads zero of the op's type (and the
//!   interpreter remembers the answer for later reads);
//! - calls return zero of their type and never raise, except the two
//!   oopspecs PyPy uses for Python integer division: OS=12 is `int_pydiv`
//!   and OS=14 `int_pymod` of the two arguments after the function; and
//!   the string helpers (`helpers.rs`), which do what they do;
//! - raw memory reads 0 and ignores writes;
//! - `guard_subclass` holds when the classes are equal;
//! - `guard_not_forced(_2)`, `guard_not_invalidated` and
//!   `guard_future_condition` hold;
//! - `force_token` is a fresh instance (once per run);
//! - `cast_int_to_ptr` of an address no object has is refused;
//! - `escape_*` gives back its first argument if it has the op's type,
//!   else zero.
//!
//! An env that returns references must return objects of the heap it is
//! given; the interpreter checks this and the type of every answer.

use crate::arith;
use crate::error::Fault;
use crate::heap::Heap;
use crate::helpers::known_helper;
use crate::value::{ObjId, Val};
use traceopt_ir::{Descr, Opcode, Type};

/// A call as the env sees it.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    pub op_index: usize,
    pub opcode: Opcode,
    /// The function (an address, or in PyPy's tests any constant); `None`
    /// for `call_assembler_*`, whose target is the descr (a loop token).
    pub func: Option<Val>,
    /// The arguments after the function (and, for `call_release_gil_*`,
    /// after the saved-errno flags; `cond_call*`: after the condition).
    pub args: &'a [Val],
    pub descr: Option<&'a Descr>,
    /// The op's result type (`Void` for `call_n` and friends).
    pub result: Type,
}

/// A pending exception: its class and its value (an instance or null).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exception {
    pub class: i64,
    pub value: Option<ObjId>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CallOutcome {
    /// The result (ignored for a void call).
    Returned(Val),
    Raised(Exception),
}

/// A raw-memory access: `getfield_raw_*`/`setfield_raw` (index 0),
/// `raw_load_*`/`raw_store` (index = byte offset), `getarrayitem_raw_*`/
/// `setarrayitem_raw`/`setinteriorfield_raw` (index = item index).
#[derive(Clone, Copy, Debug)]
pub struct RawAccess<'a> {
    pub op_index: usize,
    pub opcode: Opcode,
    pub address: i64,
    pub index: i64,
    pub descr: Option<&'a Descr>,
    /// The type read or written.
    pub ty: Type,
}

/// What made an object: the trace's op of this index, or a guard's
/// virtual (built as the guard fails) of this name and site
/// (`Virtual::site`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MadeBy<'a> {
    Op(usize),
    Virtual(&'a str, Option<usize>),
}

pub trait Env {
    /// The integer a `ConstClass(name)` constant stands for.
    fn class_address(&mut self, name: &str) -> i64 {
        stable_address(name)
    }

    /// The class of an object made by `new_with_vtable(descr=...)` (by
    /// `made_by`: a size descr that does not name its class, as a log's
    /// `<SizeDescr 16>`, may make objects of another class at each op).
    fn class_of_size_descr(&mut self, descr: &Descr, made_by: MadeBy<'_>) -> i64 {
        let _ = made_by;
        self.class_address(descr.class_name())
    }

    /// The object a `ConstPtr(name)` constant stands for.
    fn const_ptr(&mut self, name: &str, heap: &mut Heap) -> ObjId {
        let _ = name;
        heap.alloc_object(0)
    }

    /// The object a string constant (`s"..."`, or `u"..."` with
    /// `unicode`) stands for, `name` its text as printed: a new string of
    /// its characters.
    fn const_string(&mut self, name: &str, unicode: bool, text: &str, heap: &mut Heap) -> ObjId {
        let _ = name;
        match unicode {
            true => heap.alloc_unicode(text.chars().map(u32::from).collect()),
            false => heap.alloc_str(text.bytes().collect()),
        }
    }

    /// The value of a field (`index` is `None`) or interior field of
    /// item `index` that this run reads before writing it.
    fn read_unknown_field(
        &mut self,
        heap: &mut Heap,
        obj: ObjId,
        index: Option<usize>,
        descr: &Descr,
        ty: Type,
    ) -> Result<Val, Fault> {
        let _ = (heap, obj, index, descr);
        Ok(Val::zero(ty))
    }

    fn call(&mut self, heap: &mut Heap, call: &Call<'_>) -> Result<CallOutcome, Fault> {
        known_helper(heap, call).unwrap_or_else(|| default_call(call))
    }

    fn raw_load(&mut self, heap: &mut Heap, access: &RawAccess<'_>) -> Result<Val, Fault> {
        let _ = heap;
        Ok(Val::zero(access.ty))
    }

    fn raw_store(
        &mut self,
        heap: &mut Heap,
        access: &RawAccess<'_>,
        value: Val,
    ) -> Result<(), Fault> {
        let _ = (heap, access, value);
        Ok(())
    }

    /// `guard_subclass`: is `class` a subclass of `of`?
    fn is_subclass(&mut self, class: i64, of: i64) -> bool {
        class == of
    }

    /// `guard_not_forced`, `guard_not_forced_2`, `guard_not_invalidated`,
    /// `guard_future_condition`: does the guard hold?
    fn guard_holds(&mut self, opcode: Opcode, op_index: usize) -> bool {
        let _ = (opcode, op_index);
        true
    }

    /// The value of `force_token` (asked once per run).
    fn force_token(&mut self, heap: &mut Heap) -> Val {
        Val::Ref(Some(heap.alloc_object(0)))
    }

    /// `cast_int_to_ptr` of a nonzero integer that is no object's address.
    fn int_to_ptr(&mut self, heap: &mut Heap, address: i64) -> Result<Val, Fault> {
        let _ = heap;
        Err(Fault::Unsupported(format!(
            "cast_int_to_ptr of {address}, which is no object's address"
        )))
    }

    /// The result of an `escape_*` op (already recorded in `Run::escaped`).
    fn escape(&mut self, heap: &mut Heap, op_index: usize, result: Type, args: &[Val]) -> Val {
        let _ = (heap, op_index);
        default_escape(result, args)
    }
}

/// The env with every default.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultEnv;

impl Env for DefaultEnv {}

/// The default meaning of a call: the integer-division oopspecs, else
/// zero of the result type and no exception.
pub fn default_call(call: &Call<'_>) -> Result<CallOutcome, Fault> {
    use traceopt_ir::oopspec::{INT_PY_DIV as OS_INT_PY_DIV, INT_PY_MOD as OS_INT_PY_MOD};
    let oopspec = call.descr.and_then(Descr::as_call).and_then(|c| c.oopspec);
    let value = match (oopspec, call.args) {
        (Some(os @ (OS_INT_PY_DIV | OS_INT_PY_MOD)), &[Val::Int(a), Val::Int(b)]) => {
            let q = if os == OS_INT_PY_DIV {
                arith::pydiv(a, b)?
            } else {
                arith::pymod(a, b)?
            };
            if call.result != Type::Int {
                return Err(Fault::TypeMismatch(format!(
                    "integer division (OS={os}) gives an int, not {}",
                    call.result
                )));
            }
            Val::Int(q)
        }
        (Some(os @ (OS_INT_PY_DIV | OS_INT_PY_MOD)), args) => {
            return Err(Fault::TypeMismatch(format!(
                "integer division (OS={os}) takes two ints, given {} argument(s)",
                args.len()
            )))
        }
        _ => Val::zero(call.result),
    };
    Ok(CallOutcome::Returned(value))
}

/// The default result of `escape_*`: the first argument if it has the
/// op's type, else zero.
pub fn default_escape(result: Type, args: &[Val]) -> Val {
    match args.first() {
        Some(v) if v.ty() == result => *v,
        _ => Val::zero(result),
    }
}

/// A hash of bytes that does not change between runs or builds (64-bit
/// FNV-1a).
pub fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A stable, nonzero, 8-aligned, address-like number for a name.
pub fn stable_address(name: &str) -> i64 {
    ((stable_hash(name.as_bytes()) & 0x0000_0fff_ffff_fff8) | 0x0000_1000_0000_0000) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call_with<'a>(descr: &'a Descr, args: &'a [Val], result: Type) -> Call<'a> {
        Call {
            op_index: 0,
            opcode: Opcode::CallPureI,
            func: Some(Val::Int(0)),
            args,
            descr: Some(descr),
            result,
        }
    }

    #[test]
    fn default_call_knows_python_division() {
        let div = Descr::parse("<Calli 8 ii EF=0 OS=12>").unwrap();
        let modulo = Descr::parse("<Calli 8 ii EF=0 OS=14>").unwrap();
        let other = Descr::parse("<Calli 8 ii EF=4>").unwrap();
        let args = [Val::Int(7), Val::Int(-2)];
        assert_eq!(
            default_call(&call_with(&div, &args, Type::Int)),
            Ok(CallOutcome::Returned(Val::Int(-4)))
        );
        assert_eq!(
            default_call(&call_with(&modulo, &args, Type::Int)),
            Ok(CallOutcome::Returned(Val::Int(-1)))
        );
        assert_eq!(
            default_call(&call_with(&other, &args, Type::Int)),
            Ok(CallOutcome::Returned(Val::Int(0)))
        );
        assert_eq!(
            default_call(&call_with(&other, &args, Type::Float)),
            Ok(CallOutcome::Returned(Val::Float(0.0)))
        );
        let zero = [Val::Int(7), Val::Int(0)];
        assert!(matches!(
            default_call(&call_with(&div, &zero, Type::Int)),
            Err(Fault::Undefined(_))
        ));
        assert!(matches!(
            default_call(&call_with(&div, &args[..1], Type::Int)),
            Err(Fault::TypeMismatch(_))
        ));
    }

    #[test]
    fn stable_addresses() {
        let a = stable_address("W_IntObject");
        assert_eq!(a, stable_address("W_IntObject"));
        assert_ne!(a, stable_address("W_FloatObject"));
        assert!(a > 0 && a % 8 == 0);
        assert_eq!(stable_hash(b""), 0xcbf2_9ce4_8422_2325);
    }
}
