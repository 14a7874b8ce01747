//! The run directory: `config.json`, `state.json` (the commit point, SHA-256 checked),
//! `metrics.jsonl`, `checkpoints/gen-NNN/`, `golden/gen-NNN/<skill>/`, `evaluations/gen-NNN.json`,
//! `signals/gen-NNN.json` and the reports. Every file is written to a temporary sibling, synced
//! and renamed into place; on resume, anything a killed generation left beyond the last
//! committed one is removed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sim::Episode;

use super::config::EvolveConfig;
use super::state::{GenerationRecord, RunState, STATE_FORMAT, STATE_VERSION};
use crate::error::{Result, SkillsError};

#[derive(Clone, Debug)]
pub struct RunDir {
    pub root: PathBuf,
}

/// `state.json`: the state and the SHA-256 of its canonical JSON.
#[derive(Serialize, Deserialize)]
struct Sealed<T> {
    sha256: String,
    state: T,
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes `bytes` to `path` atomically (temporary sibling, fsync, rename, directory fsync).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| SkillsError::io(dir, e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let mut file = fs::File::create(&temp).map_err(|e| SkillsError::io(&temp, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| SkillsError::io(&temp, e))?;
    fs::rename(&temp, path).map_err(|e| SkillsError::io(path, e))?;
    if let Ok(d) = fs::File::open(dir) {
        // Best effort: persist the rename.
        let _ = d.sync_all();
    }
    Ok(())
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = fs::read_to_string(path).map_err(|e| SkillsError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| SkillsError::run(path, format!("not valid: {e}")))
}

fn to_json<T: Serialize>(path: &Path, value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec_pretty(value)
        .map_err(|e| SkillsError::run(path, format!("cannot encode: {e}")))
}

/// Each relabelled episode's first expert step, beside the episode store that holds them.
pub const TAKEOVER_FILE: &str = "takeover.json";

pub fn generation_name(generation: usize) -> String {
    format!("gen-{generation:03}")
}

fn generation_of(name: &str) -> Option<usize> {
    let stem = name.strip_prefix("gen-")?;
    stem.split('.').next()?.parse().ok()
}

impl RunDir {
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.json")
    }
    pub fn state_path(&self) -> PathBuf {
        self.root.join("state.json")
    }
    pub fn metrics_path(&self) -> PathBuf {
        self.root.join("metrics.jsonl")
    }
    pub fn checkpoint(&self, generation: usize) -> PathBuf {
        self.root
            .join("checkpoints")
            .join(generation_name(generation))
    }
    /// The trained policy of a generation that rolled back, kept for inspection and replay
    /// (`coevolve eval --policy … --out`); the run never continues from it.
    pub fn rejected(&self, generation: usize) -> PathBuf {
        self.root.join("rejected").join(generation_name(generation))
    }
    pub fn golden(&self, generation: usize, skill: &str) -> PathBuf {
        self.root
            .join("golden")
            .join(generation_name(generation))
            .join(skill)
    }
    /// Failed policy rollouts (value-head negatives) of `skill` from `generation`.
    pub fn failures(&self, generation: usize, skill: &str) -> PathBuf {
        self.root
            .join("failures")
            .join(generation_name(generation))
            .join(skill)
    }
    /// Expert-relabelled episodes of `skill` from `generation` (`evolve::relabel`): an episode
    /// store plus `takeover.json`, each episode's first expert step, in store order.
    pub fn relabelled(&self, generation: usize, skill: &str) -> PathBuf {
        self.root
            .join("relabelled")
            .join(generation_name(generation))
            .join(skill)
    }
    pub fn evaluation(&self, generation: usize) -> PathBuf {
        self.root
            .join("evaluations")
            .join(format!("{}.json", generation_name(generation)))
    }
    pub fn signals(&self, generation: usize) -> PathBuf {
        self.root
            .join("signals")
            .join(format!("{}.json", generation_name(generation)))
    }

    /// A run directory holds a committed state.
    pub fn exists(&self) -> bool {
        self.state_path().is_file()
    }

    pub fn write_config(&self, cfg: &EvolveConfig) -> Result<()> {
        let path = self.config_path();
        write_atomic(&path, &to_json(&path, cfg)?)
    }

    pub fn read_config(&self) -> Result<EvolveConfig> {
        let cfg: EvolveConfig = read_json(&self.config_path())?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn write_json<T: Serialize>(&self, path: &Path, value: &T) -> Result<()> {
        write_atomic(path, &to_json(path, value)?)
    }

    /// Commits a generation: the state, sealed with its SHA-256.
    pub fn commit(&self, state: &RunState) -> Result<()> {
        let path = self.state_path();
        let canonical = serde_json::to_vec(state)
            .map_err(|e| SkillsError::run(&path, format!("cannot encode: {e}")))?;
        let sealed = Sealed {
            sha256: hex_sha256(&canonical),
            state,
        };
        write_atomic(&path, &to_json(&path, &sealed)?)
    }

    pub fn read_state(&self) -> Result<RunState> {
        let path = self.state_path();
        let sealed: Sealed<RunState> = read_json(&path)?;
        let canonical = serde_json::to_vec(&sealed.state)
            .map_err(|e| SkillsError::run(&path, format!("cannot encode: {e}")))?;
        if hex_sha256(&canonical) != sealed.sha256 {
            return Err(SkillsError::run(
                &path,
                "sha256 does not match the content (the state file is corrupt)",
            ));
        }
        let state = sealed.state;
        if state.format != STATE_FORMAT || state.version != STATE_VERSION {
            return Err(SkillsError::run(
                &path,
                format!(
                    "format `{}` version {} is not {STATE_FORMAT} version {STATE_VERSION}",
                    state.format, state.version
                ),
            ));
        }
        Ok(state)
    }

    /// The committed generations' records (a record of an uncommitted generation is dropped).
    pub fn read_metrics(&self, completed: usize) -> Result<Vec<GenerationRecord>> {
        let path = self.metrics_path();
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(SkillsError::io(&path, e)),
        };
        let mut records = Vec::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let record: GenerationRecord = serde_json::from_str(line).map_err(|e| {
                SkillsError::run(
                    &path,
                    format!("line {}: not a generation record: {e}", i + 1),
                )
            })?;
            if record.generation < completed {
                records.push(record);
            }
        }
        if records.len() != completed {
            return Err(SkillsError::run(
                &path,
                format!(
                    "{} records for {completed} committed generations",
                    records.len()
                ),
            ));
        }
        Ok(records)
    }

    /// Rewrites `metrics.jsonl` with `records` (atomically; it stays small).
    pub fn write_metrics(&self, records: &[GenerationRecord]) -> Result<()> {
        let path = self.metrics_path();
        let mut bytes = Vec::new();
        for r in records {
            serde_json::to_writer(&mut bytes, r)
                .map_err(|e| SkillsError::run(&path, format!("cannot encode: {e}")))?;
            bytes.push(b'\n');
        }
        write_atomic(&path, &bytes)
    }

    /// Removes what generations at or after `completed` left behind (a run killed mid-way).
    pub fn discard_uncommitted(&self, completed: usize) -> Result<usize> {
        let mut removed = 0;
        // Temporaries of interrupted atomic writes in the run directory itself.
        if let Ok(entries) = fs::read_dir(&self.root) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && name.contains(".tmp-") {
                    let path = entry.path();
                    fs::remove_file(&path).map_err(|e| SkillsError::io(&path, e))?;
                    removed += 1;
                }
            }
        }
        for sub in [
            "checkpoints",
            "rejected",
            "golden",
            "failures",
            "relabelled",
            "evaluations",
            "signals",
        ] {
            let dir = self.root.join(sub);
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let stale = match generation_of(&name) {
                    Some(g) => g >= completed,
                    // Temporaries of an interrupted atomic write.
                    None => name.starts_with('.'),
                };
                if stale {
                    let path = entry.path();
                    let result = if path.is_dir() {
                        fs::remove_dir_all(&path)
                    } else {
                        fs::remove_file(&path)
                    };
                    result.map_err(|e| SkillsError::io(&path, e))?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// Golden episodes of `skill` from every committed generation, oldest first.
    pub fn read_golden(&self, skill: &str, completed: usize) -> Result<Vec<Episode>> {
        self.read_episodes(completed, "golden data", |g| self.golden(g, skill))
    }

    /// Failed policy rollouts of `skill` from every committed generation, oldest first.
    pub fn read_failures(&self, skill: &str, completed: usize) -> Result<Vec<Episode>> {
        self.read_episodes(completed, "failed rollouts", |g| self.failures(g, skill))
    }

    /// Expert-relabelled episodes of `skill` from every committed generation, oldest first,
    /// each with its first expert step.
    pub fn read_relabelled(&self, skill: &str, completed: usize) -> Result<Vec<(Episode, usize)>> {
        let mut out = Vec::new();
        for g in 0..completed {
            let dir = self.relabelled(g, skill);
            if !dir.is_dir() {
                continue;
            }
            let episodes = read_store(&dir, "relabelled episodes")?;
            let path = dir.join(TAKEOVER_FILE);
            let takeover: Vec<usize> = read_json(&path)?;
            if takeover.len() != episodes.len() {
                return Err(SkillsError::run(
                    &path,
                    format!(
                        "{} takeover steps for {} episodes",
                        takeover.len(),
                        episodes.len()
                    ),
                ));
            }
            out.extend(episodes.into_iter().zip(takeover));
        }
        Ok(out)
    }

    fn read_episodes(
        &self,
        completed: usize,
        what: &str,
        dir_of: impl Fn(usize) -> PathBuf,
    ) -> Result<Vec<Episode>> {
        let mut episodes = Vec::new();
        for g in 0..completed {
            let dir = dir_of(g);
            if dir.is_dir() {
                episodes.extend(read_store(&dir, what)?);
            }
        }
        Ok(episodes)
    }
}

/// Every episode of the store in `dir`, in file order; a file that fails verification is an
/// error (the loop's own data is never silently skipped).
fn read_store(dir: &Path, what: &str) -> Result<Vec<Episode>> {
    let scan = sim::store::read_dir(dir)?;
    if let Some(bad) = scan.skipped.first() {
        return Err(SkillsError::run(
            &bad.path,
            format!("{what} failed verification: {}", bad.problem),
        ));
    }
    Ok(scan.files.into_iter().flat_map(|f| f.episodes).collect())
}
