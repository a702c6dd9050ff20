import { describe, expect, it } from 'vitest';
import { chatCompletionRequestSchema } from './chat';
import { CHAT_REQUEST_FIELDS, isOpenAiSdkField } from './chat-fields';

describe('CHAT_REQUEST_FIELDS', () => {
  it("lists exactly the request schema's fields", () => {
    expect(Object.keys(CHAT_REQUEST_FIELDS).sort()).toEqual(Object.keys(chatCompletionRequestSchema.shape).sort());
  });

  it('marks the openai SDK parameters, and nothing else, as named', () => {
    expect(Object.keys(CHAT_REQUEST_FIELDS).filter(isOpenAiSdkField).sort()).toEqual(
      [
        'model',
        'messages',
        'temperature',
        'top_p',
        'max_tokens',
        'max_completion_tokens',
        'presence_penalty',
        'frequency_penalty',
        'seed',
        'stop',
        'n',
        'logprobs',
        'top_logprobs',
        'response_format',
        'stream',
        'stream_options',
        'tools',
        'tool_choice',
        'user',
        'logit_bias',
      ].sort(),
    );
    expect(isOpenAiSdkField('top_k')).toBe(false);
    expect(isOpenAiSdkField('constructor')).toBe(false);
  });
});
