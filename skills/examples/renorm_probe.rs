//! Diagnostic: the BC loss of a run's checkpoint on its golden pool before and after
//! `Policy::renormalize` to the pool's refitted statistics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use policy::bc::bc_losses;
use policy::dataset::{Dataset, RawSamples};
use skills::evolve::run_dir::RunDir;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = RunDir::new(&args[0]);
    let gen: usize = args[1].parse().unwrap();
    let upto: usize = args[2].parse().unwrap();
    let mut policy = policy::checkpoint::load(&run.checkpoint(gen), tch::Device::Cpu).unwrap();
    let robot = std::sync::Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = std::sync::Arc::new(policy.meta.sim.clone());
    let eps = run.read_golden("reach", upto).unwrap();
    let mut raw = RawSamples::default();
    for e in &eps {
        raw.push_episode(e, &policy.featurizer, &robot, &sim)
            .unwrap();
    }
    let loss = |p: &policy::Policy| {
        let data = Dataset::new(&raw, &p.featurizer, &p.normalizer).unwrap();
        let idx = tch::Tensor::arange(raw.len() as i64, (tch::Kind::Int64, tch::Device::Cpu));
        let batch = data.gather(&idx, tch::Device::Cpu);
        let (_, nll, _) = tch::no_grad(|| bc_losses(p, &batch, 0.0));
        nll.double_value(&[])
    };
    println!("{} samples; nll before {}", raw.len(), loss(&policy));
    let new = raw.fit_normalizer(&policy.featurizer);
    let old = policy.normalizer.clone();
    for (name, o, n) in [
        ("proprio", &old.proprio, &new.proprio),
        ("objects", &old.objects, &new.objects),
        ("zones", &old.zones, &new.zones),
        ("actions", &old.actions, &new.actions),
    ] {
        let r: Vec<String> = o
            .std
            .iter()
            .zip(&n.std)
            .map(|(a, b)| format!("{:.2}", b / a))
            .collect();
        println!("{name} std ratio new/old {}", r.join(" "));
    }
    println!(
        "log_std {:?}",
        Vec::<f32>::try_from(policy.vs.variables()["log_std"].flatten(0, -1)).unwrap()
    );
    let mut bare = policy::checkpoint::load(&run.checkpoint(gen), tch::Device::Cpu).unwrap();
    bare.normalizer = new.clone();
    println!("nll with a bare refit {}", loss(&bare));
    policy.renormalize(new).unwrap();
    println!("nll after renormalize {}", loss(&policy));
    println!(
        "log_std {:?}",
        Vec::<f32>::try_from(policy.vs.variables()["log_std"].flatten(0, -1)).unwrap()
    );
}
