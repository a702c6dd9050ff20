import type { z } from 'zod';
import { humanizeMessage, isApiClientError } from './api-fetch';

export type FieldErrors = Record<string, string>;

/** The first problem of each top-level field of a failed client-side parse with a contract schema. */
export function zodFieldErrors(error: z.ZodError): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of error.issues) {
    const field = issue.path.map(String).join('.');
    if (field && !(field in out)) out[field] = issueMessage(issue);
  }
  return out;
}

// The contract's own messages ("must be an email address") read well; zod's generic length ones do not.
function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'too_small' && issue.origin === 'string' && issue.message.startsWith('Too small'))
    return `Must be at least ${issue.minimum} characters`;
  if (issue.code === 'too_big' && issue.origin === 'string' && issue.message.startsWith('Too big'))
    return `Must be at most ${issue.maximum} characters`;
  return humanizeMessage(issue.message);
}

/**
 * Splits a failed request into errors shown next to the form's own fields and one message for the
 * form as a whole (errors about fields the form does not have, or not about a field at all).
 */
export function splitSubmitError(
  error: unknown,
  fields: readonly string[],
): { fieldErrors: FieldErrors; formError: string | null } {
  if (!isApiClientError(error)) return { fieldErrors: {}, formError: 'Something went wrong. Try again.' };
  const fieldErrors: FieldErrors = {};
  const other: string[] = [];
  for (const [field, message] of Object.entries(error.fieldErrors)) {
    if (fields.includes(field)) fieldErrors[field] = message;
    else other.push(`${field}: ${message}`);
  }
  if (Object.keys(error.fieldErrors).length === 0) return { fieldErrors, formError: error.message };
  return { fieldErrors, formError: other.length > 0 ? other.join('; ') : null };
}

/** Moves focus to the first field with an error, so its message is read out with its label. */
export function focusFirstInvalid(form: HTMLFormElement | null, errors: FieldErrors, order: readonly string[]): void {
  const first = order.find((field) => errors[field]);
  if (!form || !first) return;
  form.querySelector<HTMLElement>(`[name="${first}"]`)?.focus();
}
