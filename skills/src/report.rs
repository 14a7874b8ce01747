//! Skill-tree progress reports of a run directory: `report.json` (a `skills` list and the
//! per-generation history), `report.md` and a self-contained `report.html` (SVG skill tree
//! coloured by mastery with prerequisite edges, held-out success per skill over generations,
//! data pool and synthesised variants per signal, refinement and throughput figures).

pub mod compare;
mod html;
mod plots;
pub mod seeds;
pub mod stats;
pub mod throughput;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use policy::rollout::EarlyStopReport;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::evolve::run_dir::write_atomic;
use crate::evolve::state::SkillGeneration;
use crate::evolve::{GenerationRecord, RunDir, RunState};
use crate::tree::SkillTree;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillSummary {
    pub name: String,
    pub group: String,
    pub prerequisites: Vec<String>,
    /// Part of this run (a target or one of its prerequisites).
    pub in_run: bool,
    pub mastered: bool,
    pub mastered_at: Option<usize>,
    /// Held-out success of the current policy (latest accepted evaluation).
    pub heldout_success: Option<f64>,
    /// Held-out episodes that evaluation ran (the sequential test stops early when a rate is
    /// clear of every threshold).
    #[serde(default)]
    pub heldout_episodes: Option<usize>,
    /// Latest success on fresh variants no decision saw (mastered skills), and their number.
    #[serde(default)]
    pub fresh_success: Option<f64>,
    #[serde(default)]
    pub fresh_episodes: Option<usize>,
    /// The hard-tail score (`evolve::hard_tail`), when the run measured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_tail: Option<f64>,
    pub best_heldout: f64,
    pub mastery_threshold: f64,
    /// Simulated episodes spent on the skill.
    pub episodes_used: usize,
    pub golden_episodes: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub run: String,
    pub tree: String,
    pub curriculum: String,
    pub refine: bool,
    pub generations_completed: usize,
    pub episodes_simulated: usize,
    pub rollbacks: usize,
    pub wall_s: f64,
    /// Worker threads of the run (for the throughput table's busy fractions).
    #[serde(default)]
    pub threads: usize,
    pub skills: Vec<SkillSummary>,
    /// Early stopping of the exploration rollouts, summed over the run.
    pub early_stop: EarlyStopReport,
    pub history: Vec<GenerationRecord>,
}

/// Builds the report of the run in `dir` from its committed state.
pub fn build(dir: &Path) -> Result<(Report, SkillTree)> {
    let run = RunDir::new(dir);
    let cfg = run.read_config()?;
    let state: RunState = run.read_state()?;
    let history = run.read_metrics(state.completed_generations)?;
    let tree = SkillTree::named(&cfg.tree)?;
    // The held-out figure of the latest accepted generation; the latest fresh-variant one
    // (measured on the policy the run continued with, rolled back or not).
    let latest = |name: &str, field: fn(&SkillGeneration) -> Option<(f64, usize)>, any: bool| {
        history
            .iter()
            .filter(|g| any || !g.rolled_back)
            .filter_map(|g| g.skills.get(name).and_then(field))
            .next_back()
    };
    let skills = tree
        .skills
        .iter()
        .map(|s| {
            let st = state.skills.get(s.name());
            let fresh = latest(s.name(), fresh_of, true);
            SkillSummary {
                heldout_episodes: latest(s.name(), heldout_of, false).map(|(_, n)| n),
                fresh_success: fresh.map(|(r, _)| r),
                fresh_episodes: fresh.map(|(_, n)| n),
                hard_tail: latest(s.name(), hard_tail_of, true).map(|(r, _)| r),
                name: s.name().to_owned(),
                group: s.def.group.clone(),
                prerequisites: s.def.prerequisites.clone(),
                in_run: st.is_some(),
                mastered: st.is_some_and(|st| st.mastered()),
                mastered_at: st.and_then(|st| st.mastered_at),
                heldout_success: st.and_then(|st| st.heldout.last().map(|(_, r)| *r)),
                best_heldout: st.map_or(0.0, |st| st.best_heldout),
                mastery_threshold: s.def.mastery,
                episodes_used: st.map_or(0, |st| st.episodes_used),
                golden_episodes: st.map_or(0, |st| st.golden),
            }
        })
        .collect();
    let mut early_stop = EarlyStopReport::default();
    for g in &history {
        for s in g.skills.values() {
            if let Some(e) = &s.early_stop {
                early_stop.add(e);
            }
        }
    }
    let name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok((
        Report {
            run: name,
            tree: tree.name.clone(),
            curriculum: format!("{:?}", cfg.curriculum).to_lowercase(),
            refine: cfg.refine,
            generations_completed: state.completed_generations,
            episodes_simulated: state.episodes_simulated,
            rollbacks: state.rollbacks,
            wall_s: state.wall_s,
            threads: cfg.threads,
            skills,
            early_stop,
            history,
        },
        tree,
    ))
}

fn heldout_of(s: &SkillGeneration) -> Option<(f64, usize)> {
    Some((s.heldout_success?, s.heldout_episodes?))
}

fn hard_tail_of(s: &SkillGeneration) -> Option<(f64, usize)> {
    s.hard_tail.as_ref().map(|h| (h.success, h.selected))
}

fn fresh_of(s: &SkillGeneration) -> Option<(f64, usize)> {
    Some((s.fresh_success?, s.fresh_episodes?))
}

/// Writes `report.json`, `report.md` and `report.html` into the run directory.
pub fn write_reports(dir: &Path) -> Result<Report> {
    let (report, tree) = build(dir)?;
    let json = serde_json::to_vec_pretty(&report)
        .map_err(|e| crate::SkillsError::run(dir, format!("report: {e}")))?;
    write_atomic(&dir.join("report.json"), &json)?;
    write_atomic(&dir.join("report.md"), markdown(&report).as_bytes())?;
    write_atomic(
        &dir.join("report.html"),
        html::page(&report, &tree).as_bytes(),
    )?;
    Ok(report)
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{:.0} %", 100.0 * v))
}

fn with_count(v: Option<f64>, n: Option<usize>) -> String {
    match n {
        Some(n) if v.is_some() => format!("{} ({n})", pct(v)),
        _ => pct(v),
    }
}

/// Data pool size and validated synthesised variants per signal, summed over skills, per
/// generation.
pub fn pool_and_synthesis(r: &Report) -> Vec<(usize, usize, BTreeMap<String, usize>)> {
    r.history
        .iter()
        .map(|g| {
            let pool = g.skills.values().map(|s| s.golden_total).sum::<usize>();
            let mut synth = BTreeMap::new();
            for s in g.skills.values() {
                for (k, v) in &s.synthesized {
                    *synth.entry(k.clone()).or_default() += v;
                }
            }
            (g.generation, pool, synth)
        })
        .collect()
}

/// The Markdown report.
pub fn markdown(r: &Report) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Run `{}` — skill tree `{}`\n", r.run, r.tree);
    let _ = writeln!(
        md,
        "{} generations, {} simulated episodes, {} rollbacks, {:.0} s; curriculum {}, refinement {}.\n",
        r.generations_completed,
        r.episodes_simulated,
        r.rollbacks,
        r.wall_s,
        r.curriculum,
        if r.refine { "on" } else { "off" }
    );
    md.push_str(
        "| skill | group | in run | mastered | held-out (episodes) | fresh variants (episodes) | best | threshold | episodes | golden |\n",
    );
    md.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for s in &r.skills {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.name,
            s.group,
            if s.in_run { "yes" } else { "no" },
            s.mastered_at
                .map_or_else(|| "no".to_owned(), |g| format!("gen {g}")),
            with_count(s.heldout_success, s.heldout_episodes),
            with_count(s.fresh_success, s.fresh_episodes),
            pct(Some(s.best_heldout)),
            pct(Some(s.mastery_threshold)),
            s.episodes_used,
            s.golden_episodes
        );
    }
    early_stop_md(&mut md, &r.early_stop);
    md.push_str("\n## Generations\n\n| gen | frontier | held-out | pool | synthesised | broken in exploration | outcome | sim steps/s | train samples/s | s (explore / train / evaluate / synthesise) |\n|---|---|---|---|---|---|---|---|---|---|\n");
    let pools = pool_and_synthesis(r);
    for (g, (_, pool, synth)) in r.history.iter().zip(pools) {
        let heldout: Vec<String> = g
            .skills
            .iter()
            .filter_map(|(n, s)| {
                let h = s.heldout_success?;
                let fresh = s
                    .fresh_success
                    .map_or_else(String::new, |f| format!(", fresh {:.0} %", 100.0 * f));
                let count = s
                    .heldout_episodes
                    .map_or_else(String::new, |e| format!(" of {e}"));
                Some(format!("{n} {:.0} %{count}{fresh}", 100.0 * h))
            })
            .collect();
        let synth: Vec<String> = synth.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let broken: Vec<String> = g
            .skills
            .iter()
            .filter(|(_, s)| s.broken > 0)
            .map(|(n, s)| format!("{n} {} of {}", s.broken, s.episodes))
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.0} | {:.0} ({:.0} / {:.0} / {:.0} / {:.0}) |",
            g.generation,
            g.frontier.join(", "),
            heldout.join(", "),
            pool,
            synth.join(", "),
            broken.join(", "),
            g.outcome(),
            g.sim_steps_per_sec,
            g.train.as_ref().map_or(0.0, |t| t.samples_per_sec),
            g.wall_s,
            g.explore_s,
            g.train.as_ref().map_or(0.0, |t| t.wall_s),
            g.evaluate_s,
            g.synthesis_s
        );
    }
    throughput::throughput_md(&mut md, &r.history, r.threads);
    self_correction_md(&mut md, r);
    md.push_str("\n## Refinement\n\n| gen | skill | raw | kept (re-validated) | banked raw: shorter / not re-validated | RMS jerk before → after | duration before → after (s) |\n|---|---|---|---|---|---|---|\n");
    for g in &r.history {
        for (name, s) in &g.skills {
            if let Some(f) = &s.refine {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} / {} | {:.1} → {:.1} | {:.2} → {:.2} |",
                    g.generation,
                    name,
                    f.raw,
                    f.kept,
                    f.raw_was_shorter,
                    f.raw_unrefined,
                    f.rms_jerk_before,
                    f.rms_jerk_after,
                    f.duration_before_s,
                    f.duration_after_s
                );
            }
        }
    }
    md
}

/// Expert relabelling and GRPO per generation, where they ran.
fn self_correction_md(md: &mut String, r: &Report) {
    let mut rows = String::new();
    for g in &r.history {
        for (name, s) in &g.skills {
            if let Some(x) = &s.relabel {
                let _ = writeln!(
                    rows,
                    "| {} | {name} | relabelling | {} runs, expert took over in {}, {} successes banked |",
                    g.generation, x.runs, x.taken_over, x.successes
                );
            }
        }
        for x in &g.grpo {
            let _ = writeln!(
                rows,
                "| {} | {} | GRPO | {} iterations, {} rollouts, sampled success {:.0} % → {:.0} %, KL {:.3} |",
                g.generation,
                x.skill,
                x.iterations,
                x.rollouts,
                100.0 * x.sampled_success.0,
                100.0 * x.sampled_success.1,
                x.kl
            );
        }
    }
    if !rows.is_empty() {
        md.push_str("\n## Self-correction\n\n| gen | skill | mechanism | what it did |\n|---|---|---|---|\n");
        md.push_str(&rows);
    }
}

/// The early-stopping paragraph: what the success head cut, the compute saved, and (on the
/// audited sample run to the end) how many cut rollouts would have succeeded.
fn early_stop_md(md: &mut String, e: &EarlyStopReport) {
    md.push_str("\n## Early stopping (success head)\n\n");
    if e.rollouts == 0 {
        md.push_str("No exploration rollouts of the policy yet.\n");
        return;
    }
    let saved = e.steps_saved_estimate();
    let _ = writeln!(
        md,
        "{} sampled exploration rollouts, {} cut ({} of them audited: run to the end anyway). \
         {} control steps simulated; the cut ones saved about {:.0} more ({:.0} % of the \
         total, estimated from the audited ones' {} steps after their cut points). \
         Audited cut rollouts that went on to succeed: {} of {} ({}).",
        e.rollouts,
        e.cut,
        e.audited_cut,
        e.steps_run,
        saved,
        100.0 * saved / (saved + e.steps_run as f64).max(1.0),
        e.steps_after_cut,
        e.cut_but_succeeded,
        e.audited_cut,
        pct(e.cut_success_rate())
    );
}
