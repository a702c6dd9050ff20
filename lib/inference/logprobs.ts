import type { ChatLogprobEntry, PromptLogprob } from '@/lib/schemas/chat';
import { withKeyOrder } from './python-json';

/** One candidate token as the engine reports it. */
export interface TokenCandidate {
  tokenId: number;
  /** vLLM's `decoded_token` (see {@link vllmDecodedTokens}: `""` or a joined text for pieces of a character). */
  tokenText: string;
  /** Raw log-probability (log_softmax of the unprocessed logits, docs/contract.md §8.4 step 1); may be −Infinity. */
  logprob: number;
}

/**
 * The `decoded_token` of each entry of one position's logprob list, as vLLM ≥ 0.14 computes it
 * (LogprobsProcessor._verify_tokens). `ids` is vLLM's list for the position: the sampled (or actual prompt)
 * token first, then the top-k by rank (the first token may appear again among them). A token whose text
 * alone ends in U+FFFD (a piece of a multi-byte character) is decoded again together with the entry before
 * it **in this list**, then also behind the previous position's sampled token; the first attempt that no
 * longer ends in U+FFFD is its text (it includes the other token's text), else it is `""`. So the leading
 * byte of a split character reads `""` and the byte completing a two-byte character reads the whole
 * character. The list-neighbour rule pairs unrelated candidates; that quirk is copied too.
 * `previousSampledId` is null for the first generated token and for prompt positions (vLLM has no sample
 * logprobs yet when it builds prompt logprobs).
 */
export function vllmDecodedTokens(
  ids: readonly number[],
  previousSampledId: number | null,
  decode: (ids: number[]) => string,
): string[] {
  return ids.map((id, idx) => {
    const alone = decode([id]);
    if (!alone.endsWith('\uFFFD')) return alone;
    const withNeighbour = idx > 0 ? [ids[idx - 1], id] : [id];
    if (idx > 0) {
      const text = decode(withNeighbour);
      if (!text.endsWith('\uFFFD')) return text;
    }
    if (previousSampledId !== null) {
      const text = decode([previousSampledId, ...withNeighbour]);
      if (!text.endsWith('\uFFFD')) return text;
    }
    return '';
  });
}

/**
 * vLLM keeps a position's logprobs in a dict built from that list, so a token listed twice (the sampled
 * token among the top-k) keeps its first place but takes the values of its last entry.
 */
export function lastEntryById<T extends { tokenId: number }>(entries: readonly T[]): T[] {
  const byId = new Map<number, T>();
  for (const e of entries) byId.set(e.tokenId, e);
  return [...byId.values()];
}

/** vLLM floors logprobs at −9999.0 so that −inf survives JSON (docs/contract.md §8.8). */
export const LOGPROB_FLOOR = -9999.0;

export function clampLogprob(logprob: number): number {
  return Math.max(logprob, LOGPROB_FLOOR);
}

/**
 * Python's `text.encode("utf-8", errors="replace")`: a lone surrogate becomes `?` (0x3f), not U+FFFD as
 * TextEncoder would write it.
 */
export function utf8Bytes(text: string): number[] {
  const out: number[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0xd800 && cp <= 0xdfff) out.push(0x3f);
    else if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  }
  return out;
}

export interface LogprobFormat {
  /** `top_logprobs` of the request (0 gives `[]`). */
  topLogprobs: number;
  /** `return_tokens_as_token_ids` (docs/contract.md §8.9). */
  asTokenIds: boolean;
}

function tokenLabel(c: TokenCandidate, asTokenIds: boolean): string {
  return asTokenIds ? `token_id:${c.tokenId}` : c.tokenText;
}

/**
 * One `logprobs.content` entry (docs/contract.md §8.8, §8.9), keys in vLLM's order.
 * - `top_logprobs` is the first N of [sampled, then the ranked candidates without the sampled token]: vLLM
 *   builds a dict keyed by token id from [sampled] + top-N, so a rank-1 sample gives exactly top-1..N and any
 *   other gives [sampled, top-1, …] (quirk copied).
 * - With token-id rendering the main entry's `bytes` stay those of the decoded text while each top entry's
 *   `bytes` are those of its `token_id:N` label (quirk copied).
 */
export function formatLogprobEntry(
  sampled: TokenCandidate,
  ranked: readonly TokenCandidate[],
  format: LogprobFormat,
): ChatLogprobEntry {
  const top: ChatLogprobEntry['top_logprobs'] = [];
  if (format.topLogprobs > 0) {
    const list = [sampled, ...ranked.filter((c) => c.tokenId !== sampled.tokenId)].slice(0, format.topLogprobs);
    for (const c of list) {
      const token = tokenLabel(c, format.asTokenIds);
      top.push({ token, logprob: clampLogprob(c.logprob), bytes: utf8Bytes(token) });
    }
  }
  return {
    token: tokenLabel(sampled, format.asTokenIds),
    logprob: clampLogprob(sampled.logprob),
    bytes: utf8Bytes(sampled.tokenText),
    top_logprobs: top,
  };
}

/** Logprobs of one prompt position: the actual token and its top candidates by rank. */
export interface PromptPositionLogprobs {
  token: TokenCandidate & { rank: number | null };
  ranked: readonly (TokenCandidate & { rank: number | null })[];
}

/**
 * The top-level `prompt_logprobs` of a non-stream response (docs/contract.md §8.8): one entry per prompt token, the first
 * `null`, the others keyed by the token id as a string, the actual token first, then up to `n` candidates
 * by rank (−inf → −9999.0). An actual token that is also among the candidates keeps the first place with
 * the candidate's values (vLLM's dict; the rank can then differ on ties).
 *
 * JavaScript orders integer-like keys ascending, so the key order travels beside the object
 * (`withKeyOrder`) and `wireJson` writes the keys in vLLM's order.
 */
export function formatPromptLogprobs(
  positions: readonly (PromptPositionLogprobs | null)[],
  n: number,
): (PromptLogprob | null)[] {
  return positions.map((pos, i) => {
    if (i === 0 || pos === null) return null;
    const out: PromptLogprob = {};
    const entries = lastEntryById([pos.token, ...pos.ranked.slice(0, Math.max(0, n))]);
    for (const c of entries) {
      out[String(c.tokenId)] = {
        logprob: c.logprob === -Infinity ? LOGPROB_FLOOR : c.logprob,
        rank: c.rank,
        decoded_token: c.tokenText,
      };
    }
    return withKeyOrder(
      out,
      entries.map((c) => String(c.tokenId)),
    );
  });
}
