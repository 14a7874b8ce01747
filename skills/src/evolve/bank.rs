//! The explore phase of a generation and banking what it finds: every explored skill's raw
//! successes refined into golden demonstrations (or kept raw in the no-refinement ablation) in
//! `golden/gen-NNN/<skill>/`, and its failed rollouts in `failures/` (the success head's
//! negatives).

use std::collections::BTreeMap;
use std::time::Instant;

use policy::Policy;
use sim::refine::segments::gripper_event;
use sim::store::EpisodeWriter;
use sim::task::ToolKind;
use sim::Episode;

use super::explore::explore_skill;
use super::frontier::Work;
use super::run_dir::TAKEOVER_FILE;
use super::state::{RefineFigures, RunState, SkillGeneration};
use super::{Context, Event};
use crate::error::Result;

/// What the explore phase hands on: each explored skill's figures (banked counts included)
/// and its wall time.
#[derive(Debug, Default)]
pub struct Explored {
    pub skills: BTreeMap<String, SkillGeneration>,
    pub wall_s: f64,
}

/// Explores every skill of `work` with `policy` and banks what it finds.
pub fn explore_phase(
    ctx: &Context,
    state: &mut RunState,
    policy: Option<&Policy>,
    work: &Work<'_>,
    g: usize,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<Explored> {
    let start = Instant::now();
    let mut out = Explored::default();
    for &(si, skill) in work.explored() {
        events(Event::Phase {
            generation: g,
            skill: skill.name(),
            phase: "explore",
        });
        let fallback = skill
            .def
            .prerequisites
            .iter()
            .find_map(|p| state.skills.get(p).and_then(|s| s.search.clone()));
        let Some(st) = state.skills.get_mut(skill.name()) else {
            continue;
        };
        let found = explore_skill(ctx, skill, si, st, policy, g, fallback)?;
        let mut figures = found.figures;
        let max = ctx.cfg.max_golden_per_generation;
        // Tool plans are refined by simplification (`evolve::simplify`) before they run: the
        // refiner's joint-space re-timing bows the blade's straight slides, and behaviour
        // cloning learned a simplified scoop from 24 of 128 variants refined, 113 raw.
        let refine = ctx.cfg.refine && skill.kind.tool() == ToolKind::Gripper;
        let (added, refine) = bank(ctx, skill.name(), found.successes, g, max, refine)?;
        st.golden += added;
        figures.golden_added = added;
        figures.refine = refine;
        let failed = bank_failures(ctx, skill.name(), &found.failures, g)?;
        st.failures += failed;
        figures.failures_added = failed;
        st.relabelled += bank_relabelled(ctx, skill.name(), &found.relabelled, g)?;
        out.skills.insert(skill.name().to_owned(), figures);
    }
    out.wall_s = start.elapsed().as_secs_f64();
    Ok(out)
}

/// Refines (when `refine`; otherwise, as in the no-refinement ablation, keeps) `raw`
/// successes, keeps at most `max`, and writes them to the generation's golden store of
/// `skill`. Returns the number written.
pub fn bank(
    ctx: &Context,
    skill: &str,
    raw: Vec<Episode>,
    generation: usize,
    max: usize,
    refine: bool,
) -> Result<(usize, Option<RefineFigures>)> {
    if raw.is_empty() {
        return Ok((0, None));
    }
    let (mut golden, figures) = if refine {
        let refined = sim::refine::refine(&ctx.robot, &ctx.sim, &ctx.cfg.refine_config, &raw, &[])?;
        let r = &refined.report;
        let merged = golden_of(
            &raw,
            &refined,
            replay_dwell_steps(&ctx.cfg.refine_config, ctx.sim.control_dt_s()),
        );
        let golden = merged.golden;
        let figures = RefineFigures {
            raw: r.episodes_in,
            kept: r.kept,
            raw_was_shorter: merged.raw_was_shorter,
            raw_unrefined: merged.raw_unrefined,
            rms_jerk_before: r.rms_jerk_before,
            rms_jerk_after: r.rms_jerk_after,
            duration_before_s: r.duration_before_s,
            duration_after_s: r.duration_after_s,
        };
        (golden, Some(figures))
    } else {
        (raw, None)
    };
    golden.truncate(max);
    write_store(ctx, ctx.dir.golden(generation, skill), &golden)?;
    Ok((golden.len(), figures))
}

/// Control steps of each gripper dwell the refiner's replays hold before moving on, not
/// counted against them when they are compared with their raw originals: 0 unless the dwell
/// is at the key before the change (`RefineConfig::dwell_before_change`), where a raw grasp
/// that lifts while the fingers are still closing is quicker only by being marginal.
pub fn replay_dwell_steps(refine: &sim::refine::RefineConfig, control_dt_s: f64) -> usize {
    if refine.dwell_before_change {
        (refine.gripper_dwell_s / control_dt_s).ceil() as usize
    } else {
        0
    }
}

/// Golden demonstrations from a refiner run on `raw`, with how many came out raw.
#[derive(Debug)]
pub struct Merged {
    pub golden: Vec<Episode>,
    /// Kept episodes whose raw original was already shorter than the re-timed replay's motion
    /// (the raw one is the better demonstration, so it is banked instead).
    pub raw_was_shorter: usize,
    /// Successes whose smoothed replay no longer succeeds, banked raw (real, healthy,
    /// efficient successes the smoother could not improve).
    pub raw_unrefined: usize,
}

/// Merges `refined` (the refiner's output on `raw`) with `raw`: kept episodes (raw where the
/// raw one is shorter than the replay without its gripper dwells, `dwell_steps` each), then
/// the successes whose smoothed replay failed. The refiner's
/// decisions come one per raw episode in order; `source_index` is the episode's own index in
/// the batch that ran it, not its place in `raw`, so it is not used here.
pub fn golden_of(raw: &[Episode], refined: &sim::refine::Refined, dwell_steps: usize) -> Merged {
    let decisions = &refined.report.decisions;
    let kept = decisions
        .iter()
        .zip(raw)
        .filter(|(d, _)| d.verdict == "kept")
        .map(|(_, e)| e);
    let mut raw_was_shorter = 0;
    let mut golden: Vec<Episode> = refined
        .golden
        .iter()
        .zip(kept)
        .map(|(g, e)| {
            let motion_steps = g
                .outcome
                .control_steps
                .saturating_sub(dwell_steps * gripper_changes(g));
            if e.outcome.control_steps < motion_steps {
                raw_was_shorter += 1;
                e.clone()
            } else {
                g.clone()
            }
        })
        .collect();
    let before = golden.len();
    golden.extend(
        decisions
            .iter()
            .zip(raw)
            .filter(|(d, _)| d.verdict == "revalidation_failed")
            .map(|(_, e)| e.clone()),
    );
    Merged {
        raw_unrefined: golden.len() - before,
        golden,
        raw_was_shorter,
    }
}

/// How often an episode's gripper command changes between open and closed.
fn gripper_changes(e: &Episode) -> usize {
    let mut last = gripper_event(e.initial_state.gripper_opening);
    e.steps
        .iter()
        .filter(|s| {
            let now = gripper_event(s.action.gripper());
            std::mem::replace(&mut last, now) != now
        })
        .count()
}

/// Writes the policy's failed rollouts of `skill` (the success head's negatives) to the
/// generation's failure store. Returns the number written.
pub fn bank_failures(
    ctx: &Context,
    skill: &str,
    failures: &[Episode],
    generation: usize,
) -> Result<usize> {
    write_store(ctx, ctx.dir.failures(generation, skill), failures)?;
    Ok(failures.len())
}

/// Writes expert-relabelled episodes of `skill` (raw: their states are the policy's) and their
/// first expert steps to the generation's relabelled store. Returns the number written.
pub fn bank_relabelled(
    ctx: &Context,
    skill: &str,
    relabelled: &[(Episode, usize)],
    generation: usize,
) -> Result<usize> {
    if relabelled.is_empty() {
        return Ok(0);
    }
    let dir = ctx.dir.relabelled(generation, skill);
    let (episodes, takeover): (Vec<Episode>, Vec<usize>) = relabelled.iter().cloned().unzip();
    write_store(ctx, dir.clone(), &episodes)?;
    ctx.dir.write_json(&dir.join(TAKEOVER_FILE), &takeover)?;
    Ok(episodes.len())
}

fn write_store(ctx: &Context, dir: std::path::PathBuf, episodes: &[Episode]) -> Result<()> {
    if episodes.is_empty() {
        return Ok(());
    }
    let mut writer = EpisodeWriter::new(dir, "coevolve-evolve", &ctx.sim)?
        .with_robot_name(ctx.robot.model.load_name());
    writer.write_batch(episodes)?;
    Ok(())
}
