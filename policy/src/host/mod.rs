//! [`HostPolicy`]: a state-mode policy's first action and predicted success for one
//! observation, computed in plain Rust on the host — the weights copied out of the `VarStore`
//! once, every buffer allocated up front — so a robot's control loop runs it without
//! libtorch's per-operation dispatch and without allocating, and simulated rollouts run it on
//! every core beside the physics, each row on its own (so a row's output does not depend on
//! the batch or the thread count). The same network as [`crate::model::VlaNet::forward`],
//! evaluated differently where that changes nothing: padding tokens are left out (the network
//! masks them), and the last block is evaluated for the two readout tokens only (the only
//! outputs used).

mod kernels;
mod weights;

use std::sync::Arc;

use sim::state::{iso_from_pose7, Observation};
use sim::task::TaskSpec;

use crate::config::ObsMode;
use crate::error::{PolicyError, Result};
use crate::features::{self, ACTION_DIM};
use crate::tokenizer::{Tokenizer, PAD_ID};
use crate::Policy;
use kernels::{attention, gelu_tanh, layer_norm, Gemm};
use weights::{Weights, TYPE_LANG, TYPE_OBJECT, TYPE_PROPRIO, TYPE_ZONE};

/// What the network says about one observation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostOutput {
    /// The chunk's first action, normalised.
    pub mean: [f32; ACTION_DIM],
    /// Predicted success probability.
    pub value: f32,
}

/// The host forward pass of one policy, with its scratch buffers. A clone shares the weights
/// and has buffers of its own (one per thread).
#[derive(Clone, Debug)]
pub struct HostPolicy {
    w: Arc<Weights>,
    gemm: Gemm,
    /// The instruction `lang` holds the tokens of.
    instruction: String,
    /// Instruction token ids (non-padding) of the current task.
    lang: Vec<i64>,
    max_lang: usize,
    /// The instruction is one token, the mean of its words' (`ModelConfig::pool_lang`).
    pool_lang: bool,
    proprio: Vec<f32>,
    x: Vec<f32>,
    normed: Vec<f32>,
    qkv: Vec<f32>,
    attn: Vec<f32>,
    hidden: Vec<f32>,
    scores: Vec<f32>,
    action: [f32; ACTION_DIM],
    value_logit: [f32; 1],
}

impl HostPolicy {
    /// Copies `policy`'s weights; state-mode policies only (an image policy's camera
    /// encoder is left to libtorch).
    pub fn new(policy: &Policy) -> Result<HostPolicy> {
        let model = &policy.featurizer.model;
        if model.obs != ObsMode::State {
            return Err(PolicyError::config(
                "obs",
                "host inference runs state-mode policies only",
            ));
        }
        let w = Weights::from_policy(policy)?;
        let d = w.d;
        let max_lang = model.max_lang_tokens as usize;
        let max_tokens = 2 + max_lang + 1 + w.max_objects + w.max_zones;
        Ok(HostPolicy {
            gemm: Gemm::detect(),
            instruction: String::new(),
            lang: Vec::with_capacity(max_lang),
            max_lang,
            pool_lang: model.pool_lang,
            proprio: vec![0.0; policy.featurizer.proprio_dim],
            x: vec![0.0; max_tokens * d],
            normed: vec![0.0; max_tokens * d],
            qkv: vec![0.0; max_tokens * 3 * d],
            attn: vec![0.0; max_tokens * d],
            hidden: vec![0.0; max_tokens * w.mlp * d],
            scores: vec![0.0; max_tokens],
            action: [0.0; ACTION_DIM],
            value_logit: [0.0],
            w: Arc::new(w),
        })
    }

    /// The first action's log standard deviations (normalised units).
    pub fn log_std(&self) -> &[f32; ACTION_DIM] {
        &self.w.log_std
    }

    /// The instruction of the task about to run (tokenised here, not per step).
    pub fn set_instruction(&mut self, policy: &Policy, instruction: &str) {
        self.tokenize(&policy.featurizer.tokenizer, instruction);
    }

    fn tokenize(&mut self, tokenizer: &Tokenizer, instruction: &str) {
        self.instruction.clear();
        self.instruction.push_str(instruction);
        let ids = tokenizer.encode(instruction, self.max_lang);
        self.lang.clear();
        self.lang.extend(ids.into_iter().filter(|id| *id != PAD_ID));
    }

    /// The policy's mean action (simulator units: end-effector step, rotation, gripper) for
    /// `obs` under `task`, whose instruction [`HostPolicy::set_instruction`] gave. Allocates
    /// nothing.
    pub fn act(&mut self, obs: &Observation, task: &TaskSpec) -> Result<[f32; ACTION_DIM]> {
        self.forward(obs, task)?;
        let mean = &self.w.actions.mean;
        let std = &self.w.actions.std;
        let mut action = self.action;
        for (i, a) in action.iter_mut().enumerate() {
            *a = *a * std[i] + mean[i];
        }
        Ok(action)
    }

    /// The normalised first action and the predicted success for `obs` under `task`, its
    /// instruction tokenised when it is not the last call's.
    pub fn infer(
        &mut self,
        tokenizer: &Tokenizer,
        obs: &Observation,
        task: &TaskSpec,
    ) -> Result<HostOutput> {
        if task.instruction != self.instruction {
            self.tokenize(tokenizer, &task.instruction);
        }
        self.forward(obs, task)?;
        Ok(HostOutput {
            mean: self.action,
            value: 1.0 / (1.0 + (-self.value_logit[0]).exp()),
        })
    }

    /// Both readouts into `action` (normalised) and `value_logit`.
    fn forward(&mut self, obs: &Observation, task: &TaskSpec) -> Result<()> {
        if obs.objects.len() > self.w.max_objects || task.zones.len() > self.w.max_zones {
            return Err(PolicyError::Data(format!(
                "task `{}` has {} objects and {} zones; the model has {} and {} slots",
                task.name,
                obs.objects.len(),
                task.zones.len(),
                self.w.max_objects,
                self.w.max_zones
            )));
        }
        if obs.q_rad.len() * 3 + 12 != self.proprio.len() {
            return Err(PolicyError::Data(format!(
                "observation has {} joints, the model expects {}",
                obs.q_rad.len(),
                (self.proprio.len() - 12) / 3
            )));
        }
        let t = self.embed(obs, task);
        self.trunk(t);
        Ok(())
    }

    /// Writes the tokens into `x` (readouts, instruction, proprioception, objects, zones);
    /// returns their number.
    fn embed(&mut self, obs: &Observation, task: &TaskSpec) -> usize {
        let (w, g) = (&self.w, self.gemm);
        let d = w.d;
        let x = &mut self.x;
        x[..2 * d].copy_from_slice(&w.readout);
        let mut t = 2 + embed_lang(x, w, &self.lang, self.pool_lang);
        features::proprio_into(obs, task, &mut self.proprio);
        w.proprio_norm.apply(&mut self.proprio);
        let row = &mut x[t * d..(t + 1) * d];
        g.run(
            &self.proprio,
            1,
            self.proprio.len(),
            &w.proprio_in.w_p,
            &w.proprio_in.b,
            row,
        );
        add(row, w.type_row(TYPE_PROPRIO));
        t += 1;
        let ee = iso_from_pose7(&obs.world_from_ee).translation.vector;
        for (slot, (o, spec)) in obs.objects.iter().zip(&task.objects).enumerate() {
            let mut f = features::object_token(o, &spec.kind, &ee);
            w.object_norm.apply(&mut f);
            entity(
                g,
                w,
                &mut x[t * d..(t + 1) * d],
                &f,
                &w.object_in,
                slot,
                TYPE_OBJECT,
            );
            t += 1;
        }
        for (slot, z) in task.zones.iter().enumerate() {
            let mut f = features::zone_token(z, &ee);
            w.zone_norm.apply(&mut f);
            let slot = w.max_objects + slot;
            entity(
                g,
                w,
                &mut x[t * d..(t + 1) * d],
                &f,
                &w.zone_in,
                slot,
                TYPE_ZONE,
            );
            t += 1;
        }
        t
    }

    /// The transformer blocks, the action head (first action of the chunk) into `self.action`,
    /// normalised, and the success head into `self.value_logit`.
    fn trunk(&mut self, t: usize) {
        let (d, heads) = (self.w.d, self.w.heads);
        let depth = self.w.blocks.len();
        let g = self.gemm;
        for (i, b) in self.w.blocks.iter().enumerate() {
            // The last block only for the readouts (tokens 0 and 1): keys and values of all.
            let q_rows = if i + 1 == depth { 2 } else { t };
            let x = &mut self.x[..t * d];
            layer_norm(x, d, &b.ln1.gain, &b.ln1.bias, &mut self.normed[..t * d]);
            g.run(
                &self.normed,
                t,
                d,
                &b.qkv.w_p,
                &b.qkv.b,
                &mut self.qkv[..t * 3 * d],
            );
            attention(
                &self.qkv,
                t,
                d,
                heads,
                0..q_rows,
                &mut self.scores,
                &mut self.attn,
            );
            let h = &mut self.normed[..q_rows * d];
            g.run(&self.attn, q_rows, d, &b.proj.w_p, &b.proj.b, h);
            add(&mut x[..q_rows * d], h);
            layer_norm(&x[..q_rows * d], d, &b.ln2.gain, &b.ln2.bias, h);
            let wide = b.fc1.n;
            let hidden = &mut self.hidden[..q_rows * wide];
            g.run(h, q_rows, d, &b.fc1.w_p, &b.fc1.b, hidden);
            gelu_tanh(hidden);
            g.run(hidden, q_rows, wide, &b.fc2.w_p, &b.fc2.b, h);
            add(&mut x[..q_rows * d], h);
        }
        let out = &mut self.normed[..2 * d];
        layer_norm(
            &self.x[..2 * d],
            d,
            &self.w.ln_out.gain,
            &self.w.ln_out.bias,
            out,
        );
        let (act, val) = out.split_at(d);
        let head = &self.w.action_head;
        g.run(act, 1, d, &head.w_p, &head.b, &mut self.action);
        let head = &self.w.value_head;
        g.run(val, 1, d, &head.w_p, &head.b, &mut self.value_logit);
    }
}

/// The instruction's tokens from row 2 of `x` on: one, the mean of its words' embeddings (each
/// plus its position's), when `pool` is set, else one per word; returns how many.
fn embed_lang(x: &mut [f32], w: &Weights, lang: &[i64], pool: bool) -> usize {
    let d = w.d;
    let word = |pos: usize, id: i64, row: &mut [f32]| {
        let id = (id as usize).min(w.vocab - 1);
        add(row, &w.lang_embed[id * d..(id + 1) * d]);
        add(row, &w.lang_pos[pos * d..(pos + 1) * d]);
    };
    if pool {
        let row = &mut x[2 * d..3 * d];
        row.fill(0.0);
        for (pos, id) in lang.iter().enumerate() {
            word(pos, *id, row);
        }
        let scale = 1.0 / lang.len().max(1) as f32;
        row.iter_mut().for_each(|v| *v *= scale);
        add(row, w.type_row(TYPE_LANG));
        return 1;
    }
    for (pos, id) in lang.iter().enumerate() {
        let row = &mut x[(2 + pos) * d..(3 + pos) * d];
        row.fill(0.0);
        word(pos, *id, row);
        add(row, w.type_row(TYPE_LANG));
    }
    lang.len()
}

/// An object or zone token from its (normalised) feature vector `f`.
fn entity(
    g: Gemm,
    w: &Weights,
    row: &mut [f32],
    f: &[f32],
    layer: &weights::Linear,
    slot: usize,
    kind: usize,
) {
    let d = w.d;
    g.run(f, 1, f.len(), &layer.w_p, &layer.b, row);
    add(row, &w.slot_embed[slot * d..(slot + 1) * d]);
    add(row, w.type_row(kind));
}

fn add(dst: &mut [f32], src: &[f32]) {
    for (a, b) in dst.iter_mut().zip(src) {
        *a += b;
    }
}
