//! The search explorer: cross-entropy-method (CEM) search over end-effector keyframe plans in
//! the simulator, which finds first successes for skills the policy cannot solve yet ("success
//! found by search, then learned"). No hand-written solution: a plan is K keyframes, each a TCP
//! offset from an anchor (the goal object's start for the first half, the goal's target — zone
//! centre or support object — for the second half) and a gripper command, plus one grasp yaw;
//! the plan follows each keyframe for a fixed segment time. Plans are object-centric, so one
//! plan distribution is searched across many task variants at once: each candidate runs on its
//! own freshly drawn variant, and the elites' parameters refit the Gaussian.

use std::sync::Arc;

use nalgebra::Vector3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use robots::Manipulator;
use serde::{Deserialize, Serialize};
use sim::config::ActionScale;
use sim::task::{ObjectSpec, SkillKind, TaskSpec, ToolKind, ZoneSpec};
use sim::{BatchConfig, Controller, Episode, EpisodeBatch, EpisodeInfo, SimConfig};

use crate::tool_plan::{
    initial_tool_plan, ToolPlanController, PER_TOOL_KEYFRAME, PITCH_PARAM, PITCH_WIDEN_STD_RAD,
};
use crate::tree::Skill;

pub use crate::plan_controller::PlanController;

/// Parameters per keyframe: offset x, y, z (m) and gripper.
pub(crate) const PER_KEYFRAME: usize = 4;

/// What a plan's parameters mean: gripper keyframes (`PlanController`) or tool keyframes
/// (`tool_plan::ToolPlanController`, for skills whose tasks mount the spatula).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanLayout {
    #[default]
    Gripper,
    Tool,
}

impl PlanLayout {
    pub fn for_skill(kind: SkillKind) -> PlanLayout {
        match kind.tool() {
            ToolKind::Gripper => PlanLayout::Gripper,
            ToolKind::Spatula => PlanLayout::Tool,
        }
    }

    pub fn per_keyframe(self) -> usize {
        match self {
            PlanLayout::Gripper => PER_KEYFRAME,
            PlanLayout::Tool => PER_TOOL_KEYFRAME,
        }
    }

    /// Keyframes in `plan`.
    pub fn keyframes(self, plan: &[f64]) -> usize {
        plan.len() / self.per_keyframe()
    }

    /// The position of a keyframe's gripper parameter within it (tool plans have none).
    fn gripper(self) -> Option<usize> {
        match self {
            PlanLayout::Gripper => Some(3),
            PlanLayout::Tool => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CemConfig {
    /// Candidates per iteration (each on its own task variant).
    pub population: usize,
    pub elites: usize,
    pub iterations: usize,
    /// While fewer than this many successes have been found, keep iterating past
    /// `iterations` (up to `max_iterations` in all): a skill's first search goes on until it
    /// has something to learn from. Default 0 (off).
    #[serde(default)]
    pub min_successes: usize,
    /// The cap on iterations when `min_successes` extends the search. Default 0.
    #[serde(default)]
    pub max_iterations: usize,
    /// Keyframes per plan.
    pub keyframes: usize,
    /// Keyframes per tool plan (`tool_plan`): a flip is a scoop and a turn.
    #[serde(default = "default_tool_keyframes")]
    pub tool_keyframes: usize,
    /// Time spent steering to each keyframe (s).
    pub segment_s: f64,
    /// Initial standard deviation of the offsets (m).
    pub init_offset_std_m: f64,
    /// Floor on every standard deviation (keeps exploring).
    pub min_std: f64,
    /// Score of a success = success_bonus − control steps; of a failure, its return.
    pub success_bonus: f64,
    pub seed: u64,
    pub threads: Option<usize>,
    /// After an iteration without a success, make the last keyframe's gripper event a coin
    /// flip (how a place finds its release from a lift plan).
    #[serde(default = "default_true")]
    pub reopen_last_gripper: bool,
}

fn default_true() -> bool {
    true
}

fn default_tool_keyframes() -> usize {
    8
}

impl Default for CemConfig {
    fn default() -> Self {
        CemConfig {
            population: 64,
            elites: 8,
            iterations: 6,
            min_successes: 0,
            max_iterations: 0,
            keyframes: 4,
            tool_keyframes: default_tool_keyframes(),
            segment_s: 1.6,
            init_offset_std_m: 0.06,
            min_std: 0.005,
            success_bonus: 10_000.0,
            seed: 0,
            threads: None,
            reopen_last_gripper: true,
        }
    }
}

/// A Gaussian over plan parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanDistribution {
    pub mean: Vec<f64>,
    pub std: Vec<f64>,
    #[serde(default)]
    pub layout: PlanLayout,
    /// Keyframes at the start held where they are (std 0, never refitted), and with them the
    /// plan-level parameters after the keyframes: a search over the rest of a plan whose
    /// approach is given (`with_approach_fixed`). 0: every parameter is searched.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fixed_keyframes: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl PlanDistribution {
    /// Where a search of plans of `layout` starts.
    pub fn initial_for(layout: PlanLayout, cfg: &CemConfig) -> PlanDistribution {
        match layout {
            PlanLayout::Gripper => PlanDistribution::initial(cfg),
            PlanLayout::Tool => initial_tool_plan(cfg),
        }
    }

    /// Gripper keyframes start a little above their anchors with the gripper undecided; yaw 0.
    pub fn initial(cfg: &CemConfig) -> PlanDistribution {
        let mut mean = Vec::new();
        let mut std = Vec::new();
        for _ in 0..cfg.keyframes {
            mean.extend([0.0, 0.0, 0.05, 0.5]);
            std.extend([
                cfg.init_offset_std_m,
                cfg.init_offset_std_m,
                cfg.init_offset_std_m,
                0.5,
            ]);
        }
        mean.push(0.0);
        std.push(0.3);
        PlanDistribution {
            mean,
            std,
            layout: PlanLayout::Gripper,
            fixed_keyframes: 0,
        }
    }

    /// Where a search of the goal half alone starts (plans that take over once the object is
    /// held, `evolve::handoff`): this distribution's means; the first half's keyframes fixed
    /// (std 0, a handoff never follows them); the goal half's offsets and gripper events and
    /// the grasp yaw at least as spread as a fresh search's.
    pub fn goal_half_only(&self, cfg: &CemConfig) -> PlanDistribution {
        let fresh = PlanDistribution::initial_for(self.layout, cfg);
        let per = self.layout.per_keyframe();
        let first = (self.mean.len() / per).div_ceil(2) * per;
        let std = self
            .std
            .iter()
            .enumerate()
            .map(|(d, s)| match fresh.std.get(d) {
                _ if d < first => 0.0,
                Some(spread) => s.max(*spread),
                None => *s,
            })
            .collect();
        PlanDistribution {
            mean: self.mean.clone(),
            std,
            layout: self.layout,
            fixed_keyframes: 0,
        }
    }

    /// This plan's approach kept, the rest searched: the first half's keyframes and the
    /// plan-level parameters fixed at their means, the goal half at least as spread as a fresh
    /// search's. A skill that goes on from a prerequisite's plan (flip from scoop) then starts
    /// every demonstration the way the prerequisite's do, and behaviour cloning is not asked
    /// to learn two approaches to the same scene.
    pub fn with_approach_fixed(&self, cfg: &CemConfig) -> PlanDistribution {
        let mut out = self.goal_half_only(cfg);
        out.fixed_keyframes = self.keyframes().div_ceil(2);
        for d in 0..out.std.len() {
            if out.is_fixed(d) {
                out.std[d] = 0.0;
            }
        }
        out
    }

    /// Where a gripper skill's first search starts from its prerequisite's plan: a skill that
    /// sets its object down from the grasp set down at its target (`set_down`), lift from the
    /// grasp held `LIFT_MARGIN_M` over its goal height (`held_at_goal`), any other from the plan
    /// as it is.
    pub fn for_successor(&self, kind: SkillKind) -> PlanDistribution {
        match kind {
            _ if kind.sets_down() => self.set_down(),
            SkillKind::Lift => self.held_at_goal(LIFT_MARGIN_M),
            _ => self.clone(),
        }
    }

    /// Where a search for a skill that sets its object down (place, stack) starts from a
    /// prerequisite's plan (place from lift): `held_at_goal`, but the last keyframe opens the
    /// gripper and rises `SET_DOWN_RETREAT_M` (an open gripper left around the object,
    /// fingertips on the table, may not let go of it). A lift carries the object high, and
    /// letting go up there is a drop, which the judge does not count as a place.
    pub fn set_down(&self) -> PlanDistribution {
        let mut out = self.held_at_goal(0.0);
        let k = self.keyframes();
        if self.layout == PlanLayout::Gripper && k > 1 {
            let at = (k - 1) * PER_KEYFRAME;
            out.mean[at + 2] += SET_DOWN_RETREAT_M;
            out.mean[at + 3] = 1.0;
        }
        out
    }

    /// The approach and grasp kept, and every goal-half keyframe put where the gripper closed
    /// on the object (offset from the object's start, now from the goal half's anchor: where
    /// the object rests at the target, or for lift its start raised by the lift height) with
    /// that keyframe's spread, the gripper closed, `raise_m` higher. A grasp plan's own goal
    /// half (anchored on the cube, often opening again: a grasp succeeds before it runs) would
    /// drop the object.
    pub fn held_at_goal(&self, raise_m: f64) -> PlanDistribution {
        let mut out = self.clone();
        let (k, half) = (self.keyframes(), self.keyframes().div_ceil(2));
        if self.layout != PlanLayout::Gripper || half == 0 || half >= k {
            return out;
        }
        // A keyframe's gripper command holds while the TCP steers to it: the gripper closes
        // where the keyframe before the first closed one left the TCP.
        let closes = (0..half).find(|&i| self.mean[i * PER_KEYFRAME + 3] <= GRIPPER_THRESHOLD);
        let grasp = closes.map_or(half - 1, |i| i.saturating_sub(1)) * PER_KEYFRAME;
        for j in half..k {
            let at = j * PER_KEYFRAME;
            out.mean[at..at + 3].copy_from_slice(&self.mean[grasp..grasp + 3]);
            out.std[at..at + 3].copy_from_slice(&self.std[grasp..grasp + 3]);
            out.mean[at + 2] += raise_m;
            out.mean[at + 3] = 0.0;
        }
        out
    }

    /// Keyframes in the plan.
    pub fn keyframes(&self) -> usize {
        self.mean.len() / self.layout.per_keyframe()
    }

    /// Parameter `d` is held (`fixed_keyframes`).
    pub fn is_fixed(&self, d: usize) -> bool {
        let per = self.layout.per_keyframe();
        self.fixed_keyframes > 0 && (d < self.fixed_keyframes * per || d >= self.keyframes() * per)
    }

    pub fn sample(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        self.mean
            .iter()
            .zip(&self.std)
            .map(|(m, s)| {
                let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
                let u2: f64 = rng.gen();
                m + s * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
            })
            .collect()
    }
}

/// A plan's anchors in `task`: the goal object's start (the first half of the keyframes), the
/// goal's target (the second half: for place and stack where the object's centre rests once set
/// down there, so that a keyframe holds the object at the target as the grasp keyframe held it
/// at its start; for lift the object's start raised by the goal's lift height, so that one plan
/// lifts every variant to its own height; otherwise the zone centre, or 5 cm above the support
/// object), and the object's yaw.
pub fn plan_anchors(task: &TaskSpec) -> (Vector3<f64>, Vector3<f64>, f64) {
    let object = task.goal_object_index().and_then(|i| task.objects.get(i));
    let zone = task.goal_zone();
    let support = task.goal_support_index().and_then(|i| task.objects.get(i));
    let object_anchor = object.map(|o| Vector3::from(o.pose.xyz_m));
    let rest = object
        .filter(|_| task.skill.sets_down())
        .and_then(|o| rest_at_target(task, o, zone, support));
    let raised = object_anchor
        .filter(|_| task.skill == SkillKind::Lift)
        .map(|o| o + Vector3::new(0.0, 0.0, task.goal.lift_height_m));
    let target_anchor = rest
        .or(raised)
        .or_else(|| zone.map(|z| Vector3::from(z.center_m)))
        .or_else(|| support.map(|s| Vector3::from(s.pose.xyz_m) + Vector3::new(0.0, 0.0, 0.05)))
        .or(object_anchor);
    let first = object_anchor.or(target_anchor).unwrap_or_default();
    let second = target_anchor.unwrap_or(first);
    (first, second, object.map_or(0.0, |o| o.pose.rpy_rad[2]))
}

/// The yaw of the frame a plan's keyframe offsets are given in (rad): for a push, the direction
/// from the object's start to the zone's centre, so that one plan ("behind the cube, then
/// through it towards the zone") pushes every variant whichever way its zone lies; otherwise 0
/// (the world frame: a grasp or a carry goes to its anchors whatever their direction).
pub fn plan_frame_yaw(task: &TaskSpec) -> f64 {
    if task.skill != SkillKind::Push {
        return 0.0;
    }
    let (object, zone, _) = plan_anchors(task);
    let d = zone - object;
    if d.xy().norm() < 1e-9 {
        return 0.0;
    }
    d.y.atan2(d.x)
}

/// Where `object`'s centre rests once set down on the table in `zone`, or on top of `support`.
fn rest_at_target(
    task: &TaskSpec,
    object: &ObjectSpec,
    zone: Option<&ZoneSpec>,
    support: Option<&ObjectSpec>,
) -> Option<Vector3<f64>> {
    let half_z = object.kind.half_extents_m()[2];
    let on_zone = zone.map(|z| Vector3::new(z.center_m[0], z.center_m[1], task.table.top_z_m));
    let on_support = support.map(|s| {
        let top = s.pose.xyz_m[2] + s.kind.half_extents_m()[2];
        Vector3::new(s.pose.xyz_m[0], s.pose.xyz_m[1], top)
    });
    on_zone
        .or(on_support)
        .map(|p| p + Vector3::new(0.0, 0.0, half_z))
}

/// Keyframes in `plan`.
pub fn plan_keyframes(plan: &[f64]) -> usize {
    plan.len() / PER_KEYFRAME
}

/// One CEM iteration's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CemIteration {
    pub iteration: usize,
    pub candidates: usize,
    pub successes: usize,
    /// Candidates that ended in an integrity failure (a fragile object broken).
    #[serde(default)]
    pub broken: usize,
    pub mean_score: f64,
    pub elite_score: f64,
}

/// What a search produced.
#[derive(Debug)]
pub struct SearchResult {
    /// Every successful episode found (raw data for the refiner).
    pub successes: Vec<Episode>,
    /// The plan of each success, in the same order.
    pub success_plans: Vec<Vec<f64>>,
    pub distribution: PlanDistribution,
    pub history: Vec<CemIteration>,
    pub episodes_run: usize,
}

/// Episodes that ended in an integrity failure (a fragile object broken).
pub fn broken_count<'a>(episodes: impl Iterator<Item = &'a Episode>) -> usize {
    episodes.filter(|e| e.outcome.failure.is_some()).count()
}

/// A keyframe's gripper opens when its parameter is above this.
pub(crate) const GRIPPER_THRESHOLD: f64 = 0.5;
/// How far a set-down plan's last keyframe rises as it opens the gripper (m).
const SET_DOWN_RETREAT_M: f64 = 0.05;
/// How far over its goal height a lift search's first plans hold the object (m): held exactly
/// at the height the judge asks for, any sag of the grasp fails the variant.
const LIFT_MARGIN_M: f64 = 0.02;
/// Least spread of the last keyframe's gripper parameter after widening.
const GRIPPER_REOPEN_STD: f64 = 0.5;

/// After an iteration without a single success: the spread of the second half's keyframe
/// positions (anchored on the goal's target: where the plan takes the object) doubles, up to
/// the initial spread, and the last keyframe's gripper event becomes uncertain again. A
/// search continued from a prerequisite's converged distribution keeps the approach it learned
/// but can find where the new skill goes (lift: up) and how it ends (place: a release),
/// instead of sampling within the prerequisite's few millimetres and its always-closed
/// gripper; a search that succeeds is left alone. In a tool plan the blade's pitch widens
/// too, up to 1 rad: a flip's turn is found from a scoop's level blade. Only the last event is reopened: a carry
/// (the keyframes before it) must keep holding, and a lift found before its last keyframe
/// does not care what the gripper does there.
fn widen_goal_half(dist: &mut PlanDistribution, cfg: &CemConfig) {
    let per = dist.layout.per_keyframe();
    let k = dist.mean.len() / per;
    for i in k.div_ceil(2).max(dist.fixed_keyframes)..k {
        for d in 0..3 {
            if let Some(s) = dist.std.get_mut(i * per + d) {
                *s = (2.0 * *s).min(cfg.init_offset_std_m.max(*s));
            }
        }
        if dist.layout == PlanLayout::Tool {
            if let Some(s) = dist.std.get_mut(i * per + PITCH_PARAM) {
                *s = (2.0 * *s).min(PITCH_WIDEN_STD_RAD.max(*s));
            }
        }
    }
    let Some(gripper) = dist.layout.gripper().filter(|_| cfg.reopen_last_gripper) else {
        return;
    };
    if let Some(g) = k.checked_sub(1).map(|last| last * per + gripper) {
        if let (Some(mean), Some(std)) = (dist.mean.get(g), dist.std.get_mut(g)) {
            // Keeps the learned mean; wide enough that the other command is drawn at least
            // one time in six (the gripper opens above 0.5).
            *std = std
                .max(GRIPPER_REOPEN_STD)
                .max((mean - GRIPPER_THRESHOLD).abs());
        }
    }
}

/// The plan from keyframe `first` on: the earlier keyframes are dropped and the last one is
/// repeated to keep the parameter count (the yaw is kept).
pub fn plan_suffix(layout: PlanLayout, plan: &[f64], first: usize) -> Vec<f64> {
    let per = layout.per_keyframe();
    let k = plan.len() / per;
    let first = first.min(k.saturating_sub(1));
    let mut out = Vec::with_capacity(plan.len());
    for i in 0..k {
        let j = (first + i).min(k - 1);
        out.extend_from_slice(&plan[j * per..][..per]);
    }
    out.extend_from_slice(&plan[k * per..]);
    out
}

/// Weight of the final dense reward in a success's score (reach shaping: about 10 points per
/// centimetre closer, worth as much as 10 control steps quicker).
const MARGIN_WEIGHT: f64 = 200.0;

/// A plan's score: successes above failures; among successes, quicker ones (a plan that
/// wanders before it succeeds demonstrates badly) and ones that end with more margin (a higher
/// final dense reward: closer to the target, higher lift); failures by their dense return.
pub fn plan_score(e: &Episode, success_bonus: f64) -> f64 {
    if e.outcome.success {
        let margin = e.steps.last().map_or(0.0, |s| s.reward.total);
        success_bonus - e.outcome.control_steps as f64 + MARGIN_WEIGHT * margin
    } else {
        e.outcome.episode_return
    }
}

/// CEM over keyframe plans for `skill` (tool plans where its tasks mount the spatula), from
/// the initial distribution, on fresh variants.
pub fn cem_search(
    skill: &Skill,
    robot: &Arc<Manipulator>,
    sim: &Arc<SimConfig>,
    cfg: &CemConfig,
    progress: &mut dyn FnMut(&CemIteration),
) -> sim::Result<SearchResult> {
    cem_search_from(
        PlanDistribution::initial_for(PlanLayout::for_skill(skill.kind), cfg),
        &|_, rng| skill.sample_task(rng),
        robot,
        sim,
        cfg,
        progress,
    )
}

/// The controller that follows `plan` in one episode: a tool plan for a spatula task, a
/// keyframe plan of `segment_s` segments for a gripper task.
pub fn plan_controller(
    info: &EpisodeInfo<'_>,
    plan: &[f64],
    segment_s: f64,
    scale: ActionScale,
) -> Box<dyn Controller> {
    match info.task.tool {
        ToolKind::Spatula => Box::new(ToolPlanController::new(info, plan, scale)),
        ToolKind::Gripper => Box::new(PlanController::new(info, plan, segment_s, scale)),
    }
}

/// Runs `plans[i]` on `tasks(i, rng)` for every i (an `EpisodeBatch` seeded `batch_seed`).
pub fn run_plans(
    plans: &[Vec<f64>],
    tasks: &(dyn Fn(usize, &mut ChaCha8Rng) -> TaskSpec + Sync),
    robot: &Arc<Manipulator>,
    sim: &Arc<SimConfig>,
    segment_s: f64,
    batch_seed: u64,
    threads: Option<usize>,
) -> sim::Result<Vec<Episode>> {
    let factory = |info: &EpisodeInfo<'_>| {
        plan_controller(
            info,
            &plans[info.index],
            segment_s,
            sim.action_scale.clone(),
        )
    };
    let batch = EpisodeBatch::run(
        robot.clone(),
        sim.clone(),
        &BatchConfig {
            episodes: plans.len(),
            seed: batch_seed,
            threads,
            record_images: false,
        },
        tasks,
        &factory,
        &|| {},
    )?;
    Ok(batch.episodes)
}

/// CEM from `dist`, candidate i running on `tasks(i, rng)`: continues a search across
/// generations, or starts one from a related skill's distribution.
pub fn cem_search_from(
    dist: PlanDistribution,
    tasks: &(dyn Fn(usize, &mut ChaCha8Rng) -> TaskSpec + Sync),
    robot: &Arc<Manipulator>,
    sim: &Arc<SimConfig>,
    cfg: &CemConfig,
    progress: &mut dyn FnMut(&CemIteration),
) -> sim::Result<SearchResult> {
    cem_with(
        dist,
        cfg,
        &mut |plans, batch_seed| {
            run_plans(
                plans,
                tasks,
                robot,
                sim,
                cfg.segment_s,
                batch_seed,
                cfg.threads,
            )
        },
        progress,
    )
}

/// Runs candidate plans (one episode per plan, in order) with a batch seed.
pub type PlanRunner<'a, E> = dyn FnMut(&[Vec<f64>], u64) -> Result<Vec<Episode>, E> + 'a;

/// CEM from `dist` with candidates run by `run(plans, batch_seed)`: plain plans, or plans
/// that take over from the policy (`evolve::handoff`).
pub fn cem_with<E>(
    mut dist: PlanDistribution,
    cfg: &CemConfig,
    run: &mut PlanRunner<'_, E>,
    progress: &mut dyn FnMut(&CemIteration),
) -> Result<SearchResult, E> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut successes = Vec::new();
    let mut success_plans = Vec::new();
    let mut history = Vec::new();
    let mut episodes_run = 0;
    let elites = cfg.elites.clamp(1, cfg.population.max(1));
    let mut iteration = 0;
    while iteration < cfg.iterations
        || (successes.len() < cfg.min_successes && iteration < cfg.max_iterations)
    {
        let plans: Vec<Vec<f64>> = (0..cfg.population).map(|_| dist.sample(&mut rng)).collect();
        let batch_seed = cfg.seed.wrapping_add(7_919 * (iteration as u64 + 1));
        let episodes = run(&plans, batch_seed)?;
        episodes_run += episodes.len();
        let scores: Vec<f64> = episodes
            .iter()
            .map(|e| plan_score(e, cfg.success_bonus))
            .collect();
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]));
        let top = &order[..elites.min(order.len())];
        let n = top.len() as f64;
        let fixed: Vec<bool> = (0..dist.mean.len()).map(|d| dist.is_fixed(d)).collect();
        for (d, (mean_d, std_d)) in dist.mean.iter_mut().zip(&mut dist.std).enumerate() {
            if fixed[d] {
                continue;
            }
            let mean = top.iter().map(|&i| plans[i][d]).sum::<f64>() / n;
            let var = top
                .iter()
                .map(|&i| (plans[i][d] - mean).powi(2))
                .sum::<f64>()
                / n;
            *mean_d = mean;
            *std_d = var.sqrt().max(cfg.min_std);
        }
        let iteration_successes = episodes.iter().filter(|e| e.outcome.success).count();
        if iteration_successes == 0 {
            widen_goal_half(&mut dist, cfg);
        }
        let record = CemIteration {
            iteration,
            candidates: scores.len(),
            successes: iteration_successes,
            broken: broken_count(episodes.iter()),
            mean_score: scores.iter().sum::<f64>() / scores.len().max(1) as f64,
            elite_score: top.iter().map(|&i| scores[i]).sum::<f64>() / top.len().max(1) as f64,
        };
        progress(&record);
        history.push(record);
        for (e, plan) in episodes.into_iter().zip(plans) {
            if e.outcome.success {
                successes.push(e);
                success_plans.push(plan);
            }
        }
        iteration += 1;
    }
    Ok(SearchResult {
        successes,
        success_plans,
        distribution: dist,
        history,
        episodes_run,
    })
}
