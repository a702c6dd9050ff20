import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { acceptsProtobuf } from '@/lib/api/tinker-headers';
import { futureRetrieveRequestSchema } from '@/lib/schemas/tinker';
import { retrieve } from '@/lib/services/tinker/futures';
import { forwardResultJson, forwardResultProto, sampleResultJson, sampleResultProto } from '@/lib/tinker/results';
import type { ForwardResult, SampleResult } from '@/lib/tinker/types';

export const dynamic = 'force-dynamic';

const protobuf = (bytes: Uint8Array) =>
  new Response(bytes as BodyInit, {
    headers: { 'content-type': 'application/x-protobuf', 'cache-control': 'no-store' },
  });
/**
 * JSON written by lib/tinker/results.ts: a logprob of −∞ is the `-Infinity` literal Python's json reads (the SDK's
 * parser), which JSON.parse does not, so the text goes out as it is, past the response-schema check.
 */
const pythonJson = (text: string) =>
  new Response(text, { headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/retrieve_future', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        "A future's result (ForwardBackwardOutput and SampleResponse as protobuf when the request accepts it), its failure ({error, category}), or after up to TUNEBOARD_TINKER_WAIT_SECONDS {type: try_again} (docs/tinker.md §2.2)",
      body: futureRetrieveRequestSchema,
      response: z.record(z.string(), z.unknown()),
    },
    async ({ req, principal, body }) => {
      const got = await retrieve(principal, body.request_id, req.signal);
      if (got.state === 'failed') return { error: got.error, category: got.category };
      if (got.state === 'pending') {
        return {
          type: 'try_again',
          request_id: body.request_id,
          queue_state: got.queueState,
          ...(got.reason ? { queue_state_reason: got.reason } : {}),
        };
      }
      const proto = acceptsProtobuf(req);
      switch (got.kind) {
        case 'forward':
        case 'forward_backward': {
          const result = got.result as unknown as ForwardResult;
          return proto ? protobuf(forwardResultProto(result)) : pythonJson(forwardResultJson(result));
        }
        case 'sample': {
          const result = got.result as unknown as SampleResult;
          return proto ? protobuf(sampleResultProto(result)) : pythonJson(sampleResultJson(result));
        }
        case 'create_model':
          return { type: 'create_model', model_id: got.result.model_id };
        case 'optim_step':
          return { metrics: got.result.metrics ?? {} };
        case 'save_weights':
          return { type: 'save_weights', path: got.result.path };
        case 'save_weights_for_sampler':
          return {
            type: 'save_weights_for_sampler',
            path: got.result.path ?? null,
            sampling_session_id: got.result.sampling_session_id ?? null,
          };
        case 'load_weights':
          return { type: 'load_weights', path: got.result.path ?? null, model_id: got.result.model_id ?? null };
        case 'unload_model':
          return { type: 'unload_model', model_id: got.result.model_id };
      }
    },
  ),
});
