import { ApiError } from '@/lib/errors';
import { forwardChatCompletion, upstreamServer } from '../upstream';
import type { ChatBackend, ChatCall, ChatResult } from './types';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('chat');

/**
 * A model served by a vLLM server: a base model under its name there, or a checkpoint's LoRA adapter. The
 * request validators have run; template, context and sampling checks are vLLM's own (it has the model's
 * template and limits), and its answers and errors are relayed unchanged apart from `model`.
 */
export interface VllmTarget {
  /** The name vLLM knows: the base model's served name, or the adapter's `lora_name`. */
  model: string;
  /** Runs before every request: makes sure vLLM has the adapter (a no-op once it has). */
  prepare?: () => Promise<void>;
  /**
   * vLLM answered 404 for a name `prepare` made sure of: it lost the adapter (restarted, or another process
   * unloaded it). Called before one retry, so that `prepare` loads it again.
   */
  forget?: () => void;
}

export class VllmChatBackend implements ChatBackend {
  readonly kind = 'vllm' as const;

  constructor(readonly target: VllmTarget) {}

  async chat(call: ChatCall): Promise<ChatResult> {
    const server = upstreamServer();
    if (!server)
      throw new ApiError('unavailable', 'The vLLM server for this model is not configured (TUNEBOARD_UPSTREAM_URL)', {
        headers: { 'retry-after': '30' },
      });
    const send = async () => {
      await this.target.prepare?.();
      try {
        return await forwardChatCompletion({
          server,
          body: call.body as Record<string, unknown>,
          upstreamModel: this.target.model,
          modelAsSent: call.modelAsSent,
          signal: call.signal,
        });
      } catch (err) {
        if (call.signal.aborted) throw err;
        log.error({ err }, 'upstream request failed');
        throw new ApiError('unavailable', 'The vLLM server for this model is not reachable; try again later', {
          headers: { 'retry-after': '5' },
        });
      }
    };
    let result = await send();
    if (result.status === 404 && this.target.prepare && this.target.forget) {
      this.target.forget();
      result = await send();
    }
    void result.usage.then((u) => {
      if (u) call.onUsage({ promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens });
    });
    if (typeof result.body === 'string') return { kind: 'json', body: result.body, status: result.status };
    return { kind: 'stream', body: result.body };
  }
}
