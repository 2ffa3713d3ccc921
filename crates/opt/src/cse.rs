//! Common subexpressions: a pure integer op equal to an earlier one (same
//! opcode, same arguments, either order for a commutative op) is
//! replaced by it; `x - C` is filed as `x + (-C)`. A comparison known
//! true or false (from a guard) files itself and its mirror images with
//! their results, PyPy's "pure from args".

use smallvec::{smallvec, SmallVec};
use traceopt_domains::Relation;
use traceopt_ir::{Arg, Flags, Opcode};

use crate::driver::{CseKey, Optimizer};
use crate::intbounds;

impl Optimizer<'_> {
    /// Records `opcode(args)` (in both orders if commutative) for CSE.
    pub(crate) fn remember(&mut self, opcode: Opcode, args: &[Arg], value: Arg) {
        let key = self.cse_key(opcode, args);
        self.cse.insert(key, value);
        if opcode.has(Flags::COMM) {
            self.cse.insert((opcode, args[1], args[0]), value);
        }
    }

    /// The CSE key of `opcode(args)` (integer ops have one or two
    /// arguments; a unary op repeats its one): `x - C` is filed as
    /// `x + (-C)`.
    pub(crate) fn cse_key(&mut self, opcode: Opcode, args: &[Arg]) -> CseKey {
        let second = args.get(1).copied().unwrap_or(args[0]);
        // (The constant is looked up for a subtraction only.)
        let subtracted = (opcode == Opcode::IntSub && args.len() == 2)
            .then(|| self.as_int(second))
            .flatten();
        match subtracted {
            Some(c) => {
                let negated = self.int_const(c.wrapping_neg());
                (Opcode::IntAdd, args[0], negated)
            }
            None => (opcode, args[0], second),
        }
    }

    /// A comparison `v = op(a, b)` is known to give `truth`: the same and
    /// the opposite comparisons of `a` and `b` get their results (PyPy's
    /// "pure from args"), and the order goes into the relational facts.
    pub(crate) fn remember_truth(&mut self, opcode: Opcode, a: Arg, b: Arg, truth: bool) {
        use Opcode::*;
        let (yes, no) = (self.int_const(1), self.int_const(0));
        let (t, f) = if truth { (yes, no) } else { (no, yes) };
        let zero = self.int_const(0);
        let opcode = match opcode {
            IntGe if self.bug(crate::inject::Bug::GeAsUnsigned) => UintGe,
            _ => opcode,
        };
        let facts: SmallVec<[(Opcode, Arg, Arg, Arg); 4]> = match opcode {
            IntIsTrue => smallvec![
                (IntIsTrue, a, a, t),
                (IntIsZero, a, a, f),
                (IntNe, a, zero, t),
                (IntEq, a, zero, f),
            ],
            IntIsZero => smallvec![
                (IntIsZero, a, a, t),
                (IntIsTrue, a, a, f),
                (IntEq, a, zero, t),
                (IntNe, a, zero, f),
            ],
            IntEq | IntNe => {
                let eq = if opcode == IntEq { t } else { f };
                let ne = if opcode == IntEq { f } else { t };
                smallvec![(IntEq, a, b, eq), (IntNe, a, b, ne)]
            }
            IntLt | IntLe | IntGt | IntGe | UintLt | UintLe | UintGt | UintGe => {
                let (swapped, negated, both) = match opcode {
                    IntLt => (IntGt, IntGe, IntLe),
                    IntLe => (IntGe, IntGt, IntLt),
                    IntGt => (IntLt, IntLe, IntGe),
                    IntGe => (IntLe, IntLt, IntGt),
                    UintLt => (UintGt, UintGe, UintLe),
                    UintLe => (UintGe, UintGt, UintLt),
                    UintGt => (UintLt, UintLe, UintGe),
                    _ => (UintLe, UintLt, UintGt),
                };
                smallvec![
                    (opcode, a, b, t),
                    (swapped, b, a, t),
                    (negated, a, b, f),
                    (both, b, a, f),
                ]
            }
            _ => return,
        };
        for (op, x, y, value) in facts {
            let both = [x, y];
            let unary = op.info().signature.len() == 1;
            self.remember(op, &both[..if unary { 1 } else { 2 }], value);
        }
        if let Some((relation, swap)) = intbounds::relation(opcode, truth) {
            let (lo, hi) = if swap { (b, a) } else { (a, b) };
            match relation {
                Relation::Lt => self.relations.add(lo, hi, true),
                Relation::Le => self.relations.add(lo, hi, false),
                Relation::Eq => {
                    self.relations.add(lo, hi, false);
                    self.relations.add(hi, lo, false);
                }
                _ => {}
            }
        }
    }
}
