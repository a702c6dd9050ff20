import 'server-only';
import { ApiError } from '@/lib/errors';
import { parseJsonText } from '@/lib/body/parse';
import { config } from '@/lib/config';
import type { Principal } from '@/lib/services/accounts';
import { recordRefused, submit } from '@/lib/services/tinker/training';
import {
  decodeForwardBackwardProto,
  decodeForwardJson,
  peekForwardBackwardProtoIds,
} from '@/lib/tinker/forward-request';
import { decodeContentEncoding } from '@/lib/tinker/zstd';
import { readBodyBytes } from './body';
import { admitLargeBody, type LargeBodySlot } from './large-bodies';
import { idempotencyKey } from './tinker-headers';

/**
 * POST /api/v1/forward and /api/v1/forward_backward (docs/tinker.md §2.1–2.4): the body in either of the SDK's wire
 * eras (JSON, or protobuf optionally zstd-compressed), decoded and checked by lib/tinker, then queued on its
 * training client. A body the server refuses still uses up its seq_id (docs/tinker.md §2.3), so that the requests
 * after it do not wait for it.
 */
export async function submitForward(req: Request, principal: Principal, route: 'forward' | 'forward_backward') {
  let slot: LargeBodySlot | undefined;
  try {
    const bytes = await readBodyBytes(req, config.largeBodyLimitBytes, {
      threshold: config.smallBodyLimitBytes,
      admit: () => void (slot = admitLargeBody()),
    });
    const contentType = (req.headers.get('content-type') ?? '').toLowerCase();
    const protobuf = contentType.includes('application/x-protobuf');
    if (protobuf && route === 'forward') {
      throw new ApiError(
        'bad_request',
        'POST /api/v1/forward takes JSON; protobuf bodies go to /api/v1/forward_backward',
      );
    }
    let ids: { modelId: string; seqId: number | null } | null = null;
    let plain: Uint8Array | undefined;
    let decoded;
    try {
      if (protobuf) {
        plain = decodeContentEncoding(bytes, req.headers.get('content-encoding'));
        decoded = decodeForwardBackwardProto(plain);
      } else {
        const parsed = parseJsonText(
          Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
          'preview',
        );
        if (!parsed.present) throw ApiError.validation([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
        ids = jsonIds(parsed.value);
        decoded = decodeForwardJson(route, parsed.value);
      }
    } catch (err) {
      // A refused protobuf body's ids, read leniently from the decompressed bytes (only then: the decoder reads them
      // too), so that it still uses up its seq_id.
      if (plain) ids = peekForwardBackwardProtoIds(plain);
      if (err instanceof ApiError && ids && err.status < 500) {
        await recordRefused(principal, { kind: route, modelId: ids.modelId, seqId: ids.seqId }, err.message);
      }
      throw err;
    }
    return await submit(principal, {
      kind: decoded.forward_only ? 'forward' : 'forward_backward',
      modelId: decoded.model_id,
      seqId: decoded.seq_id,
      idempotencyKey: idempotencyKey(req),
      payload: decoded.payload as unknown as Record<string, unknown>,
    });
  } finally {
    slot?.release();
  }
}

/** model_id and seq_id of a JSON body, read leniently (the body may be refused for something else). */
function jsonIds(value: unknown): { modelId: string; seqId: number | null } | null {
  if (typeof value !== 'object' || value === null) return null;
  const { model_id: modelId, seq_id: seqId } = value as { model_id?: unknown; seq_id?: unknown };
  if (typeof modelId !== 'string') return null;
  return { modelId, seqId: typeof seqId === 'number' && Number.isInteger(seqId) ? seqId : null };
}
