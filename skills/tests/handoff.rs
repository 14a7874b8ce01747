//! Handoff rollouts: the prerequisite's view of a task keeps its scene and takes the
//! prerequisite's goal; the plan takes over exactly when the view's predicate has held, and an
//! episode whose prerequisite is never met is given up while the plan's rest would still fit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use policy::obs::Normalizer;
use policy::{ModelConfig, ObsMode, Policy};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sim::task::SkillKind;
use sim::Action;
use skills::evolve::handoff::{prerequisite_view, run_handoffs, HandoffRun, Takeover};
use skills::tree::SkillTree;

fn gripper(a: &Action) -> f64 {
    match a {
        Action::EeDelta { gripper, .. }
        | Action::JointDelta { gripper, .. }
        | Action::JointPosition { gripper, .. } => *gripper,
    }
}

#[test]
fn a_prerequisite_view_keeps_the_scene_and_takes_the_prerequisites_goal() {
    let tree = SkillTree::default_tree().unwrap();
    let (place, lift) = (tree.get("place").unwrap(), tree.get("lift").unwrap());
    let task = place.sample_task(&mut ChaCha8Rng::seed_from_u64(3));
    let view = prerequisite_view(lift, &task, 11).unwrap();
    assert_eq!(view.skill, SkillKind::Lift);
    assert!(lift.def.instructions.contains(&view.instruction));
    assert_eq!(view.objects, task.objects);
    assert_eq!(view.table, task.table);
    assert!(view.zones.is_empty() && view.goal.zone.is_none());
    assert_eq!(view.goal.object, task.goal.object);
    let (lo, hi) = (0.08, 0.12);
    assert!((lo..=hi).contains(&view.goal.lift_height_m));
    // Reach's goal is a zone of its own, which a push scene does not have.
    let push = tree.get("push").unwrap();
    let task = push.sample_task(&mut ChaCha8Rng::seed_from_u64(3));
    assert!(prerequisite_view(tree.get("reach").unwrap(), &task, 11).is_none());
}

#[test]
fn the_plan_takes_over_once_the_prerequisite_has_held() {
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = sim::SimConfig::default();
    let dt_s = sim.control_dt_s();
    let model = ModelConfig::preset("tiny", ObsMode::State).unwrap();
    let tokenizer = policy::tokenizer::Tokenizer::build(["put the red cube in the green zone"]);
    let proprio = policy::features::proprio_dim(robot.dof());
    let policy = Policy::new(
        &model,
        tokenizer,
        Normalizer::identity(proprio),
        &robot,
        &sim,
        tch::Device::Cpu,
        0,
    )
    .unwrap();
    // All weights zero: the policy holds the arm still (its mean action is zero, the gripper
    // closed), so the episodes run to their limits instead of ending in a physics blow-up.
    tch::no_grad(|| {
        for (_, mut t) in policy.vs.variables() {
            let _ = t.zero_();
        }
    });
    let tree = SkillTree::default_tree().unwrap();
    let place = tree.get("place").unwrap();
    let tasks: Vec<_> = [1, 2]
        .iter()
        .map(|s| place.sample_task(&mut ChaCha8Rng::seed_from_u64(*s)))
        .collect();
    // A view met from the first step (reach with a 100 m tolerance) and one never met.
    let mut met = tasks[0].clone();
    met.skill = SkillKind::Reach;
    met.goal.reach_tolerance_m = 100.0;
    let mut never = tasks[1].clone();
    never.skill = SkillKind::Lift;
    never.goal.lift_height_m = 5.0;
    // Four keyframes: the goal half opens the gripper, then closes it.
    let mut plan = Vec::new();
    for g in [0.9, 0.9, 0.9, 0.1] {
        plan.extend([0.0, 0.0, 0.1, g]);
    }
    plan.push(0.0);
    let segment_s = 0.5;
    let mut runs: Vec<HandoffRun> = [(&tasks[0], met.clone(), 5), (&tasks[1], never, 6)]
        .into_iter()
        .map(|(task, view, seed)| HandoffRun {
            task: task.clone(),
            view,
            seed,
            plan: plan.clone(),
            takeover: Takeover::WhenViewHolds,
        })
        .collect();
    // Expert relabelling: the whole plan takes over at step 7, whatever the view says.
    runs.push(HandoffRun {
        takeover: Takeover::AtStep(7),
        ..runs[1].clone()
    });
    let run = run_handoffs(&policy, &robot, &runs, segment_s, 1).unwrap();
    assert_eq!(run.handed_over, 2);
    assert_eq!(run.takeover_at[2], Some(7));
    let relabelled = &run.episodes[2].steps;
    assert!(relabelled[..7].iter().all(|s| gripper(&s.action) == 0.0));
    // A place plan's keyframes end on arrival (at least 4 control steps each) or after a
    // segment: the plan from its first keyframe, three open keyframes, then closed.
    let segment = (segment_s / dt_s).round() as usize;
    let open = |steps: &[sim::episode::StepRecord]| {
        let n = steps
            .iter()
            .take_while(|s| gripper(&s.action) == 1.0)
            .count();
        let rest_closed = steps[n..].iter().all(|s| gripper(&s.action) == 0.0);
        (n, rest_closed)
    };
    let (n, rest_closed) = open(&relabelled[7..]);
    assert!(
        (12..=3 * segment).contains(&n) && rest_closed,
        "three open keyframes: {n}"
    );
    let hold = ((met.goal.hold_s / dt_s).round() as usize).max(1);
    let taken = &run.episodes[0].steps;
    assert!(taken.len() > hold + 5);
    // The untrained policy closes the gripper until the handoff; the plan then opens it for
    // one keyframe and closes it for the last.
    assert!(taken[..hold].iter().all(|s| gripper(&s.action) == 0.0));
    let (n, rest_closed) = open(&taken[hold..]);
    assert!(
        (4..=segment).contains(&n) && rest_closed,
        "one open keyframe: {n}"
    );
    // Given up as soon as the plan's two goal keyframes would no longer fit.
    let max_steps = (tasks[1].max_duration_s / dt_s).ceil() as usize;
    let abandoned = &run.episodes[1];
    assert!(!abandoned.outcome.success);
    assert_eq!(abandoned.outcome.control_steps, max_steps - 2 * segment);
}
