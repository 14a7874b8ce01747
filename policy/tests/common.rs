//! Shared helpers: scripted demonstrations (the test reference controller) and a quick policy.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use policy::{ModelConfig, ObsMode, Policy};
use sim::library::{sample_task, TaskRanges};
use sim::{BatchConfig, EpisodeBatch, EpisodeInfo, ScriptedPickPlace, SimConfig, SkillKind};

pub fn ur5e() -> Arc<robots::Manipulator> {
    Arc::new(robots::load_manipulator("ur5e", None).unwrap())
}

/// `n` scripted demonstrations of `skill` (batch seed `seed`) under the default simulator
/// settings (no cameras), and those settings.
pub fn demos(
    robot: &Arc<robots::Manipulator>,
    skill: SkillKind,
    n: usize,
    seed: u64,
) -> (Vec<sim::Episode>, Arc<SimConfig>) {
    let config = Arc::new(SimConfig::default());
    (demos_with(robot, skill, n, seed, config.clone()), config)
}

/// `n` scripted demonstrations of `skill` (batch seed `seed`) under `config`, with its cameras'
/// images when it has cameras.
pub fn demos_with(
    robot: &Arc<robots::Manipulator>,
    skill: SkillKind,
    n: usize,
    seed: u64,
    config: Arc<SimConfig>,
) -> Vec<sim::Episode> {
    let images = !config.cameras.is_empty();
    let scale = config.action_scale.clone();
    let ranges = TaskRanges::default();
    let batch = EpisodeBatch::run(
        robot.clone(),
        config.clone(),
        &BatchConfig {
            episodes: n,
            seed,
            threads: None,
            record_images: images,
        },
        &|_, rng| sample_task(skill, &ranges, rng),
        &|info: &EpisodeInfo<'_>| -> Box<dyn sim::Controller> {
            Box::new(ScriptedPickPlace::new(info, scale.clone()))
        },
        &|| {},
    )
    .unwrap();
    batch.episodes
}

/// A policy for the demos plus its dataset.
pub fn policy_for(
    episodes: &[sim::Episode],
    robot: &Arc<robots::Manipulator>,
    config: &Arc<SimConfig>,
    size: &str,
    obs: ObsMode,
) -> (Policy, policy::dataset::Dataset) {
    let model = ModelConfig::preset(size, obs).unwrap();
    policy_with(episodes, robot, config, &model)
}

/// A fresh policy of `model`'s shape, normalised to `episodes`, and their dataset.
pub fn policy_with(
    episodes: &[sim::Episode],
    robot: &Arc<robots::Manipulator>,
    config: &Arc<SimConfig>,
    model: &ModelConfig,
) -> (Policy, policy::dataset::Dataset) {
    policy::train::policy_for_episodes(episodes, robot, config, model, tch::Device::Cpu, 0).unwrap()
}
