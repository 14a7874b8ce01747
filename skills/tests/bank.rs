//! Banking golden data: the refiner's verdicts are matched to the raw episodes by position, so
//! episodes whose own `index` says nothing about their place in the batch (the loop banks
//! policy rollouts, mean-plan runs and search samples together) keep their own data.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use sim::library::{sample_task, TaskRanges};
use sim::scripted::{ScriptNoise, ScriptedPickPlace};
use sim::{BatchConfig, Controller, EpisodeBatch, EpisodeInfo, SimConfig, SkillKind, TaskSpec};
use skills::evolve::bank::golden_of;
use skills::evolve::EvolveConfig;

#[test]
fn every_banked_episode_is_the_one_its_verdict_was_given_for() {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let config = Arc::new(SimConfig::default());
    let scale = config.action_scale.clone();
    let tasks = |_: usize, rng: &mut ChaCha8Rng| -> TaskSpec {
        sample_task(SkillKind::Lift, &TaskRanges::default(), rng)
    };
    // Half direct (their raw trajectory is shorter than the refiner's re-timed one, so the raw
    // one is banked), half hesitating (the refined one is banked).
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        if info.index.is_multiple_of(2) {
            Box::new(ScriptedPickPlace::new(info, scale.clone()))
        } else {
            Box::new(ScriptedPickPlace::noisy(
                info,
                scale.clone(),
                ScriptNoise::default(),
            ))
        }
    };
    let batch = BatchConfig {
        episodes: 8,
        seed: 5,
        threads: Some(2),
        record_images: false,
    };
    let mut raw: Vec<sim::Episode> = EpisodeBatch::run(
        robot.clone(),
        config.clone(),
        &batch,
        &tasks,
        &factory,
        &|| {},
    )
    .unwrap()
    .episodes
    .into_iter()
    .filter(|e| e.outcome.success)
    .collect();
    assert!(
        raw.len() >= 4,
        "scripted lift succeeded {} times",
        raw.len()
    );
    // Indices as a merged batch has them: unrelated to the position (reversed, and one far past
    // the end).
    let n = raw.len();
    for (i, e) in raw.iter_mut().enumerate() {
        e.index = n - 1 - i;
    }
    raw[0].index = 10_000;

    let refine_config = EvolveConfig::default().refine_config;
    let refined = sim::refine::refine(&robot, &config, &refine_config, &raw, &[]).unwrap();
    let report = &refined.report;
    let merged = golden_of(&raw, &refined, 0);
    // Replays are compared by their motion: with dwells as long as the episodes, every kept
    // lift (each closes the gripper) is banked refined.
    assert_eq!(golden_of(&raw, &refined, 1_000).raw_was_shorter, 0);

    // The raw originals are banked for some (shorter than their replay, or not re-validated):
    // the path where an index lookup would pick the wrong episode.
    assert!(
        merged.raw_was_shorter + merged.raw_unrefined > 0,
        "the test needs raw episodes banked"
    );
    // Every kept or not-re-validated success is banked exactly once, in decision order.
    assert_eq!(
        merged.golden.len(),
        report.kept + report.dropped_revalidation_failed
    );
    assert_eq!(merged.raw_unrefined, report.dropped_revalidation_failed);
    let expected: Vec<u64> = report
        .decisions
        .iter()
        .zip(&raw)
        .filter(|(d, _)| d.verdict == "kept")
        .chain(
            report
                .decisions
                .iter()
                .zip(&raw)
                .filter(|(d, _)| d.verdict == "revalidation_failed"),
        )
        .map(|(_, e)| e.seed)
        .collect();
    let banked: Vec<u64> = merged.golden.iter().map(|e| e.seed).collect();
    assert_eq!(banked, expected);
    // Each kept one (replay or raw original) is of its own episode: same seed and task.
    for (g, (_, e)) in merged.golden.iter().zip(
        report
            .decisions
            .iter()
            .zip(&raw)
            .filter(|(d, _)| d.verdict == "kept"),
    ) {
        assert_eq!(g.seed, e.seed);
        assert_eq!(g.task, e.task);
        assert!(g.outcome.success);
    }
}
