//! Store throughput: write episodes in batches, read them back verified. Behind
//! `benches/store.rs` (and the CLI).

use std::fs;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::{read_dir, EpisodeWriter, StoreProblem};
use crate::config::SimConfig;
use crate::episode::Episode;
use crate::error::{Result, SimError};

/// Episodes per file in the benchmark.
pub const BENCH_BATCH: usize = 64;

/// Store throughput figures (MB = 10⁶ bytes). Reads come from the page cache (the files were
/// just written), so they measure verification and decoding, not the disk.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoreBench {
    /// Always `"store"`.
    pub bench: &'static str,
    pub episodes: usize,
    pub steps: usize,
    pub files: usize,
    /// Bytes of all files.
    pub bytes: u64,
    /// Encoding, writing and fsyncing every file.
    pub write_s: f64,
    /// Reading, verifying and decoding every file ([`read_dir`]).
    pub read_s: f64,
    pub write_mb_per_sec: f64,
    pub read_mb_per_sec: f64,
    pub read_episodes_per_sec: f64,
    pub read_steps_per_sec: f64,
}

/// Writes `episodes` ([`BENCH_BATCH`] per file) into a fresh subdirectory of `dir`, reads them
/// back, checks they are equal, removes the subdirectory and reports the throughput.
pub fn bench(episodes: &[Episode], dir: &Path) -> Result<StoreBench> {
    let store = dir.join(format!("store-bench-{}", std::process::id()));
    if store.exists() {
        fs::remove_dir_all(&store)
            .map_err(|e| StoreProblem::io("cannot clear the bench directory", e).at(&store))?;
    }
    let result = run(episodes, &store);
    let cleanup = fs::remove_dir_all(&store)
        .map_err(|e| StoreProblem::io("cannot remove the bench directory", e).at(&store));
    let report = result?;
    cleanup?;
    Ok(report)
}

fn run(episodes: &[Episode], store: &Path) -> Result<StoreBench> {
    let mut writer = EpisodeWriter::new(store, "store-bench", &SimConfig::default())?;
    let start = Instant::now();
    for batch in episodes.chunks(BENCH_BATCH) {
        writer.write_batch(batch)?;
    }
    let write_s = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let scan = read_dir(store)?;
    let read_s = start.elapsed().as_secs_f64();

    if let Some(skipped) = scan.skipped.first() {
        return Err(SimError::config(
            "store bench",
            format!("a file just written was skipped: {skipped}"),
        ));
    }
    let read_back = scan.episodes().map(|e| e.episode);
    if scan.episode_count() != episodes.len() || !read_back.eq(episodes.iter()) {
        return Err(SimError::config(
            "store bench",
            "the episodes read back differ from those written",
        ));
    }
    let bytes = scan.byte_len();
    let mb = bytes as f64 / 1e6;
    let steps = episodes.iter().map(|e| e.steps.len()).sum();
    Ok(StoreBench {
        bench: "store",
        episodes: episodes.len(),
        steps,
        files: scan.files.len(),
        bytes,
        write_s,
        read_s,
        write_mb_per_sec: mb / write_s.max(1e-9),
        read_mb_per_sec: mb / read_s.max(1e-9),
        read_episodes_per_sec: episodes.len() as f64 / read_s.max(1e-9),
        read_steps_per_sec: steps as f64 / read_s.max(1e-9),
    })
}
