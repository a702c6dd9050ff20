"""The worker's training on a device, measured: what scripts/device-check.sh runs (workers/python/README.md, "On a GPU").

    python -m tuneboard_worker.device_check train --device cuda [--quick]
    torchrun --nproc_per_node 2 -m tuneboard_worker.device_check fsdp --device cuda [--quick]

`train`: SFT and RL steps in bf16 with gradient checkpointing on random-weight models of Qwen2.5-0.5B's and 1.5B's
shapes (tiny shapes with --quick), through the worker's own code: attach_adapter (the job's default LoRA, the
checkpointing the runner turns on for CUDA), train_sft and train_rl, with the runner's Options and JobContext. It
prints tokens/s, peak memory and model FLOPs utilisation per shape and kind, and fails when a loss or gradient norm
is not finite. `fsdp`: the same two jobs on two ranks through the worker's FSDP2 path (distributed.shard_model and
the leader/follower contexts), NCCL on two GPUs or gloo on the CPU.

No download and no model files: the model is built from its config with random weights, and the tokenizer is a
word-level one made here (words w0, w1, … are one token each, with a ChatML template), so the worker's chat-template
code runs as for a real model while the lengths are exact. Only the weights' shapes matter for the figures.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import random
import resource
import threading
import time
from typing import Any

import torch

from . import distributed
from .model import LoadedBase, attach_adapter, detach_adapter, lora_settings, pick_dtype
from .rl import prepare_rl_batch, train_rl
from .runner import JobContext, Options
from .sft import tokenize_examples, train_sft

# Qwen2.5's published configs (Qwen2Config: tied embeddings, bias on q/k/v, 151,936-token vocabulary).
SHAPES: dict[str, dict[str, int]] = {
    "qwen2.5-0.5b": {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936},
    "qwen2.5-1.5b": {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2, "vocab_size": 151936},
    # --quick and CPU runs: the same architecture, small enough for a CI machine's CPU in seconds.
    "tiny": {"hidden_size": 64, "intermediate_size": 192, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 4096},
    "small": {"hidden_size": 128, "intermediate_size": 384, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 8192},
}

# bf16 dense peaks (no sparsity), from NVIDIA's data sheets; the first name part found in the device's name wins.
PEAKS_TFLOPS: list[tuple[str, float, str]] = [
    ("H100 PCIe", 756.0, "H100 PCIe"),
    ("H100 NVL", 835.0, "H100 NVL"),
    ("H100", 989.0, "H100 SXM"),
    ("H200", 989.0, "H200"),
    ("GH200", 989.0, "GH200"),
    ("A100", 312.0, "A100"),
]

# resolveRlConfig's defaults (lib/schemas/training-jobs.ts), as the server sends them.
RL_CONFIG = {
    "loss": "ppo",
    "epsilon": 0.2,
    "epsilon_high": 0.2,
    "advantage_balance": 0,
    "tau": None,
    "learning_rate": 1e-5,
    "mask_prob_ratio": False,
    "max_negative_advantage_importance_sampling_weight": None,
    "precalculate_logprobs": False,  # every forward pass is then a training one, which the FLOPs count assumes
    "scale_rewards": True,
    "importance_sampling_level": "token",
    "allow_training_without_logprobs": False,
}

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def peak_bf16_flops(device: torch.device) -> tuple[float | None, str]:
    """(FLOP/s, what it is) for the device's bf16 dense peak; None where unknown (a CPU, another GPU).
    TUNEBOARD_PEAK_TFLOPS overrides it, for a GPU this table lacks."""
    override = os.environ.get("TUNEBOARD_PEAK_TFLOPS")
    if override:
        return float(override) * 1e12, f"{float(override):g} TFLOPS (TUNEBOARD_PEAK_TFLOPS)"
    if device.type != "cuda":
        return None, "no bf16 peak known for a CPU"
    name = torch.cuda.get_device_name(device)
    for part, tflops, label in PEAKS_TFLOPS:
        if part in name:
            return tflops * 1e12, f"{tflops:g} TFLOPS ({label} bf16 dense, for {name!r})"
    return None, f"no bf16 peak known for {name!r} (set TUNEBOARD_PEAK_TFLOPS)"


def mfu(params: int, tokens_per_second: float, peak: float | None, gpus: int = 1) -> float | None:
    """Model FLOPs utilisation: 6 × parameters × tokens/s over the peak of all the GPUs. 6N per token is the usual
    training count (2N forward, 4N backward). With LoRA the frozen weights need no weight gradients (−2N) but
    gradient checkpointing runs each layer's forward again (+2N), so the hardware does about 6N too; attention's
    own FLOPs (growing with the sequence) are not counted, as in the convention."""
    return None if peak is None else 6.0 * params * tokens_per_second / (peak * gpus)


def make_tokenizer(words: int) -> Any:
    """A word-level tokenizer: w0 … w{words-1}, the roles and ChatML's markers, one token each."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    vocab = {w: i for i, w in enumerate(specials + ["system", "user", "assistant"] + [f"w{i}" for i in range(words)])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<|endoftext|>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.add_special_tokens(specials)
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None)
    tok.chat_template = CHATML
    return tok


def build_model(shape: str, device: torch.device, dtype: torch.dtype) -> Any:
    """Random weights of that shape (seeded: every FSDP rank builds the same model), made on `device` directly."""
    from transformers import AutoModelForCausalLM, Qwen2Config

    config = Qwen2Config(**SHAPES[shape], tie_word_embeddings=True, max_position_embeddings=32768, rope_theta=1_000_000.0)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    model.config.use_cache = False  # as load_base leaves it
    return model


def _words(rng: random.Random, n: int, vocab: int) -> list[int]:
    return [rng.randrange(vocab) for _ in range(n)]


def sft_input(rng: random.Random, rows: int, seq: int, vocab: int) -> dict:
    """Conversations of about `seq` tokens: a quarter prompt, the rest the trained answer."""
    user, answer = seq // 4, seq - seq // 4 - 10  # ChatML's markers and roles take the other ten
    text = lambda ids: " ".join(f"w{i}" for i in ids)  # noqa: E731
    return {
        "file": "device-check.jsonl",
        "examples": [
            {"line": i + 1, "messages": [{"role": "user", "content": text(_words(rng, user, vocab))}, {"role": "assistant", "content": text(_words(rng, answer, vocab))}]}
            for i in range(rows)
        ],
    }


def rl_input(rng: random.Random, rows: int, seq: int, vocab: int, tok: Any) -> dict:
    """Groups of two sampled answers (token ids with the sampler's logprobs) rewarded 1 and 0: every row trains."""
    user, answer = seq // 4, seq - seq // 4 - 10
    offset = len(tok) - vocab  # the words' ids follow the markers and roles

    def trajectory(reward: float) -> dict:
        ids = [offset + w for w in _words(rng, answer, vocab)]
        choice = {
            "message": {"role": "assistant", "content": " ".join(f"w{i - offset}" for i in ids)},
            "logprobs": {"content": [{"token": f"token_id:{i}", "logprob": -2.0} for i in ids]},
        }
        prompt = {"role": "user", "content": " ".join(f"w{i}" for i in _words(rng, user, vocab))}
        return {"messages_and_choices": [prompt, choice], "reward": reward}

    return {"trajectory_groups": [{"trajectories": [trajectory(1.0), trajectory(0.0)]} for _ in range(max(1, rows // 2))]}


class _Steps:
    """The server's side of JobContext: each gradient_step's data (with the worker's own step_seconds)."""

    def __init__(self) -> None:
        self.steps: list[dict] = []

    def append_events(self, _job_id: str, events: list[dict]) -> None:
        self.steps.extend(e["data"] for e in events if e["type"] == "gradient_step")


def _peak_memory(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB"
    # ru_maxrss (KiB on Linux) is the process's peak so far: it covers earlier parts too, hence "process".
    return f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB RSS (process peak)"


def run_job(kind: str, shape: str, device: torch.device, args: argparse.Namespace, sharded: bool = False) -> dict:
    """One SFT or RL job of `args.steps` steps on a fresh LoRA adapter; the figures of the steps after the first."""
    dtype = pick_dtype(device, "bfloat16")
    opts = Options(server_url="-", token="-", worker_id="device-check", device=str(device), dtype="bfloat16", gradient_checkpointing="on", micro_batch_tokens=args.micro_batch_tokens)
    words = min(SHAPES[shape]["vocab_size"] - 16, 32000)
    tok = make_tokenizer(words)
    # Sharded, the model is built on the CPU and fully_shard moves each rank's shard to its device (as the runner loads it).
    model = build_model(shape, torch.device("cpu") if sharded else device, dtype)
    params = sum(p.numel() for p in model.parameters())
    base = LoadedBase(key=(f"device-check:{shape}", str(device), str(dtype)), model=model, tokenizer=tok)
    rng = random.Random(1)
    if kind == "sft":
        job_input = sft_input(rng, args.batch * args.steps, args.seq, words)
        config = {"batch_size": args.batch, "learning_rate": 1e-5, "epochs": 1}
        rows = tokenize_examples(tok, job_input["examples"], "x", "all", opts.max_seq_len(model))
        step_tokens = [sum(len(ids) for ids, _ in rows[b : b + args.batch]) for b in range(0, len(rows), args.batch)]
    else:
        job_input = rl_input(rng, args.steps, args.seq, words, tok)
        config = RL_CONFIG
        lengths = [len(r["ids"]) for r in prepare_rl_batch(job_input["trajectory_groups"], tok, config, opts.max_seq_len(model))["rows"]]
        step_tokens = [sum(lengths) / len(lengths)] * len(lengths)  # one row a step; the rows are alike in length
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    torch.manual_seed(0)
    peft_model = attach_adapter(base, lora_settings(None), None, opts.use_gradient_checkpointing(device))
    recorder = _Steps()
    ctx: Any = JobContext(recorder, {"id": f"{kind}-{shape}"}, threading.Event())
    if sharded:
        distributed.shard_model(peft_model, device)
        ctx = distributed.LeaderContext(ctx) if distributed.rank() == 0 else distributed.FollowerContext()
    started = time.monotonic()
    try:
        (train_sft if kind == "sft" else train_rl)(peft_model, tok, job_input, config, ctx, device, opts)
    finally:
        if not sharded:
            detach_adapter(peft_model)
    wall = time.monotonic() - started
    steps = recorder.steps
    if distributed.rank() != 0:
        return {}
    if len(steps) != len(step_tokens):
        raise RuntimeError(f"{kind} on {shape}: {len(steps)} steps reported, {len(step_tokens)} expected")
    bad = [s for s in steps if not (math.isfinite(s["loss"]) and math.isfinite(s["grad_norm"]))]
    if bad:
        raise RuntimeError(f"{kind} on {shape}: a loss or gradient norm is not finite: {bad[0]}")
    # The first step pays for kernel selection, the allocator's growth and lazy initialisation: not timed.
    timed = slice(1, None) if len(steps) > 1 else slice(0, None)
    seconds = sum(s["step_seconds"] for s in steps[timed])
    tokens = sum(step_tokens[timed])
    return {
        "kind": kind,
        "shape": shape,
        "params": params,
        "steps": len(steps),
        "timed_steps": len(steps[timed]),
        "tokens_per_step": round(sum(step_tokens) / len(step_tokens)),
        "tokens_per_second": tokens / seconds if seconds > 0 else float("nan"),
        "seconds": wall,
        "peak_memory": _peak_memory(device),
        "loss": [round(float(s["loss"]), 4) for s in steps],
    }


def report(r: dict, peak: float | None, gpus: int, label: str) -> None:
    u = mfu(r["params"], r["tokens_per_second"], peak, gpus)
    print(
        f"| {label} | {r['kind']} | {r['shape']} | {r['params'] / 1e6:.1f}M | {r['tokens_per_step']} | {r['timed_steps']} of {r['steps']} "
        f"| {r['tokens_per_second']:,.0f} | {r['peak_memory']} | {'n/a' if u is None else f'{100 * u:.1f} %'} |",
        flush=True,
    )
    print(f"    losses {r['loss']}, {r['seconds']:.1f} s in all", flush=True)


HEADER = "| device | kind | shape | parameters | tokens/step | steps timed | tokens/s | peak memory | MFU |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |"


def _device_label(device: torch.device, gpus: int = 1) -> str:
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        return f"{gpus}× {name}" if gpus > 1 else name
    return f"CPU ({torch.get_num_threads()} threads)"


def cmd_train(args: argparse.Namespace) -> int:
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device visible (torch.cuda.is_available() is False)")
        return 1
    peak, peak_label = peak_bf16_flops(device)
    print(f"torch {torch.__version__}, device {_device_label(device)}; MFU against {peak_label}", flush=True)
    print(f"bf16 weights, gradient checkpointing on, LoRA rank 16 on all linear layers; {args.batch} rows × {args.seq} tokens per SFT step, one row per RL step", flush=True)
    print(HEADER, flush=True)
    failed = 0
    for shape in args.shapes:
        for kind in ("sft", "rl"):
            try:
                report(run_job(kind, shape, device, args), peak, 1, _device_label(device))
            except Exception as err:  # noqa: BLE001 - one failed shape must not hide the others
                failed += 1
                print(f"| {_device_label(device)} | {kind} | {shape} | FAILED: {type(err).__name__}: {str(err)[:300]} |", flush=True)
            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()
    return 1 if failed else 0


def cmd_fsdp(args: argparse.Namespace) -> int:
    device = distributed.init_process_group("cpu" if args.device == "cpu" else "auto")
    world = distributed.world_size()
    gpus = world if device.type == "cuda" else 1
    failed = 0
    try:
        peak, peak_label = peak_bf16_flops(device)
        if distributed.rank() == 0:
            print(f"torch {torch.__version__}, {world} ranks ({'nccl' if device.type == 'cuda' else 'gloo'}), FSDP2; MFU against {gpus} × {peak_label}", flush=True)
            print(HEADER, flush=True)
        for kind in ("sft", "rl"):
            # Every rank runs the job (the collectives must line up); an error on one rank ends the run here, as
            # the other ranks would then wait in a collective.
            r = run_job(kind, args.shapes[0], device, args, sharded=True)
            if distributed.rank() == 0:
                report(r, peak, gpus, f"FSDP {world} ranks, {_device_label(device, gpus)}")
            gc.collect()
    except Exception as err:  # noqa: BLE001
        failed = 1
        print(f"rank {distributed.rank()}: FAILED: {type(err).__name__}: {err}", flush=True)
    finally:
        distributed.close(together=not failed)
    return failed


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tuneboard_worker.device_check", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["train", "fsdp"])
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    p.add_argument("--quick", action="store_true", help="tiny shapes, 2 steps: seconds on a CPU")
    p.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), help="default: qwen2.5-0.5b qwen2.5-1.5b on CUDA, tiny small on the CPU, tiny with --quick")
    p.add_argument("--steps", type=int, help="steps per job, the first untimed; even, as RL rows come in pairs (default 6; 2 with --quick)")
    p.add_argument("--seq", type=int, help="tokens per row (default 1024 on CUDA, 128 on the CPU, 64 with --quick)")
    p.add_argument("--batch", type=int, help="rows per SFT step (default 8 on CUDA, 2 on the CPU)")
    p.add_argument("--micro-batch-tokens", type=int, default=4096, help="the worker's --micro-batch-tokens (default 4096, its own)")
    a = p.parse_args(argv)
    cuda = a.device.startswith("cuda")
    # A CPU takes minutes per step of the real shapes: the small ones unless asked (--shapes qwen2.5-0.5b).
    a.shapes = a.shapes or (["tiny"] if a.quick else ["qwen2.5-0.5b", "qwen2.5-1.5b"] if cuda else ["tiny", "small"])
    a.steps = a.steps or (2 if a.quick else 6)
    a.seq = a.seq or (64 if a.quick else 1024 if cuda else 128)
    a.batch = a.batch or (8 if cuda and not a.quick else 2)
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    return cmd_train(args) if args.what == "train" else cmd_fsdp(args)


if __name__ == "__main__":
    raise SystemExit(main())
