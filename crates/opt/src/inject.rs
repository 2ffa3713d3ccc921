//! Miscompilations from seed 000, built in on purpose and switched on
//! only to test that the fuzzer finds them (`Passes::bug`). Each is a
//! wrong inference PyPy's optimizer once made:
//!
//! - `wrapping-add`: from `x + C` below a bound, narrow `x` as if the
//!   sum could not wrap (`int_add(x, 10) < 15` gives `x < 5`);
//! - `neg-minint`: from `-x` in a range, narrow `x` as if `-MININT` were
//!   not `MININT` (`-x < 0` gives `x > 0`);
//! - `mul-inverse`: from `x * C == D`, conclude `x == D / C`
//!   (`12 == x * 12` gives `x == 1`);
//! - `lshift-inverse`: from `x << k == D`, conclude `x == D >> k`, as if
//!   no bits were shifted out;
//! - `sub-ovf-after-add`: after `z = int_add(x, y)`, reuse `x` for
//!   `int_sub_ovf(z, y)` and drop its overflow check;
//! - `ge-as-unsigned`: a known `int_ge(x, y)` teaches what `uint_ge(x,
//!   y)` would (a mutant of `remember_truth` no test caught, #19), so a
//!   later `uint_lt(x, y)` folds to 0 (wrong for `x = 0, y = -1`).
//!
//! And four allocation-removal and heap-cache mistakes (`Bug::is_heap`),
//! which the fuzzer's heap traces must find:
//!
//! - `call-keeps-cache`: a call, whatever its effect info, leaves the
//!   known fields and items as they were (no invalidation);
//! - `alias-forward`: a field write forgets only what was known of the
//!   same reference, so a load is forwarded across a write to an object
//!   that may be the same one;
//! - `resume-drops-field`: a virtual in resume data loses its last field;
//! - `write-after-aliasing-read`: a kept (lazy) field write is not
//!   emitted before a read of that field from an object that may be the
//!   same one, but later, after the read.
//!
//! And one of loops, which the fuzzer's traces with a label inside
//! (`Sketch::insert_label`) must find:
//!
//! - `label-keeps-facts`: a label inside the input is optimized as any
//!   op: what was known of its arguments before it (bounds, constants,
//!   the ops that made them) is taken for granted after it, where each
//!   jump to it passes new values (a peeled loop optimized again did
//!   this, session 60).
//!
//! And two ways for the optimizer to fail without a wrong answer, which
//! `traceopt fuzz` must catch although no panic is raised (`Bug::KILLERS`,
//! left out of `Bug::ALL`: they would end a test process):
//!
//! - `stack-overflow`: an op whose bounds cannot overflow is taken for an
//!   overflow-checked one whose check can go, and optimized again, for
//!   ever (a mutant of `int_op` did this, #19); the stack overflows and
//!   the process aborts;
//! - `endless-loop`: rewriting `int_neg` of a constant-free value is
//!   repeated until nothing changes, and a mistake in the change test
//!   says something always did; the optimizer never returns.

use traceopt_domains::IntBound;
use traceopt_ir::{Arg, Opcode};

use crate::driver::Optimizer;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bug {
    WrappingAdd,
    NegMinint,
    MulInverse,
    LshiftInverse,
    SubOvfAfterAdd,
    GeAsUnsigned,
    CallKeepsCache,
    AliasForward,
    ResumeDropsField,
    WriteAfterAliasingRead,
    LabelKeepsFacts,
    StackOverflow,
    EndlessLoop,
}

impl Bug {
    pub const ALL: [Bug; 11] = [
        Bug::WrappingAdd,
        Bug::NegMinint,
        Bug::MulInverse,
        Bug::LshiftInverse,
        Bug::SubOvfAfterAdd,
        Bug::GeAsUnsigned,
        Bug::CallKeepsCache,
        Bug::AliasForward,
        Bug::ResumeDropsField,
        Bug::WriteAfterAliasingRead,
        Bug::LabelKeepsFacts,
    ];

    /// The bugs that kill or hang the optimizer's process.
    pub const KILLERS: [Bug; 2] = [Bug::StackOverflow, Bug::EndlessLoop];

    /// A heap bug, which only traces with objects can show.
    pub fn is_heap(self) -> bool {
        matches!(
            self,
            Bug::CallKeepsCache
                | Bug::AliasForward
                | Bug::ResumeDropsField
                | Bug::WriteAfterAliasingRead
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Bug::WrappingAdd => "wrapping-add",
            Bug::NegMinint => "neg-minint",
            Bug::MulInverse => "mul-inverse",
            Bug::LshiftInverse => "lshift-inverse",
            Bug::SubOvfAfterAdd => "sub-ovf-after-add",
            Bug::GeAsUnsigned => "ge-as-unsigned",
            Bug::CallKeepsCache => "call-keeps-cache",
            Bug::AliasForward => "alias-forward",
            Bug::ResumeDropsField => "resume-drops-field",
            Bug::WriteAfterAliasingRead => "write-after-aliasing-read",
            Bug::LabelKeepsFacts => "label-keeps-facts",
            Bug::StackOverflow => "stack-overflow",
            Bug::EndlessLoop => "endless-loop",
        }
    }

    pub fn from_name(name: &str) -> Option<Bug> {
        (Bug::ALL.into_iter().chain(Bug::KILLERS)).find(|b| b.name() == name)
    }
}

impl Optimizer<'_> {
    /// Whether injected bug `bug` is on.
    pub(crate) fn bug(&self, bug: Bug) -> bool {
        self.passes.bug == Some(bug)
    }

    /// The injected wrong inverses (`inject`): narrows the argument of
    /// op `index` as the bug would, and says whether it did.
    pub(crate) fn injected_inverse(
        &mut self,
        index: usize,
        narrowed: IntBound,
        depth: u32,
    ) -> bool {
        let op = &self.out.ops[index];
        let (opcode, args) = (op.opcode, op.args.clone());
        let constant = |a: Option<&Arg>| a.and_then(|&a| self.bound(a).as_constant());
        let wrong = match (self.passes.bug, opcode) {
            (Some(Bug::WrappingAdd), Opcode::IntAdd) => constant(args.get(1)).map(|c| {
                let upper = narrowed.upper.saturating_sub(c);
                (args[0], IntBound::range(i64::MIN, upper))
            }),
            (Some(Bug::NegMinint), Opcode::IntNeg) => Some((
                args[0],
                IntBound::range(
                    narrowed.upper.saturating_neg(),
                    narrowed.lower.saturating_neg(),
                ),
            )),
            (Some(Bug::MulInverse), Opcode::IntMul) => {
                match (narrowed.as_constant(), constant(args.get(1))) {
                    (Some(d), Some(c)) if c != 0 && d % c == 0 => {
                        Some((args[0], IntBound::constant(d / c)))
                    }
                    _ => None,
                }
            }
            (Some(Bug::LshiftInverse), Opcode::IntLshift) => {
                match (narrowed.as_constant(), constant(args.get(1))) {
                    (Some(d), Some(k)) if (0..64).contains(&k) => {
                        Some((args[0], IntBound::constant(d >> k)))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match wrong {
            Some((arg, bound)) => {
                self.narrow(arg, bound, depth + 1);
                true
            }
            None => false,
        }
    }

    /// `stack-overflow`: says that an `int_add` that cannot overflow is
    /// to be optimized again without its overflow check, which it never
    /// had: `int_op` recurses for ever.
    pub(crate) fn injected_recursion(&self, opcode: Opcode, bounds: &[IntBound]) -> bool {
        self.bug(Bug::StackOverflow)
            && opcode == Opcode::IntAdd
            && bounds[0].add_cannot_overflow(bounds[1])
    }

    /// `endless-loop`: on `int_neg`, a rewrite to a fixed point whose
    /// change test always says that something changed.
    pub(crate) fn injected_endless_loop(&self, opcode: Opcode) {
        if self.bug(Bug::EndlessLoop) && opcode == Opcode::IntNeg {
            let mut changed = true;
            while std::hint::black_box(changed) {
                changed = true;
            }
        }
    }
}
