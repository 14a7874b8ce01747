//! Batches leave out padding no row uses (`Featurizer::collate`): the network's output on a
//! trimmed batch equals its output on the same rows padded to every instruction token and
//! object / zone slot the model has.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use policy::model::ObsBatch;
use policy::obs::ObsRow;
use policy::ObsMode;
use sim::SkillKind;
use tch::{Kind, Tensor};

/// `t` [B, n, ...] padded with `fill` along dim 1 to `width`.
fn pad_to(t: &Tensor, width: i64, fill: f64) -> Tensor {
    let mut shape = t.size();
    let n = shape[1];
    shape[1] = width - n;
    let pad = Tensor::full(shape.as_slice(), fill, (t.kind(), t.device()));
    Tensor::cat(&[t.shallow_clone(), pad], 1)
}

fn padded(b: &ObsBatch, m: &policy::ModelConfig) -> ObsBatch {
    let pair = |p: &Option<(Tensor, Tensor)>, slots| {
        p.as_ref()
            .map(|(x, v)| (pad_to(x, slots, 0.0), pad_to(v, slots, 0.0)))
    };
    ObsBatch {
        lang: pad_to(&b.lang, m.max_lang_tokens, 0.0),
        proprio: b.proprio.shallow_clone(),
        objects: pair(&b.objects, m.max_objects),
        zones: pair(&b.zones, m.max_zones),
        images: Vec::new(),
    }
}

#[test]
fn trimmed_batches_give_the_same_output_as_fully_padded_ones() {
    let robot = common::ur5e();
    // Lift (no zone, 8 instruction words) and reach (a zone, 7 words) rows in one batch.
    let (mut episodes, config) = common::demos(&robot, SkillKind::Lift, 2, 3);
    episodes.extend(common::demos(&robot, SkillKind::Reach, 2, 4).0);
    let (policy, _) = common::policy_for(&episodes, &robot, &config, "tiny", ObsMode::State);
    let rows: Vec<ObsRow> = episodes
        .iter()
        .flat_map(|e| {
            (0..3).map(|t| {
                let obs = policy::features::observation_before(e, t, &robot.home_q_rad, vec![]);
                policy.featurizer.row(&obs, &e.task).unwrap()
            })
        })
        .collect();
    let refs: Vec<&ObsRow> = rows.iter().collect();
    let m = policy.net.config().clone();
    let trimmed = policy.featurizer.collate(&refs);
    // Padding was left out: fewer tokens than the model's maxima.
    assert!(trimmed.lang.size()[1] < m.max_lang_tokens);
    assert_eq!(trimmed.objects.as_ref().unwrap().0.size()[1], 1);
    assert_eq!(trimmed.zones.as_ref().unwrap().0.size()[1], 1);
    let full = padded(&trimmed, &m);
    assert_eq!(full.lang.size()[1], m.max_lang_tokens);
    let a = policy.forward(&trimmed);
    let b = policy.forward(&full);
    let close = |x: &Tensor, y: &Tensor| {
        let diff = (x - y).abs().max().double_value(&[]);
        assert!(diff < 1e-5, "outputs differ by {diff}");
    };
    close(&a.mean, &b.mean);
    close(&a.value_logit, &b.value_logit);
    assert_eq!(a.mean.kind(), Kind::Float);
}
