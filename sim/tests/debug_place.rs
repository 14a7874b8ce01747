use std::sync::Arc;
use rand::SeedableRng;
use sim::library::{sample_task, TaskRanges};
use sim::episode::run_episode;
use sim::{Controller, EpisodeInfo, ScriptedPickPlace, SimConfig, SkillKind};

#[test]
fn debug_place() {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let config = Arc::new(SimConfig::default());
    let scale = config.action_scale.clone();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(std::env::var("SEED").map(|v| v.parse().unwrap()).unwrap_or(1));
    let task = sample_task(SkillKind::Place, &TaskRanges::default(), &mut rng);
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> { Box::new(ScriptedPickPlace::new(info, scale.clone())) };
    let e = run_episode(&robot, &task, &config, &factory, 0, 1, false).unwrap();
    println!("zone {:?} obj {:?}", task.zones[0].center_m, task.objects[0].pose.xyz_m);
    for (i, s) in e.steps.iter().enumerate().step_by(5) {
        let o = &s.state.objects[0];
        let fk = robot.fk(&s.q_target_rad);
        let dq: Vec<f64> = s.q_target_rad.iter().zip(&s.state.q_rad).map(|(a,b)| a-b).collect();
        println!("{i} t={:.2} ee={:.3?} fkz={:.3} obj={:.3?} grip={:.2} fing={:?} envF={:.1} dq={:.3?}", s.state.time_s, &s.state.world_from_ee[..3], fk.translation.vector.z + 0.4, &o.world_from_object[..3], s.state.gripper_opening, s.state.contacts.finger_touch, s.state.contacts.robot_env_force_n, dq);
    }
    println!("{:?}", e.outcome);
}
