"""The worker's RL step without a server, on the one-token task of the real-model loop (tests/real-models/hf-loop):
answer "Pick one." with one of the tiny random Qwen3's 8 likeliest first tokens; half of them are rewarded.

The loop once showed the same expected reward (0.529) after three RL jobs. The cause was the rollouts, not this
step: sampled over the whole 151k-token vocabulary of a random model, where those 8 tokens hold about 1e-4 of
the probability, no rollout ever picked one, every reward was 0, no group was trainable, and each job copied the
previous adapter as docs/contract.md §2.7 says. These tests pin both halves: with a reward signal the step
changes the adapter and raises the expected reward of the rollout policy (sampling restricted to the 8
candidates, as the loop now asks the server with allowed_token_ids); without one it trains nothing.
"""

from __future__ import annotations

import pytest
import torch

from conftest import DEVICE, RL_CONFIG_DEFAULTS

from tuneboard_worker.model import attach_adapter, detach_adapter, load_base, lora_settings, save_adapter
from tuneboard_worker.rl import train_rl

PROMPT = [{"role": "user", "content": "Pick one."}]
# resolveRlConfig's defaults with the loop's learning rate.
CONFIG = dict(RL_CONFIG_DEFAULTS)


class _Ctx:
    def __init__(self):
        self.steps: list[dict] = []
        self.n = None

    def check(self):
        pass

    def started(self, n):
        self.n = n

    def step(self, m):
        self.steps.append(m)


class _Opts:
    def max_seq_len(self, model):
        return 256


@pytest.fixture()
def task(models_dir):
    base = load_base(str(models_dir / "tiny-qwen3"), "test/tiny-qwen3", DEVICE, torch.float32, None)
    tok = base.tokenizer
    ids = tok.apply_chat_template(PROMPT, add_generation_prompt=True, return_tensors="pt", return_dict=True)["input_ids"].to(DEVICE)
    # The adapter's lora_A starts random: seeded, so that how far one RL step moves the expected reward is the same
    # on every run (unseeded, a device-check run in CI saw +0.019 against the test's +0.05).
    torch.manual_seed(0)
    peft_model = attach_adapter(base, lora_settings(None), None, False)

    def first_token_logprobs() -> torch.Tensor:
        peft_model.eval()
        with torch.no_grad():
            # On the CPU: the sampling below draws with a CPU generator.
            return torch.log_softmax(peft_model(input_ids=ids).logits[0, -1].float(), -1).cpu()

    lp = first_token_logprobs()
    candidates = torch.topk(lp, 8).indices.tolist()
    yield base, peft_model, candidates, set(candidates[::2]), first_token_logprobs
    detach_adapter(peft_model)


def _choice(token_id: int, logprob: float, text: str) -> dict:
    return {
        "finish_reason": "length",
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "logprobs": {"content": [{"token": f"token_id:{token_id}", "logprob": logprob, "bytes": None, "top_logprobs": []}]},
    }


def _groups(tok, lp: torch.Tensor, picks: list[list[int]], rewarded: set[int]) -> list[dict]:
    return [
        {
            "trajectories": [
                {"messages_and_choices": [*PROMPT, _choice(t, float(lp[t]), tok.decode([t]))], "reward": 1.0 if t in rewarded else 0.0}
                for t in group
            ]
        }
        for group in picks
    ]


def _expected_reward(lp: torch.Tensor, candidates: list[int], rewarded: set[int]) -> float:
    p = lp[candidates].exp()
    return float(sum(p[i] for i, c in enumerate(candidates) if c in rewarded) / p.sum())


def test_an_rl_step_with_a_reward_signal_changes_the_adapter_and_raises_the_expected_reward(task, tmp_path):
    base, peft_model, candidates, rewarded, first_token_logprobs = task
    lp = first_token_logprobs()
    before = _expected_reward(lp, candidates, rewarded)
    _, weights_before = save_adapter(peft_model, "test/tiny-qwen3", tmp_path / "before")
    gen = torch.Generator().manual_seed(0)
    probs = lp[candidates].exp()
    picks = [[candidates[k] for k in torch.multinomial(probs / probs.sum(), 12, replacement=True, generator=gen).tolist()] for _ in range(2)]
    ctx = _Ctx()
    summary = train_rl(peft_model, base.tokenizer, {"trajectory_groups": _groups(base.tokenizer, lp, picks, rewarded)}, CONFIG, ctx, DEVICE, _Opts())
    assert summary["num_groups_trainable"] == 2
    assert ctx.n == 24 and len(ctx.steps) == 24
    assert all(s["num_trainable_tokens"] == 1 for s in ctx.steps)
    _, weights_after = save_adapter(peft_model, "test/tiny-qwen3", tmp_path / "after")
    assert weights_after != weights_before
    after = _expected_reward(first_token_logprobs(), candidates, rewarded)
    assert after > before + 0.05, (before, after)


def test_an_rl_step_whose_groups_all_share_one_reward_trains_nothing(task, tmp_path):
    # The symptom's mechanism: rollouts that never hit a rewarded token all score 0, so no group is trainable.
    base, peft_model, candidates, rewarded, first_token_logprobs = task
    lp = first_token_logprobs()
    outside = torch.topk(lp, 200).indices.tolist()[100:124]
    _, weights_before = save_adapter(peft_model, "test/tiny-qwen3", tmp_path / "before")
    ctx = _Ctx()
    summary = train_rl(peft_model, base.tokenizer, {"trajectory_groups": _groups(base.tokenizer, lp, [outside[:12], outside[12:]], rewarded)}, CONFIG, ctx, DEVICE, _Opts())
    assert summary == {
        "num_groups_submitted": 2,
        "num_groups_trainable": 0,
        "num_trajectories": 24,
        "zero_advantage_share": 1.0,
    }
    assert ctx.n == 0 and ctx.steps == []
    _, weights_after = save_adapter(peft_model, "test/tiny-qwen3", tmp_path / "after")
    assert weights_after == weights_before
    assert torch.equal(first_token_logprobs(), lp)
