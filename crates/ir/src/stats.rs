//! Operation counts in the categories of the allocation-removal paper's
//! Figure 7: allocations (`new*`), heap reads (`get*`), heap writes
//! (`set*`), guards, and all operations. `debug_merge_point` is not an
//! operation here; `label`, `jump`, `finish` and the portal-frame markers are.

use crate::opcode::Opcode;
use crate::trace::Trace;
use std::ops::AddAssign;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize)]
pub struct OpCounts {
    pub ops: usize,
    pub allocations: usize,
    pub reads: usize,
    pub writes: usize,
    pub guards: usize,
}

impl OpCounts {
    pub fn of(trace: &Trace) -> OpCounts {
        let mut counts = OpCounts::default();
        for op in trace.real_ops() {
            counts.add_op(op.opcode);
        }
        counts
    }

    /// The counts of what runs on every pass of a loop: the ops after
    /// the trace's last label (the peeled loop's body), or all of them
    /// for a trace with no label (a bridge, a loop not peeled).
    pub fn steady(trace: &Trace) -> OpCounts {
        let last_label = trace.ops.iter().rposition(|op| op.opcode == Opcode::Label);
        let mut counts = OpCounts::default();
        for op in &trace.ops[last_label.map_or(0, |l| l + 1)..] {
            if op.opcode != Opcode::DebugMergePoint {
                counts.add_op(op.opcode);
            }
        }
        counts
    }

    fn add_op(&mut self, opcode: Opcode) {
        let name = opcode.name();
        self.ops += 1;
        self.allocations += usize::from(name.starts_with("new"));
        self.reads += usize::from(name.starts_with("get"));
        self.writes += usize::from(name.starts_with("set"));
        self.guards += usize::from(opcode.is_guard());
    }
}

impl AddAssign for OpCounts {
    fn add_assign(&mut self, other: OpCounts) {
        self.ops += other.ops;
        self.allocations += other.allocations;
        self.reads += other.reads;
        self.writes += other.writes;
        self.guards += other.guards;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_trace;

    #[test]
    fn counts_by_category_without_debug_merge_points() {
        let trace = parse_trace(
            "[p0, i1]\n\
             debug_merge_point(0, 0, 'f')\n\
             p2 = new_with_vtable(descr=nodesize)\n\
             setfield_gc(p2, i1, descr=valuedescr)\n\
             i3 = getfield_gc_i(p0, descr=valuedescr)\n\
             p4 = new_array(3, descr=arraydescr)\n\
             guard_true(i3) []\n\
             i5 = getarrayitem_gc_i(p4, 0, descr=arraydescr)\n\
             jump(p0, i5)\n",
            "t",
        )
        .unwrap();
        assert_eq!(
            OpCounts::of(&trace),
            OpCounts {
                ops: 7,
                allocations: 2,
                reads: 2,
                writes: 1,
                guards: 1
            }
        );
    }
}
