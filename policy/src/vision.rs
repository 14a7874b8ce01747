//! The per-camera image encoder of rgbd mode: a stride-2 conv stem, then (a) patch tokens
//! (a stride-`patch` conv with learned positions) and (b) one keypoint token from a spatial
//! soft-argmax (Levine et al., 2016): each of `KEYPOINTS` feature maps becomes its expected
//! image coordinates, which localises targets to sub-patch precision.

use tch::nn;
use tch::{Kind, Tensor};

use crate::config::ModelConfig;

/// Feature maps turned into (x, y) keypoints.
pub const KEYPOINTS: i64 = 16;

#[derive(Debug)]
pub struct CameraEncoder {
    conv1: nn::Conv2D,
    conv2: nn::Conv2D,
    patch: nn::Conv2D,
    pos: Tensor,
    keypoint_maps: nn::Conv2D,
    keypoint_in: nn::Linear,
    /// Stem output size (h, w).
    grid: (i64, i64),
}

impl CameraEncoder {
    pub fn new(p: &nn::Path, c: &ModelConfig, (h, w): (i64, i64)) -> CameraEncoder {
        let ch = c.stem_channels;
        let conv = |name: &str, i, o, k, stride, padding| {
            nn::conv2d(
                p / name,
                i,
                o,
                k,
                nn::ConvConfig {
                    stride,
                    padding,
                    ..Default::default()
                },
            )
        };
        let grid = ((h + 1) / 2, (w + 1) / 2);
        let tokens = (grid.0 / c.patch) * (grid.1 / c.patch);
        CameraEncoder {
            conv1: conv("conv1", 4, ch, 3, 2, 1),
            conv2: conv("conv2", ch, ch, 3, 1, 1),
            patch: conv("patch", ch, c.d_model, c.patch, c.patch, 0),
            pos: p.var(
                "pos",
                &[tokens, c.d_model],
                nn::Init::Randn {
                    mean: 0.0,
                    stdev: 0.02,
                },
            ),
            keypoint_maps: conv("keypoint_maps", ch, KEYPOINTS, 1, 1, 0),
            keypoint_in: nn::linear(
                p / "keypoint_in",
                2 * KEYPOINTS,
                c.d_model,
                Default::default(),
            ),
            grid,
        }
    }

    /// `image`: [B, 4, H, W] → (patch tokens [B, N, d], keypoint token [B, 1, d]).
    pub fn forward(&self, image: &Tensor) -> (Tensor, Tensor) {
        let f = image.apply(&self.conv1).gelu("tanh");
        let f = &f + f.apply(&self.conv2).gelu("tanh");
        let patches = f.apply(&self.patch).flatten(2, 3).transpose(1, 2) + &self.pos;
        let (gh, gw) = self.grid;
        let b = image.size()[0];
        let attention = f
            .apply(&self.keypoint_maps)
            .view([b, KEYPOINTS, gh * gw])
            .softmax(-1, Kind::Float)
            .view([b, KEYPOINTS, gh, gw]);
        let device = image.device();
        let ys = Tensor::linspace(-1.0, 1.0, gh, (Kind::Float, device));
        let xs = Tensor::linspace(-1.0, 1.0, gw, (Kind::Float, device));
        let ex = (attention.sum_dim_intlist(2, false, Kind::Float) * xs).sum_dim_intlist(
            -1,
            false,
            Kind::Float,
        );
        let ey = (attention.sum_dim_intlist(3, false, Kind::Float) * ys).sum_dim_intlist(
            -1,
            false,
            Kind::Float,
        );
        let keypoints = Tensor::cat(&[ex, ey], 1)
            .to_kind(patches.kind())
            .apply(&self.keypoint_in)
            .unsqueeze(1);
        (patches, keypoints)
    }
}
