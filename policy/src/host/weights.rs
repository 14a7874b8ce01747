//! The network's parameters copied out of a policy's `VarStore` into host vectors, linear
//! layers transposed for [`super::kernels::Gemm`], with the normaliser's statistics.

use std::collections::HashMap;

use tch::{Device, Kind, Tensor};

use super::kernels::{pack, pad_bias};
use crate::error::{PolicyError, Result};
use crate::features::ACTION_DIM;
use crate::model::{LOG_STD_MAX, LOG_STD_MIN};
use crate::obs::Stats;
use crate::Policy;

/// Token types, as in `model.rs`.
pub(crate) const TYPE_LANG: usize = 0;
pub(crate) const TYPE_PROPRIO: usize = 1;
pub(crate) const TYPE_OBJECT: usize = 2;
pub(crate) const TYPE_ZONE: usize = 3;

/// A linear layer `y = x Wᵀ + b`, `Wᵀ` (`k × n`) packed for [`super::kernels::Gemm`] and `b`
/// padded like it.
#[derive(Debug)]
pub(crate) struct Linear {
    pub w_p: Vec<f32>,
    pub b: Vec<f32>,
    pub n: usize,
}

#[derive(Debug)]
pub(crate) struct Norm {
    pub gain: Vec<f32>,
    pub bias: Vec<f32>,
}

/// Feature standardisation `(x − mean) / std`.
#[derive(Debug)]
pub(crate) struct Standardize {
    mean: Vec<f32>,
    std: Vec<f32>,
}

impl Standardize {
    fn new(s: &Stats) -> Standardize {
        Standardize {
            mean: s.mean.clone(),
            std: s.std.clone(),
        }
    }

    pub fn apply(&self, x: &mut [f32]) {
        for ((v, m), s) in x.iter_mut().zip(&self.mean).zip(&self.std) {
            *v = (*v - m) / s;
        }
    }
}

#[derive(Debug)]
pub(crate) struct Block {
    pub ln1: Norm,
    pub qkv: Linear,
    pub proj: Linear,
    pub ln2: Norm,
    pub fc1: Linear,
    pub fc2: Linear,
}

#[derive(Debug)]
pub(crate) struct Weights {
    pub d: usize,
    pub heads: usize,
    pub mlp: usize,
    pub vocab: usize,
    pub max_objects: usize,
    pub max_zones: usize,
    pub readout: Vec<f32>,
    pub lang_embed: Vec<f32>,
    pub lang_pos: Vec<f32>,
    pub type_embed: Vec<f32>,
    pub slot_embed: Vec<f32>,
    pub proprio_in: Linear,
    pub object_in: Linear,
    pub zone_in: Linear,
    pub blocks: Vec<Block>,
    pub ln_out: Norm,
    /// The rows of the action head for the chunk's first action.
    pub action_head: Linear,
    /// The success logit from the second readout token.
    pub value_head: Linear,
    /// The first action's log standard deviations, clamped as the network clamps them.
    pub log_std: [f32; ACTION_DIM],
    pub proprio_norm: Standardize,
    pub object_norm: Standardize,
    pub zone_norm: Standardize,
    pub actions: Stats,
}

impl Weights {
    pub fn from_policy(policy: &Policy) -> Result<Weights> {
        let vars = policy.vs.variables();
        let get = |name: &str| param(&vars, name).and_then(host);
        let m = &policy.featurizer.model;
        let d = m.d_model as usize;
        let block = |i: usize| -> Result<Block> {
            let p = format!("block{i}");
            Ok(Block {
                ln1: norm(&vars, &format!("{p}.ln1"))?,
                qkv: linear(&vars, &format!("{p}.qkv"), None)?,
                proj: linear(&vars, &format!("{p}.proj"), None)?,
                ln2: norm(&vars, &format!("{p}.ln2"))?,
                fc1: linear(&vars, &format!("{p}.fc1"), None)?,
                fc2: linear(&vars, &format!("{p}.fc2"), None)?,
            })
        };
        let n = &policy.normalizer;
        Ok(Weights {
            d,
            heads: m.heads as usize,
            mlp: m.mlp_ratio as usize,
            vocab: policy.featurizer.tokenizer.vocab_size() as usize,
            max_objects: m.max_objects as usize,
            max_zones: m.max_zones as usize,
            readout: get("readout")?,
            lang_embed: get("lang_embed.weight")?,
            lang_pos: get("lang_pos")?,
            type_embed: get("type_embed")?,
            slot_embed: get("slot_embed")?,
            proprio_in: linear(&vars, "proprio_in", None)?,
            object_in: linear(&vars, "object_in", None)?,
            zone_in: linear(&vars, "zone_in", None)?,
            blocks: (0..m.depth as usize).map(block).collect::<Result<_>>()?,
            ln_out: norm(&vars, "ln_out")?,
            action_head: linear(&vars, "action_head", Some(ACTION_DIM))?,
            value_head: linear(&vars, "value_head", None)?,
            log_std: first_log_std(&get("log_std")?)?,
            proprio_norm: Standardize::new(&n.proprio),
            object_norm: Standardize::new(&n.objects),
            zone_norm: Standardize::new(&n.zones),
            actions: n.actions.clone(),
        })
    }

    pub fn type_row(&self, kind: usize) -> &[f32] {
        &self.type_embed[kind * self.d..(kind + 1) * self.d]
    }
}

fn first_log_std(all: &[f32]) -> Result<[f32; ACTION_DIM]> {
    let first = all.get(..ACTION_DIM).ok_or_else(|| {
        PolicyError::config(
            "log_std",
            format!("has {} entries, fewer than an action", all.len()),
        )
    })?;
    let mut out = [0.0; ACTION_DIM];
    for (o, v) in out.iter_mut().zip(first) {
        *o = v.clamp(LOG_STD_MIN as f32, LOG_STD_MAX as f32);
    }
    Ok(out)
}

fn host(t: &Tensor) -> Result<Vec<f32>> {
    let flat = t
        .to_device(Device::Cpu)
        .to_kind(Kind::Float)
        .contiguous()
        .flatten(0, -1);
    Ok(Vec::<f32>::try_from(&flat)?)
}

/// The parameter called `key`.
fn param<'a>(vars: &'a HashMap<String, Tensor>, key: &str) -> Result<&'a Tensor> {
    vars.get(key)
        .ok_or_else(|| PolicyError::config(key, "missing from the policy's parameters"))
}

fn norm(vars: &HashMap<String, Tensor>, name: &str) -> Result<Norm> {
    let get = |field: &str| param(vars, &format!("{name}.{field}")).and_then(host);
    Ok(Norm {
        gain: get("weight")?,
        bias: get("bias")?,
    })
}

/// The layer `name`, transposed; `rows`: keep only the first outputs.
fn linear(vars: &HashMap<String, Tensor>, name: &str, rows: Option<usize>) -> Result<Linear> {
    let key = format!("{name}.weight");
    let w = param(vars, &key)?;
    let (n_all, k) = match w.size()[..] {
        [n, k] => (n as usize, k as usize),
        _ => return Err(PolicyError::config(&key, "is not a matrix")),
    };
    let n = rows.unwrap_or(n_all).min(n_all);
    let w = host(w)?;
    let b_key = format!("{name}.bias");
    let b = param(vars, &b_key).and_then(host)?;
    if b.len() < n {
        return Err(PolicyError::config(
            &b_key,
            format!("has {} entries, the weight has {n_all} rows", b.len()),
        ));
    }
    let mut w_t = vec![0.0; k * n];
    for c in 0..n {
        for kk in 0..k {
            w_t[kk * n + c] = w[c * k + kk];
        }
    }
    Ok(Linear {
        w_p: pack(&w_t, k, n),
        b: pad_bias(&b[..n]),
        n,
    })
}
