//! A fact about one value that a guard could check: the witness a
//! peeled loop's body is optimized under and proved by. The optimizer
//! exports, for each argument of the loop's label, what the body takes
//! for granted about it; the validator turns each fact back into guards
//! (`Fact::guards`) and proves that the preamble establishes it and that
//! each pass of the body keeps it.

use crate::trace::{Arg, Const, Op, Pos, Trace};
use crate::{Opcode, Type};

/// What may be taken for granted about one value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fact {
    /// An integer within `[lower, upper]`.
    pub range: Option<(i64, i64)>,
    /// A reference that is not null.
    pub nonnull: bool,
    /// A reference to an object of this class (so not null).
    pub class: Option<Const>,
}

impl Fact {
    /// Nothing is known.
    pub fn is_empty(&self) -> bool {
        *self == Fact::default()
    }

    /// Appends to `trace` the guards that check this fact of `value`
    /// (comparisons and `guard_true`, `guard_class`, `guard_nonnull`), each
    /// guard with no fail arguments; returns how many ops it appended.
    pub fn guards(&self, trace: &mut Trace, value: Arg) -> usize {
        let before = trace.ops.len();
        let guard = |opcode, args| Op {
            fail_args: Some(Vec::new()),
            ..Op::new(opcode, args)
        };
        if let Some((lower, upper)) = self.range {
            for (compare, bound, limit) in [
                (Opcode::IntGe, lower, i64::MIN),
                (Opcode::IntLe, upper, i64::MAX),
            ] {
                if bound != limit {
                    let c = Arg::Const(trace.add_const(Const::Int(bound)));
                    let test = trace.push(Op::new(compare, vec![value, c]), "", Pos::default());
                    trace.push(
                        guard(Opcode::GuardTrue, vec![Arg::Value(test)]),
                        "",
                        Pos::default(),
                    );
                }
            }
        }
        if let Some(class) = &self.class {
            let c = Arg::Const(trace.add_const(class.clone()));
            trace.push(
                guard(Opcode::GuardNonnullClass, vec![value, c]),
                "",
                Pos::default(),
            );
        } else if self.nonnull {
            trace.push(guard(Opcode::GuardNonnull, vec![value]), "", Pos::default());
        }
        trace.ops.len() - before
    }

    /// Whether a value of type `ty` can have this fact.
    pub fn fits(&self, ty: Type) -> bool {
        match ty {
            Type::Int => !self.nonnull && self.class.is_none(),
            Type::Ref => self.range.is_none(),
            _ => self.is_empty(),
        }
    }
}
