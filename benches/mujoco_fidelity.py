"""Fidelity probes of an anchor scene in MuJoCo, computed exactly as `sim::anchor::fidelity`.

Usage: python mujoco_fidelity.py [scene.xml] [--elbow NAME]     (prints one JSON object)

The shoulder is the second actuator's joint (j2), the base yaw the first (j1), the elbow the
joint named by --elbow (default j3, the arm-cube's; the panda-cube's is j4).
- gravity sag: all targets 0 for SETTLE_S; j2 and elbow positions then. On the arm-cube the
  wrist then rests on the table edge, so this is contact-influenced.
- lifted sag: same with the j2 target at LIFTED_J2_RAD (arm clear of everything): q - target.
- step responses of j2 (gravity-loaded shoulder, up by STEP_RAD) and j1 (base yaw, +STEP_RAD)
  from the lifted posture, sampled for STEP_HORIZON_S: positions at 0.05/0.1/0.2/0.5 s,
  overshoot (peak - final)/(final - initial), last time outside a 5% band around final.
Needs `mujoco numpy` (scripts/python-env.sh).
"""
import json
import sys
from pathlib import Path

import mujoco
import numpy as np

SETTLE_S = 2.0
STEP_RAD = 0.3
STEP_HORIZON_S = 2.0
LIFTED_J2_RAD = -0.3


def default_scene() -> str:
    here = Path(__file__).resolve().parent
    for d in (here.parent / "shared" / "anchors", here.parent.parent / "shared" / "anchors"):
        if (d / "mujoco_arm_cube.xml").is_file():
            return str(d / "mujoco_arm_cube.xml")
    sys.exit("mujoco_fidelity: no shared/anchors/mujoco_arm_cube.xml; pass the scene path")


def steps_for(seconds: float, dt: float) -> int:
    return int(round(seconds / dt))


def settled(m: mujoco.MjModel, targets: np.ndarray) -> mujoco.MjData:
    d = mujoco.MjData(m)
    d.ctrl[:] = targets
    for _ in range(steps_for(SETTLE_S, m.opt.timestep)):
        mujoco.mj_step(m, d)
    return d


def qpos_of(m: mujoco.MjModel, d: mujoco.MjData, joint: str) -> float:
    return float(d.qpos[m.jnt_qposadr[m.joint(joint).id]])


def summarize(joint: str, q0: float, trace: np.ndarray, dt: float) -> dict:
    def at(t: float) -> float:
        k = max(steps_for(t, dt) - 1, 0)
        return float(trace[k]) if k < len(trace) else float("nan")

    q_final = float(trace[-1])
    amplitude = q_final - q0
    sign = np.sign(amplitude)
    peak = float(np.max(sign * trace))
    overshoot = max((peak - sign * q_final) / abs(amplitude), 0.0) if amplitude != 0 else 0.0
    outside = np.nonzero(np.abs(trace - q_final) > 0.05 * abs(amplitude))[0]
    settling = float((outside[-1] + 1) * dt) if len(outside) else 0.0
    return {
        "joint": joint,
        "q_initial_rad": q0,
        "q_at_0_05_s_rad": at(0.05),
        "q_at_0_1_s_rad": at(0.1),
        "q_at_0_2_s_rad": at(0.2),
        "q_at_0_5_s_rad": at(0.5),
        "q_final_rad": q_final,
        "overshoot_frac": overshoot,
        "settling_time_5pct_s": settling,
    }


def lifted_targets(m: mujoco.MjModel) -> np.ndarray:
    t = np.zeros(m.nu)
    t[1] = LIFTED_J2_RAD
    return t


def step_response(m: mujoco.MjModel, joint: str, actuator: int, step_rad: float) -> dict:
    d = settled(m, lifted_targets(m))
    q0 = qpos_of(m, d, joint)
    d.ctrl[:] = lifted_targets(m)
    d.ctrl[actuator] += step_rad
    trace = []
    for _ in range(steps_for(STEP_HORIZON_S, m.opt.timestep)):
        mujoco.mj_step(m, d)
        trace.append(qpos_of(m, d, joint))
    return summarize(joint, q0, np.asarray(trace), m.opt.timestep)


def main() -> None:
    argv = sys.argv[1:]
    elbow = "j3"
    if "--elbow" in argv:
        i = argv.index("--elbow")
        if i + 1 >= len(argv):
            sys.exit("mujoco_fidelity: --elbow needs a joint name")
        elbow = argv[i + 1]
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("--")]
    m = mujoco.MjModel.from_xml_path(args[0] if args else default_scene())
    d = settled(m, np.zeros(m.nu))
    lifted = settled(m, lifted_targets(m))
    print(json.dumps({
        "engine": f"mujoco {mujoco.__version__}",
        "gravity_sag_j2_rad": qpos_of(m, d, "j2"),
        "gravity_sag_elbow_rad": qpos_of(m, d, elbow),
        "lifted_sag_j2_rad": qpos_of(m, lifted, "j2") - LIFTED_J2_RAD,
        "lifted_sag_elbow_rad": qpos_of(m, lifted, elbow),
        "step_j2": step_response(m, "j2", 1, -STEP_RAD),
        "step_j1": step_response(m, "j1", 0, STEP_RAD),
    }))


if __name__ == "__main__":
    main()
