//! Model and training configuration (serde structs, saved with every checkpoint), with the
//! `tiny` / `small` / `base` presets.

use serde::{Deserialize, Serialize};

use crate::error::{PolicyError, Result};

/// What the policy sees besides proprioception and the instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObsMode {
    /// Privileged object and zone state (poses, velocities, zone boxes): fast CPU runs.
    State,
    /// RGB-D images of the configured cameras; no privileged state.
    Rgbd,
}

impl ObsMode {
    pub fn parse(text: &str) -> Result<ObsMode> {
        match text {
            "state" => Ok(ObsMode::State),
            "rgbd" => Ok(ObsMode::Rgbd),
            other => Err(PolicyError::config(
                "obs",
                format!("unknown observation mode `{other}` (expected state or rgbd)"),
            )),
        }
    }
}

/// The network's shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    /// Preset name this config started from (informational).
    pub size: String,
    pub obs: ObsMode,
    /// Token width.
    pub d_model: i64,
    /// Transformer blocks.
    pub depth: i64,
    pub heads: i64,
    /// MLP hidden width = `mlp_ratio × d_model`.
    pub mlp_ratio: i64,
    /// Actions predicted per query (the action chunk H).
    pub chunk: i64,
    /// Instruction tokens kept (longer instructions are cut).
    pub max_lang_tokens: i64,
    /// The instruction enters the transformer as one token, the mean of its words' embeddings
    /// (each with its position's), instead of one token per word: half the tokens of a state
    /// policy, so training and inference cost about half (docs/policy.md). false (and
    /// checkpoints written before it existed): one token per word.
    #[serde(default)]
    pub pool_lang: bool,
    /// Object / zone slots in state mode (more are an error, fewer are masked).
    pub max_objects: i64,
    pub max_zones: i64,
    /// Cameras used in rgbd mode, by name from `SimConfig::cameras`.
    pub cameras: Vec<String>,
    /// Channels of the conv stem (rgbd mode).
    pub stem_channels: i64,
    /// Patch size after the stride-2 stem (an image of W×H gives (W/2/p)·(H/2/p) tokens).
    pub patch: i64,
}

impl ModelConfig {
    /// A named preset: `tiny` (tests, seconds on CPU), `small` (CPU demos), `base` (GPU).
    pub fn preset(size: &str, obs: ObsMode) -> Result<ModelConfig> {
        let (d_model, depth, heads) = match size {
            "tiny" => (64, 2, 4),
            "small" => (128, 4, 4),
            "base" => (384, 8, 8),
            other => {
                return Err(PolicyError::config(
                    "size",
                    format!("unknown model size `{other}` (expected tiny, small or base)"),
                ))
            }
        };
        Ok(ModelConfig {
            size: size.to_owned(),
            obs,
            d_model,
            depth,
            heads,
            mlp_ratio: 4,
            chunk: 8,
            max_lang_tokens: 12,
            pool_lang: true,
            max_objects: 3,
            max_zones: 2,
            cameras: vec!["front".to_owned()],
            stem_channels: if size == "base" { 64 } else { 32 },
            patch: 4,
        })
    }

    pub fn validate(&self) -> Result<()> {
        let positive = |v: i64, field: &str| {
            if v > 0 {
                Ok(())
            } else {
                Err(PolicyError::config(field, format!("must be > 0, got {v}")))
            }
        };
        positive(self.d_model, "d_model")?;
        positive(self.depth, "depth")?;
        positive(self.heads, "heads")?;
        positive(self.mlp_ratio, "mlp_ratio")?;
        positive(self.chunk, "chunk")?;
        positive(self.max_lang_tokens, "max_lang_tokens")?;
        positive(self.patch, "patch")?;
        positive(self.stem_channels, "stem_channels")?;
        if self.d_model % self.heads != 0 {
            return Err(PolicyError::config(
                "heads",
                format!(
                    "d_model {} is not divisible by {} heads",
                    self.d_model, self.heads
                ),
            ));
        }
        if self.obs == ObsMode::Rgbd && self.cameras.is_empty() {
            return Err(PolicyError::config(
                "cameras",
                "rgbd mode needs at least one camera",
            ));
        }
        Ok(())
    }
}

/// Optimiser and schedule settings shared by the trainers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OptimConfig {
    pub steps: usize,
    pub batch_size: usize,
    pub lr: f64,
    pub weight_decay: f64,
    /// Linear warm-up steps before the cosine decay.
    pub warmup_steps: usize,
    /// Final learning rate as a fraction of `lr`.
    pub min_lr_fraction: f64,
    /// Global gradient-norm clip.
    pub grad_clip: f64,
    pub seed: u64,
}

impl Default for OptimConfig {
    fn default() -> Self {
        OptimConfig {
            steps: 2000,
            batch_size: 256,
            lr: 1e-3,
            weight_decay: 1e-4,
            warmup_steps: 100,
            min_lr_fraction: 0.05,
            grad_clip: 1.0,
            seed: 0,
        }
    }
}

impl OptimConfig {
    pub fn validate(&self) -> Result<()> {
        if self.steps == 0 {
            return Err(PolicyError::config("steps", "must be > 0"));
        }
        if self.batch_size == 0 {
            return Err(PolicyError::config("batch_size", "must be > 0"));
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return Err(PolicyError::config(
                "lr",
                format!("must be > 0, got {}", self.lr),
            ));
        }
        if !(self.grad_clip.is_finite() && self.grad_clip > 0.0) {
            return Err(PolicyError::config("grad_clip", "must be > 0"));
        }
        if !(0.0..=1.0).contains(&self.min_lr_fraction) {
            return Err(PolicyError::config("min_lr_fraction", "must be in [0, 1]"));
        }
        Ok(())
    }

    /// Learning rate at `step`: linear warm-up, then cosine decay to `min_lr_fraction × lr`.
    pub fn lr_at(&self, step: usize) -> f64 {
        if step < self.warmup_steps {
            return self.lr * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let span = self.steps.saturating_sub(self.warmup_steps).max(1) as f64;
        let progress = ((step - self.warmup_steps) as f64 / span).min(1.0);
        let cosine = 0.5 * (1.0 + (std::f64::consts::PI * progress).cos());
        self.lr * (self.min_lr_fraction + (1.0 - self.min_lr_fraction) * cosine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate_and_unknown_size_is_named() {
        for size in ["tiny", "small", "base"] {
            ModelConfig::preset(size, ObsMode::State)
                .unwrap()
                .validate()
                .unwrap();
        }
        let err = ModelConfig::preset("huge", ObsMode::State).unwrap_err();
        assert!(err.to_string().contains("huge"));
    }

    #[test]
    fn a_config_written_before_pooling_keeps_a_token_per_word() {
        let mut json =
            serde_json::to_value(ModelConfig::preset("small", ObsMode::State).unwrap()).unwrap();
        assert_eq!(json["pool_lang"], true);
        json.as_object_mut().unwrap().remove("pool_lang");
        let old: ModelConfig = serde_json::from_value(json).unwrap();
        assert!(!old.pool_lang);
    }

    #[test]
    fn schedule_warms_up_then_decays() {
        let c = OptimConfig {
            steps: 100,
            warmup_steps: 10,
            lr: 1.0,
            min_lr_fraction: 0.1,
            ..OptimConfig::default()
        };
        assert!((c.lr_at(0) - 0.1).abs() < 1e-12);
        assert!((c.lr_at(9) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(10) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(55) - 0.55).abs() < 1e-12);
        assert!((c.lr_at(100) - 0.1).abs() < 1e-12);
    }
}
