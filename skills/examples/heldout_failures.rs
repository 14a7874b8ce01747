//! Diagnostic: how a run's policy fails a skill's held-out variants. Runs the checkpoint of
//! generation GEN greedily on SKILL's fixed evaluation seeds and prints, per episode, the
//! outcome, the steps used, the object's highest and final rise above its start (m), the
//! closest the TCP came to the object (m) and the gripper opening at the end. DUMP=i: episode
//! i's last steps (STRIDE=k: every k-th step of it), with the actions; CLOSE=1: per episode, the
//! TCP's offset from the object and the robot's force on the environment at the first close
//! command; SOLVER=n, PGS=n: the same policy under other contact-solver settings.
//!
//! `cargo run --release -p coevolve-skills --example heldout_failures -- RUN GEN SKILL`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use skills::evolve::evaluate::heldout_variants;
use skills::evolve::learner::{run_policy, Runs};
use skills::evolve::run_dir::RunDir;
use skills::tree::SkillTree;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = RunDir::new(&args[0]);
    let generation: usize = args[1].parse().unwrap();
    let tree = SkillTree::default_tree().unwrap();
    let skill = tree.get(&args[2]).unwrap();
    tch::set_num_threads(2);
    let mut policy =
        policy::checkpoint::load(&run.checkpoint(generation), tch::Device::Cpu).unwrap();
    // SOLVER=n / PGS=n: the same policy under other contact-solver settings.
    let env_usize = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<usize>().ok());
    if let Some(n) = env_usize("SOLVER") {
        policy.meta.sim.solver_iterations = n;
    }
    if let Some(n) = env_usize("PGS") {
        policy.meta.sim.pgs_iterations = n;
    }
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let (tasks, seeds) = heldout_variants(skill);
    let runs = run_policy(
        &policy,
        &robot,
        &tasks,
        &seeds,
        None,
        None,
        Runs {
            threads: 2,
            executor: None,
        },
    )
    .unwrap();
    let mut ok = 0;
    for (i, r) in runs.iter().enumerate() {
        let e = &r.episode;
        ok += usize::from(e.outcome.success);
        let object = e.task.goal_object_index();
        let (mut peak_rise_m, mut final_rise_m, mut closest_m) = (0.0f64, 0.0, f64::INFINITY);
        if let Some(k) = object {
            let z0 = e.initial_state.objects[k].position_m().z;
            for s in &e.steps {
                let p = s.state.objects[k].position_m();
                peak_rise_m = peak_rise_m.max(p.z - z0);
                final_rise_m = p.z - z0;
                closest_m = closest_m.min((s.state.ee_position_m() - p).norm());
            }
        }
        let (start_xy, yaw_deg) = object.map_or(([f64::NAN; 2], f64::NAN), |k| {
            let o = &e.initial_state.objects[k];
            let q = sim::state::iso_from_pose7(&o.world_from_object).rotation;
            let p = o.position_m();
            ([p.x, p.y], q.euler_angles().2.to_degrees())
        });
        let opening = e.steps.last().map_or(f64::NAN, |s| s.state.gripper_opening);
        println!(
            "{i:2} {} steps {:3} peak {peak_rise_m:.3} final {final_rise_m:.3} target {:.3} \
             closest {closest_m:.3} opening {opening:.2} object at ({:.3}, {:.3}) yaw \
             {yaw_deg:.0} {:?}",
            if e.outcome.success { "ok  " } else { "FAIL" },
            e.outcome.control_steps,
            e.task.goal.lift_height_m,
            start_xy[0],
            start_xy[1],
            e.outcome.invalid,
        );
    }
    println!("{ok}/{} successful", runs.len());
    // Where the object ended relative to the goal zone (place / push): offset (m) and half extent.
    for (i, r) in runs.iter().enumerate() {
        let e = &r.episode;
        let zone = e.task.goal_zone();
        let object = e.task.goal_object_index();
        if let (Some(z), Some(k), Some(last)) = (zone, object, e.steps.last()) {
            let p = last.state.objects[k].position_m();
            let start = e.initial_state.objects[k].position_m();
            // The step at which the fingers last let go of the object.
            let released_at = e.steps.iter().rposition(|s| {
                s.state
                    .contacts
                    .finger_touch
                    .iter()
                    .any(|f| f.get(k).copied().unwrap_or(false))
            });
            let at_release = released_at.map(|j| e.steps[j].state.objects[k].position_m());
            println!(
                "{i:2} zone offset ({:+.3}, {:+.3}) half {:.3} start->zone {:.3} released at {:?} obj then {:.3?}",
                p.x - z.center_m[0],
                p.y - z.center_m[1],
                z.half_extents_m[0],
                ((start.x - z.center_m[0]).powi(2) + (start.y - z.center_m[1]).powi(2)).sqrt(),
                released_at,
                at_release.map(|q| [q.x - z.center_m[0], q.y - z.center_m[1], q.z]),
            );
        }
    }
    // What hindsight relabelling (`skills::evolve::hindsight`) makes of each failure.
    let sim = sim::SimConfig::default();
    let mut verdicts = std::collections::BTreeMap::<String, usize>::new();
    for r in runs.iter().filter(|r| !r.episode.outcome.success) {
        let verdict = sim::hindsight::relabel(
            &r.episode,
            &sim.reward,
            sim.control_dt_s(),
            skills::evolve::hindsight::drawable(skill),
        )
        .map_or_else(|e| format!("{e:?}"), |_| "relabelled".to_owned());
        *verdicts.entry(verdict).or_default() += 1;
    }
    println!("hindsight: {verdicts:?}");
    // CLOSE=1: per episode, where the TCP was (relative to the object, m) and the robot's
    // force on the environment when the gripper was first commanded to close.
    if std::env::var("CLOSE").is_ok() {
        for (i, r) in runs.iter().enumerate() {
            let e = &r.episode;
            let (Some(k), Some(j)) = (
                e.task.goal_object_index(),
                e.steps.iter().position(|s| s.action.gripper() < 0.5),
            ) else {
                continue;
            };
            let st = &e.steps[j].state;
            let d = st.ee_position_m() - st.objects[k].position_m();
            let yaw_deg = sim::state::iso_from_pose7(&st.world_from_ee)
                .rotation
                .euler_angles()
                .2
                .to_degrees();
            let obj_yaw_deg = sim::state::iso_from_pose7(&st.objects[k].world_from_object)
                .rotation
                .euler_angles()
                .2
                .to_degrees();
            println!(
                "close {i:3} {} step {j:3} tcp-obj ({:+.3}, {:+.3}, {:+.3}) env {:.0} ee yaw {yaw_deg:.0} obj yaw {obj_yaw_deg:.0}",
                if e.outcome.success { "ok  " } else { "FAIL" }, d.x, d.y, d.z, st.contacts.robot_env_force_n,
            );
        }
    }
    // With DUMP=i: the last steps of episode i (STRIDE=k: every k-th step of the whole episode).
    if let Some(i) = std::env::var("DUMP")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        let e = &runs[i].episode;
        let stride: usize = std::env::var("STRIDE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let shown: Vec<&sim::episode::StepRecord> = if stride > 0 {
            e.steps.iter().step_by(stride).collect()
        } else {
            e.steps.iter().rev().take(12).rev().collect()
        };
        for s in shown {
            let st = &s.state;
            println!(
                "t {:.2} ee {:.3?} act {:+.2?} grip {:.3?} open {:.2} cmd {:.2} qd {:.1?} obj {:.3?} v {:.2?} force {:.0?} \
                 env {:.0} pen {:.4} touch {:?}",
                st.time_s,
                st.ee_position_m().as_slice(),
                s.action.to_vec(),
                st.gripper_q,
                st.gripper_opening,
                s.action.gripper(), st.qd_rad_s,
                st.objects.first().map(|o| o.position_m()).map(|p| [p.x, p.y, p.z]),
                st.objects.first().map(|o| o.lin_vel_m_s),
                st.contacts.object_peak_force_n,
                st.contacts.robot_env_force_n,
                st.contacts.max_penetration_m,
                st.contacts.finger_touch,
            );
        }
    }
}
