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
//!   `int_sub_ovf(z, y)` and drop its overflow check.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bug {
    WrappingAdd,
    NegMinint,
    MulInverse,
    LshiftInverse,
    SubOvfAfterAdd,
}

impl Bug {
    pub const ALL: [Bug; 5] = [
        Bug::WrappingAdd,
        Bug::NegMinint,
        Bug::MulInverse,
        Bug::LshiftInverse,
        Bug::SubOvfAfterAdd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Bug::WrappingAdd => "wrapping-add",
            Bug::NegMinint => "neg-minint",
            Bug::MulInverse => "mul-inverse",
            Bug::LshiftInverse => "lshift-inverse",
            Bug::SubOvfAfterAdd => "sub-ovf-after-add",
        }
    }

    pub fn from_name(name: &str) -> Option<Bug> {
        Bug::ALL.into_iter().find(|b| b.name() == name)
    }
}
