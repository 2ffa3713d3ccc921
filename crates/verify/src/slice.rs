//! Slicing a query's assumptions to what its goal can depend on.
//!
//! A long trace gives the validator thousands of assumptions (what each
//! read, allocation and constant means), and each of its obligations (one
//! per guard of the aligned form) is asked with all of them, though many
//! say nothing about a given goal.
//!
//! The cone of a goal: the assumptions reachable from the goal's declared
//! names through shared names, not counting the hub names that most
//! assumptions mention (the allocation base, the initial heaps), through
//! which everything would reach everything. An assumption that mentions
//! hubs only is kept once every hub it names is reached. Dropping
//! assumptions only makes a claim harder to prove, so a proof from the
//! cone is a proof; anything else (a counterexample may break a dropped
//! assumption) is asked again with them all. On traces whose values are
//! all tied together through the heap, the cone is most of the
//! assumptions and is not asked (`MOST`).

use rustc_hash::FxHashMap;
use traceopt_smt::{Fun, Solver, Term};

fn is_conjunction(term: &Term) -> bool {
    matches!(term, Term::App(Fun::And, _))
}

/// The assumptions of a check, indexed by the declared names they stand on.
pub(crate) struct Slicer {
    /// The assumptions, conjunctions split into their parts.
    assumptions: Vec<Term>,
    /// All of them, as one conjunction.
    all: Term,
    /// Per assumption, the ids of the names it stands on.
    names: Vec<Vec<usize>>,
    /// Per name id, the assumptions that stand on it.
    users: Vec<Vec<usize>>,
    /// Per name id, whether it is a hub.
    hub: Vec<bool>,
    ids: FxHashMap<String, usize>,
}

/// A name in more assumptions than this (and than this share of them) is
/// a hub.
const HUB_MIN_USES: usize = 24;
const HUB_SHARE: usize = 100;

/// A cone keeping more than this share (in percent) of the assumptions is
/// not worth a query of its own.
const MOST: usize = 75;

impl Slicer {
    pub(crate) fn new(solver: &Solver, assumptions: &[Term]) -> Slicer {
        let whole = Term::and_all(assumptions.iter().cloned());
        let mut assumptions = assumptions.to_vec();
        while let Some(k) = assumptions.iter().position(is_conjunction) {
            let Term::App(_, parts) = assumptions.swap_remove(k) else {
                unreachable!("a conjunction")
            };
            assumptions.extend(parts.iter().cloned());
        }
        let mut ids: FxHashMap<String, usize> = FxHashMap::default();
        let mut names: Vec<Vec<usize>> = Vec::with_capacity(assumptions.len());
        for assumption in &assumptions {
            // Finding what each stands on takes long in a large trace:
            // once no query will be asked, the rest stand on nothing (and
            // are in no cone, which only drops assumptions).
            if solver.out_of_time().is_some() {
                names.push(Vec::new());
                continue;
            }
            let mut mine: Vec<usize> = Vec::new();
            solver.for_each_leaf(assumption, |name| {
                let id = ids.get(name).copied().unwrap_or_else(|| {
                    let next = ids.len();
                    ids.insert(name.to_string(), next);
                    next
                });
                mine.push(id);
            });
            mine.sort_unstable();
            names.push(mine);
        }
        let mut users = vec![Vec::new(); ids.len()];
        for (k, mine) in names.iter().enumerate() {
            for &name in mine {
                users[name].push(k);
            }
        }
        let most = HUB_MIN_USES.max(assumptions.len() / HUB_SHARE);
        let hub = users.iter().map(|list| list.len() > most).collect();
        Slicer {
            assumptions,
            all: whole,
            names,
            users,
            hub,
            ids,
        }
    }

    /// Every assumption, as one conjunction.
    pub(crate) fn all(&self) -> &Term {
        &self.all
    }

    /// The assumptions in `goal`'s cone, as one conjunction; `None` where
    /// that is (nearly) all of them. An assumption is in the cone if it
    /// shares a name other than a hub with the goal or an assumption in
    /// the cone, or if it stands on hubs alone, each named by the goal or
    /// by an assumption in the cone.
    pub(crate) fn cone(&self, solver: &Solver, goal: &Term) -> Option<Term> {
        let mut kept = vec![false; self.assumptions.len()];
        // Per assumption of hubs alone, how many of them are not reached.
        let mut hubs_left: Vec<usize> = (self.names.iter())
            .map(|mine| match mine.iter().all(|&n| self.hub[n]) {
                true => mine.len(),
                false => usize::MAX,
            })
            .collect();
        let mut reached = vec![false; self.users.len()];
        let mut queue: Vec<usize> = Vec::new();
        solver.for_each_leaf(goal, |name| queue.extend(self.ids.get(name)));
        while let Some(name) = queue.pop() {
            if std::mem::replace(&mut reached[name], true) {
                continue;
            }
            for &k in &self.users[name] {
                let take = match self.hub[name] {
                    false => true,
                    true if hubs_left[k] != usize::MAX => {
                        hubs_left[k] -= 1;
                        hubs_left[k] == 0
                    }
                    true => false,
                };
                if take && !std::mem::replace(&mut kept[k], true) {
                    queue.extend(self.names[k].iter().filter(|&&n| !reached[n]));
                }
            }
        }
        let count = kept.iter().filter(|&&k| k).count();
        if count * 100 > self.assumptions.len() * MOST {
            return None;
        }
        let cone = (self.assumptions.iter().zip(&kept))
            .filter(|(_, &keep)| keep)
            .map(|(a, _)| a.clone());
        Some(Term::and_all(cone))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use traceopt_smt::{Fun, Outcome, Sort};

    fn solver() -> Solver {
        Solver::start(None, Duration::from_secs(10)).expect("an SMT solver")
    }

    #[test]
    fn the_cone_follows_shared_names_through_definitions() {
        let mut solver = solver();
        for name in ["a", "b", "c", "d"] {
            solver.declare(name, Sort::Bv(64)).unwrap();
        }
        // x stands on a: an assumption about x is one about a.
        let x = Term::var("a").bv(Fun::BvAdd, &Term::word(1));
        solver.define("x", Sort::Bv(64), &x).unwrap();
        let about_x = Term::var("x").eq(&Term::word(5));
        let about_b = Term::var("b").eq(&Term::word(7));
        let about_c = Term::var("c").eq(&Term::var("d"));
        let about_d = Term::var("d").eq(&Term::word(9));
        let slicer = Slicer::new(&solver, &[about_x.clone(), about_b, about_c, about_d]);
        let goal = Term::var("a").eq(&Term::word(4));
        assert_eq!(slicer.cone(&solver, &goal), Some(about_x));
        // Through c, the cone reaches d's assumption too.
        let goal = Term::var("c").eq(&Term::word(9));
        let cone = slicer.cone(&solver, &goal).unwrap().to_string();
        assert!(cone.contains("i.d") && !cone.contains("i.b"), "{cone}");
    }

    #[test]
    fn what_the_cone_leaves_out_is_asked_for_with_everything() {
        // The assumptions contradict each other away from the goal's
        // names: everything follows from all of them, not from the cone,
        // which is why a goal the cone does not prove is asked again.
        let mut solver = solver();
        for name in ["a", "b", "c"] {
            solver.declare(name, Sort::Bv(64)).unwrap();
        }
        let about_a = Term::var("a").eq(&Term::word(4));
        let assumptions = [
            about_a.clone(),
            Term::var("b").eq(&Term::word(7)),
            Term::var("b").eq(&Term::word(8)),
            Term::var("c").eq(&Term::word(1)),
        ];
        let slicer = Slicer::new(&solver, &assumptions);
        let goal = Term::var("a").eq(&Term::word(0));
        let cone = slicer.cone(&solver, &goal).unwrap();
        assert_eq!(cone, about_a);
        let from_cone = solver.prove(&cone.implies(&goal), &[]).unwrap();
        assert!(!matches!(from_cone, Outcome::Proved), "{from_cone:?}");
        let from_all = solver.prove(&slicer.all().implies(&goal), &[]).unwrap();
        assert_eq!(from_all, Outcome::Proved);
    }

    #[test]
    fn a_cone_of_nearly_everything_is_no_cone() {
        let mut solver = solver();
        for name in ["a", "b"] {
            solver.declare(name, Sort::Bv(64)).unwrap();
        }
        let assumptions = [
            Term::var("a").eq(&Term::var("b")),
            Term::var("b").eq(&Term::word(1)),
        ];
        let slicer = Slicer::new(&solver, &assumptions);
        assert_eq!(
            slicer.cone(&solver, &Term::var("a").eq(&Term::word(1))),
            None
        );
        assert_eq!(slicer.all(), &Term::and_all(assumptions));
    }
}
