//! Policy bundles: a signed bundle from a trusted key for this robot is accepted and loads;
//! unsigned, untrusted, tampered, wrong-robot and malformed bundles are rejected with a reason
//! that says which.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use bridge::bundle::{self, Bundle, BundleInfo};
use bridge::controller::prepare_bundle;
use bridge::safety::SafetyConfig;
use policy::obs::Normalizer;
use policy::{ModelConfig, ObsMode, Policy};

fn ur5e() -> Arc<robots::Manipulator> {
    Arc::new(robots::load_manipulator("ur5e", None).unwrap())
}

/// A checkpoint of an untrained tiny policy for `robot` in `dir`.
fn checkpoint(robot: &Arc<robots::Manipulator>, dir: &std::path::Path) {
    let model = ModelConfig::preset("tiny", ObsMode::State).unwrap();
    let tokenizer = policy::tokenizer::Tokenizer::build(["reach the red cube"]);
    let sim = sim::SimConfig::default();
    let proprio = policy::features::proprio_dim(robot.dof());
    let p = Policy::new(
        &model,
        tokenizer,
        Normalizer::identity(proprio),
        robot,
        &sim,
        tch::Device::Cpu,
        0,
    )
    .unwrap();
    policy::checkpoint::save(&p, dir).unwrap();
}

fn info() -> BundleInfo {
    BundleInfo {
        skill: "reach".into(),
        source: "test".into(),
        heldout_success: Some(0.9),
        safety: SafetyConfig::default(),
    }
}

fn rejection(bytes: &[u8], trusted: &[ed25519_dalek::VerifyingKey]) -> String {
    prepare_bundle(bytes, trusted, &ur5e(), tch::Device::Cpu)
        .unwrap_err()
        .to_string()
}

#[test]
fn only_signed_trusted_untampered_bundles_for_this_robot_load() {
    let robot = ur5e();
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("ckpt");
    checkpoint(&robot, &ckpt);
    let ops = bridge::keys::generate();
    let stranger = bridge::keys::generate();
    let trusted = [ops.verifying_key()];

    let good = bundle::build(&ckpt, &info(), Some(&ops)).unwrap();
    let prepared = prepare_bundle(&good, &trusted, &robot, tch::Device::Cpu).unwrap();
    assert_eq!(prepared.skill, "reach");
    assert_eq!(
        prepared.bundle_hash,
        Bundle::parse(&good).unwrap().content_hash
    );

    let unsigned = bundle::build(&ckpt, &info(), None).unwrap();
    assert!(rejection(&unsigned, &trusted).contains("unsigned"));

    let foreign = bundle::build(&ckpt, &info(), Some(&stranger)).unwrap();
    assert!(rejection(&foreign, &trusted).contains("does not trust"));

    // Flip one byte of the weights (near the end of the content, before the signature).
    let mut tampered = good.clone();
    let at = good.len() - 97 - 10;
    tampered[at] ^= 0x40;
    assert!(rejection(&tampered, &trusted).contains("signature does not match"));

    // Re-signing a changed manifest does not help a bundle made for another robot.
    let panda = Arc::new(robots::load_manipulator("panda", None).unwrap());
    let err = prepare_bundle(&good, &trusted, &panda, tch::Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("built for robot"), "{err}");

    let mut trailing = good.clone();
    trailing.push(0);
    assert!(rejection(&trailing, &trusted).contains("trailing"));
    assert!(rejection(&good[..good.len() / 2], &trusted).contains("truncated"));
    assert!(rejection(b"not a bundle at all", &trusted).contains("magic"));
}

#[test]
fn key_files_round_trip_and_bad_ones_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let key = bridge::keys::generate();
    let (secret, public) = bridge::keys::save_pair(&key, &dir.path().join("ops")).unwrap();
    assert_eq!(
        bridge::keys::load_signing_key(&secret).unwrap().to_bytes(),
        key.to_bytes()
    );
    assert_eq!(
        bridge::keys::load_verifying_key(&public).unwrap(),
        key.verifying_key()
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&secret).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let err = bridge::keys::save_pair(&key, &dir.path().join("ops"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("refusing to overwrite"), "{err}");
    // The secret key where a public one is expected.
    let err = bridge::keys::load_verifying_key(&secret)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ops.key") && err.contains("other half"),
        "{err}"
    );
    let bad = dir.path().join("bad.pub");
    std::fs::write(&bad, "coevolve-ed25519-public-v1 zz\n").unwrap();
    let err = bridge::keys::load_verifying_key(&bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.pub") && err.contains("hex"), "{err}");
}
