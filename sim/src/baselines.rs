//! Baseline controllers: uniformly random end-effector deltas, and holding the start pose.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::control::Action;
use crate::episode::Controller;
use crate::state::Observation;

/// Uniformly random end-effector deltas and gripper, from the episode's seed.
#[derive(Debug)]
pub struct RandomController {
    rng: ChaCha8Rng,
}

impl RandomController {
    pub fn new(seed: u64) -> RandomController {
        RandomController {
            rng: rand::SeedableRng::seed_from_u64(seed),
        }
    }
}

impl Controller for RandomController {
    fn act(&mut self, _: &Observation) -> Action {
        let mut u = || self.rng.gen_range(-1.0..=1.0);
        Action::EeDelta {
            dpos: [u(), u(), u()],
            drot: [u(), u(), u()],
            gripper: self.rng.gen_range(0.0..=1.0),
        }
    }
}

/// Holds the arm where it is, gripper open.
#[derive(Debug)]
pub struct HoldController;

impl Controller for HoldController {
    fn act(&mut self, obs: &Observation) -> Action {
        Action::JointDelta {
            dq: vec![0.0; obs.q_rad.len()],
            gripper: 1.0,
        }
    }
}
