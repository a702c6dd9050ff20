import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ApiError } from '@/lib/errors';
import { zodIssuesToValidation } from '@/lib/errors/zod-issues';
import {
  adamParamsSchema,
  clientConfigRequestSchema,
  clientConfigResponseSchema,
  createModelRequestSchema,
  createSamplingSessionRequestSchema,
  createSessionRequestSchema,
  formatTinkerPath,
  futureRetrieveRequestSchema,
  loadWeightsRequestSchema,
  MAX_TOPK_PROMPT_LOGPROBS,
  modelInputTokens,
  optimStepRequestSchema,
  parseTinkerPath,
  sampleRequestSchema,
  samplePromptTokens,
  saveWeightsForSamplerRequestSchema,
  saveWeightsRequestSchema,
  telemetrySendRequestSchema,
  trainingRunsResponseSchema,
  tryAgainResponseSchema,
  weightsInfoRequestSchema,
} from './tinker';

const MODEL_ID = '0b9c6f0e-3f4a-4c57-9d0e-1f2a3b4c5d6e';

/** The 422 items a body gets (what lib/api answers), as [loc after 'body', msg]. */
function issues(schema: z.ZodType, body: unknown): [string, string][] {
  const parsed = schema.safeParse(body, { reportInput: true });
  if (parsed.success) return [];
  return zodIssuesToValidation(parsed.error, 'body').map((i) => [i.loc.slice(1).join('.'), i.msg]);
}

function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return err;
  }
  throw new Error('did not throw');
}

// Bodies as the SDK sends them: model_dump(mode="json", exclude_none=True), `type` included.
const prompt = { chunks: [{ tokens: [1, 2, 3], type: 'encoded_text' }] };

describe('request bodies of the SDK', () => {
  it('accepts them, filling in the SDK defaults where a field is left out', () => {
    expect(clientConfigRequestSchema.parse({ sdk_version: '0.25.0' })).toEqual({ sdk_version: '0.25.0' });
    expect(
      createSessionRequestSchema.parse({ tags: ['a'], sdk_version: '0.25.0', type: 'create_session' }),
    ).toMatchObject({ tags: ['a'] });
    expect(
      createModelRequestSchema.parse({
        session_id: 's',
        model_seq_id: 0,
        base_model: 'Qwen/Qwen3-8B',
        lora_config: { rank: 32, seed: 7 },
        type: 'create_model',
      }).lora_config,
    ).toEqual({ rank: 32, seed: 7, train_unembed: true, train_mlp: true, train_attn: true });
    expect(optimStepRequestSchema.parse({ adam_params: {}, model_id: MODEL_ID, seq_id: 3 }).adam_params).toEqual({
      learning_rate: 1e-4,
      beta1: 0.9,
      beta2: 0.95,
      eps: 1e-12,
      weight_decay: 0,
      grad_clip_norm: 0,
    });
    expect(saveWeightsRequestSchema.parse({ model_id: MODEL_ID, path: 'step-10', seq_id: 4 }).overwrite).toBe(false);
    expect(saveWeightsForSamplerRequestSchema.parse({ model_id: MODEL_ID, sampling_session_seq_id: 0 })).toMatchObject({
      model_id: MODEL_ID,
    });
    expect(futureRetrieveRequestSchema.parse({ request_id: 'r' }).allow_metadata_only).toBe(false);
    expect(weightsInfoRequestSchema.parse({ tinker_path: 'tinker://x/weights/y' })).toBeTruthy();
  });

  it('accepts a sample request with the SDK defaults', () => {
    const body = sampleRequestSchema.parse({
      num_samples: 4,
      prompt,
      sampling_params: { max_tokens: 20, stop: ['\n'], temperature: 0.7 },
      sampling_session_id: 'ss',
      seq_id: 2,
      topk_prompt_logprobs: 0,
      type: 'sample',
    });
    expect(body.sampling_params).toEqual({ max_tokens: 20, stop: ['\n'], temperature: 0.7, top_k: -1, top_p: 1 });
    expect(Array.from(samplePromptTokens(body))).toEqual([1, 2, 3]);
    for (const stop of ['###', [151645, 151643], null])
      expect(issues(sampleRequestSchema, { prompt, sampling_params: { stop }, base_model: 'm' })).toEqual([]);
  });

  it('accepts a telemetry batch', () => {
    const batch = {
      events: [
        {
          event: 'SESSION_START',
          event_id: 'e',
          event_session_index: 0,
          severity: 'INFO',
          timestamp: '2026-01-01T00:00:00Z',
        },
      ],
      platform: 'linux',
      sdk_version: '0.25.0',
      session_id: 's',
      process_uuid: 'p',
    };
    expect(telemetrySendRequestSchema.parse(batch)).toEqual(batch);
  });
});

describe('ranges, with messages a user understands', () => {
  it.each([
    [{ rank: 0 }, 'lora_config.rank', 'Input should be greater than or equal to 1'],
    [
      { rank: 8, train_attn: false, train_mlp: false, train_unembed: false },
      'lora_config',
      'Value error, at least one of train_attn, train_mlp and train_unembed must be true: a LoRA adapter needs layers to train',
    ],
    [{ rank: 8, seed: -1 }, 'lora_config.seed', 'Input should be greater than or equal to 0'],
  ])('LoRA %j', (lora, loc, msg) => {
    expect(
      issues(createModelRequestSchema, { session_id: 's', model_seq_id: 0, base_model: 'm', lora_config: lora }),
    ).toEqual([[loc, msg]]);
  });

  it.each([
    [{ learning_rate: -1e-5 }, 'learning_rate', 'Value error, learning_rate must be between 0 and 1'],
    // 1e308 would only blow the adapter up to NaN: bounded as SFT and RL bound it.
    [{ learning_rate: 1e308 }, 'learning_rate', 'Value error, learning_rate must be between 0 and 1'],
    [{ beta1: 1 }, 'beta1', 'Value error, beta1 must be at least 0 and less than 1'],
    [{ beta2: -0.1 }, 'beta2', 'Value error, beta2 must be at least 0 and less than 1'],
    [{ eps: 0 }, 'eps', 'Value error, eps must be greater than 0'],
    [{ weight_decay: -1 }, 'weight_decay', 'Value error, weight_decay must be 0 or more'],
    [{ grad_clip_norm: -0.5 }, 'grad_clip_norm', 'Value error, grad_clip_norm must be 0 (no clipping) or more'],
    [{ learning_rate: '1e-4' }, 'learning_rate', 'Input should be a valid number, unable to parse string as a number'],
  ])('AdamParams %j', (params, loc, msg) => {
    expect(issues(adamParamsSchema, params)).toEqual([[loc, msg]]);
  });

  const sample = (over: Record<string, unknown>, params: Record<string, unknown> = {}) =>
    issues(sampleRequestSchema, { prompt, sampling_params: params, base_model: 'm', ...over });

  it.each([
    [{ num_samples: 0 }, {}, 'num_samples', 'Input should be greater than or equal to 1'],
    [{}, { temperature: -0.5 }, 'sampling_params.temperature', 'Value error, temperature must be 0 (greedy) or more'],
    [{}, { top_p: 0 }, 'sampling_params.top_p', 'Value error, top_p must be greater than 0 and at most 1'],
    [{}, { top_p: 1.5 }, 'sampling_params.top_p', 'Value error, top_p must be greater than 0 and at most 1'],
    [{}, { top_k: 0 }, 'sampling_params.top_k', 'Value error, top_k must be -1 (no limit) or at least 1'],
    [{}, { top_k: -2 }, 'sampling_params.top_k', 'Value error, top_k must be -1 (no limit) or at least 1'],
    [{}, { max_tokens: 0 }, 'sampling_params.max_tokens', 'Input should be greater than or equal to 1'],
    [{}, { stop: [1, 'x'] }, 'sampling_params.stop', 'Input does not match any of the accepted shapes'],
    [
      { topk_prompt_logprobs: MAX_TOPK_PROMPT_LOGPROBS + 1 },
      {},
      'topk_prompt_logprobs',
      `Input should be less than or equal to ${MAX_TOPK_PROMPT_LOGPROBS}`,
    ],
    [
      { prompt: { chunks: [{ tokens: [-1], type: 'encoded_text' }] } },
      {},
      'prompt.chunks.0.tokens',
      'Value error, item 0 (-1) is not a token id: whole numbers from 0 to 2147483647',
    ],
    [{ prompt: { chunks: [{ type: 'encoded_text' }] } }, {}, 'prompt.chunks.0.tokens', 'Field required'],
    [
      { prompt: { chunks: [{ type: 'audio' }] } },
      {},
      'prompt.chunks.0.type',
      "Input should be 'encoded_text', 'image', 'image_asset_pointer' or 'dmel'",
    ],
    [
      { base_model: null, sampling_session_id: 'ss' },
      {},
      'seq_id',
      'Value error, seq_id is required with sampling_session_id',
    ],
    [
      { base_model: null },
      {},
      '',
      'Value error, sampling_session_id, model_path or base_model is required: which model should sample?',
    ],
  ])('SampleRequest %j %j', (over, params, loc, msg) => {
    expect(sample(over, params)).toEqual([[loc, msg]]);
  });

  it('refuses an image prompt with a 400', () => {
    const body = sampleRequestSchema.parse({
      prompt: {
        chunks: [
          { tokens: [1], type: 'encoded_text' },
          { dmel: 'AAA=', type: 'dmel' },
        ],
      },
      sampling_params: {},
      base_model: 'm',
    });
    const err = apiError(() => samplePromptTokens(body));
    expect(err.status).toBe(400);
    expect(err.message).toBe(
      'this server samples text models: the prompt has an audio chunk (dmel); send encoded_text chunks (token ids)',
    );
  });

  it('concatenates the tokens of several text chunks', () => {
    const input = {
      chunks: [
        { type: 'encoded_text' as const, tokens: [1, 2] },
        { type: 'encoded_text' as const, tokens: [3] },
      ],
    };
    expect(Array.from(modelInputTokens(input, 'trains', 'datum 0'))).toEqual([1, 2, 3]);
  });

  it.each([
    [{ model_id: MODEL_ID, seq_id: 1, path: 'p', optimizer: true }, []],
    [{ session_id: 's', model_seq_id: 0, path: 'p', optimizer: false, base_model: 'm' }, []],
    [{ path: 'p', optimizer: true }, [['', 'Value error, model_id or session_id is required']]],
    [
      { model_id: MODEL_ID, session_id: 's', model_seq_id: 0, path: 'p', optimizer: true },
      [
        [
          '',
          'Value error, give either model_id (load into that training client) or session_id (create one from the weights), not both',
        ],
      ],
    ],
    [
      { session_id: 's', path: 'p', optimizer: true },
      [['model_seq_id', 'Value error, model_seq_id is required with session_id']],
    ],
    [{ model_id: MODEL_ID, path: 'p' }, [['optimizer', 'Field required']]],
  ])('LoadWeightsRequest %j', (body, expected) => {
    expect(issues(loadWeightsRequestSchema, body)).toEqual(expected);
  });

  it('needs a model for a sampling session', () => {
    expect(issues(createSamplingSessionRequestSchema, { session_id: 's', sampling_session_seq_id: 0 })).toEqual([
      ['', 'Value error, base_model or model_path is required: what should the sampling session sample from?'],
    ]);
    expect(
      issues(createSamplingSessionRequestSchema, {
        session_id: 's',
        sampling_session_seq_id: 0,
        model_path: 'tinker://x',
      }),
    ).toEqual([]);
  });

  it('limits weights names to what can name a file', () => {
    for (const path of ['step-100', 'final.v2', 'a_b'])
      expect(issues(saveWeightsRequestSchema, { model_id: MODEL_ID, path })).toEqual([]);
    for (const path of ['a/b', '..', '.', '', 'x'.repeat(129), 'naïve'])
      expect(issues(saveWeightsRequestSchema, { model_id: MODEL_ID, path })).toEqual([
        ['path', "Value error, the name must be 1 to 128 letters, digits, '.', '_' or '-' (not '.' or '..')"],
      ]);
  });
});

describe('tinker:// paths', () => {
  it('parses both kinds and writes them back', () => {
    const p = parseTinkerPath(`tinker://${MODEL_ID.toUpperCase()}/sampler_weights/ephemeral-3`);
    expect(p).toEqual({ model_id: MODEL_ID, kind: 'sampler_weights', name: 'ephemeral-3' });
    expect(formatTinkerPath(p)).toBe(`tinker://${MODEL_ID}/sampler_weights/ephemeral-3`);
    expect(parseTinkerPath(`tinker://${MODEL_ID}/weights/step-10`).kind).toBe('weights');
  });

  it.each([
    [`https://${MODEL_ID}/weights/a`, "it does not start with 'tinker://'"],
    [`tinker://${MODEL_ID}/weights`, 'it needs exactly three parts after tinker://'],
    [`tinker://${MODEL_ID}/weights/a/b`, 'it needs exactly three parts after tinker://'],
    ['tinker://run-123:train:0/weights/a', 'the model id is not a Tuneboard model id (a UUID)'],
    [`tinker://${MODEL_ID}/checkpoints/a`, "the kind is neither 'weights' nor 'sampler_weights'"],
    [`tinker://${MODEL_ID}/weights/..`, "the name must be 1 to 128 letters, digits, '.', '_' or '-' (not '.' or '..')"],
    [`tinker://${MODEL_ID}/weights/`, "the name must be 1 to 128 letters, digits, '.', '_' or '-' (not '.' or '..')"],
  ])('refuses %s with a 400 saying why', (path, why) => {
    const err = apiError(() => parseTinkerPath(path));
    expect(err.status).toBe(400);
    expect(err.message).toContain(`'${path}' is not a weights path of this server (${why})`);
    expect(err.message).toContain('tinker://<model id>/weights/<name>');
  });
});

describe('answers', () => {
  it('describe what the SDK reads', () => {
    expect(
      clientConfigResponseSchema.safeParse({
        pjwt_auth_enabled: false,
        credential_default_source: 'api_key',
        sample_dispatch_bytes_semaphore_size: 10485760,
        inflight_response_bytes_semaphore_size: 52428800,
        parallel_fwdbwd_chunks: true,
        proto_write_fwdbwd: true,
        fwd_via_fwdbwd: true,
        proto_compress_fwdbwd: true,
        fwdbwd_max_chunk_len: 1024,
        fwdbwd_max_chunk_bytes_count: 5000000,
        fwdbwd_dispatch_bytes_semaphore_size: 50000000,
        billing_exception_max_pause_duration_sec: 3600,
        sample_no_retries: false,
        sample_enable_stuck_detection: true,
        sample_max_concurrent_requests: 2000,
        use_pyqwest_transport: false,
        create_model_via_load_weights: false,
      }).success,
    ).toBe(true);
    expect(
      tryAgainResponseSchema.safeParse({
        type: 'try_again',
        request_id: 'r',
        queue_state: 'paused_capacity',
        queue_state_reason: 'no worker',
      }).success,
    ).toBe(true);
    const checkpoint = {
      checkpoint_id: 'weights/step-1',
      checkpoint_type: 'training',
      time: '2026-01-01T00:00:00Z',
      tinker_path: `tinker://${MODEL_ID}/weights/step-1`,
      size_bytes: 10,
      public: false,
      expires_at: null,
    };
    expect(
      trainingRunsResponseSchema.safeParse({
        training_runs: [
          {
            training_run_id: MODEL_ID,
            base_model: 'm',
            model_owner: 'me',
            is_lora: true,
            corrupted: false,
            lora_rank: 32,
            last_request_time: '2026-01-01T00:00:00Z',
            last_checkpoint: checkpoint,
            last_sampler_checkpoint: null,
            user_metadata: null,
          },
        ],
        cursor: { offset: 0, limit: 20, total_count: 1 },
      }).success,
    ).toBe(true);
  });
});
