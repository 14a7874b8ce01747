//! Side-by-side comparison of runs (the ablation: co-evolution curriculum vs uniform sampling
//! vs no refinement, on the same episode budget): a Markdown table of held-out success and
//! episodes to mastery per skill, and an SVG plot of held-out success against simulated
//! episodes.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::seeds::{self, Arm, ArmSummary};
use super::{build, Report};
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

/// `r` as it stood at the end of the first generation in which `budget` episodes had been
/// simulated: what `coevolve evolve --episode-budget` would have left (runs are deterministic,
/// so a longer run's prefix is that run). Held-out figures are the last accepted ones.
fn at_budget(mut r: Report, budget: usize) -> Report {
    let keep = r
        .history
        .iter()
        .position(|g| g.episodes_simulated >= budget)
        .map_or(r.history.len(), |i| i + 1);
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
}

/// Markdown tables (arms over their seeds, then every run) and an SVG plot comparing `arms`,
/// each run cut at `budget` simulated episodes when given.
pub fn compare(arms: &[Arm], budget: Option<usize>) -> Result<(Comparison, String, String)> {
    let mut reports: Vec<Report> = Vec::new();
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
        reports.extend(cut);
    }
    let summaries: Vec<RunSummary> = reports.iter().map(summary).collect();
    let skills: BTreeSet<String> = summaries
        .iter()
        .flat_map(|s| s.skills.iter().map(|(n, _, _)| n.clone()))
        .collect();
    let mut md = seeds::markdown(&arm_summaries);
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
    let comparison = Comparison {
        arms: arm_summaries,
        runs: summaries,
    };
    Ok((comparison, md, plot(&reports, &skills)))
}

const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];
const DASHES: [&str; 6] = ["", "6,3", "2,3", "10,3,2,3", "1,2", "4,4"];

/// Held-out success against simulated episodes: colour per run, dash pattern per skill.
fn plot(reports: &[Report], skills: &BTreeSet<String>) -> String {
    let (w, h, left, bottom, legend) = (760.0, 340.0, 50.0, 35.0, 190.0);
    let max_x = reports
        .iter()
        .map(|r| r.episodes_simulated)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let sx = |x: usize| left + x as f64 / max_x * (w - left - legend);
    let sy = |y: f64| (h - bottom) - y * (h - bottom - 10.0);
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}"><rect width="{w}" height="{h}" fill="#fff"/><line x1="{left}" y1="{0}" x2="{1}" y2="{0}" stroke="#000"/><line x1="{left}" y1="10" x2="{left}" y2="{0}" stroke="#000"/><text x="5" y="20" font-size="11" font-family="sans-serif">held-out</text><text x="{2}" y="{3}" font-size="11" font-family="sans-serif">simulated episodes ({max_x:.0} max)</text>"##,
        h - bottom,
        w - legend,
        left + 150.0,
        h - 8.0
    );
    for y in [0.25, 0.5, 0.75, 1.0] {
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#eee"/><text x="20" y="{2:.1}" font-size="10" font-family="sans-serif">{y}</text>"##,
            sy(y),
            w - legend,
            sy(y) + 4.0
        );
    }
    for (ri, r) in reports.iter().enumerate() {
        let colour = COLOURS[ri % COLOURS.len()];
        for (si, skill) in skills.iter().enumerate() {
            let points: Vec<String> = r
                .history
                .iter()
                .filter_map(|g| {
                    let h = g.skills.get(skill)?.heldout_success?;
                    Some(format!("{:.1},{:.1}", sx(g.episodes_simulated), sy(h)))
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            let _ = write!(
                svg,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{}"/>"#,
                points.join(" "),
                DASHES[si % DASHES.len()]
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" font-size="12" fill="{colour}" font-family="sans-serif">{} ({}, refine {})</text>"#,
            w - legend + 10.0,
            20.0 + 16.0 * ri as f64,
            r.run,
            r.curriculum,
            if r.refine { "on" } else { "off" }
        );
    }
    for (si, skill) in skills.iter().enumerate() {
        let y = 30.0 + 16.0 * (reports.len() + si) as f64;
        let _ = write!(
            svg,
            r##"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#333" stroke-width="2" stroke-dasharray="{3}"/><text x="{4}" y="{5}" font-size="12" font-family="sans-serif">{6}</text>"##,
            w - legend + 10.0,
            y,
            w - legend + 40.0,
            DASHES[si % DASHES.len()],
            w - legend + 46.0,
            y + 4.0,
            skill
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evolve::state::SkillGeneration;
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
        let cut = at_budget(report.clone(), 250);
        assert_eq!(cut.generations_completed, 3);
        assert_eq!(cut.episodes_simulated, 300);
        assert_eq!(cut.rollbacks, 1);
        assert_eq!(
            cut.skills[0].heldout_success,
            Some(0.5),
            "the rolled-back 0.1 is not kept"
        );
        assert!(!cut.skills[0].mastered);
        let all = at_budget(report, 10_000);
        assert_eq!(all.generations_completed, 4);
        assert_eq!(all.skills[0].heldout_success, Some(0.9));
        assert!(all.skills[0].mastered);
    }
}
