//! Checkpoints: a save/load round trip gives bit-identical actions; the weights load in Python's
//! `safetensors` package with the same names, shapes and values; corrupt or mismatched
//! checkpoints give errors that say what is wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use policy::bc::{train_bc, BcConfig};
use policy::checkpoint::{self, CONFIG_FILE, WEIGHTS_FILE};
use policy::obs::ObsRow;
use policy::{ObsMode, OptimConfig};
use sim::SkillKind;

fn trained_policy() -> (policy::Policy, Vec<ObsRow>) {
    let robot = common::ur5e();
    let (episodes, config) = common::demos(&robot, SkillKind::Lift, 4, 7);
    let (mut policy, data) = common::policy_for(&episodes, &robot, &config, "tiny", ObsMode::State);
    let cfg = BcConfig {
        optim: OptimConfig {
            steps: 10,
            batch_size: 32,
            ..OptimConfig::default()
        },
        ..BcConfig::default()
    };
    train_bc(&mut policy, &data, None, &cfg, &mut |_| {}).unwrap();
    let rows = episodes[0]
        .steps
        .iter()
        .enumerate()
        .take(5)
        .map(|(t, _)| {
            let obs =
                policy::features::observation_before(&episodes[0], t, &robot.home_q_rad, vec![]);
            policy.featurizer.row(&obs, &episodes[0].task).unwrap()
        })
        .collect();
    (policy, rows)
}

#[test]
fn round_trip_gives_identical_actions_and_python_reads_the_weights() {
    let (policy, rows) = trained_policy();
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("ckpt");
    checkpoint::save(&policy, &ckpt).unwrap();
    // Saving again over it replaces it atomically (no leftovers beside it).
    checkpoint::save(&policy, &ckpt).unwrap();
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("ckpt")]);

    let loaded = checkpoint::load(&ckpt, tch::Device::Cpu).unwrap();
    let refs: Vec<&ObsRow> = rows.iter().collect();
    let a = policy.infer(&refs).unwrap();
    let b = loaded.infer(&refs).unwrap();
    assert_eq!(a, b, "loaded policy acts differently");
    assert_eq!(loaded.featurizer.tokenizer, policy.featurizer.tokenizer);
    assert_eq!(loaded.normalizer, policy.normalizer);

    // Python's safetensors sees the same tensors.
    let python = std::env::var("COEVOLVE_PYTHON").unwrap_or_else(|_| {
        panic!("COEVOLVE_PYTHON is not set: run scripts/test.sh (it sources scripts/torch-env.sh)")
    });
    let script = r#"
import json, sys
from safetensors.numpy import load_file
t = load_file(sys.argv[1])
print(json.dumps({k: [list(v.shape), float(v.astype("float64").sum())] for k, v in t.items()}))
"#;
    let out = Command::new(python)
        .args(["-c", script])
        .arg(ckpt.join(WEIGHTS_FILE))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: BTreeMap<String, (Vec<i64>, f64)> = serde_json::from_slice(&out.stdout).unwrap();
    let ours: BTreeMap<String, (Vec<i64>, f64)> = policy
        .vs
        .variables()
        .into_iter()
        .map(|(k, v)| {
            (
                k,
                (
                    v.size(),
                    v.to_kind(tch::Kind::Double)
                        .sum(tch::Kind::Double)
                        .double_value(&[]),
                ),
            )
        })
        .collect();
    assert_eq!(
        seen.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>()
    );
    for (k, (shape, sum)) in &ours {
        let (py_shape, py_sum) = &seen[k];
        assert_eq!(shape, py_shape, "{k}");
        assert!(
            (sum - py_sum).abs() <= 1e-4 * (1.0 + sum.abs()),
            "{k}: {sum} vs {py_sum}"
        );
    }
}

#[test]
fn corrupt_and_mismatched_checkpoints_are_named() {
    let (policy, _) = trained_policy();
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("ckpt");
    checkpoint::save(&policy, &ckpt).unwrap();

    // A flipped byte in the weights.
    let weights = ckpt.join(WEIGHTS_FILE);
    let mut bytes = std::fs::read(&weights).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x40;
    std::fs::write(&weights, &bytes).unwrap();
    let err = checkpoint::load(&ckpt, tch::Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("SHA-256 mismatch") && err.contains(WEIGHTS_FILE),
        "{err}"
    );

    // A config whose architecture does not match the weights (hash updated to pass).
    checkpoint::save(&policy, &ckpt).unwrap();
    let cfg_path = ckpt.join(CONFIG_FILE);
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    cfg["model"]["depth"] = serde_json::json!(3);
    std::fs::write(&cfg_path, serde_json::to_string(&cfg).unwrap()).unwrap();
    let err = checkpoint::load(&ckpt, tch::Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("block2") && err.contains("missing"), "{err}");

    // Not a policy at all.
    std::fs::write(&cfg_path, "{\"format\": \"something\"}").unwrap();
    let err = checkpoint::load(&ckpt, tch::Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(CONFIG_FILE) && err.contains("invalid policy config"),
        "{err}"
    );

    // Missing directory.
    let err = checkpoint::load(&dir.path().join("nope"), tch::Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("nope"), "{err}");
}

/// Raw-unit action means and standard deviations of `policy` on `rows`.
fn raw_actions(policy: &policy::Policy, rows: &[ObsRow]) -> (Vec<f32>, Vec<f32>) {
    let refs: Vec<&ObsRow> = rows.iter().collect();
    let out = policy.infer(&refs).unwrap();
    let s = &policy.normalizer.actions;
    let dim = s.mean.len();
    let mean = out
        .mean
        .iter()
        .enumerate()
        .map(|(i, a)| a * s.std[i % dim] + s.mean[i % dim])
        .collect();
    let std = out
        .log_std
        .iter()
        .enumerate()
        .map(|(i, l)| l.exp() * s.std[i % dim])
        .collect();
    (mean, std)
}

#[test]
fn renormalizing_keeps_the_actions_on_the_old_data() {
    let (mut policy, rows) = trained_policy();
    let robot = common::ur5e();
    // The grown pool: the policy's own lift demonstrations plus reach ones.
    let (mut pool, config) = common::demos(&robot, SkillKind::Lift, 4, 7);
    pool.extend(common::demos(&robot, SkillKind::Reach, 4, 11).0);
    let mut raw = policy::dataset::RawSamples::default();
    for e in &pool {
        raw.push_episode(e, &policy.featurizer, &robot, &config)
            .unwrap();
    }
    let new = raw.fit_normalizer(&policy.featurizer);
    assert_ne!(
        new, policy.normalizer,
        "the test needs different statistics"
    );
    let (mean_before, std_before) = raw_actions(&policy, &rows);
    let old = policy.normalizer.actions.clone();
    policy.renormalize(new.clone()).unwrap();
    assert_eq!(policy.normalizer, new);
    let (mean_after, std_after) = raw_actions(&policy, &rows);
    // The stored log-std stays inside the clamp, where it still gets gradients.
    let log_std = policy.vs.variables()["log_std"].shallow_clone();
    assert!(log_std.min().double_value(&[]) >= policy::model::LOG_STD_MIN);
    assert!(log_std.max().double_value(&[]) <= policy::model::LOG_STD_MAX);
    for (i, (a, b)) in mean_before.iter().zip(&mean_after).enumerate() {
        assert!(
            (a - b).abs() <= 1e-3 * (1.0 + a.abs()),
            "mean {i}: {a} vs {b}"
        );
    }
    // The spread of the actions is kept where the data did not spread wider; where it did,
    // the std is kept in normalised units (never narrowed), so it widens with the data.
    let dim = old.std.len();
    let mut widened = 0;
    for (i, (a, b)) in std_before.iter().zip(&std_after).enumerate() {
        let growth = new.actions.std[i % dim] / old.std[i % dim];
        let expected = if growth > 1.0 { a * growth } else { *a };
        widened += usize::from(growth > 1.0 + 1e-6);
        assert!(
            (expected - b).abs() <= 1e-3 * (1.0 + expected.abs()),
            "std {i}: {a} → {b}, expected {expected} (data spread ×{growth})"
        );
    }
    assert!(widened > 0, "the test needs an action that spreads wider");
}

#[test]
fn blending_interpolates_the_weights_between_two_policies() {
    let (policy, rows) = trained_policy();
    // Another policy of the same architecture, with other weights and another normaliser.
    let robot = common::ur5e();
    let mut other = policy.frozen_copy().unwrap();
    tch::manual_seed(3);
    tch::no_grad(|| {
        for (_, w) in other.vs.variables() {
            let noisy = &w + w.randn_like() * 0.05;
            w.shallow_clone().copy_(&noisy);
        }
    });
    let (mut pool, config) = common::demos(&robot, SkillKind::Reach, 4, 11);
    pool.extend(common::demos(&robot, SkillKind::Lift, 2, 7).0);
    let mut raw = policy::dataset::RawSamples::default();
    for e in &pool {
        raw.push_episode(e, &other.featurizer, &robot, &config)
            .unwrap();
    }
    other
        .renormalize(raw.fit_normalizer(&other.featurizer))
        .unwrap();
    assert_ne!(other.normalizer, policy.normalizer);

    let (mean_self, _) = raw_actions(&policy, &rows);
    let (mean_other, _) = raw_actions(&other, &rows);
    let close = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-3 * (1.0 + x.abs()))
    };
    assert!(
        !close(&mean_self, &mean_other),
        "the test needs two policies"
    );
    let all = policy.blended_with(&other, 1.0).unwrap();
    assert!(close(&raw_actions(&all, &rows).0, &mean_self));
    let none = policy.blended_with(&other, 0.0).unwrap();
    assert_eq!(none.normalizer, policy.normalizer);
    assert!(close(&raw_actions(&none, &rows).0, &mean_other));
    // Halfway: every weight is the mean of the two (the other one in this normaliser).
    let half = policy.blended_with(&other, 0.5).unwrap();
    let mut base = other.frozen_copy().unwrap();
    base.renormalize(policy.normalizer.clone()).unwrap();
    let (a, b, h) = (
        policy.vs.variables(),
        base.vs.variables(),
        half.vs.variables(),
    );
    for (name, w) in &h {
        let expected = (&a[name] + &b[name]) * 0.5;
        let err = (w - expected).abs().max().double_value(&[]);
        assert!(err < 1e-6, "{name}: {err}");
    }

    let err = policy.blended_with(&other, 1.5).unwrap_err().to_string();
    assert!(err.contains("alpha") && err.contains("1.5"), "{err}");
    let (episodes, config) = common::demos(&robot, SkillKind::Lift, 1, 7);
    let (small, _) = common::policy_for(&episodes, &robot, &config, "small", ObsMode::State);
    let err = policy.blended_with(&small, 0.5).unwrap_err().to_string();
    assert!(err.contains("different model configurations"), "{err}");
}
