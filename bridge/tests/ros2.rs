//! ROS 2 interop checked against an independent implementation: the Python `rosbags` package
//! (Jazzy typestore) deserialises our CDR, serialises the same messages byte for byte, and
//! gives the same RIHS01 type hashes; on zenoh, a published message carries rmw_zenoh's
//! 33-byte attachment on the `<domain>/<topic>/<type>/<hash>` key, and the node's liveliness
//! tokens are visible.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Duration;

use bridge::ros2::msgs::{Header, JointTrajectoryPoint, MultiArrayDimension, Time};
use bridge::ros2::rmw::{topic_key, Attachment};
use bridge::ros2::{Float64MultiArray, JointState, JointTrajectory, RosMessage, RosNode};
use bridge::transport::ZenohArgs;
use zenoh::Wait;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn joint_state() -> JointState {
    JointState {
        header: Header {
            stamp: Time {
                sec: 17,
                nanosec: 250_000_000,
            },
            frame_id: "base_link".into(),
        },
        name: vec![
            "shoulder_pan_joint".into(),
            "elbow_joint".into(),
            "j".into(),
        ],
        position: vec![0.5, -1.25, 3.0],
        velocity: vec![0.0, 0.125, -2.5],
        effort: vec![],
    }
}

fn trajectory() -> JointTrajectory {
    JointTrajectory {
        header: Header {
            stamp: Time { sec: 3, nanosec: 9 },
            frame_id: String::new(),
        },
        joint_names: vec!["a".into(), "bb".into()],
        points: vec![
            JointTrajectoryPoint {
                positions: vec![0.1, 0.2],
                velocities: vec![],
                accelerations: vec![1.5],
                effort: vec![],
                time_from_start: Time {
                    sec: 0,
                    nanosec: 10_000_000,
                },
            },
            JointTrajectoryPoint {
                positions: vec![0.3, 0.4],
                time_from_start: Time { sec: 1, nanosec: 0 },
                ..JointTrajectoryPoint::default()
            },
        ],
    }
}

fn array() -> Float64MultiArray {
    Float64MultiArray {
        dim: vec![MultiArrayDimension {
            label: "joints".into(),
            size: 3,
            stride: 3,
        }],
        data_offset: 0,
        data: vec![1.0, -2.0, 0.5],
    }
}

const PYTHON: &str = r#"
import json, sys
from rosbags.typesys import Stores, get_typestore
ts = get_typestore(Stores.ROS2_JAZZY)
ours = json.loads(sys.argv[1])
T = ts.types
Time = T['builtin_interfaces/msg/Time']; Duration = T['builtin_interfaces/msg/Duration']
Header = T['std_msgs/msg/Header']
import numpy as np
def arr(v): return np.array(v, dtype=np.float64)
js = T['sensor_msgs/msg/JointState'](Header(Time(17, 250000000), 'base_link'),
    ['shoulder_pan_joint', 'elbow_joint', 'j'], arr([0.5, -1.25, 3.0]), arr([0.0, 0.125, -2.5]), arr([]))
P = T['trajectory_msgs/msg/JointTrajectoryPoint']
jt = T['trajectory_msgs/msg/JointTrajectory'](Header(Time(3, 9), ''), ['a', 'bb'], [
    P(arr([0.1, 0.2]), arr([]), arr([1.5]), arr([]), Duration(0, 10000000)),
    P(arr([0.3, 0.4]), arr([]), arr([]), arr([]), Duration(1, 0))])
D = T['std_msgs/msg/MultiArrayDimension']
fa = T['std_msgs/msg/Float64MultiArray'](T['std_msgs/msg/MultiArrayLayout']([D('joints', 3, 3)], 0), arr([1.0, -2.0, 0.5]))
out = {}
for name, msg in [('sensor_msgs/msg/JointState', js), ('trajectory_msgs/msg/JointTrajectory', jt),
                  ('std_msgs/msg/Float64MultiArray', fa)]:
    theirs = bytes(ts.serialize_cdr(msg, name))
    back = ts.deserialize_cdr(bytes.fromhex(ours[name]), name)
    out[name] = {'hash': ts.hash_rihs01(name), 'bytes': theirs.hex(),
                 'reserialised': bytes(ts.serialize_cdr(back, name)).hex()}
print(json.dumps(out))
"#;

#[test]
fn cdr_and_type_hashes_match_rosbags() {
    let python = std::env::var("COEVOLVE_PYTHON").expect(
        "COEVOLVE_PYTHON is not set: run scripts/test.sh (it sources scripts/torch-env.sh)",
    );
    let ours = serde_json::json!({
        JointState::ROS_NAME: hex(&joint_state().to_cdr()),
        JointTrajectory::ROS_NAME: hex(&trajectory().to_cdr()),
        Float64MultiArray::ROS_NAME: hex(&array().to_cdr()),
    });
    let out = Command::new(python)
        .args(["-c", PYTHON, &ours.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = |name: &str, hash: &str, bytes: Vec<u8>| {
        let t = &theirs[name];
        assert_eq!(t["hash"], hash, "{name} type hash");
        assert_eq!(
            t["bytes"],
            hex(&bytes),
            "{name}: rosbags serialises differently"
        );
        assert_eq!(
            t["reserialised"],
            hex(&bytes),
            "{name}: rosbags read ours differently"
        );
    };
    check(
        JointState::ROS_NAME,
        JointState::TYPE_HASH,
        joint_state().to_cdr(),
    );
    check(
        JointTrajectory::ROS_NAME,
        JointTrajectory::TYPE_HASH,
        trajectory().to_cdr(),
    );
    check(
        Float64MultiArray::ROS_NAME,
        Float64MultiArray::TYPE_HASH,
        array().to_cdr(),
    );
    // And back: our decoder reads what rosbags wrote.
    let js = JointState::from_cdr(&unhex(
        theirs[JointState::ROS_NAME]["bytes"].as_str().unwrap(),
    ))
    .unwrap();
    assert_eq!(js, joint_state());
    let jt = JointTrajectory::from_cdr(&unhex(
        theirs[JointTrajectory::ROS_NAME]["bytes"].as_str().unwrap(),
    ))
    .unwrap();
    assert_eq!(jt, trajectory());
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn malformed_cdr_is_rejected() {
    let bytes = joint_state().to_cdr();
    for cut in 4..bytes.len() - 1 {
        assert!(JointState::from_cdr(&bytes[..cut]).is_err(), "prefix {cut}");
    }
    let mut big_endian = bytes.clone();
    big_endian[1] = 0x00;
    assert!(JointState::from_cdr(&big_endian).is_err());
    let mut longer = bytes;
    longer.extend_from_slice(&[1u8; 9]);
    assert!(JointState::from_cdr(&longer)
        .unwrap_err()
        .to_string()
        .contains("trailing"));
}

#[test]
fn published_messages_carry_the_rmw_zenoh_attachment_and_tokens() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let a = ZenohArgs::listen(&endpoint).open().unwrap();
    let b = ZenohArgs::connect(&endpoint).open().unwrap();
    let key = topic_key::<JointState>(0, "/joint_states");
    assert_eq!(
        key,
        format!(
            "0/joint_states/sensor_msgs::msg::dds_::JointState_/{}",
            JointState::TYPE_HASH
        )
    );
    let raw = b.declare_subscriber(&key).wait().unwrap();
    let node = RosNode::new(&a, 0, "/", "coevolve_test").unwrap();
    let publisher = node.publisher::<JointState>("/joint_states").unwrap();
    let mut got = None;
    for _ in 0..100 {
        publisher.publish(&joint_state()).unwrap();
        if let Ok(Some(s)) = raw.recv_timeout(Duration::from_millis(50)) {
            got = Some(s);
            break;
        }
    }
    let sample = got.expect("no message on the rmw_zenoh key");
    let att = Attachment::decode(&sample.attachment().unwrap().to_bytes()).unwrap();
    assert!(att.sequence_number >= 1);
    assert!(att.source_timestamp_ns > 1_600_000_000_000_000_000);
    assert_eq!(
        JointState::from_cdr(&sample.payload().to_bytes()).unwrap(),
        joint_state()
    );
    let tokens: Vec<String> = b
        .liveliness()
        .get("@ros2_lv/0/**")
        .timeout(Duration::from_secs(2))
        .wait()
        .unwrap()
        .iter()
        .filter_map(|r| r.result().ok().map(|s| s.key_expr().as_str().to_owned()))
        .collect();
    let zid = a.zid().to_string();
    assert!(
        tokens.contains(&format!("@ros2_lv/0/{zid}/0/0/NN/%/%/coevolve_test")),
        "{tokens:?}"
    );
    assert!(
        tokens.iter().any(|t| t.contains(
            "/MP/%/%/coevolve_test/%joint_states/sensor_msgs::msg::dds_::JointState_/RIHS01_"
        )),
        "{tokens:?}"
    );
}

/// `controller --ros2`: joint state from a ROS 2 arm's `/joint_states` (names matched to the
/// URDF, in any order) drives the controller, whose filtered commands come back as
/// `JointTrajectory` messages on the trajectory controller's topic.
#[test]
fn the_controller_drives_a_ros2_arm_through_rmw_zenoh() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    use bridge::controller::{run_controller, ControllerConfig};
    use bridge::protocol::RobotKeys;
    use bridge::ros2::io::Ros2Config;
    use bridge::safety::SafetyConfig;

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let arm_session = ZenohArgs::listen(&endpoint).open().unwrap();
    let ctl_session = ZenohArgs::connect(&endpoint).open().unwrap();
    let robot = std::sync::Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let names: Vec<String> = robot
        .arm_joints
        .iter()
        .map(|&j| robot.model.joints[j].name.clone())
        .collect();

    let stop = Arc::new(AtomicBool::new(false));
    let controller = {
        let stop = stop.clone();
        let robot = robot.clone();
        std::thread::spawn(move || {
            let config = ControllerConfig {
                rate_hz: 100.0,
                safety: SafetyConfig::default(),
                trusted_keys: vec![],
                device: tch::Device::Cpu,
                ros2: Some(Ros2Config::default()),
            };
            run_controller(
                &ctl_session,
                &RobotKeys::new("ros_arm").unwrap(),
                robot,
                config,
                stop,
            )
            .unwrap();
        })
    };

    let arm = RosNode::new(&arm_session, 0, "/", "fake_ur5e").unwrap();
    let received: Arc<Mutex<Vec<JointTrajectory>>> = Arc::new(Mutex::new(Vec::new()));
    let _commands = {
        let received = received.clone();
        arm.subscribe::<JointTrajectory>(
            "/joint_trajectory_controller/joint_trajectory",
            move |m, _| received.lock().unwrap().push(m),
        )
        .unwrap()
    };
    let states = arm.publisher::<JointState>("/joint_states").unwrap();
    // Reversed name order: the controller must match by name.
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.reverse();
    let state = JointState {
        header: Header::default(),
        name: order.iter().map(|&i| names[i].clone()).collect(),
        position: order.iter().map(|&i| robot.home_q_rad[i]).collect(),
        velocity: vec![0.0; names.len()],
        effort: vec![],
    };
    for _ in 0..200 {
        states.publish(&state).unwrap();
        std::thread::sleep(Duration::from_millis(10));
        if received.lock().unwrap().len() >= 5 {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    controller.join().unwrap();
    let got = received.lock().unwrap();
    assert!(got.len() >= 5, "only {} trajectories arrived", got.len());
    let last = got.last().unwrap();
    assert_eq!(last.joint_names, names);
    assert_eq!(last.points.len(), 1);
    // Idle: the controller holds the arm where it is (home), in URDF order.
    for (q, home) in last.points[0].positions.iter().zip(&robot.home_q_rad) {
        assert!((q - home).abs() < 1e-9, "{q} vs {home}");
    }
}
