//! Replay inputs: episode store files and directories, run directories holding a raw and a
//! refined store, the episode to draw and its raw/refined counterpart.

use std::path::{Path, PathBuf};

use crate::episode::Episode;
use crate::error::{Result, SimError};
use crate::store::{self, EntryKind, EpisodeFile, SkippedFile};

/// Sub-directories of a run directory holding raw episodes.
pub const RAW_DIRS: [&str; 1] = ["raw"];
/// Sub-directories of a run directory holding refined (golden) episodes.
pub const REFINED_DIRS: [&str; 2] = ["golden", "refined"];
/// The producer name the refiner writes into its files' headers.
pub const REFINER_PRODUCER: &str = "refiner";

/// Which form the episodes of an input are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputRole {
    /// As recorded by a policy, explorer or scripted controller.
    Raw,
    /// Golden demonstrations written by the refiner.
    Refined,
}

impl InputRole {
    /// `raw` or `refined` (entity names and messages).
    pub fn label(self) -> &'static str {
        match self {
            InputRole::Raw => "raw",
            InputRole::Refined => "refined",
        }
    }

    fn other(self) -> InputRole {
        match self {
            InputRole::Raw => InputRole::Refined,
            InputRole::Refined => InputRole::Raw,
        }
    }
}

/// The episodes of one input (an episode file or a store directory).
#[derive(Debug)]
pub struct EpisodeSet {
    pub path: PathBuf,
    pub role: InputRole,
    /// Verified files, in store order.
    pub files: Vec<EpisodeFile>,
    /// Files of a directory that failed verification and were not used.
    pub skipped: Vec<SkippedFile>,
}

impl EpisodeSet {
    /// Every episode with its file, in file order then episode order.
    pub fn episodes(&self) -> impl Iterator<Item = (&EpisodeFile, &Episode)> {
        self.files
            .iter()
            .flat_map(|f| f.episodes.iter().map(move |e| (f, e)))
    }

    pub fn episode_count(&self) -> usize {
        self.files.iter().map(|f| f.episodes.len()).sum()
    }
}

fn problem(path: &Path, problem: impl Into<String>) -> SimError {
    SimError::Replay {
        context: format!("input `{}`", path.display()),
        problem: problem.into(),
    }
}

/// Whether `dir` holds episode store files (not only sub-directories).
fn is_store_dir(dir: &Path) -> Result<bool> {
    Ok(store::list_dir(dir)?
        .iter()
        .any(|(kind, _)| !matches!(kind, EntryKind::Temp)))
}

/// Reads one input, a store file or a store directory, verifying every file. `role` is guessed
/// from the files' producer when not given (the refiner's files are refined). Errors name the
/// file: missing, unreadable, corrupted (a directory whose every file fails lists each problem),
/// or without episodes.
pub fn load_input(path: &Path, role: Option<InputRole>) -> Result<EpisodeSet> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => problem(path, "does not exist"),
        _ => problem(path, format!("cannot read: {e}")),
    })?;
    let (files, skipped) = if meta.is_dir() {
        let scan = store::read_dir(path)?;
        if scan.files.is_empty() {
            let why = if scan.skipped.is_empty() {
                format!(
                    "holds no episode store files (`*.{}`); a run directory holds `raw/` and \
                     `golden/` store directories",
                    store::EXTENSION
                )
            } else {
                let list: Vec<String> = scan.skipped.iter().map(|s| s.to_string()).collect();
                format!("no readable episode store file: {}", list.join("; "))
            };
            return Err(problem(path, why));
        }
        (scan.files, scan.skipped)
    } else {
        (vec![store::read_file(path)?], Vec::new())
    };
    let role = role.unwrap_or_else(|| {
        let refined = files.iter().all(|f| f.header.producer == REFINER_PRODUCER);
        if refined {
            InputRole::Refined
        } else {
            InputRole::Raw
        }
    });
    let set = EpisodeSet {
        path: path.to_path_buf(),
        role,
        files,
        skipped,
    };
    if set.episode_count() == 0 {
        return Err(problem(path, "holds no episodes"));
    }
    Ok(set)
}

/// The raw and/or refined episodes of one replay (at least one of them).
#[derive(Debug)]
pub struct ReplayInputs {
    pub raw: Option<EpisodeSet>,
    pub refined: Option<EpisodeSet>,
}

impl ReplayInputs {
    /// The set drawn in full: the refined one when both are given.
    pub fn primary(&self) -> Option<&EpisodeSet> {
        self.refined.as_ref().or(self.raw.as_ref())
    }

    fn of_role(&self, role: InputRole) -> Option<&EpisodeSet> {
        match role {
            InputRole::Raw => self.raw.as_ref(),
            InputRole::Refined => self.refined.as_ref(),
        }
    }

    /// Files skipped in any input.
    pub fn skipped(&self) -> impl Iterator<Item = &SkippedFile> {
        self.raw
            .iter()
            .chain(&self.refined)
            .flat_map(|s| s.skipped.iter())
    }
}

/// Resolves the inputs: either one `input` (an episode file, a store directory, or a run
/// directory with `raw/` and `golden/` or `refined/` store directories), or explicit `raw` and/or
/// `refined` files or directories.
pub fn resolve_inputs(
    input: Option<&Path>,
    raw: Option<&Path>,
    refined: Option<&Path>,
) -> Result<ReplayInputs> {
    let (raw, refined) = match (input, raw, refined) {
        (None, None, None) => {
            return Err(SimError::Replay {
                context: "inputs".into(),
                problem: "give an episode file, a store or run directory, or --raw/--refined"
                    .into(),
            })
        }
        (Some(path), None, None) => return resolve_single(path),
        (Some(path), _, _) => {
            return Err(problem(
                path,
                "give either one input or --raw/--refined, not both",
            ))
        }
        (None, raw, refined) => (raw, refined),
    };
    Ok(ReplayInputs {
        raw: raw
            .map(|p| load_input(p, Some(InputRole::Raw)))
            .transpose()?,
        refined: refined
            .map(|p| load_input(p, Some(InputRole::Refined)))
            .transpose()?,
    })
}

fn resolve_single(path: &Path) -> Result<ReplayInputs> {
    if path.is_dir() && !is_store_dir(path)? {
        let find = |names: &[&str]| names.iter().map(|n| path.join(n)).find(|p| p.is_dir());
        let (raw, refined) = (find(&RAW_DIRS), find(&REFINED_DIRS));
        if raw.is_some() || refined.is_some() {
            return Ok(ReplayInputs {
                raw: raw
                    .map(|p| load_input(&p, Some(InputRole::Raw)))
                    .transpose()?,
                refined: refined
                    .map(|p| load_input(&p, Some(InputRole::Refined)))
                    .transpose()?,
            });
        }
    }
    let set = load_input(path, None)?;
    Ok(match set.role {
        InputRole::Raw => ReplayInputs {
            raw: Some(set),
            refined: None,
        },
        InputRole::Refined => ReplayInputs {
            raw: None,
            refined: Some(set),
        },
    })
}

/// The episode to draw, where it came from, and its counterpart in the other input.
#[derive(Clone, Copy, Debug)]
pub struct Selection<'a> {
    pub role: InputRole,
    pub file: &'a EpisodeFile,
    pub episode: &'a Episode,
    /// The same source episode (task name and seed) in the other input.
    pub companion: Option<(InputRole, &'a Episode)>,
}

impl Selection<'_> {
    /// Why no counterpart was drawn although the other input was given.
    pub fn missing_companion(&self, inputs: &ReplayInputs) -> Option<String> {
        let other = inputs.of_role(self.role.other())?;
        self.companion.is_none().then(|| {
            format!(
                "no {} episode of task `{}` with seed {} in `{}`: its TCP path is not drawn",
                other.role.label(),
                self.episode.task.name,
                self.episode.seed,
                other.path.display()
            )
        })
    }
}

/// Episode `k` (in file order, then episode order) of the primary input, and its counterpart.
pub fn select_episode(inputs: &ReplayInputs, k: usize) -> Result<Selection<'_>> {
    let Some(primary) = inputs.primary() else {
        return Err(SimError::Replay {
            context: "inputs".into(),
            problem: "no input given".into(),
        });
    };
    let count = primary.episode_count();
    let Some((file, episode)) = primary.episodes().nth(k) else {
        return Err(problem(
            &primary.path,
            format!(
                "--episode {k} is out of range: it holds {count} episodes (0..={})",
                count.saturating_sub(1)
            ),
        ));
    };
    let companion = inputs.of_role(primary.role.other()).and_then(|other| {
        other
            .episodes()
            .find(|(_, e)| e.task.name == episode.task.name && e.seed == episode.seed)
            .map(|(_, e)| (other.role, e))
    });
    Ok(Selection {
        role: primary.role,
        file,
        episode,
        companion,
    })
}
