//! The terms synthesis works with: the patterns it enumerates, the
//! cheaper terms it tries in their place, the constant functions and
//! conditions it may use, and how each evaluates on concrete values.

use traceopt_interp::{arith, Val};
use traceopt_ir::Opcode;

/// The binary integer ops of the rule language that synthesis uses.
pub const BINARY: [Opcode; 19] = [
    Opcode::IntAdd,
    Opcode::IntSub,
    Opcode::IntMul,
    Opcode::IntAnd,
    Opcode::IntOr,
    Opcode::IntXor,
    Opcode::IntLshift,
    Opcode::IntRshift,
    Opcode::UintRshift,
    Opcode::IntEq,
    Opcode::IntNe,
    Opcode::IntLt,
    Opcode::IntLe,
    Opcode::IntGt,
    Opcode::IntGe,
    Opcode::UintLt,
    Opcode::UintLe,
    Opcode::UintGt,
    Opcode::UintGe,
];

/// The unary ones.
pub const UNARY: [Opcode; 4] = [
    Opcode::IntNeg,
    Opcode::IntInvert,
    Opcode::IntIsZero,
    Opcode::IntIsTrue,
];

pub fn is_commutative(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        IntAdd | IntMul | IntAnd | IntOr | IntXor | IntEq | IntNe
    )
}

/// Concrete values of the pattern variables `x`, `y` and constants
/// `C1`, `C2`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Env {
    pub x: i64,
    pub y: i64,
    pub c1: i64,
    pub c2: i64,
}

/// A constant: a literal, a constant of the pattern, or a function of
/// them (which a rule computes in an assignment, `C = C1 + C2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constant {
    Lit(i64),
    C1,
    C2,
    Fun(Fun),
}

/// A function of the pattern's constants (equal when written alike).
#[derive(Clone, Copy, Debug)]
pub struct Fun {
    /// As the rule language writes it.
    pub text: &'static str,
    pub eval: fn(i64, i64) -> i64,
    /// Whether it reads `C2`.
    pub two: bool,
}

impl PartialEq for Fun {
    fn eq(&self, other: &Fun) -> bool {
        self.text == other.text
    }
}
impl Eq for Fun {}

impl PartialEq for Condition {
    fn eq(&self, other: &Condition) -> bool {
        self.text == other.text
    }
}
impl Eq for Condition {}

/// The functions of the constants a target may use.
pub const FUNS: [Fun; 9] = [
    Fun {
        text: "C1 + C2",
        eval: |a, b| a.wrapping_add(b),
        two: true,
    },
    Fun {
        text: "C1 - C2",
        eval: |a, b| a.wrapping_sub(b),
        two: true,
    },
    Fun {
        text: "C2 - C1",
        eval: |a, b| b.wrapping_sub(a),
        two: true,
    },
    Fun {
        text: "C1 & C2",
        eval: |a, b| a & b,
        two: true,
    },
    Fun {
        text: "C1 | C2",
        eval: |a, b| a | b,
        two: true,
    },
    Fun {
        text: "C1 ^ C2",
        eval: |a, b| a ^ b,
        two: true,
    },
    Fun {
        text: "C1 * C2",
        eval: |a, b| a.wrapping_mul(b),
        two: true,
    },
    Fun {
        text: "-C1",
        eval: |a, _| a.wrapping_neg(),
        two: false,
    },
    Fun {
        text: "~C1",
        eval: |a, _| !a,
        two: false,
    },
];

/// A condition on the pattern's constants (a rule's `check`; equal when
/// written alike).
#[derive(Clone, Copy, Debug)]
pub struct Condition {
    pub text: &'static str,
    pub holds: fn(i64, i64) -> bool,
    pub two: bool,
}

/// The conditions a rule may need, most general first.
pub const CONDITIONS: [Condition; 10] = [
    Condition {
        text: "C1 >= 0",
        holds: |a, _| a >= 0,
        two: false,
    },
    Condition {
        text: "C1 > 0",
        holds: |a, _| a > 0,
        two: false,
    },
    Condition {
        text: "C1 > 0 and C1 & (C1 - 1) == 0",
        holds: |a, _| a > 0 && a & (a - 1) == 0,
        two: false,
    },
    Condition {
        text: "C1 + C2 < LONG_BIT",
        holds: |a, b| a.wrapping_add(b) < 64,
        two: true,
    },
    Condition {
        text: "C1 + C2 >= LONG_BIT",
        holds: |a, b| a.wrapping_add(b) >= 64,
        two: true,
    },
    Condition {
        text: "C1 == C2",
        holds: |a, b| a == b,
        two: true,
    },
    Condition {
        text: "C1 & C2 == 0",
        holds: |a, b| a & b == 0,
        two: true,
    },
    Condition {
        text: "C1 & C2 == C2",
        holds: |a, b| a & b == b,
        two: true,
    },
    Condition {
        text: "C1 & C2 == C1",
        holds: |a, b| a & b == a,
        two: true,
    },
    Condition {
        text: "C1 <= C2",
        holds: |a, b| a <= b,
        two: true,
    },
];

/// A term of the rule language's integer part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    X,
    Y,
    Const(Constant),
    Op(Opcode, Vec<Term>),
}

impl Term {
    pub fn op(opcode: Opcode, args: Vec<Term>) -> Term {
        Term::Op(opcode, args)
    }

    /// The value on `env`; `None` where an op is undefined (a shift
    /// count outside 0..64, say).
    pub fn eval(&self, env: &Env) -> Option<i64> {
        match self {
            Term::X => Some(env.x),
            Term::Y => Some(env.y),
            Term::Const(Constant::Lit(v)) => Some(*v),
            Term::Const(Constant::C1) => Some(env.c1),
            Term::Const(Constant::C2) => Some(env.c2),
            Term::Const(Constant::Fun(f)) => Some((f.eval)(env.c1, env.c2)),
            Term::Op(opcode, args) => {
                let args: Option<Vec<Val>> =
                    args.iter().map(|a| a.eval(env).map(Val::Int)).collect();
                arith::eval(*opcode, &args?).ok()?.as_int()
            }
        }
    }

    /// The ops of the term.
    pub fn ops(&self) -> Vec<Opcode> {
        match self {
            Term::Op(opcode, args) => {
                let mut ops = vec![*opcode];
                ops.extend(args.iter().flat_map(Term::ops));
                ops
            }
            _ => Vec::new(),
        }
    }

    pub fn cost(&self) -> u32 {
        self.ops().iter().map(|op| op.cost()).sum()
    }

    pub fn uses(&self, wanted: &Term) -> bool {
        self == wanted
            || match self {
                Term::Op(_, args) => args.iter().any(|a| a.uses(wanted)),
                _ => false,
            }
    }

    /// The function of the constants it uses, if any (a rule assigns it).
    pub fn fun(&self) -> Option<Fun> {
        match self {
            Term::Const(Constant::Fun(f)) => Some(*f),
            Term::Op(_, args) => args.iter().find_map(Term::fun),
            _ => None,
        }
    }

    /// As the rule language writes it (a function of the constants is
    /// the assigned name `C`).
    pub fn text(&self) -> String {
        match self {
            Term::X => "x".into(),
            Term::Y => "y".into(),
            Term::Const(Constant::Lit(v)) => v.to_string(),
            Term::Const(Constant::C1) => "C1".into(),
            Term::Const(Constant::C2) => "C2".into(),
            Term::Const(Constant::Fun(_)) => "C".into(),
            Term::Op(opcode, args) => {
                let args: Vec<String> = args.iter().map(Term::text).collect();
                format!("{}({})", opcode.name(), args.join(", "))
            }
        }
    }

    /// As a trace's op lines: `x` is `i0`, `y` is `i1`, the constants as
    /// in `env`; the value of the whole is the last line's (or an input
    /// or constant, with no line).
    pub fn trace_lines(&self, env: &Env, lines: &mut Vec<String>) -> String {
        match self {
            Term::X => "i0".into(),
            Term::Y => "i1".into(),
            Term::Op(opcode, args) => {
                let args: Vec<String> = args.iter().map(|a| a.trace_lines(env, lines)).collect();
                let name = format!("i{}", lines.len() + 2);
                lines.push(format!("{name} = {}({})", opcode.name(), args.join(", ")));
                name
            }
            constant => constant
                .eval(env)
                .expect("a constant has a value")
                .to_string(),
        }
    }
}
