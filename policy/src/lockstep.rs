//! Many simulated episodes driven by one policy. A state policy runs on the host
//! ([`HostPolicy`]): every episode runs to its end on its own, its network calls on the same
//! rayon thread as its physics, so the network keeps every core busy beside the simulation and
//! a row's output depends on nothing but its own observation. An image policy runs through
//! libtorch: the episodes step in lockstep, one batched network call per control step (on one
//! libtorch thread, [`SingleThreaded`]) between parallel physics steps.

use rayon::prelude::*;
use sim::{Observation, TaskSpec};

use crate::config::ObsMode;
use crate::error::{PolicyError, Result};
use crate::features::ACTION_DIM;
use crate::host::{HostOutput, HostPolicy};
use crate::policy::{Policy, SingleThreaded};
use crate::tokenizer::Tokenizer;

/// One episode a [`Driver`] advances.
pub trait DrivenEpisode: Send + Sync {
    /// Whether it has more steps to run.
    fn running(&self) -> bool;
    /// The observation and task (with the instruction) the network reads this step, or None
    /// when the episode's own controller acts.
    fn query(&self) -> Option<(&Observation, &TaskSpec)>;
    /// Chooses this step's action (from the network's output when it was queried) and steps
    /// the physics.
    fn advance(&mut self, out: Option<&HostOutput>, log_std: &[f32; ACTION_DIM]) -> Result<()>;
}

/// Runs episodes under one policy: on the host for a state policy, through libtorch for an
/// image policy.
#[derive(Debug)]
pub struct Driver<'p> {
    policy: &'p Policy,
    host: Option<HostPolicy>,
}

impl<'p> Driver<'p> {
    pub fn new(policy: &'p Policy) -> Result<Driver<'p>> {
        let host = match policy.featurizer.model.obs {
            ObsMode::State => Some(HostPolicy::new(policy)?),
            _ => None,
        };
        Ok(Driver { policy, host })
    }

    /// Runs every episode to its end on `pool`.
    pub fn run<E: DrivenEpisode>(
        &self,
        pool: &rayon::ThreadPool,
        episodes: &mut [E],
    ) -> Result<()> {
        match &self.host {
            Some(host) => {
                let tokenizer = &self.policy.featurizer.tokenizer;
                pool.install(|| {
                    episodes
                        .par_iter_mut()
                        .map_with(host.clone(), |host, e| run_on_host(host, tokenizer, e))
                        .collect::<Result<()>>()
                })
            }
            None => self.run_lockstep(pool, episodes),
        }
    }

    fn run_lockstep<E: DrivenEpisode>(
        &self,
        pool: &rayon::ThreadPool,
        episodes: &mut [E],
    ) -> Result<()> {
        let _one_thread = SingleThreaded::hold();
        let featurizer = &self.policy.featurizer;
        loop {
            let active: Vec<&mut E> = episodes.iter_mut().filter(|e| e.running()).collect();
            if active.is_empty() {
                return Ok(());
            }
            let rows = pool.install(|| {
                active
                    .par_iter()
                    .map(|e| {
                        e.query()
                            .map(|(obs, task)| featurizer.row(obs, task))
                            .transpose()
                    })
                    .collect::<Result<Vec<_>>>()
            })?;
            let refs: Vec<_> = rows.iter().flatten().collect();
            let inference = self.policy.infer(&refs)?;
            let chunk = featurizer.model.chunk as usize;
            let log_std = first_action(&inference.log_std)?;
            let mut k = 0;
            let outs = rows
                .iter()
                .map(|row| {
                    let Some(_) = row else { return Ok(None) };
                    let mean = first_action(&inference.mean[k * chunk * ACTION_DIM..])?;
                    let value = inference.value[k];
                    k += 1;
                    Ok(Some(HostOutput { mean, value }))
                })
                .collect::<Result<Vec<_>>>()?;
            pool.install(|| {
                active
                    .into_par_iter()
                    .zip(outs)
                    .map(|(e, out)| e.advance(out.as_ref(), &log_std))
                    .collect::<Result<()>>()
            })?;
        }
    }
}

/// One episode to its end, its network calls on the host.
fn run_on_host<E: DrivenEpisode>(
    host: &mut HostPolicy,
    tokenizer: &Tokenizer,
    e: &mut E,
) -> Result<()> {
    let log_std = *host.log_std();
    while e.running() {
        let out = match e.query() {
            Some((obs, task)) => Some(host.infer(tokenizer, obs, task)?),
            None => None,
        };
        e.advance(out.as_ref(), &log_std)?;
    }
    Ok(())
}

fn first_action(x: &[f32]) -> Result<[f32; ACTION_DIM]> {
    x.get(..ACTION_DIM)
        .and_then(|s| <[f32; ACTION_DIM]>::try_from(s).ok())
        .ok_or_else(|| PolicyError::Data(format!("network output of {} values", x.len())))
}
