import { describe, expect, it } from 'vitest';
import { buildChatRequest, DEFAULT_PARAMS, parseJsonSchemaText, validateParams } from './chat-request';

const messages = [{ role: 'user' as const, content: 'hi' }];

describe('buildChatRequest', () => {
  it('sends set fields only, in a fixed order, with readable tokens', () => {
    const body = buildChatRequest('tuneboard/tiny-random', messages, { ...DEFAULT_PARAMS, seed: '42', stop: 'a\n\nb' });
    expect(Object.keys(body)).toEqual([
      'model',
      'messages',
      'temperature',
      'top_p',
      'max_tokens',
      'seed',
      'stop',
      'n',
      'logprobs',
      'top_logprobs',
      'stream',
      'stream_options',
      'return_tokens_as_token_ids',
    ]);
    expect(body).toMatchObject({ seed: 42, stop: ['a', 'b'], top_logprobs: 5, return_tokens_as_token_ids: false });
  });

  it('leaves out logprobs when off and adds the response format', () => {
    const body = buildChatRequest('m', messages, {
      ...DEFAULT_PARAMS,
      logprobs: false,
      response_format: 'json_schema',
    });
    expect(body.logprobs).toBeUndefined();
    expect(body.top_logprobs).toBeUndefined();
    expect(body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'response', schema: { type: 'object' } },
    });
  });
});

describe('validateParams', () => {
  it('names each field out of range', () => {
    expect(validateParams(DEFAULT_PARAMS)).toEqual({});
    expect(validateParams({ ...DEFAULT_PARAMS, temperature: '3', top_logprobs: '21', n: '1.5', seed: 'x' })).toEqual({
      temperature: 'Must be at most 2',
      top_logprobs: 'Must be at most 20',
      n: 'Must be a whole number',
      seed: 'Must be a number',
    });
  });

  it('checks the JSON schema text', () => {
    expect(parseJsonSchemaText('[]')).toEqual({ error: 'The schema must be a JSON object' });
    expect(parseJsonSchemaText('{')).toHaveProperty('error');
    expect(validateParams({ ...DEFAULT_PARAMS, response_format: 'json_schema', json_schema: '{' })).toHaveProperty(
      'json_schema',
    );
  });
});
