//! PyPy's oopspec indexes (`OS=N` on a call descr) of the helpers
//! traceopt gives a meaning: the interpreter runs them, the validator
//! encodes them, the optimizer folds or removes their calls.

use crate::descr::Descr;
use crate::opcode::Opcode;

pub const ARRAYCOPY: u32 = 1;
pub const STR2UNICODE: u32 = 2;
pub const THREADLOCALREF_GET: u32 = 5;
pub const ARRAYMOVE: u32 = 9;
pub const INT_PY_DIV: u32 = 12;
pub const INT_PY_MOD: u32 = 14;
pub const STR_CONCAT: u32 = 22;
pub const STR_SLICE: u32 = 23;
pub const STR_EQUAL: u32 = 24;
pub const STREQ_SLICE_CHECKNULL: u32 = 25;
pub const STREQ_SLICE_NONNULL: u32 = 26;
pub const STREQ_SLICE_CHAR: u32 = 27;
pub const STREQ_NONNULL: u32 = 28;
pub const STREQ_NONNULL_CHAR: u32 = 29;
pub const STREQ_CHECKNULL_CHAR: u32 = 30;
pub const STREQ_LENGTHOK: u32 = 31;
pub const JIT_FORCE_VIRTUAL: u32 = 120;
pub const JIT_FORCE_VIRTUALIZABLE: u32 = 121;

/// The oopspec index a call descr names, if any.
pub fn of(descr: Option<&Descr>) -> Option<u32> {
    descr?.as_call()?.oopspec
}

/// Whether a call of this descr is `jit_force_virtual(vref)`: the
/// object a virtual ref stands for, the frame forced if need be.
pub fn forces_virtual(descr: Option<&Descr>) -> bool {
    of(descr) == Some(JIT_FORCE_VIRTUAL)
}

/// Whether a call of `function` with this descr returns an RPython
/// instance (a struct with a class) or null: PyPy's thread-local read
/// (`OS=5`) of a value typed `Ptr(GcStruct object)`, as the name of its
/// helper says (`_ll_1_threadlocalref_get__Ptr_GcStruct_objectLlT_Signed`:
/// the helper is specialized on the type it reads, named first). The
/// interpreter's execution context is such a value.
pub fn returns_instance(descr: Option<&Descr>, function: &crate::Const) -> bool {
    let crate::Const::Class(name) = function else {
        return false;
    };
    of(descr) == Some(THREADLOCALREF_GET)
        && name.starts_with("_ll_1_threadlocalref_get__Ptr_GcStruct_objectLlT_")
}

/// `IntPydiv` or `IntPymod` for a call descr with PyPy's oopspec for
/// Python's integer division or modulo.
pub fn python_division(descr: Option<&Descr>) -> Option<Opcode> {
    match of(descr)? {
        INT_PY_DIV => Some(Opcode::IntPydiv),
        INT_PY_MOD => Some(Opcode::IntPymod),
        _ => None,
    }
}

/// Whether a call may invalidate quasi-immutable fields (so that a
/// `guard_not_invalidated` after it may fail): as its effect info says
/// (`can_invalidate`), else unless it is an array copy or move, which
/// moves array items and writes no field, or an elidable or
/// loop-invariant call, which writes nothing (PyPy ignores what such a
/// call declares it writes; invalidating is a write). A call of no known
/// descr may.
pub fn may_invalidate(descr: Option<&Descr>) -> bool {
    let Some(call) = descr.and_then(Descr::as_call) else {
        return true;
    };
    let writes_nothing = call.effect.is_some_and(|e| e.ignores_writes());
    match call.can_invalidate {
        Some(can) => can,
        None => !(matches!(call.oopspec, Some(ARRAYCOPY | ARRAYMOVE)) || writes_nothing),
    }
}
