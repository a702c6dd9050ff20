import { z } from 'zod';
import { ApiError } from '@/lib/errors';
import { jsonInt, MAX_LEARNING_RATE, rangedNumber } from './common';

/*
 * The JSON bodies of the Tinker API (docs/tinker.md §2) and their answers, from the `tinker` SDK's types (0.18 –
 * 0.25). Requests accept unknown keys at every level (the SDK adds `type` to most bodies, and later SDKs add
 * fields); the SDK dumps bodies with `exclude_none=True`, so every optional field is also accepted as null. Ranges
 * are checked here, with pydantic-style 422s; what needs the database (ids, ownership) is the routes' business.
 * The forward / forward_backward bodies are only shaped here: lib/tinker/forward-request.ts checks what the loss
 * needs (400s naming the datum and field).
 */

// ---- primitives ---------------------------------------------------------------------------------------------

/** Token ids are int32 on the SDK's protobuf wire (docs/tinker.md §2.4): [0, 2^31). */
export const MAX_TOKEN_ID = 2 ** 31 - 1;

const tokenId = () => jsonInt().min(0).max(MAX_TOKEN_ID);
/** Per training client request order (docs/tinker.md §2.3); int32 on the protobuf wire. */
const seqId = () =>
  jsonInt()
    .min(0)
    .max(2 ** 31 - 1);
const id = () => z.string().min(1).max(256);
const sdkVersion = () => z.string().max(128);
const userMetadata = () => z.record(z.string().max(256), z.unknown());
const bool = () => z.boolean();

/**
 * A long list of numbers, checked in one loop. zod's per-element schemas cost about 1 µs an element: a 128 × 512
 * batch's three tensors took 100–250 ms of the request thread to check (docs/architecture.md §7 item 6: no heavy work
 * there), this a few milliseconds. `integer` also requires whole numbers in [0, 2^31) (token ids).
 */
function numberList(what: 'number' | 'token id') {
  return z.custom<number[]>(
    (value) => {
      if (!Array.isArray(value)) return false;
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        if (typeof v !== 'number') return false;
        if (what === 'token id' && !(Number.isInteger(v) && v >= 0 && v <= MAX_TOKEN_ID)) return false;
      }
      return true;
    },
    {
      error: (issue) => {
        const value = issue.input;
        if (!Array.isArray(value)) return `must be a list of ${what}s`;
        const at = value.findIndex((v: unknown) =>
          what === 'token id'
            ? !(Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_TOKEN_ID)
            : typeof v !== 'number',
        );
        const shown = JSON.stringify(value[at])?.slice(0, 40);
        return what === 'token id'
          ? `item ${at} (${shown}) is not a token id: whole numbers from 0 to ${MAX_TOKEN_ID}`
          : `item ${at} (${shown}) is not a number`;
      },
    },
  );
}

// ---- model input chunks -------------------------------------------------------------------------------------

/**
 * A chunk of a `ModelInput`: `{"type": "encoded_text", "tokens": [..]}`. The SDK's other kinds (image,
 * image_asset_pointer, dmel) are only recognised, so that a request carrying one gets the clear 400 of
 * modelInputTokens() instead of a schema error about fields this server never reads.
 */
export const modelInputChunkSchema = z
  .looseObject({
    type: z.enum(['encoded_text', 'image', 'image_asset_pointer', 'dmel']),
    tokens: numberList('token id').optional(),
  })
  .superRefine((chunk, ctx) => {
    if (chunk.type === 'encoded_text' && chunk.tokens === undefined)
      ctx.addIssue({ code: 'invalid_type', expected: 'array', path: ['tokens'], input: undefined });
  });

/** A `ModelInput`: `{"chunks": [{"type": "encoded_text", "tokens": [..]}, …]}`. */
export const modelInputSchema = z.looseObject({ chunks: z.array(modelInputChunkSchema) });
export type ModelInputBody = z.infer<typeof modelInputSchema>;

const CHUNK_NAMES: Record<string, string> = {
  image: 'an image chunk',
  image_asset_pointer: 'an image chunk (image_asset_pointer)',
  dmel: 'an audio chunk (dmel)',
};

/**
 * The 400 for a chunk this server cannot use: Tuneboard trains and samples text models, so only `encoded_text`
 * chunks (and the protobuf EncodedTextChunk) are accepted. `subject` says whose input it is ("datum 3's
 * model_input", "the prompt"); `kind` is the chunk's type.
 */
export function nonTextChunkError(verb: 'trains' | 'samples', subject: string, kind: string): ApiError {
  const what = CHUNK_NAMES[kind] ?? `a chunk of type '${kind}'`;
  return new ApiError(
    'bad_request',
    `this server ${verb} text models: ${subject} has ${what}; send encoded_text chunks (token ids)`,
  );
}

/** The token ids of a JSON ModelInput, chunks concatenated in order; any non-text chunk is a 400. */
export function modelInputTokens(input: ModelInputBody, verb: 'trains' | 'samples', subject: string): Int32Array {
  let length = 0;
  for (const chunk of input.chunks) {
    if (chunk.type !== 'encoded_text') throw nonTextChunkError(verb, subject, chunk.type);
    length += chunk.tokens?.length ?? 0;
  }
  const tokens = new Int32Array(length);
  let at = 0;
  for (const chunk of input.chunks) {
    const ids = chunk.tokens ?? [];
    tokens.set(ids, at);
    at += ids.length;
  }
  return tokens;
}

// ---- forward / forward_backward (SDK 0.18 – 0.24's JSON era) ------------------------------------------------

/**
 * A `TensorData` as the SDK's pydantic model dumps it: flat `data`, `dtype`, `shape` (omitted: 1-D), and for a
 * sparse CSR tensor (2-D `target_tokens` / `weights` from torch) the non-zero values in `data` with
 * `sparse_crow_indices` / `sparse_col_indices`. Values are only typed here; lib/tinker checks them.
 */
export const tensorDataSchema = z.looseObject({
  data: numberList('number'),
  dtype: z.enum(['int64', 'float32']),
  shape: z.array(jsonInt().min(0)).nullish(),
  sparse_crow_indices: z.array(jsonInt()).nullish(),
  sparse_col_indices: z.array(jsonInt()).nullish(),
});
export type TensorDataBody = z.infer<typeof tensorDataSchema>;

export const datumSchema = z.looseObject({
  loss_fn_inputs: z.record(z.string(), tensorDataSchema),
  model_input: modelInputSchema,
});

/** `ForwardBackwardInput`; `loss_fn` is checked by lib/tinker (an unknown loss is a 400, docs/tinker.md §2.1). */
export const forwardBackwardInputSchema = z.looseObject({
  data: z.array(datumSchema),
  loss_fn: z.string(),
  loss_fn_config: z.record(z.string(), z.number()).nullish(),
});
export type ForwardBackwardInputBody = z.infer<typeof forwardBackwardInputSchema>;

/** POST /api/v1/forward_backward, JSON. */
export const forwardBackwardBodySchema = z.looseObject({
  forward_backward_input: forwardBackwardInputSchema,
  model_id: id(),
  seq_id: seqId().nullish(),
});

/** POST /api/v1/forward (JSON only: the SDK never sends it as protobuf). */
export const forwardBodySchema = z.looseObject({
  forward_input: forwardBackwardInputSchema,
  model_id: id(),
  seq_id: seqId().nullish(),
});

// ---- tinker:// paths ----------------------------------------------------------------------------------------

export type TinkerPathKind = 'weights' | 'sampler_weights';

export interface TinkerPath {
  /** The Tuneboard model (training client) id. */
  model_id: string;
  /** `weights`: a training state (save_state); `sampler_weights`: sampler weights (docs/tinker.md §2.6). */
  kind: TinkerPathKind;
  name: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A weights name: it becomes a storage path segment, hence the narrow alphabet and no `.` or `..`. */
const WEIGHTS_NAME = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/;
const WEIGHTS_NAME_RULE = "1 to 128 letters, digits, '.', '_' or '-' (not '.' or '..')";

/**
 * `tinker://<model_id>/weights/<name>` or `tinker://<model_id>/sampler_weights/<name>` (docs/tinker.md §2.6), else a
 * 400 saying what the path must look like.
 */
export function parseTinkerPath(path: string): TinkerPath {
  const shown = path.length > 300 ? `${path.slice(0, 300)}…` : path;
  const fail = (why: string): never => {
    throw new ApiError(
      'bad_request',
      `'${shown}' is not a weights path of this server (${why}): write tinker://<model id>/weights/<name> or ` +
        `tinker://<model id>/sampler_weights/<name>, as save_state and save_weights_for_sampler return them`,
    );
  };
  if (!path.startsWith('tinker://')) return fail("it does not start with 'tinker://'");
  const parts = path.slice('tinker://'.length).split('/');
  if (parts.length !== 3) return fail('it needs exactly three parts after tinker://');
  const [modelId, kind, name] = parts;
  if (!UUID.test(modelId)) return fail('the model id is not a Tuneboard model id (a UUID)');
  if (kind !== 'weights' && kind !== 'sampler_weights')
    return fail("the kind is neither 'weights' nor 'sampler_weights'");
  if (!WEIGHTS_NAME.test(name)) return fail(`the name must be ${WEIGHTS_NAME_RULE}`);
  return { model_id: modelId.toLowerCase(), kind, name };
}

/** The path of saved weights, as the SDK shows and sends it back. */
export function formatTinkerPath(path: TinkerPath): string {
  return `tinker://${path.model_id}/${path.kind}/${path.name}`;
}

/** A weights name given to save_state / save_weights_for_sampler (`path` in their bodies). */
const weightsName = () => z.string().refine((v) => WEIGHTS_NAME.test(v), `the name must be ${WEIGHTS_NAME_RULE}`);

// ---- service, sessions, models ------------------------------------------------------------------------------

/** POST /api/v1/client/config and /api/v1/client/dynamic_config. */
export const clientConfigRequestSchema = z.looseObject({ sdk_version: sdkVersion() });

/**
 * The SDK's feature flags (types/client_config_response.py of 0.25, and the two 0.24 knew that 0.25 dropped). The
 * SDK ignores keys it does not know and defaults the ones missing; Tuneboard sends them all.
 */
export const clientConfigResponseSchema = z.object({
  pjwt_auth_enabled: z.boolean(),
  credential_default_source: z.string(),
  sample_dispatch_bytes_semaphore_size: z.int(),
  inflight_response_bytes_semaphore_size: z.int(),
  parallel_fwdbwd_chunks: z.boolean(),
  proto_write_fwdbwd: z
    .boolean()
    .describe('SDK 0.24: forward_backward as protobuf (0.25 always sends it so; older SDKs and false: JSON)'),
  fwd_via_fwdbwd: z
    .boolean()
    .describe('SDK 0.24 with proto_write_fwdbwd: forward() as a forward_only protobuf forward_backward'),
  proto_compress_fwdbwd: z.boolean(),
  fwdbwd_max_chunk_len: z.int(),
  fwdbwd_max_chunk_bytes_count: z.int(),
  fwdbwd_dispatch_bytes_semaphore_size: z.int(),
  billing_exception_max_pause_duration_sec: z.int(),
  sample_no_retries: z.boolean(),
  sample_enable_stuck_detection: z.boolean(),
  sample_max_concurrent_requests: z.int(),
  use_pyqwest_transport: z.boolean(),
  create_model_via_load_weights: z.boolean(),
});

export const clientDynamicConfigResponseSchema = z.object({ refresh_interval_sec: z.int() });

export const healthResponseSchema = z.object({ status: z.literal('ok') });

export const createSessionRequestSchema = z.looseObject({
  tags: z.array(z.string().max(256)).max(100),
  user_metadata: userMetadata().nullish(),
  sdk_version: sdkVersion(),
  project_id: z.string().max(256).nullish(),
});

export const createSessionResponseSchema = z.object({
  type: z.literal('create_session'),
  info_message: z.string().nullish(),
  warning_message: z.string().nullish(),
  error_message: z.string().nullish(),
  session_id: z.string(),
});

export const sessionHeartbeatRequestSchema = z.looseObject({ session_id: id() });
export const sessionHeartbeatResponseSchema = z.object({ type: z.literal('session_heartbeat') });

/** LoRA settings (docs/tinker.md §2.7); absent train_* flags are true, as in the SDK. */
export const loraConfigSchema = z
  .looseObject({
    rank: jsonInt().min(1).max(1024),
    seed: jsonInt().min(0).nullish(),
    train_unembed: bool().default(true),
    train_mlp: bool().default(true),
    train_attn: bool().default(true),
  })
  .refine(
    (c) => c.train_unembed || c.train_mlp || c.train_attn,
    'at least one of train_attn, train_mlp and train_unembed must be true: a LoRA adapter needs layers to train',
  );

export const createModelRequestSchema = z.looseObject({
  session_id: id(),
  model_seq_id: seqId(),
  base_model: z.string().min(1).max(300),
  user_metadata: userMetadata().nullish(),
  lora_config: loraConfigSchema.nullish(),
});

export const getInfoRequestSchema = z.looseObject({ model_id: id() });

export const getInfoResponseSchema = z.object({
  type: z.literal('get_info').nullish(),
  model_data: z.object({
    arch: z.string().nullish(),
    model_name: z.string().nullish(),
    tokenizer_id: z.string().nullish(),
  }),
  model_id: z.string(),
  is_lora: z.boolean().nullish(),
  lora_rank: z.int().nullish(),
  model_name: z.string().nullish(),
});

export const unloadModelRequestSchema = z.looseObject({ model_id: id() });

const supportedModelSchema = z.object({
  model_name: z.string().nullish(),
  max_context_length: z.int().nullish(),
});
export const getServerCapabilitiesResponseSchema = z.object({ supported_models: z.array(supportedModelSchema) });

// ---- training -----------------------------------------------------------------------------------------------

/** AdamW's settings (docs/tinker.md §2.5), with the SDK's defaults. */
export const adamParamsSchema = z.looseObject({
  learning_rate: rangedNumber(
    { min: 0, max: MAX_LEARNING_RATE },
    `learning_rate must be between 0 and ${MAX_LEARNING_RATE}`,
  ).default(1e-4),
  beta1: rangedNumber({ min: 0, lt: 1 }, 'beta1 must be at least 0 and less than 1').default(0.9),
  beta2: rangedNumber({ min: 0, lt: 1 }, 'beta2 must be at least 0 and less than 1').default(0.95),
  eps: rangedNumber({ gt: 0 }, 'eps must be greater than 0').default(1e-12),
  weight_decay: rangedNumber({ min: 0 }, 'weight_decay must be 0 or more').default(0),
  grad_clip_norm: rangedNumber({ min: 0 }, 'grad_clip_norm must be 0 (no clipping) or more').default(0),
});
export type AdamParams = z.infer<typeof adamParamsSchema>;

export const optimStepRequestSchema = z.looseObject({
  adam_params: adamParamsSchema,
  model_id: id(),
  seq_id: seqId().nullish(),
});

const ttlSeconds = () => jsonInt().min(1).nullish();

export const saveWeightsRequestSchema = z.looseObject({
  model_id: id(),
  path: weightsName().nullish(),
  seq_id: seqId().nullish(),
  ttl_seconds: ttlSeconds(),
  overwrite: bool().default(false),
});

export const saveWeightsForSamplerRequestSchema = z.looseObject({
  model_id: id(),
  path: weightsName().nullish(),
  sampling_session_seq_id: seqId().nullish(),
  seq_id: seqId().nullish(),
  ttl_seconds: ttlSeconds(),
});

/**
 * `load_weights`, addressed either to an existing training client (`model_id`, `seq_id`) or, creating one from the
 * checkpoint, to a session (`session_id`, `model_seq_id`, optional `base_model`). `path` is a tinker:// path
 * (parseTinkerPath: a 400 when it is not one).
 */
export const loadWeightsRequestSchema = z
  .looseObject({
    model_id: id().nullish(),
    seq_id: seqId().nullish(),
    session_id: id().nullish(),
    model_seq_id: seqId().nullish(),
    base_model: z.string().min(1).max(300).nullish(),
    user_metadata: userMetadata().nullish(),
    path: z.string().min(1).max(1000),
    optimizer: bool(),
    weights_access_token: z.string().nullish(),
  })
  .superRefine((body, ctx) => {
    const byModel = body.model_id != null;
    const bySession = body.session_id != null;
    if (byModel === bySession)
      ctx.addIssue({
        code: 'custom',
        message: bySession
          ? 'give either model_id (load into that training client) or session_id (create one from the weights), not both'
          : 'model_id or session_id is required',
      });
    else if (bySession && body.model_seq_id == null)
      ctx.addIssue({ code: 'custom', path: ['model_seq_id'], message: 'model_seq_id is required with session_id' });
  });

export const weightsInfoRequestSchema = z.looseObject({ tinker_path: z.string().min(1).max(1000) });

export const weightsInfoResponseSchema = z.object({
  base_model: z.string(),
  is_lora: z.boolean(),
  lora_rank: z.int().nullish(),
  train_unembed: z.boolean().nullish(),
  train_mlp: z.boolean().nullish(),
  train_attn: z.boolean().nullish(),
});

// ---- sampling -----------------------------------------------------------------------------------------------

/** Most samples one request may ask for. */
export const MAX_NUM_SAMPLES = 1024;
/** Most top-k prompt logprobs per prompt token: the answer is a (prompt length × k) matrix. */
export const MAX_TOPK_PROMPT_LOGPROBS = 100;

export const createSamplingSessionRequestSchema = z
  .looseObject({
    session_id: id(),
    sampling_session_seq_id: seqId(),
    base_model: z.string().min(1).max(300).nullish(),
    model_path: z.string().min(1).max(1000).nullish(),
  })
  .refine(
    (b) => b.base_model != null || b.model_path != null,
    'base_model or model_path is required: what should the sampling session sample from?',
  );

export const createSamplingSessionResponseSchema = z.object({
  type: z.literal('create_sampling_session'),
  sampling_session_id: z.string(),
});

/** `SamplingParams`, with the SDK's defaults. */
export const samplingParamsSchema = z.looseObject({
  max_tokens: jsonInt().min(1).nullish(),
  seed: jsonInt().min(0).nullish(),
  stop: z
    .union([z.string(), z.array(z.string()).max(64), z.array(tokenId()).max(64)], {
      error: 'stop must be a string, a list of strings or a list of token ids',
    })
    .nullish(),
  temperature: rangedNumber({ min: 0 }, 'temperature must be 0 (greedy) or more').default(1),
  top_k: jsonInt()
    .refine((v) => v === -1 || v >= 1, 'top_k must be -1 (no limit) or at least 1')
    .default(-1),
  top_p: rangedNumber({ gt: 0 }, 'top_p must be greater than 0 and at most 1')
    .refine((v) => v <= 1, 'top_p must be greater than 0 and at most 1')
    .default(1),
});
export type SamplingParams = z.infer<typeof samplingParamsSchema>;

/**
 * POST /api/v1/asample. The model is named by a sampling session (`sampling_session_id` with its `seq_id`), or by
 * `model_path` (a tinker:// sampler path) or `base_model`. `prompt` must be text (modelInputTokens).
 */
export const sampleRequestSchema = z
  .looseObject({
    num_samples: jsonInt().min(1).max(MAX_NUM_SAMPLES).default(1),
    prompt: modelInputSchema,
    sampling_params: samplingParamsSchema,
    base_model: z.string().min(1).max(300).nullish(),
    model_path: z.string().min(1).max(1000).nullish(),
    sampling_session_id: id().nullish(),
    seq_id: seqId().nullish(),
    prompt_logprobs: bool().nullish(),
    topk_prompt_logprobs: jsonInt().min(0).max(MAX_TOPK_PROMPT_LOGPROBS).default(0),
  })
  .superRefine((body, ctx) => {
    if (body.sampling_session_id != null) {
      if (body.seq_id == null)
        ctx.addIssue({ code: 'custom', path: ['seq_id'], message: 'seq_id is required with sampling_session_id' });
    } else if (body.model_path == null && body.base_model == null)
      ctx.addIssue({
        code: 'custom',
        message: 'sampling_session_id, model_path or base_model is required: which model should sample?',
      });
  });
export type SampleRequestBody = z.infer<typeof sampleRequestSchema>;

/** The prompt's token ids (a 400 for image or audio chunks). */
export function samplePromptTokens(body: SampleRequestBody): Int32Array {
  return modelInputTokens(body.prompt, 'samples', 'the prompt');
}

export const getSamplerResponseSchema = z.object({
  sampler_id: z.string(),
  base_model: z.string(),
  model_path: z.string().nullish(),
});

// ---- futures, telemetry -------------------------------------------------------------------------------------

export const futureRetrieveRequestSchema = z.looseObject({
  request_id: id(),
  allow_metadata_only: bool().default(false),
});

/** What every training call and `asample` answer at once (docs/tinker.md §2.2). */
export const untypedApiFutureSchema = z.object({ request_id: z.string(), model_id: z.string().nullish() });

export const tryAgainResponseSchema = z.object({
  type: z.literal('try_again'),
  request_id: z.string(),
  queue_state: z.enum(['active', 'paused_capacity', 'paused_rate_limit']),
  queue_state_reason: z.string().nullish(),
});

/** Telemetry batches are accepted and dropped; only their outline is checked. */
export const telemetrySendRequestSchema = z.looseObject({
  events: z.array(z.looseObject({})).max(10_000).nullish(),
  platform: z.string().nullish(),
  sdk_version: z.string().nullish(),
  session_id: z.string().nullish(),
  process_uuid: z.string().nullish(),
});
export const telemetryResponseSchema = z.object({ status: z.literal('accepted') });

// ---- REST: training runs and checkpoints ---------------------------------------------------------------------

export const cursorSchema = z.object({ offset: z.int(), limit: z.int(), total_count: z.int() });

export const tinkerCheckpointSchema = z.object({
  checkpoint_id: z.string().describe('`weights/<name>` or `sampler_weights/<name>`'),
  checkpoint_type: z.enum(['training', 'sampler']),
  time: z.string().describe('ISO 8601 date-time'),
  tinker_path: z.string(),
  size_bytes: z.int().nullish(),
  public: z.boolean(),
  expires_at: z.string().nullish(),
});

export const checkpointsListResponseSchema = z.object({
  checkpoints: z.array(tinkerCheckpointSchema),
  cursor: cursorSchema.nullish(),
});

export const trainingRunSchema = z.object({
  training_run_id: z.string(),
  base_model: z.string(),
  model_owner: z.string(),
  is_lora: z.boolean(),
  corrupted: z.boolean(),
  lora_rank: z.int().nullish(),
  last_request_time: z.string().describe('ISO 8601 date-time'),
  last_checkpoint: tinkerCheckpointSchema.nullish(),
  last_sampler_checkpoint: tinkerCheckpointSchema.nullish(),
  user_metadata: z.record(z.string(), z.string()).nullish(),
});

export const trainingRunsResponseSchema = z.object({
  training_runs: z.array(trainingRunSchema),
  cursor: cursorSchema,
});
