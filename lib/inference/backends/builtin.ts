import { ChatTemplate, type ChatMessage } from '@/lib/engine/chat-template';
import { badWordsTokenIds } from '@/lib/engine/sampler';
import type { HfTokenizer } from '@/lib/engine/hf/tokenizer';
import { Tokenizer, type TokenizerConfig } from '@/lib/engine/tokenizer';
import { config } from '@/lib/config';
import { ApiError } from '@/lib/errors';
import { chatTemplateError, engineError, structuredOutputError } from '../chat-errors';
import { collectChatCompletion, serializeChatCompletion } from '../chat-response';
import type { EngineEvent } from '../engine-events';
import { inferencePool, StructuredOutputRefusedError } from '../pool';
import {
  promptEndsReasoning,
  startsInReasoning,
  THINK_END,
  THINK_START,
  type ReasoningParserName,
  type ReasoningSetup,
} from '../reasoning';
import { chatCompletionStream } from '../sse';
import {
  checkTemplateRequest,
  resolveSamplingRequest,
  truncatePrompt,
  type GenerationDefaults,
  type SamplingRequest,
  type TemplateInputs,
} from '../chat-request';
import type { ModelSpec, TokenizerSpec, WireSequence } from '../wire';
import type { ChatBackend, ChatCall, ChatResult } from './types';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('chat');

/**
 * What the built-in engine needs to serve one model, all taken from the base model's description: the
 * weights (identity, source, reader), the tokenizer (inside `model`), the chat template, the token that ends
 * an assistant turn and the context length. A checkpoint shares its base's description with other weights.
 */
export interface BuiltinModelDescription {
  model: ModelSpec;
  /** Reads the weights when a thread does not have them cached (lib/inference does no storage I/O). */
  loadWeights?: () => Promise<Uint8Array>;
  chatTemplate: string;
  chatEosToken: string;
  contextLength: number;
  /**
   * vLLM's `--reasoning-parser` for this model (the base-models file's `reasoning_parser`, which its checkpoints
   * inherit): `<think>…</think>` goes to `reasoning`. Absent or null: none, the whole answer is content.
   */
  reasoningParser?: ReasoningParserName | null;
  /**
   * The most choices (`n`) one request may have: a llama.cpp base's context slots per thread (its scheduler runs a
   * request's choices together, so more never fit). Absent: no limit beyond the request checks'.
   */
  maxChoices?: number;
  /**
   * Runs on the request thread before a request goes to the inference threads, after its sampling checks: a
   * llama.cpp model's GGUF files written or checked (lib/services/llama-cpp-gguf.ts). What it throws is the answer;
   * a description it resolves to serves the request instead (a checkpoint whose adapter llama.cpp cannot apply, on
   * the WebAssembly engine).
   */
  prepare?: () => Promise<BuiltinModelDescription | void>;
  /**
   * A Hugging Face model: its tokenizer (built once on the server thread from tokenizer.json), the extra
   * ids that end generation from generation_config.json (vLLM adds them to stop_token_ids unless
   * ignore_eos), the sampling defaults that file gives (generationDefaults: vLLM applies them to what a request
   * leaves unset), and, for a checkpoint, its base model's files, which threads fetch and share.
   */
  hf?: {
    tokenizer: HfTokenizer;
    stopTokenIds: number[];
    generation: GenerationDefaults | null;
    baseWeights?: { key: string; load: () => Promise<Uint8Array> };
  };
}

// Tokenizers and parsed templates are built once per description, not per request.
const tokenizers = new WeakMap<TokenizerConfig, Tokenizer>();
const templates = new Map<string, ChatTemplate>();

function tokenizerFor(spec: TokenizerSpec): Tokenizer {
  if (spec.kind !== 'byte') throw new Error('a Hugging Face model description carries its tokenizer');
  let tok = tokenizers.get(spec.config);
  if (!tok) tokenizers.set(spec.config, (tok = new Tokenizer(spec.config)));
  return tok;
}

/** The tokenizer of a model description: a Hugging Face model's own, or the byte-level one built from its spec. */
export function descriptionTokenizer(d: BuiltinModelDescription): Tokenizer | HfTokenizer {
  return d.hf ? d.hf.tokenizer : tokenizerFor(d.model.tokenizer);
}

function templateFor(source: string, eosToken: string, bosToken?: string): ChatTemplate {
  const key = `${eosToken}\u0000${bosToken ?? ''}\u0000${source}`;
  let tpl = templates.get(key);
  if (!tpl) templates.set(key, (tpl = new ChatTemplate(source, { eosToken, bosToken })));
  return tpl;
}

function renderPrompt(template: ChatTemplate, req: TemplateInputs): string {
  if (req.messages.length === 0) throw chatTemplateError('messages must contain at least one message');
  const kwargs = Object.fromEntries(
    Object.entries(req.chat_template_kwargs).filter(([k]) => template.referencedVariables().has(k)),
  );
  try {
    return template.render(req.messages as ChatMessage[], {
      tools: req.tools,
      documents: req.documents,
      addGenerationPrompt: req.add_generation_prompt,
      continueFinalMessage: req.continue_final_message,
      extra: { ...kwargs, ...(req.reasoning_effort ? { reasoning_effort: req.reasoning_effort } : {}) },
    });
  } catch (err) {
    throw chatTemplateError(err instanceof Error ? err.message : String(err));
  }
}

/** The engine's per-choice input for a validated request (exported for the differential test, which runs the same path). */
export function wireSequences(
  s: SamplingRequest,
  prompt: number[],
  tokenizer: { encode(text: string): number[] },
  eosId: number | null,
  extraStopIds: readonly number[] = [],
  /** The structured output starts after this token (a reasoning model's `</think>`; GenerationRequest). */
  constraintAfterTokenId: number | null = null,
): WireSequence[] {
  const badWords = s.bad_words.length ? badWordsTokenIds(s.bad_words, (t) => tokenizer.encode(t)) : undefined;
  return Array.from({ length: s.n }, (_, choice) => ({
    promptTokenIds: prompt,
    maxTokens: s.max_tokens,
    sampling: {
      temperature: s.greedy ? 0 : s.temperature,
      topP: s.top_p,
      topK: s.top_k,
      minP: s.min_p,
      repetitionPenalty: s.repetition_penalty,
      frequencyPenalty: s.frequency_penalty,
      presencePenalty: s.presence_penalty,
      logitBias: s.logit_bias ? [...s.logit_bias] : undefined,
      allowedTokenIds: s.allowed_token_ids,
      badWordsTokenIds: badWords,
      minTokens: s.min_tokens,
      stopTokenIds: s.ignore_eos
        ? s.stop_token_ids
        : [...s.stop_token_ids, ...extraStopIds.filter((id) => id !== eosId && !s.stop_token_ids.includes(id))],
    },
    stop: s.stop,
    eosTokenId: eosId,
    ignoreEos: s.ignore_eos,
    includeStopStrInOutput: s.include_stop_str_in_output,
    skipSpecialTokens: s.skip_special_tokens,
    topLogprobs: s.top_logprobs,
    seed: s.seed === null ? null : s.seed.toString(),
    choice,
    structuredOutput: s.structured_output,
    ...(s.structured_output && constraintAfterTokenId !== null ? { constraintAfterTokenId } : {}),
  }));
}

/**
 * The size bound of a structured-output constraint (TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB): its JSON's bytes, which is
 * what compile time grows with (an enum's entries, a choice list, a long pattern). A 400 naming the limit.
 */
function checkStructuredOutputSize(constraint: { kind: string }): void {
  const { kind, ...rest } = constraint;
  const bytes = Buffer.byteLength(JSON.stringify(rest));
  const limit = config.maxStructuredOutputBytes;
  if (bytes > limit) {
    throw structuredOutputError(
      `structured_outputs.${kind} is ${bytes} bytes of JSON; the built-in engine compiles at most ${limit} (TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB)`,
    );
  }
}

/**
 * How a request's answer is split by the model's reasoning parser. vLLM refuses to start with a reasoning parser
 * whose tags are not single tokens of the model's vocabulary; a model described that way answers 503 with why.
 */
function reasoningSetup(
  parser: ReasoningParserName,
  tokenizer: { specialTokenId(text: string): number | undefined },
  prompt: readonly number[],
  inputs: TemplateInputs,
  includeReasoning: boolean,
): ReasoningSetup {
  const startId = tokenizer.specialTokenId(THINK_START);
  const endId = tokenizer.specialTokenId(THINK_END);
  if (startId === undefined || endId === undefined) {
    throw new ApiError(
      'unavailable',
      `This model's reasoning_parser "${parser}" needs ${THINK_START} and ${THINK_END} tokens, which its tokenizer does not have; remove reasoning_parser from its base model`,
    );
  }
  return {
    startsInReasoning: startsInReasoning(
      parser,
      promptEndsReasoning(prompt, startId, endId),
      inputs.chat_template_kwargs,
    ),
    include: includeReasoning,
  };
}

/** Counts completion tokens as events pass, then reports them once the generation is over. */
async function* metered(
  events: AsyncIterable<EngineEvent>,
  onEnd: (completionTokens: number) => void,
): AsyncGenerator<EngineEvent> {
  let completion = 0;
  try {
    for await (const e of events) {
      if (e.type === 'token') completion++;
      yield e;
    }
  } finally {
    onEnd(completion);
  }
}

/**
 * The built-in CPU engine, in vLLM's order of checks: template and context, sampling checks, structured
 * output compilation, then generation in the inference worker threads. Everything checkable is a 4xx
 * before the first byte, even when streaming.
 */
export class BuiltinChatBackend implements ChatBackend {
  readonly kind = 'builtin' as const;

  constructor(readonly description: BuiltinModelDescription) {}

  async chat(call: ChatCall): Promise<ChatResult> {
    const d = this.description;
    const tokenizer = descriptionTokenizer(d);
    const template = templateFor(d.chatTemplate, d.chatEosToken, d.hf?.tokenizer.bosToken);
    const eosId = tokenizer.specialTokenId(d.chatEosToken) ?? null;
    const req = call.request;
    const templateInputs = checkTemplateRequest(req);
    const text = renderPrompt(template, templateInputs);
    let promptIds: number[];
    if (tokenizer instanceof Tokenizer) {
      const bos = tokenizer.specialTokenId(tokenizer.config.bos);
      promptIds = [...(templateInputs.add_special_tokens && bos !== undefined ? [bos] : []), ...tokenizer.encode(text)];
    } else {
      // The tokenizer's own post-processor decides what add_special_tokens adds (Llama 3: BOS; Qwen: nothing).
      promptIds = tokenizer.encode(text, { addSpecialTokens: templateInputs.add_special_tokens });
    }
    const s = resolveSamplingRequest(req, {
      vocabSize: tokenizer.vocabSize,
      maxModelLen: d.contextLength,
      promptTokenCount: promptIds.length,
      maxLogprobs: config.maxLogprobs,
      generationConfig: d.hf?.generation ?? null,
      eosTokenId: eosId,
      headerRequestId: call.headers.get('x-request-id'),
    });
    const served = (await d.prepare?.()) ?? d;
    if (served.maxChoices !== undefined && s.n > served.maxChoices) {
      throw engineError(
        `n must be at most ${served.maxChoices} for this model, got ${s.n}: llama.cpp serves it with ${served.maxChoices} concurrent sequences (the base-models file's "slots")`,
        'n',
      );
    }
    const prompt = truncatePrompt(promptIds, s);
    const reasoning = d.reasoningParser
      ? reasoningSetup(d.reasoningParser, tokenizer, prompt, templateInputs, s.include_reasoning)
      : null;
    // The grammar is compiled on the inference thread (below), which grows with the constraint's size: bounded here,
    // before any of it is sent (docs/contract.md §8.11).
    if (s.structured_output) checkStructuredOutputSize(s.structured_output.constraint);

    const handle = inferencePool().generate({
      model: served.model,
      loadWeights: served.loadWeights,
      baseWeights: served.hf?.baseWeights,
      // With a reasoning parser the structured output applies after the think block, as vLLM's grammar does: from
      // the step after `</think>`, unless the prompt (or enable_thinking: false) already closed the block, or
      // TUNEBOARD_STRUCTURED_OUTPUTS_IN_REASONING=1 (vLLM's enable_in_reasoning) has it constrain the block too.
      sequences: wireSequences(
        s,
        prompt,
        tokenizer,
        eosId,
        d.hf?.stopTokenIds,
        reasoning?.startsInReasoning && !config.structuredOutputsInReasoning
          ? (tokenizer.specialTokenId(THINK_END) ?? null)
          : null,
      ),
      promptLogprobs: s.prompt_logprobs,
    });
    call.signal.addEventListener('abort', () => handle.abort(), { once: true });
    if (s.structured_output) {
      // Wait for the thread to compile the constraint, so that one it cannot enforce is a 400 before anything streams.
      try {
        await handle.accepted;
      } catch (err) {
        if (err instanceof StructuredOutputRefusedError) throw structuredOutputError(err.message);
        throw err;
      }
    }
    const events = metered(handle.events, (completionTokens) =>
      call.onUsage({ promptTokens: prompt.length, completionTokens }),
    );
    const created = Math.floor(Date.now() / 1000);

    if (s.stream) {
      const body = chatCompletionStream(
        events,
        s,
        { created, promptTokenIds: prompt, reasoning },
        { onError: (err) => log.error({ err }, 'generation failed mid-stream') },
      );
      return { kind: 'stream', body };
    }
    const collected: EngineEvent[] = [];
    for await (const e of events) collected.push(e);
    const { promptLogprobs } = await handle.finished;
    const response = await collectChatCompletion(collected, s, {
      created,
      promptTokenIds: prompt,
      promptLogprobs,
      reasoning,
    });
    return { kind: 'json', body: serializeChatCompletion(response) };
  }
}
