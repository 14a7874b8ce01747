//! Training data: recorded episodes → per-step samples (observation features, the next `chunk`
//! action labels with validity, the episode's outcome), held as CPU tensors, normalised with
//! statistics fitted on the data, and sampled into mini-batches.

use std::sync::Arc;

use robots::Manipulator;
use tch::{Device, Kind, Tensor};

use crate::error::{PolicyError, Result};
use crate::features::{self, ACTION_DIM};
use crate::model::ObsBatch;
use crate::obs::{Featurizer, Normalizer, ObsRow, Stats};
use sim::{Episode, Scene, SimConfig};

/// Picks an entity table and its validity out of a row.
type SlotView = dyn Fn(&ObsRow) -> (&[f32], &[bool]);

/// Samples before normalisation.
#[derive(Clone, Debug, Default)]
pub struct RawSamples {
    pub rows: Vec<ObsRow>,
    /// `[n, chunk, ACTION_DIM]` flattened, and `[n, chunk]` validity (1.0 / 0.0).
    pub actions: Vec<f32>,
    pub action_valid: Vec<f32>,
    /// Episode outcome per sample (value-head label), and whether its actions are imitated.
    pub success: Vec<f32>,
    pub imitate: Vec<f32>,
}

impl RawSamples {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Adds every step of `episode`. Actions are imitated only from successful episodes; every
    /// step trains the value head. Rgbd models need the episode's recorded images.
    pub fn push_episode(
        &mut self,
        episode: &Episode,
        featurizer: &Featurizer,
        robot: &Arc<Manipulator>,
        sim: &Arc<SimConfig>,
    ) -> Result<()> {
        self.push_episode_from(episode, 0, featurizer, robot, sim)
    }

    /// As `push_episode`, imitating only the steps from `imitate_from` on: an episode another
    /// controller began (the policy) and an expert finished, whose expert actions label the
    /// states the policy led to (expert relabelling).
    pub fn push_episode_from(
        &mut self,
        episode: &Episode,
        imitate_from: usize,
        featurizer: &Featurizer,
        robot: &Arc<Manipulator>,
        sim: &Arc<SimConfig>,
    ) -> Result<()> {
        let chunk = featurizer.model.chunk as usize;
        let n = episode.steps.len();
        if n == 0 {
            return Ok(());
        }
        let needs_images = !featurizer.camera_indices.is_empty();
        if needs_images && episode.steps.iter().any(|s| s.images.is_empty()) {
            return Err(PolicyError::Data(format!(
                "episode {} (seed {}) has no recorded camera images; an rgbd model needs them \
                 (record with cameras enabled)",
                episode.index, episode.seed
            )));
        }
        let mut labels = Vec::with_capacity(n);
        for (t, step) in episode.steps.iter().enumerate() {
            let before = match t {
                0 => &robot.home_q_rad,
                _ => &episode.steps[t - 1].q_target_rad,
            };
            labels.push(features::action_label(
                &step.action,
                robot,
                before,
                &step.q_target_rad,
                &sim.action_scale,
            ));
        }
        let success = f32::from(u8::from(episode.outcome.success));
        for t in 0..n {
            let images = match (needs_images, t) {
                (false, _) => Vec::new(),
                (true, 0) => Scene::new(robot.clone(), &episode.task, sim.clone())?.render_all(),
                (true, _) => episode.steps[t - 1].images.clone(),
            };
            let obs = features::observation_before(episode, t, &robot.home_q_rad, images);
            self.rows.push(featurizer.row(&obs, &episode.task)?);
            for h in 0..chunk {
                match labels.get(t + h) {
                    Some(a) => {
                        self.actions.extend_from_slice(a);
                        self.action_valid.push(1.0);
                    }
                    None => {
                        self.actions.extend(std::iter::repeat_n(0.0, ACTION_DIM));
                        self.action_valid.push(0.0);
                    }
                }
            }
            self.success.push(success);
            self.imitate
                .push(if t >= imitate_from { success } else { 0.0 });
        }
        Ok(())
    }

    /// Statistics of the inputs and of the imitated actions.
    pub fn fit_normalizer(&self, featurizer: &Featurizer) -> Normalizer {
        let cat = |f: &SlotView| {
            let mut values = Vec::new();
            let mut keep = Vec::new();
            for r in &self.rows {
                let (v, k) = f(r);
                values.extend_from_slice(v);
                keep.extend_from_slice(k);
            }
            (values, keep)
        };
        let proprio: Vec<f32> = self.rows.iter().flat_map(|r| r.proprio.clone()).collect();
        let (objects, object_keep) = cat(&|r| (&r.objects, &r.object_valid));
        let (zones, zone_keep) = cat(&|r| (&r.zones, &r.zone_valid));
        let chunk = featurizer.model.chunk as usize;
        let action_keep: Vec<bool> = self
            .action_valid
            .iter()
            .enumerate()
            .map(|(i, v)| *v > 0.0 && self.imitate[i / chunk] > 0.0)
            .collect();
        Normalizer {
            proprio: Stats::fit(&proprio, featurizer.proprio_dim, None),
            objects: Stats::fit(&objects, features::OBJECT_DIM, Some(&object_keep)),
            zones: Stats::fit(&zones, features::ZONE_DIM, Some(&zone_keep)),
            actions: Stats::fit(&self.actions, ACTION_DIM, Some(&action_keep)),
        }
    }
}

/// Normalised samples as CPU tensors.
#[derive(Debug)]
pub struct Dataset {
    pub obs: ObsBatch,
    /// [N, chunk, ACTION_DIM] normalised actions and [N, chunk] validity.
    pub actions: Tensor,
    pub action_valid: Tensor,
    pub success: Tensor,
    pub imitate: Tensor,
    pub len: i64,
    /// Per-row sampling weights (`with_group_shares`); uniform when `None`.
    pub weights: Option<Tensor>,
}

/// One training mini-batch on the training device.
#[derive(Debug)]
pub struct Batch {
    pub obs: ObsBatch,
    pub actions: Tensor,
    pub action_valid: Tensor,
    pub success: Tensor,
    pub imitate: Tensor,
}

impl Dataset {
    pub fn new(raw: &RawSamples, featurizer: &Featurizer, norm: &Normalizer) -> Result<Dataset> {
        if raw.is_empty() {
            return Err(PolicyError::Data("no samples".into()));
        }
        let n = raw.len() as i64;
        let chunk = featurizer.model.chunk;
        let rows: Vec<&ObsRow> = raw.rows.iter().collect();
        let obs = norm.apply(&featurizer.collate(&rows));
        let actions = norm
            .actions
            .normalize(&Tensor::from_slice(&raw.actions).view([n, chunk, ACTION_DIM as i64]));
        Ok(Dataset {
            obs,
            actions,
            action_valid: Tensor::from_slice(&raw.action_valid).view([n, chunk]),
            success: Tensor::from_slice(&raw.success),
            imitate: Tensor::from_slice(&raw.imitate),
            len: n,
            weights: None,
        })
    }

    /// Draws rows so that group `g` (`groups[row]`) fills `shares[g]` / Σ shares of each batch
    /// on average, however many rows it has (e.g. one group per skill: a skill with few
    /// demonstrations is not drowned by one with many).
    pub fn with_group_shares(mut self, groups: &[usize], shares: &[f64]) -> Result<Dataset> {
        if groups.len() as i64 != self.len {
            return Err(PolicyError::Data(format!(
                "{} group ids for {} rows",
                groups.len(),
                self.len
            )));
        }
        let mut rows = vec![0usize; shares.len()];
        for &g in groups {
            match rows.get_mut(g) {
                Some(r) => *r += 1,
                None => {
                    return Err(PolicyError::Data(format!(
                        "group {g} has no share ({} shares)",
                        shares.len()
                    )))
                }
            }
        }
        if shares.iter().any(|s| !(s.is_finite() && *s >= 0.0))
            || !groups.iter().any(|&g| shares[g] > 0.0)
        {
            return Err(PolicyError::Data(
                "group shares must be finite, >= 0, and not all 0".into(),
            ));
        }
        let weights: Vec<f64> = groups.iter().map(|&g| shares[g] / rows[g] as f64).collect();
        self.weights = Some(Tensor::from_slice(&weights));
        Ok(self)
    }

    /// Rows `index` (int64 CPU tensor) moved to `device`; on CUDA through pinned memory with a
    /// non-blocking copy.
    pub fn gather(&self, index: &Tensor, device: Device) -> Batch {
        let take = |t: &Tensor| {
            let rows = t.index_select(0, index);
            if device.is_cuda() {
                rows.pin_memory(device)
                    .to_device_(device, rows.kind(), true, false)
            } else {
                rows
            }
        };
        let pair = |p: &Option<(Tensor, Tensor)>| p.as_ref().map(|(a, b)| (take(a), take(b)));
        Batch {
            obs: ObsBatch {
                lang: take(&self.obs.lang),
                proprio: take(&self.obs.proprio),
                objects: pair(&self.obs.objects),
                zones: pair(&self.obs.zones),
                images: self.obs.images.iter().map(take).collect(),
            },
            actions: take(&self.actions),
            action_valid: take(&self.action_valid),
            success: take(&self.success),
            imitate: take(&self.imitate),
        }
    }

    /// `n` row indices drawn with replacement, uniformly or by the rows' weights (torch's
    /// generator: seed it with `tch::manual_seed`).
    pub fn draw(&self, n: i64) -> Tensor {
        match &self.weights {
            Some(w) => w.multinomial(n, true),
            None => Tensor::randint(self.len, [n], (Kind::Int64, Device::Cpu)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dataset(n: i64) -> Dataset {
        let zeros = |shape: &[i64]| Tensor::zeros(shape, (Kind::Float, Device::Cpu));
        Dataset {
            obs: ObsBatch {
                lang: Tensor::zeros([n, 1], (Kind::Int64, Device::Cpu)),
                proprio: zeros(&[n, 1]),
                objects: None,
                zones: None,
                images: Vec::new(),
            },
            actions: zeros(&[n, 1, ACTION_DIM as i64]),
            action_valid: zeros(&[n, 1]),
            success: zeros(&[n]),
            imitate: zeros(&[n]),
            len: n,
            weights: None,
        }
    }

    #[test]
    fn group_shares_set_each_groups_fraction_of_the_draws() {
        tch::manual_seed(0);
        // 90 rows of group 0, 10 of group 1; group 1 gets twice group 0's share.
        let groups: Vec<usize> = (0..100).map(|i| usize::from(i >= 90)).collect();
        let data = dataset(100)
            .with_group_shares(&groups, &[1.0, 2.0])
            .unwrap();
        let draws = 30_000;
        let index = Vec::<i64>::try_from(data.draw(draws)).unwrap();
        let from_small = index.iter().filter(|&&i| i >= 90).count() as f64 / draws as f64;
        assert!((from_small - 2.0 / 3.0).abs() < 0.02, "{from_small}");
        // Uniform without shares.
        let index = Vec::<i64>::try_from(dataset(100).draw(draws)).unwrap();
        let from_small = index.iter().filter(|&&i| i >= 90).count() as f64 / draws as f64;
        assert!((from_small - 0.1).abs() < 0.02, "{from_small}");
    }

    #[test]
    fn bad_group_shares_are_errors() {
        assert!(dataset(3).with_group_shares(&[0, 1], &[1.0, 1.0]).is_err());
        assert!(dataset(2).with_group_shares(&[0, 2], &[1.0, 1.0]).is_err());
        assert!(dataset(2).with_group_shares(&[0, 1], &[0.0, 0.0]).is_err());
        assert!(dataset(2)
            .with_group_shares(&[0, 1], &[f64::NAN, 1.0])
            .is_err());
    }
}
