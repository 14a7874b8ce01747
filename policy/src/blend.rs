//! Weight-space interpolation of two policies of one architecture (WiSE-FT, Wortsman et al.,
//! "Robust fine-tuning of zero-shot models", 2022): a fine-tuned policy blended with the one it
//! started from often keeps what the start knew while keeping much of what fine-tuning added.
//! The loop uses it when training a new skill makes a mastered one regress.

use tch::Tensor;

use crate::error::{PolicyError, Result};
use crate::policy::Policy;

impl Policy {
    /// `alpha · self + (1 − alpha) · other`, weight by weight, under `self`'s normaliser:
    /// `other` is first renormalised to it (`Policy::renormalize`), so both sets of weights
    /// read and write the same units. `alpha` 1 gives `self`'s weights, 0 `other`'s (acting as
    /// `other` does). Both must have the same model configuration; the result keeps `self`'s
    /// tokenizer and metadata.
    pub fn blended_with(&self, other: &Policy, alpha: f64) -> Result<Policy> {
        if !(0.0..=1.0).contains(&alpha) {
            return Err(PolicyError::Config {
                field: "alpha".into(),
                problem: format!("blend weight {alpha} is outside [0, 1]"),
            });
        }
        if self.featurizer.model != other.featurizer.model {
            return Err(PolicyError::Config {
                field: "model".into(),
                problem: "cannot blend policies of different model configurations".into(),
            });
        }
        let mut base = other.frozen_copy()?;
        base.renormalize(self.normalizer.clone())?;
        let blended = self.frozen_copy()?;
        let base_vars = base.vs.variables();
        let vars = blended.vs.variables();
        if vars.len() != base_vars.len() {
            return Err(PolicyError::Config {
                field: "model".into(),
                problem: format!(
                    "cannot blend policies with {} and {} weight tensors",
                    vars.len(),
                    base_vars.len()
                ),
            });
        }
        tch::no_grad(|| -> Result<()> {
            for (name, var) in &vars {
                let old: &Tensor = base_vars.get(name).ok_or_else(|| PolicyError::Config {
                    field: "model".into(),
                    problem: format!("weight `{name}` is missing from the other policy"),
                })?;
                if old.size() != var.size() {
                    return Err(PolicyError::Config {
                        field: "model".into(),
                        problem: format!(
                            "weight `{name}` has shape {:?} here and {:?} in the other policy",
                            var.size(),
                            old.size()
                        ),
                    });
                }
                let mixed = var * alpha + old * (1.0 - alpha);
                var.shallow_clone().copy_(&mixed);
            }
            Ok(())
        })?;
        Ok(blended)
    }
}
