"""Per-token log-probabilities (and entropies) of sequences under a causal LM, in padded micro-batches."""

from __future__ import annotations

from typing import Any, Iterable

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


def sequence_logprobs(
    model: Any, rows: list[list[int]], device: torch.device, *, with_entropy: bool = False
) -> tuple[list[torch.Tensor], list[torch.Tensor] | None]:
    """For each row of ids, logprob[t] of token t+1 given tokens ≤ t (float32, length len−1), differentiable."""
    longest = max(len(r) for r in rows)
    ids = torch.zeros((len(rows), longest), dtype=torch.long)
    attn = torch.zeros((len(rows), longest), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
        attn[i, : len(r)] = 1
    ids, attn = ids.to(device), attn.to(device)
    logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1, :].float()
    lse = torch.logsumexp(logits, dim=-1)
    lp = logits.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1) - lse
    ent = None
    if with_entropy:
        with torch.no_grad():
            probs = torch.softmax(logits, dim=-1)
            ent_all = lse - (probs * logits).sum(-1)
        ent = [ent_all[i, : len(r) - 1] for i, r in enumerate(rows)]
    return [lp[i, : len(r) - 1] for i, r in enumerate(rows)], ent
