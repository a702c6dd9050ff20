import type { z } from 'zod';
import { errorDetailSchema, validationErrorSchema } from '@/lib/schemas/common';

type ValidationItem = z.infer<typeof validationErrorSchema>['detail'][number];

/**
 * The one error type browser code sees for a failed /v1 call. `status` is 0 when the server was never
 * reached. `fieldErrors` maps a body field (`email`, `expires_in_days`…) to its first 422 message so
 * that forms can show it next to the input.
 */
export class ApiClientError extends Error {
  readonly status: number;
  readonly fieldErrors: Readonly<Record<string, string>>;

  constructor(status: number, message: string, fieldErrors: Record<string, string> = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ApiClientError';
    this.status = status;
    this.fieldErrors = fieldErrors;
  }
}

export function isApiClientError(error: unknown): error is ApiClientError {
  return error instanceof ApiClientError;
}

// The server speaks pydantic: "Value error, …" is a prefix meant for machines, not for people.
export function humanizeMessage(msg: string): string {
  const text = msg.replace(/^Value error,\s*/i, '').trim();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `['body', 'members', 0, 'email']` → `members.0.email`; the location prefix only says where the value came from. */
function fieldPath(loc: ValidationItem['loc']): string {
  const rest = ['body', 'query', 'path', 'header'].includes(String(loc[0])) ? loc.slice(1) : loc;
  return rest.map(String).join('.');
}

export function messageFromValidation(items: ValidationItem[]): string {
  if (items.length === 0) return 'The request was not valid.';
  return items
    .map((item) => {
      const field = fieldPath(item.loc);
      return field ? `${field}: ${humanizeMessage(item.msg)}` : humanizeMessage(item.msg);
    })
    .join('; ');
}

export function fieldErrorsFromValidation(items: ValidationItem[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const field = fieldPath(item.loc);
    // The first problem of a field is the one to fix first; later ones often follow from it.
    if (field && !(field in out)) out[field] = humanizeMessage(item.msg);
  }
  return out;
}

function fallbackMessage(status: number): string {
  if (status === 401) return 'Your session has expired. Sign in again.';
  if (status === 403) return 'You do not have permission to do this.';
  if (status === 404) return 'Not found.';
  if (status >= 500) return 'The server had a problem. Try again in a moment.';
  return `Request failed with status ${status}.`;
}

/** Builds the error from a non-2xx answer, whatever its body: `{detail: string}`, a 422 list, or not JSON at all. */
export function errorFromResponseBody(status: number, body: unknown): ApiClientError {
  const asString = errorDetailSchema.safeParse(body);
  if (asString.success) return new ApiClientError(status, asString.data.detail || fallbackMessage(status));
  const asList = validationErrorSchema.safeParse(body);
  if (asList.success) {
    return new ApiClientError(
      status,
      messageFromValidation(asList.data.detail),
      fieldErrorsFromValidation(asList.data.detail),
    );
  }
  return new ApiClientError(status, fallbackMessage(status));
}

export interface ApiFetchInit extends Omit<RequestInit, 'body'> {
  /** A value to send as the JSON request body. */
  json?: unknown;
}

/**
 * Calls the /v1 API from the browser with the session cookie and parses the answer with the
 * contract's zod schema, so that a response the UI cannot handle fails here, loudly, not in a render.
 */
export async function apiFetch<S extends z.ZodType>(
  path: string,
  schema: S,
  init: ApiFetchInit = {},
): Promise<z.output<S>> {
  const { json, headers, ...rest } = init;
  const requestHeaders = new Headers(headers);
  requestHeaders.set('accept', 'application/json');
  let body: string | undefined;
  if (json !== undefined) {
    requestHeaders.set('content-type', 'application/json');
    body = JSON.stringify(json);
  }

  let response: Response;
  try {
    response = await fetch(path, { credentials: 'same-origin', ...rest, headers: requestHeaders, body });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw new ApiClientError(0, 'Could not reach the server. Check your connection and try again.', {}, { cause });
  }

  const text = await response.text();
  let payload: unknown = undefined;
  if (text !== '') {
    try {
      payload = JSON.parse(text);
    } catch {
      payload = undefined;
    }
  }

  if (!response.ok) throw errorFromResponseBody(response.status, payload);

  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    throw new ApiClientError(
      response.status,
      'The server sent a response this page does not understand.',
      {},
      {
        cause: parsed.error,
      },
    );
  }
  return parsed.data;
}
