//! The wire codec: every message round-trips; any truncation, any trailing byte, a wrong
//! magic, version or kind, and arbitrary bytes are rejected with an error, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bridge::protocol::*;
use proptest::prelude::*;

fn f64s() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        any::<f64>().prop_filter("comparable", |x| !x.is_nan()),
        0..10,
    )
}

fn joint_state() -> impl Strategy<Value = JointStateMsg> {
    (any::<u64>(), any::<u64>(), f64s(), f64s(), -1e3..1e3f64).prop_map(
        |(seq, stamp_ns, q, qd, g)| JointStateMsg {
            seq,
            stamp_ns,
            q_rad: q,
            qd_rad_s: qd,
            gripper_opening: g,
        },
    )
}

fn command() -> impl Strategy<Value = JointCommandMsg> {
    (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        f64s(),
        -1e3..1e3f64,
    )
        .prop_map(|(seq, stamp_ns, task_seq, q, g)| JointCommandMsg {
            seq,
            stamp_ns,
            task_seq,
            q_rad: q,
            gripper_opening: g,
        })
}

fn objects() -> impl Strategy<Value = ObjectsMsg> {
    (
        any::<u64>(),
        prop::collection::vec(prop::array::uniform13(-10.0..10.0f64), 0..5),
    )
        .prop_map(|(seq, raw)| ObjectsMsg {
            seq,
            stamp_ns: seq ^ 7,
            objects: raw
                .into_iter()
                .map(|v| ObjectPose {
                    world_from_object: [v[0], v[1], v[2], v[3], v[4], v[5], v[6]],
                    lin_vel_m_s: [v[7], v[8], v[9]],
                    ang_vel_rad_s: [v[10], v[11], v[12]],
                })
                .collect(),
        })
}

fn status() -> impl Strategy<Value = PolicyStatusMsg> {
    (
        any::<u64>(),
        0u8..5,
        ".{0,20}",
        ".{0,40}",
        any::<bool>(),
        prop::array::uniform6(any::<u64>()),
    )
        .prop_map(|(t, mode, hash, detail, accepted, h)| PolicyStatusMsg {
            stamp_ns: t,
            mode: [
                ControllerMode::Idle,
                ControllerMode::RampIn,
                ControllerMode::Active,
                ControllerMode::Stopped,
                ControllerMode::EStopped,
            ][mode as usize],
            active_bundle: hash,
            skill: "lift".into(),
            request_id: t / 3,
            accepted,
            detail,
            ticks: t / 7,
            loop_p50_us: 12.5,
            loop_p99_us: 80.0,
            loop_max_us: 900.0,
            loop_histogram: vec![(t % 5) as u32, 3, 0, 0, 0, 0, 0, 1],
            hits: LimitHits {
                non_finite: h[0],
                position: h[1],
                velocity: h[2],
                acceleration: h[3],
                workspace: h[4],
                rate: h[5],
            },
        })
}

fn camera() -> impl Strategy<Value = CameraMsg> {
    (
        any::<u64>(),
        prop::collection::vec((1u32..5, 1u32..4, any::<u8>(), 0.0..3.0f32), 0..3),
    )
        .prop_map(|(seq, frames)| CameraMsg {
            seq,
            stamp_ns: seq ^ 3,
            frames: frames
                .into_iter()
                .map(|(w, h, c, d)| {
                    let n = (w * h) as usize;
                    CameraImage {
                        width: w,
                        height: h,
                        rgb: (0..3 * n).map(|i| c.wrapping_add(i as u8)).collect(),
                        depth_m: (0..n).map(|i| d + i as f32 * 0.01).collect(),
                    }
                })
                .collect(),
        })
}

/// Round trip, then every strict prefix and every one-byte extension must fail.
fn check_strict<M: WireMessage + PartialEq + std::fmt::Debug>(m: &M) {
    let bytes = m.encode();
    assert_eq!(&M::decode(&bytes).unwrap(), m);
    for cut in 0..bytes.len() {
        assert!(
            M::decode(&bytes[..cut]).is_err(),
            "prefix of {cut} bytes decoded"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    let err = M::decode(&longer).unwrap_err().to_string();
    assert!(err.contains("trailing"), "{err}");
}

proptest! {
    #[test]
    fn joint_state_round_trips_strictly(m in joint_state()) { check_strict(&m); }

    #[test]
    fn command_round_trips_strictly(m in command()) { check_strict(&m); }

    #[test]
    fn objects_round_trip_strictly(m in objects()) { check_strict(&m); }

    #[test]
    fn status_round_trips_strictly(m in status()) { check_strict(&m); }

    #[test]
    fn camera_round_trips_strictly(m in camera()) { check_strict(&m); }

    #[test]
    fn small_messages_round_trip_strictly(seq in any::<u64>(), s in ".{0,30}", b in any::<bool>(),
                                          bundle in prop::collection::vec(any::<u8>(), 0..64)) {
        check_strict(&HeartbeatMsg { seq, stamp_ns: seq, sender: s.clone() });
        check_strict(&EstopMsg { engage: b, reason: s.clone() });
        check_strict(&DeployMsg { request_id: seq, bundle });
        check_strict(&TaskMsg { seq, task_json: s });
        check_strict(&EpisodeMsg { index: seq, task_seq: 1, success: b, steps: 9 });
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = JointStateMsg::decode(&bytes);
        let _ = JointCommandMsg::decode(&bytes);
        let _ = ObjectsMsg::decode(&bytes);
        let _ = CameraMsg::decode(&bytes);
        let _ = PolicyStatusMsg::decode(&bytes);
        let _ = DeployMsg::decode(&bytes);
        let _ = bridge::bundle::Bundle::parse(&bytes);
    }

    #[test]
    fn corrupted_headers_are_rejected(m in joint_state(), at in 0usize..4, v in any::<u8>()) {
        let mut bytes = m.encode();
        prop_assume!(bytes[at] != v);
        bytes[at] = v;
        prop_assert!(JointStateMsg::decode(&bytes).is_err());
    }
}

#[test]
fn errors_name_the_message_and_field() {
    let mut bytes = JointCommandMsg {
        seq: 1,
        stamp_ns: 2,
        task_seq: 3,
        q_rad: vec![0.1; 6],
        gripper_opening: 1.0,
    }
    .encode();
    // Claim a billion joints: rejected before allocating.
    bytes[28..32].copy_from_slice(&1_000_000_000u32.to_le_bytes());
    let err = JointCommandMsg::decode(&bytes).unwrap_err().to_string();
    assert!(
        err.contains("JointCommand") && err.contains("q_rad"),
        "{err}"
    );
    // A state message is not a command.
    let state = JointStateMsg {
        seq: 1,
        stamp_ns: 2,
        q_rad: vec![],
        qd_rad_s: vec![],
        gripper_opening: 0.0,
    };
    let err = JointCommandMsg::decode(&state.encode())
        .unwrap_err()
        .to_string();
    assert!(err.contains("kind"), "{err}");
}

#[test]
fn a_camera_image_must_match_its_size() {
    let image = CameraImage {
        width: 2,
        height: 2,
        rgb: vec![0; 12],
        depth_m: vec![1.0; 4],
    };
    let ok = CameraMsg {
        seq: 1,
        stamp_ns: 2,
        frames: vec![image.clone()],
    };
    assert_eq!(CameraMsg::decode(&ok.encode()).unwrap(), ok);
    let short_rgb = CameraMsg {
        frames: vec![CameraImage {
            rgb: vec![0; 11],
            ..image.clone()
        }],
        ..ok.clone()
    };
    let err = CameraMsg::decode(&short_rgb.encode())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Camera") && err.contains("rgb") && err.contains("2×2"),
        "{err}"
    );
    let short_depth = CameraMsg {
        frames: vec![CameraImage {
            depth_m: vec![1.0; 3],
            ..image
        }],
        ..ok
    };
    let err = CameraMsg::decode(&short_depth.encode())
        .unwrap_err()
        .to_string();
    assert!(err.contains("depth_m"), "{err}");
}
