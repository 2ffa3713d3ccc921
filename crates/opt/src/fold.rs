//! Constant folding: an integer op whose arguments are all constants
//! becomes the constant the interpreter computes (an `*_ovf` op only
//! where it does not overflow; an op undefined there is left). And a
//! cast between a reference and its address undoes the opposite cast.

use traceopt_interp::arith;
use traceopt_ir::{Arg, Flags, Opcode};

use crate::driver::Optimizer;

impl Optimizer<'_> {
    /// `op(args)` on constants, if defined (and, for `*_ovf`, if it does
    /// not overflow).
    pub(crate) fn fold(&mut self, opcode: Opcode, args: &[Arg]) -> Option<Arg> {
        let first = self.as_int(args[0])?;
        let second = match args.get(1) {
            Some(&a) => self.as_int(a)?,
            None => first,
        };
        let result = if opcode.has(Flags::OVF) {
            match arith::int_ovf(opcode, first, second)? {
                (r, false) => r,
                (_, true) => return None,
            }
        } else {
            let vals = [
                traceopt_interp::Val::Int(first),
                traceopt_interp::Val::Int(second),
            ];
            arith::eval(opcode, &vals[..args.len().min(2)])
                .ok()?
                .as_int()?
        };
        Some(self.int_const(result))
    }

    /// `cast_int_to_ptr(cast_ptr_to_int(p))` is `p`, and the other way
    /// round: the cast undone, if `opcode(args)` is one.
    pub(crate) fn undo_cast(&self, opcode: Opcode, args: &[Arg]) -> Option<Arg> {
        let undone = match opcode {
            Opcode::CastIntToPtr => Opcode::CastPtrToInt,
            Opcode::CastPtrToInt => Opcode::CastIntToPtr,
            _ => return None,
        };
        let Arg::Value(v) = args[0] else { return None };
        let op = &self.out.ops[self.defining_op(v)?];
        (op.opcode == undone).then(|| op.args[0])
    }
}
