//! What the generated matcher needs from the optimizer, and what it gives
//! back. The matcher is generic over [`Subject`], so the rules crate does
//! not depend on the optimizer's data structures.

use traceopt_domains::IntBound;
use traceopt_ir::Opcode;

/// How a value looks to a pattern.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Head<V> {
    /// Produced by an integer op (unary ops repeat their argument).
    Op(Opcode, V, V),
    Const(i64),
    /// An input, or produced by an op the rules do not look into.
    Other,
}

/// The optimizer's view of its values, as the matcher asks it.
pub trait Subject {
    type Value: Copy;
    fn head(&self, value: Self::Value) -> Head<Self::Value>;
    fn constant(&self, value: Self::Value) -> Option<i64>;
    fn bound(&self, value: Self::Value) -> IntBound;
    /// The same value (the same op result, or equal constants).
    fn same(&self, a: Self::Value, b: Self::Value) -> bool;
    /// May rule `index` (of `RULES`) be used? All may, unless an analysis
    /// switches some off (the confluence report does).
    fn enabled(&self, index: usize) -> bool {
        let _ = index;
        true
    }
}

/// The result of a rewrite: an existing value, a constant, or new ops.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Built<V> {
    Value(V),
    Const(i64),
    Op(Opcode, Vec<Built<V>>),
}

/// A rule of the generated matcher, for statistics and messages.
#[derive(Clone, Copy, Debug)]
pub struct RuleInfo {
    pub name: &'static str,
    pub file: &'static str,
    pub line: u32,
    pub root: Opcode,
    /// The left-hand side, in prefix order (for generators that build
    /// what the rule matches, such as the fuzzer's templates).
    pub pattern: &'static [PatternNode],
}

/// A node of a rule's left-hand side: an op and how many arguments
/// follow it, a variable (a name starting with `C` matches constants
/// only), or a literal constant.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PatternNode {
    Op(Opcode, u8),
    Var(&'static str),
    Const(i64),
}
