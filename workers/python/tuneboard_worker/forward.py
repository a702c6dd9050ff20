"""Per-token log-probabilities (and entropies) of sequences under a causal LM, in padded micro-batches."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import torch


def micro_batches(lengths: list[int], token_budget: int) -> Iterable[list[int]]:
    """Groups row indices so that (rows × longest row) stays within the budget; a longer row goes alone."""
    group: list[int] = []
    longest = 0
    for i, n in enumerate(lengths):
        if group and max(longest, n) * (len(group) + 1) > token_budget:
            yield group
            group, longest = [], 0
        group.append(i)
        longest = max(longest, n)
    if group:
        yield group


def pad_batch(rows: Sequence[Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows of token ids (lists or integer arrays), right-padded with 0: (ids, attention mask), both long, on the CPU."""
    longest = max(len(r) for r in rows)
    ids = torch.zeros((len(rows), longest), dtype=torch.long)
    attn = torch.zeros((len(rows), longest), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.as_tensor(r, dtype=torch.long)
        attn[i, : len(r)] = 1
    return ids, attn


def sequence_logprobs(
    model: Any, rows: list[list[int]], device: torch.device, *, with_entropy: bool = False
) -> tuple[list[torch.Tensor], list[torch.Tensor] | None]:
    """For each row of ids, logprob[t] of token t+1 given tokens ≤ t (float32, length len−1), differentiable."""
    ids, attn = pad_batch(rows)
    ids, attn = ids.to(device), attn.to(device)
    logits = model(input_ids=ids, attention_mask=attn).logits
    # Targets shifted instead of logits, as Transformers' own loss does: slicing logits[:, :-1] and flattening it
    # copies the whole (rows × length × vocab) tensor, forward and backward, which cost 39 % of a step on a
    # 151k-vocabulary model. The last position and padding get ignore_index and a logprob of 0, never read.
    targets = torch.full_like(ids, -100)
    for i, r in enumerate(rows):
        targets[i, : len(r) - 1] = ids[i, 1 : len(r)]
    vocab = logits.shape[-1]
    lp = -torch.nn.functional.cross_entropy(
        logits.reshape(-1, vocab).float(), targets.reshape(-1), reduction="none", ignore_index=-100
    ).view(ids.shape)
    ent = None
    if with_entropy:
        with torch.no_grad():
            logp = torch.log_softmax(logits[:, :-1, :].float(), dim=-1)
            ent_all = -(logp.exp() * logp).sum(-1)
        ent = [ent_all[i, : len(r) - 1] for i, r in enumerate(rows)]
    return [lp[i, : len(r) - 1] for i, r in enumerate(rows)], ent
