"""Benchmark: the worker's SFT training against a bare PyTorch + PEFT loop on the same model and batches.

    python -m tuneboard_worker.bench [--model DIR] [--device cpu|cuda] [--quick]

Each side runs in its own process (so peak memory is its own): the worker's `train_sft` (tokenisation with the
chat template, assistant masks, micro-batching, metrics, events to a no-op sink) and a bare loop that a PyTorch
user would write (pre-tokenised tensors, HF loss with labels, backward, clip, AdamW). Both train the same LoRA
adapter on the same batches. Prints trained tokens/s, peak memory and the worker's overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import torch

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()


def examples(n: int, words: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        q = " ".join(rng.choice(WORDS) for _ in range(words // 2))
        a = " ".join(rng.choice(WORDS) for _ in range(words))
        out.append({"line": i + 1, "messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]})
    return out


def peak_memory_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _Sink:
    def __init__(self):
        self.steps = 0

    def check(self):
        pass

    def started(self, n):
        pass

    def step(self, metrics):
        self.steps += 1


class _Opts:
    def __init__(self, micro_batch_tokens: int, max_len: int):
        self.micro_batch_tokens = micro_batch_tokens
        self._max = max_len

    def max_seq_len(self, model):
        return self._max


def run_side(args: argparse.Namespace) -> dict:
    from .model import attach_adapter, load_base, lora_settings, pick_dtype
    from .sft import tokenize_examples, train_sft

    torch.manual_seed(0)
    device = torch.device(args.device)
    base = load_base(args.model, "bench", device, pick_dtype(device, "auto"), None)
    peft_model = attach_adapter(base, lora_settings({}), None, device.type == "cuda")
    data = examples(args.examples, args.words)
    config = {"batch_size": args.batch_size, "learning_rate": 1e-4, "epochs": args.epochs, "assistant_turns": "all"}
    tok = base.tokenizer
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(device)
    if args.side == "worker":
        t0 = time.perf_counter()
        sink = _Sink()
        train_sft(peft_model, tok, {"examples": data, "file": "bench.jsonl"}, config, sink, device, _Opts(args.micro_batch_tokens, 4096))
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        steps = sink.steps
    else:
        # A bare loop: the same token ids and masks, prepared before the clock starts.
        rows = tokenize_examples(tok, data, "bench.jsonl", "all", 4096)
        params = [p for p in peft_model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.01)
        batches = []
        for e in range(args.epochs):
            for i in range(0, len(rows), args.batch_size):
                chunk = rows[i : i + args.batch_size]
                longest = max(len(ids) for ids, _ in chunk)
                ids = torch.zeros((len(chunk), longest), dtype=torch.long)
                attn = torch.zeros_like(ids)
                labels = torch.full_like(ids, -100)
                for j, (x, m) in enumerate(chunk):
                    ids[j, : len(x)] = torch.tensor(x)
                    attn[j, : len(x)] = 1
                    labels[j, : len(x)] = torch.tensor([t if mm else -100 for t, mm in zip(x, m)])
                batches.append((ids.to(device), attn.to(device), labels.to(device)))
        peft_model.train()
        t0 = time.perf_counter()
        for ids, attn, labels in batches:
            opt.zero_grad(set_to_none=True)
            loss = peft_model(input_ids=ids, attention_mask=attn, labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        steps = len(batches)
    tokens = sum(len(ids) for ids, _ in tokenize_examples(tok, data, "bench.jsonl", "all", 4096)) * args.epochs
    return {"side": args.side, "seconds": seconds, "steps": steps, "tokens": tokens, "tokens_per_s": tokens / seconds, "peak_memory_mb": peak_memory_mb(device)}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m tuneboard_worker.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="Hugging Face model directory (default: a tiny Qwen3 built with scripts/make-tiny-hf-model.py)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--quick", action="store_true", help="a few seconds: for CI, proves the benchmark runs")
    p.add_argument("--examples", type=int, default=32)
    p.add_argument("--words", type=int, default=48, help="words per answer (the question has half)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--micro-batch-tokens", type=int, default=8192, help="the worker's micro-batch budget (the bare loop runs each batch whole)")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--side", choices=["worker", "bare"], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.quick:
        args.examples, args.words, args.batch_size, args.epochs = 4, 12, 2, 1
    if args.model is None:
        # The repository's script builds the default model: found from the working directory (npm run) or this file.
        candidates = [Path.cwd(), *Path.cwd().parents, Path(__file__).resolve().parents[3]]
        repo = next((d for d in candidates if (d / "scripts" / "make-tiny-hf-model.py").is_file()), None)
        if repo is None:
            raise SystemExit("--model DIR is required outside the Tuneboard repository")
        # Its own folder: bench:api empties .data/bench when it starts, and CI runs the two side by side.
        out = repo / ".data" / "bench-worker" / "tiny-qwen3"
        if not (out / "config.json").exists():
            subprocess.run([sys.executable, str(repo / "scripts" / "make-tiny-hf-model.py"), "--arch", "qwen3", "--out", str(out)], check=True, capture_output=True)
        args.model = str(out)
    if args.side:
        print(json.dumps(run_side(args)))
        return
    results = {}
    # Worker and bare loop alternate twice; each side's best run counts (the machine's noise is one-sided).
    for side in ["bare", "worker", "bare", "worker"] if not args.quick else ["bare", "worker"]:
        cmd = [sys.executable, "-m", "tuneboard_worker.bench", *(argv if argv is not None else sys.argv[1:]), "--side", side, "--model", args.model]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env={**os.environ}).stdout.strip().splitlines()[-1]
        r = json.loads(out)
        if side not in results or r["tokens_per_s"] > results[side]["tokens_per_s"]:
            results[side] = r
    w, b = results["worker"], results["bare"]
    overhead = (b["tokens_per_s"] / w["tokens_per_s"] - 1) * 100
    print(f"model {args.model} on {args.device}: {w['steps']} steps, {w['tokens']} tokens per run")
    print(f"{'':8} {'tokens/s':>10} {'peak MB':>9} {'seconds':>8}")
    for name, r in (("bare", b), ("worker", w)):
        print(f"{name:8} {r['tokens_per_s']:10.1f} {r['peak_memory_mb']:9.0f} {r['seconds']:8.2f}")
    print(f"worker overhead: {overhead:+.1f} % time, {w['peak_memory_mb'] - b['peak_memory_mb']:+.0f} MB peak memory (goal: ≤ 5 % time)")


if __name__ == "__main__":
    main()
