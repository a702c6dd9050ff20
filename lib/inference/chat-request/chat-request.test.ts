import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/errors';
import {
  checkTemplateRequest,
  generationDefaults,
  parseChatRequest,
  resolveSamplingRequest,
  truncatePrompt,
  type SamplingContext,
} from '.';
import { validateChatRequest } from '@/tests/support/inference';

const BASE = { model: 'acme/agents/agent-001', messages: [{ role: 'user', content: 'hi' }] };
const CTX: SamplingContext = {
  vocabSize: 1000,
  maxModelLen: 4096,
  promptTokenCount: 10,
  maxLogprobs: 20,
  generationConfig: null,
};

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError, nothing was thrown');
}

type Expected = [message: string, param: string | null, type: 'Bad Request' | 'BadRequestError'];

function expectError(e: ApiError, [message, param, type]: Expected): void {
  expect({ status: e.status, message: e.message, param: e.param, type: e.type }).toEqual({
    status: 400,
    message,
    param,
    type,
  });
}

/** Phase 1 only. */
const phase1 = (body: Record<string, unknown>) => errorOf(() => parseChatRequest({ ...BASE, ...body }));
/** Every phase. */
const full = (body: Record<string, unknown>, ctx: Partial<SamplingContext> = {}) =>
  errorOf(() => validateChatRequest({ ...BASE, ...body }, { ...CTX, ...ctx }));
const ok = (body: Record<string, unknown>, ctx: Partial<SamplingContext> = {}) =>
  validateChatRequest({ ...BASE, ...body }, { ...CTX, ...ctx });

const BR = 'Bad Request' as const;
const BRE = 'BadRequestError' as const;

describe('phase 1: request validators (docs/contract.md §8.2 item 1, type Bad Request)', () => {
  it.each<[string, Record<string, unknown>, Expected]>([
    [
      'stream_options without stream',
      { stream_options: { include_usage: true } },
      ['Stream options can only be defined when `stream=True`.', 'stream_options', BR],
    ],
    [
      'stream_options with stream:false',
      { stream: false, stream_options: { continuous_usage_stats: false } },
      ['Stream options can only be defined when `stream=True`.', 'stream_options', BR],
    ],
    [
      'prompt_logprobs > 0 with stream',
      { stream: true, prompt_logprobs: 1 },
      ['`prompt_logprobs` are not available when `stream=True`.', 'prompt_logprobs', BR],
    ],
    [
      'prompt_logprobs −1 with stream',
      { stream: true, prompt_logprobs: -1 },
      ['`prompt_logprobs` are not available when `stream=True`.', 'prompt_logprobs', BR],
    ],
    [
      'prompt_logprobs < −1',
      { prompt_logprobs: -2 },
      ['`prompt_logprobs` must be a positive value or -1.', 'prompt_logprobs', BR],
    ],
    [
      'top_logprobs < −1',
      { logprobs: true, top_logprobs: -3 },
      ['`top_logprobs` must be a positive value or -1.', 'top_logprobs', BR],
    ],
    [
      'top_logprobs without logprobs',
      { top_logprobs: 2 },
      ['when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs', BR],
    ],
    [
      'top_logprobs −1 with logprobs:false',
      { logprobs: false, top_logprobs: -1 },
      ['when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs', BR],
    ],
    [
      'two of json/regex/choice',
      { structured_outputs: { regex: 'a+', choice: ['a'] } },
      [
        "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').",
        'structured_outputs',
        BR,
      ],
    ],
    [
      'tool_choice without tools',
      { tool_choice: 'auto' },
      ['When using `tool_choice`, `tools` must be set.', 'tool_choice', BR],
    ],
    [
      'tool_choice with tools: null',
      { tool_choice: 'required', tools: null },
      ['When using `tool_choice`, `tools` must be set.', 'tool_choice', BR],
    ],
    [
      'tool_choice auto',
      { tool_choice: 'auto', tools: [] },
      ['Invalid value for `tool_choice`: auto! Only "none" is supported.', 'tool_choice', BR],
    ],
    [
      'named tool_choice',
      {
        tool_choice: { type: 'function', function: { name: 'f' } },
        tools: [{ type: 'function', function: { name: 'f' } }],
      },
      [
        "Invalid value for `tool_choice`: {'type': 'function', 'function': {'name': 'f'}}! Only \"none\" is supported.",
        'tool_choice',
        BR,
      ],
    ],
    [
      'continue_final_message alone (add_generation_prompt defaults to true)',
      { continue_final_message: true },
      ['Cannot set both `continue_final_message` and `add_generation_prompt` to True.', 'continue_final_message', BR],
    ],
    [
      'both generation flags',
      { continue_final_message: true, add_generation_prompt: true },
      ['Cannot set both `continue_final_message` and `add_generation_prompt` to True.', 'continue_final_message', BR],
    ],
    [
      'empty cache_salt',
      { cache_salt: '' },
      ["Parameter 'cache_salt' must be a non-empty string if provided.", 'cache_salt', BR],
    ],
    [
      'non-string cache_salt',
      { cache_salt: 5 },
      ["Parameter 'cache_salt' must be a non-empty string if provided.", 'cache_salt', BR],
    ],
  ])('%s', (_, body, expected) => {
    expectError(phase1(body), expected);
  });

  it.each<[string, Record<string, unknown>]>([
    ['empty stream_options without stream', { stream_options: {} }],
    ['prompt_logprobs 0 with stream', { stream: true, prompt_logprobs: 0 }],
    ['top_logprobs 0 without logprobs', { top_logprobs: 0 }],
    ['top_logprobs with logprobs', { logprobs: true, top_logprobs: 5 }],
    ['tool_choice none without tools', { tool_choice: 'none' }],
    ['tool_choice null', { tool_choice: null }],
    [
      'continue_final_message with add_generation_prompt:false',
      { continue_final_message: true, add_generation_prompt: false },
    ],
    ['null cache_salt', { cache_salt: null }],
    ['one structured kind', { structured_outputs: { choice: ['a', 'b'] } }],
  ])('passes: %s', (_, body) => {
    expect(() => parseChatRequest({ ...BASE, ...body })).not.toThrow();
  });

  it('first failure wins in docs/contract.md §8.2 order (multi-error requests)', () => {
    const all: Record<string, unknown> = {
      stream_options: { include_usage: true },
      prompt_logprobs: -5,
      structured_outputs: { json: '{}', regex: 'a' },
      tool_choice: 'auto',
      continue_final_message: true,
      cache_salt: '',
      messages: 'not a list',
    };
    const expected: [string, string][] = [
      ['stream_options', 'Stream options can only be defined when `stream=True`.'],
      ['prompt_logprobs', '`prompt_logprobs` must be a positive value or -1.'],
      [
        'structured_outputs',
        "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').",
      ],
      ['tool_choice', 'When using `tool_choice`, `tools` must be set.'],
      ['continue_final_message', 'Cannot set both `continue_final_message` and `add_generation_prompt` to True.'],
      ['cache_salt', "Parameter 'cache_salt' must be a non-empty string if provided."],
      // The validators run before field validation, so schema errors come last.
      ['messages', 'Input should be a valid list'],
    ];
    const body = { ...BASE, ...all };
    for (const [field, message] of expected) {
      const e = errorOf(() => parseChatRequest(body));
      expect([e.param, e.message]).toEqual([field, message]);
      delete (body as Record<string, unknown>)[field];
    }
  });
});

describe('phase 1: schema (pydantic messages, type Bad Request)', () => {
  it.each<[string, unknown, Expected]>([
    ['not an object', [1, 2], ['Input should be a valid dictionary or object to extract fields from', null, BR]],
    ['missing messages', { model: 'm' }, ['Field required', 'messages', BR]],
    ['message without role', { messages: [{ content: 'x' }] }, ['Field required', 'messages', BR]],
    [
      'fractional n',
      { ...BASE, n: 1.5 },
      ['Input should be a valid integer, got a number with a fractional part', 'n', BR],
    ],
    [
      'string n',
      { ...BASE, n: '2' },
      ['Input should be a valid integer, unable to parse string as an integer', 'n', BR],
    ],
    ['boolean max_tokens', { ...BASE, max_tokens: true }, ['Input should be a valid integer', 'max_tokens', BR]],
    [
      'string temperature',
      { ...BASE, temperature: 'hot' },
      ['Input should be a valid number, unable to parse string as a number', 'temperature', BR],
    ],
    [
      'reasoning_effort',
      { ...BASE, reasoning_effort: 'max' },
      ["Input should be 'low', 'medium' or 'high'", 'reasoning_effort', BR],
    ],
    [
      'seed above int64',
      { ...BASE, seed: 2 ** 64 },
      ['Input should be less than or equal to 9223372036854775807', 'seed', BR],
    ],
    [
      'seed below int64',
      { ...BASE, seed: -(2 ** 64) },
      ['Input should be greater than or equal to -9223372036854775808', 'seed', BR],
    ],
    [
      'truncate_prompt_tokens < −1',
      { ...BASE, truncate_prompt_tokens: -2 },
      ['Input should be greater than or equal to -1', 'truncate_prompt_tokens', BR],
    ],
    ['null for a non-Optional bool', { ...BASE, echo: null }, ['Input should be a valid boolean', 'echo', BR]],
    [
      'null for a non-Optional int',
      { ...BASE, min_tokens: null },
      ['Input should be a valid integer', 'min_tokens', BR],
    ],
    [
      'non-string stop item',
      { ...BASE, stop: ['a', 1] },
      ['Input does not match any of the accepted shapes', 'stop', BR],
    ],
    [
      'non-int stop_token_ids item',
      { ...BASE, stop_token_ids: [1, 'x'] },
      ['Input should be a valid integer, unable to parse string as an integer', 'stop_token_ids', BR],
    ],
    [
      'logit_bias value',
      { ...BASE, logit_bias: { '5': 'x' } },
      ['Input should be a valid number, unable to parse string as a number', 'logit_bias', BR],
    ],
    [
      'json_schema without json_schema',
      { ...BASE, response_format: { type: 'json_schema' } },
      ["When response_format type is 'json_schema', the 'json_schema' field must be provided.", 'response_format', BR],
    ],
    [
      'unknown response_format type',
      { ...BASE, response_format: { type: 'xml' } },
      ["Input should be 'text', 'json_object', 'json_schema' or 'structural_tag'", 'response_format', BR],
    ],
    [
      'engine_xargs value',
      { ...BASE, engine_xargs: { a: { nested: 1 } } },
      ['Input does not match any of the accepted shapes', 'engine_xargs', BR],
    ],
    [
      'vllm_xargs value',
      { ...BASE, vllm_xargs: { a: true } },
      ['Input does not match any of the accepted shapes', 'vllm_xargs', BR],
    ],
  ])('%s', (_, body, expected) => {
    expectError(
      errorOf(() => parseChatRequest(body)),
      expected,
    );
  });

  it('more than one of the six structured-output kinds dumps the dataclass', () => {
    expectError(phase1({ structured_outputs: { regex: '[a-z]+', grammar: 'root ::= "a"', _backend: 'x' } }), [
      "You can only use one kind of structured outputs constraint but multiple are specified: {'json': None, 'regex': '[a-z]+', 'choice': None, 'grammar': 'root ::= \"a\"', 'json_object': None, 'disable_fallback': False, 'disable_any_whitespace': False, 'disable_additional_properties': False, 'whitespace_pattern': None, 'structural_tag': None, '_backend': None, '_backend_was_auto': False}",
      'structured_outputs',
      BR,
    ]);
    // json_object:false still counts as "specified" (is not None).
    expect(phase1({ structured_outputs: { json: { type: 'object' }, json_object: false } }).message).toContain(
      "'json': {'type': 'object'}",
    );
  });

  it('the structured-output kinds error takes the place of its field among schema errors', () => {
    const so = { structured_outputs: { regex: 'a', grammar: 'b' } };
    // echo is declared before structured_outputs, priority after it.
    expect(phase1({ ...so, echo: null }).param).toBe('echo');
    expect(phase1({ ...so, priority: null }).param).toBe('structured_outputs');
  });

  it('accepts seeds up to 2^63−1 even though JSON rounds them to 2^63', () => {
    expect(ok({ seed: 9223372036854775807 }).seed).toBe(2n ** 63n - 1n);
    expect(ok({ seed: -9223372036854775808 }).seed).toBe(-(2n ** 63n));
  });

  it('ignores unknown keys at every level and accepts custom roles, parts and null content', () => {
    const req = parseChatRequest({
      ...BASE,
      messages: [
        { role: 'system', content: 'be brief', extra: 1 },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', content: 'ok', tool_call_id: 't' },
        { role: 'critic', content: 'fine' },
      ],
      frobnicate: true,
      stream_options: undefined,
    });
    expect('frobnicate' in req).toBe(false);
    expect(req.messages[0]).toMatchObject({ role: 'system', extra: 1 });
  });
});

describe('template checks (after model resolution, type BadRequestError)', () => {
  it.each<[string, Record<string, unknown>, Expected]>([
    [
      'request chat_template',
      { chat_template: '{{ messages }}' },
      [
        'Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.',
        'chat_template',
        BRE,
      ],
    ],
    [
      'chat_template inside kwargs',
      { chat_template_kwargs: { chat_template: 'x' } },
      [
        'Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.',
        'chat_template_kwargs',
        BRE,
      ],
    ],
    [
      'tokenize kwarg',
      { chat_template_kwargs: { tokenize: true, enable_thinking: false } },
      ["Found unexpected chat template kwargs from request: {'tokenize'}", 'chat_template_kwargs', BRE],
    ],
    [
      'null chat_template kwarg',
      { chat_template_kwargs: { chat_template: null } },
      ["Found unexpected chat template kwargs from request: {'chat_template'}", 'chat_template_kwargs', BRE],
    ],
  ])('%s', (_, body, expected) => {
    expectError(
      errorOf(() => checkTemplateRequest(parseChatRequest({ ...BASE, ...body }))),
      expected,
    );
    expectError(full(body), expected);
  });

  it('returns the template inputs: tools as model_dump, kwargs minus the names request fields supply', () => {
    const inputs = checkTemplateRequest(
      parseChatRequest({
        ...BASE,
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
        documents: [{ title: 't', text: 'x' }],
        chat_template_kwargs: { enable_thinking: false, add_generation_prompt: false, tools: [] },
        reasoning_effort: 'low',
      }),
    );
    expect(inputs).toEqual({
      messages: BASE.messages,
      tools: [
        { type: 'function', function: { name: 'get_weather', description: null, parameters: { type: 'object' } } },
      ],
      documents: [{ title: 't', text: 'x' }],
      add_generation_prompt: true,
      continue_final_message: false,
      add_special_tokens: false,
      reasoning_effort: 'low',
      chat_template_kwargs: { enable_thinking: false },
    });
  });
});

describe('phase 2: context (docs/contract.md §8.10), type BadRequestError', () => {
  it.each<[string, Record<string, unknown>, Partial<SamplingContext>, Expected]>([
    [
      'truncation larger than the context',
      { truncate_prompt_tokens: 5000 },
      {},
      [
        'truncate_prompt_tokens value (5000) is greater than max_model_len (4096). Please, select a smaller truncation size.',
        'truncate_prompt_tokens',
        BRE,
      ],
    ],
    [
      'prompt fills the context',
      {},
      { promptTokenCount: 4096 },
      [
        "This model's maximum context length is 4096 tokens. However, your request has 4096 input tokens. Please reduce the length of the input messages.",
        'messages',
        BRE,
      ],
    ],
    [
      'truncate −1 keeps L tokens, which still fills the context',
      { truncate_prompt_tokens: -1 },
      { promptTokenCount: 5000 },
      [
        "This model's maximum context length is 4096 tokens. However, your request has 4096 input tokens. Please reduce the length of the input messages.",
        'messages',
        BRE,
      ],
    ],
    [
      'explicit max_tokens too large',
      { max_tokens: 4000 },
      { promptTokenCount: 100 },
      [
        "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum context length is 4096 tokens and your request has 100 input tokens (4000 > 4096 - 100).",
        'max_tokens',
        BRE,
      ],
    ],
    [
      'explicit max_completion_tokens too large',
      { max_completion_tokens: 4000, max_tokens: 5 },
      { promptTokenCount: 100 },
      [
        "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum context length is 4096 tokens and your request has 100 input tokens (4000 > 4096 - 100).",
        'max_completion_tokens',
        BRE,
      ],
    ],
  ])('%s', (_, body, ctx, expected) => {
    expectError(full(body, ctx), expected);
  });

  it('checks the truncated prompt: truncation rescues a long prompt', () => {
    const s = ok({ truncate_prompt_tokens: 100 }, { promptTokenCount: 5000 });
    expect(s.prompt_tokens).toBe(100);
    expect(s.max_tokens).toBe(3996);
    expect(truncatePrompt([1, 2, 3, 4, 5], { truncate_prompt_tokens: 2 })).toEqual([4, 5]);
    expect(truncatePrompt([1, 2], { truncate_prompt_tokens: 5 })).toEqual([1, 2]);
    expect(truncatePrompt([1, 2], { truncate_prompt_tokens: null })).toEqual([1, 2]);
  });
});

describe('phase 2: sampling parameters (docs/contract.md §8.1, type BadRequestError)', () => {
  it.each<[string, Record<string, unknown>, Expected]>([
    [
      'beam search',
      { use_beam_search: true },
      ['Beam search is not supported by this server.', 'use_beam_search', BRE],
    ],
    [
      'non-integer logit_bias key',
      { logit_bias: { x: 1, '5': 2, 'a b': 3 } },
      ["logit_bias contains key(s) that cannot be converted to integer token IDs: ['x', 'a b']", 'logit_bias', BRE],
    ],
    ['n < 1', { n: 0 }, ['n must be at least 1, got 0.', 'n', BRE]],
    ['n > 128', { n: 129 }, ['n must be at most 128, got 129.', 'n', BRE]],
    [
      'presence_penalty',
      { presence_penalty: 3 },
      ['presence_penalty must be in [-2, 2], got 3.0.', 'presence_penalty', BRE],
    ],
    [
      'frequency_penalty',
      { frequency_penalty: -2.5 },
      ['frequency_penalty must be in [-2, 2], got -2.5.', 'frequency_penalty', BRE],
    ],
    [
      'repetition_penalty',
      { repetition_penalty: 0 },
      ['repetition_penalty must be greater than zero, got 0.0.', 'repetition_penalty', BRE],
    ],
    ['temperature', { temperature: -1 }, ['temperature must be non-negative, got -1.0.', 'temperature', BRE]],
    [
      'tiny negative temperature in exponent form',
      { temperature: -0.00001 },
      ['temperature must be non-negative, got -1e-05.', 'temperature', BRE],
    ],
    ['top_p 0', { top_p: 0 }, ['top_p must be in (0, 1], got 0.0.', 'top_p', BRE]],
    ['top_p > 1', { top_p: 1.5 }, ['top_p must be in (0, 1], got 1.5.', 'top_p', BRE]],
    ['top_k < −1', { top_k: -2 }, ['top_k must be 0 (disable), or at least 1, got -2.', 'top_k', BRE]],
    ['min_p', { min_p: 1.5 }, ['min_p must be in [0, 1], got 1.5.', 'min_p', BRE]],
    ['max_tokens 0', { max_tokens: 0 }, ['max_tokens must be at least 1, got 0.', 'max_tokens', BRE]],
    [
      'negative max_completion_tokens',
      { max_completion_tokens: -5 },
      ['max_tokens must be at least 1, got -5.', 'max_completion_tokens', BRE],
    ],
    [
      'min_tokens < 0',
      { min_tokens: -1 },
      ['min_tokens must be greater than or equal to 0, got -1.', 'min_tokens', BRE],
    ],
    [
      'min_tokens > max_tokens',
      { min_tokens: 10, max_tokens: 5 },
      ['min_tokens must be less than or equal to max_tokens=5, got 10.', 'min_tokens', BRE],
    ],
    [
      'truncate_prompt_tokens 0',
      { truncate_prompt_tokens: 0 },
      ['truncate_prompt_tokens must be an integer >= 1 or -1, got 0', 'truncate_prompt_tokens', BRE],
    ],
    ['empty stop string', { stop: '' }, ['stop cannot contain an empty string.', 'stop', BRE]],
    ['empty stop in a list', { stop: ['a', ''] }, ['stop cannot contain an empty string.', 'stop', BRE]],
    [
      'empty bad word',
      { bad_words: ['a', ''] },
      ["bad_words cannot contain an empty string. Got bad_words=['a', '']", 'bad_words', BRE],
    ],
    ['greedy with n > 1', { temperature: 0, n: 2 }, ['n must be 1 when using greedy sampling, got 2.', 'n', BRE]],
  ])('%s', (_, body, expected) => {
    expectError(full(body), expected);
  });

  it('validates generation-config defaults the same way', () => {
    expectError(full({}, { generationConfig: { temperature: -0.5 } }), [
      'temperature must be non-negative, got -0.5.',
      'temperature',
      BRE,
    ]);
  });

  it('min_tokens is compared with the resolved max_tokens (capped by max_new_tokens)', () => {
    expectError(full({ min_tokens: 50 }, { generationConfig: { max_new_tokens: 20 } }), [
      'min_tokens must be less than or equal to max_tokens=20, got 50.',
      'min_tokens',
      BRE,
    ]);
  });
});

describe('phase 2: engine checks (docs/contract.md §8.2 item 6, type BadRequestError)', () => {
  it.each<[string, Record<string, unknown>, Expected]>([
    [
      'too many top_logprobs',
      { logprobs: true, top_logprobs: 21 },
      ['Requested sample logprobs of 21, which is greater than max allowed: 20', 'top_logprobs', BRE],
    ],
    [
      'top_logprobs −1 is the whole vocabulary',
      { logprobs: true, top_logprobs: -1 },
      ['Requested sample logprobs of 1000, which is greater than max allowed: 20', 'top_logprobs', BRE],
    ],
    [
      'too many prompt_logprobs',
      { prompt_logprobs: 21 },
      ['Requested prompt logprobs of 21, which is greater than max allowed: 20', 'prompt_logprobs', BRE],
    ],
    [
      'prompt_logprobs −1',
      { prompt_logprobs: -1 },
      ['Requested prompt logprobs of 1000, which is greater than max allowed: 20', 'prompt_logprobs', BRE],
    ],
    [
      'out-of-vocab logit_bias',
      { logit_bias: { '1000': 5, '3': 1, '2000': -5 } },
      [
        'token_id(s) [1000, 2000] in logit_bias contain out-of-vocab token ids. Vocabulary size: 1000',
        'logit_bias',
        BRE,
      ],
    ],
    [
      'negative logit_bias id',
      { logit_bias: { '-1': 5 } },
      ['token_id(s) [-1] in logit_bias contain out-of-vocab token ids. Vocabulary size: 1000', 'logit_bias', BRE],
    ],
    [
      'out-of-vocab stop_token_ids',
      { stop_token_ids: [5, 1000, 1000, 4000] },
      [
        'token_id(s) [1000, 4000] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: 1000',
        'stop_token_ids',
        BRE,
      ],
    ],
    [
      'empty allowed_token_ids',
      { allowed_token_ids: [] },
      ['allowed_token_ids is not None and empty!', 'allowed_token_ids', BRE],
    ],
    [
      'out-of-vocab allowed_token_ids',
      { allowed_token_ids: [1, 1000] },
      ['allowed_token_ids contains out-of-vocab token id!', 'allowed_token_ids', BRE],
    ],
    [
      'allowed_token_ids all masked by min_tokens (deliberate 400; vLLM would emit a token outside the list)',
      { allowed_token_ids: [120], stop_token_ids: [120], min_tokens: 1 },
      [
        'allowed_token_ids leaves no token to sample while min_tokens=1 masks EOS and stop_token_ids: every allowed id is one of them.',
        'allowed_token_ids',
        BRE,
      ],
    ],
    [
      'empty choice',
      { structured_outputs: { choice: [] } },
      ["Choice '[]' cannot be an empty list", 'structured_outputs', BRE],
    ],
    [
      'grammar',
      { structured_outputs: { grammar: 'root ::= "a"' } },
      ['structured_outputs.grammar is not supported by this server.', 'structured_outputs', BRE],
    ],
    [
      'structural_tag',
      { structured_outputs: { structural_tag: '{}' } },
      ['structured_outputs.structural_tag is not supported by this server.', 'structured_outputs', BRE],
    ],
    [
      'structural_tag response_format',
      { response_format: { type: 'structural_tag', structures: [], triggers: [] } },
      ['structured_outputs.structural_tag is not supported by this server.', 'response_format', BRE],
    ],
    ['priority', { priority: 1 }, ['Got priority 1 but Priority scheduling is not enabled.', 'priority', BRE]],
    [
      'negative priority',
      { priority: -3 },
      ['Got priority -3 but Priority scheduling is not enabled.', 'priority', BRE],
    ],
    [
      'logits_processors',
      { logits_processors: ['my.module.Proc'] },
      [
        'The `logits_processors` argument is not supported by this server. See --logits-processor-pattern engine argument for more information.',
        'logits_processors',
        BRE,
      ],
    ],
  ])('%s', (_, body, expected) => {
    expectError(full(body), expected);
  });

  it("reads generation_config.json's sampling defaults as vLLM does (to_diff_dict: transformers' defaults drop)", () => {
    expect(
      generationDefaults({
        temperature: 0.6,
        top_p: 0.95,
        top_k: 20,
        min_p: 0,
        repetition_penalty: 1,
        max_new_tokens: 512,
        presence_penalty: 1.5,
        eos_token_id: [1, 2],
        do_sample: true,
      }),
    ).toEqual({ temperature: 0.6, top_p: 0.95, top_k: 20, min_p: 0, max_new_tokens: 512 });
    expect(generationDefaults({ temperature: 1, top_k: 50, top_p: 1, eos_token_id: 2 })).toBeNull();
    expect(generationDefaults({ temperature: '0.5' })).toBeNull();
    expect(generationDefaults(null)).toBeNull();
  });

  it('honours a configured max_logprobs', () => {
    expectError(full({ logprobs: true, top_logprobs: 6 }, { maxLogprobs: 5 }), [
      'Requested sample logprobs of 6, which is greater than max allowed: 5',
      'top_logprobs',
      BRE,
    ]);
  });

  it('accepts an empty logits_processors list', () => {
    expect(() => ok({ logits_processors: [] })).not.toThrow();
  });
});

describe('phase 2 ordering: the first failure in docs/contract.md §8.2 order wins', () => {
  // Each row is one failing field; with all of them present the first row's error is reported, then the
  // next once it is removed, and so on through stages (3) context, (4) sampling, (5) greedy, (6) engine.
  const rows: [string, unknown, string][] = [
    [
      'truncate_prompt_tokens',
      9999,
      'truncate_prompt_tokens value (9999) is greater than max_model_len (4096). Please, select a smaller truncation size.',
    ],
    [
      'max_completion_tokens',
      5000,
      "'max_tokens' or 'max_completion_tokens' is too large: 5000. This model's maximum context length is 4096 tokens and your request has 10 input tokens (5000 > 4096 - 10).",
    ],
    ['use_beam_search', true, 'Beam search is not supported by this server.'],
    [
      'logit_bias',
      { x: 1, '2000': 1 },
      "logit_bias contains key(s) that cannot be converted to integer token IDs: ['x']",
    ],
    ['n', 0, 'n must be at least 1, got 0.'],
    ['presence_penalty', 5, 'presence_penalty must be in [-2, 2], got 5.0.'],
    ['frequency_penalty', 5, 'frequency_penalty must be in [-2, 2], got 5.0.'],
    ['repetition_penalty', -1, 'repetition_penalty must be greater than zero, got -1.0.'],
    ['temperature', -1, 'temperature must be non-negative, got -1.0.'],
    ['top_p', 2, 'top_p must be in (0, 1], got 2.0.'],
    ['top_k', -5, 'top_k must be 0 (disable), or at least 1, got -5.'],
    ['min_p', 2, 'min_p must be in [0, 1], got 2.0.'],
    ['max_tokens', 0, 'max_tokens must be at least 1, got 0.'],
    ['min_tokens', -1, 'min_tokens must be greater than or equal to 0, got -1.'],
    ['stop', ['x', ''], 'stop cannot contain an empty string.'],
    ['bad_words', [''], "bad_words cannot contain an empty string. Got bad_words=['']"],
  ];

  it('walks the stages in order', () => {
    const body: Record<string, unknown> = { ...BASE };
    for (const [field, value] of rows) body[field] = value;
    // (5) greedy with n > 1, and (6) engine errors, all present at once.
    Object.assign(body, {
      logprobs: true,
      top_logprobs: 30,
      prompt_logprobs: 30,
      stop_token_ids: [5000],
      allowed_token_ids: [],
      structured_outputs: { choice: [] },
      priority: 2,
      logits_processors: ['x'],
    });
    const seen: string[] = [];
    const next = (remove: string[], patch: Record<string, unknown> = {}) => {
      const e = errorOf(() => validateChatRequest(body, CTX));
      expect(e.type).toBe('BadRequestError');
      seen.push(e.message);
      for (const f of remove) delete body[f];
      Object.assign(body, patch);
    };
    for (const [field] of rows) {
      // n:0 hides greedy; after n is fixed set up (5): temperature 0 with n 2 comes after every (4) check.
      if (field === 'n') next([], { n: 2 });
      else if (field === 'temperature') next([], { temperature: 0 });
      else if (field === 'logit_bias') next([], { logit_bias: { '2000': 1 } });
      else next([field]);
    }
    next(['n']); // greedy with n > 1
    next([], { top_logprobs: 3 }); // sample logprobs
    next(['prompt_logprobs']);
    next(['logit_bias']);
    next(['stop_token_ids']);
    next(['allowed_token_ids']);
    next(['structured_outputs']);
    next(['priority']);
    next(['logits_processors']);
    expect(() => validateChatRequest(body, CTX)).not.toThrow();
    expect(seen).toEqual([
      ...rows.map(([, , m]) => m),
      'n must be 1 when using greedy sampling, got 2.',
      'Requested sample logprobs of 30, which is greater than max allowed: 20',
      'Requested prompt logprobs of 30, which is greater than max allowed: 20',
      'token_id(s) [2000] in logit_bias contain out-of-vocab token ids. Vocabulary size: 1000',
      'token_id(s) [5000] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: 1000',
      'allowed_token_ids is not None and empty!',
      "Choice '[]' cannot be an empty list",
      'Got priority 2 but Priority scheduling is not enabled.',
      'The `logits_processors` argument is not supported by this server. See --logits-processor-pattern engine argument for more information.',
    ]);
  });

  it('phase 1 errors come before everything of phase 2', () => {
    const e = full({ stream_options: { include_usage: true }, n: 0, chat_template: 'x' });
    expect(e.type).toBe('Bad Request');
    expect(e.param).toBe('stream_options');
  });

  it('template checks come before context and sampling checks', () => {
    const e = full({ chat_template: 'x', n: 0, truncate_prompt_tokens: 9999 });
    expect(e.param).toBe('chat_template');
  });

  it('the two phases can be called apart, as the route does around model resolution', () => {
    const req = parseChatRequest({ ...BASE, n: 0 });
    expect(() => checkTemplateRequest(req)).not.toThrow();
    expect(errorOf(() => resolveSamplingRequest(req, CTX)).message).toBe('n must be at least 1, got 0.');
  });
});

describe('normalisation into a SamplingRequest', () => {
  it('fills every default', () => {
    vi.spyOn(globalThis.crypto, 'randomUUID').mockReturnValueOnce('ffffffff-ffff-ffff-ffff-ffffffffffff');
    const s = ok({});
    expect(s).toMatchObject({
      request_id: 'f'.repeat(32),
      response_id: `chatcmpl-${'f'.repeat(32)}`,
      model: 'acme/agents/agent-001',
      stream: false,
      include_usage: false,
      continuous_usage_stats: false,
      n: 1,
      temperature: 1,
      greedy: false,
      top_p: 1,
      top_k: 0,
      min_p: 0,
      presence_penalty: 0,
      frequency_penalty: 0,
      repetition_penalty: 1,
      logit_bias: null,
      seed: null,
      stop: [],
      stop_token_ids: [],
      include_stop_str_in_output: false,
      ignore_eos: false,
      min_tokens: 0,
      max_tokens: 4086,
      truncate_prompt_tokens: null,
      prompt_tokens: 10,
      skip_special_tokens: true,
      spaces_between_special_tokens: true,
      bad_words: [],
      allowed_token_ids: null,
      structured_output: null,
      logprobs: true,
      top_logprobs: 0,
      prompt_logprobs: null,
      return_tokens_as_token_ids: true,
      return_token_ids: false,
      echo: false,
      response_role: 'assistant',
      echo_text: '',
      tool_choice: null,
      parse_tool_calls: false,
      parallel_tool_calls: true,
      include_reasoning: true,
      priority: 0,
      cache_salt: null,
      kv_transfer_params: null,
      engine_xargs: null,
      add_generation_prompt: true,
      continue_final_message: false,
      tools: null,
      documents: null,
      reasoning_effort: null,
      chat_template_kwargs: {},
    });
  });

  it('generates a 32-hex request id when none is given', () => {
    expect(ok({}).request_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('uses X-Request-Id over the body request_id, the body over a random one', () => {
    expect(ok({ request_id: 'abc' }).response_id).toBe('chatcmpl-abc');
    const s = ok({ request_id: 'abc' }, { headerRequestId: 'hdr' });
    expect([s.request_id, s.response_id]).toEqual(['hdr', 'chatcmpl-hdr']);
  });

  it('resolves request → generation config → constants (docs/contract.md §8.3)', () => {
    const gen = { temperature: 0.6, top_p: 0.95, top_k: 20, min_p: 0.05, repetition_penalty: 1.1, max_new_tokens: 256 };
    expect(ok({}, { generationConfig: gen })).toMatchObject({
      temperature: 0.6,
      top_p: 0.95,
      top_k: 20,
      min_p: 0.05,
      repetition_penalty: 1.1,
      max_tokens: 256,
    });
    expect(ok({ temperature: 0.9, top_k: 5, max_tokens: 1000 }, { generationConfig: gen })).toMatchObject({
      temperature: 0.9,
      top_k: 5,
      top_p: 0.95,
      max_tokens: 256, // the cap applies to client values too (v0.11)
    });
  });

  it('takes the first non-null of max_completion_tokens and max_tokens', () => {
    expect(ok({ max_completion_tokens: 7, max_tokens: 9 }).max_tokens).toBe(7);
    expect(ok({ max_completion_tokens: null, max_tokens: 9 }).max_tokens).toBe(9);
  });

  it('clamps small temperatures and makes t = 0 greedy', () => {
    expect(ok({ temperature: 0.005 })).toMatchObject({ temperature: 0.01, greedy: false });
    expect(ok({ temperature: 0, top_p: 0.5, top_k: 3, min_p: 0.2 })).toMatchObject({
      temperature: 0,
      greedy: true,
      top_p: 1,
      top_k: 0,
      min_p: 0,
    });
    expect(ok({ top_k: -1 }).top_k).toBe(0);
  });

  it('parses logit_bias keys like Python int() and clamps the values', () => {
    const s = ok({ logit_bias: { '5': 150, ' 7 ': -150, '1_0': 2.5, '+3': 1, '05': 4 } });
    expect(s.logit_bias).toEqual(
      new Map([
        [5, 4],
        [7, -100],
        [10, 2.5],
        [3, 1],
      ]),
    );
    expect([...(s.logit_bias?.entries() ?? [])].find(([k]) => k === 5)).toEqual([5, 4]);
  });

  it('reads seeds exactly; −1 means unseeded', () => {
    expect(ok({ seed: 42 }).seed).toBe(42n);
    expect(ok({ seed: -1 }).seed).toBeNull();
    expect(ok({ seed: null }).seed).toBeNull();
    expect(ok({ seed: 2 ** 60 }).seed).toBe(2n ** 60n);
  });

  it('wraps a stop string, deduplicates stop ids and adds the generation config EOS ids', () => {
    expect(ok({ stop: 'END' }).stop).toEqual(['END']);
    const gen = { eos_token_id: [2, 7, 9] };
    expect(ok({ stop_token_ids: [9, 4, 4] }, { generationConfig: gen, eosTokenId: 2 }).stop_token_ids).toEqual([
      9, 4, 7,
    ]);
    expect(
      ok({ stop_token_ids: [4], ignore_eos: true }, { generationConfig: gen, eosTokenId: 2 }).stop_token_ids,
    ).toEqual([4]);
    expect(ok({}, { generationConfig: { eos_token_id: 3 } }).stop_token_ids).toEqual([3]);
  });

  it('forces logprobs and resolves top_logprobs and prompt_logprobs', () => {
    expect(ok({ logprobs: false })).toMatchObject({ logprobs: true, top_logprobs: 0, prompt_logprobs: null });
    expect(ok({ logprobs: true, top_logprobs: 3 }).top_logprobs).toBe(3);
    expect(ok({ logprobs: true, top_logprobs: -1 }, { vocabSize: 10 }).top_logprobs).toBe(10);
    expect(ok({ prompt_logprobs: 0 }).prompt_logprobs).toBe(0);
    expect(ok({ prompt_logprobs: -1 }, { vocabSize: 10 }).prompt_logprobs).toBe(10);
    // docs/contract.md §8.7: echo gives an unset prompt_logprobs the value of top_logprobs (default 0).
    expect(ok({ echo: true }).prompt_logprobs).toBe(0);
    expect(ok({ echo: true, logprobs: true, top_logprobs: 4 }).prompt_logprobs).toBe(4);
    expect(ok({ echo: true, top_logprobs: null }).prompt_logprobs).toBeNull();
    expect(ok({ echo: true, prompt_logprobs: 2 }).prompt_logprobs).toBe(2);
  });

  it('return_tokens_as_token_ids defaults to true; an explicit false is kept', () => {
    expect(ok({ return_tokens_as_token_ids: null }).return_tokens_as_token_ids).toBe(true);
    expect(ok({ return_tokens_as_token_ids: false }).return_tokens_as_token_ids).toBe(false);
    expect(ok({ return_token_ids: true }).return_token_ids).toBe(true);
  });

  it('resolves stream options', () => {
    expect(ok({ stream: true })).toMatchObject({ stream: true, include_usage: false, continuous_usage_stats: false });
    expect(ok({ stream: true, stream_options: {} })).toMatchObject({
      include_usage: true,
      continuous_usage_stats: false,
    });
    expect(ok({ stream: true, stream_options: { include_usage: false, continuous_usage_stats: true } })).toMatchObject({
      include_usage: false,
      continuous_usage_stats: false,
    });
    expect(ok({ stream: true, stream_options: { continuous_usage_stats: true } })).toMatchObject({
      include_usage: true,
      continuous_usage_stats: true,
    });
    expect(ok({ stream: true, stream_options: { include_usage: null } }).include_usage).toBe(false);
    expect(ok({ stream_options: {} }).include_usage).toBe(false);
  });

  it('maps response_format onto structured_outputs (docs/contract.md §8.11)', () => {
    expect(ok({ response_format: { type: 'text' } }).structured_output).toBeNull();
    expect(ok({ response_format: { type: 'json_object' } }).structured_output?.constraint).toEqual({
      kind: 'json_object',
    });
    const schema = { type: 'object', properties: { a: { type: 'integer' } } };
    expect(
      ok({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }).structured_output
        ?.constraint,
    ).toEqual({ kind: 'json', schema });
    expect(ok({ structured_outputs: { json: '{"type":"string"}' } }).structured_output?.constraint).toEqual({
      kind: 'json',
      schema: { type: 'string' },
    });
    expect(ok({ structured_outputs: { json: '{oops' } }).structured_output?.constraint).toEqual({
      kind: 'json',
      schema: '{oops',
    });
    expect(
      ok({ structured_outputs: { regex: '\\d+', disable_any_whitespace: true, whitespace_pattern: ' ?' } })
        .structured_output,
    ).toEqual({
      constraint: { kind: 'regex', pattern: '\\d+' },
      disable_any_whitespace: true,
      disable_additional_properties: false,
      whitespace_pattern: ' ?',
      disable_fallback: false,
    });
    expect(ok({ structured_outputs: { choice: ['yes', 'no'] } }).structured_output?.constraint).toEqual({
      kind: 'choice',
      choices: ['yes', 'no'],
    });
    expect(ok({ structured_outputs: { json_object: false } }).structured_output).toBeNull();
    // After the mapping several kinds may be set: vLLM takes json, then json_object, regex, choice…
    expect(
      ok({ structured_outputs: { regex: 'a' }, response_format: { type: 'json_object' } }).structured_output
        ?.constraint,
    ).toEqual({
      kind: 'json_object',
    });
  });

  it('parses tool calls only for tools without tool_choice', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    expect(ok({ tools }).parse_tool_calls).toBe(true);
    expect(ok({ tools, tool_choice: 'none' }).parse_tool_calls).toBe(false);
    expect(ok({ tools: [] }).parse_tool_calls).toBe(false);
    expect(ok({ tools, parallel_tool_calls: false }).parallel_tool_calls).toBe(false);
  });

  it('derives the response role and the echo text (docs/contract.md §8.7)', () => {
    const messages = [
      { role: 'user', content: 'Name a colour.' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'The colour' },
          { type: 'text', text: 'is' },
        ],
      },
    ];
    expect(ok({ messages, echo: true, add_generation_prompt: false })).toMatchObject({
      response_role: 'assistant',
      echo_text: 'The colour\nis',
    });
    expect(ok({ messages, echo: true })).toMatchObject({ response_role: 'assistant', echo_text: 'The colour\nis' });
    expect(ok({ echo: true, add_generation_prompt: false })).toMatchObject({ response_role: 'user', echo_text: 'hi' });
    expect(ok({ echo: true })).toMatchObject({ response_role: 'assistant', echo_text: '' });
    expect(ok({ messages, add_generation_prompt: false }).echo_text).toBe('');
  });

  it('accepts vllm_xargs as the wire name of engine_xargs', () => {
    expect(ok({ vllm_xargs: { a: 1, b: ['x', 2] } }).engine_xargs).toEqual({ a: 1, b: ['x', 2] });
    expect(ok({ engine_xargs: { a: 'y' } }).engine_xargs).toEqual({ a: 'y' });
  });

  it('passes cache_salt and kv_transfer_params through', () => {
    expect(ok({ cache_salt: 'salt', kv_transfer_params: { k: 1 } })).toMatchObject({
      cache_salt: 'salt',
      kv_transfer_params: { k: 1 },
    });
  });
});
