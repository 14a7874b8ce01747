//! The default cameras in a real scene see what they should.

use std::sync::Arc;

use rand::SeedableRng;
use sim::library::{sample_task, TaskRanges};
use sim::scene::props::{OBJECT_SEGMENT_BASE, TABLE_SEGMENT, ZONE_SEGMENT_BASE};
use sim::{Scene, SimConfig, SkillKind};

#[test]
fn front_camera_sees_cube_zone_table_and_robot_wrist_sees_the_table() {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let task = sample_task(SkillKind::Place, &TaskRanges::default(), &mut rng);
    let config = SimConfig {
        cameras: SimConfig::default_cameras(),
        ..SimConfig::default()
    };
    let scene = Scene::new(robot, &task, Arc::new(config)).unwrap();
    let frames = scene.render_all();
    assert_eq!(frames.len(), 2);
    let has = |f: &sim::CameraFrame, id: u16| f.segmentation.iter().filter(|s| **s == id).count();
    let front = &frames[0];
    assert_eq!(front.rgb.len(), 64 * 64 * 3);
    assert!(has(front, OBJECT_SEGMENT_BASE) > 0, "cube visible");
    assert!(has(front, ZONE_SEGMENT_BASE) > 0, "zone visible");
    assert!(
        has(front, TABLE_SEGMENT) > 400,
        "table fills much of the view"
    );
    assert!(
        front
            .segmentation
            .iter()
            .any(|s| *s >= sim::scene::robot::ROBOT_SEGMENT_BASE),
        "robot visible"
    );
    // Depth is positive exactly where something was hit.
    for (d, s) in front.depth_m.iter().zip(&front.segmentation) {
        assert_eq!(*d > 0.0, *s != 0);
    }
    let wrist = &frames[1];
    assert!(
        has(wrist, TABLE_SEGMENT) > 200,
        "wrist camera looks down at the table"
    );
}
