//! The peephole rules of `rules/*.rules`, compiled by `build.rs` into a
//! decision-tree matcher (see `traceopt_rules::compile`). `rewrite` tries
//! them on one op; `RULES` names them, for statistics.

include!(concat!(env!("OUT_DIR"), "/rules.rs"));

use traceopt_domains::IntBound;
use traceopt_ir::{Arg, Args, Flags, Type};

use crate::driver::{Infeasible, Optimizer};

impl Optimizer<'_> {
    pub(crate) fn build(
        &mut self,
        built: Built<Arg>,
        name: Option<&compact_str::CompactString>,
        depth: u32,
    ) -> Result<Arg, Infeasible> {
        Ok(match built {
            Built::Value(v) => self.find(v),
            Built::Const(c) => self.int_const(c),
            Built::Op(opcode, args) => {
                let mut out = Args::new();
                for arg in args {
                    out.push(self.build(arg, None, depth)?);
                }
                self.int_op(opcode, out, name, depth)?
            }
        })
    }
}

impl Subject for Optimizer<'_> {
    type Value = Arg;

    fn head(&self, value: Arg) -> Head<Arg> {
        match value {
            Arg::Const(_) => match self.as_int(value) {
                Some(c) => Head::Const(c),
                None => Head::Other,
            },
            Arg::Value(v) => {
                let Some(index) = self.defining_op(v) else {
                    return Head::Other;
                };
                let op = &self.out.ops[index];
                let info = op.opcode.info();
                let usable = info.flags.contains(Flags::PURE)
                    || (info.flags.contains(Flags::OVF) && self.values[v.0 as usize].no_overflow);
                if !usable || info.result != Type::Int || op.args.is_empty() || op.args.len() > 2 {
                    return Head::Other;
                }
                let first = self.find_const(op.args[0]);
                let second = op.args.get(1).map_or(first, |&a| self.find_const(a));
                Head::Op(op.opcode, first, second)
            }
        }
    }

    fn constant(&self, value: Arg) -> Option<i64> {
        self.as_int(value)
    }

    fn bound(&self, value: Arg) -> IntBound {
        Optimizer::bound(self, value)
    }

    fn enabled(&self, index: usize) -> bool {
        let disabled = self.disabled.rules.get(index).copied().unwrap_or(false);
        !disabled || (self.any_rule_fired && !self.disabled.for_good)
    }

    fn same(&self, a: Arg, b: Arg) -> bool {
        let (a, b) = (self.find_const(a), self.find_const(b));
        a == b || matches!((self.as_int(a), self.as_int(b)), (Some(x), Some(y)) if x == y)
    }
}

#[cfg(test)]
mod tests {
    use super::RULES;
    use crate::driver::{optimize_without, Passes};
    use traceopt_ir::{parse_trace, Opcode};
    use traceopt_rules::runtime::PatternNode::{Const, Op, Var};

    /// Each rule carries its left-hand side in prefix order (what the
    /// fuzzer's templates build).
    #[test]
    fn a_rule_carries_its_pattern() {
        let pattern = |name: &str| RULES.iter().find(|r| r.name == name).unwrap().pattern;
        assert_eq!(
            pattern("add_sub_cancel"),
            [
                Op(Opcode::IntAdd, 2),
                Op(Opcode::IntSub, 2),
                Var("x"),
                Var("y"),
                Var("y")
            ]
        );
        assert_eq!(
            pattern("add_zero"),
            [Op(Opcode::IntAdd, 2), Var("x"), Const(0)]
        );
    }

    /// A rule switched off stays off until another rule fires (what the
    /// confluence report uses to choose which of two rules goes first).
    #[test]
    fn a_rule_switched_off_waits_for_another_rule() {
        let add_zero = RULES.iter().position(|r| r.name == "add_zero").unwrap();
        let mut disabled = vec![false; RULES.len()];
        disabled[add_zero] = true;
        let trace = parse_trace("[i0]\ni1 = int_add(i0, 0)\nfinish(i1)\n", "t").unwrap();
        let out = optimize_without(&trace, Passes::default(), &disabled).unwrap();
        assert_eq!(out.rule_counts[add_zero], 0);
        // Switched on, it fires.
        let out = optimize_without(&trace, Passes::default(), &[]).unwrap();
        assert_eq!(out.rule_counts[add_zero], 1);
    }

    /// A rule removed stays off after another rule fired; switched off
    /// until a rule fires, it fires then.
    #[test]
    fn a_rule_removed_stays_off_for_good() {
        let index = |name: &str| RULES.iter().position(|r| r.name == name).unwrap();
        let (add_zero, sub_x_x) = (index("add_zero"), index("sub_x_x"));
        let mut off = vec![false; RULES.len()];
        off[add_zero] = true;
        let text = "[i0, i1]\ni2 = int_sub(i1, i1)\ni3 = int_add(i0, 0)\nfinish(i2, i3)\n";
        let trace = parse_trace(text, "t").unwrap();
        let out = optimize_without(&trace, Passes::default(), &off).unwrap();
        assert_eq!(
            (out.rule_counts[sub_x_x], out.rule_counts[add_zero]),
            (1, 1)
        );
        let out = crate::optimize_without_rules(&trace, Passes::default(), &off).unwrap();
        assert_eq!(
            (out.rule_counts[sub_x_x], out.rule_counts[add_zero]),
            (1, 0)
        );
        // What is left is still the input's meaning.
        let mut solver = traceopt_smt::Solver::start(None, std::time::Duration::from_secs(10))
            .expect("an SMT solver");
        let verdict =
            traceopt_verify::verify_aligned(&trace, &out.trace, &out.provenance, &mut solver);
        assert_eq!(verdict.unwrap(), traceopt_verify::Verdict::Proved);
    }
}
