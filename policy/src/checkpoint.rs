//! Checkpoints: a directory with `model.safetensors` (the weights, loadable by Python's
//! `safetensors` package) and `policy.json` (architecture, tokenizer, normalisation, robot,
//! simulator settings, skills, code version and the weights' SHA-256). Written atomically: into
//! a temporary sibling directory that is renamed into place; a crash leaves the old checkpoint.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tch::{nn, Device, Tensor};

use crate::config::ModelConfig;
use crate::error::{PolicyError, Result};
use crate::obs::Normalizer;
use crate::policy::{Policy, PolicyMeta};
use crate::tokenizer::Tokenizer;

pub const FORMAT: &str = "coevolve-policy";
pub const FORMAT_VERSION: u32 = 1;
pub const WEIGHTS_FILE: &str = "model.safetensors";
pub const CONFIG_FILE: &str = "policy.json";

/// The contents of `policy.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointConfig {
    pub format: String,
    pub format_version: u32,
    pub code_version: String,
    pub model: ModelConfig,
    pub tokenizer: Tokenizer,
    pub normalizer: Normalizer,
    pub meta: PolicyMeta,
    /// Every weight: name → shape.
    pub tensors: Vec<(String, Vec<i64>)>,
    /// SHA-256 of `model.safetensors`.
    pub weights_sha256: String,
}

fn sha256_file(path: &Path) -> Result<String> {
    let bytes = fs::read(path).map_err(|e| PolicyError::io(path, e))?;
    Ok(format!("{:x}", Sha256::digest(&bytes)))
}

fn sync_file(path: &Path) -> Result<()> {
    fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| PolicyError::io(path, e))
}

fn named_tensors(vs: &nn::VarStore) -> Vec<(String, Tensor)> {
    let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    vars
}

/// Writes `policy` to directory `dir` (replacing an existing checkpoint there atomically).
pub fn save(policy: &Policy, dir: &Path) -> Result<()> {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(|e| PolicyError::io(&parent, e))?;
    let tmp = tempfile::Builder::new()
        .prefix(".policy-tmp-")
        .tempdir_in(&parent)
        .map_err(|e| PolicyError::io(&parent, e))?;
    let weights = tmp.path().join(WEIGHTS_FILE);
    let tensors: Vec<(String, Tensor)> = named_tensors(&policy.vs)
        .into_iter()
        .map(|(n, t)| (n, t.to_device(Device::Cpu).contiguous()))
        .collect();
    Tensor::write_safetensors(&tensors, &weights)?;
    sync_file(&weights)?;
    let config = CheckpointConfig {
        format: FORMAT.to_owned(),
        format_version: FORMAT_VERSION,
        code_version: env!("CARGO_PKG_VERSION").to_owned(),
        model: policy.featurizer.model.clone(),
        tokenizer: policy.featurizer.tokenizer.clone(),
        normalizer: policy.normalizer.clone(),
        meta: policy.meta.clone(),
        tensors: tensors.iter().map(|(n, t)| (n.clone(), t.size())).collect(),
        weights_sha256: sha256_file(&weights)?,
    };
    let json_path = tmp.path().join(CONFIG_FILE);
    let json = serde_json::to_vec_pretty(&config)
        .map_err(|e| PolicyError::checkpoint(dir, format!("serialising config: {e}")))?;
    let mut f = fs::File::create(&json_path).map_err(|e| PolicyError::io(&json_path, e))?;
    f.write_all(&json)
        .and_then(|()| f.sync_all())
        .map_err(|e| PolicyError::io(&json_path, e))?;
    drop(f);
    let staged = tmp.keep();
    // Move an existing checkpoint aside, put the new one in place, then drop the old one.
    let old = parent.join(format!(
        ".policy-old-{}-{}",
        std::process::id(),
        dir.file_name().and_then(|n| n.to_str()).unwrap_or("ckpt")
    ));
    let had_old = dir.exists();
    if had_old {
        fs::rename(dir, &old).map_err(|e| PolicyError::io(dir, e))?;
    }
    fs::rename(&staged, dir).map_err(|e| PolicyError::io(dir, e))?;
    if had_old {
        fs::remove_dir_all(&old).map_err(|e| PolicyError::io(&old, e))?;
    }
    if let Ok(d) = fs::File::open(&parent) {
        // Best effort: persist the renames.
        let _ = d.sync_all();
    }
    Ok(())
}

/// Reads and checks `policy.json` of checkpoint `dir`.
pub fn read_config(dir: &Path) -> Result<CheckpointConfig> {
    let path = dir.join(CONFIG_FILE);
    let text = fs::read_to_string(&path).map_err(|e| PolicyError::io(&path, e))?;
    let config: CheckpointConfig = serde_json::from_str(&text)
        .map_err(|e| PolicyError::checkpoint(&path, format!("invalid policy config: {e}")))?;
    if config.format != FORMAT {
        return Err(PolicyError::checkpoint(
            &path,
            format!("format is `{}`, expected `{FORMAT}`", config.format),
        ));
    }
    if config.format_version != FORMAT_VERSION {
        return Err(PolicyError::checkpoint(
            &path,
            format!(
                "format version {} is not supported (this build reads {FORMAT_VERSION})",
                config.format_version
            ),
        ));
    }
    config.model.validate()?;
    Ok(config)
}

/// Loads checkpoint `dir` onto `device`, checking the weights' hash, names and shapes.
pub fn load(dir: &Path, device: Device) -> Result<Policy> {
    let config = read_config(dir)?;
    let weights = dir.join(WEIGHTS_FILE);
    let actual = sha256_file(&weights)?;
    if actual != config.weights_sha256 {
        return Err(PolicyError::checkpoint(
            &weights,
            format!(
                "SHA-256 mismatch (file {actual}, policy.json says {}): the weights are corrupt \
                 or belong to another checkpoint",
                config.weights_sha256
            ),
        ));
    }
    let policy = Policy::build(
        &config.model,
        config.tokenizer.clone(),
        config.normalizer.clone(),
        config.meta.clone(),
        device,
        0,
    )
    .map_err(|e| PolicyError::checkpoint(dir.join(CONFIG_FILE), e.to_string()))?;
    let stored: HashMap<String, Tensor> = Tensor::read_safetensors(&weights)
        .map_err(|e| PolicyError::checkpoint(&weights, format!("unreadable safetensors: {e}")))?
        .into_iter()
        .collect();
    let mut vars = policy.vs.variables();
    for name in stored.keys() {
        if !vars.contains_key(name) {
            return Err(PolicyError::checkpoint(
                &weights,
                format!("unexpected tensor `{name}` (not part of the configured model)"),
            ));
        }
    }
    tch::no_grad(|| -> Result<()> {
        for (name, var) in vars.iter_mut() {
            let src = stored.get(name).ok_or_else(|| {
                PolicyError::checkpoint(&weights, format!("tensor `{name}` is missing"))
            })?;
            if src.size() != var.size() {
                return Err(PolicyError::checkpoint(
                    &weights,
                    format!(
                        "tensor `{name}` has shape {:?}, the model expects {:?}",
                        src.size(),
                        var.size()
                    ),
                ));
            }
            var.f_copy_(src)?;
        }
        Ok(())
    })?;
    Ok(policy)
}
