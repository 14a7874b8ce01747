//! The search explorer finds first successes with no hand-written solution: CEM over keyframe
//! plans solves reach and lift on fresh task variants, and its successes are real episodes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use skills::explorer::{cem_search, CemConfig};
use skills::SkillTree;

fn search(skill: &str, keyframes: usize, iterations: usize) -> (f64, usize) {
    let tree = SkillTree::default_tree().unwrap();
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    let cfg = CemConfig {
        keyframes,
        iterations,
        ..CemConfig::default()
    };
    let result = cem_search(tree.get(skill).unwrap(), &robot, &sim, &cfg, &mut |it| {
        eprintln!("{skill}: {it:?}");
    })
    .unwrap();
    assert_eq!(result.episodes_run, cfg.population * iterations);
    assert!(result.successes.iter().all(|e| e.outcome.success));
    let last = result.history.last().unwrap();
    (
        last.successes as f64 / last.candidates as f64,
        result.successes.len(),
    )
}

#[test]
fn cem_finds_reach_successes() {
    let (last_rate, found) = search("reach", 2, 4);
    eprintln!("reach: last-iteration success {last_rate:.2}, {found} successes");
    assert!(last_rate >= 0.5, "reach: {last_rate}");
}

#[test]
fn cem_finds_lift_successes() {
    let (last_rate, found) = search("lift", 4, 6);
    eprintln!("lift: last-iteration success {last_rate:.2}, {found} successes");
    assert!(
        found > 0 && last_rate >= 0.2,
        "lift: {last_rate}, {found} found"
    );
}
