//! Which skills a generation works on: the frontier (part of the run, not mastered, every
//! prerequisite mastered) and the mastered skills whose regression rolled the last generation
//! back (they get fresh demonstrations too).

use super::state::RunState;
use super::Context;
use crate::tree::Skill;

/// A generation's skills, each with its index in the tree (for its seed streams).
#[derive(Debug)]
pub struct Work<'a> {
    pub frontier: Vec<(usize, &'a Skill)>,
    pub refresh: Vec<(usize, &'a Skill)>,
}

impl Work<'_> {
    pub fn frontier_names(&self) -> Vec<String> {
        self.frontier
            .iter()
            .map(|(_, s)| s.name().to_owned())
            .collect()
    }

    /// Every skill explored this generation: the frontier, then the refreshed ones.
    pub fn explored(&self) -> impl Iterator<Item = &(usize, &Skill)> {
        self.frontier.iter().chain(&self.refresh)
    }
}

/// The skills generation work goes to, given the run's state.
pub fn work<'a>(ctx: &'a Context, state: &RunState) -> Work<'a> {
    let mastered = state.mastered();
    let in_run = || {
        ctx.tree
            .skills
            .iter()
            .enumerate()
            .filter(|(_, s)| ctx.closure.contains(s.name()))
    };
    let frontier = in_run()
        .filter(|(_, s)| !mastered.contains(s.name()))
        .filter(|(_, s)| s.def.prerequisites.iter().all(|p| mastered.contains(p)))
        .collect();
    let refresh = in_run()
        .filter(|(_, s)| {
            state
                .skills
                .get(s.name())
                .is_some_and(|st| st.mastered() && st.regressed)
        })
        .collect();
    Work { frontier, refresh }
}
