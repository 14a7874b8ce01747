//! The ROS 2 (Jazzy) message types the bridge exchanges with ros2_control, field for field,
//! with their CDR encode/decode and the names and RIHS01 type hashes rmw_zenoh keys them by
//! (the hashes are checked against the `rosbags` package's `hash_rihs01` in the tests).

use super::cdr::{CdrReader, CdrWriter};
use crate::error::Result;

/// A ROS 2 message type as rmw_zenoh names it.
pub trait RosMessage: Sized {
    /// `pkg/msg/Name`.
    const ROS_NAME: &'static str;
    /// `pkg::msg::dds_::Name_`.
    const DDS_NAME: &'static str;
    /// `RIHS01_<sha256 hex>` of the type description.
    const TYPE_HASH: &'static str;
    fn write(&self, w: &mut CdrWriter);
    fn read(r: &mut CdrReader<'_>) -> Result<Self>;

    fn to_cdr(&self) -> Vec<u8> {
        let mut w = CdrWriter::new();
        self.write(&mut w);
        w.finish()
    }

    fn from_cdr(bytes: &[u8]) -> Result<Self> {
        let mut r = CdrReader::new(bytes, Self::ROS_NAME)?;
        let m = Self::read(&mut r)?;
        r.finish()?;
        Ok(m)
    }
}

/// `builtin_interfaces/msg/Time` (and `Duration`: the same layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Time {
    pub sec: i32,
    pub nanosec: u32,
}

impl Time {
    pub fn from_ns(ns: u64) -> Time {
        Time {
            sec: (ns / 1_000_000_000) as i32,
            nanosec: (ns % 1_000_000_000) as u32,
        }
    }

    fn write(&self, w: &mut CdrWriter) {
        w.i32(self.sec);
        w.u32(self.nanosec);
    }

    fn read(r: &mut CdrReader<'_>, field: &str) -> Result<Time> {
        Ok(Time {
            sec: r.i32(field)?,
            nanosec: r.u32(field)?,
        })
    }
}

/// `std_msgs/msg/Header`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Header {
    pub stamp: Time,
    pub frame_id: String,
}

impl Header {
    fn write(&self, w: &mut CdrWriter) {
        self.stamp.write(w);
        w.string(&self.frame_id);
    }

    fn read(r: &mut CdrReader<'_>) -> Result<Header> {
        Ok(Header {
            stamp: Time::read(r, "header.stamp")?,
            frame_id: r.string("header.frame_id")?,
        })
    }
}

/// `sensor_msgs/msg/JointState`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointState {
    pub header: Header,
    pub name: Vec<String>,
    pub position: Vec<f64>,
    pub velocity: Vec<f64>,
    pub effort: Vec<f64>,
}

impl RosMessage for JointState {
    const ROS_NAME: &'static str = "sensor_msgs/msg/JointState";
    const DDS_NAME: &'static str = "sensor_msgs::msg::dds_::JointState_";
    const TYPE_HASH: &'static str =
        "RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e";
    fn write(&self, w: &mut CdrWriter) {
        self.header.write(w);
        w.strings(&self.name);
        w.f64s(&self.position);
        w.f64s(&self.velocity);
        w.f64s(&self.effort);
    }
    fn read(r: &mut CdrReader<'_>) -> Result<Self> {
        Ok(JointState {
            header: Header::read(r)?,
            name: r.strings("name")?,
            position: r.f64s("position")?,
            velocity: r.f64s("velocity")?,
            effort: r.f64s("effort")?,
        })
    }
}

/// `trajectory_msgs/msg/JointTrajectoryPoint`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointTrajectoryPoint {
    pub positions: Vec<f64>,
    pub velocities: Vec<f64>,
    pub accelerations: Vec<f64>,
    pub effort: Vec<f64>,
    pub time_from_start: Time,
}

/// `trajectory_msgs/msg/JointTrajectory`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointTrajectory {
    pub header: Header,
    pub joint_names: Vec<String>,
    pub points: Vec<JointTrajectoryPoint>,
}

impl RosMessage for JointTrajectory {
    const ROS_NAME: &'static str = "trajectory_msgs/msg/JointTrajectory";
    const DDS_NAME: &'static str = "trajectory_msgs::msg::dds_::JointTrajectory_";
    const TYPE_HASH: &'static str =
        "RIHS01_179b33eba59d676f6d967ac71fe35e7ca2f64b2f3928f4a018cec115e213796e";
    fn write(&self, w: &mut CdrWriter) {
        self.header.write(w);
        w.strings(&self.joint_names);
        w.len(self.points.len());
        for p in &self.points {
            w.f64s(&p.positions);
            w.f64s(&p.velocities);
            w.f64s(&p.accelerations);
            w.f64s(&p.effort);
            p.time_from_start.write(w);
        }
    }
    fn read(r: &mut CdrReader<'_>) -> Result<Self> {
        let header = Header::read(r)?;
        let joint_names = r.strings("joint_names")?;
        let n = r.count(24, "points")?;
        let mut points = Vec::with_capacity(n);
        for _ in 0..n {
            points.push(JointTrajectoryPoint {
                positions: r.f64s("points.positions")?,
                velocities: r.f64s("points.velocities")?,
                accelerations: r.f64s("points.accelerations")?,
                effort: r.f64s("points.effort")?,
                time_from_start: Time::read(r, "points.time_from_start")?,
            });
        }
        Ok(JointTrajectory {
            header,
            joint_names,
            points,
        })
    }
}

/// `std_msgs/msg/MultiArrayDimension`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MultiArrayDimension {
    pub label: String,
    pub size: u32,
    pub stride: u32,
}

/// `std_msgs/msg/Float64MultiArray` (what ros2_control's forward position controller takes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Float64MultiArray {
    pub dim: Vec<MultiArrayDimension>,
    pub data_offset: u32,
    pub data: Vec<f64>,
}

impl RosMessage for Float64MultiArray {
    const ROS_NAME: &'static str = "std_msgs/msg/Float64MultiArray";
    const DDS_NAME: &'static str = "std_msgs::msg::dds_::Float64MultiArray_";
    const TYPE_HASH: &'static str =
        "RIHS01_1025ddc6b9552d191f89ef1a8d2f60f3d373e28b283d8891ddcc974e8c55397f";
    fn write(&self, w: &mut CdrWriter) {
        w.len(self.dim.len());
        for d in &self.dim {
            w.string(&d.label);
            w.u32(d.size);
            w.u32(d.stride);
        }
        w.u32(self.data_offset);
        w.f64s(&self.data);
    }
    fn read(r: &mut CdrReader<'_>) -> Result<Self> {
        let n = r.count(13, "layout.dim")?;
        let mut dim = Vec::with_capacity(n);
        for _ in 0..n {
            dim.push(MultiArrayDimension {
                label: r.string("layout.dim.label")?,
                size: r.u32("layout.dim.size")?,
                stride: r.u32("layout.dim.stride")?,
            });
        }
        Ok(Float64MultiArray {
            dim,
            data_offset: r.u32("layout.data_offset")?,
            data: r.f64s("data")?,
        })
    }
}
