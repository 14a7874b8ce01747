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
