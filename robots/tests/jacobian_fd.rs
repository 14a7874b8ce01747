//! The geometric Jacobian against central finite differences of forward kinematics.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use nalgebra::Vector3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use robots::{load_builtin, Manipulator, RobotModel};

fn check(m: &Manipulator, rng: &mut ChaCha8Rng, what: &str) {
    let h = 1e-6;
    for _ in 0..20 {
        let q: Vec<f64> = m
            .arm_limits()
            .iter()
            .map(|l| rng.gen_range(l.lower.max(-3.0) + 2.0 * h..=l.upper.min(3.0) - 2.0 * h))
            .collect();
        let jac = m.jacobian(&q);
        assert_eq!(jac.ncols(), m.dof());
        for i in 0..m.dof() {
            let (mut plus, mut minus) = (q.clone(), q.clone());
            plus[i] += h;
            minus[i] -= h;
            let (tp, tm) = (m.fk(&plus), m.fk(&minus));
            let linear = (tp.translation.vector - tm.translation.vector) / (2.0 * h);
            // ω dt = log(R(q+h) · R(q−h)ᵀ), expressed in the root frame.
            let angular: Vector3<f64> =
                (tp.rotation * tm.rotation.inverse()).scaled_axis() / (2.0 * h);
            let col = jac.column(i);
            let lin_err = (col.fixed_rows::<3>(0) - linear).norm();
            let ang_err = (col.fixed_rows::<3>(3) - angular).norm();
            assert!(
                lin_err < 1e-6 && ang_err < 1e-6,
                "{what} column {i} at {q:?}: {lin_err:e} {ang_err:e}"
            );
        }
    }
}

#[test]
fn builtin_jacobians_match_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for name in robots::builtin_names() {
        check(&load_builtin(name).unwrap(), &mut rng, name);
    }
}

#[test]
fn prismatic_and_mimic_columns_match_finite_differences() {
    // A prismatic lift, a revolute joint, and a mimic joint on the chain that follows it.
    let urdf = r#"<robot name="lift">
      <link name="base"/><link name="carriage"/><link name="arm"/><link name="wrist"/><link name="ee"/>
      <joint name="lift" type="prismatic"><parent link="base"/><child link="carriage"/>
        <origin xyz="0 0 0.1" rpy="0.2 0 0"/><axis xyz="0 0 1"/>
        <limit lower="0" upper="0.5" effort="100" velocity="0.5"/></joint>
      <joint name="shoulder" type="continuous"><parent link="carriage"/><child link="arm"/>
        <origin xyz="0.1 0 0" rpy="0 0.3 0"/><axis xyz="0 1 1"/></joint>
      <joint name="coupled" type="revolute"><parent link="arm"/><child link="wrist"/>
        <origin xyz="0.3 0 0"/><axis xyz="1 0 0"/>
        <limit lower="-3" upper="3" effort="10" velocity="1"/>
        <mimic joint="shoulder" multiplier="-0.5" offset="0.1"/></joint>
      <joint name="to_ee" type="fixed"><parent link="wrist"/><child link="ee"/>
        <origin xyz="0 0.2 0.1"/></joint>
    </robot>"#;
    let model = RobotModel::from_urdf_str(urdf, "lift.urdf", None).unwrap();
    let m = Manipulator::new(model, "ee").unwrap();
    assert_eq!(m.dof(), 2, "the mimic joint is not an arm joint");
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    check(&m, &mut rng, "lift");
}
