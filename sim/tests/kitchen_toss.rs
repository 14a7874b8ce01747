//! Why `toss` is not a skill yet (docs/kitchen.md, "Toss"): under the loop's control (25 Hz,
//! 0.1 rad and 2 cm per action) the reference throw never flips the pancake, while the same
//! throw at 250 Hz with caps that let the arm's joint speeds bind flips a good share of it.
#![allow(clippy::unwrap_used)] // test helpers

use sim::reward::Failure;
use sim::scripted_tool::{run_toss, TossScript, TossSetting};

const EPISODES: usize = 32;

/// (flips, broken pancakes) over the variants of seed 7.
fn toss(setting: &TossSetting, rate_rad_s: f64) -> (usize, usize) {
    let episodes = run_toss(
        setting,
        &TossScript::half_turn(rate_rad_s, 1.0),
        EPISODES,
        7,
    )
    .unwrap();
    let flips = episodes.iter().filter(|e| e.outcome.success).count();
    let broken = episodes
        .iter()
        .filter(|e| matches!(e.outcome.failure, Some(Failure::Broken { .. })))
        .count();
    (flips, broken)
}

#[test]
fn a_toss_needs_more_than_the_policys_control() {
    let (flips, broken) = toss(&TossSetting::policy(), 7.0);
    println!("policy control: {flips}/{EPISODES} flips, {broken} broken");
    assert!(
        flips <= 1,
        "{flips}/{EPISODES} tosses flipped under the policy's control"
    );
    let fast = TossSetting {
        control_hz: 250.0,
        max_rot_rad_s: 20.0,
        max_speed_m_s: 4.0,
        ..TossSetting::policy()
    };
    let (flips, broken) = toss(&fast, 6.0);
    println!("250 Hz, raised caps: {flips}/{EPISODES} flips, {broken} broken");
    assert!(flips >= 8, "{flips}/{EPISODES} tosses flipped at 250 Hz");
}
