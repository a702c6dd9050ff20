import 'server-only';
import { BUILTIN_CHAT_TEMPLATE, ChatTemplate, type ChatMessage } from '@/lib/engine/chat-template';
import { badWordsTokenIds } from '@/lib/engine/sampler';
import { Tokenizer } from '@/lib/engine/tokenizer';
import { cachedStructuredGrammar, StructuredOutputCompileError } from '@/lib/engine/constrained';
import { chatTemplateError, structuredOutputError } from '@/lib/inference/chat-errors';
import { collectChatCompletion, serializeChatCompletion } from '@/lib/inference/chat-response';
import type { EngineEvent } from '@/lib/inference/engine-events';
import { inferencePool } from '@/lib/inference/pool';
import { chatCompletionStream } from '@/lib/inference/sse';
import {
  checkTemplateRequest,
  parseChatRequest,
  resolveSamplingRequest,
  truncatePrompt,
  type SamplingRequest,
} from '@/lib/inference/chat-request';
import type { WireSequence } from '@/lib/inference/wire';
import { ApiError } from '@/lib/errors';
import { forwardChatCompletion, upstreamConfig } from '@/lib/inference/upstream';
import type { Principal } from './accounts';
import { resolveChatModel } from './chat-models';
import { recordUsage, usageTarget } from './usage';
import { componentLogger } from '@/lib/logger';
import { config } from '@/lib/config';

const log = componentLogger('chat');

/**
 * POST /v1/chat/completions on the built-in engine, in vLLM's order (docs/contract.md §8.2): request validators,
 * model resolution (404), template and context, sampling checks, then generation in the inference worker
 * threads. Everything checkable is a 4xx before the first byte, even when streaming (docs/contract.md §8.15). Returns the
 * body (JSON text or an SSE stream) for the route to send; no HTTP types here.
 */

const tokenizer = new Tokenizer();
const template = new ChatTemplate(BUILTIN_CHAT_TEMPLATE, { eosToken: '<|im_end|>' });
const EOS_ID = tokenizer.specialTokenId('<|im_end|>') ?? null;

export type ChatResult =
  | { kind: 'json'; body: string; requestId: string; status?: number }
  | { kind: 'stream'; body: ReadableStream<Uint8Array>; requestId: string };

function renderPrompt(req: ReturnType<typeof checkTemplateRequest>): string {
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

function wireSequences(s: SamplingRequest, prompt: number[]): WireSequence[] {
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
      stopTokenIds: s.stop_token_ids,
    },
    stop: s.stop,
    eosTokenId: EOS_ID,
    ignoreEos: s.ignore_eos,
    includeStopStrInOutput: s.include_stop_str_in_output,
    skipSpecialTokens: s.skip_special_tokens,
    topLogprobs: s.top_logprobs,
    seed: s.seed === null ? null : s.seed.toString(),
    choice,
    structuredOutput: s.structured_output,
    endTokenIds: [...(EOS_ID === null ? [] : [EOS_ID]), ...s.stop_token_ids],
  }));
}

/** Counts completion tokens as events pass, then records usage once the generation is over. */
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

export async function createChatCompletion(input: {
  principal: Principal;
  body: unknown;
  headers: Headers;
  signal: AbortSignal;
}): Promise<ChatResult> {
  const req = parseChatRequest(input.body);
  const served = await resolveChatModel(input.principal, req.model);
  const target = usageTarget(input.principal, input.headers);
  if (served.kind === 'upstream') return forwardUpstream(input, req.model as string, served, target);
  const templateInputs = checkTemplateRequest(req);
  const text = renderPrompt(templateInputs);
  const bos = tokenizer.specialTokenId('<|bos|>');
  const promptIds = [
    ...(templateInputs.add_special_tokens && bos !== undefined ? [bos] : []),
    ...tokenizer.encode(text),
  ];
  const s = resolveSamplingRequest(req, {
    vocabSize: tokenizer.vocabSize,
    maxModelLen: served.config.ctx,
    promptTokenCount: promptIds.length,
    eosTokenId: EOS_ID,
    headerRequestId: input.headers.get('x-request-id'),
    maxLogprobs: config.maxLogprobs,
  });
  const prompt = truncatePrompt(promptIds, s);
  if (s.structured_output) {
    // Compile now (cached) so a schema or regex we cannot enforce is a 400 before anything streams (docs/contract.md §8.2 item 6).
    try {
      cachedStructuredGrammar(s.structured_output);
    } catch (err) {
      if (err instanceof StructuredOutputCompileError) throw structuredOutputError(err.message);
      throw err;
    }
  }

  const handle = inferencePool().generate({
    model: served.spec,
    loadWeights: served.loadWeights,
    sequences: wireSequences(s, prompt),
    promptLogprobs: s.prompt_logprobs,
  });
  input.signal.addEventListener('abort', () => handle.abort(), { once: true });
  const events = metered(handle.events, (completionTokens) => {
    recordUsage({ ...target, model: served.usageName, promptTokens: prompt.length, completionTokens }).catch((err) =>
      log.error({ err }, 'usage not recorded'),
    );
  });
  const created = Math.floor(Date.now() / 1000);

  if (s.stream) {
    const body = chatCompletionStream(
      events,
      s,
      { created, promptTokenIds: prompt },
      {
        onError: (err) => log.error({ err }, 'generation failed mid-stream'),
      },
    );
    return { kind: 'stream', body, requestId: s.request_id };
  }
  const collected: EngineEvent[] = [];
  for await (const e of events) collected.push(e);
  const { promptLogprobs } = await handle.finished;
  const response = await collectChatCompletion(collected, s, { created, promptTokenIds: prompt, promptLogprobs });
  return { kind: 'json', body: serializeChatCompletion(response), requestId: s.request_id };
}

/**
 * Upstream-served models: the request validators above have run; template, context and sampling checks
 * are the upstream vLLM's (it has the model's template and limits), and its errors come back unchanged.
 */
async function forwardUpstream(
  input: { body: unknown; headers: Headers; signal: AbortSignal },
  modelAsSent: string,
  served: { upstreamModel: string; usageName: string },
  target: { entityId: string; project: string },
): Promise<ChatResult> {
  const config = upstreamConfig();
  if (!config)
    throw new ApiError('unavailable', 'The upstream inference server is not configured', {
      headers: { 'retry-after': '30' },
    });
  const requestId = input.headers.get('x-request-id') ?? crypto.randomUUID().replace(/-/g, '');
  let result;
  try {
    result = await forwardChatCompletion({
      config,
      body: input.body as Record<string, unknown>,
      upstreamModel: served.upstreamModel,
      modelAsSent,
      signal: input.signal,
    });
  } catch (err) {
    log.error({ err }, 'upstream request failed');
    throw new ApiError('unavailable', 'The engine is currently overloaded, please try again later', {
      headers: { 'retry-after': '5' },
    });
  }
  void result.usage.then((u) => {
    if (u) {
      recordUsage({
        ...target,
        model: served.usageName,
        promptTokens: u.prompt_tokens,
        completionTokens: u.completion_tokens,
      }).catch((err) => log.error({ err }, 'usage not recorded'));
    }
  });
  if (typeof result.body === 'string') return { kind: 'json', body: result.body, requestId, status: result.status };
  return { kind: 'stream', body: result.body, requestId };
}
