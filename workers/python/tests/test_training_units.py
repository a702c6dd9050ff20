"""Without a server: assistant masks through the real Qwen3 chat template, and LoRA SFT on a tiny Llama with a
PEFT save/load round trip that keeps the logits."""

from __future__ import annotations

import json

import pytest
import torch

from conftest import DEVICE, build_tiny_model
from tuneboard_worker.chat import end_marker, tokenize_conversation
from tuneboard_worker.model import attach_adapter, detach_adapter, load_base, lora_settings, save_adapter
from tuneboard_worker.sft import train_sft


@pytest.fixture(scope="module")
def tiny_llama(workdir):
    return build_tiny_model("llama", workdir / "models" / "tiny-llama")


@pytest.fixture(scope="module")
def qwen_tokenizer(models_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(models_dir / "tiny-qwen3")


def trained_text(tok, t) -> str:
    return tok.decode([i for i, m in zip(t.ids, t.mask) if m])


def test_only_assistant_turns_and_their_end_marker_are_trained(qwen_tokenizer):
    tok = qwen_tokenizer
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello there"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "Bye now"},
    ]
    t = tokenize_conversation(tok, messages)
    # The whole conversation is exactly the template's rendering, token for token.
    assert tok.decode(t.ids) == tok.apply_chat_template(messages, tokenize=False)
    # Qwen3 renders the final turn with an empty think block that earlier turns lack; both turns are found.
    assert trained_text(tok, t) == "Hello there<|im_end|><think>\n\n</think>\n\nBye now<|im_end|>"
    last = tokenize_conversation(tok, messages, assistant_turns="last")
    assert trained_text(tok, last) == "<think>\n\n</think>\n\nBye now<|im_end|>"


def test_sampled_turn_tokens_replace_the_rendered_turn(qwen_tokenizer):
    tok = qwen_tokenizer
    sampled = tok("Sure", add_special_tokens=False)["input_ids"]
    messages = [{"role": "user", "content": "ok?"}, {"role": "assistant", "content": "Sure"}]
    t = tokenize_conversation(tok, messages, turn_tokens={1: (sampled, [-0.5] * len(sampled))})
    assert [i for i, m in zip(t.ids, t.mask) if m] == sampled
    assert [lp for lp in t.logprobs if lp is not None] == [-0.5] * len(sampled)
    # The template's end-of-turn marker closes the sampled turn as untrained context.
    assert tok.decode(t.ids).endswith("Sure<|im_end|>\n")


def test_a_developer_message_the_template_would_drop_is_rendered_as_system(qwen_tokenizer):
    # Qwen3's template skips roles it does not know, without an error: the developer instruction vanished from
    # the training text. The built-in engine renders developer as system; so does the worker now.
    tok = qwen_tokenizer
    messages = [
        {"role": "developer", "content": "Answer in French."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Salut"},
    ]
    t = tokenize_conversation(tok, messages)
    as_system = [{**messages[0], "role": "system"}, *messages[1:]]
    assert tok.decode(t.ids) == tok.apply_chat_template(as_system, tokenize=False)
    assert "Answer in French." in tok.decode(t.ids)
    assert trained_text(tok, t) == "<think>\n\n</think>\n\nSalut<|im_end|>"


def test_a_chat_template_changed_on_the_same_tokenizer_object_is_probed_afresh(models_dir):
    # The probes were cached per id(tokenizer): a template edited in place, or a new tokenizer that got a freed
    # one's id, kept the old template's end marker and developer verdict.
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(models_dir / "tiny-qwen3")
    messages = [
        {"role": "developer", "content": "Answer in French."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Salut"},
    ]
    assert end_marker(tok) == "<|im_end|>"
    assert tok.decode(tokenize_conversation(tok, messages).ids).startswith("<|im_start|>system\nAnswer in French.")
    tok.chat_template = (
        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}<|endoftext|>\n{% endfor %}"
        "{% if add_generation_prompt %}assistant: {% endif %}"
    )
    assert end_marker(tok) == "<|endoftext|>"
    t = tokenize_conversation(tok, messages)
    assert tok.decode(t.ids).startswith("developer: Answer in French.")
    assert trained_text(tok, t) == "Salut<|endoftext|>"


class _Ctx:
    def __init__(self):
        self.steps: list[dict] = []

    def check(self):
        pass

    def started(self, n):
        self.n = n

    def step(self, m):
        self.steps.append(m)


class _Opts:
    micro_batch_tokens = 64  # forces gradient accumulation over several micro-batches

    def max_seq_len(self, model):
        return 256


def test_lora_sft_on_a_tiny_llama_and_the_saved_adapter_reloads_with_the_same_logits(tiny_llama, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    device = DEVICE
    base = load_base(str(tiny_llama), "test/tiny-llama", device, torch.float32, None)
    peft_model = attach_adapter(base, lora_settings({"rank": 4, "alpha": 8}), None, False)
    examples = [
        {"line": i + 1, "messages": [{"role": "user", "content": q}, {"role": "assistant", "content": "blue"}]}
        for i, q in enumerate(["Sky?", "Sea?", "Color?"])
    ]
    ctx = _Ctx()
    train_sft(peft_model, base.tokenizer, {"examples": examples, "file": "train.jsonl"}, {"batch_size": 3, "learning_rate": [1e-2, 1e-2, 0.0], "epochs": 3}, ctx, device, _Opts())
    assert ctx.n == 3 and [s["learning_rate"] for s in ctx.steps] == [1e-2, 1e-2, 0.0]
    assert ctx.steps[1]["loss"] < ctx.steps[0]["loss"]
    probe = torch.tensor([[1, 2, 3, 4, 5, 6]])
    peft_model.eval()
    with torch.no_grad():
        trained = peft_model(input_ids=probe.to(device)).logits.cpu()
    config_bytes, weights = save_adapter(peft_model, "test/tiny-llama", tmp_path)
    detach_adapter(peft_model)
    config = json.loads(config_bytes)
    assert config["r"] == 4 and config["base_model_name_or_path"] == "test/tiny-llama"
    fresh = AutoModelForCausalLM.from_pretrained(tiny_llama, dtype=torch.float32)
    loaded = PeftModel.from_pretrained(fresh, str(tmp_path))
    with torch.no_grad():
        # Trained on another device, the logits differ by that device's rounding (float32 either way).
        assert torch.allclose(loaded(input_ids=probe).logits, trained, atol=1e-5 if device.type == "cpu" else 1e-4)


def test_zero_advantage_share_matches_the_builtin_engine():
    # Same name and formula as lib/engine/train/rl.ts zeroAdvantageShare: groups without a spread ÷ groups.
    from tuneboard_worker.rl import zero_advantage_share

    assert zero_advantage_share(8, 0) == 1.0
    assert zero_advantage_share(4, 3) == 0.25
    assert zero_advantage_share(0, 0) == 0.0


def test_an_idle_worker_does_not_log_each_poll(capfd):
    """httpx logs every request at INFO: with the worker's logging, its claim polls write nothing at --log-level info,
    and show again at debug."""
    import http.server
    import logging
    import threading

    import httpx

    from tuneboard_worker.cli import configure_logging

    class NoContent(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), NoContent)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    try:
        root.handlers.clear()
        configure_logging("info")
        url = f"http://127.0.0.1:{server.server_port}/v1/workers/claim"
        for _ in range(3):
            httpx.post(url, json={})
        assert "HTTP Request" not in capfd.readouterr().err
        root.handlers.clear()
        configure_logging("debug")
        httpx.post(url, json={})
        assert "HTTP Request" in capfd.readouterr().err
    finally:
        server.shutdown()
        root.handlers[:] = saved[1]
        root.setLevel(saved[0])
        for name in ("httpx", "httpcore"):
            logging.getLogger(name).setLevel(logging.NOTSET)
