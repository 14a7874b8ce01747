//! Task synthesis: new variants around signal-marked ones. A mutation perturbs the goal
//! object's position, yaw, size (cubes, boxes and cylinders, their proportions kept), mass and
//! friction, the target zone's position and the
//! lift height, each clamped to the skill's generator ranges, keeps the goal object clear of
//! the other props, and re-validates the `TaskSpec`. `task_params` places a variant in the
//! [0, 1]-scaled parameter space the rarity signal measures.

use rand::Rng;
use serde::{Deserialize, Serialize};
use sim::library::{Range, TaskRanges};
use sim::task::{ObjectKind, TaskSpec};

/// Standard deviations of one mutation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MutationScale {
    pub position_m: f64,
    pub yaw_rad: f64,
    /// Relative (fraction of the current value).
    pub size: f64,
    pub mass: f64,
    pub friction: f64,
    pub target_m: f64,
    pub lift_height_m: f64,
}

impl Default for MutationScale {
    fn default() -> Self {
        MutationScale {
            position_m: 0.03,
            yaw_rad: 0.3,
            size: 0.08,
            mass: 0.2,
            friction: 0.1,
            target_m: 0.03,
            lift_height_m: 0.015,
        }
    }
}

fn gauss(rng: &mut impl Rng, sigma: f64) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    sigma * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn clamp(v: f64, r: &Range) -> f64 {
    v.clamp(r.lo.min(r.hi), r.hi.max(r.lo))
}

/// A mutated copy of `task` (name suffixed `~<n>`), or `None` when no valid mutation was found
/// in a few tries.
pub fn mutate(
    task: &TaskSpec,
    ranges: &TaskRanges,
    scale: &MutationScale,
    rng: &mut impl Rng,
) -> Option<TaskSpec> {
    let goal = task.goal_object_index();
    for _ in 0..16 {
        let mut t = task.clone();
        let top = t.table.top_z_m;
        if let Some(o) = goal.and_then(|i| t.objects.get_mut(i)).filter(|o| !o.fixed) {
            let p = &mut o.pose.xyz_m;
            p[0] = clamp(p[0] + gauss(rng, scale.position_m), &ranges.object_x_m);
            p[1] = clamp(p[1] + gauss(rng, scale.position_m), &ranges.object_y_m);
            o.pose.rpy_rad[2] = clamp(
                o.pose.rpy_rad[2] + gauss(rng, scale.yaw_rad),
                &ranges.object_yaw_rad,
            );
            if let Some(size) = family_size(&o.kind) {
                let s = clamp(size * (1.0 + gauss(rng, scale.size)), &ranges.cube_size_m);
                resize(&mut o.kind, size, s);
                p[2] = top + o.kind.half_extents_m()[2];
            }
            o.mass_kg = clamp(
                o.mass_kg * (1.0 + gauss(rng, scale.mass)),
                &ranges.object_mass_kg,
            );
            o.friction = clamp(
                o.friction + gauss(rng, scale.friction),
                &ranges.object_friction,
            );
        }
        let zone = t.goal.zone.clone();
        if let Some(z) = zone.and_then(|n| t.zones.iter_mut().find(|z| z.name == n)) {
            z.center_m[0] = clamp(
                z.center_m[0] + gauss(rng, scale.target_m),
                &ranges.object_x_m,
            );
            z.center_m[1] = clamp(
                z.center_m[1] + gauss(rng, scale.target_m),
                &ranges.object_y_m,
            );
        }
        t.goal.lift_height_m = clamp(
            t.goal.lift_height_m + gauss(rng, scale.lift_height_m),
            &ranges.lift_height_m,
        );
        if clear_of_others(&t, goal, ranges.min_separation_m) && t.validate().is_ok() {
            let n: u32 = rng.gen();
            t.name = format!("{}~{n:08x}", task.name);
            return Some(t);
        }
    }
    None
}

/// The size the family's `cube_size_m` range draws: a cube's edge, a box's short side, a
/// cylinder's diameter (none for the kitchen's props).
fn family_size(kind: &ObjectKind) -> Option<f64> {
    match kind {
        ObjectKind::Cube { size_m } => Some(size_m[0].min(size_m[1])),
        ObjectKind::Cylinder { radius_m, .. } => Some(2.0 * radius_m),
        _ => None,
    }
}

/// Scales a cube, box or cylinder from its [`family_size`] `from` to `to` in every dimension
/// (its proportions kept; a side equal to `from` becomes exactly `to`).
fn resize(kind: &mut ObjectKind, from: f64, to: f64) {
    let scale = |d: f64| if d == from { to } else { d * to / from };
    match kind {
        ObjectKind::Cube { size_m } => *size_m = size_m.map(scale),
        ObjectKind::Cylinder { radius_m, height_m } => {
            *radius_m = to / 2.0;
            *height_m = scale(*height_m);
        }
        _ => {}
    }
}

/// The goal object and the target zone are at least `min_sep` (xy) from every other prop.
fn clear_of_others(t: &TaskSpec, goal: Option<usize>, min_sep: f64) -> bool {
    let xy = |p: [f64; 3]| [p[0], p[1]];
    let mut keep_apart: Vec<[f64; 2]> = Vec::new();
    if let Some(g) = goal.and_then(|i| t.objects.get(i)) {
        keep_apart.push(xy(g.pose.xyz_m));
    }
    if let Some(z) = t.goal_zone() {
        keep_apart.push(xy(z.center_m));
    }
    let others: Vec<[f64; 2]> = t
        .objects
        .iter()
        .enumerate()
        .filter(|(i, o)| Some(*i) != goal && !o.fixed)
        .map(|(_, o)| xy(o.pose.xyz_m))
        .collect();
    let far = |a: &[f64; 2], b: &[f64; 2]| {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt() >= min_sep
    };
    let pairs_ok = keep_apart.len() < 2 || far(&keep_apart[0], &keep_apart[1]);
    pairs_ok && keep_apart.iter().all(|a| others.iter().all(|b| far(a, b)))
}

/// The variant's parameters scaled to [0, 1] by `ranges`: goal object x, y, yaw, size, mass,
/// friction; zone x, y; lift height (absent ones read 0.5).
pub fn task_params(task: &TaskSpec, ranges: &TaskRanges) -> Vec<f64> {
    let unit = |v: f64, r: &Range| {
        if r.hi > r.lo {
            ((v - r.lo) / (r.hi - r.lo)).clamp(0.0, 1.0)
        } else {
            0.5
        }
    };
    let goal = task.goal_object_index().and_then(|i| task.objects.get(i));
    let mut p = match goal {
        Some(o) => {
            let size = family_size(&o.kind).map_or(0.5, |s| unit(s, &ranges.cube_size_m));
            vec![
                unit(o.pose.xyz_m[0], &ranges.object_x_m),
                unit(o.pose.xyz_m[1], &ranges.object_y_m),
                unit(o.pose.rpy_rad[2], &ranges.object_yaw_rad),
                size,
                unit(o.mass_kg, &ranges.object_mass_kg),
                unit(o.friction, &ranges.object_friction),
            ]
        }
        None => vec![0.5; 6],
    };
    match task.goal_zone() {
        Some(z) => p.extend([
            unit(z.center_m[0], &ranges.object_x_m),
            unit(z.center_m[1], &ranges.object_y_m),
        ]),
        None => p.extend([0.5, 0.5]),
    }
    p.push(unit(task.goal.lift_height_m, &ranges.lift_height_m));
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use sim::library::sample_task;
    use sim::SkillKind;

    #[test]
    fn wide_family_mutations_keep_shapes_and_proportions() {
        let ranges = TaskRanges::wide();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let mut kinds = [0usize; 2];
        for _ in 0..60 {
            let parent = sample_task(SkillKind::Lift, &ranges, &mut rng);
            let child = mutate(&parent, &ranges, &MutationScale::default(), &mut rng)
                .expect("a valid mutation");
            child.validate().unwrap();
            let ratio = |k: &ObjectKind| match k {
                ObjectKind::Cube { size_m } => size_m[0] / size_m[1],
                ObjectKind::Cylinder { radius_m, height_m } => height_m / radius_m,
                _ => f64::NAN,
            };
            let (a, b) = (&parent.objects[0].kind, &child.objects[0].kind);
            assert_eq!(std::mem::discriminant(a), std::mem::discriminant(b));
            assert!((ratio(a) - ratio(b)).abs() < 1e-9, "{a:?} → {b:?}");
            let half = b.half_extents_m()[2];
            assert!((child.objects[0].pose.xyz_m[2] - child.table.top_z_m - half).abs() < 1e-12);
            kinds[usize::from(b.is_round())] += 1;
        }
        assert!(kinds[0] > 0 && kinds[1] > 0, "{kinds:?}");
    }

    #[test]
    fn mutations_stay_valid_in_range_and_near_their_parent() {
        let ranges = TaskRanges::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for skill in [
            SkillKind::Reach,
            SkillKind::Lift,
            SkillKind::Place,
            SkillKind::Stack,
        ] {
            for _ in 0..20 {
                let parent = sample_task(skill, &ranges, &mut rng);
                let child = mutate(&parent, &ranges, &MutationScale::default(), &mut rng)
                    .expect("a valid mutation");
                child.validate().unwrap();
                assert!(child.name.starts_with(&parent.name) && child.name != parent.name);
                let (a, b) = (task_params(&parent, &ranges), task_params(&child, &ranges));
                assert!(b.iter().all(|v| (0.0..=1.0).contains(v)));
                assert_eq!(a.len(), b.len());
                // Near its parent: the goal object moves a few σ at most (σ = 3 cm).
                let goal = parent.goal_object_index();
                if let Some(i) = goal {
                    let (p, c) = (parent.objects[i].pose.xyz_m, child.objects[i].pose.xyz_m);
                    let d = ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2)).sqrt();
                    assert!(d < 0.2, "{skill:?}: moved {d} m");
                }
                assert_eq!(child.objects.len(), parent.objects.len());
            }
        }
    }
}
