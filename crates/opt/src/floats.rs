//! Float ops: the identities that hold for every IEEE double (with the
//! one NaN the validator knows), and common subexpressions.
//!
//! - `x * 1.0` and `1.0 * x` are `x` (a NaN stays a NaN, -0.0 stays
//!   -0.0);
//! - `abs(abs(x))` is `abs(x)`, `-(-x)` is `x`;
//! - a pure op on floats (arithmetic, a comparison, a cast, bits
//!   reinterpreted) equal to an earlier one (same arguments, either
//!   order for addition and multiplication, which are commutative in
//!   IEEE arithmetic) is the earlier one.

use traceopt_ir::{Arg, Const, Flags, Opcode, Type};

use crate::driver::Optimizer;

/// The float ops this pass handles: the pure ops (no descr) that take or
/// give a float, from arithmetic and comparisons to casts and the
/// reinterpretation of bits.
pub(crate) fn is_float_op(opcode: Opcode) -> bool {
    static TABLE: std::sync::OnceLock<Vec<bool>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        Opcode::all()
            .map(|opcode| {
                let info = opcode.info();
                let floats = info.signature.contains('f') || info.result == Type::Float;
                floats
                    && !info.signature.is_empty()
                    && info.flags.contains(Flags::PURE)
                    && !info.flags.contains(Flags::DESCR)
                    && opcode != Opcode::SameAsF
            })
            .collect()
    });
    table[opcode as usize]
}

impl Optimizer<'_> {
    /// What float op `opcode(args)` is without computing it, if known.
    pub(crate) fn float_op(&mut self, opcode: Opcode, args: &[Arg]) -> Option<Arg> {
        use Opcode::*;
        if !is_float_op(opcode) {
            return None;
        }
        let one = |me: &Self, a: Arg| matches!(a, Arg::Const(c) if *me.out.constant(c) == Const::float(1.0));
        let made_by = |me: &Self, a: Arg| match a {
            Arg::Value(v) => me
                .defining_op(v)
                .and_then(|i| Some((me.out.ops[i].opcode, *me.out.ops[i].args.first()?))),
            Arg::Const(_) => None,
        };
        match (opcode, args) {
            (FloatMul, &[a, b]) if one(self, a) => return Some(b),
            (FloatMul, &[a, b]) if one(self, b) => return Some(a),
            (FloatAbs, &[a]) if matches!(made_by(self, a), Some((FloatAbs, _))) => return Some(a),
            (FloatNeg, &[a]) => {
                if let Some((FloatNeg, inner)) = made_by(self, a) {
                    return Some(inner);
                }
            }
            _ => {}
        }
        let second = args.get(1).copied().unwrap_or(args[0]);
        let known = self.cse.get(&(opcode, args[0], second)).copied()?;
        Some(self.find(known))
    }

    /// Float op `opcode(args)` is `value` from here on.
    pub(crate) fn remember_float(&mut self, opcode: Opcode, args: &[Arg], value: Arg) {
        if is_float_op(opcode) {
            self.remember(opcode, args, value);
        }
    }
}
