//! Episode store robustness: truncated, bit-flipped, foreign, future-version and half-written
//! files are reported by name with their problem and never read as episodes.
#![allow(clippy::unwrap_used)] // test helpers

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use sim::library::{sample_task, TaskRanges};
use sim::store::{self, StoreProblem, StoreScan};
use sim::{
    BatchConfig, Controller, Episode, EpisodeBatch, EpisodeInfo, EpisodeWriter, ScriptedPickPlace,
    SimConfig, SimError, SkillKind, TaskSpec,
};

/// Short real scripted lift episodes (0.3 s each), with images when `cameras`.
fn episodes(count: usize, cameras: bool) -> (SimConfig, Vec<Episode>) {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let mut config = SimConfig::default();
    if cameras {
        config.cameras = SimConfig::default_cameras();
    }
    let shared = Arc::new(config.clone());
    let scale = config.action_scale.clone();
    let ranges = TaskRanges::default();
    let tasks = move |_: usize, rng: &mut ChaCha8Rng| -> TaskSpec {
        let mut task = sample_task(SkillKind::Lift, &ranges, rng);
        task.max_duration_s = 0.3;
        task
    };
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        Box::new(ScriptedPickPlace::new(info, scale.clone()))
    };
    let cfg = BatchConfig {
        episodes: count,
        seed: 9,
        threads: Some(2),
        record_images: cameras,
    };
    let batch = EpisodeBatch::run(robot, shared, &cfg, &tasks, &factory, &|| {}).unwrap();
    (config, batch.episodes)
}

/// A store of three one-episode files; returns the directory, the paths and the episodes.
fn three_files() -> (tempfile::TempDir, Vec<PathBuf>, Vec<Episode>) {
    let (config, episodes) = episodes(3, false);
    let dir = tempfile::tempdir().unwrap();
    let mut writer = EpisodeWriter::new(dir.path(), "scripted", &config).unwrap();
    let paths = episodes
        .chunks(1)
        .map(|batch| writer.write_batch(batch).unwrap())
        .collect();
    (dir, paths, episodes)
}

/// The scan read files 0 and 2 intact and skipped exactly `bad`, whose problem is returned.
fn only_middle_skipped<'a>(
    scan: &'a StoreScan,
    bad: &Path,
    episodes: &[Episode],
) -> &'a StoreProblem {
    let read: Vec<&Episode> = scan.episodes().map(|e| e.episode).collect();
    assert_eq!(read, [&episodes[0], &episodes[2]]);
    assert_eq!(scan.skipped.len(), 1, "{:?}", scan.skipped);
    assert_eq!(scan.skipped[0].path, bad);
    &scan.skipped[0].problem
}

fn store_error_names_file(err: &SimError, path: &Path, problem_text: &str) {
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains(problem_text), "{text}");
}

#[test]
fn every_truncation_is_rejected_and_says_which_part() {
    let (config, episodes) = episodes(2, true);
    let header = store::FileHeader::new("scripted", &config, None, &episodes);
    let bytes = store::encode_file(&header, &episodes).unwrap();
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let body_at = 16 + header_len + 8;
    let footer_at = bytes.len() - 32;
    let path = Path::new("episodes-000042.cep");
    for len in 0..bytes.len() {
        let problem = match store::decode_file(path, &bytes[..len]) {
            Err(problem) => problem,
            Ok(_) => panic!("a file cut to {len} of {} bytes was accepted", bytes.len()),
        };
        let StoreProblem::Truncated { part, .. } = problem else {
            panic!("cut to {len}: {problem}");
        };
        let expected = match len {
            0..8 => "magic",
            8..12 => "format version",
            12..16 => "header length",
            _ if len < 16 + header_len => "header",
            _ if len < body_at => "body length",
            _ if len < footer_at => "body",
            _ => "checksum footer",
        };
        assert_eq!(part, expected, "cut to {len}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        store::decode_file(path, &longer),
        Err(StoreProblem::TrailingBytes { extra: 1 })
    ));
}

#[test]
fn truncated_files_are_skipped_by_name_and_the_others_still_read() {
    let (dir, paths, episodes) = three_files();
    let bad = &paths[1];
    let bytes = fs::read(bad).unwrap();
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let len = bytes.len();
    let cuts = [
        0,
        5,
        10,
        14,
        16 + header_len / 2,
        16 + header_len + 3,
        16 + header_len + 8 + 1,
        (len - 32) / 2 + 16 + header_len / 2,
        len - 33,
        len - 32,
        len - 1,
    ];
    for cut in cuts {
        fs::write(bad, &bytes[..cut]).unwrap();
        let scan = store::read_dir(dir.path()).unwrap();
        let problem = only_middle_skipped(&scan, bad, &episodes);
        assert!(
            matches!(problem, StoreProblem::Truncated { .. }),
            "cut {cut}: {problem}"
        );
        let err = store::read_file(bad).unwrap_err();
        store_error_names_file(&err, bad, "truncated in the");
    }
}

#[test]
fn every_flipped_byte_is_detected() {
    let (config, episodes) = episodes(1, false);
    let header = store::FileHeader::new("scripted", &config, None, &episodes);
    let bytes = store::encode_file(&header, &episodes).unwrap();
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let path = Path::new("episodes-000001.cep");
    let mut copy = bytes.clone();
    for i in 0..bytes.len() {
        for bit in [0x01, 0x80] {
            copy[i] ^= bit;
            let result = store::decode_file(path, &copy);
            copy[i] ^= bit;
            let problem = match result {
                Err(problem) => problem,
                Ok(_) => panic!("flipping bit {bit:#x} of byte {i} went unnoticed"),
            };
            // Bytes covered only by the checksum must be caught by it.
            let in_header = (16..16 + header_len).contains(&i);
            let in_body_or_footer = i >= 16 + header_len + 8;
            if in_header || in_body_or_footer {
                assert!(
                    matches!(problem, StoreProblem::ChecksumMismatch { .. }),
                    "byte {i}: {problem}"
                );
            }
        }
    }
    assert_eq!(copy, bytes);
}

#[test]
fn a_corrupted_file_on_disk_is_skipped_by_name() {
    let (dir, paths, episodes) = three_files();
    let bad = &paths[1];
    let mut bytes = fs::read(bad).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    fs::write(bad, &bytes).unwrap();
    let scan = store::read_dir(dir.path()).unwrap();
    let problem = only_middle_skipped(&scan, bad, &episodes);
    assert!(
        matches!(problem, StoreProblem::ChecksumMismatch { .. }),
        "{problem}"
    );
    let err = store::read_file(bad).unwrap_err();
    store_error_names_file(&err, bad, "corrupted: SHA-256");
}

#[test]
fn a_foreign_file_is_a_clear_error_and_skipped() {
    let (dir, paths, episodes) = three_files();
    let bad = &paths[1];
    fs::write(bad, b"PK\x03\x04 this is a zip archive, not episodes").unwrap();
    let scan = store::read_dir(dir.path()).unwrap();
    let problem = only_middle_skipped(&scan, bad, &episodes);
    assert!(
        matches!(problem, StoreProblem::BadMagic { .. }),
        "{problem}"
    );
    let err = store::read_file(bad).unwrap_err();
    store_error_names_file(
        &err,
        bad,
        "not an episode store file: starts with `PK\\x03\\x04",
    );
    // Files the store does not own by name are left alone, not reported.
    fs::write(dir.path().join("NOTES.md"), "notes").unwrap();
    assert_eq!(store::read_dir(dir.path()).unwrap().skipped.len(), 1);
}

#[test]
fn a_future_format_version_is_a_clear_error() {
    let (dir, paths, episodes) = three_files();
    let bad = &paths[1];
    let mut bytes = fs::read(bad).unwrap();
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    fs::write(bad, &bytes).unwrap();
    let scan = store::read_dir(dir.path()).unwrap();
    let problem = only_middle_skipped(&scan, bad, &episodes);
    assert!(
        matches!(
            problem,
            StoreProblem::UnsupportedVersion {
                found: 2,
                supported: 1
            }
        ),
        "{problem}"
    );
    let err = store::read_file(bad).unwrap_err();
    store_error_names_file(
        &err,
        bad,
        "format version 2 is newer than this build reads (version 1)",
    );
}

#[test]
fn a_leftover_temporary_file_is_never_read_as_episodes() {
    let (dir, paths, episodes) = three_files();
    // A crash after writing (even all of) a temporary file: it keeps its temporary name.
    let complete = fs::read(&paths[0]).unwrap();
    let temp = dir.path().join(".episodes-000003.cep.tmp-4242-0");
    fs::write(&temp, &complete[..complete.len() / 2]).unwrap();
    let whole_temp = dir.path().join(".episodes-000004.cep.tmp-4242-1");
    fs::write(&whole_temp, &complete).unwrap();

    let scan = store::read_dir(dir.path()).unwrap();
    let read: Vec<&Episode> = scan.episodes().map(|e| e.episode).collect();
    assert_eq!(read, episodes.iter().collect::<Vec<_>>());
    let skipped: Vec<_> = scan.skipped.iter().map(|s| s.path.clone()).collect();
    assert_eq!(skipped, [temp.clone(), whole_temp.clone()]);
    assert!(scan
        .skipped
        .iter()
        .all(|s| matches!(s.problem, StoreProblem::LeftoverTemp)));

    // The next write takes the number after the last published file, as a final name.
    let mut writer = EpisodeWriter::new(dir.path(), "scripted", &SimConfig::default()).unwrap();
    let next = writer.write_batch(&episodes[..1]).unwrap();
    assert_eq!(next, dir.path().join("episodes-000003.cep"));
    assert!(
        temp.exists(),
        "another writer's temporary file is not touched"
    );
    assert_eq!(store::read_dir(dir.path()).unwrap().episode_count(), 4);
}

#[test]
fn numbering_skips_past_damaged_files_so_nothing_is_overwritten() {
    let (dir, paths, episodes) = three_files();
    fs::write(&paths[2], b"COEVEP").unwrap();
    fs::write(dir.path().join("episodes-000009.cep"), b"").unwrap();
    let mut writer = EpisodeWriter::new(dir.path(), "scripted", &SimConfig::default()).unwrap();
    let next = writer.write_batch(&episodes[..1]).unwrap();
    assert_eq!(next, dir.path().join("episodes-000010.cep"));
    assert_eq!(fs::read(&paths[2]).unwrap(), b"COEVEP");
    let scan = store::read_dir(dir.path()).unwrap();
    assert_eq!(scan.files.len(), 3);
    let skipped: Vec<_> = scan.skipped.iter().map(|s| s.path.clone()).collect();
    assert_eq!(
        skipped,
        [paths[2].clone(), dir.path().join("episodes-000009.cep")]
    );
}

#[test]
fn an_unreadable_store_directory_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-store");
    let err = store::read_dir(&missing).unwrap_err();
    store_error_names_file(&err, &missing, "cannot list");
}
