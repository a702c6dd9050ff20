"""Supervised fine-tuning of a LoRA adapter, with the built-in trainer's semantics (lib/engine/train/sft.ts).

Consecutive batches of `batch_size` examples (epochs repeat them in order); cross-entropy on assistant tokens
only, normalised by the batch's trainable-token count; AdamW (β 0.9/0.99, weight decay 0.01), global grad-norm
clip 1.0; one learning rate per batch (a list runs across all epochs and repeats its last entry); one optimizer
step and one gradient_step event per batch. A batch is split into micro-batches by tokens (gradient
accumulation), so any batch size fits in memory.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .chat import ConversationError, tokenize_conversation
from .distributed import all_reduce_max as dist_max
from .distributed import all_reduce_sum as dist_sum
from .distributed import rank as this_rank
from .distributed import world_size
from .forward import micro_batches, sequence_logprobs
from .model import TrainingError


def learning_rate_for(lr: float | list[float], batch: int) -> float:
    if isinstance(lr, (int, float)):
        return float(lr)
    return float(lr[min(batch, len(lr) - 1)])


def tokenize_examples(tokenizer: Any, examples: list[dict], file: str, assistant_turns: str, max_len: int):
    out = []
    for ex in examples:
        try:
            t = tokenize_conversation(tokenizer, ex["messages"], tools=ex.get("tools"), assistant_turns=assistant_turns)
        except ConversationError as err:
            raise TrainingError(f"{file} line {ex.get('line', '?')}: {err}") from err
        # Too long for the model: keep the first max_len tokens (TRL's truncation), like the built-in trainer.
        out.append((t.ids[:max_len], t.mask[:max_len]))
    return out


def train_sft(model: Any, tokenizer: Any, job_input: dict, config: dict, ctx: Any, device: torch.device, opts: Any) -> dict:
    batch_size = int(config["batch_size"])
    epochs = int(config.get("epochs") or 1)
    lr_setting = config["learning_rate"]
    data = tokenize_examples(tokenizer, job_input["examples"], job_input.get("file", "dataset"), config.get("assistant_turns", "all"), opts.max_seq_len(model))
    per_epoch = math.ceil(len(data) / batch_size)
    total = per_epoch * epochs
    ctx.started(total)
    if not data:
        return {}
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=learning_rate_for(lr_setting, 0), betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01)
    model.train()
    world, rank = world_size(), this_rank()
    for b in range(total):
        ctx.check()
        first = (b % per_epoch) * batch_size
        batch = data[first : first + batch_size]
        usable = [(ids, mask) for ids, mask in batch if len(ids) >= 2 and any(mask[1:])]
        tokens = sum(sum(mask[1:]) for _, mask in usable)
        lr = learning_rate_for(lr_setting, b)
        loss_sum = 0.0
        grad_norm = 0.0
        optimizer.zero_grad(set_to_none=True)
        if tokens > 0:
            # Under FSDP each rank trains every world-th row; tokens stays the whole batch's count (every rank
            # holds the whole batch), so the summed gradients equal one process's.
            mine = usable[rank :: world]
            groups = list(micro_batches([len(ids) for ids, _ in mine], opts.micro_batch_tokens)) if mine else []
            # FSDP averages the ranks' gradients; the loss is already divided by the whole batch's token count, so
            # it is multiplied by the number of ranks to make that average the sum. (Setting FSDP's divide factor
            # to 1 instead needs PREMUL_SUM, which gloo lacks.)
            scale = float(world) / tokens
            # Every rank must run as many forward/backward passes as the busiest one (FSDP's gathers and
            # reductions are collectives); the extra ones train a real row with weight 0.
            passes = dist_max(len(groups), device) if world > 1 else len(groups)
            for p in range(passes):
                rows = [mine[i] for i in groups[p]] if p < len(groups) else [usable[0]]
                weight = 1.0 if p < len(groups) else 0.0
                lps, _ = sequence_logprobs(model, [ids for ids, _ in rows], device)
                part = torch.zeros((), device=device)
                for lp, (_, mask) in zip(lps, rows):
                    m = torch.tensor(mask[1:], dtype=lp.dtype, device=device)
                    part = part - (lp * m).sum()
                (part * (weight * scale)).backward()
                loss_sum += float(part.detach()) * weight
            if world > 1:
                loss_sum = dist_sum([loss_sum], device)[0]
            norm = torch.nn.utils.clip_grad_norm_(params, 1.0)
            grad_norm = float(norm.full_tensor() if hasattr(norm, "full_tensor") else norm)
            for g in optimizer.param_groups:
                g["lr"] = lr
            optimizer.step()
        ctx.step(
            {
                "loss": loss_sum / tokens if tokens > 0 else 0.0,
                "learning_rate": lr,
                "grad_norm": grad_norm,
                "num_trajectories": len(batch),
                "num_trainable_tokens": tokens,
            }
        )
    return {}
