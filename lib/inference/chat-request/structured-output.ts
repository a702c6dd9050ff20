import type { ApiError } from '@/lib/errors';
import type { StructuredOutputKind, StructuredOutputs } from '@/lib/schemas/chat';
import { requestError } from '../chat-errors';
import { pyRepr } from '../python-repr';
import type { ChatRequest } from './request-checks';

/**
 * Structured outputs: the phase-1 check that at most one kind is set (vLLM's dataclass), and the mapping of
 * `structured_outputs` and `response_format` onto the one constraint the engine enforces.
 */

export type StructuredOutputConstraint =
  /** The schema as an object; a `json` string that is not valid JSON is kept as the string for the compiler to reject. */
  | { kind: 'json'; schema: unknown }
  | { kind: 'json_object' }
  | { kind: 'regex'; pattern: string }
  | { kind: 'choice'; choices: string[] }
  | { kind: 'grammar'; grammar: string }
  | { kind: 'structural_tag'; tag: string };

export interface StructuredOutputSpec {
  constraint: StructuredOutputConstraint;
  disable_any_whitespace: boolean;
  disable_additional_properties: boolean;
  whitespace_pattern: string | null;
  disable_fallback: boolean;
}

const STRUCTURED_DUMP_KEYS = [
  'json',
  'regex',
  'choice',
  'grammar',
  'json_object',
  'disable_fallback',
  'disable_any_whitespace',
  'disable_additional_properties',
  'whitespace_pattern',
  'structural_tag',
  '_backend',
  '_backend_was_auto',
] as const;

function setKinds(so: StructuredOutputs): StructuredOutputKind[] {
  return (['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'] as const).filter(
    (k) => so[k] !== undefined && so[k] !== null,
  );
}

/** `StructuredOutputsParams.__post_init__`: more than one of the six kinds, with the dataclass `__dict__` dump. */
export function structuredOutputKindsError(so: StructuredOutputs): ApiError | null {
  if (setKinds(so).length <= 1) return null;
  const dump = new Map<string, unknown>();
  for (const key of STRUCTURED_DUMP_KEYS) {
    // _backend is init=False in vLLM: whatever the client sent, the dataclass holds its default.
    dump.set(key, key === '_backend' ? null : key === '_backend_was_auto' ? false : (so[key] ?? null));
  }
  return requestError(
    `You can only use one kind of structured outputs constraint but multiple are specified: ${pyRepr(dump)}`,
    'structured_outputs',
  );
}

export type StructuredSource = 'structured_outputs' | 'response_format';

export function resolveStructuredOutput(
  req: ChatRequest,
): { spec: StructuredOutputSpec; source: StructuredSource } | null {
  const so = req.structured_outputs;
  const fields = new Map<StructuredOutputKind, { value: unknown; source: StructuredSource }>();
  if (so) for (const k of setKinds(so)) fields.set(k, { value: so[k], source: 'structured_outputs' });
  // docs/contract.md §8.11: response_format overrides the same key of structured_outputs; `text` maps to nothing.
  const rf = req.response_format;
  if (rf?.type === 'json_object') fields.set('json_object', { value: true, source: 'response_format' });
  else if (rf?.type === 'json_schema' && rf.json_schema?.schema != null) {
    fields.set('json', { value: rf.json_schema.schema, source: 'response_format' });
  } else if (rf?.type === 'structural_tag') {
    fields.set('structural_tag', { value: JSON.stringify(rf), source: 'response_format' });
  }

  // When the mapping leaves several kinds set, vLLM uses the first present in this order
  // (get_structured_output_key); json_object:false constrains nothing.
  const pick = (kind: StructuredOutputKind) => fields.get(kind);
  let chosen: { constraint: StructuredOutputConstraint; source: StructuredSource } | null = null;
  const json = pick('json');
  const jsonObject = pick('json_object');
  const regex = pick('regex');
  const choice = pick('choice');
  const grammar = pick('grammar');
  const tag = pick('structural_tag');
  if (json) {
    let schema: unknown = json.value;
    if (typeof schema === 'string') {
      try {
        schema = JSON.parse(schema);
      } catch {
        // kept as the string: the compiler reports it (docs/contract.md §8.2 item 6)
      }
    }
    chosen = { constraint: { kind: 'json', schema }, source: json.source };
  } else if (jsonObject && jsonObject.value === true) {
    chosen = { constraint: { kind: 'json_object' }, source: jsonObject.source };
  } else if (regex) chosen = { constraint: { kind: 'regex', pattern: regex.value as string }, source: regex.source };
  else if (choice)
    chosen = { constraint: { kind: 'choice', choices: choice.value as string[] }, source: choice.source };
  else if (grammar) {
    chosen = { constraint: { kind: 'grammar', grammar: grammar.value as string }, source: grammar.source };
  } else if (tag) chosen = { constraint: { kind: 'structural_tag', tag: tag.value as string }, source: tag.source };
  if (!chosen) return null;
  return {
    source: chosen.source,
    spec: {
      constraint: chosen.constraint,
      disable_any_whitespace: so?.disable_any_whitespace ?? false,
      disable_additional_properties: so?.disable_additional_properties ?? false,
      whitespace_pattern: so?.whitespace_pattern ?? null,
      disable_fallback: so?.disable_fallback ?? false,
    },
  };
}
