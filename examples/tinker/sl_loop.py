"""Supervised fine-tuning of a LoRA with the Tinker SDK against Tuneboard (examples/tinker/README.md).

Trains on chat conversations (a JSONL file of {"messages": [...]}, the last message the assistant's; without
--data, generated "What is A plus B?" conversations), saves a resumable state every --save-every steps, then
saves sampler weights and answers a question with them.

    TINKER_BASE_URL=http://localhost:3000 TINKER_API_KEY=tml-tb_… python examples/tinker/sl_loop.py
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

import tinker
from tinker import types


def generated_conversations(n: int, seed: int = 0) -> list[list[dict]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        a, b = rng.randint(0, 20), rng.randint(0, 20)
        rows.append([
            {"role": "user", "content": f"What is {a} plus {b}?"},
            {"role": "assistant", "content": f"{a} plus {b} is {a + b}."},
        ])
    return rows


def to_datum(messages: list[dict], tokenizer) -> types.Datum:
    """Prompt tokens (the chat template up to the assistant's turn) get weight 0, the reply's tokens weight 1.
    Position t of the input predicts token t+1, so the input is tokens[:-1] and the targets tokens[1:]."""
    prompt = tokenizer.apply_chat_template(messages[:-1], add_generation_prompt=True, tokenize=True)
    full = tokenizer.apply_chat_template(messages, tokenize=True)
    prompt, full = list(_ids(prompt)), list(_ids(full))
    if full[: len(prompt)] != prompt:
        raise ValueError("this chat template does not render the prompt as a prefix of the conversation")
    weights = [0.0] * len(prompt) + [1.0] * (len(full) - len(prompt))
    return types.Datum(
        model_input=types.ModelInput.from_ints(full[:-1]),
        loss_fn_inputs={"target_tokens": full[1:], "weights": weights[1:]},
    )


def _ids(x):
    # transformers 5 may return a BatchEncoding from apply_chat_template(tokenize=True)
    return x["input_ids"] if hasattr(x, "keys") else x


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-model", default="test/tiny-qwen3", help="a base model of the server (service_client.get_server_capabilities())")
    p.add_argument("--data", help="JSONL of {'messages': [...]}; default: generated arithmetic conversations")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=5e-3, help="5e-3 suits the tiny random model; ~1e-4 for a real one")
    p.add_argument("--rank", type=int, default=8)
    p.add_argument("--save-every", type=int, default=4, help="save a resumable state every N steps (0: never)")
    p.add_argument("--log-dir", default="/tmp/tinker-examples/sl", help="holds state.json, the last saved state, for resuming")
    p.add_argument("--project", help="Tuneboard project for the run (default: 'tinker' of your personal entity)")
    args = p.parse_args()

    conversations = (
        [json.loads(line)["messages"] for line in open(args.data) if line.strip()]
        if args.data
        else generated_conversations(args.steps * args.batch_size)
    )
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

    for step in range(start, args.steps):
        t0 = time.time()
        batch = [
            to_datum(conversations[(step * args.batch_size + i) % len(conversations)], tokenizer)
            for i in range(args.batch_size)
        ]
        # Submit both before waiting: the server runs them in order while this process prepares the next batch.
        fb_future = training.forward_backward(batch, loss_fn="cross_entropy")
        optim_future = training.optim_step(types.AdamParams(learning_rate=args.lr * (1 - step / args.steps)))
        fb, optim = fb_future.result(), optim_future.result()
        nll = -sum(
            lp * w
            for out, d in zip(fb.loss_fn_outputs, batch)
            for lp, w in zip(out["logprobs"].tolist(), d.loss_fn_inputs["weights"].tolist())
        ) / sum(sum(d.loss_fn_inputs["weights"].tolist()) for d in batch)
        print(f"step {step}: nll/token {nll:.3f}  grad_norm {optim.metrics['optim/grad_norm']:.1f}  {time.time() - t0:.1f}s")
        if args.save_every and (step + 1) % args.save_every == 0:
            path = training.save_state(f"step-{step + 1:04d}").result().path
            json.dump({"step": step + 1, "path": path}, open(state_file, "w"))

    sampler_path = training.save_weights_for_sampler("final").result().path
    print(f"sampler weights: {sampler_path}")
    sampler = service.create_sampling_client(model_path=sampler_path)
    question = conversations[0][:-1]
    prompt = _ids(tokenizer.apply_chat_template(question, add_generation_prompt=True, tokenize=True))
    result = sampler.sample(
        prompt=types.ModelInput.from_ints(list(prompt)),
        num_samples=1,
        sampling_params=types.SamplingParams(max_tokens=24, temperature=0.0, stop=[tokenizer.eos_token]),
    ).result()
    print(f"Q: {question[-1]['content']}\nA: {tokenizer.decode(result.sequences[0].tokens, skip_special_tokens=True)!r}")


if __name__ == "__main__":
    main()
