//! ROS 2 interop through rmw_zenoh, without a DDS bridge: CDR for the messages ros2_control
//! speaks (`cdr.rs`, `msgs.rs`), rmw_zenoh's keys, attachments and liveliness tokens
//! (`rmw.rs`), and the controller's ROS 2 I/O (`io.rs`): joint state from
//! `sensor_msgs/JointState`, commands to `trajectory_msgs/JointTrajectory` or
//! `std_msgs/Float64MultiArray`.

pub mod cdr;
pub mod io;
pub mod msgs;
pub mod rmw;

pub use msgs::{Float64MultiArray, JointState, JointTrajectory, RosMessage};
pub use rmw::{Attachment, RosNode};
