import { alt, ConstraintCompileError, GrammarBuilder, lit, type Grammar } from './grammar';
import { compileJsonObject, compileJsonSchema, type JsonGrammarOptions } from './json-schema';
import { regexFrag } from './regex';
import {
  GrammarTokenConstraint,
  vocabularyIndex,
  type TokenConstraint,
  type TokenVocabulary,
} from './token-constraint';

/**
 * Structured outputs for the built-in engine (docs/contract.md §8.11): `choice`, `regex`, `json` (JSON
 * Schema) and `json_object`, enforced token by token. The inference thread that generates calls
 * {@link compileStructuredOutput} (lib/inference/wire.ts; a large schema takes seconds, so never the request
 * thread) and reports a {@link StructuredOutputCompileError}, which the route turns into a 400 BadRequestError
 * before answering (docs/contract.md §8.2 item 6); the resulting constraint goes into
 * `GenerationRequest.constraint`.
 */

export { ConstraintCompileError } from './grammar';
export type { Grammar } from './grammar';
export {
  applyTokenMask,
  GrammarTokenConstraint,
  maskHas,
  vocabularyIndex,
  type ConstraintState,
  type TokenConstraint,
  type TokenVocabulary,
} from './token-constraint';

/** The kinds as lib/inference's `StructuredOutputConstraint` spells them (structurally the same type). */
export type StructuredConstraintInput =
  | { kind: 'json'; schema: unknown }
  | { kind: 'json_object' }
  | { kind: 'regex'; pattern: string }
  | { kind: 'choice'; choices: readonly string[] }
  | { kind: 'grammar'; grammar: string }
  | { kind: 'structural_tag'; tag: string };

/** lib/inference's `StructuredOutputSpec` fits this shape. */
export interface StructuredOutputSpecInput {
  constraint: StructuredConstraintInput;
  disable_any_whitespace?: boolean;
  disable_additional_properties?: boolean;
  whitespace_pattern?: string | null;
}

export type StructuredKind = StructuredConstraintInput['kind'];

/** A 400: `message` is the exact text to return. */
export class StructuredOutputCompileError extends Error {
  constructor(
    readonly kind: StructuredKind,
    readonly reason: string,
  ) {
    super(`structured_outputs.${kind} could not be compiled: ${reason}`);
    this.name = 'StructuredOutputCompileError';
  }
}

export interface CompileOptions {
  /** Longest run of free JSON whitespace (default 1: DEFAULT_MAX_WHITESPACE in json-schema.ts). */
  maxWhitespace?: number;
}

/** Compiles the byte-level grammar of a spec (no vocabulary involved, so it can be cached and shared). */
export function compileStructuredGrammar(spec: StructuredOutputSpecInput, options: CompileOptions = {}): Grammar {
  const c = spec.constraint;
  const jsonOptions: JsonGrammarOptions = {
    disableAnyWhitespace: spec.disable_any_whitespace ?? false,
    disableAdditionalProperties: spec.disable_additional_properties ?? false,
    whitespacePattern: spec.whitespace_pattern ?? null,
    maxWhitespace: options.maxWhitespace,
  };
  try {
    switch (c.kind) {
      case 'choice': {
        if (c.choices.length === 0) throw new ConstraintCompileError('the choice list is empty');
        const g = new GrammarBuilder();
        return g.build(g.rule('choice', alt(...c.choices.map((s) => lit(s)))));
      }
      case 'regex': {
        const g = new GrammarBuilder();
        return g.build(g.rule('regex', regexFrag(c.pattern)));
      }
      case 'json_object':
        return compileJsonObject(jsonOptions);
      case 'json':
        if (typeof c.schema === 'string') throw new ConstraintCompileError('the schema is not valid JSON');
        return compileJsonSchema(c.schema, jsonOptions);
      case 'grammar':
      case 'structural_tag':
        throw new ConstraintCompileError('this kind is not supported by the built-in engine');
    }
  } catch (e) {
    if (e instanceof ConstraintCompileError) throw new StructuredOutputCompileError(c.kind, e.message);
    throw e;
  }
}

const grammarCache = new Map<string, Grammar>();
const GRAMMAR_CACHE_SIZE = 64;

/** {@link compileStructuredGrammar} through a small LRU keyed by the spec (clients repeat the same schema). */
export function cachedStructuredGrammar(spec: StructuredOutputSpecInput, options: CompileOptions = {}): Grammar {
  const key = JSON.stringify([
    spec.constraint,
    spec.disable_any_whitespace ?? false,
    spec.disable_additional_properties ?? false,
    spec.whitespace_pattern ?? null,
    options.maxWhitespace ?? null,
  ]);
  const hit = grammarCache.get(key);
  if (hit) {
    grammarCache.delete(key);
    grammarCache.set(key, hit);
    return hit;
  }
  const g = compileStructuredGrammar(spec, options);
  grammarCache.set(key, g);
  if (grammarCache.size > GRAMMAR_CACHE_SIZE) grammarCache.delete(grammarCache.keys().next().value as string);
  return g;
}

/**
 * The route's entry point: spec + tokenizer + end tokens (the request's EOS and stop_token_ids) → a
 * constraint for `GenerationRequest.constraint`. Throws {@link StructuredOutputCompileError} (→ 400).
 * One constraint per request; its n choices share it.
 */
export function compileStructuredOutput(
  spec: StructuredOutputSpecInput,
  vocab: TokenVocabulary,
  endTokenIds: readonly number[],
  options: CompileOptions = {},
): TokenConstraint {
  const grammar = cachedStructuredGrammar(spec, options);
  try {
    return new GrammarTokenConstraint(grammar, vocabularyIndex(vocab), endTokenIds);
  } catch (e) {
    if (e instanceof ConstraintCompileError) throw new StructuredOutputCompileError(spec.constraint.kind, e.message);
    throw e;
  }
}
