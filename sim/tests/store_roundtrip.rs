//! Episode store round trips: real scripted episodes (with and without camera images) come back
//! bit-exact, files are numbered after the existing ones, the header records producer and
//! config, and the byte layout of format version 1 is pinned.
#![allow(clippy::unwrap_used)] // test helpers

use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use sim::episode::{Outcome, StepRecord};
use sim::library::{sample_task, TaskRanges};
use sim::state::ObjectState;
use sim::store::{self, FileHeader, FORMAT_VERSION};
use sim::{
    Action, BatchConfig, CameraFrame, Controller, Episode, EpisodeBatch, EpisodeInfo,
    EpisodeWriter, PhysicsState, RewardTerms, ScriptedPickPlace, SimConfig, SkillKind, TaskSpec,
};

/// Scripted lift episodes on the UR5e, cut to `duration_s` of simulated time.
fn run(config: SimConfig, episodes: usize, duration_s: f64, record_images: bool) -> Vec<Episode> {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let config = Arc::new(config);
    let scale = config.action_scale.clone();
    let ranges = TaskRanges::default();
    let tasks = move |_: usize, rng: &mut ChaCha8Rng| -> TaskSpec {
        let mut task = sample_task(SkillKind::Lift, &ranges, rng);
        task.max_duration_s = duration_s;
        task
    };
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        Box::new(ScriptedPickPlace::new(info, scale.clone()))
    };
    let cfg = BatchConfig {
        episodes,
        seed: 3,
        threads: Some(2),
        record_images,
    };
    EpisodeBatch::run(robot, config, &cfg, &tasks, &factory, &|| {})
        .unwrap()
        .episodes
}

#[test]
fn episodes_with_camera_images_round_trip_exactly() {
    let config = SimConfig {
        cameras: SimConfig::default_cameras(),
        ..SimConfig::default()
    };
    let episodes = run(config.clone(), 2, 0.4, true);
    assert!(episodes[0].steps.len() >= 5);
    assert!(!episodes[0].steps[0].images.is_empty(), "images recorded");
    let dir = tempfile::tempdir().unwrap();
    let mut writer = EpisodeWriter::new(dir.path(), "scripted", &config)
        .unwrap()
        .with_robot_name("ur5e");
    let path = writer.write_batch(&episodes).unwrap();
    assert_eq!(path, dir.path().join("episodes-000000.cep"));

    let file = store::read_file(&path).unwrap();
    assert_eq!(file.episodes, episodes);
    assert_eq!(file.header.producer, "scripted");
    assert_eq!(file.header.sim_config, config);
    assert_eq!(file.header.robot_name.as_deref(), Some("ur5e"));
    assert_eq!(file.header.episode_count, 2);
    assert_eq!(
        file.header.step_count,
        episodes.iter().map(|e| e.steps.len()).sum::<usize>()
    );
    assert_eq!(
        file.header.robot_model_hashes,
        vec![episodes[0].robot_model_hash.clone()]
    );
    assert_eq!(file.byte_len, std::fs::metadata(&path).unwrap().len());

    // The images are part of Episode's serde form too (JSON export), not only of the store.
    let json = serde_json::to_string(&episodes[0].steps[0]).unwrap();
    let back: StepRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back.images, episodes[0].steps[0].images);
}

#[test]
fn appending_runs_continue_the_numbering_and_read_back_in_order() {
    let config = SimConfig::default();
    let episodes = run(config.clone(), 5, 1.0, false);
    let dir = tempfile::tempdir().unwrap();
    let mut first = EpisodeWriter::new(dir.path(), "scripted", &config).unwrap();
    let a = first.write_batch(&episodes[..2]).unwrap();
    let b = first.write_batch(&episodes[2..3]).unwrap();
    // A second run into the same store never overwrites the first one's files.
    let mut second = EpisodeWriter::new(dir.path(), "explorer-7", &config).unwrap();
    let c = second.write_batch(&episodes[3..]).unwrap();
    // Nor does the first writer collide with the second's file.
    let d = first.write_batch(&[]).unwrap();
    let names: Vec<_> = [&a, &b, &c, &d]
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "episodes-000000.cep",
            "episodes-000001.cep",
            "episodes-000002.cep",
            "episodes-000003.cep"
        ]
    );

    let scan = store::read_dir(dir.path()).unwrap();
    assert!(scan.skipped.is_empty(), "{:?}", scan.skipped);
    assert_eq!(scan.files.len(), 4);
    assert_eq!(scan.episode_count(), 5);
    let read: Vec<(String, Episode)> = scan
        .episodes()
        .map(|s| (s.producer.to_owned(), s.episode.clone()))
        .collect();
    let expected: Vec<(String, Episode)> = episodes
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let producer = if i < 3 { "scripted" } else { "explorer-7" };
            (producer.to_owned(), e.clone())
        })
        .collect();
    assert_eq!(read, expected);
    // Only final names are left: no temporary file survives a successful write.
    let mut entries: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    entries.sort();
    assert_eq!(entries, names);
}

/// A hand-built episode touching every recorded field, including an image and each action kind.
fn golden_episode() -> Episode {
    let task: TaskSpec = serde_json::from_str(
        r#"{"name":"golden","skill":"lift","instruction":"lift the cube",
            "objects":[{"name":"cube","kind":{"type":"cube","size_m":[0.05,0.05,0.05]},
              "pose":{"xyz_m":[0.5,0.0,0.425]},"mass_kg":0.1,"friction":0.8,"rgb":[200,30,30]}],
            "goal":{"object":"cube","zone":null,"support":null},"max_duration_s":4.0}"#,
    )
    .unwrap();
    let state = |t: f64| PhysicsState {
        time_s: t,
        q_rad: vec![0.1, -0.2, 0.3, -0.4, 0.5, -0.6],
        qd_rad_s: vec![1e-3, -2e-3, 3e-3, f64::MIN_POSITIVE, -0.0, 6e-3],
        gripper_q: vec![0.04, 0.04],
        gripper_opening: 1.0,
        world_from_ee: [0.5, 0.0, 0.6, 0.0, 1.0, 0.0, 0.0],
        objects: vec![ObjectState {
            world_from_object: [0.5, 0.0, 0.425, 0.0, 0.0, 0.0, 1.0],
            lin_vel_m_s: [0.0, 0.0, -1e-9],
            ang_vel_rad_s: [0.0; 3],
        }],
        contacts: sim::scene::contacts::ContactSummary::new(2, 1),
        motor_energy_j: 0.25,
        joint_limit_hits: 1,
    };
    let frame = CameraFrame {
        width: 2,
        height: 1,
        rgb: vec![1, 2, 3, 4, 5, 6],
        depth_m: vec![0.5, 0.0],
        segmentation: vec![7, 0],
    };
    let step = |action: Action, t: f64, images: Vec<CameraFrame>| StepRecord {
        action,
        q_target_rad: vec![0.0; 6],
        state: state(t),
        reward: RewardTerms {
            reach: 0.5,
            total: 0.5,
            ..RewardTerms::default()
        },
        images,
    };
    Episode {
        index: 3,
        seed: u64::MAX,
        task,
        robot_model_hash: "abc123".into(),
        initial_state: state(0.0),
        steps: vec![
            step(
                Action::JointDelta {
                    dq: vec![0.1; 6],
                    gripper: 1.0,
                },
                0.04,
                vec![frame],
            ),
            step(
                Action::EeDelta {
                    dpos: [0.0, 0.0, -1.0],
                    drot: [0.0; 3],
                    gripper: 0.0,
                },
                0.08,
                Vec::new(),
            ),
            step(
                Action::JointPosition {
                    q_rad: vec![0.2; 6],
                    gripper: 0.5,
                },
                0.12,
                Vec::new(),
            ),
        ],
        outcome: Outcome {
            success: true,
            success_time_s: Some(0.08),
            failure: None,
            invalid: None,
            control_steps: 3,
            episode_return: 1.5,
        },
    }
}

#[test]
fn format_version_1_byte_layout_is_pinned() {
    let episodes = vec![golden_episode()];
    let mut header = FileHeader::new("golden", &SimConfig::default(), Some("ur5e"), &episodes);
    header.created_unix_s = 1_700_000_000;
    let bytes = store::encode_file(&header, &episodes).unwrap();
    let file = store::decode_file("golden.cep".as_ref(), &bytes).unwrap();
    assert_eq!(file.episodes, episodes);
    assert_eq!(file.header, header);
    assert_eq!(&bytes[..8], b"COEVEP01");
    assert_eq!(bytes[8..12], FORMAT_VERSION.to_le_bytes());
    // The body (everything after the JSON header) is what old files hold: if this hash
    // changes, files written before the change no longer decode. Intended? Bump FORMAT_VERSION
    // (and keep a reader for version 1), then update the hash.
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let body_and_footer = &bytes[16 + header_len..];
    let body = &body_and_footer[8..body_and_footer.len() - 32];
    let hash = format!("{:x}", Sha256::digest(body));
    assert_eq!(body.len(), 2501, "body length changed: {hash}");
    assert_eq!(
        hash, "b4a359fdf9ee10d98391a80a5fdbf767403fb74efba251a5f59684ee5b0629e4",
        "body layout changed"
    );
}
