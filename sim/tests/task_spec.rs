//! TaskSpec validation names the bad field; every default family validates and round-trips.

use rand::SeedableRng;
use sim::library::{sample_task, TaskRanges};
use sim::{SkillKind, TaskSpec};

#[test]
fn default_families_validate_and_round_trip() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for skill in SkillKind::ALL {
        for _ in 0..20 {
            let t = sample_task(skill, &TaskRanges::default(), &mut rng);
            t.validate().unwrap();
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(TaskSpec::from_json(&json, "mem").unwrap(), t);
        }
    }
}

/// The wide families: every variant valid and round-tripping; cubes, boxes and cylinders of
/// 3–7 cm, 0.05–1 kg, friction 0.3–1.2, on the table; at most one distractor, clear of the goal
/// object; the arm's start offsets within their spread. The easy preset is the default.
#[test]
fn wide_families_span_shapes_sizes_masses_and_starts() {
    assert_eq!(TaskRanges::preset("easy").unwrap(), TaskRanges::default());
    assert!(TaskRanges::preset("huge")
        .unwrap_err()
        .contains("easy or wide"));
    let ranges = TaskRanges::wide();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (mut cubes, mut boxes, mut cylinders, mut distracted) = (0, 0, 0, 0);
    for skill in [
        SkillKind::Reach,
        SkillKind::Lift,
        SkillKind::Place,
        SkillKind::Stack,
    ] {
        for _ in 0..100 {
            let t = sample_task(skill, &ranges, &mut rng);
            t.validate().unwrap();
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(TaskSpec::from_json(&json, "mem").unwrap(), t);
            let goal = &t.objects[0];
            let h = goal.kind.half_extents_m();
            match goal.kind {
                sim::task::ObjectKind::Cube { size_m } if size_m[0] == size_m[1] => cubes += 1,
                sim::task::ObjectKind::Cube { .. } => boxes += 1,
                sim::task::ObjectKind::Cylinder { .. } => cylinders += 1,
                _ => panic!("{:?}", goal.kind),
            }
            assert!((0.015..=0.0351).contains(&h[1]), "{h:?}");
            assert!((0.05..=1.0).contains(&goal.mass_kg) && (0.3..=1.2).contains(&goal.friction));
            let [x, y, z] = goal.pose.xyz_m;
            assert!(
                (0.3..=0.7).contains(&x) && (-0.3..=0.3).contains(&y),
                "{x} {y}"
            );
            assert!((z - t.table.top_z_m - h[2]).abs() < 1e-12);
            let others: Vec<_> = t
                .objects
                .iter()
                .filter(|o| o.name.starts_with("distractor"))
                .collect();
            assert!(others.len() <= 1);
            for d in &others {
                distracted += 1;
                let (dx, dy) = (d.pose.xyz_m[0] - x, d.pose.xyz_m[1] - y);
                assert!((dx * dx + dy * dy).sqrt() >= ranges.min_separation_m - 1e-9);
            }
            assert_eq!(t.arm_start_offset_rad.len(), 7);
            assert!(t.arm_start_offset_rad.iter().all(|q| q.abs() <= 0.15));
        }
    }
    assert!(
        cubes > 50 && boxes > 50 && cylinders > 50,
        "{cubes} {boxes} {cylinders}"
    );
    assert!(distracted > 100 && distracted < 300, "{distracted}");
}

#[test]
fn bad_fields_are_named() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let good = sample_task(SkillKind::Place, &TaskRanges::default(), &mut rng);
    type Mutation = Box<dyn Fn(&mut TaskSpec)>;
    let cases: Vec<(Mutation, &str)> = vec![
        (Box::new(|t| t.objects[0].mass_kg = 0.0), "mass_kg"),
        (Box::new(|t| t.objects[0].mass_kg = -1.0), "mass_kg"),
        (Box::new(|t| t.objects[0].friction = f64::NAN), "friction"),
        (
            Box::new(|t| t.goal.zone = Some("nowhere".into())),
            "goal.zone",
        ),
        (
            Box::new(|t| t.goal.object = Some("ghost".into())),
            "goal.object",
        ),
        (Box::new(|t| t.max_duration_s = 0.0), "max_duration_s"),
        (
            Box::new(|t| t.zones[0].half_extents_m[1] = -0.1),
            "half_extents_m",
        ),
        (Box::new(|t| t.table.size_m[2] = 0.0), "table.size_m"),
    ];
    for (mutate, field) in cases {
        let mut t = good.clone();
        mutate(&mut t);
        let msg = t.validate().unwrap_err().to_string();
        assert!(msg.contains(field), "`{msg}` should name `{field}`");
        assert!(msg.contains(&t.name), "`{msg}` should name the task");
    }
}

#[test]
fn malformed_json_names_the_source() {
    let err = TaskSpec::from_json("{\"name\": 3", "tasks/broken.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("tasks/broken.json"), "{err}");
    assert!(SkillKind::parse("juggle")
        .unwrap_err()
        .to_string()
        .contains("juggle"));
}
