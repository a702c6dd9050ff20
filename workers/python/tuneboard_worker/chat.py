"""Conversations → token ids with a mask of trained (assistant) tokens, through the tokenizer's own chat template.

Chat templates rarely mark assistant spans ({% generation %}), and some are not prefix-stable: Qwen3 renders
the final assistant turn with an empty <think></think> block that earlier turns lack. So each assistant turn is
located by rendering prefixes: the turn starts where `render(messages[:i], add_generation_prompt=True)` ends
(or, when the full text does not start with that, right after the generation header found from the current
position), and ends with the template's end-of-turn marker (probed once per chat template: what the template writes
after an assistant message, e.g. `<|im_end|>` or `<|eot_id|>`). The marker is trained (the model must learn to
stop); text after it (a newline) is context. Turns given as sampled token ids (RL) replace the rendered turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_SENTINEL = "\u2063TUNEBOARD_SENTINEL\u2063"


class ConversationError(ValueError):
    """A conversation the template cannot render or locate turns in; the message is shown to the user."""


@dataclass
class Tokenized:
    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    # Sampler logprob per token; None where unknown.
    logprobs: list[float | None] = field(default_factory=list)


def render(tokenizer: Any, messages: list[dict[str, Any]], tools: Any = None, add_generation_prompt: bool = False) -> str:
    try:
        return tokenizer.apply_chat_template(
            messages, tools=tools or None, tokenize=False, add_generation_prompt=add_generation_prompt
        )
    except Exception as err:  # jinja errors carry the template's own message ("Conversation roles must alternate…")
        raise ConversationError(f"the chat template cannot render this conversation: {err}") from err


@dataclass
class _Probes:
    """What rendering probes found out about one chat template; None until first asked."""

    end_marker: str | None = None
    renders_developer: bool | None = None


# Keyed on what the probes depend on, not id(tokenizer): a freed tokenizer's id is reused by the next object,
# which would inherit its answers (another model's end marker), and a template edited in place is probed again.
_probes: dict[tuple[Any, ...], _Probes] = {}


def _probes_of(tokenizer: Any) -> _Probes:
    template = tokenizer.chat_template
    if isinstance(template, dict):  # named templates; a dict cannot be part of a key
        template = tuple(sorted(template.items()))
    key = (template, tokenizer.name_or_path, len(tokenizer), tokenizer.eos_token)
    return _probes.setdefault(key, _Probes())


def end_marker(tokenizer: Any) -> str:
    """What the template writes right after an assistant message's content, without trailing whitespace."""
    probes = _probes_of(tokenizer)
    if probes.end_marker is None:
        text = render(tokenizer, [{"role": "user", "content": "x"}, {"role": "assistant", "content": _SENTINEL}])
        at = text.rfind(_SENTINEL)
        suffix = text[at + len(_SENTINEL) :].strip() if at >= 0 else ""
        probes.end_marker = suffix or (tokenizer.eos_token or "")
    return probes.end_marker


def _as_rendered_roles(tokenizer: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`developer` messages as `system` ones when the template would drop them: some templates (Qwen3's) skip
    roles they do not know without an error, so the instruction would vanish from the training text. The
    built-in engine's template renders developer as system too (lib/engine/chat-template.ts)."""
    if not any(m.get("role") == "developer" for m in messages):
        return messages
    probes = _probes_of(tokenizer)
    if probes.renders_developer is None:
        try:
            probe = render(tokenizer, [{"role": "developer", "content": _SENTINEL}, {"role": "user", "content": "x"}])
        except ConversationError:
            probe = ""
        probes.renders_developer = _SENTINEL in probe
    if probes.renders_developer:
        return messages
    return [{**m, "role": "system"} if m.get("role") == "developer" else m for m in messages]


def _encode(tokenizer: Any, text: str) -> list[int]:
    if not text:
        return []
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _single_token_id(tokenizer: Any, text: str) -> int | None:
    ids = _encode(tokenizer, text)
    return ids[0] if len(ids) == 1 else None


def tokenize_conversation(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    *,
    tools: Any = None,
    assistant_turns: str = "all",
    turn_tokens: dict[int, tuple[list[int], list[float | None]]] | None = None,
) -> Tokenized:
    messages = _as_rendered_roles(tokenizer, messages)
    full = render(tokenizer, messages, tools)
    marker = end_marker(tokenizer)
    marker_id = _single_token_id(tokenizer, marker) if marker else None
    assistant = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    trained = set(assistant[-1:] if assistant_turns == "last" else assistant)
    out = Tokenized()

    def push(text: str, m: int) -> None:
        for tid in _encode(tokenizer, text):
            out.ids.append(tid)
            out.mask.append(m)
            out.logprobs.append(None)

    pos = 0
    for i in assistant:
        if i == 0:
            raise ConversationError("message 1 is an assistant message; a conversation must start with another role")
        before = render(tokenizer, messages[:i], tools, add_generation_prompt=True)
        if full.startswith(before) and len(before) >= pos:
            start = len(before)
        else:
            header = before[len(_common_prefix(before, render(tokenizer, messages[:i], tools))) :]
            found = full.find(header, pos) if header else -1
            if found < 0:
                raise ConversationError(f"cannot locate assistant message {i + 1} in the rendered chat template")
            start = found + len(header)
        if marker:
            at = full.find(marker, start)
            if at < 0:
                raise ConversationError(f"assistant message {i + 1} has no end-of-turn marker {marker!r} in the template")
            end = at + len(marker)
        else:
            nxt = render(tokenizer, messages[: i + 1], tools)
            end = len(nxt) if full.startswith(nxt) else len(full)
        push(full[pos:start], 0)
        m = 1 if i in trained else 0
        given = (turn_tokens or {}).get(i)
        if given is not None:
            ids, lps = given
            if len(ids) != len(lps):
                raise ConversationError(f"assistant message {i + 1}: token ids and logprobs differ in length")
            out.ids.extend(ids)
            out.mask.extend([m] * len(ids))
            out.logprobs.extend(lps)
            # A sampled turn usually ends with its own end-of-turn token; otherwise the template's closes it,
            # as untrained context (it has no sampler logprob).
            if marker and not (marker_id is not None and ids and ids[-1] == marker_id):
                push(marker, 0)
        else:
            push(full[start:end], m)
        pos = end
    push(full[pos:], 0)
    return out


def _common_prefix(a: str, b: str) -> str:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return a[:i]
