import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  chatCompletionBodySchema,
  chatCompletionChunkSchema,
  chatCompletionRequestSchema,
  chatCompletionResponseSchema,
  chatErrorEnvelopeSchema,
} from './chat';

describe('chat completion schemas', () => {
  it('request: defaults of plain fields, nullable Optional fields, unknown keys dropped', () => {
    const parsed = chatCompletionRequestSchema.parse({
      messages: [{ role: 'user', content: 'hi', extra: true }],
      n: null,
      temperature: 1,
      whatever: 1,
    });
    expect(parsed).toMatchObject({
      n: null,
      temperature: 1,
      echo: false,
      add_generation_prompt: true,
      min_tokens: 0,
      priority: 0,
      bad_words: [],
      use_beam_search: false,
      length_penalty: 1,
    });
    expect('whatever' in parsed).toBe(false);
    expect(parsed.messages[0]).toEqual({ role: 'user', content: 'hi', extra: true });
  });

  it('request: ints beyond 2^53 are ints (vLLM reports ranges itself)', () => {
    expect(chatCompletionRequestSchema.safeParse({ messages: [], stop_token_ids: [2 ** 60] }).success).toBe(true);
    expect(chatCompletionRequestSchema.safeParse({ messages: [], stop_token_ids: [1.5] }).success).toBe(false);
  });

  it('request: stream_options defaults include_usage to true', () => {
    expect(chatCompletionRequestSchema.parse({ messages: [], stream_options: {} }).stream_options).toEqual({
      include_usage: true,
      continuous_usage_stats: false,
    });
  });

  it('turns into a JSON schema for the OpenAPI document, integers typed as integers', () => {
    const json = z.toJSONSchema(chatCompletionRequestSchema, { io: 'input', unrepresentable: 'any' }) as {
      properties: Record<string, { type?: unknown; anyOf?: { type?: unknown }[] }>;
      required: string[];
    };
    expect(json.required).toEqual(['messages']);
    const types = (name: string) => {
      const p = json.properties[name];
      return (p.anyOf ? p.anyOf.map((a) => a.type) : [p.type]).flat();
    };
    expect(types('n')).toContain('integer');
    expect(types('temperature')).toContain('number');
  });

  it('documents the non-stream response with every key required (printed even when null), in order', () => {
    const json = z.toJSONSchema(chatCompletionResponseSchema, { io: 'output', unrepresentable: 'any' }) as {
      properties: Record<
        string,
        {
          type?: unknown;
          const?: unknown;
          items?: { required?: string[] };
          properties?: Record<string, { type?: unknown }>;
        }
      >;
      required: string[];
    };
    expect(Object.keys(json.properties)).toEqual([
      'id',
      'object',
      'created',
      'model',
      'choices',
      'service_tier',
      'system_fingerprint',
      'usage',
      'prompt_logprobs',
      'prompt_token_ids',
      'kv_transfer_params',
    ]);
    expect(json.required).toEqual(Object.keys(json.properties));
    expect(json.properties.object).toMatchObject({ type: 'string', const: 'chat.completion' });
    expect(json.properties.choices.type).toBe('array');
    expect(json.properties.choices.items?.required).toEqual([
      'index',
      'message',
      'logprobs',
      'finish_reason',
      'stop_reason',
      'token_ids',
    ]);
    expect(json.properties.usage.properties?.prompt_tokens.type).toBe('integer');
    expect(json.properties.usage.properties?.completion_tokens.type).toBe('integer');
  });

  it('the route body declaration accepts anything and documents the request schema', () => {
    expect(chatCompletionBodySchema.safeParse([1]).success).toBe(true);
    const json = z.toJSONSchema(chatCompletionBodySchema, { io: 'input', unrepresentable: 'any' }) as {
      required: string[];
    };
    expect(json.required).toEqual(['messages']);
  });

  it('response, chunk and error shapes accept the reference examples', () => {
    expect(
      chatCompletionChunkSchema.safeParse({
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1767225600,
        model: 'm',
        choices: [],
        usage: { prompt_tokens: 12, total_tokens: 14, completion_tokens: 2 },
      }).success,
    ).toBe(true);
    expect(
      chatCompletionChunkSchema.safeParse({
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
        prompt_token_ids: null,
      }).success,
    ).toBe(true);
    expect(
      chatErrorEnvelopeSchema.safeParse({
        error: { message: 'Internal server error', type: 'InternalServerError', param: null, code: 500 },
      }).success,
    ).toBe(true);
  });
});
