//! Physics health and controller faults end the episode with a reason; the batch goes on.
#![allow(clippy::unwrap_used)] // test helpers
//! The kitchen scene (pan, fragile pancake, spatula instead of fingers) builds and stays healthy.

use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use sim::library::{sample_task, TaskRanges};
use sim::{
    Action, BatchConfig, Controller, EpisodeBatch, EpisodeInfo, Observation, Scene, SimConfig,
    SkillKind, TaskSpec,
};

struct Hold;
impl Controller for Hold {
    fn act(&mut self, obs: &Observation) -> Action {
        Action::JointDelta {
            dq: vec![0.0; obs.q_rad.len()],
            gripper: 1.0,
        }
    }
}

/// Emits NaN in episode 1 only.
struct Faulty;
impl Controller for Faulty {
    fn act(&mut self, obs: &Observation) -> Action {
        Action::JointDelta {
            dq: vec![f64::NAN; obs.q_rad.len()],
            gripper: 1.0,
        }
    }
}

fn batch(
    tasks: &(dyn Fn(usize, &mut ChaCha8Rng) -> TaskSpec + Sync),
    faulty_episode: Option<usize>,
) -> EpisodeBatch {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        if Some(info.index) == faulty_episode {
            Box::new(Faulty)
        } else {
            Box::new(Hold)
        }
    };
    let cfg = BatchConfig {
        episodes: 3,
        seed: 1,
        threads: Some(2),
        record_images: false,
    };
    EpisodeBatch::run(
        robot,
        Arc::new(SimConfig::default()),
        &cfg,
        tasks,
        &factory,
        &|| {},
    )
    .unwrap()
}

fn short(mut t: TaskSpec) -> TaskSpec {
    t.max_duration_s = 0.6;
    t
}

#[test]
fn deep_penetration_marks_only_that_episode_invalid() {
    let tasks = |i: usize, rng: &mut ChaCha8Rng| {
        let mut t = short(sample_task(SkillKind::Lift, &TaskRanges::default(), rng));
        if i == 1 {
            t.objects[0].pose.xyz_m[2] = t.table.top_z_m - 0.01; // half buried in the table
        }
        t
    };
    let b = batch(&tasks, None);
    let invalid: Vec<_> = b
        .episodes
        .iter()
        .map(|e| e.outcome.invalid.clone())
        .collect();
    assert!(invalid[0].is_none() && invalid[2].is_none(), "{invalid:?}");
    let reason = invalid[1].clone().expect("buried cube is unhealthy");
    assert!(
        reason.contains("penetration") || reason.contains("speed"),
        "{reason}"
    );
    assert_eq!(b.stats.invalid, 1);
}

#[test]
fn a_nan_action_ends_its_episode_with_a_reason() {
    let tasks = |_: usize, rng: &mut ChaCha8Rng| {
        short(sample_task(SkillKind::Lift, &TaskRanges::default(), rng))
    };
    let b = batch(&tasks, Some(1));
    let reason = b.episodes[1]
        .outcome
        .invalid
        .clone()
        .expect("NaN action is reported");
    assert!(reason.contains("not finite"), "{reason}");
    assert!(b.episodes[0].outcome.invalid.is_none());
    assert!(b.episodes[2].outcome.invalid.is_none());
}

#[test]
fn kitchen_scene_mounts_the_spatula_and_stays_healthy() {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let mut rng: ChaCha8Rng = rand::SeedableRng::seed_from_u64(4);
    let task = sample_task(SkillKind::Flip, &TaskRanges::default(), &mut rng);
    let mut scene = Scene::new(robot, &task, Arc::new(SimConfig::default())).unwrap();
    assert!(
        scene.articulation.gripper.is_empty(),
        "fingers replaced by the tool"
    );
    assert_eq!(scene.tool.len(), 2, "spatula handle and blade");
    let start = scene.physics_state();
    for _ in 0..25 {
        scene
            .apply(&Action::JointDelta {
                dq: vec![0.0; 6],
                gripper: 0.0,
            })
            .unwrap();
        scene.step_control();
    }
    let end = scene.physics_state();
    assert_eq!(scene.health_problem(&end), None);
    // The pancake settles in the pan: still face up, barely moved, touching the pan.
    let (p0, p1) = (start.objects[1].position_m(), end.objects[1].position_m());
    assert!(
        (p1 - p0).norm() < 0.02,
        "pancake moved {}",
        (p1 - p0).norm()
    );
    assert!(end.objects[1].up_axis().z > 0.99);
    assert!(end.contacts.object_touch[1][0], "pancake rests on the pan");
}
