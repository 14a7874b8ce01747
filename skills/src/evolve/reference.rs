//! The loop's throughput reference: a plain scripted batch (what `coevolve sim --controller
//! scripted` runs) on the first explored skill's family, at the run's threads, measured each
//! generation before exploring, so the report can set the loop's simulated steps/s against a
//! plain batch's on the same machine under the same load.

use sim::task::ToolKind;
use sim::throughput::{Meter, PhaseFigures};
use sim::{BatchConfig, Controller, EpisodeBatch, EpisodeInfo, ScriptedPickPlace};

use super::curriculum::stream_seed;
use super::Context;
use crate::error::Result;
use crate::tree::Skill;

/// Episodes per thread of the reference batch: one batch, large enough that its tail (the
/// last episodes on one thread) is a small part of it; 0.4 s of reach, 4 s of lift at 2
/// threads.
pub const EPISODES_PER_THREAD: usize = 48;

/// Runs the reference batch on `skill`'s family (gripper skills; `None` for tool skills,
/// which have no scripted pick-and-place reference). Its episodes are discarded and its seeds
/// are its own, so it changes nothing in the run.
pub fn scripted_batch(
    ctx: &Context,
    skill: &Skill,
    generation: usize,
) -> Result<Option<PhaseFigures>> {
    if skill.kind.tool() != ToolKind::Gripper {
        return Ok(None);
    }
    let threads = ctx.cfg.threads.max(1);
    let scale = ctx.sim.action_scale.clone();
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        Box::new(ScriptedPickPlace::new(info, scale.clone()))
    };
    let cfg = BatchConfig {
        episodes: EPISODES_PER_THREAD * threads,
        seed: stream_seed(ctx.cfg.seed, generation, 0, 97),
        threads: Some(threads),
        record_images: false,
    };
    let meter = Meter::start();
    EpisodeBatch::run(
        ctx.robot.clone(),
        ctx.sim.clone(),
        &cfg,
        &|_, rng| skill.sample_task(rng),
        &factory,
        &|| {},
    )?;
    Ok(Some(meter.stop("reference")))
}
