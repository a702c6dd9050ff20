/**
 * The internal shapes of the Tinker API (docs/tinker.md §3): what the server hands a Python worker and what comes
 * back, and what a sampling request produces. Both wire eras of the SDK (JSON, protobuf) are decoded into these and
 * encoded from them (lib/tinker/*), so nothing past the codec knows which one a client spoke.
 */

export type TensorDtype = 'float32' | 'int64' | 'int32';

/** A dense tensor: the little-endian bytes of the row-major array, base64 (docs/tinker.md §3.1). */
export interface WireTensor {
  dtype: TensorDtype;
  shape: number[];
  data: string;
}

export const LOSS_FNS = ['cross_entropy', 'importance_sampling', 'ppo', 'cispo', 'dro'] as const;
export type LossFn = (typeof LOSS_FNS)[number];

/** One datum as the worker gets it: the input tokens and the loss's input tensors (first dimension = tokens). */
export interface ForwardDatum {
  /** int32, shape [N]. */
  tokens: WireTensor;
  loss_fn_inputs: Record<string, WireTensor>;
}

/** The payload of a `forward` or `forward_backward` request (docs/tinker.md §3.2). */
export interface ForwardPayload {
  loss_fn: LossFn;
  loss_fn_config: Record<string, number> | null;
  data: ForwardDatum[];
}

/** A worker's result of `forward` / `forward_backward`. */
export interface ForwardResult {
  loss_fn_outputs: Record<string, WireTensor>[];
  /** What the SDK gets: names are `name:reduction` (`loss:sum`). */
  metrics: Record<string, number>;
  /** For the dashboard only (docs/tinker.md §3.2): never sent to the SDK. */
  stats?: Record<string, number>;
}

/** One sampled sequence: every generated token (a stop token included), with its log-probability. */
export interface SampledSequence {
  stop_reason: 'stop' | 'length';
  tokens: number[];
  logprobs: number[];
}

/** What `asample` produces, before it is written as JSON or protobuf for the SDK. */
export interface SampleResult {
  sequences: SampledSequence[];
  /** One entry per prompt token; the first is null (nothing predicts it). Null when not asked for. */
  prompt_logprobs: (number | null)[] | null;
  /** Per prompt token, up to k `[token_id, logprob]` best first; null at the first position. Null when not asked for. */
  topk_prompt_logprobs: ([number, number][] | null)[] | null;
}
