//! Constant folding: an integer op whose arguments are all constants
//! becomes the constant the interpreter computes (an `*_ovf` op only
//! where it does not overflow; an op undefined there is left).

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
}
