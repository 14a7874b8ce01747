//! The safety filter and watchdog against hostile policies: whatever the targets (NaN, ±inf,
//! huge, oscillating every tick, random jumps), commands stay inside the position limits, the
//! velocity, acceleration and jerk bounds and the end-effector box; the watchdog stops the arm
//! within two control periods of losing state.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use bridge::protocol::JointStateMsg;
use bridge::safety::{SafetyConfig, SafetyFilter};
use proptest::prelude::*;

const RATE_HZ: f64 = 100.0;
const PERIOD_NS: u64 = 10_000_000;

fn ur5e() -> Arc<robots::Manipulator> {
    Arc::new(robots::load_manipulator("ur5e", None).unwrap())
}

fn hostile_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -4.0..4.0f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => -1e12..1e12f64,
    ]
}

/// A target sequence: random per-tick values, or a square wave between two extremes.
fn hostile_targets() -> impl Strategy<Value = Vec<Vec<f64>>> {
    prop_oneof![
        prop::collection::vec(prop::collection::vec(hostile_value(), 6), 1..120),
        (
            prop::collection::vec(-7.0..7.0f64, 6),
            prop::collection::vec(-7.0..7.0f64, 6),
            20..120usize
        )
            .prop_map(|(a, b, n)| (0..n)
                .map(|k| if k % 2 == 0 { a.clone() } else { b.clone() })
                .collect()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn hostile_targets_never_leave_the_limits(targets in hostile_targets(), hold_every in 2usize..9) {
        let robot = ur5e();
        // A tight box so that it binds.
        let config = SafetyConfig {
            workspace_min_m: [-0.6, -0.6, 0.05],
            workspace_max_m: [0.6, 0.6, 0.9],
            ..SafetyConfig::default()
        };
        let mut f = SafetyFilter::new(robot.clone(), &config, RATE_HZ).unwrap();
        f.reset(&robot.home_q_rad, 1.0).unwrap();
        let l = f.limits.clone();
        let dt = f.dt_s();
        let mut prev_q = f.q_cmd_rad().to_vec();
        let mut prev_v = [0.0; 6];
        let mut prev_a = [0.0; 6];
        let tol = 1e-6;
        for (k, t) in targets.iter().enumerate() {
            // Now and then the policy says nothing (brake).
            let target = if k % hold_every == 0 { None } else { Some(t.as_slice()) };
            prop_assert!(f.step(target, t[0], k as u64 * PERIOD_NS));
            let q = f.q_cmd_rad().to_vec();
            prop_assert!((0.0..=1.0).contains(&f.gripper_cmd()));
            let p = robot.fk(&q).translation.vector;
            for ax in 0..3 {
                prop_assert!(p[ax] >= l.workspace_min_m[ax] - tol && p[ax] <= l.workspace_max_m[ax] + tol,
                    "tick {k}: TCP {:?} outside the box", p);
            }
            for i in 0..6 {
                prop_assert!(q[i].is_finite());
                prop_assert!(q[i] >= l.q_min_rad[i] - 1e-12 && q[i] <= l.q_max_rad[i] + 1e-12);
                let v = (q[i] - prev_q[i]) / dt;
                let a = (v - prev_v[i]) / dt;
                let j = (a - prev_a[i]) / dt;
                prop_assert!(v.abs() <= l.v_max_rad_s[i] * (1.0 + tol) + tol, "tick {k} joint {i}: v {v}");
                prop_assert!(a.abs() <= l.a_max_rad_s2 * (1.0 + tol) + 1e-3, "tick {k} joint {i}: a {a}");
                prop_assert!(j.abs() <= l.j_max_rad_s3 * (1.0 + tol) + 1.0, "tick {k} joint {i}: jerk {j}");
                prev_v[i] = v;
                prev_a[i] = a;
            }
            prev_q = q;
        }
    }
}

#[test]
fn the_filter_reaches_a_reachable_target_and_holds() {
    let robot = ur5e();
    let mut f = SafetyFilter::new(robot.clone(), &SafetyConfig::default(), RATE_HZ).unwrap();
    f.reset(&robot.home_q_rad, 1.0).unwrap();
    // Base and wrist rotation: the TCP stays inside the box on the way.
    let mut goal = robot.home_q_rad.clone();
    goal[0] += 0.4;
    goal[5] -= 0.3;
    for k in 0..400 {
        f.step(Some(&goal), 1.0, k * PERIOD_NS);
    }
    assert_eq!(
        (f.hits.workspace, f.hits.position, f.hits.non_finite),
        (0, 0, 0)
    );
    for (q, g) in f.q_cmd_rad().iter().zip(&goal) {
        assert!((q - g).abs() < 1e-3, "{q} vs {g}");
    }
    assert!(f.at_rest());
}

/// A policy's targets step every control period (here 0.03 rad every 4 ticks, then hold):
/// even where the bounds bind, the command follows without reversing or overshooting and
/// settles on the last target (the old tracking law overshot by 37% and rang for 300 ms).
#[test]
fn a_staircase_target_is_followed_without_overshoot_or_ringing() {
    let robot = ur5e();
    for (a_max, j_max) in [(40.0, 2000.0), (400.0, 400_000.0)] {
        let config = SafetyConfig {
            max_accel_rad_s2: a_max,
            max_jerk_rad_s3: j_max,
            ..SafetyConfig::default()
        };
        let mut f = SafetyFilter::new(robot.clone(), &config, RATE_HZ).unwrap();
        f.reset(&robot.home_q_rad, 1.0).unwrap();
        let mut target = robot.home_q_rad.clone();
        let mut settled_at = None;
        for k in 0..120u64 {
            if k.is_multiple_of(4) && k < 24 {
                target[0] += 0.03;
            }
            f.step(Some(&target), 1.0, k * PERIOD_NS);
            let (q, v) = (f.q_cmd_rad()[0], f.v_cmd_rad_s()[0]);
            assert!(v >= -1e-6, "a={a_max}: reversed at tick {k}: v {v}");
            assert!(
                q <= target[0] + 1e-6,
                "a={a_max}: overshot at tick {k}: {q} > {}",
                target[0]
            );
            if k >= 24 && settled_at.is_none() && (q - target[0]).abs() < 1e-4 && v.abs() < 1e-3 {
                settled_at = Some(k);
            }
            if let Some(s) = settled_at {
                assert!(
                    (q - target[0]).abs() < 1e-4,
                    "a={a_max}: left the target after tick {s}"
                );
            }
        }
        let settled_at = settled_at.expect("settles");
        assert!(
            settled_at < 24 + 20,
            "a={a_max}: settled only at tick {settled_at}"
        );
    }
}

/// Moving at speed, then told to stop: the commanded trajectory brakes within the bounds
/// and comes to rest, and a target beyond the box edge is stopped at the edge.
#[test]
fn braking_from_speed_ends_at_rest_and_the_box_edge_holds() {
    let robot = ur5e();
    let mut f = SafetyFilter::new(robot.clone(), &SafetyConfig::default(), RATE_HZ).unwrap();
    f.reset(&robot.home_q_rad, 1.0).unwrap();
    let mut goal = robot.home_q_rad.clone();
    goal[0] += 2.0;
    let mut k = 0;
    while f.v_cmd_rad_s()[0] < 2.0 {
        f.step(Some(&goal), 1.0, k * PERIOD_NS);
        k += 1;
    }
    let braking_from = k;
    while !f.at_rest() {
        f.step(None, 1.0, k * PERIOD_NS);
        k += 1;
        assert!(k - braking_from < 100, "still moving after 1 s of braking");
    }
    // Push the elbow toward the table: the filter stops at the box's floor.
    let mut down = f.q_cmd_rad().to_vec();
    down[2] -= 1.0;
    for _ in 0..300 {
        f.step(Some(&down), 1.0, k * PERIOD_NS);
        k += 1;
    }
    let z = robot.fk(f.q_cmd_rad()).translation.vector[2];
    assert!(z >= f.limits.workspace_min_m[2], "TCP z {z}");
    assert!(f.hits.workspace > 0 || (f.q_cmd_rad()[2] - down[2]).abs() < 1e-3);
}

#[test]
fn non_finite_targets_are_counted_and_braked() {
    let robot = ur5e();
    let mut f = SafetyFilter::new(robot.clone(), &SafetyConfig::default(), RATE_HZ).unwrap();
    f.reset(&robot.home_q_rad, 1.0).unwrap();
    let bad = vec![f64::NAN; 6];
    for k in 0..5 {
        f.step(Some(&bad), f64::NAN, k * PERIOD_NS);
    }
    assert_eq!(f.hits.non_finite, 10);
    assert_eq!(f.q_cmd_rad(), robot.home_q_rad.as_slice());
}

#[test]
fn commands_faster_than_the_rate_limit_are_dropped() {
    let robot = ur5e();
    let config = SafetyConfig {
        max_command_rate_hz: 50.0,
        ..SafetyConfig::default()
    };
    let mut f = SafetyFilter::new(robot.clone(), &config, RATE_HZ).unwrap();
    f.reset(&robot.home_q_rad, 1.0).unwrap();
    let sent: usize = (0..10).filter(|k| f.step(None, 1.0, k * PERIOD_NS)).count();
    assert_eq!(sent, 5);
    assert_eq!(f.hits.rate, 5);
}

#[test]
fn bad_safety_configs_name_the_field() {
    let robot = ur5e();
    let config = SafetyConfig {
        workspace_min_m: [0.0, 0.0, 1.0],
        workspace_max_m: [1.0, 1.0, 0.5],
        ..SafetyConfig::default()
    };
    let err = SafetyFilter::new(robot, &config, RATE_HZ)
        .unwrap_err()
        .to_string();
    assert!(err.contains("workspace") && err.contains("axis 2"), "{err}");
    let err = serde_json::from_str::<SafetyConfig>(r#"{"max_accel": 3}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("max_accel"), "{err}");
}

/// State loss while the arm moves: within two control periods after the state timeout the
/// controller is braking, and the commanded velocity then only shrinks until the arm holds.
#[test]
fn watchdog_stops_the_arm_within_two_periods() {
    use bridge::controller::{ControllerConfig, ControllerCore};
    use bridge::protocol::ControllerMode;
    let robot = ur5e();
    let config = ControllerConfig {
        rate_hz: RATE_HZ,
        safety: SafetyConfig::default(),
        trusted_keys: vec![],
        device: tch::Device::Cpu,
        ros2: None,
    };
    let timeout_ns = (config.safety.state_timeout_ms * 1e6) as u64;
    let mut core = ControllerCore::new(robot.clone(), config).unwrap();
    let state = |seq: u64| JointStateMsg {
        seq,
        stamp_ns: 0,
        q_rad: robot.home_q_rad.clone(),
        qd_rad_s: vec![0.0; 6],
        gripper_opening: 1.0,
    };
    core.on_joint_state(&state(0), 0);
    for k in 1..20u64 {
        core.on_joint_state(&state(k), k * PERIOD_NS);
        assert!(core.step(k * PERIOD_NS).is_some());
        assert_eq!(core.mode(), ControllerMode::Idle);
    }
    // The last state arrived at 19 periods; it goes stale after `timeout_ns`.
    let last_state_ns = 19 * PERIOD_NS;
    let mut stopped_at = None;
    for k in 20..200u64 {
        let now = k * PERIOD_NS;
        core.step(now);
        if core.mode() == ControllerMode::Stopped && stopped_at.is_none() {
            stopped_at = Some(now);
        }
    }
    let stopped_at = stopped_at.expect("the watchdog never tripped");
    assert!(stopped_at > last_state_ns + timeout_ns);
    assert!(
        stopped_at <= last_state_ns + timeout_ns + 2 * PERIOD_NS,
        "tripped {} ms after the deadline",
        (stopped_at - last_state_ns - timeout_ns) as f64 / 1e6
    );
    assert!(core.filter().at_rest());
}
