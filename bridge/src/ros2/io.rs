//! The controller's ROS 2 side (`coevolve controller --ros2`): it reads the arm's
//! `sensor_msgs/JointState` (matched to the URDF's arm joints by name) and sends every
//! filtered command as a one-point `trajectory_msgs/JointTrajectory` (joint_trajectory_controller)
//! or a `std_msgs/Float64MultiArray` (forward_position_controller), as a ros2_control arm
//! expects, through rmw_zenoh.

use std::sync::Arc;

use robots::Manipulator;
use zenoh::Session;

use super::msgs::{
    Float64MultiArray, Header, JointState, JointTrajectory, JointTrajectoryPoint, Time,
};
use super::rmw::{RosNode, RosPublisher, RosSubscription};
use crate::error::{BridgeError, Result};
use crate::protocol::{JointCommandMsg, JointStateMsg};

/// Which ros2_control command interface to drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandKind {
    /// `trajectory_msgs/msg/JointTrajectory` (joint_trajectory_controller).
    Trajectory,
    /// `std_msgs/msg/Float64MultiArray` (forward_position_controller).
    Float64Array,
}

/// ROS 2 settings of a controller.
#[derive(Clone, Debug)]
pub struct Ros2Config {
    pub domain_id: u32,
    pub namespace: String,
    pub node_name: String,
    pub joint_states_topic: String,
    pub command_topic: String,
    pub command: CommandKind,
}

impl Default for Ros2Config {
    fn default() -> Self {
        Ros2Config {
            domain_id: 0,
            namespace: "/".into(),
            node_name: "coevolve_controller".into(),
            joint_states_topic: "/joint_states".into(),
            command_topic: "/joint_trajectory_controller/joint_trajectory".into(),
            command: CommandKind::Trajectory,
        }
    }
}

/// Live ROS 2 endpoints of a controller.
#[derive(Debug)]
pub struct Ros2Io {
    _node: RosNode,
    _states: RosSubscription,
    trajectory: Option<RosPublisher<JointTrajectory>>,
    array: Option<RosPublisher<Float64MultiArray>>,
    joint_names: Vec<String>,
}

impl Ros2Io {
    /// Starts the node; `on_state` gets each joint state in the robot's arm-joint order.
    pub fn start(
        session: &Session,
        robot: &Arc<Manipulator>,
        config: &Ros2Config,
        on_state: impl Fn(JointStateMsg) + Send + Sync + 'static,
    ) -> Result<Ros2Io> {
        let node = RosNode::new(
            session,
            config.domain_id,
            &config.namespace,
            &config.node_name,
        )?;
        let joint_names: Vec<String> = robot
            .arm_joints
            .iter()
            .map(|&j| robot.model.joints[j].name.clone())
            .collect();
        let names = joint_names.clone();
        let gripper: Vec<(String, f64, f64)> = robot
            .gripper_joints
            .iter()
            .map(|&j| {
                let jt = &robot.model.joints[j];
                (jt.name.clone(), jt.limits.lower, jt.limits.upper)
            })
            .collect();
        let seq = std::sync::atomic::AtomicU64::new(0);
        let states = node.subscribe::<JointState>(&config.joint_states_topic, move |m, _| {
            if let Some(msg) = to_joint_state(&m, &names, &gripper, &seq) {
                on_state(msg);
            }
        })?;
        let (trajectory, array) = match config.command {
            CommandKind::Trajectory => (Some(node.publisher(&config.command_topic)?), None),
            CommandKind::Float64Array => (None, Some(node.publisher(&config.command_topic)?)),
        };
        Ok(Ros2Io {
            _node: node,
            _states: states,
            trajectory,
            array,
            joint_names,
        })
    }

    /// Sends a filtered command, to be reached in `period_s`.
    pub fn send(&self, cmd: &JointCommandMsg, period_s: f64) -> Result<()> {
        if let Some(p) = &self.trajectory {
            p.publish(&JointTrajectory {
                header: Header::default(),
                joint_names: self.joint_names.clone(),
                points: vec![JointTrajectoryPoint {
                    positions: cmd.q_rad.clone(),
                    time_from_start: Time::from_ns((period_s * 1e9) as u64),
                    ..JointTrajectoryPoint::default()
                }],
            })?;
        }
        if let Some(p) = &self.array {
            p.publish(&Float64MultiArray {
                data: cmd.q_rad.clone(),
                ..Float64MultiArray::default()
            })?;
        }
        Ok(())
    }
}

/// A ROS joint state in arm order (`None` when an arm joint is missing or not finite).
fn to_joint_state(
    m: &JointState,
    arm: &[String],
    gripper: &[(String, f64, f64)],
    seq: &std::sync::atomic::AtomicU64,
) -> Option<JointStateMsg> {
    let index = |name: &str| m.name.iter().position(|n| n == name);
    let mut q = Vec::with_capacity(arm.len());
    let mut qd = Vec::with_capacity(arm.len());
    for name in arm {
        let i = index(name)?;
        q.push(*m.position.get(i)?);
        qd.push(m.velocity.get(i).copied().unwrap_or(0.0));
    }
    let gripper_opening = gripper
        .first()
        .and_then(|(name, lo, hi)| {
            let p = *m.position.get(index(name)?)?;
            (hi > lo).then(|| ((p - lo) / (hi - lo)).clamp(0.0, 1.0))
        })
        .unwrap_or(1.0);
    let stamp_ns =
        m.header.stamp.sec.max(0) as u64 * 1_000_000_000 + u64::from(m.header.stamp.nanosec);
    Some(JointStateMsg {
        seq: seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
        stamp_ns,
        q_rad: q,
        qd_rad_s: qd,
        gripper_opening,
    })
}

/// Parses `trajectory` / `float64-array`.
pub fn parse_command_kind(text: &str) -> Result<CommandKind> {
    match text {
        "trajectory" => Ok(CommandKind::Trajectory),
        "float64-array" => Ok(CommandKind::Float64Array),
        other => Err(BridgeError::config(
            "--ros2-command",
            format!("`{other}`: expected trajectory or float64-array"),
        )),
    }
}
