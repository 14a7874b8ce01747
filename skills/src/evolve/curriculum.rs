//! The curriculum's variant bookkeeping: which task variants a generation explores (validated
//! synthesised ones first, revisits of known ones, then fresh draws), how outcomes are recorded
//! into each variant's history, and which new variants the weakness signals and the adversarial
//! generator propose (validated by the explorer before they enter the pool, see `generation`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::config::{Curriculum, EvolveConfig};
use super::level_replay;
use super::state::{Origin, SkillState, TrackedVariant};
use crate::signals::{weakness_signals, Evaluation, Signal, VariantHistory};
use crate::synth::{mutate, task_params};
use crate::tree::Skill;

/// A seed for (run seed, generation, skill, purpose): independent streams per use.
pub fn stream_seed(seed: u64, generation: usize, skill_index: usize, purpose: u64) -> u64 {
    let a = sim::episode::episode_seed(seed, generation);
    let b = sim::episode::episode_seed(a, skill_index);
    sim::episode::episode_seed(b, purpose as usize)
}

/// A fresh variant of `skill` drawn with `seed`.
pub fn fresh_variant(skill: &Skill, seed: u64) -> TrackedVariant {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let task = skill.sample_task(&mut rng);
    tracked(skill, task, seed, Origin::Generator)
}

pub fn tracked(
    skill: &Skill,
    task: sim::task::TaskSpec,
    seed: u64,
    origin: Origin,
) -> TrackedVariant {
    let name = format!("{}@{seed:016x}", task.name);
    TrackedVariant {
        history: VariantHistory {
            name,
            params: task_params(&task, &skill.ranges),
            evaluations: Vec::new(),
        },
        task,
        seed,
        origin,
    }
}

/// A generation's variants for one skill, and whether they are only to be scored (robust
/// PLR's exploratory generations: rollouts measure them, nothing is searched or learned).
#[derive(Debug)]
pub struct Choice {
    pub variants: Vec<TrackedVariant>,
    pub score_only: bool,
}

/// The variants a generation `g` explores for one skill: `count` of them. Co-evolution takes
/// the validated synthesised variants first (up to half), revisits known variants (up to a
/// quarter, so forgetting can be seen), and fills up with fresh draws; uniform sampling draws
/// fresh ones only; SFL takes `buffer_ratio` of them from its buffer; PLR replays or scores
/// fresh ones (`level_replay`). Before the skill is trained every curriculum draws fresh ones.
pub fn choose_variants(
    skill: &Skill,
    state: &mut SkillState,
    cfg: &EvolveConfig,
    count: usize,
    seed: u64,
    g: usize,
) -> Choice {
    let mut out = Vec::with_capacity(count);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0005_EED5);
    let mut score_only = false;
    match cfg.curriculum {
        Curriculum::Coevolve => {
            let take = state.pending.len().min(count / 2);
            out.extend(state.pending.drain(..take));
            state.pending.clear();
            let revisits = (count / 4).min(state.tracked.len());
            let mut picked = std::collections::BTreeSet::new();
            while picked.len() < revisits {
                picked.insert(rng.gen_range(0..state.tracked.len()));
            }
            out.extend(picked.into_iter().map(|i| state.tracked[i].clone()));
        }
        Curriculum::Uniform => {}
        Curriculum::Sfl => {
            let take =
                ((count as f64 * cfg.sfl.buffer_ratio).round() as usize).min(state.buffer.len());
            let uniform = vec![1.0; state.buffer.len()];
            let picked = level_replay::draw_distinct(&uniform, take, &mut rng);
            out.extend(picked.into_iter().map(|i| state.buffer[i].clone()));
        }
        Curriculum::Plr if state.trained => {
            if state.tracked.len() >= count && rng.gen_bool(cfg.plr.replay_prob.clamp(0.0, 1.0)) {
                let p = level_replay::replay_distribution(&state.tracked, g, &cfg.plr);
                let picked = level_replay::draw_distinct(&p, count, &mut rng);
                out.extend(picked.into_iter().map(|i| state.tracked[i].clone()));
            } else {
                score_only = true;
            }
        }
        Curriculum::Plr => {}
    }
    fill_fresh(skill, &mut out, count, seed);
    Choice {
        variants: out,
        score_only,
    }
}

/// Appends this generation's outcomes (`successes` of `attempts` per variant) to the variants'
/// histories, tracking new variants; beyond `max_tracked` the oldest are dropped (PLR: the
/// lowest-scored).
pub fn record_outcomes(
    state: &mut SkillState,
    variants: &[TrackedVariant],
    outcomes: &[(usize, usize)],
    generation: usize,
    cfg: &EvolveConfig,
) {
    for (v, &(attempts, successes)) in variants.iter().zip(outcomes) {
        let evaluation = Evaluation {
            generation,
            attempts,
            successes,
        };
        match state
            .tracked
            .iter_mut()
            .find(|t| t.history.name == v.history.name)
        {
            Some(t) => t.history.evaluations.push(evaluation),
            None => {
                let mut t = v.clone();
                t.history.evaluations.push(evaluation);
                state.tracked.push(t);
            }
        }
    }
    let max_tracked = cfg.synth.max_tracked;
    if cfg.curriculum == Curriculum::Plr {
        while state.tracked.len() > max_tracked {
            match level_replay::lowest_scored(&state.tracked, cfg.plr.score) {
                Some(i) => state.tracked.remove(i),
                None => break,
            };
        }
    }
    let excess = state.tracked.len().saturating_sub(max_tracked);
    state.tracked.drain(..excess);
}

/// Candidate variants around the signal-marked ones (not yet validated), with their origin.
pub fn signal_candidates(
    skill: &Skill,
    state: &SkillState,
    cfg: &EvolveConfig,
    seed: u64,
) -> (Vec<TrackedVariant>, Vec<(String, Signal)>) {
    let histories: Vec<VariantHistory> = state.tracked.iter().map(|t| t.history.clone()).collect();
    let signals = weakness_signals(&histories, &cfg.synth.signals);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let max_marked = cfg.synth.max_marked * state.synth_multiplier.max(1);
    let mut candidates = Vec::new();
    let mut raised = Vec::new();
    // Interleave signal kinds so one kind does not crowd out the others.
    let mut by_kind: Vec<Vec<(usize, Signal)>> =
        [Signal::Forgetting, Signal::Boundary, Signal::Rare]
            .iter()
            .map(|k| signals.iter().filter(|(_, s)| s == k).copied().collect())
            .collect();
    let mut marked = Vec::new();
    while marked.len() < max_marked && by_kind.iter().any(|v| !v.is_empty()) {
        for list in &mut by_kind {
            if !list.is_empty() && marked.len() < max_marked {
                marked.push(list.remove(0));
            }
        }
    }
    for (i, signal) in marked {
        let parent = &state.tracked[i];
        raised.push((parent.history.name.clone(), signal));
        let origin = match signal {
            Signal::Forgetting => Origin::Forgetting,
            Signal::Boundary => Origin::Boundary,
            Signal::Rare => Origin::Rare,
        };
        for _ in 0..cfg.synth.mutations_per_variant {
            if let Some(task) = mutate(&parent.task, &skill.ranges, &cfg.synth.mutation, &mut rng) {
                let child_seed: u64 = rng.gen();
                candidates.push(tracked(skill, task, child_seed, origin));
            }
        }
    }
    (candidates, raised)
}

/// The variants GRPO trains a skill on (one group each): with co-evolution, up to half are
/// the tracked variants the policy was last measured most uncertain on (largest p̂(1 − p̂),
/// where a group's rollouts disagree and the advantages teach something), the rest fresh
/// draws; uniform sampling draws fresh ones only.
pub fn grpo_variants(
    skill: &Skill,
    state: &SkillState,
    cfg: &EvolveConfig,
    count: usize,
    seed: u64,
) -> Vec<TrackedVariant> {
    let mut out = Vec::with_capacity(count);
    if cfg.curriculum == Curriculum::Coevolve {
        let learnability = |v: &TrackedVariant| {
            v.history
                .evaluations
                .last()
                .map_or(0.0, |e| e.rate() * (1.0 - e.rate()))
        };
        let mut ranked: Vec<&TrackedVariant> = state
            .tracked
            .iter()
            .filter(|v| learnability(v) > 0.0)
            .collect();
        ranked.sort_by(|a, b| learnability(b).total_cmp(&learnability(a)));
        out.extend(ranked.into_iter().take(count / 2).cloned());
    }
    fill_fresh(skill, &mut out, count, seed);
    out
}

/// Tops `out` up to `count` variants with fresh draws from `seed`'s stream.
fn fill_fresh(skill: &Skill, out: &mut Vec<TrackedVariant>, count: usize, seed: u64) {
    let mut i = 0;
    while out.len() < count {
        out.push(fresh_variant(skill, sim::episode::episode_seed(seed, i)));
        i += 1;
    }
}
