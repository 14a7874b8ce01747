//! Policy rollouts as farm jobs: a [`PolicyJob`] names its policy by the SHA-256 of a packed
//! checkpoint, which workers fetch once from the orchestrator ([`super::Farm::offer`]) and
//! keep; [`FarmRollouts`] is the [`RolloutExecutor`] that splits a rollout set into jobs.

use std::path::Path;
use std::sync::Arc;

use policy::executor::RolloutExecutor;
use policy::rollout::{rollout, rollout_from, EarlyStop, PolicyRollout, RolloutConfig, Sampling};
use policy::{ObsMode, Policy, PolicyError};
use robots::Manipulator;
use serde::{Deserialize, Serialize};
use sim::TaskSpec;

use super::orchestrator::Farm;
use super::wire;

/// The kind name of a [`PolicyJob`].
pub const POLICY_ROLLOUTS: &str = "policy_rollouts";

/// Rollouts `first_index..` of a set, with everything needed to run them but the policy's
/// bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyJob {
    /// SHA-256 of the packed checkpoint ([`pack`]).
    pub policy: String,
    /// A built-in robot's name or a URDF path (which the worker must have).
    pub robot: String,
    pub first_index: usize,
    pub tasks: Vec<TaskSpec>,
    pub seeds: Vec<u64>,
    pub sampling: Sampling,
    pub early_stop: Option<EarlyStop>,
}

/// A job's rollouts: the episodes in the episode store's body codec, and per rollout where
/// early stopping cut it and whether it was audited.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyJobResult {
    pub episodes: Vec<u8>,
    pub cut_at: Vec<Option<u64>>,
    pub audited: Vec<bool>,
}

/// A checkpoint as one blob: `policy.json` and `model.safetensors`.
#[derive(Serialize, Deserialize)]
struct PackedPolicy {
    config: Vec<u8>,
    weights: Vec<u8>,
}

fn io(path: &Path, e: std::io::Error) -> PolicyError {
    PolicyError::io(path, e)
}

/// `policy` as the bytes of its checkpoint (what its hash names).
pub fn pack(policy: &Policy) -> Result<Vec<u8>, PolicyError> {
    let dir = tempfile::tempdir().map_err(|e| io(Path::new("<temporary directory>"), e))?;
    let ckpt = dir.path().join("policy");
    policy::checkpoint::save(policy, &ckpt)?;
    let read = |name: &str| {
        let path = ckpt.join(name);
        std::fs::read(&path).map_err(|e| io(&path, e))
    };
    let packed = PackedPolicy {
        config: read(policy::checkpoint::CONFIG_FILE)?,
        weights: read(policy::checkpoint::WEIGHTS_FILE)?,
    };
    wire::encode(&packed).map_err(|e| PolicyError::Data(e.to_string()))
}

/// A packed checkpoint back into a policy on the CPU (its weights' hash checked on loading).
pub fn unpack(bytes: &[u8]) -> Result<Policy, String> {
    let packed: PackedPolicy = wire::decode("packed policy", bytes).map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    };
    write(policy::checkpoint::CONFIG_FILE, &packed.config)?;
    write(policy::checkpoint::WEIGHTS_FILE, &packed.weights)?;
    policy::checkpoint::load(dir.path(), tch::Device::Cpu).map_err(|e| e.to_string())
}

/// Runs `job` on this thread; the encoded [`PolicyJobResult`] and the number of rollouts.
pub fn run(
    job: &PolicyJob,
    policy: &Policy,
    robot: &Arc<Manipulator>,
) -> Result<(Vec<u8>, u64), String> {
    let cfg = RolloutConfig {
        sampling: job.sampling,
        threads: 1,
        keep_transitions: false,
        early_stop: job.early_stop.clone(),
    };
    let runs = rollout_from(policy, robot, &job.tasks, &job.seeds, job.first_index, &cfg)
        .map_err(|e| e.to_string())?;
    let episodes: Vec<sim::Episode> = runs.iter().map(|r| r.episode.clone()).collect();
    let result = PolicyJobResult {
        episodes: sim::store::encode_episodes(&episodes).map_err(|e| e.to_string())?,
        cut_at: runs.iter().map(|r| r.cut_at.map(|c| c as u64)).collect(),
        audited: runs.iter().map(|r| r.audited).collect(),
    };
    let bytes = wire::encode(&result).map_err(|e| e.to_string())?;
    Ok((bytes, runs.len() as u64))
}

/// Rollouts on a farm's workers, `job_rollouts` a job. Image policies (whose lockstep batches
/// make a row's result depend on the batch) run on this machine.
#[derive(Debug)]
pub struct FarmRollouts {
    pub farm: Arc<Farm>,
    /// The robot's name as workers load it (a built-in name or a path they share).
    pub robot: String,
    pub job_rollouts: usize,
}

impl RolloutExecutor for FarmRollouts {
    fn rollout(
        &self,
        policy: &Policy,
        robot: &Arc<Manipulator>,
        tasks: &[TaskSpec],
        seeds: &[u64],
        cfg: &RolloutConfig,
    ) -> policy::Result<Vec<PolicyRollout>> {
        if policy.featurizer.model.obs != ObsMode::State || tasks.len() != seeds.len() {
            return rollout(policy, robot, tasks, seeds, cfg);
        }
        let hash = self.farm.offer(pack(policy)?);
        let per_job = self.job_rollouts.max(1);
        let payloads = (0..tasks.len())
            .step_by(per_job)
            .map(|start| {
                let end = (start + per_job).min(tasks.len());
                let job = PolicyJob {
                    policy: hash.clone(),
                    robot: self.robot.clone(),
                    first_index: start,
                    tasks: tasks[start..end].to_vec(),
                    seeds: seeds[start..end].to_vec(),
                    sampling: cfg.sampling,
                    early_stop: cfg.early_stop.clone(),
                };
                serde_json::to_vec(&job)
                    .map_err(|e| PolicyError::Data(format!("a policy job: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let farm_error = |e: crate::error::BridgeError| PolicyError::Data(format!("farm: {e}"));
        let (results, _) = self
            .farm
            .run(POLICY_ROLLOUTS, &payloads, &|_| {})
            .map_err(farm_error)?;
        let mut rollouts = Vec::with_capacity(tasks.len());
        for (job, bytes) in results.iter().enumerate() {
            let result: PolicyJobResult =
                wire::decode("policy job result", bytes).map_err(farm_error)?;
            let episodes = sim::store::decode_episodes(&result.episodes)
                .map_err(|e| PolicyError::Data(format!("farm job {job}'s episodes: {e}")))?;
            if episodes.len() != result.cut_at.len() || episodes.len() != result.audited.len() {
                return Err(PolicyError::Data(format!(
                    "farm job {job}: inconsistent result"
                )));
            }
            for ((episode, cut_at), audited) in episodes
                .into_iter()
                .zip(&result.cut_at)
                .zip(&result.audited)
            {
                rollouts.push(PolicyRollout {
                    episode,
                    transitions: Vec::new(),
                    cut_at: cut_at.map(|c| c as usize),
                    audited: *audited,
                });
            }
        }
        if rollouts.len() != tasks.len() {
            return Err(PolicyError::Data(format!(
                "farm: {} rollouts back for {} tasks",
                rollouts.len(),
                tasks.len()
            )));
        }
        Ok(rollouts)
    }
}
