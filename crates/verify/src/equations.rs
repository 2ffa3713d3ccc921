//! Sight equations: where both traces name what their calls and guards
//! can see of the fresh objects by arrays of their own, an equation
//! between the two arrays, once proved, lets the solver read one for the
//! other. Each is a help, never an assumption: it is used only when
//! proved from the assumptions, within a short time of its own.

use traceopt_smt::{Solver, SolverError, Term};

use crate::heap::World;
use crate::proves;
use crate::reach::Sight;
use crate::slice::Slicer;

/// Where both traces' sights at one point (the k-th call that observes
/// the heap, a pair of guards compared, the end) reach their objects at
/// fixed slots under conditions of their own (`Sight::slot_reached`, a
/// named array each), the two names, BEFORE's first. Proved equal from
/// the assumptions, BEFORE's name is made to stand for AFTER's
/// (`Solver::alias`): the solver then need not show the two traces'
/// reach alike, slot by slot, in every cell it compares (on
/// `shapes_dispatch.log:1734`, 2 to 7 s per cell without, under 1 s
/// with). Assumed as an equation instead, it made other queries slower
/// (`collatz.log:2611`: 13 s to 44 s).
pub(crate) fn sight_equations<'s>(
    points: impl Iterator<Item = (&'s Sight, &'s Sight)>,
) -> Vec<(Term, Term)> {
    let mut equations: Vec<(Term, Term)> = Vec::new();
    for (x, y) in points {
        let (Some(p), Some(q)) = (&x.slot_reached, &y.slot_reached) else {
            continue;
        };
        let fresh = equations.iter().all(|(e, _)| e != p);
        // Where AFTER lists fewer objects (BEFORE's others are ones AFTER
        // keeps virtual, such as arrays of a folded copy), they may well
        // be unreached there: the equation is tried too.
        if p != q && fresh && y.listed_slots().is_subset(&x.listed_slots()) {
            equations.push((p.clone(), q.clone()));
        }
    }
    equations
}

/// The equations of `equations` proved from `assumptions`; the others
/// are left out (an equation not proved is no difference, only no help).
pub(crate) fn proved_equations(
    solver: &mut Solver,
    world: &World,
    assumptions: &Slicer,
    equations: Vec<(Term, Term)>,
) -> Result<Vec<(Term, Term)>, SolverError> {
    // Each is a help, not an obligation: it gets a short time, so that
    // many that do not hold cost little.
    let timeout = solver.timeout();
    solver.set_timeout(timeout.min(EQUATION_TIMEOUT));
    let mut proved = Vec::new();
    let tried = || -> Result<(), SolverError> {
        for (x, y) in equations {
            // (Its cone takes long to find in a large trace.)
            if solver.out_of_time().is_some() {
                break;
            }
            let equation = x.eq(&y);
            let premise =
                (assumptions.cone(solver, &equation)).unwrap_or_else(|| assumptions.all().clone());
            if proves(solver, world, &premise.implies(&equation))? {
                proved.push((x, y));
            }
        }
        Ok(())
    };
    let result = tried();
    solver.set_timeout(timeout);
    result.map(|()| proved)
}

/// The time a sight equation (`proved_equations`) may take.
const EQUATION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::time::Duration;
    use traceopt_smt::{Fun, Sort};

    /// A sight whose objects at `slots` are reached where `when` holds,
    /// named by the array `name`.
    fn sight(name: &str, slots: &[u128]) -> Sight {
        let base = Term::var("base");
        let at = |slot| {
            base.bv(
                Fun::BvAdd,
                &Term::Bv {
                    value: slot,
                    width: 64,
                },
            )
        };
        Sight {
            base: base.clone(),
            slots: 4,
            reached: (slots.iter())
                .map(|&s| (at(s), Term::var("when")))
                .collect(),
            names: HashMap::new(),
            also_hidden: Vec::new(),
            slot_reached: Some(Term::var(name)),
        }
    }

    #[test]
    fn an_equation_is_tried_where_after_lists_no_object_before_does_not() {
        let (b1, a1) = (sight("b1", &[1, 2]), sight("a1", &[1]));
        let (b2, a2) = (sight("b2", &[1]), sight("a2", &[1, 2]));
        let (b3, a3) = (sight("b3", &[1]), sight("b3", &[1]));
        let again = sight("a4", &[1]);
        let points = [(&b1, &a1), (&b2, &a2), (&b3, &a3), (&b1, &again)];
        let equations = sight_equations(points.into_iter());
        // Not where AFTER lists slot 2 that BEFORE does not, nor where
        // the two share a name, nor a second time for BEFORE's name.
        assert_eq!(equations, vec![(Term::var("b1"), Term::var("a1"))]);
    }

    #[test]
    fn only_the_equations_the_assumptions_prove_are_kept() {
        let mut solver = Solver::start(None, Duration::from_secs(10)).expect("an SMT solver");
        for name in ["x", "y", "z"] {
            solver.declare(name, Sort::Bv(64)).unwrap();
        }
        let assumptions = [Term::var("x").eq(&Term::var("y"))];
        let slicer = Slicer::new(&solver, &assumptions);
        let equations = vec![
            (Term::var("x"), Term::var("z")),
            (Term::var("x"), Term::var("y")),
        ];
        let world = World::default();
        let proved = proved_equations(&mut solver, &world, &slicer, equations).unwrap();
        assert_eq!(proved, vec![(Term::var("x"), Term::var("y"))]);
        // The short time each equation gets is the solver's no longer.
        assert_eq!(solver.timeout(), Duration::from_secs(10));
    }
}
