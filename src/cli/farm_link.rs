//! The farm as the loop's executor — policy rollouts (`bridge::farm::policy_jobs`) and plan
//! episodes (`skills::plan_jobs`: the search's candidates and plan probes) on its workers —
//! and the workers' job runner for both.

use std::sync::Arc;

use anyhow::Context;
use bridge::farm::policy_jobs::FarmRollouts;
use bridge::farm::sim_jobs::SimJobRunner;
use bridge::farm::{BlobSource, Farm, JobRunner};
use sim::Episode;
use skills::plan_jobs::{PlanExecutor, PlanJob};

use super::farm_cmd::FarmFlags;

/// The kind name of a [`PlanJob`].
pub const PLANS: &str = "plans";

/// A connection to the farm and the executors that use it.
#[derive(Debug)]
pub struct FarmLink {
    pub farm: Arc<Farm>,
    pub rollouts: Arc<FarmRollouts>,
    pub plans: Arc<FarmPlans>,
}

/// Joins the farm where `--farm` is given; `robot` as the workers load it.
pub fn connect(flags: &FarmFlags, robot: &str) -> anyhow::Result<Option<FarmLink>> {
    let Some(endpoint) = &flags.farm else {
        return Ok(None);
    };
    let (net, options) = flags.settings(endpoint)?;
    let farm = Arc::new(Farm::connect(&net.zenoh(), options).context("joining the farm")?);
    Ok(Some(FarmLink {
        rollouts: Arc::new(FarmRollouts {
            farm: farm.clone(),
            robot: robot.to_owned(),
            job_rollouts: flags.farm_job_episodes,
        }),
        plans: Arc::new(FarmPlans {
            farm: farm.clone(),
            job_episodes: flags.farm_job_episodes,
        }),
        farm,
    }))
}

impl FarmLink {
    /// One line on what the farm has run so far.
    pub fn summary(&self) -> String {
        let t = self.farm.totals();
        format!(
            "farm: {} episodes in {} jobs on {} workers, {:.0} episodes/s while busy, {} dispatched again",
            t.episodes,
            t.jobs,
            t.jobs_per_worker.len(),
            t.episodes as f64 / t.wall_s.max(1e-9),
            t.redispatched
        )
    }
}

/// Plan episodes on the farm's workers, `job_episodes` a job.
#[derive(Debug)]
pub struct FarmPlans {
    farm: Arc<Farm>,
    job_episodes: usize,
}

impl PlanExecutor for FarmPlans {
    fn run(&self, job: &PlanJob) -> Result<Vec<Episode>, String> {
        let payloads = job
            .split(self.job_episodes)
            .iter()
            .map(PlanJob::to_bytes)
            .collect::<Result<Vec<_>, _>>()?;
        let (results, _) = self
            .farm
            .run(PLANS, &payloads, &|_| {})
            .map_err(|e| format!("farm: {e}"))?;
        let mut episodes = Vec::with_capacity(job.episodes.len());
        for (i, bytes) in results.iter().enumerate() {
            let part = sim::store::decode_episodes(bytes)
                .map_err(|e| format!("farm plan job {i}'s episodes: {e}"))?;
            episodes.extend(part);
        }
        if episodes.len() != job.episodes.len() {
            return Err(format!(
                "farm: {} plan episodes back for {}",
                episodes.len(),
                job.episodes.len()
            ));
        }
        Ok(episodes)
    }
}

/// A `coevolve farm worker`'s jobs: the simulator's kinds and plan episodes.
#[derive(Debug, Default)]
pub struct WorkerRunner {
    sim: SimJobRunner,
}

impl JobRunner for WorkerRunner {
    fn run(
        &self,
        kind: &str,
        payload: &[u8],
        blobs: &dyn BlobSource,
    ) -> Result<(Vec<u8>, u64), String> {
        if kind != PLANS {
            return self.sim.run(kind, payload, blobs);
        }
        let job = PlanJob::from_bytes(payload)?;
        let robot = self.sim.robot(&job.robot)?;
        let episodes = job.run(&robot)?;
        let bytes = sim::store::encode_episodes(&episodes).map_err(|e| e.to_string())?;
        Ok((bytes, episodes.len() as u64))
    }
}
