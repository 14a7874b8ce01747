//! Diagnostic: what place demonstrations in episode stores do. Per store directory: episodes,
//! steps, the action kinds, and medians of the cube's peak rise, its height above its start
//! when the gripper is first commanded open after the grasp, its horizontal distance from the
//! zone centre (in zone half-widths) at that release and at the end, and the carries that drag
//! the cube (before the release it slides over the table, less than 1.5 cm up, for half its way
//! to the zone or 5 cm).
//!
//! `SPLIT=OUT` also writes each directory's episodes into the stores `OUT/hindsight` (the zone
//! moved under where the cube came to rest), `OUT/dropped` (the gripper opens with the cube more
//! than 2 cm up), `OUT/refined` (joint-position replays) and `OUT/raw` (the rest).
//!
//! `cargo run --release -p coevolve-sim --example place_demos -- DIR...`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use sim::{Action, Episode};

fn gripper(a: &Action) -> f64 {
    match a {
        Action::JointDelta { gripper, .. }
        | Action::JointPosition { gripper, .. }
        | Action::EeDelta { gripper, .. } => *gripper,
    }
}

/// (peak rise m, release rise m, release distance, end distance (half-widths), dragged).
fn describe(e: &Episode) -> Option<(f64, f64, f64, f64, bool)> {
    let zone = e.task.zones.first()?;
    let start = e.initial_state.objects.first()?.position_m();
    let half = zone.half_extents_m[0];
    let dist = |p: nalgebra::Vector3<f64>| {
        ((p.x - zone.center_m[0]).powi(2) + (p.y - zone.center_m[1]).powi(2)).sqrt() / half
    };
    let cube = |i: usize| e.steps[i].state.objects[0].position_m();
    let peak = (0..e.steps.len())
        .map(|i| cube(i).z - start.z)
        .fold(0.0, f64::max);
    let closed = e.steps.iter().position(|s| gripper(&s.action) < 0.5)?;
    let release = (closed..e.steps.len()).find(|&i| gripper(&e.steps[i].action) > 0.5)?;
    let to_zone = (dist(start) - 1.0).max(0.0) * half;
    // The way the cube slides over the table (rise under 1.5 cm) before the release.
    let slid_m: f64 = (closed.max(1)..release)
        .filter(|&i| cube(i).z - start.z < 0.015)
        .map(|i| (cube(i).xy() - cube(i - 1).xy()).norm())
        .sum();
    let dragged = slid_m > 0.5 * to_zone.max(0.05);
    let last = e.steps.len() - 1;
    Some((
        peak,
        cube(release).z - start.z,
        dist(cube(release)),
        dist(cube(last)),
        dragged,
    ))
}

/// Writes `episodes` into the stores `out/{hindsight,dropped,refined,raw}`.
fn split(episodes: &[&Episode], out: &std::path::Path, like: &sim::store::EpisodeFile) {
    let mut parts: [(&str, Vec<Episode>); 4] = [
        ("hindsight", vec![]),
        ("dropped", vec![]),
        ("refined", vec![]),
        ("raw", vec![]),
    ];
    for e in episodes {
        let refined = e
            .steps
            .iter()
            .any(|s| matches!(s.action, Action::JointPosition { .. }));
        let d = describe(e);
        let i = if d.is_some_and(|d| d.3 < 0.01) {
            0
        } else if d.is_some_and(|d| d.1 > 0.02) {
            1
        } else if refined {
            2
        } else {
            3
        };
        parts[i].1.push((*e).clone());
    }
    for (name, part) in parts.iter().filter(|p| !p.1.is_empty()) {
        let mut w = sim::store::EpisodeWriter::new(
            out.join(name),
            &like.header.producer,
            &like.header.sim_config,
        )
        .unwrap();
        if let Some(robot) = &like.header.robot_name {
            w = w.with_robot_name(robot);
        }
        w.write_batch(part).unwrap();
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    for dir in std::env::args().skip(1) {
        let scan = sim::store::read_dir(&dir).unwrap();
        let episodes: Vec<&Episode> = scan.episodes().map(|s| s.episode).collect();
        if let (Ok(out), Some(file)) = (std::env::var("SPLIT"), scan.files.first()) {
            split(&episodes, std::path::Path::new(&out), file);
        }
        let joint_position = episodes
            .iter()
            .filter(|e| {
                e.steps
                    .iter()
                    .any(|s| matches!(s.action, Action::JointPosition { .. }))
            })
            .count();
        let steps = median(episodes.iter().map(|e| e.steps.len() as f64).collect());
        let d: Vec<_> = episodes.iter().filter_map(|e| describe(e)).collect();
        let col = |f: fn(&(f64, f64, f64, f64, bool)) -> f64| median(d.iter().map(f).collect());
        if let Some(i) = std::env::var("DUMP")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        {
            let e = episodes[i];
            let z = e.task.zones[0].center_m;
            println!(
                "  zone centre {z:.3?}, cube start {:.3?}",
                e.initial_state.objects[0].position_m()
            );
            for (t, s) in e.steps.iter().enumerate().step_by(4) {
                let c = s.state.objects[0].position_m();
                let p = s.state.ee_position_m();
                println!(
                    "  {t:3} tcp [{:.3} {:.3} {:.3}] cube [{:.3} {:.3} {:.3}] grip {:.2} open {:.3}",
                    p.x, p.y, p.z, c.x, c.y, c.z, gripper(&s.action), s.state.gripper_opening
                );
            }
        }
        if std::env::var("EACH").is_ok() {
            for e in &episodes {
                let jp = e
                    .steps
                    .iter()
                    .any(|s| matches!(s.action, Action::JointPosition { .. }));
                println!(
                    "  {} steps {} success_t {:?}: {:?}",
                    if jp { "joint" } else { "ee" },
                    e.steps.len(),
                    e.outcome.success_time_s,
                    describe(e)
                );
            }
        }
        let (fast, total) = episodes.iter().fold((0, 0), |(f, t), e| {
            let fast = e
                .steps
                .windows(2)
                .filter(|w| (w[1].state.ee_position_m() - w[0].state.ee_position_m()).norm() > 0.02)
                .count();
            (f + fast, t + e.steps.len())
        });
        println!("  steps moving the TCP more than 2 cm: {fast} of {total}");
        // When the gripper opens after the grasp, against how far the cube starts from the
        // zone: a release on a clock rather than on arrival.
        let mut pairs: Vec<(f64, f64)> = episodes
            .iter()
            .filter_map(|e| {
                let zone = e.task.zones.first()?;
                let p = e.initial_state.objects.first()?.position_m();
                let d =
                    ((p.x - zone.center_m[0]).powi(2) + (p.y - zone.center_m[1]).powi(2)).sqrt();
                let closed = e.steps.iter().position(|s| gripper(&s.action) < 0.5)?;
                let release =
                    (closed..e.steps.len()).find(|&i| gripper(&e.steps[i].action) > 0.5)?;
                Some((d, e.steps[release].state.time_s))
            })
            .collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = pairs.len().max(1) as f64;
        let (mx, my) = pairs
            .iter()
            .fold((0.0, 0.0), |(a, b), p| (a + p.0 / n, b + p.1 / n));
        let cov: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sx: f64 = pairs.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>().sqrt();
        let sy: f64 = pairs.iter().map(|p| (p.1 - my).powi(2)).sum::<f64>().sqrt();
        let times: Vec<f64> = pairs.iter().map(|p| p.1).collect();
        println!(
            "  release time: median {:.2} s, sd {:.2} s; correlation with the start's distance from the zone {:.2}",
            median(times),
            sy / n.sqrt(),
            cov / (sx * sy).max(1e-12)
        );
        println!(
            "{dir}: {} episodes ({joint_position} joint-position replays), median steps {steps}, \
             described {}: peak rise {:.3} m, release rise {:.3} m, release dist {:.2} hw, \
             end dist {:.2} hw, dragged {}",
            episodes.len(),
            d.len(),
            col(|x| x.0),
            col(|x| x.1),
            col(|x| x.2),
            col(|x| x.3),
            d.iter().filter(|x| x.4).count(),
        );
    }
}
