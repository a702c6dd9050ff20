import { ApiError } from '@/lib/errors';
import type { UpstreamServer } from './upstream';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('vllm');

/**
 * Keeps checkpoints' LoRA adapters loaded in a vLLM server through its runtime adapter API
 * (`POST /v1/load_lora_adapter` and `/v1/unload_lora_adapter`, enabled by VLLM_ALLOW_RUNTIME_LORA_UPDATING=True).
 * At most `maxLoras` adapters (vLLM's `--max-loras`) are kept: loading one more unloads the least recently
 * used first. Concurrent requests for one adapter share one load. vLLM's refusals become errors that say
 * what to fix; vLLM's own message is kept where it is the useful part.
 *
 * The view is this process's: another Tuneboard process sharing the vLLM server may have loaded or unloaded
 * an adapter behind its back. "Already loaded" therefore counts as loaded, and a chat request that vLLM
 * answers with 404 for a name we believe loaded is retried once after a fresh load (`forget`).
 */
export interface AdapterSource {
  /** The adapter's name at vLLM (`lora_name`): the checkpoint's canonical inference name. */
  name: string;
  /** Writes the adapter files where vLLM can read them; returns the directory as vLLM sees it (`lora_path`). */
  materialize(): Promise<string>;
}

interface LoadedAdapter {
  lastUsed: number;
}

export class VllmAdapterManager {
  private readonly loaded = new Map<string, LoadedAdapter>();
  private readonly loading = new Map<string, Promise<void>>();
  private clock = 0;

  constructor(
    private readonly server: () => UpstreamServer | undefined,
    private readonly maxLoras: () => number,
  ) {}

  /** Names this process believes vLLM has loaded, least recently used first. */
  loadedNames(): string[] {
    return [...this.loaded.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed).map(([name]) => name);
  }

  /** Drops the belief that vLLM has this adapter (it answered 404 for it). */
  forget(name: string): void {
    this.loaded.delete(name);
  }

  async ensure(adapter: AdapterSource): Promise<void> {
    const have = this.loaded.get(adapter.name);
    if (have) {
      have.lastUsed = ++this.clock;
      return;
    }
    let pending = this.loading.get(adapter.name);
    if (!pending) {
      pending = this.load(adapter).finally(() => this.loading.delete(adapter.name));
      this.loading.set(adapter.name, pending);
    }
    await pending;
  }

  private async load(adapter: AdapterSource): Promise<void> {
    const server = this.server();
    if (!server) throw unavailable('no vLLM server is configured on this Tuneboard (TUNEBOARD_UPSTREAM_URL)');
    // Make room first, so that vLLM never holds more than --max-loras of ours.
    const max = Math.max(1, this.maxLoras());
    // Other adapters being loaded right now count against the limit too.
    const inFlight = [...this.loading.keys()].filter((n) => n !== adapter.name).length;
    for (const name of this.loadedNames()) {
      if (this.loaded.size + inFlight < max) break;
      await this.unload(server, name);
    }
    const loraPath = await adapter.materialize();
    const res = await call(server, 'load_lora_adapter', { lora_name: adapter.name, lora_path: loraPath });
    if (!res.ok) {
      const message = res.message ?? '';
      if (res.status === 400 && /already been loaded/i.test(message)) {
        // Another process (or an earlier life of this one) loaded it: it is there.
      } else if (res.status === 404 && res.notFoundRoute) {
        throw unavailable(
          'the vLLM server does not accept runtime LoRA loading: start it with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True',
        );
      } else if (res.status === 404) {
        throw unavailable(
          `the vLLM server cannot find the adapter files of ${adapter.name} at ${loraPath}; is TUNEBOARD_VLLM_ADAPTER_DIR the same folder on both machines? (vLLM: ${message})`,
        );
      } else if (res.status === 400) {
        throw unavailable(`the vLLM server refused the adapter of ${adapter.name}: ${message}`);
      } else {
        throw unavailable(
          `the vLLM server failed to load the adapter of ${adapter.name} (HTTP ${res.status}${message ? `: ${message}` : ''})`,
        );
      }
    }
    this.loaded.set(adapter.name, { lastUsed: ++this.clock });
  }

  private async unload(server: UpstreamServer, name: string): Promise<void> {
    this.loaded.delete(name);
    const res = await call(server, 'unload_lora_adapter', { lora_name: name });
    // 404: already gone (unloaded elsewhere, or vLLM restarted). Anything else is logged, not fatal: the
    // new adapter can still be loaded, vLLM just holds one more than we wanted.
    if (!res.ok && res.status !== 404) {
      log.warn({ adapter: name, status: res.status, message: res.message }, 'vLLM did not unload an adapter');
    }
  }
}

function unavailable(reason: string): ApiError {
  return new ApiError('unavailable', `This checkpoint cannot be served right now: ${reason}`, {
    headers: { 'retry-after': '30' },
  });
}

type CallResult = { ok: true } | { ok: false; status: number; message: string | null; notFoundRoute: boolean };

/**
 * One call to vLLM's adapter API. Success is 200 with a plain-text message; errors are vLLM's error JSON, and a
 * route that does not exist (runtime updating disabled) is FastAPI's `{"detail": "Not Found"}` (see vllmError).
 */
async function call(server: UpstreamServer, endpoint: string, body: Record<string, string>): Promise<CallResult> {
  let res: Response;
  try {
    res = await server.fetch(`${server.baseUrl}/${endpoint}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(server.apiKey ? { authorization: `Bearer ${server.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    log.error({ err, endpoint }, 'vLLM request failed');
    throw unavailable('the vLLM server is not reachable');
  }
  const text = await res.text().catch(() => '');
  if (res.ok) return { ok: true };
  return { ok: false, status: res.status, ...vllmError(text) };
}

/**
 * What one of vLLM's error answers says: the message of its error JSON (`{"error": {"message", "type", "code"}}`,
 * or the flat `{"message", "type", "code"}` of older versions), else the start of the text; `notFoundRoute` when
 * it is FastAPI's `{"detail": "Not Found"}`, a route the server does not have.
 */
export function vllmError(text: string): { message: string | null; notFoundRoute: boolean } {
  let message: string | null = text.slice(0, 500) || null;
  let notFoundRoute = false;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string }; message?: string; detail?: unknown };
    if (typeof parsed.error?.message === 'string') message = parsed.error.message;
    else if (typeof parsed.message === 'string') message = parsed.message;
    else if (parsed.detail === 'Not Found') notFoundRoute = true;
  } catch {
    // not JSON: keep the text
  }
  return { message, notFoundRoute };
}
