//! Runs summarised over seeds: one *arm* (a configuration) run with several seeds is judged by
//! how many of its seeds mastered each skill, the spread of the final held-out and fresh-variant
//! success (mean, min, interquartile mean) and the generations and episodes it took.
//!
//! An arm is given as a directory of seed runs (`runs/seeds/seed-0`, `seed-1`, …: what
//! `coevolve evolve --seeds` writes), as one run directory, or as `NAME=DIR,DIR,…`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{build, Report};
use crate::error::{Result, SkillsError};

/// A configuration and the run directories of its seeds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arm {
    pub name: String,
    pub runs: Vec<PathBuf>,
}

fn is_run(dir: &Path) -> bool {
    dir.join("state.json").is_file()
}

/// Reads an arm from `NAME=DIR,DIR,…`, a run directory, or a directory of run directories.
pub fn arm(spec: &str) -> Result<Arm> {
    if let Some((name, dirs)) = spec.split_once('=') {
        let runs: Vec<PathBuf> = dirs.split(',').map(PathBuf::from).collect();
        if let Some(bad) = runs.iter().find(|d| !is_run(d)) {
            return Err(SkillsError::run(bad, "not a run directory (no state.json)"));
        }
        return Ok(Arm {
            name: name.to_owned(),
            runs,
        });
    }
    let dir = PathBuf::from(spec);
    let name = dir
        .file_name()
        .map_or_else(|| spec.to_owned(), |n| n.to_string_lossy().into_owned());
    if is_run(&dir) {
        return Ok(Arm {
            name,
            runs: vec![dir],
        });
    }
    let entries = std::fs::read_dir(&dir).map_err(|e| SkillsError::run(&dir, e.to_string()))?;
    let mut runs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_run(p))
        .collect();
    runs.sort();
    if runs.is_empty() {
        return Err(SkillsError::run(
            &dir,
            "neither a run directory nor a directory of runs (no state.json in it or below it)",
        ));
    }
    Ok(Arm { name, runs })
}

/// Mean, min and interquartile mean (the mean of the middle half: ⌊n/4⌋ values trimmed from
/// each end, as `scipy.stats.trim_mean(x, 0.25)`) of `values`; None when empty.
pub fn spread(values: &[f64]) -> Option<Spread> {
    Some(Spread {
        mean: values.iter().sum::<f64>() / values.len() as f64,
        min: values.iter().copied().min_by(f64::total_cmp)?,
        iqm: super::stats::iqm(values)?,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub mean: f64,
    pub min: f64,
    pub iqm: f64,
}

/// One skill over an arm's seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillOverSeeds {
    pub skill: String,
    pub seeds: usize,
    pub mastered: usize,
    /// Final held-out success (a skill never evaluated counts 0).
    pub heldout: Option<Spread>,
    /// Latest fresh-variant success, over the seeds that have one.
    pub fresh: Option<Spread>,
    /// Generation and simulated episodes at mastery, per mastered seed.
    pub generations_to_mastery: Vec<usize>,
    pub episodes_to_mastery: Vec<usize>,
}

/// An arm summarised over its seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmSummary {
    pub arm: String,
    pub runs: Vec<String>,
    pub wall_s: Vec<f64>,
    pub episodes: Vec<usize>,
    pub skills: Vec<SkillOverSeeds>,
}

fn latest_fresh(r: &Report, skill: &str) -> Option<f64> {
    r.history
        .iter()
        .filter_map(|g| g.skills.get(skill).and_then(|s| s.fresh_success))
        .next_back()
}

/// `arm` summarised from the reports of its runs.
pub fn summarise(name: &str, reports: &[Report]) -> ArmSummary {
    let mut skills: Vec<String> = Vec::new();
    for r in reports {
        for s in r.skills.iter().filter(|s| s.in_run) {
            if !skills.contains(&s.name) {
                skills.push(s.name.clone());
            }
        }
    }
    let skills = skills
        .into_iter()
        .map(|skill| {
            let per_run: Vec<_> = reports
                .iter()
                .filter_map(|r| Some((r, r.skills.iter().find(|s| s.name == skill)?)))
                .collect();
            let heldout: Vec<f64> = per_run
                .iter()
                .map(|(_, s)| s.heldout_success.unwrap_or(0.0))
                .collect();
            let fresh: Vec<f64> = per_run
                .iter()
                .filter_map(|(r, _)| latest_fresh(r, &skill))
                .collect();
            let at_mastery: Vec<(usize, usize)> = per_run
                .iter()
                .filter_map(|(r, s)| {
                    let g = s.mastered_at?;
                    let record = r.history.iter().find(|h| h.generation == g)?;
                    Some((g, record.episodes_simulated))
                })
                .collect();
            SkillOverSeeds {
                seeds: per_run.len(),
                mastered: per_run.iter().filter(|(_, s)| s.mastered).count(),
                heldout: spread(&heldout),
                fresh: spread(&fresh),
                generations_to_mastery: at_mastery.iter().map(|m| m.0).collect(),
                episodes_to_mastery: at_mastery.iter().map(|m| m.1).collect(),
                skill,
            }
        })
        .collect();
    ArmSummary {
        arm: name.to_owned(),
        runs: reports.iter().map(|r| r.run.clone()).collect(),
        wall_s: reports.iter().map(|r| r.wall_s).collect(),
        episodes: reports.iter().map(|r| r.episodes_simulated).collect(),
        skills,
    }
}

/// Reads every run of `arm` and summarises it.
pub fn summarise_arm(arm: &Arm) -> Result<(ArmSummary, Vec<Report>)> {
    let reports: Vec<Report> = arm
        .runs
        .iter()
        .map(|d| build(d).map(|(r, _)| r))
        .collect::<Result<_>>()?;
    Ok((summarise(&arm.name, &reports), reports))
}

fn pct(s: Option<Spread>) -> String {
    s.map_or_else(
        || "–".to_owned(),
        |s| format!("{:.2} / {:.2} / {:.2}", s.mean, s.min, s.iqm),
    )
}

fn list<T: ToString>(v: &[T]) -> String {
    if v.is_empty() {
        return "–".to_owned();
    }
    v.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}

/// The Markdown table: a row per arm and skill.
pub fn markdown(arms: &[ArmSummary]) -> String {
    let mut md = String::from(
        "| arm | skill | mastered | held-out mean / min / IQM | fresh mean / min / IQM | generation at mastery | episodes at mastery |\n|---|---|---|---|---|---|---|\n",
    );
    for a in arms {
        for s in &a.skills {
            let _ = writeln!(
                md,
                "| {} | {} | {} of {} | {} | {} | {} | {} |",
                a.arm,
                s.skill,
                s.mastered,
                s.seeds,
                pct(s.heldout),
                pct(s.fresh),
                list(&s.generations_to_mastery),
                list(&s.episodes_to_mastery),
            );
        }
    }
    md.push('\n');
    for a in arms {
        let wall = spread(&a.wall_s);
        let _ = writeln!(
            md,
            "{}: {} seeds ({}); wall time {}; episodes {}.",
            a.arm,
            a.runs.len(),
            a.runs.join(", "),
            wall.map_or_else(
                || "–".to_owned(),
                |w| format!(
                    "mean {:.0} s, max {:.0} s",
                    w.mean,
                    a.wall_s.iter().copied().fold(0.0, f64::max)
                )
            ),
            list(&a.episodes),
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evolve::state::SkillGeneration;
    use crate::evolve::GenerationRecord;
    use crate::report::SkillSummary;

    fn run(name: &str, mastered_at: Option<usize>, heldout: f64, fresh: Option<f64>) -> Report {
        let history = (0..3)
            .map(|g| GenerationRecord {
                generation: g,
                episodes_simulated: 100 * (g + 1),
                skills: [(
                    "lift".to_owned(),
                    SkillGeneration {
                        heldout_success: Some(heldout),
                        fresh_success: fresh.filter(|_| g == 2),
                        ..SkillGeneration::default()
                    },
                )]
                .into(),
                ..GenerationRecord::default()
            })
            .collect();
        Report {
            run: name.into(),
            tree: "default".into(),
            curriculum: "coevolve".into(),
            refine: true,
            generations_completed: 3,
            episodes_simulated: 300,
            rollbacks: 0,
            wall_s: 60.0,
            threads: 2,
            skills: vec![SkillSummary {
                name: "lift".into(),
                group: "tabletop".into(),
                prerequisites: Vec::new(),
                in_run: true,
                mastered: mastered_at.is_some(),
                mastered_at,
                heldout_success: Some(heldout),
                heldout_episodes: Some(128),
                fresh_success: fresh,
                fresh_episodes: fresh.map(|_| 64),
                hard_tail: None,
                best_heldout: heldout,
                mastery_threshold: 0.8,
                episodes_used: 300,
                golden_episodes: 10,
            }],
            early_stop: policy::rollout::EarlyStopReport::default(),
            history,
        }
    }

    #[test]
    fn an_arm_counts_mastered_seeds_and_spreads_their_figures() {
        let reports = [
            run("seed-0", Some(1), 0.9, Some(0.85)),
            run("seed-1", None, 0.5, None),
            run("seed-2", Some(2), 0.85, Some(0.8)),
        ];
        let a = summarise("default", &reports);
        let lift = &a.skills[0];
        assert_eq!((lift.mastered, lift.seeds), (2, 3));
        assert_eq!(lift.generations_to_mastery, [1, 2]);
        assert_eq!(lift.episodes_to_mastery, [200, 300]);
        let h = lift.heldout.unwrap_or_else(|| panic!("held-out"));
        assert!((h.mean - 0.75).abs() < 1e-12 && (h.min - 0.5).abs() < 1e-12);
        let f = lift.fresh.unwrap_or_else(|| panic!("fresh"));
        assert!(
            (f.mean - 0.825).abs() < 1e-12,
            "two seeds have a fresh figure"
        );
        let md = markdown(&[a]);
        assert!(md.contains("| default | lift | 2 of 3 |"), "{md}");
    }

    #[test]
    fn spread_has_mean_min_and_iqm() {
        let s = spread(&[0.0, 0.5, 0.6, 0.7, 1.0]).unwrap_or_else(|| panic!("values"));
        assert!((s.mean - 0.56).abs() < 1e-12);
        assert_eq!(s.min, 0.0);
        assert!((s.iqm - 0.6).abs() < 1e-12, "middle three: 0.5, 0.6, 0.7");
        let s = spread(&[0.9, 0.1, 0.5]).unwrap_or_else(|| panic!("values"));
        assert!((s.iqm - 0.5).abs() < 1e-12, "n = 3: nothing trimmed");
        assert!(spread(&[]).is_none());
    }
}
