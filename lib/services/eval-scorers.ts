import 'server-only';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ApiError, type ValidationIssue } from '@/lib/errors';
import type { ScorerInput, StoredScorer } from '@/lib/schemas/evals';
import type { EvalScoreValue } from '@/lib/db/schema';

/**
 * The scorers of docs/contract.md §11.2. Each gives a sample a score in [0, 1]; `passed` = score ≥ 0.5. They are
 * checked when a run (or an auto-eval setting) is created, so a bad pattern or schema is a 422 naming the scorer, not
 * a failed run. The judge is not here: it is a chat call, made by the runner (eval-runner.ts); its verdict is parsed
 * by parseJudgeVerdict below.
 */

export const PASS_THRESHOLD = 0.5;

/** A scorer ready to score: `score` is synchronous and pure (the judge has its own path). */
export interface CompiledScorer {
  name: string;
  type: string;
  stored: StoredScorer;
  score?: (output: string, reference: unknown) => EvalScoreValue;
  judge?: { model: string; rubric: string; sampling: Record<string, unknown> };
}

// One instance: compiled schemas are cached by the instance, and a run compiles each of its schemas once.
const ajv = new Ajv2020({ strict: false, allowUnionTypes: true });
addFormats(ajv);

const result = (pass: boolean, extra: Partial<EvalScoreValue> = {}): EvalScoreValue => ({
  score: pass ? 1 : 0,
  passed: pass,
  ...extra,
});
const noReference = (): EvalScoreValue => result(false, { error: 'the example has no reference' });

/** A reference as text: a string as it is, any other JSON value as JSON. */
export function referenceText(reference: unknown): string {
  return typeof reference === 'string' ? reference : JSON.stringify(reference);
}

export function normalizeText(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

const REGEX_FLAGS = /^[dgimsuyv]*$/;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** The last number in a text: an optional sign, digits with optional thousands commas, a fraction, an exponent. */
export function lastNumber(text: string): number | undefined {
  const matches = text.match(/[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?/g);
  if (!matches) return undefined;
  const value = Number(matches[matches.length - 1].replace(/,/g, ''));
  return Number.isFinite(value) ? value : undefined;
}

function numericReference(reference: unknown): number | undefined {
  if (typeof reference === 'number') return reference;
  if (typeof reference === 'string' && reference.trim() !== '') {
    const value = Number(reference.trim().replace(/,/g, ''));
    return Number.isFinite(value) ? value : undefined;
  }
  return undefined;
}

/**
 * The JSON in an answer: the whole text, or else the content of its first ``` fenced block (models often wrap JSON
 * in one). Undefined when neither parses.
 */
export function answerJson(text: string): { value: unknown } | undefined {
  const attempts = [text.trim()];
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text);
  if (fenced) attempts.push(fenced[1].trim());
  for (const attempt of attempts) {
    try {
      return { value: JSON.parse(attempt) };
    } catch {
      // try the next form
    }
  }
  return undefined;
}

/**
 * Checks and compiles a run's scorers: names filled in (default: the type) and unique, each regex and JSON schema
 * compiled. Judge models are resolved by the caller (they need the principal). Throws a 422 naming each bad scorer
 * under `loc` (`['body', 'scorers']`).
 */
export function compileScorers(scorers: ScorerInput[], loc: (string | number)[]): CompiledScorer[] {
  const issues: ValidationIssue[] = [];
  const names = new Set<string>();
  const compiled: CompiledScorer[] = [];
  scorers.forEach((s, i) => {
    const name = s.name ?? s.type;
    const at = [...loc, i];
    if (names.has(name)) {
      issues.push({
        loc: [...at, 'name'],
        msg: `Value error, scorer ${i}: the name '${name}' is used twice (give each scorer of one type a name)`,
        type: 'value_error',
      });
      return;
    }
    names.add(name);
    const stored = { ...s, name } as StoredScorer;
    try {
      compiled.push({ name, type: s.type, stored, ...compileOne(s) });
    } catch (err) {
      if (!(err instanceof ScorerCompileError)) throw err;
      issues.push({
        loc: [...at, err.field],
        msg: `Value error, scorer ${i} (${name}): ${err.message}`,
        type: 'value_error',
      });
    }
  });
  if (issues.length) throw ApiError.validation(issues);
  return compiled;
}

class ScorerCompileError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function compileOne(s: ScorerInput): Pick<CompiledScorer, 'score' | 'judge'> {
  switch (s.type) {
    case 'exact_match': {
      const normalize = s.normalize ?? true;
      const form = (t: string) => (normalize ? normalizeText(t) : t);
      return {
        score: (output, reference) =>
          reference === undefined || reference === null
            ? noReference()
            : result(form(output) === form(referenceText(reference))),
      };
    }
    case 'contains': {
      const fold = (t: string) => (s.case_sensitive ? t : t.toLowerCase());
      return {
        score: (output, reference) => {
          if (reference === undefined || reference === null) return noReference();
          const items = Array.isArray(reference) ? reference : [reference];
          return result(items.every((item) => fold(output).includes(fold(referenceText(item)))));
        },
      };
    }
    case 'regex': {
      const flags = s.flags ?? '';
      if (!REGEX_FLAGS.test(flags) || new Set(flags).size !== flags.length)
        throw new ScorerCompileError(
          'flags',
          `invalid regex flags '${flags}' (use d, g, i, m, s, u, v or y, once each)`,
        );
      const usesReference = s.pattern.includes('{reference}');
      const build = (reference: string) =>
        new RegExp(s.pattern.split('{reference}').join(escapeRegex(reference)), flags);
      try {
        build('');
      } catch (err) {
        throw new ScorerCompileError('pattern', `the pattern does not compile: ${(err as Error).message}`);
      }
      const fixed = usesReference ? undefined : build('');
      return {
        score: (output, reference) => {
          if (!fixed && (reference === undefined || reference === null)) return noReference();
          const re = fixed ?? build(referenceText(reference));
          re.lastIndex = 0;
          return result(re.test(output));
        },
      };
    }
    case 'json_schema': {
      let validate: ValidateFunction;
      try {
        validate = ajv.compile(s.schema);
      } catch (err) {
        throw new ScorerCompileError('schema', `the schema does not compile: ${(err as Error).message}`);
      }
      return {
        score: (output) => {
          const parsed = answerJson(output);
          if (!parsed) return result(false, { error: 'the answer is not JSON' });
          if (validate(parsed.value)) return result(true);
          const first = validate.errors?.[0];
          return result(false, {
            error: first
              ? `${first.instancePath || '/'} ${first.message ?? 'is invalid'}`
              : 'does not match the schema',
          });
        },
      };
    }
    case 'numeric': {
      const tolerance = s.tolerance ?? 0;
      const relative = s.relative ?? 0;
      return {
        score: (output, reference) => {
          const want = numericReference(reference);
          if (want === undefined)
            return result(false, {
              error:
                reference === undefined || reference === null
                  ? 'the example has no reference'
                  : 'the reference is not a number',
            });
          const got = lastNumber(output);
          if (got === undefined) return result(false, { error: 'the answer holds no number' });
          return result(Math.abs(got - want) <= Math.max(tolerance, relative * Math.abs(want)));
        },
      };
    }
    case 'judge':
      return { judge: { model: s.model, rubric: s.rubric, sampling: { ...JUDGE_SAMPLING, ...(s.sampling ?? {}) } } };
  }
}

/** A judge answers briefly and deterministically unless its scorer says otherwise. */
export const JUDGE_SAMPLING = { temperature: 0, max_tokens: 128 };

const JUDGE_INSTRUCTIONS =
  'You grade answers. Read the rubric, the conversation, the reference answer and the answer to grade. ' +
  'On the first line write only PASS or FAIL, or a score from 0 to 10 (10 = fully meets the rubric). ' +
  'Then explain briefly.';

/** The judge's messages: the rubric, the prompt, the reference and the answer (stored with its score). */
export function judgeMessages(
  rubric: string,
  prompt: { role: string; content: string }[],
  reference: unknown,
  answer: string,
): { role: string; content: string }[] {
  const conversation = prompt.map((m) => `${m.role}: ${m.content}`).join('\n');
  const ref = reference === undefined || reference === null ? '(none)' : referenceText(reference);
  return [
    { role: 'system', content: JUDGE_INSTRUCTIONS },
    {
      role: 'user',
      content: `Rubric:\n${rubric}\n\nConversation:\n${conversation}\n\nReference answer:\n${ref}\n\nAnswer to grade:\n${answer}`,
    },
  ];
}

/**
 * The score a judge's verdict gives: its first non-empty line starting with PASS (1) or FAIL (0), or a number from 0
 * to 10 (divided by 10; "7/10" reads as 7). Anything else scores 0 with an error saying the verdict was not
 * understood; the raw verdict is stored either way.
 */
export function parseJudgeVerdict(verdict: string): EvalScoreValue {
  const first = verdict.split('\n').find((line) => line.trim() !== '') ?? '';
  const line = first
    .trim()
    .replace(/^[*#_`"'\s]+/, '')
    .trim();
  if (/^pass\b/i.test(line)) return { score: 1, passed: true, verdict };
  if (/^fail\b/i.test(line)) return { score: 0, passed: false, verdict };
  const number = /^(?:score\s*[:=]?\s*)?(\d+(?:\.\d+)?)(?:\s*\/\s*10)?\b/i.exec(line);
  if (number) {
    const value = Number(number[1]);
    if (value >= 0 && value <= 10) {
      const score = value / 10;
      return { score, passed: score >= PASS_THRESHOLD, verdict };
    }
  }
  return {
    score: 0,
    passed: false,
    verdict,
    error: 'the verdict does not start with PASS, FAIL or a score from 0 to 10',
  };
}
