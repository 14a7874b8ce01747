//! The episode store: recorded episodes on disk, many per file, written atomically and read back
//! verified.
//!
//! A store is a directory of files `episodes-000000.cep`, `episodes-000001.cep`, … Each file is
//! one batch written by one [`EpisodeWriter`] (one producer: the policy or explorer that ran the
//! episodes) and holds every field the simulator records ([`Episode`], camera images included).
//! Not here: choosing what to keep (the refiner) or replay.
//!
//! File layout, version 1 (integers little-endian):
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `COEVEP01` |
//! | 4 | `u32` format version (1) |
//! | 4 | `u32` header length *H* |
//! | *H* | [`FileHeader`] as JSON: version, producer, creation time, episode and step counts, robot, the [`SimConfig`] |
//! | 8 | `u64` body length *B* |
//! | *B* | the episodes, postcard-encoded (f64s as raw bits; see `wire.rs`) |
//! | 32 | SHA-256 of every byte before it |
//!
//! Writing: the whole file is encoded in memory, written to a hidden temporary file in the same
//! directory (`.episodes-000007.cep.tmp-<pid>-<n>`), fsynced, published under its final name
//! with a hard link (which, unlike `rename`, never replaces a file another writer published
//! first: the number is bumped instead; where the filesystem has no hard links it falls back to
//! `rename`), the temporary name removed and the directory fsynced. A crash leaves at most a
//! temporary file, which readers never take for an episode file. Numbering continues after the
//! highest number present, so appending runs never overwrite.
//!
//! Reading ([`read_file`], [`read_dir`]): one read of the whole file, then magic, version,
//! lengths and checksum are verified before anything is decoded, so a truncated, corrupted or
//! foreign file is an error naming the file and the problem. [`read_dir`] skips such files (and
//! reports each one in [`StoreScan::skipped`]) and reads the others, in file-number order.

mod bench;
mod format;
mod wire;
mod writer;

use std::fs;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::config::SimConfig;
use crate::episode::Episode;
use crate::error::{Result, SimError};

pub use bench::{bench, StoreBench};
pub use format::{decode_file, encode_file, CHECKSUM_LEN, FORMAT_VERSION, MAGIC};
pub use writer::{file_name, EpisodeWriter};

/// Episodes in the store's body codec (no header, no checksum): what a farm job's reply
/// carries; every number exact.
pub fn encode_episodes(episodes: &[Episode]) -> std::result::Result<Vec<u8>, StoreProblem> {
    wire::encode_body(episodes)
}

/// Inverse of [`encode_episodes`].
pub fn decode_episodes(bytes: &[u8]) -> std::result::Result<Vec<Episode>, StoreProblem> {
    wire::decode_body(bytes)
}

/// Extension of episode files.
pub const EXTENSION: &str = "cep";
/// File names are `{FILE_PREFIX}{number:06}.{EXTENSION}`.
pub const FILE_PREFIX: &str = "episodes-";

/// What is wrong with one store file (carried by [`SimError::Store`] with the file's path).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreProblem {
    #[error("{op}: {error}")]
    Io {
        op: &'static str,
        error: std::io::Error,
    },
    #[error("not an episode store file: starts with `{found}`, not `COEVEP01`")]
    BadMagic { found: String },
    #[error("{}", version_message(*found, *supported))]
    UnsupportedVersion { found: u32, supported: u32 },
    #[error("truncated in the {part}: the file has {len} bytes, at least {needed} needed")]
    Truncated {
        part: &'static str,
        len: u64,
        needed: u64,
    },
    #[error("{extra} unexpected bytes after the checksum footer")]
    TrailingBytes { extra: u64 },
    #[error("corrupted: SHA-256 is {computed}, the footer says {stored}")]
    ChecksumMismatch { stored: String, computed: String },
    #[error("header: {0}")]
    Header(String),
    #[error("body: {0}")]
    Body(String),
    #[error("leftover temporary file of an interrupted write (not read)")]
    LeftoverTemp,
}

fn version_message(found: u32, supported: u32) -> String {
    if found > supported {
        format!(
            "format version {found} is newer than this build reads (version {supported}); \
             upgrade coevolve to read it"
        )
    } else {
        format!("format version {found} is not supported (this build reads version {supported})")
    }
}

impl StoreProblem {
    pub(crate) fn io(op: &'static str, error: std::io::Error) -> Self {
        StoreProblem::Io { op, error }
    }

    pub(crate) fn at(self, file: impl Into<PathBuf>) -> SimError {
        SimError::Store {
            file: file.into(),
            problem: self,
        }
    }
}

/// The JSON header of an episode file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileHeader {
    /// Equal to the binary version field ([`FORMAT_VERSION`]).
    pub format_version: u32,
    /// The policy or explorer that produced every episode of the file.
    pub producer: String,
    /// When the file was written (seconds since the Unix epoch).
    pub created_unix_s: u64,
    pub episode_count: usize,
    /// Recorded control steps over all episodes.
    pub step_count: usize,
    /// The robot's name, if the writer was told it ([`EpisodeWriter::with_robot_name`]).
    pub robot_name: Option<String>,
    /// The distinct `robot_model_hash`es of the episodes, in first-seen order.
    pub robot_model_hashes: Vec<String>,
    /// The simulator configuration the episodes ran under.
    pub sim_config: SimConfig,
}

impl FileHeader {
    /// The header describing `episodes`, stamped with the current time.
    pub fn new(
        producer: &str,
        sim_config: &SimConfig,
        robot_name: Option<&str>,
        episodes: &[Episode],
    ) -> Self {
        let mut robot_model_hashes: Vec<String> = Vec::new();
        for e in episodes {
            if !robot_model_hashes.contains(&e.robot_model_hash) {
                robot_model_hashes.push(e.robot_model_hash.clone());
            }
        }
        FileHeader {
            format_version: FORMAT_VERSION,
            producer: producer.to_owned(),
            created_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            episode_count: episodes.len(),
            step_count: episodes.iter().map(|e| e.steps.len()).sum(),
            robot_name: robot_name.map(str::to_owned),
            robot_model_hashes,
            sim_config: sim_config.clone(),
        }
    }
}

/// One verified episode file.
#[derive(Clone, Debug, PartialEq)]
pub struct EpisodeFile {
    pub path: PathBuf,
    /// Size of the file in bytes.
    pub byte_len: u64,
    pub header: FileHeader,
    pub episodes: Vec<Episode>,
}

/// A file [`read_dir`] did not use, and why.
#[derive(Debug)]
pub struct SkippedFile {
    pub path: PathBuf,
    pub problem: StoreProblem,
}

impl std::fmt::Display for SkippedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.path.display(), self.problem)
    }
}

/// Everything [`read_dir`] found in a store directory.
#[derive(Debug)]
pub struct StoreScan {
    pub dir: PathBuf,
    /// The verified files, in file-number order.
    pub files: Vec<EpisodeFile>,
    /// Files that were not used (truncated, corrupted, foreign, leftover temporaries), in
    /// file-name order.
    pub skipped: Vec<SkippedFile>,
}

/// An episode with where it came from.
#[derive(Clone, Copy, Debug)]
pub struct StoredEpisode<'a> {
    pub producer: &'a str,
    pub file: &'a Path,
    pub episode: &'a Episode,
}

impl StoreScan {
    /// All episodes of all verified files, in file order then episode order.
    pub fn episodes(&self) -> impl Iterator<Item = StoredEpisode<'_>> {
        self.files.iter().flat_map(|file| {
            file.episodes.iter().map(move |episode| StoredEpisode {
                producer: &file.header.producer,
                file: &file.path,
                episode,
            })
        })
    }

    pub fn episode_count(&self) -> usize {
        self.files.iter().map(|f| f.episodes.len()).sum()
    }

    /// Bytes of the verified files.
    pub fn byte_len(&self) -> u64 {
        self.files.iter().map(|f| f.byte_len).sum()
    }
}

/// Reads and verifies one episode file.
pub fn read_file(path: impl AsRef<Path>) -> Result<EpisodeFile> {
    let path = path.as_ref();
    read_file_problem(path).map_err(|problem| problem.at(path))
}

fn read_file_problem(path: &Path) -> Result<EpisodeFile, StoreProblem> {
    let bytes = fs::read(path).map_err(|e| StoreProblem::io("cannot read", e))?;
    decode_file(path, &bytes)
}

/// What a directory entry is to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum EntryKind {
    /// `episodes-NNNNNN.cep`, with its number.
    Numbered(u64),
    /// Another visible `*.cep` name (read, after the numbered ones).
    OtherEpisodeFile,
    /// A writer's temporary file.
    Temp,
}

/// Classifies a file name; `None` for names the store does not own (ignored).
pub(crate) fn classify(name: &str) -> Option<EntryKind> {
    if name.starts_with('.') {
        let temp = name.contains(&format!(".{EXTENSION}.tmp"));
        return temp.then_some(EntryKind::Temp);
    }
    let stem = name.strip_suffix(&format!(".{EXTENSION}"))?;
    let number = stem
        .strip_prefix(FILE_PREFIX)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok());
    Some(number.map_or(EntryKind::OtherEpisodeFile, EntryKind::Numbered))
}

/// The store's entries of `dir` (regular files only), sorted by kind, number and name.
pub(crate) fn list_dir(dir: &Path) -> Result<Vec<(EntryKind, PathBuf)>> {
    let entries = fs::read_dir(dir).map_err(|e| StoreProblem::io("cannot list", e).at(dir))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StoreProblem::io("cannot list", e).at(dir))?;
        let path = entry.path();
        let Some(kind) = entry.file_name().to_str().and_then(classify) else {
            continue;
        };
        if fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            found.push((kind, path));
        }
    }
    found.sort();
    Ok(found)
}

/// Reads every episode file of a store directory (in parallel), skipping and reporting the
/// ones that fail verification. Fails only if the directory itself cannot be listed.
pub fn read_dir(dir: impl AsRef<Path>) -> Result<StoreScan> {
    let dir = dir.as_ref();
    let entries = list_dir(dir)?;
    let results: Vec<(PathBuf, Result<EpisodeFile, StoreProblem>)> = entries
        .into_par_iter()
        .map(|(kind, path)| {
            let result = match kind {
                EntryKind::Temp => Err(StoreProblem::LeftoverTemp),
                _ => read_file_problem(&path),
            };
            (path, result)
        })
        .collect();
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for (path, result) in results {
        match result {
            Ok(file) => files.push(file),
            Err(problem) => skipped.push(SkippedFile { path, problem }),
        }
    }
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(StoreScan {
        dir: dir.to_path_buf(),
        files,
        skipped,
    })
}
