//! The op table: one line per resoperation.
//!
//! Every other part of traceopt (parser, printer, checker, interpreter, and
//! later the SMT encoding and the optimizer) looks an opcode up here instead of
//! keeping its own list. A line gives the opcode's name as PyPy spells it, its
//! argument signature, its result type and its flags.
//!
//! The signature is a short string, one letter per argument:
//! `i` int, `r` ref (GC pointer), `f` float, `s` string literal, `a` any of
//! int/ref/float. A trailing `*` lets the last letter repeat zero or more
//! times, a trailing `?` makes it optional. So `int_add` is `"ii"`, `jump` is
//! `"a*"` and `call_i` is `"aa*"` (the function, then any arguments: the
//! function is an address, but PyPy's tests also call pointer and string
//! constants). `x` is anything, string literals included.
//!
//! The table covers the resoperations PyPy 7.3 can log, the test-only
//! `escape_*` ops, and the integer ops discussed in the seeds (`int_pydiv`,
//! `int_pymod`). Vector ops are left out: PyPy's vectorizer is off by default
//! and none occur in real traces.

use bitflags::bitflags;
use std::fmt;

/// The type of a value (and of an op's result).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Type {
    Int,
    Ref,
    Float,
    /// Only string literals have this type (the text of `debug_merge_point`).
    Str,
    /// The result "type" of an op that produces nothing.
    Void,
}

impl Type {
    /// The type a variable name stands for, from its first letter
    /// (`i0` int, `p1`/`r1` ref, `f2` float), as PyPy's formats do.
    pub fn from_name_prefix(name: &str) -> Option<Type> {
        match name.as_bytes().first()? {
            b'i' => Some(Type::Int),
            b'p' | b'r' => Some(Type::Ref),
            b'f' => Some(Type::Float),
            _ => None,
        }
    }

    /// The suffix PyPy gives ops of this result type: `_i`, `_r`, `_f`, `_n`.
    pub fn letter(self) -> char {
        match self {
            Type::Int => 'i',
            Type::Ref => 'r',
            Type::Float => 'f',
            Type::Str => 's',
            Type::Void => 'n',
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Type::Int => "int",
            Type::Ref => "ref",
            Type::Float => "float",
            Type::Str => "string",
            Type::Void => "void",
        })
    }
}

bitflags! {
    /// What an op is and does, as far as its users need to know.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    pub struct Flags: u16 {
        /// No side effect and the result depends on the arguments only:
        /// may be folded, CSE'd or removed when unused.
        const PURE = 1 << 0;
        /// A guard: leaves the trace when its condition does not hold.
        const GUARD = 1 << 1;
        /// `int_*_ovf`: sets the overflow flag read by the next guard.
        const OVF = 1 << 2;
        /// Commutative in its two arguments.
        const COMM = 1 << 3;
        /// Needs a descr (field, array, size or call descriptor).
        const DESCR = 1 << 4;
        /// May carry a descr but need not (guards, jump, finish, label).
        const DESCR_OPTIONAL = 1 << 5;
        /// May raise an exception (checked by `guard_no_exception`).
        const RAISE = 1 << 6;
        /// Reads memory.
        const READ = 1 << 7;
        /// Writes memory.
        const WRITE = 1 << 8;
        /// Allocates a new object, array or string.
        const ALLOC = 1 << 9;
        /// Calls a function.
        const CALL = 1 << 10;
        /// Ends the trace (`jump`, `finish`).
        const FINAL = 1 << 11;
        /// Bookkeeping with no effect on values (debug and profiling markers,
        /// hints to the optimizer).
        const MARKER = 1 << 12;
        /// No side effect, though the result is not a function of the
        /// arguments alone (a load, an allocation): may be removed when
        /// its result is unused, never folded or merged on that ground.
        const NO_EFFECT = 1 << 13;
    }
}

/// How many arguments an op takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arity {
    Fixed(usize),
    /// At least this many, no upper bound.
    AtLeast(usize),
    /// Between the two bounds, inclusive.
    Range(usize, usize),
}

impl Arity {
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Fixed(k) => n == k,
            Arity::AtLeast(k) => n >= k,
            Arity::Range(lo, hi) => (lo..=hi).contains(&n),
        }
    }
}

impl fmt::Display for Arity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arity::Fixed(k) => write!(f, "{k}"),
            Arity::AtLeast(k) => write!(f, "at least {k}"),
            Arity::Range(lo, hi) => write!(f, "{lo} to {hi}"),
        }
    }
}

/// One line of the op table.
#[derive(Debug)]
pub struct OpInfo {
    pub opcode: Opcode,
    pub name: &'static str,
    /// Argument signature, see the module comment.
    pub signature: &'static str,
    pub result: Type,
    pub flags: Flags,
}

impl OpInfo {
    pub fn arity(&self) -> Arity {
        let sig = self.signature.as_bytes();
        match sig.last() {
            Some(b'*') => Arity::AtLeast(sig.len() - 2),
            Some(b'?') => Arity::Range(sig.len() - 2, sig.len() - 1),
            _ => Arity::Fixed(sig.len()),
        }
    }

    /// The signature letter for argument `index`, or `None` past the end.
    pub fn arg_letter(&self, index: usize) -> Option<u8> {
        let sig = self.signature.as_bytes();
        match sig.last() {
            Some(b'*') if index >= sig.len() - 2 => Some(sig[sig.len() - 2]),
            Some(b'*' | b'?') if index < sig.len() - 1 => Some(sig[index]),
            Some(b'?') => None,
            _ => sig.get(index).copied(),
        }
    }
}

macro_rules! op_table {
    ($( $variant:ident $name:literal $sig:literal $result:ident [$($flag:ident)*]; )*) => {
        /// An operation code. `Opcode::info` gives its line of the table.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum Opcode { $($variant),* }

        /// The op table, indexed by `Opcode as usize`.
        pub static OP_TABLE: &[OpInfo] = &[
            $(OpInfo {
                opcode: Opcode::$variant,
                name: $name,
                signature: $sig,
                result: Type::$result,
                flags: Flags::empty() $(.union(Flags::$flag))*,
            }),*
        ];

        impl Opcode {
            /// Looks an opcode up by its PyPy name (`"int_add"`).
            pub fn from_name(name: &str) -> Option<Opcode> {
                match name {
                    $($name => Some(Opcode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

op_table! {
    // ---- control ----
    Jump "jump" "a*" Void [FINAL DESCR_OPTIONAL];
    Finish "finish" "a?" Void [FINAL DESCR_OPTIONAL];
    Label "label" "a*" Void [DESCR_OPTIONAL];

    // ---- guards ----
    GuardTrue "guard_true" "i" Void [GUARD DESCR_OPTIONAL];
    GuardFalse "guard_false" "i" Void [GUARD DESCR_OPTIONAL];
    GuardValue "guard_value" "aa" Void [GUARD DESCR_OPTIONAL];
    GuardClass "guard_class" "ri" Void [GUARD DESCR_OPTIONAL];
    GuardNonnull "guard_nonnull" "r" Void [GUARD DESCR_OPTIONAL];
    GuardIsnull "guard_isnull" "r" Void [GUARD DESCR_OPTIONAL];
    GuardNonnullClass "guard_nonnull_class" "ri" Void [GUARD DESCR_OPTIONAL];
    GuardGcType "guard_gc_type" "ri" Void [GUARD DESCR_OPTIONAL];
    GuardIsObject "guard_is_object" "r" Void [GUARD DESCR_OPTIONAL];
    GuardSubclass "guard_subclass" "ri" Void [GUARD DESCR_OPTIONAL];
    GuardNoException "guard_no_exception" "" Void [GUARD DESCR_OPTIONAL];
    GuardException "guard_exception" "i" Ref [GUARD DESCR_OPTIONAL];
    GuardNoOverflow "guard_no_overflow" "" Void [GUARD DESCR_OPTIONAL];
    GuardOverflow "guard_overflow" "" Void [GUARD DESCR_OPTIONAL];
    GuardNotForced "guard_not_forced" "" Void [GUARD DESCR_OPTIONAL];
    GuardNotForced2 "guard_not_forced_2" "" Void [GUARD DESCR_OPTIONAL];
    GuardNotInvalidated "guard_not_invalidated" "" Void [GUARD DESCR_OPTIONAL];
    GuardFutureCondition "guard_future_condition" "" Void [GUARD DESCR_OPTIONAL];
    GuardAlwaysFails "guard_always_fails" "" Void [GUARD DESCR_OPTIONAL];

    // ---- integer arithmetic ----
    IntAdd "int_add" "ii" Int [PURE COMM];
    IntSub "int_sub" "ii" Int [PURE];
    IntMul "int_mul" "ii" Int [PURE COMM];
    UintMulHigh "uint_mul_high" "ii" Int [PURE COMM];
    IntAnd "int_and" "ii" Int [PURE COMM];
    IntOr "int_or" "ii" Int [PURE COMM];
    IntXor "int_xor" "ii" Int [PURE COMM];
    IntRshift "int_rshift" "ii" Int [PURE];
    IntLshift "int_lshift" "ii" Int [PURE];
    UintRshift "uint_rshift" "ii" Int [PURE];
    IntSignext "int_signext" "ii" Int [PURE];
    IntPydiv "int_pydiv" "ii" Int [PURE];
    IntPymod "int_pymod" "ii" Int [PURE];
    IntLt "int_lt" "ii" Int [PURE];
    IntLe "int_le" "ii" Int [PURE];
    IntEq "int_eq" "ii" Int [PURE COMM];
    IntNe "int_ne" "ii" Int [PURE COMM];
    IntGt "int_gt" "ii" Int [PURE];
    IntGe "int_ge" "ii" Int [PURE];
    UintLt "uint_lt" "ii" Int [PURE];
    UintLe "uint_le" "ii" Int [PURE];
    UintGt "uint_gt" "ii" Int [PURE];
    UintGe "uint_ge" "ii" Int [PURE];
    IntIsZero "int_is_zero" "i" Int [PURE];
    IntIsTrue "int_is_true" "i" Int [PURE];
    IntNeg "int_neg" "i" Int [PURE];
    IntInvert "int_invert" "i" Int [PURE];
    IntForceGeZero "int_force_ge_zero" "i" Int [PURE];
    IntAddOvf "int_add_ovf" "ii" Int [OVF COMM];
    IntSubOvf "int_sub_ovf" "ii" Int [OVF];
    IntMulOvf "int_mul_ovf" "ii" Int [OVF COMM];

    // ---- floats and casts ----
    FloatAdd "float_add" "ff" Float [PURE COMM];
    FloatSub "float_sub" "ff" Float [PURE];
    FloatMul "float_mul" "ff" Float [PURE COMM];
    FloatTruediv "float_truediv" "ff" Float [PURE];
    FloatNeg "float_neg" "f" Float [PURE];
    FloatAbs "float_abs" "f" Float [PURE];
    FloatLt "float_lt" "ff" Int [PURE];
    FloatLe "float_le" "ff" Int [PURE];
    FloatEq "float_eq" "ff" Int [PURE COMM];
    FloatNe "float_ne" "ff" Int [PURE COMM];
    FloatGt "float_gt" "ff" Int [PURE];
    FloatGe "float_ge" "ff" Int [PURE];
    CastFloatToInt "cast_float_to_int" "f" Int [PURE];
    CastIntToFloat "cast_int_to_float" "i" Float [PURE];
    CastFloatToSinglefloat "cast_float_to_singlefloat" "f" Int [PURE];
    CastSinglefloatToFloat "cast_singlefloat_to_float" "i" Float [PURE];
    ConvertFloatBytesToLonglong "convert_float_bytes_to_longlong" "f" Int [PURE];
    ConvertLonglongBytesToFloat "convert_longlong_bytes_to_float" "i" Float [PURE];

    // ---- copies, pointers ----
    SameAsI "same_as_i" "i" Int [PURE];
    SameAsR "same_as_r" "r" Ref [PURE];
    SameAsF "same_as_f" "f" Float [PURE];
    CastPtrToInt "cast_ptr_to_int" "r" Int [PURE];
    CastIntToPtr "cast_int_to_ptr" "i" Ref [PURE];
    PtrEq "ptr_eq" "rr" Int [PURE COMM];
    PtrNe "ptr_ne" "rr" Int [PURE COMM];
    InstancePtrEq "instance_ptr_eq" "rr" Int [PURE COMM];
    InstancePtrNe "instance_ptr_ne" "rr" Int [PURE COMM];
    NurseryPtrIncrement "nursery_ptr_increment" "ri" Ref [PURE];
    LoadFromGcTable "load_from_gc_table" "i" Ref [PURE];
    LoadEffectiveAddress "load_effective_address" "iiii" Int [PURE];

    // ---- reads of immutable data ----
    ArraylenGc "arraylen_gc" "r" Int [PURE DESCR_OPTIONAL];
    Strlen "strlen" "r" Int [PURE];
    Strgetitem "strgetitem" "ri" Int [PURE];
    Unicodelen "unicodelen" "r" Int [PURE];
    Unicodegetitem "unicodegetitem" "ri" Int [PURE];
    GetarrayitemGcPureI "getarrayitem_gc_pure_i" "ri" Int [PURE DESCR READ];
    GetarrayitemGcPureR "getarrayitem_gc_pure_r" "ri" Ref [PURE DESCR READ];
    GetarrayitemGcPureF "getarrayitem_gc_pure_f" "ri" Float [PURE DESCR READ];

    // ---- heap reads ----
    GcLoadI "gc_load_i" "rii" Int [READ NO_EFFECT];
    GcLoadR "gc_load_r" "rii" Ref [READ NO_EFFECT];
    GcLoadF "gc_load_f" "rii" Float [READ NO_EFFECT];
    GcLoadIndexedI "gc_load_indexed_i" "riiii" Int [READ DESCR_OPTIONAL NO_EFFECT];
    GcLoadIndexedR "gc_load_indexed_r" "riiii" Ref [READ DESCR_OPTIONAL NO_EFFECT];
    GcLoadIndexedF "gc_load_indexed_f" "riiii" Float [READ DESCR_OPTIONAL NO_EFFECT];
    GetarrayitemGcI "getarrayitem_gc_i" "ri" Int [READ DESCR NO_EFFECT];
    GetarrayitemGcR "getarrayitem_gc_r" "ri" Ref [READ DESCR NO_EFFECT];
    GetarrayitemGcF "getarrayitem_gc_f" "ri" Float [READ DESCR NO_EFFECT];
    GetarrayitemRawI "getarrayitem_raw_i" "ii" Int [READ DESCR NO_EFFECT];
    GetarrayitemRawF "getarrayitem_raw_f" "ii" Float [READ DESCR NO_EFFECT];
    RawLoadI "raw_load_i" "ii" Int [READ DESCR NO_EFFECT];
    RawLoadF "raw_load_f" "ii" Float [READ DESCR NO_EFFECT];
    GetinteriorfieldGcI "getinteriorfield_gc_i" "ri" Int [READ DESCR NO_EFFECT];
    GetinteriorfieldGcR "getinteriorfield_gc_r" "ri" Ref [READ DESCR NO_EFFECT];
    GetinteriorfieldGcF "getinteriorfield_gc_f" "ri" Float [READ DESCR NO_EFFECT];
    GetfieldGcI "getfield_gc_i" "r" Int [READ DESCR NO_EFFECT];
    GetfieldGcR "getfield_gc_r" "r" Ref [READ DESCR NO_EFFECT];
    GetfieldGcF "getfield_gc_f" "r" Float [READ DESCR NO_EFFECT];
    GetfieldRawI "getfield_raw_i" "i" Int [READ DESCR NO_EFFECT];
    GetfieldRawR "getfield_raw_r" "i" Ref [READ DESCR NO_EFFECT];
    GetfieldRawF "getfield_raw_f" "i" Float [READ DESCR NO_EFFECT];
    Strhash "strhash" "r" Int [READ NO_EFFECT];
    Unicodehash "unicodehash" "r" Int [READ NO_EFFECT];

    // ---- allocation ----
    New "new" "" Ref [ALLOC DESCR NO_EFFECT];
    NewWithVtable "new_with_vtable" "" Ref [ALLOC DESCR NO_EFFECT];
    NewArray "new_array" "i" Ref [ALLOC DESCR NO_EFFECT];
    NewArrayClear "new_array_clear" "i" Ref [ALLOC DESCR NO_EFFECT];
    Newstr "newstr" "i" Ref [ALLOC NO_EFFECT];
    Newunicode "newunicode" "i" Ref [ALLOC NO_EFFECT];
    ForceToken "force_token" "" Ref [NO_EFFECT];
    VirtualRef "virtual_ref" "ri" Ref [ALLOC];

    // ---- heap writes ----
    SetfieldGc "setfield_gc" "ra" Void [WRITE DESCR];
    SetfieldRaw "setfield_raw" "ia" Void [WRITE DESCR];
    ZeroPtrField "zero_ptr_field" "ri" Void [WRITE];
    SetarrayitemGc "setarrayitem_gc" "ria" Void [WRITE DESCR];
    SetarrayitemRaw "setarrayitem_raw" "iia" Void [WRITE DESCR];
    RawStore "raw_store" "iia" Void [WRITE DESCR];
    SetinteriorfieldGc "setinteriorfield_gc" "ria" Void [WRITE DESCR];
    SetinteriorfieldRaw "setinteriorfield_raw" "iia" Void [WRITE DESCR];
    ZeroArray "zero_array" "riiii" Void [WRITE DESCR];
    GcStore "gc_store" "riai" Void [WRITE];
    GcStoreIndexed "gc_store_indexed" "riaiii" Void [WRITE DESCR_OPTIONAL];
    Strsetitem "strsetitem" "rii" Void [WRITE];
    Unicodesetitem "unicodesetitem" "rii" Void [WRITE];
    Copystrcontent "copystrcontent" "rriii" Void [READ WRITE];
    Copyunicodecontent "copyunicodecontent" "rriii" Void [READ WRITE];
    VirtualRefFinish "virtual_ref_finish" "rr" Void [WRITE];
    CondCallGcWb "cond_call_gc_wb" "r" Void [DESCR];
    CondCallGcWbArray "cond_call_gc_wb_array" "ri" Void [DESCR];

    // ---- markers and hints ----
    DebugMergePoint "debug_merge_point" "x*" Void [MARKER];
    EnterPortalFrame "enter_portal_frame" "ii" Void [MARKER];
    LeavePortalFrame "leave_portal_frame" "i" Void [MARKER];
    JitDebug "jit_debug" "a*" Void [MARKER];
    IncrementDebugCounter "increment_debug_counter" "i" Void [MARKER];
    Keepalive "keepalive" "a" Void [MARKER];
    ForceSpill "force_spill" "a" Void [MARKER];
    QuasiimmutField "quasiimmut_field" "r" Void [MARKER DESCR];
    AssertNotNone "assert_not_none" "r" Void [MARKER];
    RecordExactClass "record_exact_class" "ri" Void [MARKER];
    RecordExactValueR "record_exact_value_r" "rr" Void [MARKER];
    RecordExactValueI "record_exact_value_i" "ii" Void [MARKER];
    RecordKnownResult "record_known_result" "aia*" Void [MARKER DESCR];

    // ---- test-only: opaque uses and sources of values ----
    EscapeI "escape_i" "a*" Int [];
    EscapeR "escape_r" "a*" Ref [];
    EscapeF "escape_f" "a*" Float [];
    EscapeN "escape_n" "a*" Void [];

    // ---- exceptions ----
    SaveException "save_exception" "" Ref [];
    SaveExcClass "save_exc_class" "" Int [];
    RestoreException "restore_exception" "ir" Void [WRITE];

    // ---- calls ----
    CallI "call_i" "aa*" Int [CALL DESCR RAISE READ WRITE];
    CallR "call_r" "aa*" Ref [CALL DESCR RAISE READ WRITE];
    CallF "call_f" "aa*" Float [CALL DESCR RAISE READ WRITE];
    CallN "call_n" "aa*" Void [CALL DESCR RAISE READ WRITE];
    CondCallN "cond_call" "iia*" Void [CALL DESCR RAISE READ WRITE];
    CondCallValueI "cond_call_value_i" "iia*" Int [CALL DESCR RAISE READ WRITE];
    CondCallValueR "cond_call_value_r" "ria*" Ref [CALL DESCR RAISE READ WRITE];
    CallAssemblerI "call_assembler_i" "a*" Int [CALL DESCR RAISE READ WRITE];
    CallAssemblerR "call_assembler_r" "a*" Ref [CALL DESCR RAISE READ WRITE];
    CallAssemblerF "call_assembler_f" "a*" Float [CALL DESCR RAISE READ WRITE];
    CallAssemblerN "call_assembler_n" "a*" Void [CALL DESCR RAISE READ WRITE];
    CallMayForceI "call_may_force_i" "aa*" Int [CALL DESCR RAISE READ WRITE];
    CallMayForceR "call_may_force_r" "aa*" Ref [CALL DESCR RAISE READ WRITE];
    CallMayForceF "call_may_force_f" "aa*" Float [CALL DESCR RAISE READ WRITE];
    CallMayForceN "call_may_force_n" "aa*" Void [CALL DESCR RAISE READ WRITE];
    CallLoopinvariantI "call_loopinvariant_i" "aa*" Int [CALL DESCR RAISE READ WRITE];
    CallLoopinvariantR "call_loopinvariant_r" "aa*" Ref [CALL DESCR RAISE READ WRITE];
    CallLoopinvariantF "call_loopinvariant_f" "aa*" Float [CALL DESCR RAISE READ WRITE];
    CallLoopinvariantN "call_loopinvariant_n" "aa*" Void [CALL DESCR RAISE READ WRITE];
    CallReleaseGilI "call_release_gil_i" "iia*" Int [CALL DESCR RAISE READ WRITE];
    CallReleaseGilF "call_release_gil_f" "iia*" Float [CALL DESCR RAISE READ WRITE];
    CallReleaseGilN "call_release_gil_n" "iia*" Void [CALL DESCR RAISE READ WRITE];
    CallPureI "call_pure_i" "aa*" Int [CALL DESCR PURE];
    CallPureR "call_pure_r" "aa*" Ref [CALL DESCR PURE];
    CallPureF "call_pure_f" "aa*" Float [CALL DESCR PURE];
    CallPureN "call_pure_n" "aa*" Void [CALL DESCR PURE];
    CheckMemoryError "check_memory_error" "i" Void [RAISE];
    CallMallocNursery "call_malloc_nursery" "i" Ref [ALLOC];
    CallMallocNurseryVarsize "call_malloc_nursery_varsize" "iii" Ref [ALLOC DESCR];
    CallMallocNurseryVarsizeFrame "call_malloc_nursery_varsize_frame" "i" Ref [ALLOC];
}

impl Opcode {
    pub fn info(self) -> &'static OpInfo {
        &OP_TABLE[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    pub fn result_type(self) -> Type {
        self.info().result
    }
    pub fn flags(self) -> Flags {
        self.info().flags
    }
    pub fn has(self, flag: Flags) -> bool {
        self.info().flags.contains(flag)
    }
    /// Whether the op may be dropped when nothing uses its result: it
    /// has no side effect (pure, a load, an allocation).
    pub fn removable_when_unused(self) -> bool {
        self.has(Flags::PURE) || self.has(Flags::NO_EFFECT)
    }
    pub fn is_guard(self) -> bool {
        self.has(Flags::GUARD)
    }
    pub fn is_final(self) -> bool {
        self.has(Flags::FINAL)
    }
    /// A rough cost of executing the op, for the rule language's
    /// termination check (a rule must lower the summed cost of what it
    /// replaces): multiplication and division cost more than the simple
    /// ops, an overflow check adds one (its guard).
    pub fn cost(self) -> u32 {
        use Opcode::*;
        let base = match self {
            IntMul | IntMulOvf => 3,
            UintMulHigh => 4,
            IntPydiv | IntPymod => 20,
            SameAsI | SameAsR | SameAsF => 0,
            _ => 1,
        };
        base + u32::from(self.has(Flags::OVF))
    }
    /// All opcodes, in table order.
    pub fn all() -> impl Iterator<Item = Opcode> {
        OP_TABLE.iter().map(|info| info.opcode)
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many guards of a trace, at most, a guard may fail in the place
/// of (PyPy's guard strengthening: the optimizer merges a test into an
/// earlier guard; the validator lets it fail there in the place of one
/// of this many later guards, resuming as the earlier one: the
/// interpreter resumed there does what the trace does in between).
pub const MAX_GUARDS_FAILED_EARLY: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_opcode_and_names_are_unique() {
        let mut names = std::collections::HashSet::new();
        for (i, info) in OP_TABLE.iter().enumerate() {
            assert_eq!(info.opcode as usize, i, "{} is out of place", info.name);
            assert!(names.insert(info.name), "{} appears twice", info.name);
            assert_eq!(Opcode::from_name(info.name), Some(info.opcode));
        }
        assert!(OP_TABLE.len() > 115);
    }

    #[test]
    fn result_suffix_matches_result_type() {
        for info in OP_TABLE {
            // Hints such as record_exact_value_i name their argument's type.
            if info.flags.contains(Flags::MARKER) {
                continue;
            }
            if let Some((_, suffix)) = info.name.rsplit_once('_') {
                let expected = match suffix {
                    "i" => Type::Int,
                    "r" => Type::Ref,
                    "f" => Type::Float,
                    "n" => Type::Void,
                    _ => continue,
                };
                assert_eq!(info.result, expected, "{}", info.name);
            }
        }
    }

    #[test]
    fn arity_and_letters_follow_the_signature() {
        let add = Opcode::IntAdd.info();
        assert_eq!(add.arity(), Arity::Fixed(2));
        assert_eq!(add.arg_letter(1), Some(b'i'));
        assert_eq!(add.arg_letter(2), None);
        let call = Opcode::CallReleaseGilI.info();
        assert_eq!(call.arity(), Arity::AtLeast(2));
        assert_eq!(call.arg_letter(0), Some(b'i'));
        assert_eq!(call.arg_letter(7), Some(b'a'));
        let finish = Opcode::Finish.info();
        assert_eq!(finish.arity(), Arity::Range(0, 1));
        assert_eq!(finish.arg_letter(0), Some(b'a'));
        assert_eq!(finish.arg_letter(1), None);
        assert!(Opcode::GuardTrue.is_guard() && !Opcode::IntAdd.is_guard());
    }
}
