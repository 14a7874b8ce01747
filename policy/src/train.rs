//! From recorded episodes to a policy ready to train: tokenizer over the instructions, samples,
//! normalisation statistics, a freshly initialised network and the normalised dataset.

use std::sync::Arc;

use robots::Manipulator;
use tch::Device;

use crate::config::ModelConfig;
use crate::dataset::{Dataset, RawSamples};
use crate::error::{PolicyError, Result};
use crate::obs::{Featurizer, Normalizer};
use crate::policy::Policy;
use crate::tokenizer::Tokenizer;
use sim::{Episode, SimConfig};

/// Every skill's default instruction, so the vocabulary covers skills not in this data yet.
fn default_instructions() -> Vec<String> {
    sim::SkillKind::ALL
        .iter()
        .map(|s| {
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
            sim::library::sample_task(*s, &sim::library::TaskRanges::default(), &mut rng)
                .instruction
        })
        .collect()
}

/// A new policy for `episodes` (its normaliser fitted on them) and their dataset.
pub fn policy_for_episodes(
    episodes: &[Episode],
    robot: &Arc<Manipulator>,
    sim: &Arc<SimConfig>,
    model: &ModelConfig,
    device: Device,
    seed: u64,
) -> Result<(Policy, Dataset)> {
    if episodes.is_empty() {
        return Err(PolicyError::Data("no episodes".into()));
    }
    if let Some(e) = episodes
        .iter()
        .find(|e| e.robot_model_hash != robot.model.model_hash)
    {
        return Err(PolicyError::Data(format!(
            "episode {} (seed {}) was recorded with robot model {}, not `{}` ({})",
            e.index, e.seed, e.robot_model_hash, robot.model.name, robot.model.model_hash
        )));
    }
    let mut instructions = default_instructions();
    instructions.extend(episodes.iter().map(|e| e.task.instruction.clone()));
    let tokenizer = Tokenizer::build(instructions.iter().map(String::as_str));
    let featurizer = Featurizer::new(model, tokenizer.clone(), sim, robot.dof())?;
    let mut raw = RawSamples::default();
    for e in episodes {
        raw.push_episode(e, &featurizer, robot, sim)?;
    }
    if raw.imitate.iter().all(|w| *w == 0.0) {
        return Err(PolicyError::Data(
            "no successful episode to imitate in the training data".into(),
        ));
    }
    let normalizer: Normalizer = raw.fit_normalizer(&featurizer);
    let mut policy = Policy::new(model, tokenizer, normalizer, robot, sim, device, seed)?;
    let mut skills: Vec<String> = episodes
        .iter()
        .map(|e| e.task.skill.name().to_owned())
        .collect();
    skills.sort();
    skills.dedup();
    policy.meta.skills = skills;
    let data = Dataset::new(&raw, &policy.featurizer, &policy.normalizer)?;
    Ok((policy, data))
}
