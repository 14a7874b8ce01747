//! Camera frames → PNG bytes: colour as 8-bit RGB, depth as 16-bit grey in millimetres (0 =
//! no reading; farther than 65.535 m saturates).

use crate::camera::CameraFrame;

fn encode(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(color);
        encoder.set_depth(depth);
        encoder.set_compression(png::Compression::Fast);
        // Writing into a Vec cannot fail for a header and data of the declared size.
        if let Ok(mut writer) = encoder.write_header() {
            let _ = writer.write_image_data(data);
        }
    }
    out
}

/// The frame's colour image as an RGB PNG.
pub fn rgb_png(frame: &CameraFrame) -> Vec<u8> {
    encode(
        frame.width,
        frame.height,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &frame.rgb,
    )
}

/// Depth in millimetres, rounded and clamped to u16.
pub fn depth_mm(depth_m: f32) -> u16 {
    (f64::from(depth_m) * 1000.0)
        .round()
        .clamp(0.0, f64::from(u16::MAX)) as u16
}

/// The frame's depth as a 16-bit greyscale PNG in millimetres (PNG samples are big-endian).
pub fn depth_png(frame: &CameraFrame) -> Vec<u8> {
    let data: Vec<u8> = frame
        .depth_m
        .iter()
        .flat_map(|&d| depth_mm(d).to_be_bytes())
        .collect();
    encode(
        frame.width,
        frame.height,
        png::ColorType::Grayscale,
        png::BitDepth::Sixteen,
        &data,
    )
}

/// Pixel values per channel, colour scaled to [0, 1] (/255), depth in millimetres (LeRobot
/// does not scale depth maps), every `stride`-th pixel (statistics need a sample, not every
/// pixel of every frame).
pub fn channel_samples(frames: &[CameraFrame], depth: bool, stride: usize) -> Vec<Vec<f64>> {
    let stride = stride.max(1);
    let mut channels = vec![Vec::new(); if depth { 1 } else { 3 }];
    for frame in frames {
        if depth {
            channels[0].extend(
                frame
                    .depth_m
                    .iter()
                    .step_by(stride)
                    .map(|&d| f64::from(depth_mm(d))),
            );
        } else {
            for px in frame.rgb.chunks_exact(3).step_by(stride) {
                for (c, &v) in channels.iter_mut().zip(px) {
                    c.push(f64::from(v) / 255.0);
                }
            }
        }
    }
    channels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_round_trips_in_millimetres() {
        let mut frame = CameraFrame::new(2, 1);
        frame.depth_m = vec![0.5, 1.2345];
        let bytes = depth_png(&frame);
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap_or_else(|e| panic!("{e}"));
        let mut buf = vec![0; reader.output_buffer_size().unwrap_or(0)];
        let info = reader
            .next_frame(&mut buf)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
        assert_eq!(
            &buf[..4],
            &[500u16.to_be_bytes(), 1235u16.to_be_bytes()].concat()[..]
        );
    }
}
