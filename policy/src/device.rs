//! Device selection: `auto` (CUDA when libtorch sees a GPU, else CPU), `cpu`, `cuda`, `cuda:N`.

use tch::Device;

use crate::error::{PolicyError, Result};

pub fn parse_device(text: &str) -> Result<Device> {
    let cuda = |i: usize| {
        if tch::Cuda::is_available() && i < tch::Cuda::device_count().max(0) as usize {
            Ok(Device::Cuda(i))
        } else {
            Err(PolicyError::Device(format!(
                "{text} (libtorch sees {} CUDA devices)",
                if tch::Cuda::is_available() {
                    tch::Cuda::device_count()
                } else {
                    0
                }
            )))
        }
    };
    match text {
        "auto" => Ok(Device::cuda_if_available()),
        "cpu" => Ok(Device::Cpu),
        "cuda" => cuda(0),
        other => match other.strip_prefix("cuda:").map(str::parse::<usize>) {
            Some(Ok(i)) => cuda(i),
            _ => Err(PolicyError::Device(other.to_owned())),
        },
    }
}

/// A short name for reports.
pub fn device_name(device: Device) -> String {
    match device {
        Device::Cpu => "cpu".to_owned(),
        Device::Cuda(i) => format!("cuda:{i}"),
        other => format!("{other:?}").to_lowercase(),
    }
}
