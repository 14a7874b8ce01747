//! One code path from simulator observations to network inputs, shared by training data and
//! inference: `Featurizer` turns an `Observation` into an `ObsRow` (raw units), rows collate into
//! an `ObsBatch`, and `Normalizer` standardises it with dataset statistics saved in the
//! checkpoint.

use serde::{Deserialize, Serialize};
use tch::{Device, Tensor};

use crate::config::{ModelConfig, ObsMode};
use crate::error::{PolicyError, Result};
use crate::features::{self, ACTION_DIM, OBJECT_DIM, ZONE_DIM};
use crate::model::ObsBatch;
use crate::tokenizer::{Tokenizer, PAD_ID};
use sim::state::Observation;
use sim::task::TaskSpec;

/// One observation's features, before normalisation.
#[derive(Clone, Debug, PartialEq)]
pub struct ObsRow {
    pub lang: Vec<i64>,
    pub proprio: Vec<f32>,
    /// `max_objects × OBJECT_DIM` (zero rows where absent) and validity.
    pub objects: Vec<f32>,
    pub object_valid: Vec<bool>,
    pub zones: Vec<f32>,
    pub zone_valid: Vec<bool>,
    /// One `4 × H × W` plane stack per model camera.
    pub images: Vec<Vec<f32>>,
}

/// Builds rows for one model.
#[derive(Clone, Debug)]
pub struct Featurizer {
    pub model: ModelConfig,
    pub tokenizer: Tokenizer,
    /// For each model camera, its index in the simulator's camera list.
    pub camera_indices: Vec<usize>,
    /// Per-camera (height, width).
    pub image_hw: Vec<(i64, i64)>,
    pub proprio_dim: usize,
}

impl Featurizer {
    /// Checks the simulator's cameras against the model's (rgbd mode).
    pub fn new(
        model: &ModelConfig,
        tokenizer: Tokenizer,
        sim: &sim::SimConfig,
        dof: usize,
    ) -> Result<Featurizer> {
        let mut camera_indices = Vec::new();
        let mut image_hw = Vec::new();
        if model.obs == ObsMode::Rgbd {
            for name in &model.cameras {
                let i = sim
                    .cameras
                    .iter()
                    .position(|c| &c.name == name)
                    .ok_or_else(|| {
                        PolicyError::config(
                            "cameras",
                            format!("camera `{name}` is not in the simulator config's cameras"),
                        )
                    })?;
                let spec = &sim.cameras[i].spec;
                camera_indices.push(i);
                image_hw.push((i64::from(spec.height), i64::from(spec.width)));
            }
        }
        Ok(Featurizer {
            model: model.clone(),
            tokenizer,
            camera_indices,
            image_hw,
            proprio_dim: features::proprio_dim(dof),
        })
    }

    pub fn row(&self, obs: &Observation, task: &TaskSpec) -> Result<ObsRow> {
        let m = &self.model;
        let mut row = ObsRow {
            lang: self
                .tokenizer
                .encode(&task.instruction, m.max_lang_tokens as usize),
            proprio: features::proprio(obs, task),
            objects: Vec::new(),
            object_valid: Vec::new(),
            zones: Vec::new(),
            zone_valid: Vec::new(),
            images: Vec::new(),
        };
        if row.proprio.len() != self.proprio_dim {
            return Err(PolicyError::Data(format!(
                "observation has {} proprioception features, the model expects {} (different robot?)",
                row.proprio.len(),
                self.proprio_dim
            )));
        }
        match m.obs {
            ObsMode::State => {
                let objects = features::objects(obs, task);
                let zones = features::zones(obs, task);
                if objects.len() > m.max_objects as usize || zones.len() > m.max_zones as usize {
                    return Err(PolicyError::Data(format!(
                        "task `{}` has {} objects and {} zones; the model has {} and {} slots",
                        task.name,
                        objects.len(),
                        zones.len(),
                        m.max_objects,
                        m.max_zones
                    )));
                }
                fill(
                    &mut row.objects,
                    &mut row.object_valid,
                    &objects,
                    m.max_objects,
                );
                fill(&mut row.zones, &mut row.zone_valid, &zones, m.max_zones);
            }
            ObsMode::Rgbd => {
                for (&i, &(h, w)) in self.camera_indices.iter().zip(&self.image_hw) {
                    let frame = obs.images.get(i).ok_or_else(|| {
                        PolicyError::Data(format!(
                            "observation has {} camera images, the model reads camera #{i}",
                            obs.images.len()
                        ))
                    })?;
                    if i64::from(frame.height) != h || i64::from(frame.width) != w {
                        return Err(PolicyError::Data(format!(
                            "camera #{i} image is {}×{}, the model expects {w}×{h}",
                            frame.width, frame.height
                        )));
                    }
                    let mut planes = Vec::with_capacity((4 * h * w) as usize);
                    features::push_image(frame, &mut planes);
                    row.images.push(planes);
                }
            }
        }
        Ok(row)
    }

    /// Stacks rows into CPU tensors (unnormalised). Trailing padding that no row uses is left
    /// out (instruction tokens past the longest instruction, object / zone slots past the most
    /// any row fills): the network masks padding, so its output is the same, for less compute.
    pub fn collate(&self, rows: &[&ObsRow]) -> ObsBatch {
        let b = rows.len() as i64;
        let m = &self.model;
        let used =
            |f: &dyn Fn(&ObsRow) -> usize| rows.iter().map(|r| f(r)).max().unwrap_or(0).max(1);
        let lang_w = used(&|r| r.lang.iter().take_while(|t| **t != PAD_ID).count());
        let objects_w = used(&|r| r.object_valid.iter().take_while(|v| **v).count());
        let zones_w = used(&|r| r.zone_valid.iter().take_while(|v| **v).count());
        let cat_f = |f: &dyn Fn(&ObsRow) -> &[f32]| {
            let flat: Vec<f32> = rows.iter().flat_map(|r| f(r).iter().copied()).collect();
            Tensor::from_slice(&flat)
        };
        let cat_b = |f: &dyn Fn(&ObsRow) -> &[bool]| {
            let flat: Vec<bool> = rows.iter().flat_map(|r| f(r).iter().copied()).collect();
            Tensor::from_slice(&flat)
        };
        let lang: Vec<i64> = rows
            .iter()
            .flat_map(|r| r.lang[..lang_w].iter().copied())
            .collect();
        let state = m.obs == ObsMode::State;
        let (od, zd) = (OBJECT_DIM, ZONE_DIM);
        ObsBatch {
            lang: Tensor::from_slice(&lang).view([b, lang_w as i64]),
            proprio: cat_f(&|r| &r.proprio).view([b, self.proprio_dim as i64]),
            objects: state.then(|| {
                (
                    cat_f(&|r| &r.objects[..objects_w * od]).view([b, objects_w as i64, od as i64]),
                    cat_b(&|r| &r.object_valid[..objects_w]).view([b, objects_w as i64]),
                )
            }),
            zones: state.then(|| {
                (
                    cat_f(&|r| &r.zones[..zones_w * zd]).view([b, zones_w as i64, zd as i64]),
                    cat_b(&|r| &r.zone_valid[..zones_w]).view([b, zones_w as i64]),
                )
            }),
            images: self
                .image_hw
                .iter()
                .enumerate()
                .map(|(i, &(h, w))| cat_f(&|r| &r.images[i]).view([b, 4, h, w]))
                .collect(),
        }
    }
}

fn fill<const N: usize>(dst: &mut Vec<f32>, valid: &mut Vec<bool>, src: &[[f32; N]], slots: i64) {
    for s in 0..slots as usize {
        match src.get(s) {
            Some(r) => {
                dst.extend_from_slice(r);
                valid.push(true);
            }
            None => {
                dst.extend(std::iter::repeat_n(0.0, N));
                valid.push(false);
            }
        }
    }
}

/// Mean and standard deviation per feature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub mean: Vec<f32>,
    pub std: Vec<f32>,
}

/// Standard deviations below this are treated as this (constant features stay finite).
const MIN_STD: f32 = 1e-3;

impl Stats {
    /// Statistics of `rows` (each `dim` long) where `keep` is true.
    pub fn fit(values: &[f32], dim: usize, keep: Option<&[bool]>) -> Stats {
        let mut sum = vec![0.0f64; dim];
        let mut sq = vec![0.0f64; dim];
        let mut n = 0.0f64;
        for (i, row) in values.chunks_exact(dim).enumerate() {
            if keep.is_some_and(|k| !k[i]) {
                continue;
            }
            n += 1.0;
            for (j, v) in row.iter().enumerate() {
                sum[j] += f64::from(*v);
                sq[j] += f64::from(*v) * f64::from(*v);
            }
        }
        let n = n.max(1.0);
        let mean: Vec<f32> = sum.iter().map(|s| (s / n) as f32).collect();
        let std = sq
            .iter()
            .zip(&mean)
            .map(|(s, m)| ((s / n - f64::from(*m).powi(2)).max(0.0).sqrt() as f32).max(MIN_STD))
            .collect();
        Stats { mean, std }
    }

    /// Identity statistics.
    pub fn identity(dim: usize) -> Stats {
        Stats {
            mean: vec![0.0; dim],
            std: vec![1.0; dim],
        }
    }

    fn tensors(&self, device: Device) -> (Tensor, Tensor) {
        (
            Tensor::from_slice(&self.mean).to_device(device),
            Tensor::from_slice(&self.std).to_device(device),
        )
    }

    pub fn normalize(&self, x: &Tensor) -> Tensor {
        let (m, s) = self.tensors(x.device());
        (x - m) / s
    }

    pub fn denormalize(&self, x: &Tensor) -> Tensor {
        let (m, s) = self.tensors(x.device());
        x * s + m
    }
}

/// Dataset statistics for every continuous input and for the actions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Normalizer {
    pub proprio: Stats,
    pub objects: Stats,
    pub zones: Stats,
    pub actions: Stats,
}

impl Normalizer {
    pub fn identity(proprio_dim: usize) -> Normalizer {
        Normalizer {
            proprio: Stats::identity(proprio_dim),
            objects: Stats::identity(OBJECT_DIM),
            zones: Stats::identity(ZONE_DIM),
            actions: Stats::identity(ACTION_DIM),
        }
    }

    /// The batch with continuous features standardised (images are already in [-0.5, 0.5]).
    pub fn apply(&self, batch: &ObsBatch) -> ObsBatch {
        let pair = |p: &Option<(Tensor, Tensor)>, s: &Stats| {
            p.as_ref()
                .map(|(x, valid)| (s.normalize(x), valid.shallow_clone()))
        };
        ObsBatch {
            lang: batch.lang.shallow_clone(),
            proprio: self.proprio.normalize(&batch.proprio),
            objects: pair(&batch.objects, &self.objects),
            zones: pair(&batch.zones, &self.zones),
            images: batch.images.iter().map(Tensor::shallow_clone).collect(),
        }
    }

    /// Checks every statistic has the dimension the model expects.
    pub fn check(&self, proprio_dim: usize) -> Result<()> {
        let dims = [
            ("proprio", &self.proprio, proprio_dim),
            ("objects", &self.objects, OBJECT_DIM),
            ("zones", &self.zones, ZONE_DIM),
            ("actions", &self.actions, ACTION_DIM),
        ];
        for (name, s, dim) in dims {
            if s.mean.len() != dim || s.std.len() != dim {
                return Err(PolicyError::config(
                    format!("normalizer.{name}"),
                    format!(
                        "has {} / {} entries, expected {dim}",
                        s.mean.len(),
                        s.std.len()
                    ),
                ));
            }
            if s.std.iter().chain(&s.mean).any(|v| !v.is_finite())
                || s.std.iter().any(|v| *v <= 0.0)
            {
                return Err(PolicyError::config(
                    format!("normalizer.{name}"),
                    "has a non-finite mean or a non-positive std",
                ));
            }
        }
        Ok(())
    }
}
