"""Reinforcement learning of a LoRA with the Tinker SDK against Tuneboard (examples/tinker/README.md).

The task: answer in lowercase. Each step samples --group-size replies per prompt from the current weights,
rewards each with the share of its characters that are lowercase letters or spaces, centres the rewards per
prompt (GRPO-style advantages) and takes one importance-sampling step. Even a random model scores about 0.7,
so the tiny test model has a signal to climb.

    TINKER_BASE_URL=http://localhost:3000 TINKER_API_KEY=tml-tb_… python examples/tinker/rl_loop.py
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

import tinker
from tinker import types

TOPICS = ["the sea", "a cat", "bread", "winter", "a bicycle", "the moon", "rain", "a garden", "music", "a river"]


def reward(text: str) -> float:
    return sum(c in "abcdefghijklmnopqrstuvwxyz " for c in text) / len(text) if text else 0.0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-model", default="test/tiny-qwen3", help="a base model of the server (service_client.get_server_capabilities())")
    p.add_argument("--steps", type=int, default=16)
    p.add_argument("--prompts", type=int, default=2, help="prompts per step")
    p.add_argument("--group-size", type=int, default=8, help="replies sampled per prompt")
    p.add_argument("--max-tokens", type=int, default=12)
    p.add_argument("--lr", type=float, default=5e-2, help="5e-2 suits the tiny random model; ~1e-5 for a real one")
    p.add_argument("--rank", type=int, default=8)
    p.add_argument("--save-every", type=int, default=4, help="save a resumable state every N steps (0: never)")
    p.add_argument("--log-dir", default="/tmp/tinker-examples/rl", help="holds state.json, the last saved state, for resuming")
    p.add_argument("--project", help="Tuneboard project for the run (default: 'tinker' of your personal entity)")
    args = p.parse_args()

    os.makedirs(args.log_dir, exist_ok=True)
    state_file = os.path.join(args.log_dir, "state.json")
    service = tinker.ServiceClient(project_id=args.project)
    if os.path.exists(state_file):  # resume: weights and AdamW state, in a new training client
        saved = json.load(open(state_file))
        training = service.create_training_client_from_state_with_optimizer(saved["path"])
        start = saved["step"]
        print(f"resuming from step {start}: {saved['path']}")
    else:
        training = service.create_lora_training_client(base_model=args.base_model, rank=args.rank)
        start = 0
    tokenizer = training.get_tokenizer()
    print(f"training client {training.model_id} on {args.base_model}")
    params = types.SamplingParams(max_tokens=args.max_tokens, temperature=1.0, stop=[tokenizer.eos_token_id])

    for step in range(start, args.steps):
        t0 = time.time()
        rng = random.Random(step)
        # Sampler weights of the current LoRA (an unnamed save: Tuneboard keeps the latest three).
        sampler = training.save_weights_and_get_sampling_client()
        prompts = []
        for _ in range(args.prompts):
            messages = [{"role": "user", "content": f"Write {rng.randint(2, 9)} words about {rng.choice(TOPICS)}."}]
            ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
            prompts.append(list(ids["input_ids"] if hasattr(ids, "keys") else ids))
        futures = [
            sampler.sample(prompt=types.ModelInput.from_ints(ids), num_samples=args.group_size, sampling_params=params)
            for ids in prompts
        ]

        data, rewards = [], []
        for ids, future in zip(prompts, futures):
            sequences = future.result().sequences
            group = [reward(tokenizer.decode(s.tokens, skip_special_tokens=True)) for s in sequences]
            rewards += group
            mean = sum(group) / len(group)
            for seq, r in zip(sequences, group):
                if r == mean:  # no advantage, no gradient
                    continue
                # Input: prompt + reply (but its last token); position t predicts token t+1. Prompt positions
                # get advantage 0, so only the reply's tokens are trained.
                n_prompt = len(ids) - 1
                data.append(types.Datum(
                    model_input=types.ModelInput.from_ints(ids + seq.tokens[:-1]),
                    loss_fn_inputs={
                        "target_tokens": ids[1:] + seq.tokens,
                        "logprobs": [0.0] * n_prompt + list(seq.logprobs),
                        "advantages": [0.0] * n_prompt + [r - mean] * len(seq.tokens),
                    },
                ))
        if data:
            fb_future = training.forward_backward(data, loss_fn="importance_sampling")
            optim_future = training.optim_step(types.AdamParams(learning_rate=args.lr))
            fb_future.result(), optim_future.result()
        sample = tokenizer.decode(sequences[0].tokens, skip_special_tokens=True)
        print(f"step {step}: mean reward {sum(rewards) / len(rewards):.3f}  {len(data)} datums  {time.time() - t0:.1f}s  e.g. {sample!r}")
        if args.save_every and (step + 1) % args.save_every == 0:
            path = training.save_state(f"step-{step + 1:04d}").result().path
            json.dump({"step": step + 1, "path": path}, open(state_file, "w"))

    print(f"sampler weights: {training.save_weights_for_sampler('final').result().path}")


if __name__ == "__main__":
    main()
