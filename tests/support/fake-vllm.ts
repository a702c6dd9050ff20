import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/**
 * A stand-in for a vLLM OpenAI-compatible server started with
 * `--enable-lora --max-lora-rank R` and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, implementing what Tuneboard
 * relies on as vLLM documents it (and as vllm/entrypoints/openai writes its answers):
 *
 * - GET /v1/models: the served base model (with `max_model_len`) and the loaded adapters (with `parent`).
 * - POST /v1/load_lora_adapter {lora_name, lora_path}: 200 with a plain-text success message; 400
 *   `InvalidUserInput` when a field is missing or the name is already loaded; 404 `NotFoundError` when the
 *   directory holds no adapter; 400 `BadRequestError` when the rank exceeds --max-lora-rank. Without runtime
 *   updating the route does not exist (FastAPI's 404 `{"detail":"Not Found"}`).
 * - POST /v1/unload_lora_adapter {lora_name}: 200, or 404 `NotFoundError` for an unknown name.
 * - POST /v1/chat/completions for the base or a loaded adapter (404 "The model `x` does not exist." else),
 *   JSON or SSE, with Python-formatted floats in logprobs. The answer names the adapter and the rank read
 *   from its files, so a test can tell that the right files reached the server.
 * - POST /v1/completions (JSON) with a prompt of token ids, as the Tinker sampler calls it: see `fakeCompletion`.
 *
 * Not a model: it proves the protocol around adapters and the shape of answers, not generation.
 */
export interface FakeVllm {
  url: string;
  served: string;
  /** name → rank read from adapter_config.json at load time */
  loaded: Map<string, { path: string; rank: number }>;
  calls: { endpoint: string; body: Record<string, unknown> }[];
  /** The most adapters loaded at once. */
  maxLoadedSeen: number;
  options: { runtimeUpdating: boolean; maxLoraRank: number };
  /** Forget every adapter, as a restarted vLLM would. */
  restart(): void;
  close(): Promise<void>;
}

function error(res: http.ServerResponse, status: number, type: string, message: string, param: string | null = null) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, param, code: status } }));
}

export async function startFakeVllm(served: string, opts: Partial<FakeVllm['options']> = {}): Promise<FakeVllm> {
  const state: Omit<FakeVllm, 'url' | 'close'> = {
    served,
    loaded: new Map(),
    calls: [],
    maxLoadedSeen: 0,
    options: { runtimeUpdating: true, maxLoraRank: 16, ...opts },
    restart() {
      state.loaded.clear();
    },
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      const url = req.url ?? '';
      state.calls.push({ endpoint: `${req.method} ${url}`, body });
      if (req.method === 'GET' && url === '/health') return res.end();
      if (req.method === 'GET' && url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            object: 'list',
            data: [
              {
                id: served,
                object: 'model',
                created: 1,
                owned_by: 'vllm',
                root: served,
                parent: null,
                max_model_len: 4096,
              },
              ...[...state.loaded.entries()].map(([id, a]) => ({
                id,
                object: 'model',
                created: 1,
                owned_by: 'vllm',
                root: a.path,
                parent: served,
                max_model_len: null,
              })),
            ],
          }),
        );
      }
      if (url === '/v1/load_lora_adapter' || url === '/v1/unload_lora_adapter') {
        if (!state.options.runtimeUpdating || req.method !== 'POST') {
          res.writeHead(404, { 'content-type': 'application/json' });
          return res.end('{"detail":"Not Found"}');
        }
        const name = typeof body.lora_name === 'string' ? body.lora_name : '';
        if (url === '/v1/unload_lora_adapter') {
          if (!name)
            return error(res, 400, 'InvalidUserInput', "either 'lora_name' and 'lora_int_id' needs to be provided.");
          if (!state.loaded.delete(name))
            return error(res, 404, 'NotFoundError', `The lora adapter '${name}' cannot be found.`);
          res.writeHead(200, { 'content-type': 'text/plain' });
          return res.end(`Success: LoRA adapter '${name}' removed successfully.`);
        }
        const loraPath = typeof body.lora_path === 'string' ? body.lora_path : '';
        if (!name || !loraPath)
          return error(res, 400, 'InvalidUserInput', "Both 'lora_name' and 'lora_path' must be provided.");
        if (state.loaded.has(name))
          return error(res, 400, 'InvalidUserInput', `The lora adapter '${name}' has already been loaded.`);
        const configFile = path.join(loraPath, 'adapter_config.json');
        if (!fs.existsSync(configFile) || !fs.existsSync(path.join(loraPath, 'adapter_model.safetensors')))
          return error(res, 404, 'NotFoundError', `Loading lora ${name} failed: No adapter found for ${loraPath}`);
        const config = JSON.parse(fs.readFileSync(configFile, 'utf8')) as { r?: number };
        const rank = config.r ?? 8;
        if (rank > state.options.maxLoraRank)
          return error(
            res,
            400,
            'BadRequestError',
            `LoRA rank ${rank} is greater than max_lora_rank ${state.options.maxLoraRank}.`,
          );
        state.loaded.set(name, { path: loraPath, rank });
        state.maxLoadedSeen = Math.max(state.maxLoadedSeen, state.loaded.size);
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end(`Success: LoRA adapter '${name}' added successfully.`);
      }
      if (req.method === 'POST' && url === '/v1/chat/completions') {
        const model = String(body.model);
        const adapter = state.loaded.get(model);
        if (model !== served && !adapter)
          return error(res, 404, 'NotFoundError', `The model \`${model}\` does not exist.`, 'model');
        const content = adapter ? `adapter ${model} r=${adapter.rank}` : 'base';
        // vLLM writes floats the way Python does: -1e-05, not -0.00001.
        const logprobs = { content: [{ token: 'token_id:9', logprob: '__LP__', bytes: [97], top_logprobs: [] }] };
        const usage = { prompt_tokens: 5, total_tokens: 7, completion_tokens: 2 };
        const py = (v: unknown) => JSON.stringify(v).replace('"__LP__"', '-1e-05');
        if (body.stream === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
          const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model };
          res.write(
            `data: ${py({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] })}\n\n`,
          );
          res.write(
            `data: ${py({ ...base, choices: [{ index: 0, delta: { content }, logprobs, finish_reason: 'stop' }] })}\n\n`,
          );
          const so = body.stream_options as { include_usage?: boolean } | undefined;
          if (so?.include_usage) res.write(`data: ${py({ ...base, choices: [], usage })}\n\n`);
          return res.end('data: [DONE]\n\n');
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          py({
            id: 'chatcmpl-fake',
            object: 'chat.completion',
            created: 1,
            model,
            choices: [{ index: 0, message: { role: 'assistant', content }, logprobs, finish_reason: 'stop' }],
            usage,
          }),
        );
      }
      if (req.method === 'POST' && url === '/v1/completions') {
        const model = String(body.model);
        const adapter = state.loaded.get(model);
        if (model !== served && !adapter)
          return error(res, 404, 'NotFoundError', `The model \`${model}\` does not exist.`, 'model');
        const answer = fakeCompletion(body, adapter ? adapter.rank : 0);
        if ('error' in answer) return error(res, 400, 'BadRequestError', answer.error);
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ ...answer.completion, model }));
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"detail":"Not Found"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** The fake's vocabulary and context (a Qwen3's vocabulary, the context its /v1/models reports). */
export const FAKE_VOCAB = 151936;
export const FAKE_MAX_MODEL_LEN = 4096;

/** The fake's detokenisation: token N reads `<N>`, so a stop string can be made from the ids a test expects. */
export const fakeTokenText = (id: number) => `<${id}>`;

/** The fake's logprob of a sampled token (a function of the id, so a test can check the mapping). */
export const fakeLogprob = (id: number) => -((id % 9) + 1) / 8;

/**
 * Token t of choice i of a completion: a function of the prompt, the adapter (rank 0: the base), and for sampling
 * (temperature > 0) the seed + i, or a random stream when unseeded. Greedy ignores the seed, as it would.
 */
function fakeToken(prompt: number[], rank: number, temperature: number, seed: number | null, i: number, t: number) {
  const sum = prompt.reduce((a, b) => a + b, 0);
  const noise = temperature === 0 ? 0 : seed === null ? Math.floor(Math.random() * 1e6) : (seed + i) * 7919;
  return 10 + ((((sum * 31 + t * 17 + rank * 101 + noise) % 990) + 990) % 990);
}

/**
 * vLLM's completions answer for a prompt of token ids, with vLLM's checks and shapes: 400 texts for a token out of
 * the vocabulary, a request past the context, n > 1 with greedy sampling; `max_tokens` 16 when absent or null;
 * stop token ids and stop strings (searched in the `<N>` text); `logprobs` with tokens as
 * `token_id:N` under return_tokens_as_token_ids; per-choice `prompt_logprobs`, a dict per position holding the
 * prompt token (whatever its rank) and the top k by rank: rank j is token (previous prompt token × 3 + j) mod vocab
 * with logprob −0.5·j, and a prompt token outside them has rank 1000 and logprob −3.
 */
export function fakeCompletion(
  body: Record<string, unknown>,
  rank: number,
): { completion: Record<string, unknown> } | { error: string } {
  const prompt = body.prompt as number[];
  const bad = prompt.find((id) => id >= FAKE_VOCAB);
  if (bad !== undefined) return { error: `Token id ${bad} is out of vocabulary` };
  const n = (body.n as number | undefined) ?? 1;
  const temperature = (body.temperature as number | undefined) ?? 1;
  if (temperature === 0 && n > 1) return { error: `n must be 1 when using greedy sampling, got ${n}.` };
  // Absent or null, 16: vLLM's default (null has meant 16 too since 0.11, not the rest of the context).
  const maxTokens = (body.max_tokens as number | null | undefined) ?? 16;
  if (prompt.length + maxTokens > FAKE_MAX_MODEL_LEN)
    return {
      error: `This model's maximum context length is ${FAKE_MAX_MODEL_LEN} tokens. However, you requested ${prompt.length + maxTokens} tokens (${prompt.length} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
    };
  const seed = (body.seed as number | undefined) ?? null;
  const stopIds = (body.stop_token_ids as number[] | undefined) ?? [];
  const stops = (body.stop as string[] | undefined) ?? [];
  const asIds = body.return_tokens_as_token_ids === true;
  let completionTokens = 0;
  const choices = Array.from({ length: n }, (_, i) => {
    const ids: number[] = [];
    let text = '';
    let finish = 'length';
    let stopReason: number | string | null = null;
    for (let t = 0; t < maxTokens; t++) {
      const id = fakeToken(prompt, rank, temperature, seed, i, t);
      ids.push(id);
      text += fakeTokenText(id);
      if (stopIds.includes(id)) {
        [finish, stopReason] = ['stop', id];
        break;
      }
      const hit = stops.find((stop) => text.includes(stop));
      if (hit !== undefined) {
        [finish, stopReason] = ['stop', hit];
        if (body.include_stop_str_in_output !== true) text = text.slice(0, text.indexOf(hit));
        break;
      }
    }
    completionTokens += ids.length;
    return {
      index: i,
      text,
      logprobs:
        body.logprobs == null
          ? null
          : {
              text_offset: ids.map((_, j) => j),
              token_logprobs: ids.map(fakeLogprob),
              tokens: ids.map((id) => (asIds ? `token_id:${id}` : fakeTokenText(id))),
              top_logprobs: ids.map((id) => ({ [asIds ? `token_id:${id}` : fakeTokenText(id)]: fakeLogprob(id) })),
            },
      finish_reason: finish,
      stop_reason: stopReason,
      prompt_logprobs: body.prompt_logprobs == null ? null : fakePromptLogprobs(prompt, body.prompt_logprobs as number),
    };
  });
  return {
    completion: {
      id: 'cmpl-fake',
      object: 'text_completion',
      created: 1,
      choices,
      usage: {
        prompt_tokens: prompt.length,
        total_tokens: prompt.length + completionTokens,
        completion_tokens: completionTokens,
      },
    },
  };
}

function fakePromptLogprobs(prompt: number[], k: number) {
  return prompt.map((id, p) => {
    if (p === 0) return null;
    const ranked = Array.from({ length: k }, (_, j) => ({
      id: (prompt[p - 1] * 3 + j + 1) % FAKE_VOCAB,
      logprob: -0.5 * (j + 1),
      rank: j + 1,
    }));
    const own = ranked.find((c) => c.id === id) ?? { id, logprob: -3, rank: 1000 };
    const entries = [own, ...ranked.filter((c) => c.id !== id)];
    return Object.fromEntries(
      entries.map((c) => [String(c.id), { logprob: c.logprob, rank: c.rank, decoded_token: fakeTokenText(c.id) }]),
    );
  });
}
