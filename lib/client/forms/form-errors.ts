import { zodResolver } from '@hookform/resolvers/zod';
import type { FieldErrors as FormFieldErrors, FieldValues, Resolver } from 'react-hook-form';
import type { z } from 'zod';
import { humanizeMessage, isApiClientError } from '../api/api-fetch';

export type FieldErrors = Record<string, string>;

/**
 * Wording for the issues whose zod default is written for developers ("Too small: expected string to have >=2
 * characters"). Undefined keeps the message: the contract's own ones ("must be an email address") read well.
 */
export function issueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  const s = (n: unknown) => (n === 1 ? '' : 's');
  if (issue.code === 'too_small' && issue.origin === 'string')
    return `Must be at least ${issue.minimum} character${s(issue.minimum)}`;
  if (issue.code === 'too_big' && issue.origin === 'string')
    return `Must be at most ${issue.maximum} character${s(issue.maximum)}`;
  if (issue.code === 'too_small' && issue.origin === 'number')
    return issue.inclusive ? `Must be at least ${issue.minimum}` : `Must be more than ${issue.minimum}`;
  if (issue.code === 'too_big' && issue.origin === 'number')
    return issue.inclusive ? `Must be at most ${issue.maximum}` : `Must be less than ${issue.maximum}`;
  if (issue.code === 'invalid_type' && issue.expected === 'int') return 'Must be a whole number';
  if (issue.code === 'invalid_type' && issue.expected === 'number') return 'Must be a number';
  if (issue.code === 'invalid_value') return `Choose one of: ${issue.values.map(String).join(', ')}`;
  return undefined;
}

/** Every message of a resolver's error tree, read for people (see humanizeMessage). */
function humanizeTree<T extends FieldValues>(errors: FormFieldErrors<T>): FormFieldErrors<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(errors)) {
    if (key === 'ref' || value === null || typeof value !== 'object') out[key] = value;
    else if (typeof (value as { message?: unknown }).message === 'string')
      out[key] = { ...value, message: humanizeMessage((value as { message: string }).message) };
    else out[key] = humanizeTree(value as FormFieldErrors<FieldValues>);
  }
  return out as FormFieldErrors<T>;
}

/**
 * react-hook-form's zod resolver over a form schema (one derived from the request body's schema that the API
 * validates with), with the messages worded as the API's 422s are shown: the same rules, the same sentences.
 */
export function contractResolver<TValues extends FieldValues, TBody>(
  schema: z.ZodType<TBody, TValues>,
): Resolver<TValues, unknown, TBody> {
  const resolve = zodResolver(schema, { error: issueMessage }) as unknown as Resolver<TValues, unknown, TBody>;
  return async (values, context, options) => {
    const result = await resolve(values, context, options);
    return { ...result, errors: humanizeTree(result.errors) } as Awaited<ReturnType<typeof resolve>>;
  };
}

interface SplitOptions {
  /** Request fields whose input has another name in the form (`config.epochs` → `epochs`). */
  rename?: Readonly<Record<string, string>>;
  /** Whether the form-wide line names the request field of each error ("project: …"); on by default. */
  namedFields?: boolean;
}

/**
 * Splits a failed request into errors shown next to the form's own fields and one message for the
 * form as a whole (errors about fields the form does not have, or not about a field at all).
 */
export function splitSubmitError(
  error: unknown,
  fields: readonly string[],
  { rename = {}, namedFields = true }: SplitOptions = {},
): { fieldErrors: FieldErrors; formError: string | null } {
  if (!isApiClientError(error)) return { fieldErrors: {}, formError: 'Something went wrong. Try again.' };
  const fieldErrors: FieldErrors = {};
  const other: string[] = [];
  for (const [path, message] of Object.entries(error.fieldErrors)) {
    const field = rename[path] ?? path;
    if (fields.includes(field)) fieldErrors[field] ??= message;
    else other.push(namedFields ? `${path}: ${message}` : message);
  }
  if (Object.keys(error.fieldErrors).length === 0) return { fieldErrors, formError: error.message };
  return { fieldErrors, formError: other.length > 0 ? other.join('; ') : null };
}
