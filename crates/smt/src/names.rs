//! The names of solver variables, in spaces that cannot meet.
//!
//! Names come from two places: users write some (a rule's pattern
//! variables, a trace's names) and the encoders invent others (the parts
//! of a bound, a trace's `in0`, the `let` names of printing). If a user
//! name could be printed as an invented one, a rule variable `x_lower`
//! would be the lower bound of `x` and wrong rules would be proved. So
//! every name is printed with a prefix that says its space:
//!
//! - `u.NAME`: a user name, any string, with every character outside
//!   `[A-Za-z0-9_]` (`.` and `-` included) escaped as `-HEX-`;
//! - `u.NAME.PART`: a part the encoders derive from a user name;
//! - `i.NAME`: an invented name, made by code (`[A-Za-z0-9_]` only);
//! - `l.DEPTH.N`: a shared subterm in printing (`term`).
//!
//! A user name never prints a `.` after its prefix, so no user name is a
//! part or another space's name; and every symbol holds a `.`, so none is
//! an SMT-LIB word (`true`, `let`, `bvadd`...).

use std::fmt;
use std::rc::Rc;

/// A solver symbol, printed as it is sent.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Name(Rc<str>);

fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Name {
    /// A name a user wrote: any string.
    pub fn user(name: &str) -> Name {
        let mut text = String::from("u.");
        for c in name.chars() {
            if is_plain(c) {
                text.push(c);
            } else {
                text.push_str(&format!("-{:x}-", c as u32));
            }
        }
        Name(text.into())
    }

    /// A name made by code: letters, digits and `_` only.
    pub fn invented(name: &str) -> Name {
        debug_assert!(
            !name.is_empty() && name.chars().all(is_plain),
            "invented name {name:?}"
        );
        Name(format!("i.{name}").into())
    }

    /// A part the encoders derive from this name (`u.x.lower`).
    pub fn part(&self, part: &str) -> Name {
        debug_assert!(part.chars().all(is_plain), "part {part:?}");
        Name(format!("{}.{part}", self.0).into())
    }

    /// The name of the `n`-th shared subterm at quantifier depth `depth`.
    pub(crate) fn shared(depth: usize, n: usize) -> Name {
        Name(format!("l.{depth}.{n}").into())
    }

    /// The symbol as the solver sees it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the solver API takes as a name: a `Name`, or a string, which is
/// an invented name.
pub trait ToName {
    fn to_name(&self) -> Name;
}

impl ToName for Name {
    fn to_name(&self) -> Name {
        self.clone()
    }
}

impl ToName for str {
    fn to_name(&self) -> Name {
        Name::invented(self)
    }
}

impl ToName for String {
    fn to_name(&self) -> Name {
        Name::invented(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_do_not_meet() {
        let x = Name::user("x");
        assert_eq!(x.as_str(), "u.x");
        assert_eq!(x.part("lower").as_str(), "u.x.lower");
        assert_eq!(Name::user("x_lower").as_str(), "u.x_lower");
        assert_eq!(Name::user("x.lower").as_str(), "u.x-2e-lower");
        assert_eq!(Name::user("x-2e-lower").as_str(), "u.x-2d-2e-2d-lower");
        assert_eq!(Name::user("é").as_str(), "u.-e9-");
        assert_eq!(Name::invented("x_lower").as_str(), "i.x_lower");
        assert_eq!(Name::shared(0, 3).as_str(), "l.0.3");
        // A user name is one symbol: printable SMT-LIB characters only,
        // and a single `.`, the one after its prefix.
        for name in ["a b", "(x)", "|q|", "i.x", "l.0.0", "", "true"] {
            let text = Name::user(name).to_string();
            assert_eq!(text.matches('.').count(), 1, "{text}");
            assert!(text.starts_with("u."), "{text}");
            assert!(text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)));
        }
    }
}
