//! `EpisodeWriter`: batches of episodes into numbered files, atomically.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{encode_file, list_dir, EntryKind, FileHeader, StoreProblem, EXTENSION, FILE_PREFIX};
use crate::config::SimConfig;
use crate::episode::Episode;
use crate::error::Result;

/// How many taken numbers a write skips past before giving up.
const MAX_PUBLISH_ATTEMPTS: u64 = 10_000;

/// Distinguishes temporary files of one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The file name of store file `number`: `episodes-000123.cep`.
pub fn file_name(number: u64) -> String {
    format!("{FILE_PREFIX}{number:06}.{EXTENSION}")
}

/// Writes batches of episodes of one producer into a store directory.
#[derive(Debug)]
pub struct EpisodeWriter {
    dir: PathBuf,
    producer: String,
    config: SimConfig,
    robot_name: Option<String>,
    next_number: u64,
}

impl EpisodeWriter {
    /// A writer into `dir` (created if absent) for episodes of `producer` run under `config`.
    /// Its first file takes the number after the highest one already in `dir`.
    pub fn new(
        dir: impl Into<PathBuf>,
        producer: impl Into<String>,
        config: &SimConfig,
    ) -> Result<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir)
            .map_err(|e| StoreProblem::io("cannot create the store directory", e).at(&dir))?;
        let next_number = next_free_number(&dir)?;
        Ok(EpisodeWriter {
            dir,
            producer: producer.into(),
            config: config.clone(),
            robot_name: None,
            next_number,
        })
    }

    /// Records the robot's name in every file header.
    pub fn with_robot_name(mut self, name: impl Into<String>) -> Self {
        self.robot_name = Some(name.into());
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn producer(&self) -> &str {
        &self.producer
    }

    /// Writes `episodes` as one new file and returns its path. Never replaces an existing file:
    /// if another writer took the number meanwhile, the next free one is used.
    pub fn write_batch(&mut self, episodes: &[Episode]) -> Result<PathBuf> {
        let header = FileHeader::new(
            &self.producer,
            &self.config,
            self.robot_name.as_deref(),
            episodes,
        );
        let mut number = self.next_number.max(next_free_number(&self.dir)?);
        let first_path = self.dir.join(file_name(number));
        let bytes = encode_file(&header, episodes).map_err(|p| p.at(&first_path))?;
        let temp = self.dir.join(format!(
            ".{}.tmp-{}-{}",
            file_name(number),
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        write_synced(&temp, &bytes).map_err(|p| {
            remove_quietly(&temp);
            p.at(&temp)
        })?;
        let published = loop {
            let path = self.dir.join(file_name(number));
            match publish(&temp, &path) {
                Ok(()) => break path,
                Err(e)
                    if e.kind() == ErrorKind::AlreadyExists
                        && number - self.next_number < MAX_PUBLISH_ATTEMPTS =>
                {
                    number += 1;
                }
                Err(e) => {
                    remove_quietly(&temp);
                    return Err(StoreProblem::io("cannot publish the written file", e).at(&path));
                }
            }
        };
        remove_quietly(&temp);
        sync_dir(&self.dir)
            .map_err(|e| StoreProblem::io("cannot fsync the directory", e).at(&self.dir))?;
        self.next_number = number + 1;
        Ok(published)
    }
}

/// One past the highest file number in `dir` (0 for none); temporary files do not count.
fn next_free_number(dir: &Path) -> Result<u64> {
    Ok(list_dir(dir)?
        .iter()
        .filter_map(|(kind, _)| match kind {
            EntryKind::Numbered(n) => Some(n.saturating_add(1)),
            _ => None,
        })
        .max()
        .unwrap_or(0))
}

/// Creates `path` (which must not exist), writes `bytes` and fsyncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), StoreProblem> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| StoreProblem::io("cannot create the temporary file", e))?;
    file.write_all(bytes)
        .map_err(|e| StoreProblem::io("cannot write the temporary file", e))?;
    file.sync_all()
        .map_err(|e| StoreProblem::io("cannot fsync the temporary file", e))
}

/// Makes the complete `temp` visible as `path`, failing with `AlreadyExists` rather than
/// replacing a file. Falls back to `rename` where hard links are not supported.
fn publish(temp: &Path, path: &Path) -> std::io::Result<()> {
    match fs::hard_link(temp, path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(e),
        Err(link_error) => {
            if fs::symlink_metadata(path).is_ok() {
                return Err(ErrorKind::AlreadyExists.into());
            }
            fs::rename(temp, path).map_err(|_| link_error)
        }
    }
}

fn remove_quietly(path: &Path) {
    // Best effort: a temporary file left behind is ignored by readers.
    let _ = fs::remove_file(path);
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::classify;
    use super::*;

    #[test]
    fn names_classify_as_the_writer_makes_them() {
        assert_eq!(classify(&file_name(7)), Some(EntryKind::Numbered(7)));
        assert_eq!(
            classify(&file_name(1_234_567)),
            Some(EntryKind::Numbered(1_234_567))
        );
        assert_eq!(
            classify(&format!(".{}.tmp-12-0", file_name(3))),
            Some(EntryKind::Temp)
        );
        assert_eq!(classify("mine.cep"), Some(EntryKind::OtherEpisodeFile));
        assert_eq!(classify("episodes-.cep"), Some(EntryKind::OtherEpisodeFile));
        assert_eq!(classify("episodes-000001.cep.bak"), None);
        assert_eq!(classify("README.md"), None);
        assert_eq!(classify(".hidden"), None);
    }
}
