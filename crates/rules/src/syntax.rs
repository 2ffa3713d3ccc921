//! The rule language's syntax: tokens, the tree of a rule, and the parser.
//!
//! A rules file is a sequence of rules, one statement per line:
//!
//! ```text
//! # a comment
//! mul_pow2_const: int_mul(x, C)
//!     check C > 0 and C & (C - 1) == 0
//!     shift = highest_bit(C)
//!     => int_lshift(x, shift)
//! ```
//!
//! The head `name: pattern` is followed by `check <expr>`, `<var> = <expr>`,
//! `SORRY_SMT` (skip the proof), `priority <int>`, `cost "<reason>"`
//! (allow a rule that does not lower the cost) and `split <cond> for k in
//! lo..hi` (prove case by case) lines in any order, and ends with
//! `=> target`. Newlines inside parentheses are ignored.
//! Expressions have Python's precedence; `>>u`, `<u`, `<=u`, `>u`, `>=u`
//! are the unsigned variants. Every error is a located `ParseError`.

use traceopt_ir::error::show_found;
use traceopt_ir::{Opcode, ParseError};

/// Where something is in the rules file.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

/// A rule as written.
#[derive(Clone, Debug)]
pub struct Rule {
    pub name: String,
    pub loc: Loc,
    pub pattern: Pattern,
    pub body: Vec<Stmt>,
    pub target: Pattern,
    /// `SORRY_SMT`: the proof is skipped (and counted).
    pub sorry: bool,
    /// Higher first, among rules of the same kind (see `compile`).
    pub priority: i64,
    /// Why the rule may keep or raise the cost, if it does.
    pub cost_reason: Option<String>,
    /// The rule's text, exactly as written (the key of the proof cache).
    pub text: String,
}

/// A pattern (in a rule head) or a target (after `=>`).
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// A variable: any value, or a constant if it starts with `C`. In a
    /// target, also a name bound by an assignment.
    Var(String, Loc),
    /// A literal constant (also `MININT`, `MAXINT`, `LONG_BIT`).
    Const(i64, Loc),
    Op(Opcode, Vec<Pattern>, Loc),
}

impl Pattern {
    pub fn loc(&self) -> Loc {
        match self {
            Pattern::Var(_, loc) | Pattern::Const(_, loc) | Pattern::Op(_, _, loc) => *loc,
        }
    }
    /// The ops of the tree, root first.
    pub fn ops(&self) -> Vec<Opcode> {
        let mut out = Vec::new();
        self.walk(&mut |p| {
            if let Pattern::Op(op, _, _) = p {
                out.push(*op);
            }
        });
        out
    }
    pub fn walk(&self, f: &mut impl FnMut(&Pattern)) {
        f(self);
        if let Pattern::Op(_, args, _) = self {
            for arg in args {
                arg.walk(f);
            }
        }
    }
}

/// Variables that match constants only start with `C`.
pub fn is_constant_var(name: &str) -> bool {
    name.starts_with('C')
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Check(Expr),
    Assign(String, Expr, Loc),
    /// A proof hint, `split <cond> for k in lo..hi`: the proof goes case
    /// by case, `cond` with `k` = lo, ..., hi - 1, and the case where none
    /// holds. No effect on the matcher.
    Split(Split),
}

#[derive(Clone, Debug)]
pub struct Split {
    pub cond: Expr,
    pub var: String,
    pub range: (i64, i64),
    pub loc: Loc,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    FloorMod,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    UShr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    ULt,
    ULe,
    UGt,
    UGe,
    LogicAnd,
    LogicOr,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnOp {
    Neg,
    Invert,
    Not,
}

#[derive(Clone, Debug)]
pub enum Expr {
    Int(i64, Loc),
    Name(String, Loc),
    /// `x.lower`
    Attr(String, String, Loc),
    /// `x.known_ge_const(0)`
    Method(String, String, Vec<Expr>, Loc),
    /// `highest_bit(C)`
    Call(String, Vec<Expr>, Loc),
    Unary(UnOp, Box<Expr>, Loc),
    Binary(BinOp, Box<Expr>, Box<Expr>, Loc),
}

impl Expr {
    pub fn loc(&self) -> Loc {
        match self {
            Expr::Int(_, l)
            | Expr::Name(_, l)
            | Expr::Attr(_, _, l)
            | Expr::Method(_, _, _, l)
            | Expr::Call(_, _, l)
            | Expr::Unary(_, _, l)
            | Expr::Binary(_, _, _, l) => *l,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Str(String),
    Punct(&'static str),
    Newline,
    End,
}

impl Tok {
    fn show(&self) -> String {
        match self {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Int(v) => format!("'{v}'"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(p) => format!("'{p}'"),
            Tok::Newline => "the end of the line".into(),
            Tok::End => "the end of the file".into(),
        }
    }
}

/// Longest first, so that `>>u` wins over `>>` and `>`.
const PUNCTUATION: &[&str] = &[
    ">>u", "<=u", ">=u", "=>", "==", "!=", "<=", ">=", "<<", ">>", "//", "<u", ">u", "..", "(",
    ")", ",", ":", ".", "=", "<", ">", "+", "-", "*", "%", "&", "|", "^", "~",
];

struct Lexer<'a> {
    file: &'a str,
    toks: Vec<(Tok, Loc)>,
}

fn error(file: &str, loc: Loc, expected: &str, found: String, hint: Option<&str>) -> ParseError {
    ParseError {
        file: file.to_string(),
        line: loc.line,
        col: loc.col,
        expected: expected.to_string(),
        found,
        hint: hint.map(str::to_string),
    }
}

impl<'a> Lexer<'a> {
    fn run(file: &'a str, text: &str) -> Result<Vec<(Tok, Loc)>, ParseError> {
        let mut lexer = Lexer {
            file,
            toks: Vec::new(),
        };
        let mut depth = 0i32;
        for (index, line) in text.lines().enumerate() {
            let line_no = index as u32 + 1;
            let code = without_comment(line);
            lexer.line(code, line_no, &mut depth)?;
            if depth == 0 {
                let col = code.len() as u32 + 1;
                lexer.toks.push((Tok::Newline, Loc { line: line_no, col }));
            }
        }
        let last = text.lines().count() as u32 + 1;
        lexer.toks.push((Tok::End, Loc { line: last, col: 1 }));
        Ok(lexer.toks)
    }

    fn line(&mut self, code: &str, line: u32, depth: &mut i32) -> Result<(), ParseError> {
        let bytes = code.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i] as char;
            let loc = Loc {
                line,
                col: i as u32 + 1,
            };
            if c.is_whitespace() {
                i += 1;
            } else if c.is_ascii_alphabetic() || c == '_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                self.toks
                    .push((Tok::Ident(code[start..i].to_string()), loc));
            } else if c.is_ascii_digit() {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let digits = code[start..i].replace('_', "");
                let value = match digits.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16).map(|v| v as i64),
                    None => digits.parse::<u64>().map(|v| v as i64),
                };
                let value = value.map_err(|_| {
                    error(
                        self.file,
                        loc,
                        "an integer",
                        show_found(&code[start..i]),
                        Some("decimal or 0x hexadecimal, at most 64 bits"),
                    )
                })?;
                self.toks.push((Tok::Int(value), loc));
            } else if c == '"' {
                let rest = &code[i + 1..];
                let end = rest.find('"').ok_or_else(|| {
                    error(self.file, loc, "a closing '\"'", show_found(rest), None)
                })?;
                self.toks.push((Tok::Str(rest[..end].to_string()), loc));
                i += end + 2;
            } else if let Some(p) = PUNCTUATION.iter().find(|p| code[i..].starts_with(**p)) {
                match *p {
                    "(" => *depth += 1,
                    ")" => *depth -= 1,
                    _ => {}
                }
                self.toks.push((Tok::Punct(p), loc));
                i += p.len();
            } else {
                return Err(error(
                    self.file,
                    loc,
                    "a name, a number or an operator",
                    show_found(&code[i..]),
                    None,
                ));
            }
        }
        Ok(())
    }
}

/// The line up to a `#` that is not inside a quoted string.
fn without_comment(line: &str) -> &str {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Parses a rules file. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Vec<Rule>, ParseError> {
    let toks = Lexer::run(file, text)?;
    let lines: Vec<&str> = text.lines().collect();
    let mut parser = Parser { file, toks, pos: 0 };
    let mut rules = Vec::new();
    loop {
        parser.skip_newlines();
        if parser.peek() == &Tok::End {
            return Ok(rules);
        }
        let first = parser.loc().line as usize;
        let mut rule = parser.rule()?;
        let last = parser.toks[parser.pos.saturating_sub(1)].1.line as usize;
        rule.text = lines[first - 1..last.min(lines.len())].join("\n");
        rules.push(rule);
    }
}

struct Parser<'a> {
    file: &'a str,
    toks: Vec<(Tok, Loc)>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn loc(&self) -> Loc {
        self.toks[self.pos].1
    }
    fn next(&mut self) -> (Tok, Loc) {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn fail<T>(&self, expected: &str, hint: Option<&str>) -> Result<T, ParseError> {
        Err(error(
            self.file,
            self.loc(),
            expected,
            self.peek().show(),
            hint,
        ))
    }
    fn skip_newlines(&mut self) {
        while self.peek() == &Tok::Newline {
            self.next();
        }
    }
    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Tok::Punct(q) if *q == p) {
            self.next();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, p: &str) -> Result<(), ParseError> {
        if self.eat(p) {
            Ok(())
        } else {
            self.fail(&format!("'{p}'"), None)
        }
    }
    fn ident(&mut self, what: &str) -> Result<(String, Loc), ParseError> {
        match self.next() {
            (Tok::Ident(s), loc) => Ok((s, loc)),
            _ => {
                self.pos -= 1;
                self.fail(what, None)
            }
        }
    }
    fn end_of_line(&mut self) -> Result<(), ParseError> {
        match self.peek() {
            Tok::Newline | Tok::End => {
                self.next();
                Ok(())
            }
            _ => self.fail("the end of the line", Some("one statement per line")),
        }
    }

    fn rule(&mut self) -> Result<Rule, ParseError> {
        let (name, loc) = self.ident("a rule name")?;
        self.expect(":")?;
        let pattern = self.pattern()?;
        self.end_of_line()?;
        let mut rule = Rule {
            name,
            loc,
            pattern,
            body: Vec::new(),
            target: Pattern::Const(0, loc),
            sorry: false,
            priority: 0,
            cost_reason: None,
            text: String::new(),
        };
        loop {
            self.skip_newlines();
            let at = self.loc();
            match self.peek().clone() {
                Tok::Punct("=>") => {
                    self.next();
                    rule.target = self.pattern()?;
                    self.end_of_line()?;
                    return Ok(rule);
                }
                Tok::Ident(word) if word == "check" => {
                    self.next();
                    rule.body.push(Stmt::Check(self.expr()?));
                }
                Tok::Ident(word) if word == "SORRY_SMT" => {
                    self.next();
                    rule.sorry = true;
                }
                Tok::Ident(word) if word == "priority" => {
                    self.next();
                    rule.priority = self.integer()?;
                }
                Tok::Ident(word) if word == "split" => {
                    self.next();
                    let cond = self.expr()?;
                    match self.next() {
                        (Tok::Ident(w), _) if w == "for" => {}
                        _ => {
                            self.pos -= 1;
                            return self.fail("'for'", Some("split <cond> for k in 0..64"));
                        }
                    }
                    let (var, _) = self.ident("a case variable")?;
                    match self.next() {
                        (Tok::Ident(w), _) if w == "in" => {}
                        _ => {
                            self.pos -= 1;
                            return self.fail("'in'", Some("split <cond> for k in 0..64"));
                        }
                    }
                    let lo = self.integer()?;
                    self.expect("..")?;
                    let hi = self.integer()?;
                    rule.body.push(Stmt::Split(Split {
                        cond,
                        var,
                        range: (lo, hi),
                        loc: at,
                    }));
                }
                Tok::Ident(word) if word == "cost" => {
                    self.next();
                    match self.next() {
                        (Tok::Str(reason), _) => rule.cost_reason = Some(reason),
                        _ => {
                            self.pos -= 1;
                            return self.fail(
                                "a quoted reason",
                                Some("cost \"why this rule may not lower the cost\""),
                            );
                        }
                    }
                }
                Tok::Ident(var) if matches!(self.toks[self.pos + 1].0, Tok::Punct("=")) => {
                    self.next();
                    self.next();
                    rule.body.push(Stmt::Assign(var, self.expr()?, at));
                }
                Tok::End => {
                    return self.fail("'=> target'", Some("every rule ends with '=> target'"))
                }
                _ => {
                    return self.fail(
                        "'check', an assignment, 'split', 'SORRY_SMT', 'priority', 'cost' or '=>'",
                        None,
                    )
                }
            }
            self.end_of_line()?;
        }
    }

    fn integer(&mut self) -> Result<i64, ParseError> {
        let negative = self.eat("-");
        match self.next() {
            (Tok::Int(v), _) => Ok(if negative { v.wrapping_neg() } else { v }),
            _ => {
                self.pos -= 1;
                self.fail("an integer", None)
            }
        }
    }

    /// A pattern or target: `op(args)`, a variable, or a constant.
    fn pattern(&mut self) -> Result<Pattern, ParseError> {
        let loc = self.loc();
        match self.next() {
            (Tok::Int(v), _) => Ok(Pattern::Const(v, loc)),
            (Tok::Punct("-"), _) => match self.next() {
                (Tok::Int(v), _) => Ok(Pattern::Const(v.wrapping_neg(), loc)),
                _ => {
                    self.pos -= 1;
                    self.fail("an integer after '-'", None)
                }
            },
            (Tok::Ident(name), _) => {
                if let Some(v) = named_constant(&name) {
                    return Ok(Pattern::Const(v, loc));
                }
                if !self.eat("(") {
                    return Ok(Pattern::Var(name, loc));
                }
                let Some(op) = Opcode::from_name(&name) else {
                    return Err(error(
                        self.file,
                        loc,
                        "an op of the op table",
                        format!("'{name}'"),
                        Some("`traceopt ops` lists them"),
                    ));
                };
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.pattern()?);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Pattern::Op(op, args, loc))
            }
            _ => {
                self.pos -= 1;
                self.fail("an op, a variable or a constant", None)
            }
        }
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        self.binary(0)
    }

    /// Precedence climbing over Python's levels, loosest first.
    fn binary(&mut self, level: usize) -> Result<Expr, ParseError> {
        const LEVELS: &[&[(&str, BinOp)]] = &[
            &[("or", BinOp::LogicOr)],
            &[("and", BinOp::LogicAnd)],
            &[],
            &[
                ("==", BinOp::Eq),
                ("!=", BinOp::Ne),
                ("<=u", BinOp::ULe),
                (">=u", BinOp::UGe),
                ("<u", BinOp::ULt),
                (">u", BinOp::UGt),
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("|", BinOp::Or)],
            &[("^", BinOp::Xor)],
            &[("&", BinOp::And)],
            &[("<<", BinOp::Shl), (">>u", BinOp::UShr), (">>", BinOp::Shr)],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[
                ("*", BinOp::Mul),
                ("//", BinOp::FloorDiv),
                ("%", BinOp::FloorMod),
            ],
        ];
        if level == 2 {
            // `not` binds between `and` and the comparisons.
            if matches!(self.peek(), Tok::Ident(w) if w == "not") {
                let loc = self.loc();
                self.next();
                let inner = self.binary(2)?;
                return Ok(Expr::Unary(UnOp::Not, Box::new(inner), loc));
            }
            return self.binary(3);
        }
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        loop {
            let loc = self.loc();
            let found = LEVELS[level].iter().find(|(text, _)| match self.peek() {
                Tok::Punct(p) => p == text,
                Tok::Ident(w) => w == text,
                _ => false,
            });
            let Some(&(_, op)) = found else {
                return Ok(left);
            };
            self.next();
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right), loc);
        }
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        let loc = self.loc();
        if self.eat("-") {
            return Ok(Expr::Unary(UnOp::Neg, Box::new(self.unary()?), loc));
        }
        if self.eat("~") {
            return Ok(Expr::Unary(UnOp::Invert, Box::new(self.unary()?), loc));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let loc = self.loc();
        match self.next() {
            (Tok::Int(v), _) => Ok(Expr::Int(v, loc)),
            (Tok::Punct("("), _) => {
                let inner = self.expr()?;
                self.expect(")")?;
                Ok(inner)
            }
            (Tok::Ident(name), _) => {
                if let Some(v) = named_constant(&name) {
                    return Ok(Expr::Int(v, loc));
                }
                if self.eat("(") {
                    return Ok(Expr::Call(name, self.call_args()?, loc));
                }
                if self.eat(".") {
                    let (member, _) = self.ident("an attribute or method name")?;
                    if self.eat("(") {
                        return Ok(Expr::Method(name, member, self.call_args()?, loc));
                    }
                    return Ok(Expr::Attr(name, member, loc));
                }
                Ok(Expr::Name(name, loc))
            }
            _ => {
                self.pos -= 1;
                self.fail("an expression", None)
            }
        }
    }

    fn call_args(&mut self) -> Result<Vec<Expr>, ParseError> {
        let mut args = Vec::new();
        if self.eat(")") {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat(")") {
                return Ok(args);
            }
            self.expect(",")?;
        }
    }
}

/// `MININT`, `MAXINT` and `LONG_BIT`.
pub fn named_constant(name: &str) -> Option<i64> {
    match name {
        "MININT" => Some(i64::MIN),
        "MAXINT" => Some(i64::MAX),
        "LONG_BIT" => Some(64),
        _ => None,
    }
}
