//! The job kinds a `coevolve farm worker` runs: `episodes` ([`sim::job::EpisodeJob`] in, the
//! episodes in the episode store's body codec out), with its robots loaded once and kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use robots::Manipulator;
use sim::job::EpisodeJob;

use super::worker::JobRunner;

/// The kind name of an [`EpisodeJob`].
pub const EPISODES: &str = "episodes";

/// Runs episode jobs; robots are loaded by name on first use.
#[derive(Debug, Default)]
pub struct SimJobRunner {
    robots: Mutex<HashMap<String, Arc<Manipulator>>>,
}

impl SimJobRunner {
    fn robot(&self, name: &str) -> Result<Arc<Manipulator>, String> {
        let mut robots = self.robots.lock().map_err(|_| "robot cache poisoned")?;
        if let Some(robot) = robots.get(name) {
            return Ok(robot.clone());
        }
        let robot = robots::load_manipulator_for_sim(name, None)
            .map_err(|e| format!("loading robot `{name}` on this worker: {e}"))?;
        let robot = Arc::new(robot);
        robots.insert(name.to_owned(), robot.clone());
        Ok(robot)
    }
}

impl JobRunner for SimJobRunner {
    fn run(&self, kind: &str, payload: &[u8]) -> Result<(Vec<u8>, u64), String> {
        if kind != EPISODES {
            return Err(format!("unknown job kind `{kind}` (known: {EPISODES})"));
        }
        let job = EpisodeJob::from_bytes(payload).map_err(|e| e.to_string())?;
        let robot = self.robot(&job.robot)?;
        let episodes = job.run(&robot).map_err(|e| e.to_string())?;
        let bytes = sim::store::encode_episodes(&episodes).map_err(|e| e.to_string())?;
        Ok((bytes, episodes.len() as u64))
    }
}
