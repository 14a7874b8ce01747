//! Success predicates and reward terms on hand-set physics states.

use sim::library::{sample_task, TaskRanges};
use sim::reward::{Failure, Handling, Judge, RewardWeights};
use sim::scene::contacts::ContactSummary;
use sim::state::{ObjectState, PhysicsState};
use sim::{SkillKind, TaskSpec};

use rand::SeedableRng;

fn task(skill: SkillKind) -> TaskSpec {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    sample_task(skill, &TaskRanges::default(), &mut rng)
}

fn object_at(p: [f64; 3]) -> ObjectState {
    ObjectState {
        world_from_object: [p[0], p[1], p[2], 0.0, 0.0, 0.0, 1.0],
        lin_vel_m_s: [0.0; 3],
        ang_vel_rad_s: [0.0; 3],
    }
}

fn state(task: &TaskSpec, ee: [f64; 3]) -> PhysicsState {
    let objects: Vec<ObjectState> = task
        .objects
        .iter()
        .map(|o| object_at(o.pose.xyz_m))
        .collect();
    let mut contacts = ContactSummary::new(2, objects.len());
    contacts.object_on_table.iter_mut().for_each(|t| *t = true);
    PhysicsState {
        time_s: 0.0,
        q_rad: vec![0.0; 6],
        qd_rad_s: vec![0.0; 6],
        gripper_q: vec![0.04, 0.04],
        gripper_opening: 1.0,
        world_from_ee: [ee[0], ee[1], ee[2], 1.0, 0.0, 0.0, 0.0],
        objects,
        contacts,
        motor_energy_j: 0.0,
        joint_limit_hits: 0,
    }
}

#[test]
fn lift_needs_both_fingers_and_height() {
    let t = task(SkillKind::Lift);
    let w = RewardWeights::default();
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    let start = t.objects[0].pose.xyz_m;
    let mut s = initial.clone();
    assert!(!judge.success(&s), "resting cube is not lifted");
    // Raised high enough and off the table, but only one finger touches: not grasped.
    s.objects[0] = object_at([start[0], start[1], start[2] + t.goal.lift_height_m + 0.01]);
    s.contacts.object_on_table[0] = false;
    s.contacts.finger_touch[0][0] = true;
    assert!(!judge.success(&s));
    s.contacts.finger_touch[1][0] = true;
    assert!(judge.success(&s));
    // Not high enough.
    s.objects[0] = object_at([start[0], start[1], start[2] + t.goal.lift_height_m * 0.5]);
    assert!(!judge.success(&s));
    assert!(judge.grasped(&s, 0));
    let r = judge.reward(&s);
    assert!(
        (r.lift - w.lift * 0.5).abs() < 1e-9,
        "lift term is height fraction: {}",
        r.lift
    );
    assert_eq!(r.grasp, w.grasp);
    assert_eq!(r.success, 0.0);
}

#[test]
fn place_requires_zone_release_and_rest() {
    let t = task(SkillKind::Place);
    let w = RewardWeights::default();
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    let zone = &t.zones[0];
    let z = t.objects[0].pose.xyz_m[2];
    let mut s = initial.clone();
    s.objects[0] = object_at([zone.center_m[0], zone.center_m[1], z]);
    assert!(judge.success(&s));
    let r = judge.reward(&s);
    assert!(
        (r.goal - w.goal).abs() < 1e-9,
        "at the zone centre the goal term is full"
    );
    // Still held by a finger: not released.
    s.contacts.finger_touch[0][0] = true;
    assert!(!judge.success(&s));
    s.contacts.finger_touch[0][0] = false;
    // Sliding: not at rest.
    s.objects[0].lin_vel_m_s = [0.2, 0.0, 0.0];
    assert!(!judge.success(&s));
    s.objects[0].lin_vel_m_s = [0.0; 3];
    // Just outside the zone.
    s.objects[0] = object_at([
        zone.center_m[0] + zone.half_extents_m[0] + 0.001,
        zone.center_m[1],
        z,
    ]);
    assert!(!judge.success(&s));
}

#[test]
fn reach_uses_tcp_distance() {
    let t = task(SkillKind::Reach);
    let w = RewardWeights::default();
    let c = t.zones[0].center_m;
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    assert!(judge.success(&state(&t, [c[0] + 0.015, c[1], c[2]])));
    assert!(!judge.success(&state(&t, [c[0] + 0.025, c[1], c[2]])));
    let r = judge.reward(&state(&t, [c[0] + 0.1, c[1], c[2]]));
    let expected = w.reach * (1.0 - (5.0f64 * 0.1).tanh());
    assert!((r.reach - expected).abs() < 1e-9);
}

#[test]
fn stack_needs_contact_alignment_and_support_on_table() {
    let t = task(SkillKind::Stack);
    let w = RewardWeights::default();
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    let base = t.objects[1].pose.xyz_m;
    let (h_top, h_base) = match (&t.objects[0].kind, &t.objects[1].kind) {
        (sim::task::ObjectKind::Cube { size_m: a }, sim::task::ObjectKind::Cube { size_m: b }) => {
            (a[2] / 2.0, b[2] / 2.0)
        }
        _ => unreachable!(),
    };
    let mut s = initial.clone();
    s.objects[0] = object_at([base[0] + 0.005, base[1], base[2] + h_top + h_base]);
    s.contacts.object_on_table[0] = false;
    s.contacts.object_touch[0][1] = true;
    s.contacts.object_touch[1][0] = true;
    assert!(judge.success(&s));
    s.contacts.object_on_table[1] = false;
    assert!(!judge.success(&s), "the support must stay on the table");
}

#[test]
fn flip_needs_upside_down_disc_on_pan() {
    let t = task(SkillKind::Flip);
    let w = RewardWeights::default();
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    let mut s = initial.clone();
    s.contacts.object_touch[1][0] = true;
    assert!(!judge.success(&s), "still face up");
    // Half turn about x: the disc's z axis points down.
    let p = t.objects[1].pose.xyz_m;
    s.objects[1].world_from_object = [p[0], p[1], p[2], 1.0, 0.0, 0.0, 0.0];
    assert!(judge.success(&s));
}

#[test]
fn scoop_needs_the_disc_on_the_tool_off_the_pan_and_raised() {
    let t = task(SkillKind::Scoop);
    assert_eq!(t.tool, sim::task::ToolKind::Spatula);
    let w = RewardWeights::default();
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    let mut s = initial.clone();
    s.contacts.tool_touch[1] = true;
    assert!(!judge.success(&s), "not raised yet");
    s.objects[1].world_from_object[2] += 0.08;
    assert!(judge.success(&s));
    s.contacts.object_touch[1][0] = true;
    s.contacts.object_touch[0][1] = true;
    assert!(!judge.success(&s), "still touching the pan");
    s.contacts.object_touch[1][0] = false;
    s.contacts.object_touch[0][1] = false;
    s.contacts.tool_touch[1] = false;
    assert!(!judge.success(&s), "thrown, not carried on the spatula");
    s.contacts.tool_touch[1] = true;
    s.contacts.object_peak_force_n[1] = 1e3;
    assert!(!judge.success(&s), "a broken pancake is never a success");
}

#[test]
fn fragile_object_breaks_above_threshold() {
    let t = task(SkillKind::Flip);
    let w = RewardWeights::default();
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    let limit = t.objects[1].fragile_force_n.expect("pancake is fragile");
    let mut s = initial.clone();
    s.contacts.object_peak_force_n[1] = limit * 0.9;
    assert_eq!(judge.failure(&s), None);
    s.contacts.object_peak_force_n[1] = limit * 1.1;
    assert_eq!(
        judge.failure(&s),
        Some(Failure::Broken {
            object: "pancake".into()
        })
    );
}

#[test]
fn penalties_for_table_contact_limits_and_energy() {
    let t = task(SkillKind::Lift);
    let w = RewardWeights::default();
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    let mut s = initial.clone();
    s.contacts.robot_env_force_n = 5.0;
    s.joint_limit_hits = 2;
    s.motor_energy_j = 3.0;
    let r = judge.reward(&s);
    assert_eq!(r.table_collision, -w.table_collision);
    assert_eq!(r.joint_limit, -2.0 * w.joint_limit);
    assert!((r.energy + 3.0 * w.energy_per_j).abs() < 1e-12);
    let sum = r.reach
        + r.grasp
        + r.lift
        + r.goal
        + r.success
        + r.table_collision
        + r.joint_limit
        + r.energy;
    assert!((r.total - sum).abs() < 1e-12);
}

#[test]
fn a_place_is_a_set_down_not_a_drop() {
    let t = task(SkillKind::Place);
    let w = RewardWeights::default();
    let start = t.objects[0].pose.xyz_m;
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    let held_at = |dz: f64| {
        let mut s = state(&t, [start[0], start[1], start[2] + dz]);
        s.objects[0] = object_at([start[0], start[1], start[2] + dz]);
        s.contacts.finger_touch[0][0] = true;
        s.contacts.finger_touch[1][0] = true;
        s
    };
    let resting = state(&t, [start[0], start[1], start[2] + 0.1]);
    // Let go 1 cm up: set down.
    let mut gentle = Handling::default();
    gentle.observe(&judge, &held_at(0.01));
    gentle.observe(&judge, &resting);
    assert!(gentle.holds(&t, &resting));
    // Let go 8 cm up: dropped, however still it comes to rest.
    let mut dropped = Handling::default();
    dropped.observe(&judge, &held_at(0.08));
    dropped.observe(&judge, &resting);
    assert!(!dropped.holds(&t, &resting));
    // Let go 8 cm up, sliding down one finger to 1 cm up: still a drop (one finger is no hold).
    let mut slid = Handling::default();
    slid.observe(&judge, &held_at(0.08));
    let mut sliding = held_at(0.01);
    sliding.contacts.finger_touch[1][0] = false;
    slid.observe(&judge, &sliding);
    slid.observe(&judge, &resting);
    assert!(!slid.holds(&t, &resting));
    // Let go 8 cm up, sliding down between both fingers as they open: still a drop.
    let mut opened = Handling::default();
    let mut closed = held_at(0.08);
    closed.gripper_opening = 0.4;
    opened.observe(&judge, &closed);
    let mut opening = held_at(0.01);
    opening.gripper_opening = 0.6;
    opened.observe(&judge, &opening);
    opened.observe(&judge, &resting);
    assert!(!opened.holds(&t, &resting));
    // Never touched (nothing was let go) and skills that release nothing: no rule.
    assert!(Handling::default().holds(&t, &resting));
    let lift = task(SkillKind::Lift);
    assert!(dropped.holds(&lift, &resting));
}

#[test]
fn a_push_slides_the_cube_and_never_carries_it() {
    let t = task(SkillKind::Push);
    let w = RewardWeights::default();
    let initial = state(&t, [0.3, 0.0, 0.7]);
    let judge = Judge {
        task: &t,
        initial: &initial,
        weights: &w,
    };
    let start = t.objects[0].pose.xyz_m;
    let zone = t.zones[0].center_m;
    let mut in_zone = initial.clone();
    in_zone.objects[0] = object_at([zone[0], zone[1], start[2]]);
    assert!(judge.success(&in_zone));
    // Pushed along the table, the closed fingers against one face: a push.
    let mut pushing = initial.clone();
    pushing.objects[0] = object_at([start[0] + 0.02, start[1], start[2]]);
    pushing.contacts.finger_touch[0][0] = true;
    pushing.contacts.finger_touch[1][0] = true;
    let mut slid = Handling::default();
    for s in [&pushing, &in_zone] {
        slid.observe(&judge, s);
    }
    assert!(slid.holds(&t, &in_zone));
    // Picked up, carried and set down in the zone: a place, not a push.
    let mut carried_state = pushing.clone();
    carried_state.objects[0] = object_at([start[0], start[1], start[2] + 0.03]);
    carried_state.contacts.object_on_table[0] = false;
    let mut carried = Handling::default();
    for s in [&carried_state, &in_zone] {
        carried.observe(&judge, s);
    }
    assert!(!carried.holds(&t, &in_zone));
}
