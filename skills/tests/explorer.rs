//! The search explorer finds first successes with no hand-written solution: CEM over keyframe
//! plans solves reach and lift on fresh task variants, and its successes are real episodes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use skills::explorer::{cem_search, run_plans, CemConfig, PlanDistribution};
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

/// Lift as the loop searches it: from the grasp search's distribution held at the lift height
/// (`PlanDistribution::for_successor`), grasp itself found from scratch. A lift search from
/// scratch found 3 successes in six iterations once its goal half was anchored at the lift
/// height (67 when it was anchored at the cube): failures score by their dense return, which
/// favours keyframes that stay by the cube over ones that rise without it.
#[test]
fn cem_finds_lift_successes_from_a_grasp_search() {
    let tree = SkillTree::default_tree().unwrap();
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    let cfg = CemConfig {
        keyframes: 4,
        iterations: 6,
        ..CemConfig::default()
    };
    let grasp = cem_search(tree.get("grasp").unwrap(), &robot, &sim, &cfg, &mut |_| {}).unwrap();
    assert!(!grasp.successes.is_empty());
    let lift = tree.get("lift").unwrap();
    let result = skills::explorer::cem_search_from(
        grasp.distribution.for_successor(lift.kind),
        &|_, rng| lift.sample_task(rng),
        &robot,
        &sim,
        &cfg,
        &mut |it| eprintln!("lift: {it:?}"),
    )
    .unwrap();
    assert!(result.successes.iter().all(|e| e.outcome.success));
    let last = result.history.last().unwrap();
    let last_rate = last.successes as f64 / last.candidates as f64;
    let found = result.successes.len();
    eprintln!("lift: last-iteration success {last_rate:.2}, {found} successes");
    assert!(
        found > 0 && last_rate >= 0.2,
        "lift: {last_rate}, {found} found"
    );
}

/// Tool use found by search: CEM over tool plans (the blade's tip and pitch per keyframe)
/// scoops the pancake from scratch, and every scoop it finds keeps the pancake whole.
#[test]
fn cem_finds_scoop_successes_with_tool_plans() {
    let tree = SkillTree::default_tree().unwrap();
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    let cfg = CemConfig {
        iterations: 6,
        threads: Some(2),
        ..CemConfig::default()
    };
    let result = cem_search(tree.get("scoop").unwrap(), &robot, &sim, &cfg, &mut |it| {
        eprintln!("scoop: {it:?}");
    })
    .unwrap();
    assert_eq!(
        result.distribution.layout,
        skills::explorer::PlanLayout::Tool
    );
    assert!(!result.successes.is_empty(), "no scoop in 6 × 64 plans");
    for e in &result.successes {
        assert_eq!(e.outcome.failure, None, "a success broke the pancake");
    }
}

/// A search continued from a converged, failing distribution (a prerequisite's, millimetres
/// wide) widens where the plan takes the object — the second half's keyframe positions and the
/// last gripper event — after each iteration without a success, and keeps the approach (the
/// first half) as narrow as the elites say.
#[test]
fn iterations_without_success_widen_the_goal_half() {
    use skills::explorer::{cem_search_from, PlanDistribution};
    let tree = SkillTree::default_tree().unwrap();
    let skill = tree.get("lift").unwrap();
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    let cfg = CemConfig {
        population: 8,
        elites: 4,
        iterations: 2,
        ..CemConfig::default()
    };
    // The gripper never closes: no sample can succeed.
    let mut start = PlanDistribution::initial(&cfg);
    start.std.iter_mut().for_each(|s| *s = cfg.min_std);
    (0..cfg.keyframes).for_each(|k| start.mean[k * 4 + 3] = 1.0);
    let result = cem_search_from(
        start,
        &|_, rng| skill.sample_task(rng),
        &robot,
        &sim,
        &cfg,
        &mut |_| {},
    )
    .unwrap();
    assert!(result.history.iter().all(|h| h.successes == 0));
    let std = &result.distribution.std;
    let positions = |keyframes: std::ops::Range<usize>| {
        let v: Vec<f64> = keyframes
            .flat_map(|k| (0..3).map(move |d| k * 4 + d))
            .map(|i| std[i])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (approach, goal) = (positions(0..2), positions(2..4));
    assert!(
        goal > 2.5 * approach && goal <= cfg.init_offset_std_m,
        "goal half {goal:.4}, approach {approach:.4}"
    );
    // The last gripper event is uncertain again (a place must find the release); the others
    // (approach, grasp, carry) are not.
    let gripper = |k: usize| std[k * 4 + 3];
    assert!(gripper(3) >= 0.5, "{std:?}");
    assert!((0..3).all(|k| gripper(k) < 0.5), "{std:?}");
}

/// A search that has found fewer than `min_successes` goes on past `iterations`, up to
/// `max_iterations`; one that has enough stops at `iterations`.
#[test]
fn a_search_without_enough_successes_goes_on_up_to_its_cap() {
    let tree = SkillTree::default_tree().unwrap();
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    let run = |min_successes: usize| {
        let cfg = CemConfig {
            population: 16,
            elites: 4,
            iterations: 1,
            min_successes,
            max_iterations: 3,
            ..CemConfig::default()
        };
        cem_search(tree.get("reach").unwrap(), &robot, &sim, &cfg, &mut |_| {}).unwrap()
    };
    let enough = run(1);
    assert!(!enough.successes.is_empty());
    assert_eq!(enough.history.len(), 1);
    let short = run(10_000);
    assert_eq!(short.history.len(), 3);
    assert_eq!(short.episodes_run, 48);
}

#[test]
fn plan_jobs_run_anywhere_with_run_plans_results() {
    use rand::SeedableRng;
    use skills::explorer::{run_plans, PlanDistribution, PlanLayout};
    use skills::plan_jobs::PlanJob;

    let tree = SkillTree::default_tree().unwrap();
    let lift = tree.get("lift").unwrap();
    let robot = Arc::new(robots::load_manipulator_for_sim("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    let cfg = CemConfig::default();
    let dist = PlanDistribution::initial_for(PlanLayout::Gripper, &cfg);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let plans: Vec<Vec<f64>> = (0..6).map(|_| dist.sample(&mut rng)).collect();
    let tasks = |_: usize, rng: &mut rand_chacha::ChaCha8Rng| lift.sample_task(rng);
    let here = run_plans(&plans, &tasks, &robot, &sim, cfg.segment_s, 11, Some(2)).unwrap();
    let job = PlanJob::of(("ur5e", &robot), &sim, cfg.segment_s, &plans, &tasks, 11);
    // As bytes, in parts of 4 and 2 episodes, one after another on this thread.
    let mut there = Vec::new();
    for part in job.split(4) {
        let part = PlanJob::from_bytes(&part.to_bytes().unwrap()).unwrap();
        there.extend(part.run(&robot).unwrap());
    }
    assert_eq!(
        sim::episode::trajectory_hash(&there),
        sim::episode::trajectory_hash(&here)
    );
    let other = Arc::new(robots::load_manipulator_for_sim("panda", None).unwrap());
    let err = job.run(&other).unwrap_err();
    assert!(err.contains("model hash"), "{err}");
}

/// Horizontal way (m) the goal object slides over the table (under 1.5 cm up) while the gripper
/// is commanded closed.
fn slid_while_held_m(e: &sim::Episode) -> f64 {
    let start = e.initial_state.objects[0].position_m();
    e.steps
        .windows(2)
        .filter(|w| w[1].action.gripper() < 0.5)
        .filter(|w| w[1].state.objects[0].position_m().z - start.z < 0.015)
        .map(|w| {
            let (a, b) = (
                w[0].state.objects[0].position_m(),
                w[1].state.objects[0].position_m(),
            );
            (b.xy() - a.xy()).norm()
        })
        .sum()
}

#[test]
fn a_place_plan_carries_the_cube_over_the_table_not_along_it() {
    let tree = SkillTree::default_tree().unwrap();
    let place = tree.get("place").unwrap();
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    // The shape of the searched place plans: at the cube (open), 9 cm up (closed: the grasp
    // and the rise); where the cube rests in the zone (closed), 10 cm above it (open). The
    // straight line from the second keyframe to the third descends all the way, so the cube
    // would drag.
    let plan = vec![
        0.0, 0.0, 0.0, 1.0, //
        0.0, 0.0, 0.09, 0.0, //
        0.0, 0.0, 0.0, 0.0, //
        0.0, 0.0, 0.10, 1.0, //
        0.0,
    ];
    let plans = vec![plan; 8];
    let tasks = |_: usize, rng: &mut ChaCha8Rng| place.sample_task(rng);
    let episodes = run_plans(&plans, &tasks, &robot, &sim, 1.6, 5, None).unwrap();
    let successes = episodes.iter().filter(|e| e.outcome.success).count();
    let slid: Vec<f64> = episodes.iter().map(slid_while_held_m).collect();
    eprintln!("place through the transit: {successes}/8 successes, slid while held {slid:.3?} m");
    assert!(successes >= 6, "{successes}/8");
    assert!(slid.iter().all(|m| *m < 0.04), "{slid:?}");
}

/// `plan` run on 8 fresh variants of `skill` (episode seed `seed`).
fn run_plan(skill: &str, plan: &[f64], seed: u64) -> Vec<sim::Episode> {
    let tree = SkillTree::default_tree().unwrap();
    let skill = tree.get(skill).unwrap();
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    let tasks = |_: usize, rng: &mut ChaCha8Rng| skill.sample_task(rng);
    let plans = vec![plan.to_vec(); 8];
    let segment_s = CemConfig::default().segment_s;
    run_plans(&plans, &tasks, &robot, &sim, segment_s, seed, None).unwrap()
}

#[test]
fn a_place_search_from_a_lift_plan_starts_with_a_set_down_not_a_drop() {
    // A lift plan as the loop finds them: at the cube (open), then closing while rising 9 cm;
    // held 5 cm and 6 cm up. Its last gripper event reopened (how a place search used to find
    // its release) lets go 6 cm above the zone: a drop, which is no place.
    let cfg = CemConfig::default();
    let mut lift = PlanDistribution::initial(&cfg);
    lift.mean = vec![
        0.0, 0.0, -0.01, 1.0, //
        -0.03, 0.0, 0.09, 0.0, //
        0.0, 0.0, 0.05, 0.0, //
        0.03, 0.0, 0.06, 1.0, //
        0.0,
    ];
    let placed = |plan: &[f64]| {
        let mut steps: Vec<usize> = run_plan("place", plan, 9)
            .iter()
            .filter(|e| e.outcome.success)
            .map(|e| e.outcome.control_steps)
            .collect();
        steps.sort_unstable();
        (steps.len(), steps.get(steps.len() / 2).copied())
    };
    let (dropped, _) = placed(&lift.mean);
    let (set_down, median_steps) = placed(&lift.set_down().mean);
    eprintln!(
        "place from a lift plan: dropped {dropped}/8, set down {set_down}/8 successes, \
         median {median_steps:?} control steps"
    );
    assert_eq!(dropped, 0);
    assert!(set_down >= 7, "{set_down}/8");
    // A carrying plan moves on when it arrives: well inside its four keyframes' segment time
    // plus the transit (each segment 40 control steps; waiting them out takes about 140).
    assert!(median_steps.is_some_and(|n| n < 100), "{median_steps:?}");
}

/// A lift search starts from the grasp plan held at the lift height: the grasp kept, the goal
/// half (anchored at the cube's start raised by the variant's lift height, 8–12 cm) put where
/// the gripper closed, 2 cm higher, closed. A grasp plan that closes at the cube and then opens
/// again (a grasp succeeds before its goal half runs, so the loop's grasp plans often do) lifts
/// no variant as it is; held at the goal, it lifts every variant to its own height.
#[test]
fn a_lift_search_from_a_grasp_plan_starts_held_at_the_goal() {
    let mut grasp = PlanDistribution::initial(&CemConfig::default());
    grasp.mean = vec![
        0.0, 0.0, -0.01, 0.7, //
        0.0, 0.0, -0.01, 0.0, //
        0.0, 0.0, 0.0, 0.6, //
        0.0, 0.0, -0.01, 0.5, //
        -0.85,
    ];
    let lifted = |plan: &[f64]| {
        let episodes = run_plan("lift", plan, 5);
        let heights: Vec<f64> = episodes.iter().map(|e| e.task.goal.lift_height_m).collect();
        assert!(heights.iter().any(|&h| h > 0.1), "{heights:?}");
        episodes.iter().filter(|e| e.outcome.success).count()
    };
    let as_is = lifted(&grasp.mean);
    let held = lifted(&grasp.for_successor(sim::task::SkillKind::Lift).mean);
    eprintln!("lift from a grasp plan: as it is {as_is}/8, held at the goal {held}/8");
    assert_eq!(as_is, 0);
    assert!(held >= 7, "{held}/8");
}

#[test]
fn a_push_plan_pushes_each_variant_towards_its_own_zone() {
    // Keyframe offsets of a push are in the frame that points from the cube to its zone
    // (`explorer::plan_frame_yaw`), so one plan pushes whichever way the zone lies: 8 cm behind
    // the cube, fingers closed; 4 cm behind it; 4 cm behind the zone's centre (the cube ahead
    // of the fingers, in the zone); back and up.
    let plan = vec![
        -0.08, 0.0, 0.01, 0.0, //
        -0.045, 0.0, 0.01, 0.0, //
        -0.045, 0.0, 0.01, 0.0, //
        -0.10, 0.0, 0.06, 0.0, //
        0.0,
    ];
    let episodes = run_plan("push", &plan, 3);
    let successes = episodes.iter().filter(|e| e.outcome.success).count();
    let rise_m: Vec<f64> = episodes
        .iter()
        .map(|e| {
            let z0 = e.initial_state.objects[0].position_m().z;
            e.steps
                .iter()
                .map(|s| s.state.objects[0].position_m().z - z0)
                .fold(0.0, f64::max)
        })
        .collect();
    eprintln!("push plan: {successes}/8 successes, highest rise {rise_m:.3?} m");
    assert!(successes >= 5, "{successes}/8");
    assert!(rise_m.iter().all(|m| *m < 0.01), "{rise_m:?}");
}
