//! The type checker of the rule language.
//!
//! Catches the mistakes a rule author makes before any code is generated
//! or any proof is run, each with its place in the file: an op that is not
//! an integer op, a wrong number of arguments, a name used but never bound
//! (in a check, an assignment or the target), an unknown method, attribute
//! or helper, an expression of the wrong type (a check that is not a truth
//! value, arithmetic on a pattern variable's bound), a `C` variable given
//! something other than an integer, an overflow-checking op in a target
//! where its guard cannot follow, and rules that share a name.
//!
//! Types: `C` pattern variables and assigned names are integers; other
//! pattern variables stand for what the domain knows about them (their
//! bound), used through attributes and methods (`x.lower`, `x.is_bool()`).

use std::collections::HashMap;

use crate::facts::{self, Ty};
use crate::syntax::{is_constant_var, Expr, Loc, Pattern, Rule, Stmt, UnOp};
use traceopt_ir::{Flags, Opcode, ParseError, Type};

/// Names in scope, with their types.
pub type Scope = HashMap<String, Ty>;

/// Is `op` an integer op a rule may match or build: integer arguments and
/// result, and pure or overflow-checking.
pub fn is_rule_op(op: Opcode) -> bool {
    static TABLE: std::sync::OnceLock<Vec<bool>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| Opcode::all().map(compute_is_rule_op).collect())[op as usize]
}

fn compute_is_rule_op(op: Opcode) -> bool {
    let info = op.info();
    info.result == Type::Int
        && !info.signature.is_empty()
        && info.signature.bytes().all(|b| b == b'i')
        && info.flags.intersects(Flags::PURE | Flags::OVF)
        && !info.flags.contains(Flags::DESCR)
}

pub fn is_ovf(op: Opcode) -> bool {
    op.info().flags.contains(Flags::OVF)
}

struct Checker<'a> {
    file: &'a str,
    errors: Vec<ParseError>,
}

impl Checker<'_> {
    fn error(&mut self, loc: Loc, expected: &str, found: String, hint: Option<&str>) {
        self.errors.push(ParseError {
            file: self.file.to_string(),
            line: loc.line,
            col: loc.col,
            expected: expected.to_string(),
            found,
            hint: hint.map(str::to_string),
        });
    }

    fn op_shape(&mut self, op: Opcode, args: &[Pattern], loc: Loc) {
        if !is_rule_op(op) {
            self.error(
                loc,
                "an integer op (pure or overflow-checking)",
                format!("'{}'", op.name()),
                Some("rules rewrite integer ops only"),
            );
            return;
        }
        let arity = op.info().signature.len();
        if args.len() != arity {
            self.error(
                loc,
                &format!("{arity} argument(s) for {}", op.name()),
                format!("{}", args.len()),
                None,
            );
        }
    }

    fn pattern(&mut self, p: &Pattern, root: bool, scope: &mut Scope) {
        match p {
            Pattern::Op(op, args, loc) => {
                self.op_shape(*op, args, *loc);
                for arg in args {
                    self.pattern(arg, false, scope);
                }
            }
            Pattern::Var(name, loc) if root => self.error(
                *loc,
                "an op at the root of the pattern",
                format!("'{name}'"),
                None,
            ),
            Pattern::Var(name, _) => {
                let ty = if is_constant_var(name) {
                    Ty::Int
                } else {
                    Ty::Bound
                };
                scope.insert(name.clone(), ty);
            }
            Pattern::Const(value, loc) if root => self.error(
                *loc,
                "an op at the root of the pattern",
                format!("'{value}'"),
                None,
            ),
            Pattern::Const(..) => {}
        }
    }

    fn target(&mut self, p: &Pattern, root: bool, source_ovf: bool, scope: &Scope) {
        match p {
            Pattern::Op(op, args, loc) => {
                self.op_shape(*op, args, *loc);
                if is_ovf(*op) && !(root && source_ovf) {
                    self.error(
                        *loc,
                        "an op without an overflow check",
                        format!("'{}'", op.name()),
                        Some(
                            "an overflow-checking op may only replace one at the root, \
                             where its guard_no_overflow follows",
                        ),
                    );
                }
                for arg in args {
                    self.target(arg, false, source_ovf, scope);
                }
            }
            Pattern::Var(name, loc) => match scope.get(name) {
                None => self.error(
                    *loc,
                    "a variable bound in the pattern or by an assignment",
                    format!("'{name}'"),
                    Some("the target can only use what the rule has bound"),
                ),
                Some(Ty::Bool) => {
                    self.error(*loc, "an integer", format!("'{name}', a truth value"), None)
                }
                Some(_) => {}
            },
            Pattern::Const(..) => {}
        }
    }

    fn expect(&mut self, e: &Expr, want: Ty, scope: &Scope) {
        if let Some(ty) = self.expr(e, scope) {
            if ty != want {
                let var = match e {
                    Expr::Name(name, _) => name.as_str(),
                    _ => "x",
                };
                let hint = (ty == Ty::Bound && want == Ty::Int).then(|| {
                    format!("a pattern variable stands for its bound: use {var}.lower, {var}.upper or a method such as {var}.known_ge_const(0)")
                });
                self.error(e.loc(), &want.to_string(), ty.to_string(), hint.as_deref());
            }
        }
    }

    /// The type of `e`, or `None` after reporting an error in it.
    fn expr(&mut self, e: &Expr, scope: &Scope) -> Option<Ty> {
        match e {
            Expr::Int(..) => Some(Ty::Int),
            Expr::Name(name, loc) => {
                let ty = scope.get(name).copied();
                if ty.is_none() {
                    self.error(
                        *loc,
                        "a bound variable",
                        format!("'{name}'"),
                        Some("names are bound by the pattern or by an earlier assignment"),
                    );
                }
                ty
            }
            Expr::Attr(var, attr, loc) => {
                self.bound_var(var, *loc, scope)?;
                if !facts::ATTRIBUTES.contains(&attr.as_str()) {
                    self.error(
                        *loc,
                        &format!("an attribute ({})", facts::ATTRIBUTES.join(", ")),
                        format!("'{attr}'"),
                        None,
                    );
                    return None;
                }
                Some(Ty::Int)
            }
            Expr::Method(var, name, args, loc) => {
                self.bound_var(var, *loc, scope)?;
                let Some((_, params, result)) = facts::METHODS.iter().find(|m| m.0 == name) else {
                    let names: Vec<&str> = facts::METHODS.iter().map(|m| m.0).collect();
                    self.error(
                        *loc,
                        "a known method",
                        format!("'{name}'"),
                        Some(&format!("methods: {}", names.join(", "))),
                    );
                    return None;
                };
                self.arguments(name, params, args, *loc, scope);
                Some(*result)
            }
            Expr::Call(name, args, loc) => {
                let Some(&(_, arity)) = facts::HELPERS.iter().find(|h| h.0 == name) else {
                    let names: Vec<&str> = facts::HELPERS.iter().map(|h| h.0).collect();
                    self.error(
                        *loc,
                        "a helper function",
                        format!("'{name}'"),
                        Some(&format!("helpers: {}", names.join(", "))),
                    );
                    return None;
                };
                self.arguments(name, &vec![Ty::Int; arity], args, *loc, scope);
                Some(Ty::Int)
            }
            Expr::Unary(UnOp::Not, inner, _) => {
                self.expect(inner, Ty::Bool, scope);
                Some(Ty::Bool)
            }
            Expr::Unary(_, inner, _) => {
                self.expect(inner, Ty::Int, scope);
                Some(Ty::Int)
            }
            Expr::Binary(op, a, b, _) => {
                let (operand, result) = if facts::is_logic(*op) {
                    (Ty::Bool, Ty::Bool)
                } else if facts::is_comparison(*op) {
                    (Ty::Int, Ty::Bool)
                } else {
                    (Ty::Int, Ty::Int)
                };
                self.expect(a, operand, scope);
                self.expect(b, operand, scope);
                Some(result)
            }
        }
    }

    fn bound_var(&mut self, var: &str, loc: Loc, scope: &Scope) -> Option<()> {
        match scope.get(var) {
            Some(Ty::Bound) => Some(()),
            Some(ty) => {
                self.error(
                    loc,
                    "a non-constant pattern variable before '.'",
                    format!("'{var}', {ty}"),
                    Some("attributes and methods ask what is known about a pattern variable; `C` variables are plain integers"),
                );
                None
            }
            None => {
                self.error(loc, "a bound variable", format!("'{var}'"), None);
                None
            }
        }
    }

    fn arguments(&mut self, name: &str, params: &[Ty], args: &[Expr], loc: Loc, scope: &Scope) {
        if params.len() != args.len() {
            self.error(
                loc,
                &format!("{} argument(s) for {name}", params.len()),
                format!("{}", args.len()),
                None,
            );
            return;
        }
        for (arg, &param) in args.iter().zip(params) {
            self.expect(arg, param, scope);
        }
    }

    fn rule(&mut self, rule: &Rule) -> Scope {
        let mut scope = Scope::new();
        self.pattern(&rule.pattern, true, &mut scope);
        let mut splits = 0;
        for stmt in &rule.body {
            match stmt {
                Stmt::Check(e) => self.expect(e, Ty::Bool, &scope),
                Stmt::Split(split) => {
                    splits += 1;
                    if splits > 1 {
                        self.error(split.loc, "one split per rule", "a second".into(), None);
                    }
                    let mut inner = scope.clone();
                    inner.insert(split.var.clone(), Ty::Int);
                    self.expect(&split.cond, Ty::Bool, &inner);
                    let (lo, hi) = split.range;
                    if hi <= lo || i128::from(hi) - i128::from(lo) > 256 {
                        self.error(
                            split.loc,
                            "a range of 1 to 256 cases",
                            format!("{lo}..{hi}"),
                            None,
                        );
                    }
                }
                Stmt::Assign(name, e, loc) => {
                    let ty = self.expr(e, &scope);
                    if scope.contains_key(name) {
                        self.error(
                            *loc,
                            "a new name",
                            format!("'{name}', bound already"),
                            Some("each name is bound once"),
                        );
                        continue;
                    }
                    let Some(ty) = ty else {
                        continue;
                    };
                    if is_constant_var(name) && ty != Ty::Int {
                        self.error(
                            *loc,
                            &format!("a constant for the `C` variable '{name}'"),
                            ty.to_string(),
                            Some("names starting with C hold integers"),
                        );
                    }
                    scope.insert(name.clone(), ty);
                }
            }
        }
        let source_ovf = matches!(&rule.pattern, Pattern::Op(op, _, _) if is_ovf(*op));
        self.target(&rule.target, true, source_ovf, &scope);
        scope
    }
}

/// Type-checks rules; all errors are reported, in file order.
pub fn check(file: &str, rules: &[Rule]) -> Result<Vec<Scope>, Vec<ParseError>> {
    let mut checker = Checker {
        file,
        errors: Vec::new(),
    };
    let mut seen: HashMap<&str, Loc> = HashMap::new();
    let mut scopes = Vec::new();
    for rule in rules {
        if let Some(&first) = seen.get(rule.name.as_str()) {
            checker.error(
                rule.loc,
                "a new rule name",
                format!("'{}', used at line {} already", rule.name, first.line),
                None,
            );
        } else {
            seen.insert(&rule.name, rule.loc);
        }
        scopes.push(checker.rule(rule));
    }
    checker.errors.sort_by_key(|e| (e.line, e.col));
    if checker.errors.is_empty() {
        Ok(scopes)
    } else {
        Err(checker.errors)
    }
}
