import { JSON_TOO_DEEP_MESSAGE, jsonNestingExceeds } from './json-depth';
import { contentText, ROLES } from './sft-data';

/**
 * One line of an eval set (docs/contract.md §11.1): `{"messages": [...], "reference"?: any, "metadata"?: {...}}`.
 * Pure, so that the dashboard can check a file before uploading it with the same rules as the server.
 */
export interface EvalExampleInput {
  messages: { role: string; content: string; [key: string]: unknown }[];
  /** Undefined: the example has no reference. */
  reference: unknown;
  metadata: Record<string, unknown>;
}

export class EvalLineError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/**
 * Parses and checks one line. When the last message comes from the assistant and there is no `reference`, its
 * content is the reference and it is not part of the prompt, so an SFT file is an eval set as it is; the prompt
 * must then end with a user (or tool) message, which the model answers.
 */
export function parseEvalLine(lineNo: number, text: string): EvalExampleInput {
  if (jsonNestingExceeds(text)) throw new EvalLineError(lineNo, JSON_TOO_DEEP_MESSAGE);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new EvalLineError(lineNo, `invalid JSON (${(err as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new EvalLineError(lineNo, 'expected a JSON object');
  const { messages, reference, metadata } = value as { messages?: unknown; reference?: unknown; metadata?: unknown };
  if (!Array.isArray(messages)) throw new EvalLineError(lineNo, '"messages" must be an array');
  if (messages.length === 0) throw new EvalLineError(lineNo, '"messages" must not be empty');
  const out: EvalExampleInput['messages'] = [];
  messages.forEach((m, i) => {
    if (!m || typeof m !== 'object' || Array.isArray(m))
      throw new EvalLineError(lineNo, `message ${i + 1} is not an object`);
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || !ROLES.has(role))
      throw new EvalLineError(
        lineNo,
        `message ${i + 1} has role ${JSON.stringify(role)}; expected one of ${[...ROLES].join(', ')}`,
      );
    const textContent = contentText(content);
    if (textContent === undefined)
      throw new EvalLineError(lineNo, `message ${i + 1} content must be a string, text parts or null`);
    out.push({ ...(m as Record<string, unknown>), role, content: textContent });
  });
  if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata)))
    throw new EvalLineError(lineNo, '"metadata" must be an object');
  // JSON null and an absent key both mean "no reference".
  let ref: unknown = reference === null ? undefined : reference;
  if (ref === undefined && out[out.length - 1].role === 'assistant') ref = out.pop()!.content;
  if (out.length === 0) throw new EvalLineError(lineNo, 'there is no prompt before the assistant message');
  const last = out[out.length - 1].role;
  if (last !== 'user' && last !== 'tool')
    throw new EvalLineError(lineNo, `the prompt must end with a user or tool message, not ${last}`);
  return { messages: out, reference: ref, metadata: (metadata as Record<string, unknown> | null) ?? {} };
}
