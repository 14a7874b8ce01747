//! Handoff rollouts: the policy does a mastered prerequisite, conditioned on the prerequisite's
//! view of the task (its instruction and goal for the same object), and once the prerequisite's
//! predicate has held, the skill's searched plan takes over at its goal half (the keyframes
//! anchored on the target: carry and release). The episode is recorded and judged as the
//! skill's own task, so a success demonstrates the whole skill with a first part that is the
//! policy's own behaviour — what it already does well — instead of the search's different
//! approach, which a behaviour-cloned policy learns badly next to it. No scripted motion: the
//! first part is the learned policy, the rest the searched plan.

use std::sync::Arc;

use policy::features::ACTION_DIM;
use policy::host::HostOutput;
use policy::lockstep::{DrivenEpisode, Driver};
use policy::obs::Stats;
use policy::rollout::{choose_action, sim_config_for, start_episodes, Sampling};
use policy::Policy;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use robots::Manipulator;
use sim::{Controller, Episode, EpisodeStepper, TaskSpec};

use super::state::{HandoffFigures, SkillState, TrackedVariant};
use super::Context;
use crate::error::{Result, SkillsError};
use crate::explorer::{cem_with, plan_keyframes, CemConfig, PlanController, PlanDistribution};
use crate::tree::Skill;

/// The prerequisite's view of `task`: the same scene (table, objects, tool) with the goal,
/// instruction and time limit of a `prerequisite` variant drawn with `seed`. None when the
/// prerequisite's goal is not about the same object alone (a zone or a support object of its
/// own would not exist in this scene).
pub fn prerequisite_view(prerequisite: &Skill, task: &TaskSpec, seed: u64) -> Option<TaskSpec> {
    let own = prerequisite.sample_task(&mut ChaCha8Rng::seed_from_u64(seed));
    let same_object = own.goal.object.is_some() && own.goal.object == task.goal.object;
    if !same_object || !own.zones.is_empty() || own.goal.support.is_some() || own.tool != task.tool
    {
        return None;
    }
    Some(TaskSpec {
        name: task.name.clone(),
        skill: own.skill,
        instruction: own.instruction,
        table: task.table.clone(),
        objects: task.objects.clone(),
        zones: Vec::new(),
        tool: task.tool,
        goal: own.goal,
        max_duration_s: own.max_duration_s,
        arm_start_offset_rad: task.arm_start_offset_rad.clone(),
    })
}

/// What a batch of handoff rollouts produced.
#[derive(Debug)]
pub struct Handoffs {
    /// Every episode (in task order), judged as its own task.
    pub episodes: Vec<Episode>,
    /// Episodes where the plan took over.
    pub handed_over: usize,
    /// Per episode, the control step at which the plan took over.
    pub takeover_at: Vec<Option<usize>>,
}

/// When the plan takes over from the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takeover {
    /// Once the view's predicate has held for its hold time: the plan from its goal half.
    WhenViewHolds,
    /// At this control step, wherever the policy has got to: the whole plan, anchored on where
    /// the objects are then (expert relabelling, `evolve::relabel`).
    AtStep(usize),
}

enum Mode {
    Policy {
        held_steps: usize,
    },
    Plan(Box<PlanController>),
    /// The prerequisite was not met while the rest of the plan still fitted in the time limit.
    Abandoned,
}

/// One handoff episode: the task it is judged as, the prerequisite's view the policy is
/// conditioned on, its seed and the plan that takes over.
#[derive(Clone, Debug)]
pub struct HandoffRun {
    pub task: TaskSpec,
    pub view: TaskSpec,
    pub seed: u64,
    pub plan: Vec<f64>,
    pub takeover: Takeover,
}

/// `task` with every object's pose (position, yaw) where `objects` says it is now: what a plan
/// anchored on the objects aims at when it takes over mid-episode.
pub fn reanchored(task: &TaskSpec, objects: &[sim::state::ObjectState]) -> TaskSpec {
    let mut moved = task.clone();
    for (spec, now) in moved.objects.iter_mut().zip(objects) {
        let p = now.world_from_object;
        let (qx, qy, qz, qw) = (p[3], p[4], p[5], p[6]);
        spec.pose.xyz_m = [p[0], p[1], p[2]];
        spec.pose.rpy_rad[2] = (2.0 * (qw * qz + qx * qy)).atan2(1.0 - 2.0 * (qy * qy + qz * qz));
    }
    moved
}

/// One handoff episode in progress.
struct HandoffEpisode<'a> {
    run: &'a HandoffRun,
    stepper: EpisodeStepper,
    mode: Mode,
    takeover_at: Option<usize>,
    /// The most control steps the plan's goal half takes (transit included).
    goal_steps: usize,
    actions: &'a Stats,
    timing: &'a Timing,
}

/// The control period and plan segment length of a batch of handoffs.
struct Timing {
    dt_s: f64,
    segment_s: f64,
    action_scale: sim::config::ActionScale,
}

fn goal_half(plan: &[f64]) -> usize {
    plan_keyframes(plan).div_ceil(2)
}

impl DrivenEpisode for HandoffEpisode<'_> {
    fn running(&self) -> bool {
        !self.stepper.is_done() && !matches!(self.mode, Mode::Abandoned)
    }

    fn query(&self) -> Option<(&sim::Observation, &TaskSpec)> {
        matches!(self.mode, Mode::Policy { .. })
            .then(|| (self.stepper.observation(), &self.run.view))
    }

    fn advance(
        &mut self,
        out: Option<&HostOutput>,
        log_std: &[f32; ACTION_DIM],
    ) -> policy::Result<()> {
        let action = match (&mut self.mode, out) {
            (Mode::Plan(controller), _) => controller.act(self.stepper.observation()),
            (Mode::Policy { .. }, Some(out)) => {
                let mut unused_rng = ChaCha8Rng::seed_from_u64(0);
                choose_action(
                    self.actions,
                    &out.mean,
                    log_std,
                    Sampling::Greedy,
                    &mut unused_rng,
                )
                .0
            }
            _ => return Ok(()),
        };
        self.stepper.step(action);
        if matches!(self.mode, Mode::Policy { .. }) && !self.stepper.is_done() {
            self.take_over_if_due();
        }
        Ok(())
    }
}

impl HandoffEpisode<'_> {
    /// After a policy step: the plan takes over when the run's rule says so (or the episode is
    /// abandoned when the rest of the plan no longer fits).
    fn take_over_if_due(&mut self) {
        let (s, run, t) = (&self.stepper, self.run, self.timing);
        let Mode::Policy { held_steps } = &mut self.mode else {
            return;
        };
        let controller = match run.takeover {
            Takeover::WhenViewHolds => {
                let hold_steps = ((run.view.goal.hold_s / t.dt_s).round() as usize).max(1);
                *held_steps = if s.predicate_holds(&run.view) {
                    *held_steps + 1
                } else {
                    0
                };
                let max_steps = (run.task.max_duration_s / t.dt_s).ceil() as usize;
                if *held_steps < hold_steps {
                    if s.steps_taken() + self.goal_steps >= max_steps {
                        self.mode = Mode::Abandoned;
                    }
                    return;
                }
                PlanController::new(&s.info(), &run.plan, t.segment_s, t.action_scale.clone())
                    .starting_at(goal_half(&run.plan))
            }
            Takeover::AtStep(step) => {
                if s.steps_taken() < step {
                    return;
                }
                let moved = reanchored(&run.task, &s.observation().objects);
                let info = sim::EpisodeInfo {
                    task: &moved,
                    ..s.info()
                };
                PlanController::new(&info, &run.plan, t.segment_s, t.action_scale.clone())
            }
        };
        self.mode = Mode::Plan(Box::new(controller));
        self.takeover_at = Some(s.steps_taken());
    }
}

/// Runs every `runs[i]`: the policy, greedy, on its view until the view's predicate has held
/// for its hold time, then its plan from the goal half (`segment_s` per keyframe).
pub fn run_handoffs(
    policy: &Policy,
    robot: &Arc<Manipulator>,
    runs: &[HandoffRun],
    segment_s: f64,
    threads: usize,
) -> Result<Handoffs> {
    let sim = sim_config_for(policy);
    let timing = Timing {
        dt_s: sim.control_dt_s(),
        segment_s,
        action_scale: sim.action_scale.clone(),
    };
    let episodes: Vec<(&TaskSpec, u64)> = runs.iter().map(|r| (&r.task, r.seed)).collect();
    let (pool, steppers) = start_episodes(policy, robot, &episodes, 0, threads)?;
    let mut handoffs: Vec<HandoffEpisode> = steppers
        .into_iter()
        .zip(runs)
        .map(|(stepper, run)| HandoffEpisode {
            goal_steps: PlanController::new(
                &stepper.info(),
                &run.plan,
                timing.segment_s,
                timing.action_scale.clone(),
            )
            .steps_from(goal_half(&run.plan)),
            run,
            stepper,
            mode: Mode::Policy { held_steps: 0 },
            takeover_at: None,
            actions: &policy.normalizer.actions,
            timing: &timing,
        })
        .collect();
    Driver::new(policy)?.run(&pool, &mut handoffs)?;
    let takeover_at: Vec<Option<usize>> = handoffs.iter().map(|h| h.takeover_at).collect();
    Ok(Handoffs {
        episodes: handoffs.into_iter().map(|h| h.stepper.finish()).collect(),
        handed_over: takeover_at.iter().flatten().count(),
        takeover_at,
    })
}

/// What exploring a skill with handoffs produced in one generation.
#[derive(Debug)]
pub struct HandoffExploration {
    /// Successes to bank: the goal-half search's mean plan's, and the search's own when the
    /// mean plan rarely succeeds.
    pub wins: Vec<Episode>,
    /// Every failed handoff (for hindsight relabelling).
    pub misses: Vec<Episode>,
    pub figures: HandoffFigures,
    pub control_steps: usize,
    /// At least a quarter of the mean plan's runs succeeded: the handoffs are the skill's
    /// demonstrations this generation.
    pub enough: bool,
}

/// Handoff exploration of `skill` on `variants` (the generation's first): CEM over the goal
/// half of the plan (`st.handoff_search`, continued across generations, or started from the
/// whole-plan search's distribution `whole`), then the resulting mean plan on the first
/// `handoff_runs` variants. None when handoffs are off, there is no policy, or no prerequisite
/// has a view of every variant.
pub fn explore_handoffs(
    ctx: &Context,
    skill: &Skill,
    seed: u64,
    st: &mut SkillState,
    policy: Option<&Policy>,
    whole: &PlanDistribution,
    variants: &[TrackedVariant],
) -> Result<Option<HandoffExploration>> {
    let cfg = &ctx.cfg;
    let n = cfg.handoff_runs.min(variants.len());
    let Some(policy) = policy.filter(|_| n > 0) else {
        return Ok(None);
    };
    let variants = &variants[..n];
    let views = skill
        .def
        .prerequisites
        .iter()
        .filter_map(|p| ctx.tree.get(p))
        .find_map(|pre| {
            variants
                .iter()
                .map(|v| prerequisite_view(pre, &v.task, v.seed ^ 0x4A4D_0FF5))
                .collect::<Option<Vec<_>>>()
        });
    let Some(views) = views else {
        return Ok(None);
    };
    let run = |plans: &[Vec<f64>], batch_seed: u64| -> Result<Handoffs> {
        let runs: Vec<HandoffRun> = plans
            .iter()
            .enumerate()
            .map(|(i, plan)| HandoffRun {
                task: variants[i % n].task.clone(),
                view: views[i % n].clone(),
                seed: sim::episode::episode_seed(batch_seed, i),
                plan: plan.clone(),
                takeover: Takeover::WhenViewHolds,
            })
            .collect();
        run_handoffs(policy, &ctx.robot, &runs, cfg.cem.segment_s, cfg.threads)
    };
    let start = st
        .handoff_search
        .clone()
        .unwrap_or_else(|| whole.goal_half_only(&cfg.cem));
    let cem = CemConfig {
        seed,
        threads: Some(cfg.threads),
        max_iterations: 2 * cfg.cem.iterations,
        ..cfg.cem.clone()
    };
    let mut figures = HandoffFigures::default();
    let mut control_steps = 0;
    let (mut searched, mut misses) = (Vec::new(), Vec::new());
    let mut tally = |h: &Handoffs, wins: &mut Vec<Episode>, misses: &mut Vec<Episode>| {
        figures.runs += h.episodes.len();
        figures.handed_over += h.handed_over;
        for e in &h.episodes {
            control_steps += e.outcome.control_steps;
            if e.outcome.success {
                wins.push(e.clone());
            } else {
                misses.push(e.clone());
            }
        }
    };
    let result = cem_with(
        start,
        &cem,
        &mut |plans, batch_seed| {
            let h = run(plans, batch_seed)?;
            tally(&h, &mut searched, &mut misses);
            Ok::<_, SkillsError>(h.episodes)
        },
        &mut |_| {},
    )?;
    let mut wins = Vec::new();
    let mean = vec![result.distribution.mean.clone(); n];
    tally(&run(&mean, seed ^ 0x3EA9)?, &mut wins, &mut misses);
    let enough = !wins.is_empty() && wins.len() >= n / 4;
    if !enough {
        wins.extend(searched);
    }
    figures.successes = wins.len();
    st.handoff_search = Some(result.distribution);
    Ok(Some(HandoffExploration {
        wins,
        misses,
        figures,
        control_steps,
        enough,
    }))
}
