#!/usr/bin/env python3
"""PyTorch twin of the Rust (tch/libtorch) behaviour-cloning training loop, for throughput
comparison: same network (`policy/src/model.rs`), same loss (`policy/src/loss.rs`), same
optimiser and schedule (`policy/src/config.rs`, `policy/src/bc.rs`), on a synthetic dataset with
the shapes the Rust featurizer produces (`policy/src/features.rs`, `policy/src/obs.rs`).

    python benches/train_reference.py --size small --json [--obs state|rgbd] [--steps 200]
        [--warmup-steps 20] [--batch-size 256] [--threads N] [--samples 4096] [--seed 0]

Prints one JSON object (with --json) or one human-readable line. CPU only, fp32.

Mirrors, step by step, `train_bc` without a replay set:
  lr = lr_at(step); idx = torch.randint(N, [B]); every dataset tensor index_select(0, idx);
  forward; loss = chunk_nll + 0.5 * value_loss; zero_grad; backward; clip grad norm to 1.0;
  AdamW step (betas 0.9/0.999, eps 1e-8, weight decay 1e-4 on every parameter);
  losses read back (.item()) only every 25 steps and on the last step.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# features.rs / model.rs constants.
ACTION_DIM = 7
OBJECT_DIM = 20
ZONE_DIM = 9
LOG_STD_MIN = -5.0
LOG_STD_MAX = 1.0
LOG_2PI = 1.8378770664093455
PAD_ID = 0
TYPE_LANG, TYPE_PROPRIO, TYPE_OBJECT, TYPE_ZONE, TYPE_IMAGE, TYPES = 0, 1, 2, 3, 4, 5

# UR5e: dof 6 -> proprio_dim = 3 * dof + 12.
DOF = 6
PROPRIO_DIM = 3 * DOF + 12
# One "front" camera, 4 x 64 x 64 (RGB + depth), in rgbd mode.
IMAGE_HW = [(64, 64)]
# Vocabulary: 27 = 25 instruction words + PAD + UNK reproduces the Rust run's 814705 parameters
# for size small, state mode (the embedding is vocab x d_model; 30 would give 815089).
DEFAULT_VOCAB = 27


def model_config(size: str, obs: str) -> dict:
    """ModelConfig::preset."""
    presets = {"tiny": (64, 2, 4), "small": (128, 4, 4), "base": (384, 8, 8)}
    if size not in presets:
        raise SystemExit(f"unknown model size `{size}` (expected tiny, small or base)")
    d_model, depth, heads = presets[size]
    return dict(
        size=size,
        obs=obs,
        d_model=d_model,
        depth=depth,
        heads=heads,
        mlp_ratio=4,
        chunk=8,
        max_lang_tokens=12,
        pool_lang=True,
        max_objects=3,
        max_zones=2,
        cameras=["front"],
        stem_channels=64 if size == "base" else 32,
        patch=4,
    )


# OptimConfig::default()
OPTIM = dict(
    lr=1e-3,
    weight_decay=1e-4,
    warmup_steps=100,
    min_lr_fraction=0.05,
    grad_clip=1.0,
)
VALUE_WEIGHT = 0.5  # BcConfig::default().value_weight
LOG_EVERY = 25  # BcConfig::default().log_every


def lr_at(step: int, steps: int) -> float:
    """OptimConfig::lr_at: linear warm-up, then cosine decay to min_lr_fraction x lr."""
    lr, warm, minf = OPTIM["lr"], OPTIM["warmup_steps"], OPTIM["min_lr_fraction"]
    if step < warm:
        return lr * (step + 1) / warm
    span = float(max(steps - warm, 1))
    progress = min((step - warm) / span, 1.0)
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
    return lr * (minf + (1.0 - minf) * cosine)


class Block(nn.Module):
    """Pre-LN transformer block: fused qkv, SDPA with a [B,1,1,T] bool key mask, tanh GELU MLP."""

    def __init__(self, c: dict):
        super().__init__()
        d = c["d_model"]
        self.heads = c["heads"]
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, c["mlp_ratio"] * d)
        self.fc2 = nn.Linear(c["mlp_ratio"] * d, d)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        dh = d // self.heads
        qkv = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, dh).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0, is_causal=False)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        h = self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return x + h


KEYPOINTS = 16


class CameraEncoder(nn.Module):
    """Mirrors policy/src/vision.rs: stride-2 stem + residual 3x3 conv, patch tokens with learned
    positions, and one spatial soft-argmax keypoint token."""

    def __init__(self, c: dict, hw):
        super().__init__()
        h, w = hw
        ch, d, p = c["stem_channels"], c["d_model"], c["patch"]
        self.conv1 = nn.Conv2d(4, ch, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(ch, ch, 3, stride=1, padding=1)
        self.patch = nn.Conv2d(ch, d, p, stride=p)
        self.grid = ((h + 1) // 2, (w + 1) // 2)
        tokens = (self.grid[0] // p) * (self.grid[1] // p)
        self.pos = nn.Parameter(torch.randn(tokens, d) * 0.02)
        self.keypoint_maps = nn.Conv2d(ch, KEYPOINTS, 1)
        self.keypoint_in = nn.Linear(2 * KEYPOINTS, d)

    def forward(self, image):
        f = F.gelu(self.conv1(image), approximate="tanh")
        f = f + F.gelu(self.conv2(f), approximate="tanh")
        patches = self.patch(f).flatten(2, 3).transpose(1, 2) + self.pos
        gh, gw = self.grid
        b = image.shape[0]
        attention = self.keypoint_maps(f).view(b, KEYPOINTS, gh * gw).softmax(-1).view(b, KEYPOINTS, gh, gw)
        ys = torch.linspace(-1.0, 1.0, gh, device=image.device)
        xs = torch.linspace(-1.0, 1.0, gw, device=image.device)
        ex = (attention.sum(2) * xs).sum(-1)
        ey = (attention.sum(3) * ys).sum(-1)
        keypoints = self.keypoint_in(torch.cat([ex, ey], 1)).unsqueeze(1)
        return patches, keypoints


class VlaNet(nn.Module):
    def __init__(self, c: dict, vocab_size: int, proprio_dim: int, image_hw):
        super().__init__()
        self.c = c
        d = c["d_model"]
        state = c["obs"] == "state"
        self.state = state
        randn = lambda *shape: nn.Parameter(torch.randn(*shape) * 0.02)  # Init::Randn(0, 0.02)
        self.cameras = nn.ModuleList()
        if not state:
            for hw in image_hw:
                self.cameras.append(CameraEncoder(c, hw))
        slots = c["max_objects"] + c["max_zones"]
        self.readout = randn(2, d)
        self.lang_embed = nn.Embedding(vocab_size, d)
        self.lang_pos = randn(c["max_lang_tokens"], d)
        self.proprio_in = nn.Linear(proprio_dim, d)
        self.type_embed = randn(TYPES, d)
        if state:
            self.object_in = nn.Linear(OBJECT_DIM, d)
            self.zone_in = nn.Linear(ZONE_DIM, d)
            self.slot_embed = randn(max(slots, 1), d)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["depth"]))
        self.ln_out = nn.LayerNorm(d)
        self.action_head = nn.Linear(d, c["chunk"] * ACTION_DIM)
        self.value_head = nn.Linear(d, 1)
        self.log_std = nn.Parameter(torch.full((c["chunk"], ACTION_DIM), -1.0))

    def typed(self, x: torch.Tensor, kind: int) -> torch.Tensor:
        return x + self.type_embed[kind]

    def forward(self, obs: dict):
        c = self.c
        b = obs["proprio"].shape[0]
        d = c["d_model"]
        dev = obs["proprio"].device
        ones = lambda n: torch.ones(b, n, dtype=torch.bool, device=dev)
        tokens = [self.readout.unsqueeze(0).expand(b, 2, d)]
        valid = [ones(2)]
        lang_len = min(obs["lang"].shape[1], c["max_lang_tokens"])
        lang = obs["lang"].narrow(1, 0, lang_len)
        lang_tokens = self.lang_embed(lang) + self.lang_pos.narrow(0, 0, lang_len)
        lang_valid = lang.ne(PAD_ID)
        if c["pool_lang"]:
            w = lang_valid.to(lang_tokens.dtype).unsqueeze(-1)
            pooled = (lang_tokens * w).sum(1, keepdim=True) / w.sum(1, keepdim=True).clamp_min(1.0)
            tokens.append(self.typed(pooled, TYPE_LANG))
            valid.append(ones(1))
        else:
            tokens.append(self.typed(lang_tokens, TYPE_LANG))
            valid.append(lang_valid)
        tokens.append(self.typed(self.proprio_in(obs["proprio"]).unsqueeze(1), TYPE_PROPRIO))
        valid.append(ones(1))
        if self.state:
            slot = 0
            for key, layer, ty in (("objects", self.object_in, TYPE_OBJECT), ("zones", self.zone_in, TYPE_ZONE)):
                x, mask = obs[key]
                n = x.shape[1]
                t = layer(x) + self.slot_embed.narrow(0, slot, n)
                slot += n
                tokens.append(self.typed(t, ty))
                valid.append(mask)
        for encoder, image in zip(self.cameras, obs["images"]):
            patches, keypoints = encoder(image)
            n = patches.shape[1]
            tokens.append(self.typed(patches, TYPE_IMAGE))
            tokens.append(self.typed(keypoints, TYPE_IMAGE))
            valid.append(ones(n + 1))
        x = torch.cat(tokens, 1)
        mask = torch.cat(valid, 1).view(b, 1, 1, -1)
        for block in self.blocks:
            x = block(x, mask)
        x = self.ln_out(x)
        mean = self.action_head(x.select(1, 0)).view(b, c["chunk"], ACTION_DIM)
        value_logit = self.value_head(x.select(1, 1)).squeeze(1)
        return mean, self.log_std.clamp(LOG_STD_MIN, LOG_STD_MAX), value_logit


def gaussian_log_prob(x, mean, log_std):
    z = (x - mean) * (-log_std).exp()
    return (z.square() * -0.5 - log_std - 0.5 * LOG_2PI).sum(-1, dtype=torch.float32)


def chunk_nll(actions, mean, log_std, valid, imitate):
    logp = gaussian_log_prob(actions, mean.float(), log_std)  # [B, H]
    w = valid * imitate.unsqueeze(1)
    return -(logp * w).sum(dtype=torch.float32) / w.sum(dtype=torch.float32).clamp_min(1.0)


def value_loss(value_logit, success):
    return F.binary_cross_entropy_with_logits(value_logit.float(), success, reduction="mean")


def synthetic_dataset(c: dict, n: int, vocab: int, gen: torch.Generator) -> dict:
    """Normalised samples with the Rust Dataset's shapes and dtypes."""
    L, H = c["max_lang_tokens"], c["chunk"]
    ids = torch.randint(2, vocab, (n, L), generator=gen, dtype=torch.int64)
    lengths = torch.randint(3, L + 1, (n, 1), generator=gen)
    lang = torch.where(torch.arange(L).unsqueeze(0) < lengths, ids, torch.zeros_like(ids))

    def slots(count: int, dim: int):
        x = torch.randn(n, count, dim, generator=gen)
        valid = torch.rand(n, count, generator=gen) < 0.5
        valid[:, 0] = True
        return x, valid

    obs = dict(lang=lang, proprio=torch.randn(n, PROPRIO_DIM, generator=gen), images=[])
    if c["obs"] == "state":
        obs["objects"] = slots(c["max_objects"], OBJECT_DIM)
        obs["zones"] = slots(c["max_zones"], ZONE_DIM)
    else:
        # Images are fed unnormalised: RGB / 255 - 0.5 and depth / 3 m - 0.5, i.e. in [-0.5, 0.5].
        obs["images"] = [torch.rand(n, 4, h, w, generator=gen) - 0.5 for (h, w) in IMAGE_HW]
    success = (torch.rand(n, generator=gen) < 0.7).float()
    return dict(
        obs=obs,
        actions=torch.randn(n, H, ACTION_DIM, generator=gen),
        action_valid=(torch.rand(n, H, generator=gen) < 0.9).float(),
        success=success,
        imitate=success.clone(),
    )


def gather(data: dict, index: torch.Tensor) -> dict:
    """Dataset::gather on CPU: index_select(0, index) of every tensor."""
    take = lambda t: t.index_select(0, index)
    o = data["obs"]
    obs = dict(lang=take(o["lang"]), proprio=take(o["proprio"]), images=[take(t) for t in o["images"]])
    for key in ("objects", "zones"):
        if key in o:
            obs[key] = (take(o[key][0]), take(o[key][1]))
    return dict(
        obs=obs,
        actions=take(data["actions"]),
        action_valid=take(data["action_valid"]),
        success=take(data["success"]),
        imitate=take(data["imitate"]),
    )


def clip_grad_norm_tch(params, max_norm: float):
    """tch's Optimizer::clip_grad_norm: per-tensor norms, host read of the total, scale if needed."""
    with torch.no_grad():
        grads = [p.grad for p in params if p.grad is not None]
        total = torch.stack([g.norm() for g in grads]).norm().item()
        coef = max_norm / (total + 1e-6)
        if coef < 1.0:
            for g in grads:
                g.mul_(coef)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="small", choices=["tiny", "small", "base"])
    ap.add_argument("--obs", default="state", choices=["state", "rgbd"])
    ap.add_argument("--steps", type=int, default=200, help="timed training steps")
    ap.add_argument("--warmup-steps", type=int, default=20, help="untimed steps before timing")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--samples", type=int, default=4096, help="synthetic dataset rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB)
    ap.add_argument(
        "--clip",
        default="torch",
        choices=["torch", "tch"],
        help="torch: torch.nn.utils.clip_grad_norm_; tch: tch-rs's implementation (host sync, branch)",
    )
    ap.add_argument(
        "--optim-impl",
        default="default",
        choices=["default", "foreach", "fused"],
        help="torch.optim.AdamW implementation (default on CPU = single-tensor, like libtorch C++)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.steps < 1 or args.batch_size < 1 or args.samples < 1 or args.warmup_steps < 0:
        raise SystemExit("steps, batch-size and samples must be >= 1, warmup-steps >= 0")

    torch.set_num_threads(max(1, args.threads))
    device = torch.device("cpu")
    c = model_config(args.size, args.obs)

    gen = torch.Generator().manual_seed(args.seed + 1)
    data = synthetic_dataset(c, args.samples, args.vocab_size, gen)

    torch.manual_seed(args.seed)  # Policy::new seeds before building the VarStore.
    net = VlaNet(c, args.vocab_size, PROPRIO_DIM, IMAGE_HW if args.obs == "rgbd" else []).to(device)
    net.train()
    params = [p for p in net.parameters() if p.requires_grad]
    n_params = sum(p.numel() for p in params)

    opt_kwargs = dict(lr=OPTIM["lr"], betas=(0.9, 0.999), eps=1e-8, weight_decay=OPTIM["weight_decay"], amsgrad=False)
    if args.optim_impl == "foreach":
        opt_kwargs["foreach"] = True
    elif args.optim_impl == "fused":
        opt_kwargs["fused"] = True
    opt = torch.optim.AdamW(params, **opt_kwargs)

    total_steps = args.warmup_steps + args.steps  # OptimConfig.steps of the schedule
    batch_size = args.batch_size
    torch.manual_seed(args.seed)  # train_bc seeds before drawing batches.
    last = (float("nan"), float("nan"), float("nan"))

    def train_step(step: int):
        nonlocal last
        lr = lr_at(step, total_steps)
        for g in opt.param_groups:
            g["lr"] = lr
        index = torch.randint(args.samples, (batch_size,), dtype=torch.int64)
        batch = gather(data, index)
        mean, log_std, value_logit = net(batch["obs"])
        nll = chunk_nll(batch["actions"], mean, log_std, batch["action_valid"], batch["imitate"])
        value = value_loss(value_logit, batch["success"])
        total = nll + value * VALUE_WEIGHT
        opt.zero_grad()
        total.backward()
        if args.clip == "tch":
            clip_grad_norm_tch(params, OPTIM["grad_clip"])
        else:
            torch.nn.utils.clip_grad_norm_(params, OPTIM["grad_clip"])
        opt.step()
        if (step + 1) % LOG_EVERY == 0 or step + 1 == total_steps:
            last = (total.item(), nll.item(), value.item())
            if not math.isfinite(last[0]):
                raise SystemExit(f"training diverged at step {step + 1}: loss {last[0]}")

    for step in range(args.warmup_steps):
        train_step(step)
    start = time.perf_counter()
    for step in range(args.warmup_steps, total_steps):
        train_step(step)
    wall_s = time.perf_counter() - start

    samples = args.steps * batch_size
    seq_len = 2 + (1 if c["pool_lang"] else c["max_lang_tokens"]) + 1
    if args.obs == "state":
        seq_len += c["max_objects"] + c["max_zones"]
    else:
        seq_len += sum(((h + 1) // 2 // c["patch"]) * ((w + 1) // 2 // c["patch"]) + 1 for h, w in IMAGE_HW)
    report = dict(
        samples_per_sec=samples / max(wall_s, 1e-9),
        steps=args.steps,
        warmup_steps=args.warmup_steps,
        batch_size=batch_size,
        size=args.size,
        obs=args.obs,
        threads=torch.get_num_threads(),
        params=n_params,
        vocab_size=args.vocab_size,
        seq_len=seq_len,
        final_loss=last[0],
        final_nll=last[1],
        final_value_loss=last[2],
        wall_s=wall_s,
        ms_per_step=1000.0 * wall_s / args.steps,
        samples=args.samples,
        seed=args.seed,
        clip=args.clip,
        optim_impl=args.optim_impl,
        device=str(device),
        dtype="float32",
        torch_version=torch.__version__,
        python_version=sys.version.split()[0],
    )
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"{args.size}/{args.obs}: {report['samples_per_sec']:.0f} samples/s "
            f"({report['ms_per_step']:.1f} ms/step, {args.steps} steps x {batch_size}, "
            f"{report['threads']} threads, {n_params} params, final loss {last[0]:.4f}, "
            f"torch {torch.__version__})"
        )


if __name__ == "__main__":
    main()
