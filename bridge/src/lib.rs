//! `bridge`: deployment of signed policies to robot controllers over zenoh, with a safety
//! filter in the loop, a simulated arm speaking the same protocol, and ROS 2 (rmw_zenoh)
//! interop. Not a robot driver itself: a real arm's driver (or `sim_robot`) publishes joint
//! state and follows the joint commands. Main types: [`protocol::RobotKeys`] and the wire
//! messages, [`bundle::Bundle`], [`safety::SafetyFilter`], [`controller::ControllerCore`].

pub mod bundle;
pub mod controller;
pub mod error;
pub mod farm;
pub mod keys;
pub mod protocol;
pub mod ros2;
pub mod safety;
pub mod sim_robot;
pub mod transport;

pub use error::{BridgeError, Result};
