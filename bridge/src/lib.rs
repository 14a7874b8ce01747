//! `bridge`: deployment of signed policies to robot controllers over zenoh, with a safety
//! filter in the loop, a simulated arm speaking the same protocol, and ROS 2 (rmw_zenoh)
//! interop. Its contents arrive with the bridge issue; today it only names the robot models
//! it will serve.

pub use robots::{builtin_names, load_manipulator, Manipulator};
