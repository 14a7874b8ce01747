//! The controller driving the simulator in lockstep (no network): the arm follows the newest
//! command for one controller tick of physics, as `sim-robot` does in real time. Prints the
//! success rate next to the simulator's own evaluation of the same checkpoint on the same
//! variants, and the arm's joint accelerations.
//! `cargo run -p coevolve-bridge --example lockstep -- CKPT SKILL EPISODES SEED [loose]`
//! Environment: `A_MAX`, `J_MAX` override the filter's bounds; `COARSE=1` lets the arm take
//! only each control period's last command; `TRACE=i` prints episode `i` tick by tick.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use bridge::bundle::{self, BundleInfo};
use bridge::controller::{prepare_bundle, ControllerConfig, ControllerCore};
use bridge::protocol::TaskMsg;
use bridge::safety::SafetyConfig;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ckpt = std::path::PathBuf::from(&args[0]);
    let skill = sim::SkillKind::parse(&args[1]).unwrap();
    let episodes: usize = args[2].parse().unwrap();
    let seed: u64 = args[3].parse().unwrap();
    let loose = args.get(4).is_some_and(|a| a == "loose");
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let mut safety = SafetyConfig {
        ramp_in_s: 0.0,
        ..SafetyConfig::default()
    };
    if loose {
        safety.max_accel_rad_s2 = 1e4;
        safety.max_jerk_rad_s3 = 1e7;
    }
    if let Ok(a) = std::env::var("A_MAX") {
        safety.max_accel_rad_s2 = a.parse().unwrap();
    }
    if let Ok(j) = std::env::var("J_MAX") {
        safety.max_jerk_rad_s3 = j.parse().unwrap();
    }
    let key = bridge::keys::generate();
    let info = BundleInfo {
        skill: args[1].clone(),
        source: "lockstep".into(),
        heldout_success: None,
        safety: safety.clone(),
    };
    let bytes = bundle::build(&ckpt, &info, Some(&key)).unwrap();
    let policy = policy::checkpoint::load(&ckpt, tch::Device::Cpu).unwrap();
    let sim = Arc::new(policy.meta.sim.clone());
    let eval = policy::rollout::evaluate(&policy, &robot, skill, episodes, seed, 1).unwrap();
    let (tasks, seeds) = policy::rollout::task_variants(skill, episodes, seed, &robot);
    let rate_hz = 100.0;
    let per_tick = bridge::sim_robot::physics_steps_per_tick(&sim, rate_hz).unwrap();
    let ticks_per_step = sim.substeps() / per_tick;
    let coarse = std::env::var("COARSE").is_ok_and(|c| c == "1");
    let period_ns = (1e9 / rate_hz) as u64;
    let mut successes = 0;
    let mut accels: Vec<f64> = Vec::new();
    for (i, (task, s)) in tasks.iter().zip(&seeds).enumerate() {
        let config = ControllerConfig {
            rate_hz,
            safety: safety.clone(),
            trusted_keys: vec![key.verifying_key()],
            device: tch::Device::Cpu,
            ros2: None,
        };
        let mut core = ControllerCore::new(robot.clone(), config.clone()).unwrap();
        let mut stepper = sim::EpisodeStepper::new(&robot, task, &sim, i, *s, false).unwrap();
        let mut now = 0u64;
        let feed =
            |core: &mut ControllerCore, stepper: &sim::EpisodeStepper, now: u64, seq: u64| {
                let (state, objects) =
                    bridge::sim_robot::state_messages(stepper.observation(), seq, now);
                core.on_joint_state(&state, now);
                core.on_objects(&objects);
            };
        core.on_task(&TaskMsg {
            seq: 1,
            task_json: serde_json::to_string(task).unwrap(),
        })
        .unwrap();
        feed(&mut core, &stepper, now, 0);
        let prepared = prepare_bundle(&bytes, &config.trusted_keys, &robot, config.device).unwrap();
        core.activate(prepared, now).unwrap();
        let mut seq = 1;
        let mut ticks = 0usize;
        let mut last = None;
        let mut qd_prev = stepper.observation().qd_rad_s.clone();
        while !stepper.is_done() {
            // One controller tick, then the arm follows the newest command for one tick.
            if let Some(c) = core.step(now) {
                last = Some(c.clone());
            }
            now += period_ns;
            let c = last.clone().unwrap();
            ticks += 1;
            if coarse && !ticks.is_multiple_of(ticks_per_step) {
                // The arm takes only every control period's last command (COARSE=1).
                continue;
            }
            stepper.step_substeps(
                sim::Action::JointPosition {
                    q_rad: c.q_rad,
                    gripper: c.gripper_opening,
                },
                if coarse {
                    per_tick * ticks_per_step
                } else {
                    per_tick
                },
            );
            seq += 1;
            feed(&mut core, &stepper, now, seq);
            if std::env::var("TRACE").is_ok_and(|t| t == i.to_string()) {
                let o = stepper.observation();
                let c = last.as_ref().unwrap();
                println!(
                    "t {:.2} inf {} cmd-q {:?} qd {:?} a {:?}",
                    now as f64 / 1e9,
                    core.last_step_inferred(),
                    c.q_rad
                        .iter()
                        .zip(&o.q_rad)
                        .map(|(a, b)| format!("{:+.3}", a - b))
                        .collect::<Vec<_>>(),
                    o.qd_rad_s
                        .iter()
                        .map(|v| format!("{v:+.2}"))
                        .collect::<Vec<_>>(),
                    core.filter()
                        .a_cmd_rad_s2()
                        .iter()
                        .map(|v| format!("{v:+.1}"))
                        .collect::<Vec<_>>()
                );
            }
            let qd = &stepper.observation().qd_rad_s;
            for (a, b) in qd.iter().zip(&qd_prev) {
                accels.push(((a - b) * rate_hz).abs());
            }
            qd_prev.clone_from(qd);
        }
        let steps = stepper.steps_taken();
        let ok = stepper.finish().outcome.success;
        successes += usize::from(ok);
        println!("episode {i}: success {ok} in {steps} steps");
    }
    accels.sort_by(f64::total_cmp);
    let pct = |p: f64| accels[((accels.len() - 1) as f64 * p) as usize];
    println!(
        "arm joint acceleration (ticks of {} Hz, rad/s²): p50 {:.1}, p99 {:.1}, max {:.1}",
        rate_hz,
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    println!(
        "simulator {:.2} (mean steps {:.1}), controller in lockstep {:.2}",
        eval.success_rate,
        eval.mean_steps,
        successes as f64 / episodes as f64
    );
}
