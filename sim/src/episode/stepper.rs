//! `EpisodeStepper`: one episode advanced a control step at a time by whoever holds the actions,
//! so a batched policy can step many episodes in lockstep (one network call for all of them)
//! with exactly the same rules as `run_episode`: reward, health, failure, the success hold.

use std::sync::Arc;

use robots::Manipulator;

use super::{Episode, EpisodeInfo, Outcome, StepRecord};
use crate::config::SimConfig;
use crate::control::Action;
use crate::error::Result;
use crate::reward::{Handling, Judge};
use crate::scene::Scene;
use crate::state::{Observation, PhysicsState};
use crate::task::TaskSpec;

/// An episode in progress.
#[derive(Debug)]
pub struct EpisodeStepper {
    robot: Arc<Manipulator>,
    task: TaskSpec,
    config: Arc<SimConfig>,
    scene: Scene,
    index: usize,
    seed: u64,
    record_images: bool,
    initial_state: PhysicsState,
    observation: Observation,
    steps: Vec<StepRecord>,
    outcome: Outcome,
    max_steps: usize,
    hold_steps: usize,
    held_since: Option<(usize, f64)>,
    handling: Handling,
    /// Physics steps already taken in the current control period.
    substep: usize,
    done: bool,
}

impl EpisodeStepper {
    /// Builds the scene of `task`; the first observation is ready.
    pub fn new(
        robot: &Arc<Manipulator>,
        task: &TaskSpec,
        config: &Arc<SimConfig>,
        index: usize,
        seed: u64,
        record_images: bool,
    ) -> Result<EpisodeStepper> {
        let scene = Scene::new(robot.clone(), task, config.clone())?;
        let initial_state = scene.physics_state();
        let observation = scene.observe(&initial_state, !config.cameras.is_empty());
        let dt = config.control_dt_s();
        let max_steps = (task.max_duration_s / dt).ceil() as usize;
        Ok(EpisodeStepper {
            robot: robot.clone(),
            task: task.clone(),
            config: config.clone(),
            scene,
            index,
            seed,
            record_images,
            initial_state,
            observation,
            steps: Vec::with_capacity(max_steps),
            outcome: Outcome {
                success: false,
                success_time_s: None,
                failure: None,
                invalid: None,
                control_steps: 0,
                episode_return: 0.0,
            },
            max_steps,
            hold_steps: (task.goal.hold_s / dt).round() as usize,
            held_since: None,
            handling: Handling::default(),
            substep: 0,
            done: max_steps == 0,
        })
    }

    /// What a controller of this episode is told before its first step.
    pub fn info(&self) -> EpisodeInfo<'_> {
        EpisodeInfo {
            index: self.index,
            seed: self.seed,
            task: &self.task,
            robot: &self.robot,
            world_from_root: self.scene.world_from_root,
            control_dt_s: self.config.control_dt_s(),
        }
    }

    pub fn task(&self) -> &TaskSpec {
        &self.task
    }

    /// The observation the next action should answer.
    pub fn observation(&self) -> &Observation {
        &self.observation
    }

    /// The episode has ended (success held, failure, invalid physics or time limit).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Whether `other`'s success predicate holds at the end of the last control period, judged
    /// against this episode's start: `other` is another view of the same scene (a
    /// prerequisite's goal for the same object), so a controller can hand over once it is met.
    pub fn predicate_holds(&self, other: &TaskSpec) -> bool {
        let Some(last) = self.steps.last() else {
            return false;
        };
        let judge = Judge {
            task: other,
            initial: &self.initial_state,
            weights: &self.config.reward,
        };
        judge.success(&last.state)
    }

    /// Control steps taken so far.
    pub fn steps_taken(&self) -> usize {
        self.outcome.control_steps
    }

    /// The joint targets the motors are driven to.
    pub fn q_target_rad(&self) -> &[f64] {
        self.scene.q_target_rad()
    }

    /// Physics steps in one control period.
    pub fn substeps_per_step(&self) -> usize {
        self.config.substeps()
    }

    /// Applies `action` until the end of the current control period and judges the result.
    /// Does nothing once done.
    pub fn step(&mut self, action: Action) {
        let rest = self.config.substeps() - self.substep;
        self.step_substeps(action, rest);
    }

    /// Applies `action` for `n` physics steps, at most to the end of the current control
    /// period, as a driver does that takes commands faster than the policy acts. The period
    /// is judged (reward, health, failure, success hold) and recorded with the action in force
    /// at its end once its last physics step is taken; before that the observation follows
    /// the physics (without camera images). An end-effector delta is applied on every call. Returns the physics steps
    /// taken (0 once done).
    pub fn step_substeps(&mut self, action: Action, n: usize) -> usize {
        if self.done || n == 0 {
            return 0;
        }
        let step = self.steps.len();
        if let Err(problem) = self.scene.apply(&action) {
            // A controller bug ends this episode, not the batch.
            self.outcome.invalid = Some(format!("step {step}: invalid action: {problem}"));
            self.done = true;
            return 0;
        }
        if self.substep == 0 {
            self.scene.begin_control_period();
        }
        let per_step = self.config.substeps();
        let taken = n.min(per_step - self.substep);
        self.scene.step_physics(taken);
        self.substep += taken;
        if self.substep < per_step {
            // Cameras render at the policy's rate: mid-period observations carry no images.
            let state = self.scene.physics_state();
            self.observation = self.scene.observe(&state, false);
            return taken;
        }
        self.substep = 0;
        self.end_period(step, action);
        taken
    }

    /// Judges and records the control period that just ended.
    fn end_period(&mut self, step: usize, action: Action) {
        let state = self.scene.physics_state();
        let judge = Judge {
            task: &self.task,
            initial: &self.initial_state,
            weights: &self.config.reward,
        };
        let reward = judge.reward(&state);
        self.outcome.episode_return += reward.total;
        self.outcome.control_steps = step + 1;
        crate::throughput::count_control_period(self.config.substeps());
        let invalid = self.scene.health_problem(&state);
        let failure = judge.failure(&state);
        self.handling.observe(&judge, &state);
        let success_now =
            invalid.is_none() && judge.success(&state) && self.handling.holds(&self.task, &state);
        self.observation = self.scene.observe(&state, !self.config.cameras.is_empty());
        self.steps.push(StepRecord {
            action,
            q_target_rad: self.scene.q_target_rad().to_vec(),
            state,
            reward,
            images: if self.record_images {
                self.observation.images.clone()
            } else {
                Vec::new()
            },
        });
        if invalid.is_some() {
            self.outcome.invalid = invalid;
            self.done = true;
            return;
        }
        if failure.is_some() {
            self.outcome.failure = failure;
            self.done = true;
            return;
        }
        self.held_since = match (success_now, self.held_since) {
            (true, None) => Some((step, self.scene.time_s())),
            (true, held) => held,
            (false, _) => None,
        };
        if let Some((first, t)) = self.held_since {
            if step + 1 - first >= self.hold_steps.max(1) {
                self.outcome.success = true;
                self.outcome.success_time_s = Some(t);
                self.done = true;
                return;
            }
        }
        if step + 1 >= self.max_steps {
            self.done = true;
        }
    }

    /// The recorded episode.
    pub fn finish(self) -> Episode {
        Episode {
            index: self.index,
            seed: self.seed,
            robot_model_hash: self.robot.model.model_hash.clone(),
            task: self.task,
            initial_state: self.initial_state,
            steps: self.steps,
            outcome: self.outcome,
        }
    }
}
