//! Side-by-side comparison of runs (the ablation: co-evolution curriculum vs uniform sampling
//! vs no refinement, on the same episode budget): a Markdown table of held-out success and
//! episodes to mastery per skill, and an SVG plot of held-out success against simulated
//! episodes.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::seeds::{self, Arm, ArmSummary};
use super::stats::{self, ArmStats, PairStats, Scores};
use super::{build, plots, Report, SkillSummary};
use crate::error::Result;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run: String,
    pub curriculum: String,
    pub refine: bool,
    pub episodes: usize,
    pub generations: usize,
    pub wall_s: f64,
    /// skill → (final held-out success, simulated episodes when mastered).
    pub skills: Vec<(String, Option<f64>, Option<usize>)>,
}

fn summary(r: &Report) -> RunSummary {
    let skills = r
        .skills
        .iter()
        .filter(|s| s.in_run)
        .map(|s| {
            let mastered_at = r
                .history
                .iter()
                .find(|g| g.skills.get(&s.name).is_some_and(|k| k.mastered))
                .map(|g| g.episodes_simulated);
            (s.name.clone(), s.heldout_success, mastered_at)
        })
        .collect();
    RunSummary {
        run: r.run.clone(),
        curriculum: r.curriculum.clone(),
        refine: r.refine,
        episodes: r.episodes_simulated,
        generations: r.generations_completed,
        wall_s: r.wall_s,
        skills,
    }
}

/// Where runs are cut for a comparison at equal budgets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// Simulated episodes (every explored, searched, scored and validated one).
    Episodes(usize),
    /// Behaviour-cloning optimiser steps.
    Updates(usize),
}

/// Generations `r` keeps when cut at `budget`: up to the first that reached it.
fn kept_generations(r: &Report, budget: Budget) -> usize {
    let mut updates = 0;
    r.history
        .iter()
        .position(|g| match budget {
            Budget::Episodes(n) => g.episodes_simulated >= n,
            Budget::Updates(n) => {
                updates += g.train.as_ref().map_or(0, |t| t.steps);
                updates >= n
            }
        })
        .map_or(r.history.len(), |i| i + 1)
}

/// `r` as it stood at the end of the first generation that reached `budget`: what `coevolve
/// evolve --episode-budget` would have left (runs are deterministic, so a longer run's prefix
/// is that run). Held-out figures are the last accepted ones.
fn at_budget(mut r: Report, budget: Budget) -> Report {
    let keep = kept_generations(&r, budget);
    r.history.truncate(keep);
    r.generations_completed = r.history.len();
    r.episodes_simulated = r.history.last().map_or(0, |g| g.episodes_simulated);
    r.wall_s = r.history.iter().map(|g| g.wall_s).sum();
    r.rollbacks = r.history.iter().filter(|g| g.rolled_back).count();
    for s in &mut r.skills {
        let accepted = r.history.iter().filter(|g| !g.rolled_back);
        s.heldout_success = accepted
            .filter_map(|g| g.skills.get(&s.name).and_then(|k| k.heldout_success))
            .next_back();
        s.mastered_at = r
            .history
            .iter()
            .find(|g| g.mastered.contains(&s.name))
            .map(|g| g.generation);
        s.mastered = s.mastered_at.is_some();
    }
    r
}

/// What `compare` finds: each arm over its seeds, and each run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub arms: Vec<ArmSummary>,
    pub runs: Vec<RunSummary>,
    /// Each arm's IQM and performance profile over its (run, skill) scores.
    pub stats: Vec<ArmStats>,
    /// The first arm against each of the others.
    pub pairs: Vec<PairStats>,
}

/// What `compare` writes: the figures, the Markdown tables and two SVG plots.
#[derive(Clone, Debug)]
pub struct Compared {
    pub comparison: Comparison,
    pub markdown: String,
    /// Held-out success against simulated episodes, per run.
    pub curves_svg: String,
    /// Performance profiles per arm with their intervals.
    pub profile_svg: String,
}

/// Every run's `field` (final held-out success, hard tail) on each of `skills` (0 where it has
/// none).
fn scores(
    reports: &[Report],
    skills: &[String],
    field: fn(&SkillSummary) -> Option<f64>,
) -> Scores {
    let runs = reports
        .iter()
        .map(|r| {
            skills
                .iter()
                .map(|name| {
                    r.skills
                        .iter()
                        .find(|s| &s.name == name)
                        .and_then(field)
                        .unwrap_or(0.0)
                })
                .collect()
        })
        .collect();
    Scores {
        skills: skills.to_vec(),
        runs,
    }
}

/// Markdown tables (arms over their seeds, their statistics, then every run) and SVG plots
/// comparing `arms`, each run cut at `budget` simulated episodes when given.
pub fn compare(arms: &[Arm], budget: Option<Budget>) -> Result<Compared> {
    let mut reports: Vec<Report> = Vec::new();
    let mut per_arm: Vec<Vec<Report>> = Vec::new();
    let mut arm_summaries = Vec::new();
    for arm in arms {
        let cut: Vec<Report> = arm
            .runs
            .iter()
            .map(|d| build(d).map(|(r, _)| r))
            .map(|r| {
                r.map(|r| match budget {
                    Some(b) => at_budget(r, b),
                    None => r,
                })
            })
            .collect::<Result<_>>()?;
        arm_summaries.push(seeds::summarise(&arm.name, &cut));
        reports.extend(cut.iter().cloned());
        per_arm.push(cut);
    }
    let summaries: Vec<RunSummary> = reports.iter().map(summary).collect();
    let skills: BTreeSet<String> = summaries
        .iter()
        .flat_map(|s| s.skills.iter().map(|(n, _, _)| n.clone()))
        .collect();
    let skill_list: Vec<String> = skills.iter().cloned().collect();
    let arm_scores: Vec<Scores> = per_arm
        .iter()
        .map(|r| scores(r, &skill_list, |s| s.heldout_success))
        .collect();
    // The hard tail, where every run measured it.
    let measured = reports
        .iter()
        .all(|r| r.skills.iter().any(|s| s.hard_tail.is_some()));
    let tails: Option<Vec<Scores>> = measured.then(|| {
        per_arm
            .iter()
            .map(|r| scores(r, &skill_list, |s| s.hard_tail))
            .collect()
    });
    let stats: Vec<ArmStats> = arms
        .iter()
        .zip(&arm_scores)
        .zip(&per_arm)
        .enumerate()
        .map(|(i, ((a, x), runs))| ArmStats {
            grpo_groups: grpo_groups(runs),
            hard_tail_iqm: tails
                .as_ref()
                .map(|t| stats::bootstrap(&t[i], 5, Scores::iqm)),
            ..stats::arm_stats(&a.name, x)
        })
        .collect();
    let pairs: Vec<PairStats> = (1..arms.len())
        .map(|i| PairStats {
            hard_tail_difference: tails
                .as_ref()
                .map(|t| stats::bootstrap_pair(&t[0], &t[i], 6, |a, b| a.iqm() - b.iqm())),
            ..stats::pair_stats(&arms[0].name, &arm_scores[0], &arms[i].name, &arm_scores[i])
        })
        .collect();
    let mut md = seeds::markdown(&arm_summaries);
    md.push_str(&stats_markdown(&stats, &pairs));
    md.push_str("\n| run | curriculum | refinement | episodes | generations | time |");
    for s in &skills {
        let _ = write!(md, " {s}: held-out | {s}: episodes to mastery |");
    }
    md.push_str("\n|---|---|---|---|---|---|");
    md.push_str(&"---|---|".repeat(skills.len()));
    md.push('\n');
    for s in &summaries {
        let _ = write!(
            md,
            "| {} | {} | {} | {} | {} | {:.0} s |",
            s.run,
            s.curriculum,
            if s.refine { "on" } else { "off" },
            s.episodes,
            s.generations,
            s.wall_s
        );
        for name in &skills {
            let entry = s.skills.iter().find(|(n, _, _)| n == name);
            let heldout = entry
                .and_then(|(_, h, _)| *h)
                .map_or_else(|| "–".to_owned(), |h| format!("{:.0} %", 100.0 * h));
            let mastery = entry
                .and_then(|(_, _, m)| *m)
                .map_or_else(|| "not mastered".to_owned(), |m| m.to_string());
            let _ = write!(md, " {heldout} | {mastery} |");
        }
        md.push('\n');
    }
    let profile_svg = plots::profiles(&stats);
    let comparison = Comparison {
        arms: arm_summaries,
        runs: summaries,
        stats,
        pairs,
    };
    Ok(Compared {
        comparison,
        markdown: md,
        curves_svg: plots::curves(&reports, &skills),
        profile_svg,
    })
}

/// (groups, groups whose sampled success was all 0 or all 1) over every GRPO phase of `runs`.
fn grpo_groups(runs: &[Report]) -> (usize, usize) {
    let phases = runs.iter().flat_map(|r| &r.history).flat_map(|g| &g.grpo);
    phases.fold((0, 0), |(n, u), f| (n + f.groups, u + f.uniform_groups))
}

fn fmt_interval(i: &stats::Interval) -> String {
    format!("{:.3} [{:.3}, {:.3}]", i.point, i.lo, i.hi)
}

/// The statistics section: each arm's IQM, then the first arm against each other one.
fn stats_markdown(stats: &[ArmStats], pairs: &[PairStats]) -> String {
    let tail =
        |i: &Option<stats::Interval>| i.as_ref().map_or_else(|| "–".to_owned(), fmt_interval);
    let mut md = String::from(
        "\nHeld-out success pooled over runs × skills; 95 % stratified-bootstrap intervals \
         (runs resampled per skill, 2,000 resamples). Hard tail: the worst 10 % of variants, \
         rescored independently (`evolve --hard-tail`). GRPO groups without signal: all \
         rollouts succeeded or all failed.\n\n\
         | arm | runs | IQM [95 % CI] | hard tail IQM | GRPO groups without signal |\n\
         |---|---|---|---|---|\n",
    );
    for s in stats {
        let (groups, uniform) = s.grpo_groups;
        let grpo = if groups == 0 {
            "–".to_owned()
        } else {
            format!("{uniform} of {groups}")
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {grpo} |",
            s.arm,
            s.runs,
            fmt_interval(&s.iqm),
            tail(&s.hard_tail_iqm)
        );
    }
    if !pairs.is_empty() {
        md.push_str(
            "\n| arm | against | IQM difference [95 % CI] | P(improvement) [95 % CI] | \
             hard tail IQM difference |\n|---|---|---|---|---|\n",
        );
        for p in pairs {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                p.arm,
                p.baseline,
                fmt_interval(&p.iqm_difference),
                fmt_interval(&p.probability_of_improvement),
                tail(&p.hard_tail_difference)
            );
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evolve::state::{SkillGeneration, TrainFigures};
    use crate::evolve::GenerationRecord;
    use crate::report::SkillSummary;
    use policy::rollout::EarlyStopReport;

    fn generation(g: usize, episodes: usize, heldout: f64, rolled_back: bool) -> GenerationRecord {
        let skill = SkillGeneration {
            heldout_success: Some(heldout),
            ..SkillGeneration::default()
        };
        GenerationRecord {
            generation: g,
            skills: [("grasp".to_owned(), skill)].into_iter().collect(),
            mastered: if heldout >= 0.8 && !rolled_back {
                vec!["grasp".to_owned()]
            } else {
                Vec::new()
            },
            rolled_back,
            episodes_simulated: episodes,
            wall_s: 10.0,
            train: Some(TrainFigures {
                steps: 50,
                ..TrainFigures::default()
            }),
            ..GenerationRecord::default()
        }
    }

    #[test]
    fn a_run_cut_at_a_budget_keeps_its_last_accepted_figures() {
        let report = Report {
            run: "r".into(),
            tree: "t".into(),
            curriculum: "coevolve".into(),
            refine: true,
            generations_completed: 4,
            episodes_simulated: 400,
            rollbacks: 1,
            wall_s: 40.0,
            threads: 2,
            skills: vec![SkillSummary {
                name: "grasp".into(),
                group: "tabletop".into(),
                prerequisites: Vec::new(),
                in_run: true,
                mastered: true,
                mastered_at: Some(3),
                heldout_success: Some(0.9),
                heldout_episodes: Some(32),
                fresh_success: None,
                fresh_episodes: None,
                hard_tail: None,
                best_heldout: 0.9,
                mastery_threshold: 0.8,
                episodes_used: 400,
                golden_episodes: 10,
            }],
            early_stop: EarlyStopReport::default(),
            history: vec![
                generation(0, 100, 0.3, false),
                generation(1, 200, 0.5, false),
                generation(2, 300, 0.1, true),
                generation(3, 400, 0.9, false),
            ],
        };
        let cut = at_budget(report.clone(), Budget::Episodes(250));
        assert_eq!(cut.generations_completed, 3);
        assert_eq!(cut.episodes_simulated, 300);
        assert_eq!(cut.rollbacks, 1);
        assert_eq!(
            cut.skills[0].heldout_success,
            Some(0.5),
            "the rolled-back 0.1 is not kept"
        );
        assert!(!cut.skills[0].mastered);
        let by_updates = at_budget(report.clone(), Budget::Updates(100));
        assert_eq!(by_updates.generations_completed, 2, "50 steps a generation");
        let all = at_budget(report, Budget::Episodes(10_000));
        assert_eq!(all.generations_completed, 4);
        assert_eq!(all.skills[0].heldout_success, Some(0.9));
        assert!(all.skills[0].mastered);
    }
}
