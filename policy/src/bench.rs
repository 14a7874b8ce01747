//! Benchmarks: BC training samples/s on a synthetic dataset with real shapes (the twin of
//! `benches/train_reference.py`, the same model and loop in Python PyTorch), and inference
//! latency per action chunk (one observation, no batching: the robot-computer case).

use std::time::Instant;

use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use crate::bc::{train_bc, BcConfig};
use crate::config::{ModelConfig, ObsMode, OptimConfig};
use crate::dataset::Dataset;
use crate::error::Result;
use crate::features::{proprio_dim, ACTION_DIM, OBJECT_DIM, ZONE_DIM};
use crate::model::ObsBatch;
use crate::obs::Normalizer;
use crate::policy::{Policy, PolicyMeta};
use crate::tokenizer::Tokenizer;

/// Arm joints of the benchmark robot (the UR5e).
pub const BENCH_DOF: usize = 6;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainBenchConfig {
    pub size: String,
    pub obs: ObsMode,
    pub steps: usize,
    pub warmup_steps: usize,
    pub batch_size: usize,
    pub samples: i64,
    pub threads: usize,
    pub seed: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainBench {
    pub samples_per_sec: f64,
    pub steps: usize,
    pub batch_size: usize,
    pub size: String,
    pub obs: ObsMode,
    pub threads: usize,
    pub params: i64,
    pub vocab_size: i64,
    pub final_loss: f64,
    pub wall_s: f64,
    pub ms_per_step: f64,
    pub device: String,
    pub libtorch: String,
    /// Forward + backward FLOPs per sample (analytic: 3 × forward).
    pub train_flops_per_sample: f64,
    /// Tokens per sample.
    pub tokens: i64,
}

/// A vocabulary of 25 words (vocab size 27, as the default instructions give).
fn bench_tokenizer() -> Tokenizer {
    Tokenizer {
        words: (0..25).map(|i| format!("w{i:02}")).collect(),
    }
}

fn bench_meta(obs: ObsMode) -> PolicyMeta {
    let mut sim = sim::SimConfig::default();
    if obs == ObsMode::Rgbd {
        sim.cameras = sim::SimConfig::default_cameras();
    }
    PolicyMeta {
        robot_name: "bench".into(),
        robot_model_hash: String::new(),
        dof: BENCH_DOF,
        skills: Vec::new(),
        sim,
        training: serde_json::Value::Null,
    }
}

/// A synthetic dataset with the real shapes: normal features, token ids with padding.
pub fn synthetic_dataset(policy: &Policy, n: i64) -> Dataset {
    let m = &policy.featurizer.model;
    let cpu = (Kind::Float, Device::Cpu);
    let vocab = policy.featurizer.tokenizer.vocab_size();
    let lang = Tensor::randint_low(2, vocab, [n, m.max_lang_tokens], (Kind::Int64, Device::Cpu));
    let lang = lang.narrow(1, 0, m.max_lang_tokens - 3);
    let lang = Tensor::cat(
        &[lang, Tensor::zeros([n, 3], (Kind::Int64, Device::Cpu))],
        1,
    );
    let valid = |slots: i64| {
        let v = Tensor::rand([n, slots], cpu).gt(0.5);
        v.index_fill(1, &Tensor::from_slice(&[0i64]), 1)
    };
    let state = m.obs == ObsMode::State;
    let success = Tensor::rand([n], cpu).gt(0.5).to_kind(Kind::Float);
    Dataset {
        obs: ObsBatch {
            lang,
            proprio: Tensor::randn([n, policy.featurizer.proprio_dim as i64], cpu),
            objects: state.then(|| {
                (
                    Tensor::randn([n, m.max_objects, OBJECT_DIM as i64], cpu),
                    valid(m.max_objects),
                )
            }),
            zones: state.then(|| {
                (
                    Tensor::randn([n, m.max_zones, ZONE_DIM as i64], cpu),
                    valid(m.max_zones),
                )
            }),
            images: policy
                .featurizer
                .image_hw
                .iter()
                .map(|&(h, w)| Tensor::rand([n, 4, h, w], cpu) - 0.5)
                .collect(),
        },
        actions: Tensor::randn([n, m.chunk, ACTION_DIM as i64], cpu),
        action_valid: Tensor::rand([n, m.chunk], cpu).gt(0.1).to_kind(Kind::Float),
        imitate: success.shallow_clone(),
        success,
        len: n,
        weights: None,
    }
}

fn bench_policy(size: &str, obs: ObsMode, device: Device, seed: u64) -> Result<Policy> {
    let mut model = ModelConfig::preset(size, obs)?;
    model.cameras = vec!["front".into()];
    Policy::build(
        &model,
        bench_tokenizer(),
        Normalizer::identity(proprio_dim(BENCH_DOF)),
        bench_meta(obs),
        device,
        seed,
    )
}

/// Trains `warmup_steps` untimed steps, then times `steps` steps.
pub fn train_throughput(cfg: &TrainBenchConfig, device: Device) -> Result<TrainBench> {
    tch::set_num_threads(cfg.threads.max(1) as i32);
    let mut policy = bench_policy(&cfg.size, cfg.obs, device, cfg.seed)?;
    let data = synthetic_dataset(&policy, cfg.samples);
    let optim = |steps| OptimConfig {
        steps,
        batch_size: cfg.batch_size,
        seed: cfg.seed,
        warmup_steps: 20,
        ..OptimConfig::default()
    };
    let mut quiet = |_: &crate::bc::TrainProgress| {};
    if cfg.warmup_steps > 0 {
        let warm = BcConfig {
            optim: optim(cfg.warmup_steps),
            ..BcConfig::default()
        };
        train_bc(&mut policy, &data, None, &warm, &mut quiet)?;
    }
    let run = BcConfig {
        optim: optim(cfg.steps),
        ..BcConfig::default()
    };
    sync(device);
    let start = Instant::now();
    let report = train_bc(&mut policy, &data, None, &run, &mut quiet)?;
    sync(device);
    let wall_s = start.elapsed().as_secs_f64();
    Ok(TrainBench {
        samples_per_sec: (cfg.steps * cfg.batch_size) as f64 / wall_s,
        steps: cfg.steps,
        batch_size: cfg.batch_size,
        size: cfg.size.clone(),
        obs: cfg.obs,
        threads: cfg.threads,
        params: policy.parameter_count(),
        vocab_size: policy.featurizer.tokenizer.vocab_size(),
        final_loss: report.final_loss,
        wall_s,
        ms_per_step: 1e3 * wall_s / cfg.steps as f64,
        device: crate::device::device_name(device),
        libtorch: "2.13.0".into(),
        train_flops_per_sample: 3.0 * forward_flops(&policy),
        tokens: sequence_length(&policy),
    })
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InferBench {
    pub size: String,
    pub obs: ObsMode,
    pub threads: usize,
    pub iterations: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub mean_ms: f64,
    pub chunks_per_sec: f64,
    pub device: String,
}

/// Latency of one action-chunk inference (batch 1), including featurisation of the batch
/// tensors and the copy of the result to the host.
pub fn inference_latency(
    size: &str,
    obs: ObsMode,
    iterations: usize,
    threads: usize,
    device: Device,
) -> Result<InferBench> {
    tch::set_num_threads(threads.max(1) as i32);
    let policy = bench_policy(size, obs, device, 0)?;
    let data = synthetic_dataset(&policy, 64);
    let mut times = Vec::with_capacity(iterations);
    for i in 0..iterations + 20 {
        let idx = Tensor::from_slice(&[(i % 64) as i64]);
        let start = Instant::now();
        let batch = data.gather(&idx, Device::Cpu);
        let out = tch::no_grad(|| policy.forward(&batch.obs));
        let host: Vec<f32> = Vec::try_from(out.mean.to_device(Device::Cpu).flatten(0, -1))?;
        std::hint::black_box(host);
        if i >= 20 {
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    Ok(InferBench {
        size: size.to_owned(),
        obs,
        threads,
        iterations,
        p50_ms: pct(0.5),
        p99_ms: pct(0.99),
        mean_ms: mean,
        chunks_per_sec: 1e3 / mean,
        device: crate::device::device_name(device),
    })
}

/// Waits for queued GPU work (a no-op on CPU).
pub fn sync(device: Device) {
    if let Device::Cuda(i) = device {
        tch::Cuda::synchronize(i as i64);
    }
}

/// Tokens the trunk sees per sample: 2 readouts, the instruction (one pooled token, or one per
/// word), proprio, then object and zone slots (state) or patch tokens plus one keypoint token
/// per camera (rgbd).
pub fn sequence_length(policy: &Policy) -> i64 {
    let m = &policy.featurizer.model;
    let lang = if m.pool_lang { 1 } else { m.max_lang_tokens };
    let base = 2 + lang + 1;
    match m.obs {
        ObsMode::State => base + m.max_objects + m.max_zones,
        ObsMode::Rgbd => {
            base + policy
                .featurizer
                .image_hw
                .iter()
                .map(|&(h, w)| ((h + 1) / 2 / m.patch) * ((w + 1) / 2 / m.patch) + 1)
                .sum::<i64>()
        }
    }
}

/// Analytic forward FLOPs per sample (multiply-add = 2): the transformer blocks (projections,
/// MLP, attention scores and mixing) and the conv stems; embeddings and heads are negligible.
pub fn forward_flops(policy: &Policy) -> f64 {
    let m = &policy.featurizer.model;
    let (t, d) = (sequence_length(policy) as f64, m.d_model as f64);
    let per_block = t * (2.0 * d * d * (4.0 + 2.0 * m.mlp_ratio as f64)) + 4.0 * t * t * d;
    let mut flops = m.depth as f64 * per_block;
    for &(h, w) in &policy.featurizer.image_hw {
        let grid = (((h + 1) / 2) * ((w + 1) / 2)) as f64;
        let c = m.stem_channels as f64;
        let patches = grid / (m.patch * m.patch) as f64;
        flops += grid * 2.0 * (4.0 * c * 9.0 + c * c * 9.0 + c * crate::vision::KEYPOINTS as f64);
        flops += patches * 2.0 * c * d * (m.patch * m.patch) as f64;
    }
    flops
}
