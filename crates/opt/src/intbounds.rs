//! The integer domain as the optimizer uses it: the bound of an op's
//! result from the bounds of its arguments, and what a guard teaches.
//!
//! Forward: one `IntBound` transfer function per integer op (for `*_ovf`
//! ops, the bound when the guard after them passed). Backward: a passing
//! `guard_true`/`guard_false` on a comparison narrows both arguments; on
//! any value, it narrows the value to non-zero or zero. The transfer
//! functions and refinements are those of `traceopt-domains`, proved
//! sound there.

use traceopt_domains::Operand;
use traceopt_domains::{IntBound, Relation};
use traceopt_ir::{
    oopspec, smallvec, Arg, Args, CellKind, Descr, DescrId, DescrKind, Opcode, Type, ValueId,
};

use crate::driver::{Infeasible, Optimizer, MAX_BACKWARD_DEPTH};
use crate::virtuals::Mapped;

/// The bound of `op(args)`, or `None` for ops the domain does not model.
pub fn forward(op: Opcode, args: &[IntBound]) -> Option<IntBound> {
    use Opcode::*;
    let a = *args.first()?;
    let b = || args.get(1).copied().unwrap_or_else(IntBound::unbounded);
    Some(match op {
        IntAdd => a.add(b()),
        IntSub => a.sub(b()),
        IntMul => a.mul(b()),
        IntAnd => a.and(b()),
        IntOr => a.or(b()),
        IntXor => a.xor(b()),
        IntInvert => a.invert(),
        IntNeg => a.neg(),
        IntLshift => a.lshift(b()),
        IntRshift => a.rshift(b()),
        UintRshift => a.urshift(b()),
        IntSignext => a.signext(b()),
        IntPydiv => a.pydiv(b()),
        IntPymod => a.pymod(b()),
        UintMulHigh => a.uint_mul_high(b()),
        IntForceGeZero => a.force_ge_zero(),
        IntAddOvf => a.add_ovf(b()),
        IntSubOvf => a.sub_ovf(b()),
        IntMulOvf => a.mul_ovf(b()),
        IntEq => a.eq(b()),
        IntNe => a.ne(b()),
        IntLt => a.lt(b()),
        IntLe => a.le(b()),
        IntGt => a.gt(b()),
        IntGe => a.ge(b()),
        UintLt => a.ult(b()),
        UintLe => a.ule(b()),
        UintGt => a.ugt(b()),
        UintGe => a.uge(b()),
        IntIsTrue => a.is_true(),
        IntIsZero => a.is_zero(),
        SameAsI => a,
        _ => return None,
    })
}

/// Can `op(a, b)` (an `*_ovf` op) overflow?
pub fn cannot_overflow(op: Opcode, a: IntBound, b: IntBound) -> bool {
    match op {
        Opcode::IntAddOvf => a.add_cannot_overflow(b),
        Opcode::IntSubOvf => a.sub_cannot_overflow(b),
        Opcode::IntMulOvf => a.mul_cannot_overflow(b),
        _ => false,
    }
}

/// The plain op of an overflow-checking one.
pub fn without_overflow_check(op: Opcode) -> Opcode {
    match op {
        Opcode::IntAddOvf => Opcode::IntAdd,
        Opcode::IntSubOvf => Opcode::IntSub,
        Opcode::IntMulOvf => Opcode::IntMul,
        other => other,
    }
}

/// For a comparison known to give `truth`: the relation that holds
/// between (left, right) after swapping, as `(relation, swap)`.
pub fn relation(op: Opcode, truth: bool) -> Option<(Relation, bool)> {
    use Opcode::*;
    use Relation::*;
    // `a < b` false is `b <= a`, and so on.
    Some(match (op, truth) {
        (IntLt, true) => (Lt, false),
        (IntLt, false) => (Le, true),
        (IntLe, true) => (Le, false),
        (IntLe, false) => (Lt, true),
        (IntGt, true) => (Lt, true),
        (IntGt, false) => (Le, false),
        (IntGe, true) => (Le, true),
        (IntGe, false) => (Lt, false),
        (UintLt, true) => (Ult, false),
        (UintLt, false) => (Ule, true),
        (UintLe, true) => (Ule, false),
        (UintLe, false) => (Ult, true),
        (UintGt, true) => (Ult, true),
        (UintGt, false) => (Ule, false),
        (UintGe, true) => (Ule, true),
        (UintGe, false) => (Ult, false),
        (IntEq, true) | (IntNe, false) => (Eq, false),
        (IntEq, false) | (IntNe, true) => (Ne, false),
        _ => return None,
    })
}

/// The values a cell of `size` bytes holds (`None`: a full word).
fn cell_bound(cell: CellKind, size: i64) -> Option<IntBound> {
    if !(1..8).contains(&size) {
        return None;
    }
    let bits = 8 * size as u32;
    match cell {
        CellKind::Unsigned => Some(IntBound::range(0, (1i64 << bits) - 1)),
        CellKind::Signed => Some(IntBound::range(
            -(1i64 << (bits - 1)),
            (1i64 << (bits - 1)) - 1,
        )),
        _ => None,
    }
}

/// What an op that reads the heap gives: a length is not negative, a
/// character is a byte or a code point, a narrow field or item holds
/// what fits in it.
fn read_bound(opcode: Opcode, descr: Option<&Descr>) -> Option<IntBound> {
    use Opcode::*;
    match opcode {
        ArraylenGc | Strlen | Unicodelen => return Some(IntBound::range(0, i64::MAX)),
        Strgetitem => return Some(IntBound::range(0, 255)),
        Unicodegetitem => return Some(IntBound::range(0, 0x10ffff)),
        GetfieldGcI | GetfieldRawI | GetarrayitemGcI | GetarrayitemRawI | GetarrayitemGcPureI
        | GetinteriorfieldGcI => {}
        _ => return None,
    }
    match &descr?.kind {
        DescrKind::Field(f) => cell_bound(f.cell, i64::from(f.size?)),
        DescrKind::Array(a) => cell_bound(a.cell, a.item_size),
        DescrKind::InteriorField(i) => cell_bound(i.field.cell, i64::from(i.field.size?)),
        _ => None,
    }
}

impl Optimizer<'_> {
    /// What a read of a cell (`opcode` with output `descr`) gives where
    /// `value` is what was written to it: `value` if it fits the cell;
    /// else `value` cut down as a narrow cell cuts what is written to it
    /// (`int_and` with the mask of an unsigned cell, `int_signext` for a
    /// signed one). Forwarding a write to a read must not skip that cut.
    pub(crate) fn as_read(
        &mut self,
        opcode: Opcode,
        descr: Option<DescrId>,
        value: Mapped,
    ) -> Result<Mapped, Infeasible> {
        use Opcode::*;
        let cells = matches!(
            opcode,
            GetfieldGcI
                | GetfieldRawI
                | GetarrayitemGcI
                | GetarrayitemRawI
                | GetarrayitemGcPureI
                | GetinteriorfieldGcI
        );
        let Mapped::Out(v) = value else {
            return Ok(value);
        };
        if !cells {
            return Ok(value);
        }
        let Some(cell) = read_bound(opcode, descr.map(|d| self.out.descr(d))) else {
            return Ok(value);
        };
        if self.bound(v).is_subset_of(cell) {
            return Ok(value);
        }
        let cut = if cell.lower == 0 {
            let mask = self.int_const(cell.upper);
            self.int_op(Opcode::IntAnd, smallvec![v, mask], None, 0)?
        } else {
            let bytes = (64 - cell.upper.leading_zeros() + 1) / 8;
            let size = self.int_const(i64::from(bytes));
            self.int_op(Opcode::IntSignext, smallvec![v, size], None, 0)?
        };
        Ok(Mapped::Out(cut))
    }
}

/// The integer op a call of Python's integer division or modulo helper
/// (`OS=12`, `OS=14`: function, dividend, divisor) computes.
pub(crate) fn python_division(opcode: Opcode, descr: Option<&Descr>) -> Option<Opcode> {
    matches!(opcode, Opcode::CallI | Opcode::CallPureI)
        .then(|| oopspec::python_division(descr))
        .flatten()
}

impl Optimizer<'_> {
    /// Output op `v` read the heap or divided: what its result can be.
    pub(crate) fn learn_read_bound(&mut self, v: ValueId) {
        let Some(index) = self.defining_op(v) else {
            return;
        };
        let op = &self.out.ops[index];
        // (Each read and division this knows of gives an integer.)
        if op.opcode.result_type() != Type::Int {
            return;
        }
        let descr = op.descr.map(|d| self.out.descr(d));
        let bound = read_bound(op.opcode, descr).or_else(|| {
            let os = python_division(op.opcode, descr).filter(|_| op.args.len() == 3)?;
            let (a, b) = (self.bound(op.args[1]), self.bound(op.args[2]));
            forward(os, &[a, b])
        });
        if let Some(bound) = bound {
            // A fresh result: nothing else is known of it yet.
            if let Ok(bound) = self.value_bound(v).meet(bound) {
                self.set_bound(v, bound);
            }
        }
    }

    /// `arg` is known to lie in `narrowed` from here on: keep that, and
    /// pass it back to the arguments of the op that produced it (seed
    /// 000: through `+` and `-` only where no wrap is possible, which the
    /// domain's refinements decide).
    pub(crate) fn narrow(&mut self, arg: Arg, narrowed: IntBound, depth: u32) {
        let Arg::Value(v) = arg else { return };
        if narrowed == self.value_bound(v) {
            return;
        }
        self.set_bound(v, narrowed);
        if let Some(c) = narrowed.as_constant() {
            let to = self.int_const(c);
            self.make_equal_to(v, to);
        }
        if depth >= MAX_BACKWARD_DEPTH {
            return;
        }
        let Some(index) = self.defining_op(v) else {
            return;
        };
        if self.passes.bug.is_some() && self.injected_inverse(index, narrowed, depth) {
            return;
        }
        let op = &self.out.ops[index];
        let truth = narrowed.as_constant().map(|c| c != 0);
        match (op.opcode, truth) {
            (Opcode::IntIsTrue | Opcode::IntIsZero, Some(truth)) => {
                let (opcode, arg) = (op.opcode, op.args[0]);
                self.remember_truth(opcode, arg, arg, truth);
                let nonzero = truth == (opcode == Opcode::IntIsTrue);
                let bound = self.bound(arg);
                let (refined, empty) = if nonzero {
                    bound.refine_true()
                } else {
                    bound.refine_false()
                };
                if !empty {
                    self.narrow(arg, refined, depth + 1);
                }
                return;
            }
            (_, Some(truth)) if relation(op.opcode, truth).is_some() => {
                self.learn_from_comparison(v, truth);
                return;
            }
            _ => {}
        }
        let checked = self.values[v.0 as usize].no_overflow;
        let operands = match op.opcode {
            Opcode::IntAdd => [Some(Operand::Add), Some(Operand::Add)],
            Opcode::IntAddOvf if checked => [Some(Operand::AddOvf), Some(Operand::AddOvf)],
            Opcode::IntSub => [Some(Operand::SubLeft), Some(Operand::SubRight)],
            Opcode::IntSubOvf if checked => [Some(Operand::SubOvfLeft), Some(Operand::SubOvfRight)],
            Opcode::IntAnd => [Some(Operand::And), Some(Operand::And)],
            Opcode::IntOr => [Some(Operand::Or), Some(Operand::Or)],
            Opcode::IntXor => [Some(Operand::Xor), Some(Operand::Xor)],
            Opcode::IntNeg => [Some(Operand::Neg), None],
            Opcode::IntInvert => [Some(Operand::Invert), None],
            _ => return,
        };
        let args = Args::from_slice(&op.args);
        for (i, operand) in operands.into_iter().enumerate() {
            let (Some(operand), Some(&own)) = (operand, args.get(i)) else {
                continue;
            };
            let other = args.get(1 - i).copied().unwrap_or(own);
            let (own_bound, other_bound) = (self.bound(own), self.bound(other));
            let (refined, empty) = own_bound.refine_by_result(operand, other_bound, narrowed);
            if !empty {
                self.narrow(own, refined, depth + 1);
            }
        }
    }
}
