//! `Policy`: the network with everything needed to use it — featurizer (config, tokenizer,
//! cameras), normaliser, robot identity and the simulator settings it was trained under — and
//! batched inference.

use std::sync::Arc;

use robots::Manipulator;
use serde::{Deserialize, Serialize};
use tch::{nn, Device, Kind, Tensor};

use crate::config::ModelConfig;
use crate::error::Result;
use crate::features::ACTION_DIM;
use crate::model::{ObsBatch, PolicyOutput, VlaNet};
use crate::obs::{Featurizer, Normalizer, ObsRow};
use crate::tokenizer::Tokenizer;

/// Who and what the policy is for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyMeta {
    pub robot_name: String,
    pub robot_model_hash: String,
    pub dof: usize,
    /// Skills present in the training data.
    pub skills: Vec<String>,
    /// Simulator settings of the training data (control rate, action scale, cameras).
    pub sim: sim::SimConfig,
    /// Free-form record of how it was trained (steps, losses, data).
    pub training: serde_json::Value,
}

/// One batched inference, on the host.
#[derive(Clone, Debug, PartialEq)]
pub struct Inference {
    /// Action means, normalised, `[B, chunk, ACTION_DIM]` flattened.
    pub mean: Vec<f32>,
    /// Log standard deviations, normalised units, `[chunk, ACTION_DIM]` flattened.
    pub log_std: Vec<f32>,
    /// Predicted success probabilities `[B]`.
    pub value: Vec<f32>,
}

#[derive(Debug)]
pub struct Policy {
    pub vs: nn::VarStore,
    pub net: VlaNet,
    pub featurizer: Featurizer,
    pub normalizer: Normalizer,
    pub meta: PolicyMeta,
}

impl Policy {
    /// A freshly initialised policy (weights drawn from torch's generator seeded with `seed`).
    pub fn new(
        model: &ModelConfig,
        tokenizer: Tokenizer,
        normalizer: Normalizer,
        robot: &Arc<Manipulator>,
        sim: &sim::SimConfig,
        device: Device,
        seed: u64,
    ) -> Result<Policy> {
        let meta = PolicyMeta {
            robot_name: robot.model.load_name().to_owned(),
            robot_model_hash: robot.model.model_hash.clone(),
            dof: robot.dof(),
            skills: Vec::new(),
            sim: sim.clone(),
            training: serde_json::Value::Null,
        };
        Policy::build(model, tokenizer, normalizer, meta, device, seed)
    }

    /// A freshly initialised policy for the robot and simulator described by `meta`.
    pub fn build(
        model: &ModelConfig,
        tokenizer: Tokenizer,
        normalizer: Normalizer,
        meta: PolicyMeta,
        device: Device,
        seed: u64,
    ) -> Result<Policy> {
        model.validate()?;
        let featurizer = Featurizer::new(model, tokenizer, &meta.sim, meta.dof)?;
        normalizer.check(featurizer.proprio_dim)?;
        tch::manual_seed(seed as i64);
        let vs = nn::VarStore::new(device);
        let net = VlaNet::new(
            &vs.root(),
            model,
            featurizer.tokenizer.vocab_size(),
            featurizer.proprio_dim as i64,
            &featurizer.image_hw,
        );
        Ok(Policy {
            vs,
            net,
            featurizer,
            normalizer,
            meta,
        })
    }

    /// A frozen copy (same weights, no gradients) to serve as a KL reference.
    pub fn frozen_copy(&self) -> Result<Policy> {
        let mut copy = Policy::build(
            &self.featurizer.model,
            self.featurizer.tokenizer.clone(),
            self.normalizer.clone(),
            self.meta.clone(),
            self.device(),
            0,
        )?;
        copy.vs.copy(&self.vs)?;
        copy.vs.freeze();
        Ok(copy)
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// Forward pass on an unnormalised batch (moved to the policy's device and normalised).
    pub fn forward(&self, raw: &ObsBatch) -> PolicyOutput {
        let obs = self.normalizer.apply(&raw.to_device(self.device()));
        self.net.forward(&obs)
    }

    /// Inference without gradients for observation rows.
    pub fn infer(&self, rows: &[&ObsRow]) -> Result<Inference> {
        let batch = self.featurizer.collate(rows);
        let out = tch::no_grad(|| self.forward(&batch));
        let to_vec = |t: &Tensor| -> Result<Vec<f32>> {
            Ok(Vec::<f32>::try_from(
                t.to_device(Device::Cpu).to_kind(Kind::Float).flatten(0, -1),
            )?)
        };
        Ok(Inference {
            mean: to_vec(&out.mean)?,
            log_std: to_vec(&out.log_std)?,
            value: to_vec(&out.value_logit.sigmoid())?,
        })
    }

    /// A normalised action back in the simulator's units.
    pub fn denormalize_action(&self, a: &[f32]) -> [f32; ACTION_DIM] {
        let s = &self.normalizer.actions;
        let mut out = [0.0f32; ACTION_DIM];
        for (i, o) in out.iter_mut().enumerate() {
            *o = a[i] * s.std[i] + s.mean[i];
        }
        out
    }

    /// Trainable parameter count.
    pub fn parameter_count(&self) -> i64 {
        self.vs
            .trainable_variables()
            .iter()
            .map(Tensor::numel)
            .sum::<usize>() as i64
    }
}

/// libtorch held to one intra-op thread from [`SingleThreaded::hold`] until the guard drops,
/// the count before restored then. An image policy's lockstep rollouts (`lockstep::Driver`)
/// hold it for their whole run: their batches are a few dozen rows, too small to share between
/// cores; at 2 intra-op threads libtorch's spinning workers took the cores from the rayon
/// threads stepping the physics; and on one thread a row's action does not depend on the
/// run's thread count. Hold it per rollout, not around every inference: libtorch's
/// `set_num_threads` also resets its pthreadpool and oneDNN's computation cache. The count
/// belongs to the calling OS thread (OpenMP's), so infer on the thread that holds it.
#[derive(Debug)]
pub struct SingleThreaded {
    before: i32,
}

impl SingleThreaded {
    /// One intra-op thread on the calling thread until the guard drops.
    pub fn hold() -> SingleThreaded {
        let before = tch::get_num_threads();
        if before != 1 {
            tch::set_num_threads(1);
        }
        SingleThreaded { before }
    }
}

impl Drop for SingleThreaded {
    fn drop(&mut self) {
        if self.before != 1 {
            tch::set_num_threads(self.before);
        }
    }
}
