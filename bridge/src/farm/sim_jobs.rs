//! The job kinds a `coevolve farm worker` runs: `episodes` ([`sim::job::EpisodeJob`] in, the
//! episodes in the episode store's body codec out) and `policy_rollouts`
//! ([`super::policy_jobs::PolicyJob`]), with robots and policies loaded once and kept.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use policy::Policy;
use robots::Manipulator;
use sim::job::EpisodeJob;

use super::policy_jobs::{self, PolicyJob, POLICY_ROLLOUTS};
use super::worker::{BlobSource, JobRunner};

/// The kind name of an [`EpisodeJob`].
pub const EPISODES: &str = "episodes";

/// Policies a worker slot keeps loaded.
const POLICIES_KEPT: usize = 4;

thread_local! {
    /// A slot's loaded policies by hash (a libtorch policy is not shared between threads, and
    /// a slot is one thread).
    static POLICIES: RefCell<VecDeque<(String, Rc<Policy>)>> = const { RefCell::new(VecDeque::new()) };
}

/// Runs episode and policy-rollout jobs; robots are loaded by name, policies fetched by hash,
/// on first use.
#[derive(Debug, Default)]
pub struct SimJobRunner {
    robots: Mutex<HashMap<String, Arc<Manipulator>>>,
}

impl SimJobRunner {
    /// Robot `name` (a built-in name or a URDF path), loaded on first use.
    pub fn robot(&self, name: &str) -> Result<Arc<Manipulator>, String> {
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

    /// The policy `hash` names, fetched and loaded on this slot's first use.
    fn policy(hash: &str, blobs: &dyn BlobSource) -> Result<Rc<Policy>, String> {
        let cached =
            POLICIES.with_borrow(|p| p.iter().find(|(h, _)| h == hash).map(|(_, p)| p.clone()));
        if let Some(policy) = cached {
            return Ok(policy);
        }
        let policy = Rc::new(policy_jobs::unpack(&blobs.fetch(hash)?)?);
        POLICIES.with_borrow_mut(|p| {
            if p.len() == POLICIES_KEPT {
                p.pop_front();
            }
            p.push_back((hash.to_owned(), policy.clone()));
        });
        Ok(policy)
    }

    fn episodes(&self, payload: &[u8]) -> Result<(Vec<u8>, u64), String> {
        let job = EpisodeJob::from_bytes(payload).map_err(|e| e.to_string())?;
        let robot = self.robot(&job.robot)?;
        let episodes = job.run(&robot).map_err(|e| e.to_string())?;
        let bytes = sim::store::encode_episodes(&episodes).map_err(|e| e.to_string())?;
        Ok((bytes, episodes.len() as u64))
    }

    fn policy_rollouts(
        &self,
        payload: &[u8],
        blobs: &dyn BlobSource,
    ) -> Result<(Vec<u8>, u64), String> {
        let job: PolicyJob =
            serde_json::from_slice(payload).map_err(|e| format!("a policy job: {e}"))?;
        let robot = self.robot(&job.robot)?;
        let policy = Self::policy(&job.policy, blobs)?;
        policy_jobs::run(&job, &policy, &robot)
    }
}

impl JobRunner for SimJobRunner {
    fn run(
        &self,
        kind: &str,
        payload: &[u8],
        blobs: &dyn BlobSource,
    ) -> Result<(Vec<u8>, u64), String> {
        match kind {
            EPISODES => self.episodes(payload),
            POLICY_ROLLOUTS => self.policy_rollouts(payload, blobs),
            _ => Err(format!(
                "unknown job kind `{kind}` (known: {EPISODES}, {POLICY_ROLLOUTS})"
            )),
        }
    }
}
