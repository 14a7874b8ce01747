//! The VLA network: a pre-LayerNorm transformer over [ACT, VAL] readout tokens, instruction
//! tokens, one proprioception token and either object/zone tokens (state mode) or image patch
//! tokens plus a keypoint token per camera (rgbd mode, `vision.rs`). Heads: a Gaussian over the next `chunk` actions
//! (normalised units, learned state-independent log-std) and a success logit.

use tch::nn;
use tch::{Kind, Tensor};

use crate::config::{ModelConfig, ObsMode};
use crate::features::{ACTION_DIM, OBJECT_DIM, ZONE_DIM};
use crate::vision::CameraEncoder;

/// Bounds on the learned log standard deviation of the action Gaussian.
pub const LOG_STD_MIN: f64 = -5.0;
pub const LOG_STD_MAX: f64 = 1.0;

/// One batch of (normalised) observations on the model's device.
#[derive(Debug)]
pub struct ObsBatch {
    /// Instruction token ids [B, L] (int64, 0 = padding).
    pub lang: Tensor,
    /// Proprioception [B, P].
    pub proprio: Tensor,
    /// State mode: objects [B, No, OBJECT_DIM] with validity [B, No] (bool).
    pub objects: Option<(Tensor, Tensor)>,
    /// State mode: zones [B, Nz, ZONE_DIM] with validity [B, Nz] (bool).
    pub zones: Option<(Tensor, Tensor)>,
    /// Rgbd mode: one [B, 4, H, W] tensor per camera.
    pub images: Vec<Tensor>,
}

impl ObsBatch {
    pub fn batch_size(&self) -> i64 {
        self.proprio.size()[0]
    }

    /// The same batch on `device` (non-blocking from pinned memory where possible).
    pub fn to_device(&self, device: tch::Device) -> ObsBatch {
        let mv = |t: &Tensor| t.to_device_(device, t.kind(), true, false);
        let pair = |p: &Option<(Tensor, Tensor)>| p.as_ref().map(|(a, b)| (mv(a), mv(b)));
        ObsBatch {
            lang: mv(&self.lang),
            proprio: mv(&self.proprio),
            objects: pair(&self.objects),
            zones: pair(&self.zones),
            images: self.images.iter().map(mv).collect(),
        }
    }
}

/// What the network outputs for a batch.
#[derive(Debug)]
pub struct PolicyOutput {
    /// Action means [B, H, A] (normalised units).
    pub mean: Tensor,
    /// Log standard deviations [H, A], clamped to [LOG_STD_MIN, LOG_STD_MAX].
    pub log_std: Tensor,
    /// Success logits [B].
    pub value_logit: Tensor,
}

#[derive(Debug)]
struct Block {
    ln1: nn::LayerNorm,
    qkv: nn::Linear,
    proj: nn::Linear,
    ln2: nn::LayerNorm,
    fc1: nn::Linear,
    fc2: nn::Linear,
    heads: i64,
}

impl Block {
    fn new(p: nn::Path, c: &ModelConfig) -> Block {
        let d = c.d_model;
        Block {
            ln1: nn::layer_norm(&p / "ln1", vec![d], Default::default()),
            qkv: nn::linear(&p / "qkv", d, 3 * d, Default::default()),
            proj: nn::linear(&p / "proj", d, d, Default::default()),
            ln2: nn::layer_norm(&p / "ln2", vec![d], Default::default()),
            fc1: nn::linear(&p / "fc1", d, c.mlp_ratio * d, Default::default()),
            fc2: nn::linear(&p / "fc2", c.mlp_ratio * d, d, Default::default()),
            heads: c.heads,
        }
    }

    /// `mask`: [B, 1, 1, T] bool, true where a key may be attended to.
    fn forward(&self, x: &Tensor, mask: &Tensor) -> Tensor {
        let (b, t, d) = x.size3().unwrap_or((0, 0, 0));
        let dh = d / self.heads;
        let qkv = x
            .apply(&self.ln1)
            .apply(&self.qkv)
            .view([b, t, 3, self.heads, dh])
            .permute([2, 0, 3, 1, 4]);
        let (q, k, v) = (qkv.get(0), qkv.get(1), qkv.get(2));
        let attn =
            Tensor::scaled_dot_product_attention(&q, &k, &v, Some(mask), 0.0, false, None, false);
        let x = x + attn.transpose(1, 2).reshape([b, t, d]).apply(&self.proj);
        let h = x
            .apply(&self.ln2)
            .apply(&self.fc1)
            .gelu("tanh")
            .apply(&self.fc2);
        x + h
    }
}

/// The network. Parameters live in the `VarStore` it was built from.
#[derive(Debug)]
pub struct VlaNet {
    config: ModelConfig,
    readout: Tensor,
    lang_embed: nn::Embedding,
    lang_pos: Tensor,
    proprio_in: nn::Linear,
    type_embed: Tensor,
    object_in: Option<nn::Linear>,
    zone_in: Option<nn::Linear>,
    slot_embed: Option<Tensor>,
    cameras: Vec<CameraEncoder>,
    blocks: Vec<Block>,
    ln_out: nn::LayerNorm,
    action_head: nn::Linear,
    value_head: nn::Linear,
    log_std: Tensor,
}

/// Token types (added to every token of that kind).
const TYPE_LANG: i64 = 0;
const TYPE_PROPRIO: i64 = 1;
const TYPE_OBJECT: i64 = 2;
const TYPE_ZONE: i64 = 3;
const TYPE_IMAGE: i64 = 4;
const TYPES: i64 = 5;

impl VlaNet {
    /// Builds the network under `p`. `image_hw`: per-camera image size (rgbd mode).
    pub fn new(
        p: &nn::Path,
        config: &ModelConfig,
        vocab_size: i64,
        proprio_dim: i64,
        image_hw: &[(i64, i64)],
    ) -> VlaNet {
        let d = config.d_model;
        let init = |s: f64| nn::Init::Randn {
            mean: 0.0,
            stdev: s,
        };
        let state = config.obs == ObsMode::State;
        let cameras = if state {
            Vec::new()
        } else {
            image_hw
                .iter()
                .enumerate()
                .map(|(i, hw)| CameraEncoder::new(&(p / format!("cam{i}")), config, *hw))
                .collect()
        };
        let slots = config.max_objects + config.max_zones;
        VlaNet {
            readout: p.var("readout", &[2, d], init(0.02)),
            lang_embed: nn::embedding(p / "lang_embed", vocab_size, d, Default::default()),
            lang_pos: p.var("lang_pos", &[config.max_lang_tokens, d], init(0.02)),
            proprio_in: nn::linear(p / "proprio_in", proprio_dim, d, Default::default()),
            type_embed: p.var("type_embed", &[TYPES, d], init(0.02)),
            object_in: state
                .then(|| nn::linear(p / "object_in", OBJECT_DIM as i64, d, Default::default())),
            zone_in: state
                .then(|| nn::linear(p / "zone_in", ZONE_DIM as i64, d, Default::default())),
            slot_embed: state.then(|| p.var("slot_embed", &[slots.max(1), d], init(0.02))),
            cameras,
            blocks: (0..config.depth)
                .map(|i| Block::new(p / format!("block{i}"), config))
                .collect(),
            ln_out: nn::layer_norm(p / "ln_out", vec![d], Default::default()),
            action_head: nn::linear(
                p / "action_head",
                d,
                config.chunk * ACTION_DIM as i64,
                Default::default(),
            ),
            value_head: nn::linear(p / "value_head", d, 1, Default::default()),
            log_std: p.var(
                "log_std",
                &[config.chunk, ACTION_DIM as i64],
                nn::Init::Const(-1.0),
            ),
            config: config.clone(),
        }
    }

    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    fn typed(&self, x: Tensor, kind: i64) -> Tensor {
        x + self.type_embed.get(kind)
    }

    pub fn forward(&self, obs: &ObsBatch) -> PolicyOutput {
        let b = obs.batch_size();
        let d = self.config.d_model;
        let device = obs.proprio.device();
        let ones = |n: i64| Tensor::ones([b, n], (Kind::Bool, device));
        let mut tokens = vec![self.readout.unsqueeze(0).expand([b, 2, d], true)];
        let mut valid = vec![ones(2)];
        let lang_len = obs.lang.size()[1].min(self.config.max_lang_tokens);
        let lang = obs.lang.narrow(1, 0, lang_len);
        let lang_tokens = lang.apply(&self.lang_embed) + self.lang_pos.narrow(0, 0, lang_len);
        let lang_valid = lang.ne(crate::tokenizer::PAD_ID);
        if self.config.pool_lang {
            tokens.push(self.typed(pooled(&lang_tokens, &lang_valid), TYPE_LANG));
            valid.push(ones(1));
        } else {
            tokens.push(self.typed(lang_tokens, TYPE_LANG));
            valid.push(lang_valid);
        }
        tokens.push(self.typed(
            obs.proprio.apply(&self.proprio_in).unsqueeze(1),
            TYPE_PROPRIO,
        ));
        valid.push(ones(1));
        // Objects take slots 0.., zones slots max_objects..; a batch may leave out trailing
        // unused slots (`Featurizer::collate`).
        let mut entities =
            |set: &Option<(Tensor, Tensor)>, layer: &Option<nn::Linear>, first, ty| {
                if let (Some((x, mask)), Some(layer), Some(slots)) = (set, layer, &self.slot_embed)
                {
                    let n = x.size()[1];
                    let t = x.apply(layer) + slots.narrow(0, first, n);
                    tokens.push(self.typed(t, ty));
                    valid.push(mask.shallow_clone());
                }
            };
        entities(&obs.objects, &self.object_in, 0, TYPE_OBJECT);
        entities(
            &obs.zones,
            &self.zone_in,
            self.config.max_objects,
            TYPE_ZONE,
        );
        for (encoder, image) in self.cameras.iter().zip(&obs.images) {
            let (patches, keypoints) = encoder.forward(image);
            let n = patches.size()[1];
            tokens.push(self.typed(patches, TYPE_IMAGE));
            tokens.push(self.typed(keypoints, TYPE_IMAGE));
            valid.push(ones(n + 1));
        }
        let mut x = Tensor::cat(&tokens, 1);
        let mask = Tensor::cat(&valid, 1).view([b, 1, 1, -1]);
        for block in &self.blocks {
            x = block.forward(&x, &mask);
        }
        let x = x.apply(&self.ln_out);
        let mean =
            x.select(1, 0)
                .apply(&self.action_head)
                .view([b, self.config.chunk, ACTION_DIM as i64]);
        let value_logit = x.select(1, 1).apply(&self.value_head).squeeze_dim(1);
        PolicyOutput {
            mean,
            log_std: self.log_std.clamp(LOG_STD_MIN, LOG_STD_MAX),
            value_logit,
        }
    }

    /// Projects the log-std parameter back into [LOG_STD_MIN, LOG_STD_MAX] (call after every
    /// optimiser step). The forward pass clamps it, and a clamped element gets no gradient: one
    /// that an update pushed past the bound would stay there for good, however wrong (on a
    /// skill whose actions never varied, e.g. the gripper during reach, that made the NLL of
    /// the next skill's data explode).
    pub fn project_log_std(&self) {
        tch::no_grad(|| {
            let _ = self
                .log_std
                .shallow_clone()
                .clamp_(LOG_STD_MIN, LOG_STD_MAX);
        });
    }
}

/// The mean of `tokens` ([b, n, d]) over the positions `valid` ([b, n]) marks, as one token
/// ([b, 1, d]); zeros where none is valid.
fn pooled(tokens: &Tensor, valid: &Tensor) -> Tensor {
    let w = valid.to_kind(tokens.kind()).unsqueeze(-1);
    let count = w.sum_dim_intlist(1, true, tokens.kind()).clamp_min(1.0);
    (tokens * &w).sum_dim_intlist(1, true, tokens.kind()) / count
}
