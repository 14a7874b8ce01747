//! Diagnostic: how long a store's grasps wait for the fingers. For each episode of DIR with a
//! goal object: the first step whose gripper command closes, the delay (s) until the TCP has
//! risen `RISE` m (default 0.005) above where it was then, the gripper opening at that moment
//! and when the fingers stopped moving (opening change under 0.002 per step), and the outcome.
//! Each line also gives the close step and the TCP's offset from the object then (m).
//! The summary gives the median delays and the share of lifts begun before the fingers settled.
//!
//! `cargo run --release -p coevolve-sim --example grasp_timing -- DIR`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use sim::Episode;

struct Timing {
    rise_delay_s: f64,
    settle_delay_s: f64,
    opening_at_rise: f64,
    /// TCP minus the goal object's position when the close is commanded (m).
    tcp_from_object_m: [f64; 3],
    /// The control step of the close command.
    close_step: usize,
}

fn timing(e: &Episode, dt_s: f64, rise_m: f64) -> Option<Timing> {
    let close = e.steps.iter().position(|s| s.action.gripper() < 0.5)?;
    let z_close = e.steps[close].state.ee_position_m().z;
    let rise =
        (close..e.steps.len()).find(|&i| e.steps[i].state.ee_position_m().z > z_close + rise_m)?;
    let settle = (close + 1..e.steps.len())
        .find(|&i| {
            (e.steps[i].state.gripper_opening - e.steps[i - 1].state.gripper_opening).abs() < 0.002
        })
        .unwrap_or(e.steps.len());
    Some(Timing {
        rise_delay_s: (rise - close) as f64 * dt_s,
        settle_delay_s: (settle - close) as f64 * dt_s,
        opening_at_rise: e.steps[rise].state.gripper_opening,
        tcp_from_object_m: tcp_from_object(e, close),
        close_step: close,
    })
}

/// TCP minus the goal object's position at step `i` (m); NaN without a goal object.
fn tcp_from_object(e: &Episode, i: usize) -> [f64; 3] {
    let k = e.task.goal_object_index();
    let st = &e.steps[i].state;
    k.map_or([f64::NAN; 3], |k| {
        let d = st.ee_position_m() - st.objects[k].position_m();
        [d.x, d.y, d.z]
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rise_m: f64 = std::env::var("RISE")
        .ok()
        .map_or(0.005, |v| v.parse().unwrap());
    let dt_s = sim::SimConfig::default().control_dt_s();
    let scan = sim::store::read_dir(&args[0]).unwrap();
    let timings: Vec<(bool, Timing)> = scan
        .files
        .iter()
        .flat_map(|f| f.episodes.iter())
        .filter_map(|e| timing(e, dt_s, rise_m).map(|t| (e.outcome.success, t)))
        .collect();
    for (ok, t) in &timings {
        println!(
            "ok {ok:5} rise {:.2} s settle {:.2} s opening at rise {:.2} close step {} tcp-object {:+.3?}",
            t.rise_delay_s, t.settle_delay_s, t.opening_at_rise, t.close_step, t.tcp_from_object_m
        );
    }
    let early = timings
        .iter()
        .filter(|(_, t)| t.rise_delay_s < t.settle_delay_s)
        .count();
    println!(
        "{} episodes: median rise delay {:.2} s, median settle delay {:.2} s, lift begun before the fingers settled in {early}",
        timings.len(),
        median(timings.iter().map(|(_, t)| t.rise_delay_s).collect()),
        median(timings.iter().map(|(_, t)| t.settle_delay_s).collect()),
    );
}
