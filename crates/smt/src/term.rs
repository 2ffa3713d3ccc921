//! Terms: bitvectors and booleans (and, for the lemmas the domain proofs
//! state about exact arithmetic, integers; IEEE doubles for the meaning
//! of float ops), printed as SMT-LIB 2.
//!
//! A small tree type of our own (no solver bindings): constants, named
//! variables, applications of a fixed set of functions, and universal
//! quantifiers. Children are shared (`Rc`), and printing keeps the sharing:
//! a node reached from two places is written once, in a `let`, so a term
//! built as a DAG (the abstract domains' proofs build large ones) prints in
//! size linear in the number of distinct nodes.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use crate::names::Name;

/// A sort: a bitvector of some width, a boolean, or an array from
/// bitvectors to bitvectors (a heap: objects, or object and index, to
/// values).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Sort {
    Bv(u32),
    Bool,
    Array {
        index: u32,
        value: u32,
    },
    /// Mathematical integers (lemmas about exact products and quotients).
    Int,
}

impl fmt::Display for Sort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sort::Bv(w) => write!(f, "(_ BitVec {w})"),
            Sort::Bool => f.write_str("Bool"),
            Sort::Int => f.write_str("Int"),
            Sort::Array { index, value } => {
                write!(f, "(Array (_ BitVec {index}) (_ BitVec {value}))")
            }
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
    /// Pairwise different: one term for what would be quadratically many
    /// disequalities.
    Distinct,
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
    /// `(select array index)`
    Select,
    /// `(store array index value)`
    Store,
    /// `(concat high low)`
    Concat,
    /// An uninterpreted function: the first argument is its name
    /// (`Term::apply`), the rest its arguments.
    Apply,
    /// Integer arithmetic: `+`, `-` (binary), `*`, SMT-LIB `div` (the
    /// remainder is never negative), `<=`, `<`.
    IntAdd,
    IntSub,
    IntMul,
    IntDiv,
    IntLe,
    IntLt,
    /// IEEE doubles (`(_ FloatingPoint 11 53)`), rounding to nearest even
    /// where the operation rounds: from a word's bits; from a signed
    /// word's value; to a signed word, rounding toward zero (unspecified
    /// where it does not fit); `+ - * /`; `<`, `<=`, `=` (IEEE's: NaN is
    /// unequal to all, -0 equals +0); is NaN.
    FpOfBits,
    FpOfSigned,
    FpToSigned,
    FpAdd,
    FpSub,
    FpMul,
    FpDiv,
    FpLt,
    FpLe,
    FpEq,
    FpIsNan,
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
            Fun::Distinct => "distinct",
            Fun::Not => "not",
            Fun::And => "and",
            Fun::Or => "or",
            Fun::Implies => "=>",
            Fun::Ite => "ite",
            Fun::Extract(hi, lo) => return write!(f, "(_ extract {hi} {lo})"),
            Fun::SignExtend(n) => return write!(f, "(_ sign_extend {n})"),
            Fun::ZeroExtend(n) => return write!(f, "(_ zero_extend {n})"),
            Fun::Select => "select",
            Fun::Store => "store",
            Fun::Concat => "concat",
            Fun::Apply => "",
            Fun::IntAdd => "+",
            Fun::IntSub => "-",
            Fun::IntMul => "*",
            Fun::IntDiv => "div",
            Fun::IntLe => "<=",
            Fun::IntLt => "<",
            Fun::FpOfBits => "(_ to_fp 11 53)",
            Fun::FpOfSigned => "(_ to_fp 11 53) RNE",
            Fun::FpToSigned => "(_ fp.to_sbv 64) RTZ",
            Fun::FpAdd => "fp.add RNE",
            Fun::FpSub => "fp.sub RNE",
            Fun::FpMul => "fp.mul RNE",
            Fun::FpDiv => "fp.div RNE",
            Fun::FpLt => "fp.lt",
            Fun::FpLe => "fp.leq",
            Fun::FpEq => "fp.eq",
            Fun::FpIsNan => "fp.isNaN",
        };
        f.write_str(name)
    }
}

#[derive(Clone, Debug)]
pub enum Term {
    /// A bitvector constant of the given width (the low `width` bits).
    Bv {
        value: u128,
        width: u32,
    },
    Bool(bool),
    /// An integer constant.
    Int(i64),
    /// A declared or defined name.
    Var(Name),
    App(Fun, Rc<[Term]>),
    /// `(forall ((name sort) ...) body)`.
    Forall(Rc<[(Name, Sort)]>, Rc<Term>),
    /// `(lambda ((name sort) ...) body)`: an array whose value at the
    /// given index is `body` (z3 takes it; cvc5 only in higher-order
    /// logic).
    Lambda(Rc<[(Name, Sort)]>, Rc<Term>),
}

/// Structural equality. Terms are DAGs, and two built apart may share
/// sub-terms within themselves (a heap version read in several places),
/// so the nodes found equal are remembered: a comparison visits each pair
/// of nodes once, not every path to them.
impl PartialEq for Term {
    fn eq(&self, other: &Term) -> bool {
        equal(self, other, &mut HashSet::new())
    }
}

impl Eq for Term {}

/// Hashes the top of a term only (three levels): equal terms hash alike,
/// and a deep DAG is not walked path by path.
impl Hash for Term {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_top(self, state, 3);
    }
}

fn hash_top<H: Hasher>(term: &Term, state: &mut H, depth: u32) {
    std::mem::discriminant(term).hash(state);
    match term {
        Term::Bv { value, width } => (value, width).hash(state),
        Term::Bool(b) => b.hash(state),
        Term::Int(i) => i.hash(state),
        Term::Var(name) => name.hash(state),
        Term::App(fun, args) => {
            (fun, args.len()).hash(state);
            if depth > 0 {
                args.iter().for_each(|a| hash_top(a, state, depth - 1));
            }
        }
        Term::Forall(vars, body) | Term::Lambda(vars, body) => {
            vars.hash(state);
            if depth > 0 {
                hash_top(body, state, depth - 1);
            }
        }
    }
}

/// `array[index]` with no `lambda` in the way (see `Term::read`), or
/// `None` where no `lambda` is under `array`'s stores and `ite`s; `seen`
/// holds the arrays already read (a DAG shares them between branches).
fn read_through(
    array: &Term,
    index: &Term,
    seen: &mut HashMap<usize, Option<Term>>,
) -> Option<Term> {
    let key = array.node_id();
    if let Some(done) = key.and_then(|k| seen.get(&k)) {
        return done.clone();
    }
    let read = match array {
        Term::Lambda(vars, body) if vars.len() == 1 => {
            substitute(body, &vars[0].0, index, &mut HashMap::new())
        }
        Term::App(Fun::Store, parts) => read_through(&parts[0], index, seen)
            .map(|below| Term::ite(&index.eq(&parts[1]), &parts[2], &below)),
        Term::App(Fun::Ite, parts) => {
            let then = read_through(&parts[1], index, seen);
            let otherwise = read_through(&parts[2], index, seen);
            (then.is_some() || otherwise.is_some()).then(|| {
                let then = then.unwrap_or_else(|| parts[1].select(index));
                let otherwise = otherwise.unwrap_or_else(|| parts[2].select(index));
                Term::ite(&parts[0], &then, &otherwise)
            })
        }
        _ => None,
    };
    if let Some(k) = key {
        seen.insert(k, read.clone());
    }
    read
}

/// `term` with `value` for the free variable `var`, each shared node
/// rewritten once (`done`); `None` where `term` binds a variable of its
/// own (whose name `value` might hold).
fn substitute(
    term: &Term,
    var: &Name,
    value: &Term,
    done: &mut HashMap<usize, Term>,
) -> Option<Term> {
    Some(match term {
        Term::Var(name) if name == var => value.clone(),
        Term::App(fun, args) => {
            let key = Rc::as_ptr(args) as *const u8 as usize;
            if let Some(new) = done.get(&key) {
                return Some(new.clone());
            }
            let new_args = (args.iter())
                .map(|a| substitute(a, var, value, done))
                .collect::<Option<Vec<Term>>>()?;
            let new = Term::rebuilt(*fun, &new_args);
            done.insert(key, new.clone());
            new
        }
        Term::Forall(..) | Term::Lambda(..) => return None,
        _ => term.clone(),
    })
}

/// `a == b`, with the pairs of application nodes already found equal.
fn equal(a: &Term, b: &Term, same: &mut HashSet<(usize, usize)>) -> bool {
    match (a, b) {
        (Term::App(f, xs), Term::App(g, ys)) => {
            if f != g || xs.len() != ys.len() {
                return false;
            }
            let key = (
                Rc::as_ptr(xs) as *const u8 as usize,
                Rc::as_ptr(ys) as *const u8 as usize,
            );
            if key.0 == key.1 || same.contains(&key) {
                return true;
            }
            let equal = xs.iter().zip(ys.iter()).all(|(x, y)| equal(x, y, same));
            if equal {
                same.insert(key);
            }
            equal
        }
        (Term::Forall(v, x), Term::Forall(w, y)) | (Term::Lambda(v, x), Term::Lambda(w, y)) => {
            v == w && (Rc::ptr_eq(x, y) || equal(x, y, same))
        }
        (Term::Bv { value: a, width: w }, Term::Bv { value: b, width: v }) => a == b && w == v,
        (Term::Bool(a), Term::Bool(b)) => a == b,
        (Term::Int(a), Term::Int(b)) => a == b,
        (Term::Var(a), Term::Var(b)) => a == b,
        _ => false,
    }
}

impl Term {
    /// A 64-bit constant.
    pub fn word(value: i64) -> Term {
        Term::Bv {
            value: value as u64 as u128,
            width: 64,
        }
    }

    /// A variable with a name made by code (`Name::invented`).
    pub fn var(name: &str) -> Term {
        Term::Var(Name::invented(name))
    }

    /// A variable with a name a user wrote (`Name::user`).
    pub fn user(name: &str) -> Term {
        Term::Var(Name::user(name))
    }

    pub fn name(name: &Name) -> Term {
        Term::Var(name.clone())
    }

    pub fn app(fun: Fun, args: &[Term]) -> Term {
        Term::App(fun, args.into())
    }

    /// `if cond then then else otherwise`, decided where `cond` is a
    /// constant or both branches are one node.
    pub fn ite(cond: &Term, then: &Term, otherwise: &Term) -> Term {
        match cond {
            Term::Bool(true) => then.clone(),
            Term::Bool(false) => otherwise.clone(),
            _ if then.same_node(otherwise) => then.clone(),
            _ => Term::app(Fun::Ite, &[cond.clone(), then.clone(), otherwise.clone()]),
        }
    }

    pub fn not(&self) -> Term {
        match self {
            Term::Bool(b) => Term::Bool(!b),
            _ => Term::app(Fun::Not, std::slice::from_ref(self)),
        }
    }

    /// Equality; `true` where both sides are one node, `false` for two
    /// different literals (a read of a store chain at a key it wrote
    /// decides itself so).
    pub fn eq(&self, other: &Term) -> Term {
        if self.same_node(other) {
            return Term::Bool(true);
        }
        match (self, other) {
            (Term::Bv { .. }, Term::Bv { .. })
            | (Term::Bool(_), Term::Bool(_))
            | (Term::Int(_), Term::Int(_)) => Term::Bool(false),
            _ => Term::app(Fun::Eq, &[self.clone(), other.clone()]),
        }
    }

    /// Whether the two are the same node: the same literal or name, or
    /// applications sharing their arguments. (Cheap, unlike `==`, which
    /// compares structures.)
    fn same_node(&self, other: &Term) -> bool {
        match (self, other) {
            (Term::App(f, xs), Term::App(g, ys)) => f == g && Rc::ptr_eq(xs, ys),
            (Term::Var(x), Term::Var(y)) => x == y,
            (Term::Bv { .. } | Term::Bool(_) | Term::Int(_), _) => self == other,
            _ => false,
        }
    }

    /// `fun` of `args`, through the constructors that simplify (for terms
    /// rebuilt with new arguments).
    fn rebuilt(fun: Fun, args: &[Term]) -> Term {
        match (fun, args) {
            (Fun::Eq, [x, y]) => x.eq(y),
            (Fun::Ite, [c, t, e]) => Term::ite(c, t, e),
            (Fun::Not, [x]) => x.not(),
            (Fun::And, _) => Term::and_all(args.iter().cloned()),
            (Fun::Or, _) => Term::or_all(args.iter().cloned()),
            (Fun::Implies, [x, y]) => x.implies(y),
            _ => Term::app(fun, args),
        }
    }

    /// The terms are pairwise different; `true` for fewer than two.
    pub fn distinct(terms: &[Term]) -> Term {
        match terms {
            [] | [_] => Term::Bool(true),
            [x, y] => x.eq(y).not(),
            _ => Term::app(Fun::Distinct, terms),
        }
    }

    /// Conjunction; `true` for none, simplified around constants.
    pub fn and_all(terms: impl IntoIterator<Item = Term>) -> Term {
        Term::connective(terms, true, Fun::And)
    }

    /// Disjunction; `false` for none, simplified around constants.
    pub fn or_all(terms: impl IntoIterator<Item = Term>) -> Term {
        Term::connective(terms, false, Fun::Or)
    }

    /// `fun` of `terms`, where `unit` is its neutral constant (and the
    /// other one decides it).
    fn connective(terms: impl IntoIterator<Item = Term>, unit: bool, fun: Fun) -> Term {
        let mut parts: Vec<Term> = Vec::new();
        for t in terms {
            match t {
                Term::Bool(b) if b == unit => {}
                Term::Bool(b) => return Term::Bool(b),
                // (A repeat among the first few parts: a long list is
                // not searched, so building one stays linear.)
                t if parts.len() <= 8 && parts.iter().any(|p| p.same_node(&t)) => {}
                t => parts.push(t),
            }
        }
        match parts.len() {
            0 => Term::Bool(unit),
            1 => parts.pop().unwrap(),
            _ => Term::App(fun, parts.into()),
        }
    }

    pub fn and(&self, other: &Term) -> Term {
        Term::and_all([self.clone(), other.clone()])
    }

    /// Disjunction, simplified around constants.
    pub fn or(&self, other: &Term) -> Term {
        match (self, other) {
            (Term::Bool(true), _) | (_, Term::Bool(true)) => Term::Bool(true),
            (Term::Bool(false), x) | (x, Term::Bool(false)) => x.clone(),
            _ if self.same_node(other) => self.clone(),
            _ => Term::app(Fun::Or, &[self.clone(), other.clone()]),
        }
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

    /// The constant a 64-bit sum of terms and constants (`bvadd`, `bvsub`)
    /// always equals, where its terms cancel: `(x + 12) - x` is 12. `None`
    /// where a term is left. A name that `definition` gives a term for is
    /// read as that term (up to a few dozen of them).
    pub fn constant_sum(&self, definition: &dyn Fn(&Term) -> Option<Term>) -> Option<u64> {
        struct Sum<'d> {
            atoms: HashMap<Term, u64>,
            total: u64,
            definition: &'d dyn Fn(&Term) -> Option<Term>,
            budget: usize,
        }
        impl Sum<'_> {
            fn add(&mut self, t: &Term, sign: u64) {
                match t {
                    Term::Bv { value, width: 64 } => {
                        self.total = self.total.wrapping_add(sign.wrapping_mul(*value as u64))
                    }
                    Term::App(Fun::BvAdd, parts) => parts.iter().for_each(|p| self.add(p, sign)),
                    Term::App(Fun::BvSub, parts) if parts.len() == 2 => {
                        self.add(&parts[0], sign);
                        self.add(&parts[1], sign.wrapping_neg());
                    }
                    other => match (self.definition)(other) {
                        Some(term) if self.budget > 0 => {
                            self.budget -= 1;
                            self.add(&term, sign)
                        }
                        _ => {
                            let k = self.atoms.entry(other.clone()).or_insert(0);
                            *k = k.wrapping_add(sign);
                        }
                    },
                }
            }
        }
        let mut sum = Sum {
            atoms: HashMap::new(),
            total: 0,
            definition,
            budget: 32,
        };
        sum.add(self, 1);
        sum.atoms.values().all(|&k| k == 0).then_some(sum.total)
    }

    /// A unary operation.
    pub fn un(&self, fun: Fun) -> Term {
        Term::app(fun, std::slice::from_ref(self))
    }

    /// `body` for every value of the named (invented) variables.
    pub fn forall(vars: &[(&str, Sort)], body: &Term) -> Term {
        let vars: Vec<(Name, Sort)> = vars.iter().map(|(n, s)| (Name::invented(n), *s)).collect();
        Term::Forall(vars.into(), Rc::new(body.clone()))
    }

    /// The array that maps each index (the invented variable `var`) to
    /// `body`.
    pub fn lambda(var: &str, sort: Sort, body: &Term) -> Term {
        Term::Lambda(
            Rc::new([(Name::invented(var), sort)]),
            Rc::new(body.clone()),
        )
    }

    /// `array[index]`.
    pub fn select(&self, index: &Term) -> Term {
        Term::app(Fun::Select, &[self.clone(), index.clone()])
    }

    /// `array[index]`, where a read of a `lambda` array is made here (its
    /// body, the index for its variable), and a read above one, through
    /// stores and `ite`s of arrays, becomes `ite`s of such reads: a term
    /// with no `lambda` left for the solver to take (cvc5 1.0 takes
    /// none). Any other read is a plain `select`.
    pub fn read(&self, index: &Term) -> Term {
        self.read_above_lambda(index)
            .unwrap_or_else(|| self.select(index))
    }

    /// `read`, where there is a `lambda` to read through; else `None`.
    pub fn read_above_lambda(&self, index: &Term) -> Option<Term> {
        read_through(self, index, &mut HashMap::new())
    }

    /// `array` with `index` mapped to `value`.
    pub fn store(&self, index: &Term, value: &Term) -> Term {
        Term::app(Fun::Store, &[self.clone(), index.clone(), value.clone()])
    }

    /// The uninterpreted function `fun` (declared with
    /// `Solver::declare_fun`) applied to `args`.
    pub fn apply(fun: &Name, args: &[Term]) -> Term {
        let mut all = vec![Term::Var(fun.clone())];
        all.extend_from_slice(args);
        Term::app(Fun::Apply, &all)
    }

    /// The names the term uses (bound ones included), each shared node
    /// visited once.
    pub fn names(&self) -> HashSet<Name> {
        let mut names = HashSet::new();
        let mut seen = HashSet::new();
        let mut stack = vec![self];
        while let Some(term) = stack.pop() {
            match term {
                Term::Var(name) => {
                    names.insert(name.clone());
                }
                Term::App(_, args) => {
                    if seen.insert(Rc::as_ptr(args) as *const u8 as usize) {
                        stack.extend(args.iter());
                    }
                }
                Term::Forall(vars, body) | Term::Lambda(vars, body) => {
                    names.extend(vars.iter().map(|(name, _)| name.clone()));
                    stack.push(body);
                }
                Term::Bv { .. } | Term::Bool(_) | Term::Int(_) => {}
            }
        }
        names
    }

    /// The identity of an application node (its shared argument list).
    fn node_id(&self) -> Option<usize> {
        match self {
            Term::App(_, args) => Some(Rc::as_ptr(args) as *const u8 as usize),
            _ => None,
        }
    }
}

/// Writes `root` with one `let` per application node that has more than
/// one parent. `depth` keeps the names of nested scopes (quantifier bodies
/// are scopes of their own) apart.
fn write_shared(root: &Term, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
    // Parent counts, and the distinct nodes children-first (explicit stack:
    // terms can be deep).
    let mut parents: HashMap<usize, u32> = HashMap::new();
    let mut order: Vec<&Term> = Vec::new();
    let mut stack: Vec<(&Term, bool)> = vec![(root, false)];
    while let Some((term, children_done)) = stack.pop() {
        let Some(id) = term.node_id() else { continue };
        if children_done {
            order.push(term);
            continue;
        }
        let count = parents.entry(id).or_insert(0);
        *count += 1;
        if *count > 1 {
            continue;
        }
        stack.push((term, true));
        if let Term::App(_, args) = term {
            stack.extend(args.iter().rev().map(|a| (a, false)));
        }
    }
    let mut names: HashMap<usize, Name> = HashMap::new();
    let mut open = 0;
    for term in order {
        let id = term.node_id().unwrap();
        if parents[&id] > 1 && !std::ptr::eq(term, root) {
            let name = Name::shared(depth, names.len());
            write!(f, "(let (({name} ")?;
            write_node(term, f, &names, depth)?;
            f.write_str(")) ")?;
            names.insert(id, name);
            open += 1;
        }
    }
    write_node(root, f, &names, depth)?;
    for _ in 0..open {
        f.write_str(")")?;
    }
    Ok(())
}

/// Writes one node; its children are written by name when they have one.
fn write_node(
    term: &Term,
    f: &mut fmt::Formatter<'_>,
    names: &HashMap<usize, Name>,
    depth: usize,
) -> fmt::Result {
    match term {
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
        Term::Int(n) if *n < 0 => write!(f, "(- {})", n.unsigned_abs()),
        Term::Int(n) => write!(f, "{n}"),
        Term::Var(name) => write!(f, "{name}"),
        Term::App(fun, args) => {
            write!(f, "({fun}")?;
            for (i, arg) in args.iter().enumerate() {
                // An application's first argument is its function.
                if i > 0 || *fun != Fun::Apply {
                    f.write_str(" ")?;
                }
                match arg.node_id().and_then(|id| names.get(&id)) {
                    Some(name) => write!(f, "{name}")?,
                    None => write_node(arg, f, names, depth)?,
                }
            }
            f.write_str(")")
        }
        Term::Forall(vars, body) | Term::Lambda(vars, body) => {
            let binder = match term {
                Term::Forall(..) => "forall",
                _ => "lambda",
            };
            write!(f, "({binder} (")?;
            for (name, sort) in vars.iter() {
                write!(f, "({name} {sort})")?;
            }
            f.write_str(") ")?;
            write_shared(body, f, depth + 1)?;
            f.write_str(")")
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_shared(self, f, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_of_lambda_arrays_are_made_here() {
        let k = Term::var("k");
        let doubled = Term::lambda(
            "j",
            Sort::Bv(8),
            &Term::var("j").bv(Fun::BvAdd, &Term::var("j")),
        );
        assert_eq!(doubled.read(&k).to_string(), "(bvadd i.k i.k)");
        // Through a store and an `ite` of arrays above it.
        let stored = doubled.store(&Term::var("i"), &Term::var("v"));
        let either = Term::ite(&Term::var("c"), &stored, &Term::var("a"));
        assert_eq!(
            either.read(&k).to_string(),
            "(ite i.c (ite (= i.k i.i) i.v (bvadd i.k i.k)) (select i.a i.k))"
        );
        // No lambda beneath, or one that binds another variable inside: a
        // plain select.
        assert_eq!(Term::var("a").read(&k).to_string(), "(select i.a i.k)");
        let nested = Term::lambda("j", Sort::Bv(8), &doubled.select(&Term::var("j")));
        assert!(nested.read(&k).to_string().starts_with("(select (lambda"));
    }

    #[test]
    fn a_sum_whose_terms_cancel_is_its_constant() {
        let (x, y) = (Term::var("x"), Term::var("y"));
        let none = |_: &Term| None;
        let add = |a: &Term, b: &Term| a.bv(Fun::BvAdd, b);
        let sub = |a: &Term, b: &Term| a.bv(Fun::BvSub, b);
        let twelve = Term::word(12);
        assert_eq!(sub(&add(&x, &twelve), &x).constant_sum(&none), Some(12));
        // Wrapping: x - (x + 1) is all ones.
        let minus_one = sub(&x, &add(&x, &Term::word(1)));
        assert_eq!(minus_one.constant_sum(&none), Some(u64::MAX));
        // A term left over, or one counted twice, is no constant.
        assert_eq!(sub(&add(&x, &twelve), &y).constant_sum(&none), None);
        assert_eq!(add(&add(&x, &twelve), &x).constant_sum(&none), None);
        // Another operation is a term of its own.
        let product = x.bv(Fun::BvMul, &twelve);
        assert_eq!(sub(&product, &x).constant_sum(&none), None);
        assert_eq!(sub(&product, &product).constant_sum(&none), Some(0));
        // Through names: n = x + 12, so n - x is 12.
        let n = Term::var("n");
        let defined = add(&x, &twelve);
        let lookup = |t: &Term| (*t == n).then(|| defined.clone());
        assert_eq!(sub(&n, &x).constant_sum(&lookup), Some(12));
        assert_eq!(sub(&n, &x).constant_sum(&none), None);
    }

    /// `x, x + x, (x + x) + (x + x), ...`: `levels` nodes, 2^levels paths.
    fn doubling(leaf: &Term, levels: usize) -> Term {
        (0..levels).fold(leaf.clone(), |t, _| t.bv(Fun::BvAdd, &t))
    }

    #[test]
    fn terms_built_apart_compare_by_structure_node_by_node() {
        let x = Term::var("x");
        // Built twice: no node is shared between the two, and walking
        // every path would take 2^64 steps.
        let (a, b) = (doubling(&x, 64), doubling(&x, 64));
        assert_eq!(a, b);
        let hash = |t: &Term| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            t.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&a), hash(&b));
        // A difference at the bottom is found.
        assert_ne!(a, doubling(&Term::var("y"), 64));
        assert_ne!(a, doubling(&x, 63));
        let mixed = a.bv(Fun::BvAdd, &doubling(&Term::var("y"), 64));
        assert_ne!(mixed, a.bv(Fun::BvAdd, &b));
        assert_eq!(
            mixed,
            doubling(&x, 64).bv(Fun::BvAdd, &doubling(&Term::var("y"), 64))
        );
    }

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
            "(ite (bvslt i.x #xffffffffffffffff) #x0000000000000001 #x0000000000000000)"
        );
        let wide = x.un(Fun::SignExtend(64)).un(Fun::Extract(127, 64));
        assert_eq!(
            wide.to_string(),
            "((_ extract 127 64) ((_ sign_extend 64) i.x))"
        );
        assert_eq!(Term::Bv { value: 5, width: 3 }.to_string(), "#b101");
        let y = Term::var("y");
        assert_eq!(
            Term::and_all([Term::Bool(true), x.eq(&y)]).to_string(),
            "(= i.x i.y)"
        );
        assert_eq!(Term::and_all([]).to_string(), "true");
    }

    #[test]
    fn trivial_tests_decide_themselves() {
        let (x, y, c) = (Term::var("x"), Term::var("y"), Term::var("c"));
        let sum = x.bv(Fun::BvAdd, &y);
        assert_eq!(x.eq(&x), Term::Bool(true));
        assert_eq!(sum.eq(&sum.clone()), Term::Bool(true));
        assert_eq!(Term::word(1).eq(&Term::word(2)), Term::Bool(false));
        assert_eq!(Term::word(1).eq(&Term::word(1)), Term::Bool(true));
        // Two sums built apart are not one node: left to the solver.
        let again = x.bv(Fun::BvAdd, &y);
        assert_eq!(
            sum.eq(&again).to_string(),
            "(= (bvadd i.x i.y) (bvadd i.x i.y))"
        );
        assert_eq!(x.eq(&y).to_string(), "(= i.x i.y)");
        assert_eq!(Term::ite(&Term::Bool(true), &x, &y), x);
        assert_eq!(Term::ite(&Term::Bool(false), &x, &y), y);
        assert_eq!(Term::ite(&c, &x, &x), x);
        assert_eq!(Term::ite(&c, &x, &y).to_string(), "(ite i.c i.x i.y)");
        let b = x.eq(&y);
        assert_eq!(b.or(&b), b);
        assert_eq!(
            Term::and_all([b.clone(), c.clone(), b.clone()]).to_string(),
            "(and (= i.x i.y) i.c)"
        );
        // A read at a key of a store chain over a `lambda` (which is read
        // through) decides the tests the key settles.
        let k = Term::var("k");
        let lambda = Term::lambda("k", Sort::Bv(64), &Term::ite(&k.eq(&x), &y, &Term::word(0)));
        assert_eq!(lambda.read(&x), y);
        assert_eq!(
            lambda.read(&Term::word(3)).to_string(),
            "(ite (= #x0000000000000003 i.x) i.y #x0000000000000000)"
        );
        let stored = lambda.store(&c, &Term::word(7));
        assert_eq!(stored.read(&c), Term::word(7));
    }

    #[test]
    fn shared_nodes_are_written_once() {
        let x = Term::var("x");
        let mut t = x.bv(Fun::BvAdd, &x);
        for _ in 0..40 {
            t = t.bv(Fun::BvMul, &t);
        }
        let text = t.to_string();
        assert!(text.len() < 3000, "{}", text.len());
        assert!(
            text.starts_with("(let ((l.0.0 (bvadd i.x i.x))) (let ((l.0.1 (bvmul l.0.0 l.0.0)))")
        );
        let q = Term::forall(&[("y", Sort::Bv(8))], &Term::var("y").eq(&x));
        assert_eq!(q.to_string(), "(forall ((i.y (_ BitVec 8))) (= i.y i.x))");
        assert_eq!(Term::user("y").eq(&x).to_string(), "(= u.y i.x)");
        let a = Term::lambda("k", Sort::Bv(8), &Term::var("k").bv(Fun::BvAdd, &x));
        assert_eq!(
            a.to_string(),
            "(lambda ((i.k (_ BitVec 8))) (bvadd i.k i.x))"
        );
    }
}
