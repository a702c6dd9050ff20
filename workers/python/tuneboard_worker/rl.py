"""RL on stored trajectory groups, the built-in engine's algorithm (lib/engine/train/rl.ts) on a LoRA adapter.

Advantages per group (a trajectory with advantage 0 is dropped), histories tokenised with the chat template and
truncated after their last trainable assistant item, sampled turns taken as the client produced them (choice
logprobs in `token_id:N` form, else the token string looked up in the vocabulary), per-trajectory token weights
and batch-wide weight/advantage normalisation, the PPO/CISPO objective (rl_loss.py), optional precalculated old
logprobs from the adapter as it was before the first step, AdamW β 0.9/0.99, weight decay 0.1, clip 0.1, a
constant learning rate. Each history is one row and one optimizer step.

Under FSDP (torchrun) every rank trains the same row at each step: a step holds one row, so there is nothing to
split, and FSDP's gradient average over identical gradients is that gradient. The ranks exist to hold a model too
large for one GPU, not to share rows; the batch order (a seeded shuffle) matches on all ranks. The one pass that
does split is precalculate_logprobs: no gradient flows there, so each rank runs its share of the rows and the
ranks swap their results (precalculate_old_logprobs).
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

import torch
import torch.distributed as dist

from .chat import ConversationError, tokenize_conversation
from .distributed import rank as this_rank
from .distributed import world_size
from .forward import sequence_logprobs
from .model import TrainingError
from .rl_loss import LossConfig, balance_advantage, group_advantages, rl_row_loss

_TOKEN_ID = re.compile(r"^token_id:(\d+)$")


def _is_choice(item: dict) -> bool:
    return "message" in item


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _choice_message(item: dict) -> dict:
    m = item.get("message") if isinstance(item.get("message"), dict) else {}
    msg: dict[str, Any] = {"role": "assistant", "content": _content_text(m.get("content"))}
    if isinstance(m.get("tool_calls"), list) and m["tool_calls"]:
        msg["tool_calls"] = m["tool_calls"]
    return msg


def _has_logprobs(item: dict) -> bool:
    return _is_choice(item) and item.get("logprobs") is not None


class _Vocab:
    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        self.size = len(tokenizer)
        self._reverse: dict[str, int] | None = None

    def lookup(self, token: str) -> int | None:
        m = _TOKEN_ID.match(token)
        if m:
            tid = int(m.group(1))
            return tid if tid < self.size else None
        if self._reverse is None:
            self._reverse = {}
            for tid in range(self.size - 1, -1, -1):
                self._reverse[self.tokenizer.decode([tid])] = tid
        return self._reverse.get(token)


def prepare_rl_batch(groups: list, tokenizer: Any, config: dict, max_len: int) -> dict:
    vocab = _Vocab(tokenizer)
    rows: list[dict] = []
    n_trainable_groups = 0
    n_trajectories = 0
    trajectory_id = 0
    allow = bool(config["allow_training_without_logprobs"])
    for gi, g in enumerate(groups):
        group = g if isinstance(g, dict) else {}
        trajectories = [t for t in (group.get("trajectories") or []) if isinstance(t, dict)]
        n_trajectories += len(trajectories) + len(group.get("exceptions") or [])
        if not trajectories:
            continue
        rewards = [t["reward"] if isinstance(t.get("reward"), (int, float)) else 0 for t in trajectories]
        if len(trajectories) >= 2 and len(set(rewards)) > 1:
            n_trainable_groups += 1
        advantages = group_advantages(rewards, bool(config["scale_rewards"]))
        for ti, traj in enumerate(trajectories):
            tid = trajectory_id
            trajectory_id += 1
            if advantages[ti] == 0:
                continue
            advantage = balance_advantage(advantages[ti], float(config["advantage_balance"]))
            label = f"group {gi + 1}, trajectory {ti + 1}"
            histories = [(traj.get("messages_and_choices"), traj.get("tools"))] + [
                (h.get("messages_and_choices"), h.get("tools"))
                for h in (traj.get("additional_histories") or [])
                if isinstance(h, dict)
            ]
            for hi, (raw_items, tools) in enumerate(histories):
                items = [i for i in (raw_items or []) if isinstance(i, dict)]
                hlabel = label if hi == 0 else f"{label}, additional history {hi}"
                last = -1
                for i, item in enumerate(items):
                    if _has_logprobs(item) or (allow and (_is_choice(item) or item.get("role") == "assistant")):
                        last = i
                if last < 0:
                    continue
                messages: list[dict] = []
                turn_tokens: dict[int, tuple[list[int], list[float | None]]] = {}
                for i, item in enumerate(items[: last + 1]):
                    if not _is_choice(item):
                        messages.append({**item, "role": item["role"] if isinstance(item.get("role"), str) else "user"})
                        continue
                    messages.append(_choice_message(item))
                    lp = item.get("logprobs")
                    content = lp.get("content") if isinstance(lp, dict) and isinstance(lp.get("content"), list) else None
                    if not content:
                        continue
                    ids: list[int] = []
                    lps: list[float | None] = []
                    for entry in content:
                        e = entry if isinstance(entry, dict) else {}
                        token = e.get("token") if isinstance(e.get("token"), str) else ""
                        tok_id = vocab.lookup(token)
                        if tok_id is None:
                            raise TrainingError(f"{hlabel}: token {token!r} is not in the model's vocabulary")
                        ids.append(tok_id)
                        lps.append(float(e["logprob"]) if isinstance(e.get("logprob"), (int, float)) else None)
                    turn_tokens[i] = (ids, lps)
                try:
                    conv = tokenize_conversation(
                        tokenizer, messages, tools=tools if isinstance(tools, list) else None, turn_tokens=turn_tokens
                    )
                except ConversationError as err:
                    raise TrainingError(f"{hlabel}: {err}") from err
                n = min(len(conv.ids), max_len)
                rows.append(
                    {
                        "label": hlabel,
                        "trajectory": tid,
                        "ids": conv.ids[:n],
                        "mask": conv.mask[:n],
                        "old_logprobs": [math.nan if x is None else x for x in conv.logprobs[:n]],
                        "advantage": advantage,
                    }
                )
    return {
        "rows": [r for r in rows if len(r["ids"]) >= 2],
        "num_groups_submitted": len(groups),
        "num_groups_trainable": n_trainable_groups,
        "num_trajectories": n_trajectories,
    }


def zero_advantage_share(submitted: int, trainable: int) -> float:
    """Share of submitted groups without a reward spread; 1.0 means the job cannot change the weights."""
    return (submitted - trainable) / submitted if submitted > 0 else 0.0


def row_tensors(rows: list[dict], allow_without_logprobs: bool) -> list[dict]:
    """Per-position mask, old logprobs, weights w = 1/(N_traj + 1e-6) and advantages, normalised over the batch:
    w ← w / mean(w) and A ← A / mean(|A|·w) over all masked tokens. Empty when nothing is trainable."""
    per_traj: dict[int, int] = {}
    any_logprob = False
    for r in rows:
        n = 0
        for j in range(1, len(r["ids"])):
            if r["mask"][j] != 1:
                continue
            n += 1
            if not math.isnan(r["old_logprobs"][j]):
                any_logprob = True
        per_traj[r["trajectory"]] = per_traj.get(r["trajectory"], 0) + n
    if not any_logprob and not allow_without_logprobs:
        return []
    out = []
    w_sum = 0.0
    count = 0
    for r in rows:
        n = len(r["ids"]) - 1
        w = 1 / (per_traj.get(r["trajectory"], 0) + 1e-6)
        t = {"row": r, "mask": [0] * n, "old_logprobs": r["old_logprobs"][1:], "weights": [0.0] * n, "advantages": [0.0] * n}
        for p in range(n):
            if r["mask"][p + 1] != 1:
                continue
            t["mask"][p] = 1
            t["weights"][p] = w
            t["advantages"][p] = r["advantage"]
            w_sum += w
            count += 1
        if any(t["mask"]):
            out.append(t)
    if count == 0:
        return []
    w_mean = w_sum / count
    aw = 0.0
    for t in out:
        for p, m in enumerate(t["mask"]):
            if m:
                t["weights"][p] /= w_mean
                aw += abs(t["advantages"][p]) * t["weights"][p]
    a_mean = aw / count
    for t in out:
        for p, m in enumerate(t["mask"]):
            if m:
                t["advantages"][p] /= a_mean
    return out


def precalculate_old_logprobs(model: Any, tensors: list[dict], ctx: Any, device: torch.device) -> None:
    """lp_old from the adapter as it was before this job's first step, once, for every row (in place).

    Under FSDP rank r computes rows r, r + world, …; every rank holds the same shuffled list, so the shares need no
    exchange up front. Forward passes are collectives (each one gathers the layers' shards), so every rank runs
    ceil(rows / world) of them and one that has run out of rows runs a two-token pass whose result is dropped. The
    logprobs then travel as Python floats (pickled, exact), so every rank ends with the same lp_old for every row,
    as the training loop that follows needs on all of them.
    """
    world, rank = world_size(), this_rank()
    passes = -(-len(tensors) // world)
    mine: dict[int, list[float]] = {}
    model.eval()
    with torch.no_grad():
        for p in range(passes):
            ctx.check()  # every rank checks equally often: the verdict is a broadcast from rank 0
            i = p * world + rank
            ids = tensors[i]["row"]["ids"] if i < len(tensors) else tensors[0]["row"]["ids"][:2]
            lps, _ = sequence_logprobs(model, [ids], device)
            if i < len(tensors):
                mine[i] = lps[0].double().cpu().tolist()
    if world > 1:
        shares: list[Any] = [None] * world
        dist.all_gather_object(shares, mine)
        mine = {i: lp for share in shares for i, lp in share.items()}
    for i, t in enumerate(tensors):
        t["old_logprobs"] = mine[i]


def train_rl(model: Any, tokenizer: Any, job_input: dict, config: dict, ctx: Any, device: torch.device, opts: Any) -> dict:
    batch = prepare_rl_batch(job_input["trajectory_groups"], tokenizer, config, opts.max_seq_len(model))
    tensors = row_tensors(batch["rows"], bool(config["allow_training_without_logprobs"]))
    random.Random(0).shuffle(tensors)
    summary = {
        "num_groups_submitted": batch["num_groups_submitted"],
        "num_groups_trainable": batch["num_groups_trainable"],
        # Same name and formula as the built-in engine (lib/engine/train/rl.ts zeroAdvantageShare).
        "zero_advantage_share": zero_advantage_share(batch["num_groups_submitted"], batch["num_groups_trainable"]),
        "num_trajectories": batch["num_trajectories"],
    }
    ctx.started(len(tensors))
    if not tensors:
        return summary
    cfg = LossConfig.from_config(config)
    lr = float(config["learning_rate"])
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
    if config.get("precalculate_logprobs"):
        precalculate_old_logprobs(model, tensors, ctx, device)
    model.train()
    for t in tensors:
        ctx.check()
        optimizer.zero_grad(set_to_none=True)
        lps, ents = sequence_logprobs(model, [t["row"]["ids"]], device, with_entropy=True)
        lp = lps[0].double()
        as_t = lambda xs: torch.tensor(xs, dtype=torch.float64, device=device)  # noqa: E731
        mask = as_t(t["mask"])
        weights = as_t(t["weights"])
        loss, masked = rl_row_loss(lp, mask, as_t(t["old_logprobs"]), weights, as_t(t["advantages"]), cfg)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(params, 0.1)
        # Sharded (FSDP), the norm is a DTensor over the ranks' shards: its full value is the global norm.
        grad_norm = float(norm.full_tensor() if hasattr(norm, "full_tensor") else norm)
        optimizer.step()
        entropy = float((ents[0].double() * weights * mask).sum() / masked) if masked else 0.0
        value = float(loss.detach())
        ctx.step(
            {
                "loss": value,
                "policy_loss": value,
                "entropy": entropy,
                "grad_norm": grad_norm,
                "learning_rate": lr,
                "num_trainable_tokens": masked,
                **summary,
            }
        )
    return summary
