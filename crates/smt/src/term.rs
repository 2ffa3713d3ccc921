//! Terms: bitvectors and booleans, printed as SMT-LIB 2.
//!
//! A small tree type of our own (no solver bindings): constants, named
//! variables, and applications of a fixed set of functions. Children are
//! shared (`Rc`), but printing writes a tree, so long chains should be
//! named with `define-fun` (the encoders do: one name per trace value) to
//! keep queries linear in the size of the trace.

use std::fmt;
use std::rc::Rc;

/// A sort: a bitvector of some width, or a boolean.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Sort {
    Bv(u32),
    Bool,
}

impl fmt::Display for Sort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sort::Bv(w) => write!(f, "(_ BitVec {w})"),
            Sort::Bool => f.write_str("Bool"),
        }
    }
}

/// The functions terms are built from; the SMT-LIB name is in `Display`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Fun {
    BvAdd,
    BvSub,
    BvMul,
    BvAnd,
    BvOr,
    BvXor,
    BvNot,
    BvNeg,
    BvShl,
    BvLshr,
    BvAshr,
    BvSdiv,
    BvSrem,
    BvSmod,
    BvUlt,
    BvUle,
    BvSlt,
    BvSle,
    Eq,
    Not,
    And,
    Or,
    Implies,
    Ite,
    /// `(_ extract hi lo)`
    Extract(u32, u32),
    /// `(_ sign_extend n)`
    SignExtend(u32),
    /// `(_ zero_extend n)`
    ZeroExtend(u32),
}

impl fmt::Display for Fun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Fun::BvAdd => "bvadd",
            Fun::BvSub => "bvsub",
            Fun::BvMul => "bvmul",
            Fun::BvAnd => "bvand",
            Fun::BvOr => "bvor",
            Fun::BvXor => "bvxor",
            Fun::BvNot => "bvnot",
            Fun::BvNeg => "bvneg",
            Fun::BvShl => "bvshl",
            Fun::BvLshr => "bvlshr",
            Fun::BvAshr => "bvashr",
            Fun::BvSdiv => "bvsdiv",
            Fun::BvSrem => "bvsrem",
            Fun::BvSmod => "bvsmod",
            Fun::BvUlt => "bvult",
            Fun::BvUle => "bvule",
            Fun::BvSlt => "bvslt",
            Fun::BvSle => "bvsle",
            Fun::Eq => "=",
            Fun::Not => "not",
            Fun::And => "and",
            Fun::Or => "or",
            Fun::Implies => "=>",
            Fun::Ite => "ite",
            Fun::Extract(hi, lo) => return write!(f, "(_ extract {hi} {lo})"),
            Fun::SignExtend(n) => return write!(f, "(_ sign_extend {n})"),
            Fun::ZeroExtend(n) => return write!(f, "(_ zero_extend {n})"),
        };
        f.write_str(name)
    }
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Term {
    /// A bitvector constant of the given width (the low `width` bits).
    Bv {
        value: u128,
        width: u32,
    },
    Bool(bool),
    /// A declared or defined name.
    Var(Rc<str>),
    App(Fun, Rc<[Term]>),
}

impl Term {
    /// A 64-bit constant.
    pub fn word(value: i64) -> Term {
        Term::Bv {
            value: value as u64 as u128,
            width: 64,
        }
    }

    pub fn var(name: &str) -> Term {
        Term::Var(name.into())
    }

    pub fn app(fun: Fun, args: &[Term]) -> Term {
        Term::App(fun, args.into())
    }

    pub fn ite(cond: &Term, then: &Term, otherwise: &Term) -> Term {
        Term::app(Fun::Ite, &[cond.clone(), then.clone(), otherwise.clone()])
    }

    pub fn not(&self) -> Term {
        match self {
            Term::Bool(b) => Term::Bool(!b),
            _ => Term::app(Fun::Not, std::slice::from_ref(self)),
        }
    }

    pub fn eq(&self, other: &Term) -> Term {
        Term::app(Fun::Eq, &[self.clone(), other.clone()])
    }

    /// Conjunction; `true` for none, simplified around constants.
    pub fn and_all(terms: impl IntoIterator<Item = Term>) -> Term {
        let mut parts: Vec<Term> = Vec::new();
        for t in terms {
            match t {
                Term::Bool(true) => {}
                Term::Bool(false) => return Term::Bool(false),
                t => parts.push(t),
            }
        }
        match parts.len() {
            0 => Term::Bool(true),
            1 => parts.pop().unwrap(),
            _ => Term::App(Fun::And, parts.into()),
        }
    }

    pub fn and(&self, other: &Term) -> Term {
        Term::and_all([self.clone(), other.clone()])
    }

    pub fn implies(&self, other: &Term) -> Term {
        match (self, other) {
            (Term::Bool(true), _) => other.clone(),
            (_, Term::Bool(true)) => Term::Bool(true),
            _ => Term::app(Fun::Implies, &[self.clone(), other.clone()]),
        }
    }

    /// A binary bitvector operation.
    pub fn bv(&self, fun: Fun, other: &Term) -> Term {
        Term::app(fun, &[self.clone(), other.clone()])
    }

    /// A unary operation.
    pub fn un(&self, fun: Fun) -> Term {
        Term::app(fun, std::slice::from_ref(self))
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Bv { value, width } => {
                let mask = if *width >= 128 {
                    u128::MAX
                } else {
                    (1u128 << width) - 1
                };
                let value = value & mask;
                if width % 4 == 0 {
                    write!(f, "#x{value:0digits$x}", digits = (*width / 4) as usize)
                } else {
                    write!(f, "#b{value:0digits$b}", digits = *width as usize)
                }
            }
            Term::Bool(b) => write!(f, "{b}"),
            Term::Var(name) => f.write_str(name),
            Term::App(fun, args) => {
                write!(f, "({fun}")?;
                for arg in args.iter() {
                    write!(f, " {arg}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_smtlib() {
        let x = Term::var("x");
        let t = Term::ite(
            &x.bv(Fun::BvSlt, &Term::word(-1)),
            &Term::word(1),
            &Term::word(0),
        );
        assert_eq!(
            t.to_string(),
            "(ite (bvslt x #xffffffffffffffff) #x0000000000000001 #x0000000000000000)"
        );
        let wide = x.un(Fun::SignExtend(64)).un(Fun::Extract(127, 64));
        assert_eq!(
            wide.to_string(),
            "((_ extract 127 64) ((_ sign_extend 64) x))"
        );
        assert_eq!(Term::Bv { value: 5, width: 3 }.to_string(), "#b101");
        assert_eq!(
            Term::and_all([Term::Bool(true), x.eq(&x)]).to_string(),
            "(= x x)"
        );
        assert_eq!(Term::and_all([]).to_string(), "true");
    }
}
