"""Loads a LeRobot dataset written by `coevolve export lerobot` with the real `lerobot` client
(offline) and checks it against the values our episode store holds.

Usage: lerobot_check.py DATASET_DIR EXPECTED_JSON
EXPECTED_JSON: {"fps", "episodes", "frames": [{"index", "episode_index", "frame_index",
"task", "state", "action", "ee_delta", "reward", "done", "success", "pixels": {key: [y, x,
[values]]} or null}]} (written by tests/lerobot.rs from the store). Prints one summary line;
exits non-zero on the first mismatch.
"""
import json
import logging
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a layout mistake fails fast, never downloads
logging.disable(logging.WARNING)  # torchcodec without ffmpeg falls back to pyav, noisily

import torch  # noqa: E402
from lerobot.datasets import LeRobotDataset, LeRobotDatasetMetadata  # noqa: E402


def close(a, b, what, tol=1e-5):
    a = torch.as_tensor(a, dtype=torch.float64).flatten()
    b = torch.as_tensor(b, dtype=torch.float64).flatten()
    if a.shape != b.shape or not torch.allclose(a, b, atol=tol, rtol=0):
        sys.exit(f"mismatch in {what}: dataset {a.tolist()} vs store {b.tolist()}")


def main():
    root, expected_path = sys.argv[1], sys.argv[2]
    expected = json.load(open(expected_path))
    frames = expected["frames"]
    meta = LeRobotDatasetMetadata("local/coevolve", root=root)
    fps = meta.fps
    if fps != expected["fps"] or meta.total_frames != len(frames):
        sys.exit(f"fps {fps} / frames {meta.total_frames}, expected {expected['fps']} / {len(frames)}")
    images = [k for k, f in meta.features.items() if f["dtype"] == "image"]
    deltas = {"observation.state": [-1 / fps, 0.0], "action": [i / fps for i in range(4)]}
    for key in images:
        deltas[key] = [0.0]
    ds = LeRobotDataset("local/coevolve", root=root, delta_timestamps=deltas)
    if len(ds) != len(frames) or ds.num_episodes != expected["episodes"]:
        sys.exit(f"{len(ds)} frames / {ds.num_episodes} episodes, expected {len(frames)} / {expected['episodes']}")
    loader = torch.utils.data.DataLoader(ds, batch_size=16, shuffle=True, num_workers=2,
                                         generator=torch.Generator().manual_seed(0))
    seen = 0
    for batch in loader:
        for row, index in enumerate(batch["index"].tolist()):
            f = frames[index]
            where = f"frame {index} (episode {f['episode_index']}, step {f['frame_index']})"
            for key in ("episode_index", "frame_index"):
                if batch[key][row].item() != f[key]:
                    sys.exit(f"{where}: {key} {batch[key][row].item()} != {f[key]}")
            if batch["task"][row] != f["task"]:
                sys.exit(f"{where}: task {batch['task'][row]!r} != {f['task']!r}")
            close(batch["timestamp"][row], f["frame_index"] / fps, f"{where} timestamp")
            close(batch["observation.state"][row][1], f["state"], f"{where} observation.state")
            close(batch["action"][row][0], f["action"], f"{where} action")
            close(batch["action.ee_delta"][row], f["ee_delta"], f"{where} action.ee_delta")
            close(batch["next.reward"][row], f["reward"], f"{where} next.reward", 1e-4)
            for key in ("done", "success"):
                if bool(batch[f"next.{key}"][row]) != f[key]:
                    sys.exit(f"{where}: next.{key} {bool(batch[f'next.{key}'][row])} != {f[key]}")
            # Deltas are clamped inside the episode and flagged as padding outside it.
            first, last = f["frame_index"] == 0, index + 1 == len(frames) or frames[index + 1]["frame_index"] == 0
            if bool(batch["observation.state_is_pad"][row][0]) != first:
                sys.exit(f"{where}: observation.state_is_pad {batch['observation.state_is_pad'][row].tolist()}")
            if last and not bool(batch["action_is_pad"][row][1]):
                sys.exit(f"{where}: action_is_pad {batch['action_is_pad'][row].tolist()} on the last frame")
            if not last:
                close(batch["action"][row][1], frames[index + 1]["action"], f"{where} next action")
            for key, (y, x, values) in (f.get("pixels") or {}).items():
                image = batch[key][row][0]  # [C, H, W]; colour in [0, 1], depth in mm
                scale = 255.0 if image.shape[0] == 3 else 1.0
                close(image[:, y, x] * scale, values, f"{where} {key} pixel ({y}, {x})", 1e-3)
            seen += 1
    if seen != len(frames):
        sys.exit(f"the loader gave {seen} frames, expected {len(frames)}")
    stats = meta.stats
    for key in ("observation.state", "action", *images):
        for stat in ("min", "max", "mean", "std", "count", "q01", "q50", "q99"):
            if stat not in stats[key]:
                sys.exit(f"meta/stats.json: {key} has no {stat}")
    print(f"lerobot: {seen} frames of {ds.num_episodes} episodes at {fps} fps match the store "
          f"({len(images)} image features, tasks {sorted(set(f['task'] for f in frames))})")


if __name__ == "__main__":
    main()
