"""Supervised fine-tuning of a LoRA adapter, with the built-in trainer's semantics (lib/engine/train/sft.ts).

Consecutive batches of `batch_size` examples (epochs repeat them in order); cross-entropy on assistant tokens
only, normalised by the batch's trainable-token count; AdamW (β 0.9/0.99, weight decay 0.01), global grad-norm
clip 1.0; one learning rate per batch (a list runs across all epochs and repeats its last entry); one optimizer
step and one gradient_step event per batch; with examples held out (`validation_split`), an epoch's last step also
carries val/loss and val/token_accuracy. A batch is split into micro-batches by tokens (gradient
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
from .forward import micro_batches, pad_batch, sequence_logprobs
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


@torch.no_grad()
def evaluate_sft(model: Any, rows: list[tuple[list[int], list[int]]], device: torch.device, opts: Any) -> dict:
    """The held-out examples' loss per trained token and token accuracy (greedy next token = the example's), as
    lib/engine/train/sft.ts's evaluateSft. Under FSDP every rank scores every row: the forward passes are
    collectives, and identical inputs give every rank the same figures without a reduction."""
    was_training = model.training
    model.eval()
    loss_sum = 0.0
    hits = 0
    tokens = 0
    try:
        for group in micro_batches([len(ids) for ids, _ in rows], opts.micro_batch_tokens):
            chunk = [rows[i] for i in group]
            ids, attn = pad_batch([row for row, _ in chunk])
            logits = model(input_ids=ids.to(device), attention_mask=attn.to(device)).logits.float()
            for i, (row, mask) in enumerate(chunk):
                n = len(row)
                target = torch.tensor(row[1:], dtype=torch.long, device=device)
                m = torch.tensor(mask[1:], dtype=torch.bool, device=device)
                lp = torch.log_softmax(logits[i, : n - 1], dim=-1)
                target_lp = lp.gather(-1, target[:, None])[:, 0]
                # Ties count as hits, as in the built-in engine.
                hit = target_lp >= lp.max(dim=-1).values
                loss_sum -= float(target_lp[m].sum())
                hits += int(hit[m].sum())
                tokens += int(m.sum())
    finally:
        if was_training:
            model.train()
    return {"val/loss": loss_sum / tokens if tokens else 0.0, "val/token_accuracy": hits / tokens if tokens else 0.0}


def train_sft(model: Any, tokenizer: Any, job_input: dict, config: dict, ctx: Any, device: torch.device, opts: Any) -> dict:
    batch_size = int(config["batch_size"])
    epochs = int(config.get("epochs") or 1)
    lr_setting = config["learning_rate"]
    file = job_input.get("file", "dataset")
    turns = config.get("assistant_turns", "all")
    data = tokenize_examples(tokenizer, job_input["examples"], file, turns, opts.max_seq_len(model))
    # Held out by the server's validation_split (absent from older servers); rows without a trained token say nothing.
    held_out = [
        (ids, mask)
        for ids, mask in tokenize_examples(tokenizer, job_input.get("validation") or [], file, turns, opts.max_seq_len(model))
        if len(ids) >= 2 and any(mask[1:])
    ]
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
        metrics = {
            "loss": loss_sum / tokens if tokens > 0 else 0.0,
            "learning_rate": lr,
            "grad_norm": grad_norm,
            "num_trajectories": len(batch),
            "num_trainable_tokens": tokens,
        }
        if held_out and b % per_epoch == per_epoch - 1:
            metrics.update(evaluate_sft(model, held_out, device, opts))
        ctx.step(metrics)
    return {}
