#!/usr/bin/env python3
"""Reference outputs from Hugging Face Transformers, PEFT and tokenizers for the built-in engine's tests.

One process writes everything (importing torch and transformers costs seconds; doing it once keeps the test
fast):

  <out>/<name>/                tiny random model (scripts/make-tiny-hf-model.py's architectures, the real
                               Qwen3 tokenizer), with noisy norm weights and biases so that every tensor matters
  <out>/<name>-lora/           a PEFT LoRA adapter for it (non-zero B, every projection targeted)
  <out>/<name>-lora-head/      the same targets plus the output head (lm_head, Tinker's train_unembed), saved as
                               save_pretrained does by default: with PEFT's copy of the frozen head
  <out>/<name>-lora-headonly/  (HEAD_ONLY models) lm_head alone, saved with save_embedding_layers=False
  <out>/qwen3-lora-tiedemb/    lm_head with ensure_weight_tying on a tied model: PEFT adapts embed_tokens too
  <out>/<name>-logits.safetensors   logits of the prompt, [tokens × vocab] fp32: `base` computed in fp32,
                               `lora`, `lora_head` (and `head_only`) in fp64 (see adapter())
  <out>/reference.json         prompt ids, tokenizer corpus ids, rendered chat templates, model list

    python scripts/make-hf-engine-fixtures.py --out .data/hf-fixtures
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name → (arch, dtype written to disk, extra options)
MODELS = {
    "qwen3": ("qwen3", "float32", {"head_dim": 32}),
    "qwen2": ("qwen2", "float32", {}),
    "llama": ("llama", "float32", {}),
    "smollm2": ("smollm2", "float32", {}),
    "qwen3-bf16": ("qwen3", "bfloat16", {}),
    "llama-f16": ("llama", "float16", {}),
}

PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# A tied and an untied model get a head-only adapter too.
HEAD_ONLY = ("qwen3", "llama")

CORPUS = [
    "Hello, world!",
    "  leading spaces and trailing   ",
    "tabs\tand\nnewlines\n\n\nand\r\nCRLF",
    "Unicode: naïve café, Ελληνικά, русский, 日本語のテキスト, 한국어, עברית, العربية",
    "Emoji: 👋🏽 👨‍👩‍👧‍👦 🇫🇷 🤖✨ and a lone \u200d joiner",
    "Numbers 1234567890 3.14159 -42 1e-9 0x1F",
    "code:\n    def f(x):\n        return x ** 2  # square\n",
    "<|im_start|>user\nspecial tokens inline<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>text after end<|endoftext|>",
    "<think>\nreasoning\n</think>\n\n<tool_call>{\"name\": \"f\"}</tool_call>",
    "Whitespace runs:      \n\n\n\t\t\t   x",
    "Mixed'contractions' don't won't it's we'll I'm",
    "\u00a0non-breaking\u3000ideographic space",
    "",
    "a",
]

CONVERSATIONS = [
    {"messages": [{"role": "user", "content": "What is 2+2?"}], "add_generation_prompt": True},
    {
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Name a colour 🎨"},
        ],
        "add_generation_prompt": True,
    },
    {
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
                ],
            },
            {"role": "tool", "content": "{\"temp\": 21}"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                },
            }
        ],
        "add_generation_prompt": True,
    },
    {
        "messages": [{"role": "user", "content": "Think first"}],
        "add_generation_prompt": True,
        "enable_thinking": False,
    },
    {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nanswer"},
        ],
        "add_generation_prompt": False,
    },
]


def load_maker():
    spec = importlib.util.spec_from_file_location("make_tiny", ROOT / "scripts" / "make-tiny-hf-model.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--only", default="", help="comma-separated model names (default: all)")
    a = p.parse_args()

    import torch
    from peft import LoraConfig, get_peft_model
    from safetensors import safe_open
    from safetensors.torch import save_file
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    maker = load_maker()
    out: Path = a.out
    out.mkdir(parents=True, exist_ok=True)
    tok_dir = maker.TOKENIZER_DIR
    tok_json = json.loads((tok_dir / "tokenizer.json").read_text())
    tok_cfg = json.loads((tok_dir / "tokenizer_config.json").read_text())
    added = {t["content"]: t["id"] for t in tok_json.get("added_tokens", [])}
    vocab_size = max(list(added.values()) + list(tok_json["model"]["vocab"].values())) + 1
    eos = added["<|im_end|>"]
    bos = added["<|endoftext|>"]

    hf_tok = AutoTokenizer.from_pretrained(tok_dir)
    fast = Tokenizer.from_file(str(tok_dir / "tokenizer.json"))
    prompt_text = "<|im_start|>user\nHello 👋, how are you?<|im_end|>\n<|im_start|>assistant\n"
    prompt = fast.encode(prompt_text, add_special_tokens=False).ids

    reference: dict = {"prompt": prompt, "models": {}, "corpus": [], "chat": []}
    only = {s for s in a.only.split(",") if s}
    for name, (arch, dtype, extra) in MODELS.items():
        if only and name not in only:
            continue
        ns = argparse.Namespace(
            hidden=64,
            intermediate=0,
            layers=2,
            heads=4,
            kv_heads=2,
            head_dim=extra.get("head_dim", 0),
            context=256,
            tie=arch in ("qwen3", "smollm2"),
            dtype=dtype,
        )
        torch.manual_seed(len(name))
        config = maker.build_config(arch, ns, vocab_size, bos, eos)
        config.initializer_range = 0.15
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        with torch.no_grad():
            # Norm weights start at 1 and biases at 0: perturb them so a loader that ignores either fails.
            for pname, param in model.named_parameters():
                if pname.endswith("norm.weight"):
                    param.add_(torch.randn_like(param) * 0.2)
                elif pname.endswith(".bias"):
                    param.normal_(0, 0.3)
        model_dir = out / name
        model.to(getattr(torch, dtype)).save_pretrained(model_dir, safe_serialization=True)
        for f in ("tokenizer.json", "tokenizer_config.json"):
            (model_dir / f).write_bytes((tok_dir / f).read_bytes())
        gen = {"bos_token_id": bos, "eos_token_id": sorted({eos, bos}), "do_sample": False}
        (model_dir / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
        # The reference computes in fp32 from the weights exactly as stored (16-bit files upcast), loaded
        # back from the directory as a user would (casting the live model would also round RoPE's buffers).
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
        ids = torch.tensor([prompt])
        with torch.no_grad():
            base = model(ids).logits[0].contiguous()

        projection_factors: dict[str, torch.Tensor] = {}

        def adapter(targets: list[str], save_as: str, **options) -> torch.Tensor:
            """A random adapter on a fresh copy of the base, saved; returns PEFT's logits of the prompt. The
            projections' factors are the first adapter's in every later one, so the logits differ from that
            adapter's by the head's term alone (fresh random ones made one position so ill-conditioned that
            float32 Transformers was 5e-4 from float64 there, the engine 2e-4).

            PEFT runs in float64 (after saving the float32 factors): at qwen2's worst-conditioned position (14)
            float32 Transformers is 7e-5 from float64 and the engine 3e-5, on opposite sides, so a float32
            reference measured Transformers' rounding too (1.2e-4 there on the engine's decode path)."""
            fresh = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
            lora_cfg = LoraConfig(
                r=4,
                lora_alpha=8,
                lora_dropout=0.0,
                target_modules=targets,
                init_lora_weights=False,  # random B as well as A: the adapter changes the logits
                **options,
            )
            peft_model = get_peft_model(fresh, lora_cfg)
            with torch.no_grad():
                for pname, param in peft_model.named_parameters():
                    # The head's factors stay as initialised (they already move the logits by > 2): ×3 would
                    # make its term ~15 times the base head's weights and magnify float32 rounding of the
                    # hidden state by as much.
                    if "lora_" in pname and ".lm_head." not in pname:
                        param.mul_(3.0)
                for pname, param in peft_model.named_parameters():
                    if pname in projection_factors:
                        param.copy_(projection_factors[pname])
                    elif "lora_" in pname and ".lm_head." not in pname and ".embed_tokens." not in pname:
                        projection_factors[pname] = param.detach().clone()
            peft_model.eval()
            save = {"save_embedding_layers": False} if save_as.endswith("-headonly") else {}
            peft_model.save_pretrained(out / f"{name}-{save_as}", **save)
            peft_model.double()
            with torch.no_grad():
                return peft_model(ids).logits[0].float().contiguous()

        lora = adapter(PROJECTIONS, "lora")
        lora_head = adapter(PROJECTIONS + ["lm_head"], "lora-head")
        # The engine has to accept (and check) the copy of the head that PEFT writes by default.
        saved = safe_open(str(out / f"{name}-lora-head" / "adapter_model.safetensors"), "pt").keys()
        assert "base_model.model.lm_head.base_layer.weight" in saved, sorted(saved)
        logits = {"base": base, "lora": lora, "lora_head": lora_head}
        reference["models"][name] = {
            "arch": arch,
            "dtype": dtype,
            "tied": ns.tie,
            "lora_delta": float((lora - base).abs().max()),
            # What the head's factors add on top of the projections' (the test needs it to be large).
            "head_delta": float((lora_head - lora).abs().max()),
        }
        if name in HEAD_ONLY:
            logits["head_only"] = adapter(["lm_head"], "lora-headonly")
            reference["models"][name]["head_only_delta"] = float((logits["head_only"] - base).abs().max())
        if name == "qwen3":
            adapter(["lm_head"], "lora-tiedemb", ensure_weight_tying=True)
        save_file(logits, str(out / f"{name}-logits.safetensors"))

    for text in CORPUS:
        reference["corpus"].append({"text": text, "ids": fast.encode(text, add_special_tokens=False).ids})
    for conv in CONVERSATIONS:
        kwargs = {k: v for k, v in conv.items() if k not in ("messages", "tools", "add_generation_prompt")}
        text = hf_tok.apply_chat_template(
            conv["messages"],
            tools=conv.get("tools"),
            add_generation_prompt=conv["add_generation_prompt"],
            tokenize=False,
            **kwargs,
        )
        reference["chat"].append({**conv, "text": text})
    (out / "reference.json").write_text(json.dumps(reference, ensure_ascii=False, indent=1) + "\n")
    print(json.dumps({"out": str(out), "models": list(reference["models"])}))


if __name__ == "__main__":
    main()
