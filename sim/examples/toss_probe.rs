//! Diagnostic: can a toss flip the pancake, and at what control rate and action caps? The
//! scripted reference scoops, then throws (`TossScript::half_turn`: the swing's peak rate ω
//! and the pivot distance for half a turn in flight) under each control rate and each pair of
//! end-effector caps and each joint speed limit (the UR5e's URDF one, and twice it), on the
//! same flip variants. Per configuration: flips (pancake upside down at rest in the pan, whole),
//! broken pancakes, the blade's peak rate and speed reached (from the recorded TCP poses), and
//! the pancake's longest flight (touching neither blade nor pan, at least 2 cm above its start):
//! its duration, its spin, and the turn they make.
//!
//! `cargo run --release -p coevolve-sim --example toss_probe -- [EPISODES] [SEED] [confirm]`
//! (`confirm`: only the best swing of each setting of the 16-episode sweep on seed 7, quoted in
//! docs/kitchen.md, to be run on other variants).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use sim::scripted_tool::{run_toss, TossScript, TossSetting};
use sim::state::iso_from_pose7;
use sim::Episode;

/// End-effector caps per second: (rotation rad/s, translation m/s).
const CAPS: [(&str, f64, f64); 2] = [("policy", 2.5, 0.5), ("raised", 20.0, 4.0)];
const HZ: [f64; 3] = [25.0, 100.0, 250.0];
const RATES_RAD_S: [f64; 6] = [5.0, 6.0, 7.0, 8.0, 10.0, 12.0];
/// Joint speed limits: the URDF's (×1) and a what-if arm twice as fast.
const JOINT_SPEED: [f64; 2] = [1.0, 2.0];
const SWING_RAD: f64 = 1.0;

struct Figures {
    flips: usize,
    broken: usize,
    blade_rate_rad_s: f64,
    blade_speed_m_s: f64,
    flight_s: f64,
    spin_rad_s: f64,
    turn_rad: f64,
    rise_m: f64,
}

/// The longest run of airborne steps: (duration s, median spin rad/s).
fn flight(e: &Episode, dt_s: f64) -> (f64, f64) {
    let o = e.task.object_index("pancake").unwrap();
    let z0 = e.initial_state.objects[o].position_m().z;
    let airborne = |s: &sim::episode::StepRecord| {
        let c = &s.state.contacts;
        !c.tool_touch[o]
            && !c.object_touch[o].iter().any(|t| *t)
            && s.state.objects[o].position_m().z > z0 + 0.02
    };
    let (mut best, mut start) = ((0, 0), None);
    for (i, s) in e
        .steps
        .iter()
        .enumerate()
        .chain([(e.steps.len(), &e.steps[0])])
    {
        let up = i < e.steps.len() && airborne(s);
        match (up, start) {
            (true, None) => start = Some(i),
            (false, Some(a)) => {
                if i - a > best.1 - best.0 {
                    best = (a, i);
                }
                start = None;
            }
            _ => {}
        }
    }
    let mut spins: Vec<f64> = e.steps[best.0..best.1]
        .iter()
        .map(|s| nalgebra::Vector3::from(s.state.objects[o].ang_vel_rad_s).norm())
        .collect();
    spins.sort_by(f64::total_cmp);
    (
        (best.1 - best.0) as f64 * dt_s,
        spins.get(spins.len() / 2).copied().unwrap_or(0.0),
    )
}

fn figures(episodes: &[Episode], dt_s: f64) -> Figures {
    let mean = |f: &dyn Fn(&Episode) -> f64| {
        episodes.iter().map(f).sum::<f64>() / episodes.len().max(1) as f64
    };
    let disc = |e: &Episode| e.task.object_index("pancake").unwrap();
    let blade = |e: &Episode, rot: bool| {
        e.steps
            .windows(2)
            .map(|w| {
                let a = iso_from_pose7(&w[0].state.world_from_ee);
                let b = iso_from_pose7(&w[1].state.world_from_ee);
                if rot {
                    (b.rotation * a.rotation.inverse()).angle() / dt_s
                } else {
                    (b.translation.vector - a.translation.vector).norm() / dt_s
                }
            })
            .fold(0.0f64, f64::max)
    };
    Figures {
        flips: episodes.iter().filter(|e| e.outcome.success).count(),
        broken: episodes
            .iter()
            .filter(|e| matches!(e.outcome.failure, Some(sim::reward::Failure::Broken { .. })))
            .count(),
        blade_rate_rad_s: mean(&|e| blade(e, true)),
        blade_speed_m_s: mean(&|e| blade(e, false)),
        flight_s: mean(&|e| flight(e, dt_s).0),
        spin_rad_s: mean(&|e| flight(e, dt_s).1),
        turn_rad: mean(&|e| {
            let (t, w) = flight(e, dt_s);
            t * w
        }),
        rise_m: mean(&|e| {
            let o = disc(e);
            let z0 = e.initial_state.objects[o].position_m().z;
            e.steps
                .iter()
                .map(|s| s.state.objects[o].position_m().z - z0)
                .fold(0.0, f64::max)
        }),
    }
}

/// The best swing per setting in the sweep (joint speed, Hz, caps index, ω).
const CONFIRM: [(f64, f64, usize, f64); 8] = [
    (1.0, 25.0, 0, 7.0),
    (1.0, 250.0, 0, 7.0),
    (1.0, 25.0, 1, 7.0),
    (1.0, 100.0, 1, 7.0),
    (1.0, 250.0, 1, 6.0),
    (2.0, 25.0, 1, 8.0),
    (2.0, 100.0, 1, 8.0),
    (2.0, 250.0, 1, 8.0),
];

fn row(setup: &TossSetting, name: &str, rate: f64, episodes: usize, seed: u64) {
    let toss = TossScript::half_turn(rate, SWING_RAD);
    let e = run_toss(setup, &toss, episodes, seed).unwrap();
    let f = figures(&e, 1.0 / setup.control_hz);
    let (hz, rot, lin, joint_speed) = (
        setup.control_hz,
        setup.max_rot_rad_s,
        setup.max_speed_m_s,
        setup.joint_speed_factor,
    );
    let pivot_m = toss.pivot_m;
    println!(
        "| ×{joint_speed} | {hz} | {name} ({rot}, {lin}) | {rate}, {pivot_m:.3} | {}/{episodes} | {} | {:.1} | {:.2} | {:.2} | {:.1} | {:.2} | {:.3} |",
        f.flips, f.broken, f.blade_rate_rad_s, f.blade_speed_m_s, f.flight_s, f.spin_rad_s, f.turn_rad, f.rise_m
    );
}

fn setting(joint_speed_factor: f64, control_hz: f64, rot: f64, lin: f64) -> TossSetting {
    TossSetting {
        control_hz,
        max_rot_rad_s: rot,
        max_speed_m_s: lin,
        joint_speed_factor,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let episodes = args.get(1).map_or(16, |v| v.parse().expect("EPISODES"));
    let seed = args.get(2).map_or(7, |v| v.parse().expect("SEED"));
    let confirm = args.get(3).is_some_and(|a| a == "confirm");
    println!("| joint speed | control Hz | caps (rad/s, m/s) | swing peak ω (rad/s), pivot (m) | flips | broken | blade rate reached (rad/s) | blade speed (m/s) | flight (s) | spin in flight (rad/s) | turn in flight (rad) | rise (m) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    if confirm {
        for (joint_speed, hz, caps, rate) in CONFIRM {
            let (name, rot, lin) = CAPS[caps];
            let setup = setting(joint_speed, hz, rot, lin);
            row(&setup, name, rate, episodes, seed);
        }
        return;
    }
    for joint_speed in JOINT_SPEED {
        for hz in HZ {
            for (name, rot, lin) in CAPS {
                let setup = setting(joint_speed, hz, rot, lin);
                for rate in RATES_RAD_S {
                    row(&setup, name, rate, episodes, seed);
                }
            }
        }
    }
}
