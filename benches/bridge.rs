//! Bridge latency. (1) The controller loop at 100 Hz with the `small` state policy: the time of
//! `ControllerCore::step` (policy inference on its 25 Hz ticks + the safety filter on every
//! tick), on a driven clock, for a reach task on the UR5e. (2) zenoh loopback round trip: an
//! arm session publishes `JointState`, a controller session answers each with a
//! `JointCommand`, the arm measures state→command (two peers over tcp/127.0.0.1).
//!
//! Prints one JSON object: `{"bench":"bridge","loop_p50_us":..,"loop_p99_us":..,
//! "infer_tick_p50_us":..,"infer_tick_p99_us":..,"loop_histogram":{"<=50":..,..},
//! "zenoh_rtt_p50_us":..,"zenoh_rtt_p99_us":..}`. A state policy runs on the host
//! (`policy::host`), one thread.
//! `BRIDGE_BENCH_TICKS` sets the number of controller ticks (default 3000).

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use bridge::bundle::{self, BundleInfo};
use bridge::controller::{prepare_bundle, ControllerConfig, ControllerCore};
use bridge::protocol::{
    JointCommandMsg, JointStateMsg, ObjectPose, ObjectsMsg, TaskMsg, WireMessage,
};
use bridge::safety::SafetyConfig;
use bridge::transport::ZenohArgs;
use policy::obs::Normalizer;
use policy::{ModelConfig, ObsMode, Policy};
use rand::SeedableRng;
use zenoh::Wait;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Tick counts per bucket of `LATENCY_BUCKETS_US` (upper edges), then over the last.
fn histogram(sorted_us: &[f64]) -> serde_json::Value {
    let edges = bridge::controller::LATENCY_BUCKETS_US;
    let mut map = serde_json::Map::new();
    let mut below = 0;
    for edge in edges {
        let upto = sorted_us.partition_point(|us| *us <= f64::from(edge));
        map.insert(format!("<={edge}"), (upto - below).into());
        below = upto;
    }
    let last = edges[edges.len() - 1];
    map.insert(format!(">{last}"), (sorted_us.len() - below).into());
    map.into()
}

fn controller_loop(ticks: usize) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let robot = Arc::new(robots::load_manipulator("ur5e", None)?);
    let sim = sim::SimConfig::default();
    let task = sim::library::sample_task(
        sim::SkillKind::Reach,
        &sim::library::TaskRanges::default(),
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(3),
    );
    let model = ModelConfig::preset("small", ObsMode::State)?;
    let tokenizer = policy::tokenizer::Tokenizer::build([task.instruction.as_str()]);
    let proprio = policy::features::proprio_dim(robot.dof());
    let p = Policy::new(
        &model,
        tokenizer,
        Normalizer::identity(proprio),
        &robot,
        &sim,
        tch::Device::Cpu,
        0,
    )?;
    let dir = tempfile::tempdir()?;
    policy::checkpoint::save(&p, &dir.path().join("ckpt"))?;
    let key = bridge::keys::generate();
    let info = BundleInfo {
        skill: "reach".into(),
        source: "bench".into(),
        heldout_success: None,
        safety: SafetyConfig::default(),
    };
    let bytes = bundle::build(&dir.path().join("ckpt"), &info, Some(&key))?;
    let config = ControllerConfig {
        rate_hz: 100.0,
        safety: SafetyConfig::default(),
        trusted_keys: vec![key.verifying_key()],
        device: tch::Device::Cpu,
        ros2: None,
    };
    tch::set_num_threads(1);
    let prepared = prepare_bundle(&bytes, &config.trusted_keys, &robot, config.device)?;
    let mut core = ControllerCore::new(robot.clone(), config)?;
    let period_ns = 10_000_000u64;
    let state = |seq: u64| JointStateMsg {
        seq,
        stamp_ns: 0,
        q_rad: robot.home_q_rad.clone(),
        qd_rad_s: vec![0.0; robot.dof()],
        gripper_opening: 1.0,
    };
    core.on_task(&TaskMsg {
        seq: 1,
        task_json: serde_json::to_string(&task)?,
    })?;
    core.on_joint_state(&state(0), 0);
    let objects = ObjectsMsg {
        seq: 0,
        stamp_ns: 0,
        objects: task
            .objects
            .iter()
            .map(|o| ObjectPose {
                world_from_object: [
                    o.pose.xyz_m[0],
                    o.pose.xyz_m[1],
                    o.pose.xyz_m[2],
                    0.0,
                    0.0,
                    0.0,
                    1.0,
                ],
                lin_vel_m_s: [0.0; 3],
                ang_vel_rad_s: [0.0; 3],
            })
            .collect(),
    };
    core.on_objects(&objects);
    core.activate(prepared, 0)?;
    let mut all = Vec::with_capacity(ticks);
    let mut infer = Vec::new();
    for k in 1..=ticks as u64 {
        let now = k * period_ns;
        core.on_joint_state(&state(k), now);
        core.on_objects(&objects);
        let t = Instant::now();
        let cmd = core.step(now);
        let us = t.elapsed().as_secs_f64() * 1e6;
        anyhow::ensure!(cmd.is_some(), "no command at tick {k}");
        all.push(us);
        // The policy runs at 25 Hz: about every fourth tick carries an inference.
        if core.last_step_inferred() {
            infer.push(us);
        }
    }
    all.sort_by(f64::total_cmp);
    infer.sort_by(f64::total_cmp);
    Ok((all, infer))
}

fn zenoh_round_trip(n: usize) -> anyhow::Result<Vec<f64>> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let arm = ZenohArgs::listen(&endpoint).open()?;
    let ctl = ZenohArgs::connect(&endpoint).open()?;
    let keys = bridge::protocol::RobotKeys::new("bench")?;
    let cmd_pub = ctl
        .declare_publisher(keys.cmd_joints())
        .express(true)
        .wait()
        .map_err(bridge::BridgeError::zenoh)?;
    let _echo = ctl
        .declare_subscriber(keys.state_joints())
        .callback(move |s| {
            if let Ok(st) = JointStateMsg::decode(&s.payload().to_bytes()) {
                let cmd = JointCommandMsg {
                    seq: st.seq,
                    stamp_ns: st.stamp_ns,
                    task_seq: 0,
                    q_rad: st.q_rad,
                    gripper_opening: st.gripper_opening,
                };
                let _ = cmd_pub.put(cmd.encode()).wait();
            }
        })
        .wait()
        .map_err(bridge::BridgeError::zenoh)?;
    let (tx, rx) = mpsc::channel::<(u64, Instant)>();
    let _cmds = arm
        .declare_subscriber(keys.cmd_joints())
        .callback(move |s| {
            if let Ok(c) = JointCommandMsg::decode(&s.payload().to_bytes()) {
                let _ = tx.send((c.seq, Instant::now()));
            }
        })
        .wait()
        .map_err(bridge::BridgeError::zenoh)?;
    let state_pub = arm
        .declare_publisher(keys.state_joints())
        .express(true)
        .wait()
        .map_err(bridge::BridgeError::zenoh)?;
    // Wait for the route to exist.
    let start = Instant::now();
    loop {
        let msg = JointStateMsg {
            seq: 0,
            stamp_ns: 0,
            q_rad: vec![0.0; 6],
            qd_rad_s: vec![0.0; 6],
            gripper_opening: 1.0,
        };
        state_pub
            .put(msg.encode())
            .wait()
            .map_err(bridge::BridgeError::zenoh)?;
        if rx.recv_timeout(Duration::from_millis(50)).is_ok() {
            break;
        }
        anyhow::ensure!(
            start.elapsed() < Duration::from_secs(10),
            "loopback never connected"
        );
    }
    while rx.try_recv().is_ok() {}
    let mut rtt = Vec::with_capacity(n);
    for seq in 1..=n as u64 {
        let msg = JointStateMsg {
            seq,
            stamp_ns: seq,
            q_rad: vec![0.1; 6],
            qd_rad_s: vec![0.0; 6],
            gripper_opening: 1.0,
        };
        let t = Instant::now();
        state_pub
            .put(msg.encode())
            .wait()
            .map_err(bridge::BridgeError::zenoh)?;
        loop {
            let (s, at) = rx.recv_timeout(Duration::from_secs(2))?;
            if s == seq {
                rtt.push(at.duration_since(t).as_secs_f64() * 1e6);
                break;
            }
        }
        // Paced like a 1 kHz driver so queues stay empty.
        std::thread::sleep(Duration::from_millis(1));
    }
    rtt.sort_by(f64::total_cmp);
    Ok(rtt)
}

fn main() -> anyhow::Result<()> {
    let ticks = match std::env::var("BRIDGE_BENCH_TICKS") {
        Ok(text) => text.parse()?,
        Err(_) => 3000,
    };
    let (all, infer) = controller_loop(ticks)?;
    let rtt = zenoh_round_trip(2000)?;
    println!(
        "{}",
        serde_json::json!({
            "bench": "bridge",
            "policy": "small",
            "rate_hz": 100,
            "ticks": all.len(),
            "loop_p50_us": percentile(&all, 0.5),
            "loop_p99_us": percentile(&all, 0.99),
            "loop_max_us": all.last().copied().unwrap_or(0.0),
            "infer_tick_p50_us": percentile(&infer, 0.5),
            "infer_tick_p99_us": percentile(&infer, 0.99),
            "infer_ticks": infer.len(),
            "loop_histogram": histogram(&all),
            "zenoh_rtt_messages": rtt.len(),
            "zenoh_rtt_p50_us": percentile(&rtt, 0.5),
            "zenoh_rtt_p99_us": percentile(&rtt, 0.99),
        })
    );
    Ok(())
}
