//! IK round trip: random q within limits → fk → ik, from home and from a perturbed seed.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use robots::{load_builtin, IkConfig, Manipulator};

const POSES: usize = 200;

fn random_q(m: &Manipulator, rng: &mut ChaCha8Rng) -> Vec<f64> {
    m.arm_limits()
        .iter()
        .map(|l| rng.gen_range(l.lower..=l.upper))
        .collect()
}

struct Stats {
    from_home: usize,
    from_perturbed: usize,
}

fn round_trip(name: &str, seed: u64) -> Stats {
    let m = load_builtin(name).unwrap();
    let cfg = IkConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut stats = Stats {
        from_home: 0,
        from_perturbed: 0,
    };
    let mut iterations = 0;
    for _ in 0..POSES {
        let q_true = random_q(&m, &mut rng);
        let target = m.fk(&q_true);
        let mut perturbed: Vec<f64> = q_true
            .iter()
            .map(|q| q + rng.gen_range(-0.3..0.3))
            .collect();
        m.clamp_arm(&mut perturbed);
        for (seed, count) in [
            (&m.home_q_rad, &mut stats.from_home),
            (&perturbed, &mut stats.from_perturbed),
        ] {
            let sol = m.ik(&target, seed, &cfg);
            iterations += sol.iterations;
            // Whatever happens, the answer stays within the limits and the errors are honest.
            for (q, l) in sol.q_rad.iter().zip(m.arm_limits()) {
                assert!(
                    l.lower <= *q && *q <= l.upper,
                    "{name}: {q} outside [{}, {}]",
                    l.lower,
                    l.upper
                );
            }
            let reached = m.fk(&sol.q_rad);
            let pos_err = (reached.translation.vector - target.translation.vector).norm();
            let rot_err = reached.rotation.angle_to(&target.rotation);
            assert!(
                (pos_err - sol.pos_err_m).abs() < 1e-9 && (rot_err - sol.rot_err_rad).abs() < 1e-6
            );
            if sol.converged {
                assert!(
                    pos_err <= cfg.tol_pos_m && rot_err <= cfg.tol_rot_rad,
                    "{name}: {pos_err} {rot_err}"
                );
                assert!(sol.iterations <= cfg.max_iterations);
                *count += 1;
            }
        }
    }
    eprintln!(
        "{name}: converged from home {}/{POSES}, from perturbed seed {}/{POSES}, mean iterations {:.1}",
        stats.from_home,
        stats.from_perturbed,
        iterations as f64 / (2 * POSES) as f64
    );
    stats
}

#[test]
fn ur5e_ik_round_trip() {
    let s = round_trip("ur5e", 7);
    assert!(
        s.from_home * 100 >= 95 * POSES,
        "from home: {}/{POSES}",
        s.from_home
    );
    assert!(
        s.from_perturbed * 100 >= 95 * POSES,
        "from perturbed: {}/{POSES}",
        s.from_perturbed
    );
}

#[test]
fn panda_ik_round_trip() {
    let s = round_trip("panda", 11);
    assert!(
        s.from_home * 100 >= 95 * POSES,
        "from home: {}/{POSES}",
        s.from_home
    );
    assert!(
        s.from_perturbed * 100 >= 95 * POSES,
        "from perturbed: {}/{POSES}",
        s.from_perturbed
    );
}

#[test]
fn position_only_ik_ignores_orientation() {
    let m = load_builtin("panda").unwrap();
    let cfg = IkConfig {
        orientation_weight: 0.0,
        ..IkConfig::default()
    };
    let mut target = m.fk(&[0.3, -0.2, 0.1, -2.0, 0.2, 1.8, 0.5]);
    target.rotation = nalgebra::UnitQuaternion::from_euler_angles(2.0, 1.0, 0.5);
    let sol = m.ik(&target, &m.home_q_rad, &cfg);
    assert!(sol.converged && sol.pos_err_m <= cfg.tol_pos_m, "{sol:?}");
}

#[test]
fn unreachable_target_returns_best_effort_within_limits() {
    let m = load_builtin("ur5e").unwrap();
    let target = nalgebra::Isometry3::translation(3.0, 0.0, 0.5);
    let sol = m.ik(&target, &m.home_q_rad, &IkConfig::default());
    assert!(!sol.converged);
    assert_eq!(sol.iterations, IkConfig::default().max_iterations);
    assert!(sol.pos_err_m > 1.5 && sol.pos_err_m < 2.5, "{sol:?}");
    // Seeds of the wrong length or with NaN do not panic.
    let sol = m.ik(&target, &[f64::NAN], &IkConfig::default());
    assert_eq!(sol.q_rad.len(), 6);
    // Nor does a NaN target: the answer is simply not converged.
    let nan_target = nalgebra::Isometry3::translation(f64::NAN, 0.0, 0.0);
    assert!(
        !m.ik(&nan_target, &m.home_q_rad, &IkConfig::default())
            .converged
    );
}

#[test]
fn ik_config_defaults_and_serde() {
    let cfg = IkConfig::default();
    assert_eq!(
        (
            cfg.damping,
            cfg.max_iterations,
            cfg.tol_pos_m,
            cfg.tol_rot_rad,
            cfg.max_step_rad,
            cfg.orientation_weight
        ),
        (0.05, 100, 1e-4, 1e-3, 0.2, 1.0)
    );
    // Missing fields take their defaults.
    let partial: IkConfig =
        serde_json::from_str(r#"{"damping": 0.1, "orientation_weight": 0.0}"#).unwrap();
    assert_eq!(
        partial,
        IkConfig {
            damping: 0.1,
            orientation_weight: 0.0,
            ..IkConfig::default()
        }
    );
    let round: IkConfig = serde_json::from_str(&serde_json::to_string(&cfg).unwrap()).unwrap();
    assert_eq!(round, cfg);
}

#[test]
fn servo_steps_stay_near_and_within_velocity_limits() {
    let m = load_builtin("ur5e").unwrap();
    let cfg = IkConfig::default();
    let dt_s = 0.04;
    // A far, unreachable target: the global solver may answer with any configuration, a servo
    // step moves no joint faster than its limit and keeps the targets finite.
    let far = nalgebra::Isometry3::translation(0.2, -0.9, 1.4);
    let mut q = m.home_q_rad.clone();
    for _ in 0..20 {
        let before = q.clone();
        assert!(m.servo_step(&mut q, &far, &cfg, dt_s));
        for ((a, b), l) in before.iter().zip(&q).zip(m.arm_limits()) {
            assert!((b - a).abs() <= l.velocity * dt_s + 1e-12, "{a} -> {b}");
            assert!(b.is_finite() && *b >= l.lower && *b <= l.upper);
        }
    }
    // A small step to a reachable pose lands on it, on the seed's branch.
    let start = m.home_q_rad.clone();
    let mut target = m.fk(&start);
    target.translation.vector.z += 0.01;
    let mut q = start.clone();
    assert!(m.servo_step(&mut q, &target, &cfg, dt_s));
    let moved: f64 = q.iter().zip(&start).map(|(a, b)| (a - b).abs()).sum();
    assert!(moved < 0.1, "{moved} rad for 1 cm");
    assert!((m.fk(&q).translation.vector - target.translation.vector).norm() < 1e-3);
}
