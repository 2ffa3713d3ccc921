//! Errors about input text: where, what was expected, what was found.

use std::fmt;

/// A located error in a trace file. Shown as
/// `file:line:col: expected X, found Y` and, when there is one, a hint.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub expected: String,
    pub found: String,
    pub hint: Option<String>,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: expected {}, found {}",
            self.file, self.line, self.col, self.expected, self.found
        )?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}

/// How a piece of found text is shown in an error: quoted and cut short.
pub fn show_found(text: &str) -> String {
    let text = text.trim_end();
    if text.is_empty() {
        return "the end of the line".into();
    }
    format!("'{}'", cut(text))
}

/// At most the first 40 characters of `text`, with `…` if it went on (an
/// error never repeats a whole overlong token).
pub fn cut(text: &str) -> String {
    let short: String = text.chars().take(40).collect();
    if short.len() < text.len() {
        format!("{short}…")
    } else {
        short
    }
}
