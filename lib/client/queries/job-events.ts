import { queryOptions } from '@tanstack/react-query';
import { createLoader, parseAsStringLiteral } from 'nuqs/server';
import { EVENT_TYPES, jobEventListSchema, type JobEventDto } from '@/lib/schemas/training-jobs';
import { apiFetch } from '../api/api-fetch';
import { jobKeys, jobPath } from './jobs';

/** How the job page lists events: newest first by default (the live end on top), optionally one type only. */
export interface EventListView {
  newestFirst: boolean;
  type: JobEventDto['type'] | null;
}
const DEFAULT_EVENT_VIEW: EventListView = { newestFirst: true, type: null };

/** A job's events: the job page's table (a page per view and cursor) and every event so far (its chart, live tail). */
export const jobEventKeys = {
  all: (jobId: string) => [...jobKeys.detail(jobId), 'events'] as const,
  page: (jobId: string, cursor: string | undefined, view: EventListView = DEFAULT_EVENT_VIEW) =>
    [
      ...jobEventKeys.all(jobId),
      'page',
      view.newestFirst ? 'newest' : 'oldest',
      view.type ?? 'all',
      cursor ?? null,
    ] as const,
  every: (jobId: string) => [...jobEventKeys.all(jobId), 'all'] as const,
};

export const EVENT_PAGE_SIZE = 25;

/**
 * The job page's URL state (`?events=oldest`, `?event_type=gradient_step`): nuqs parsers, read on the server for the
 * prefetch and kept in the URL by the client. Anything unknown is the default.
 */
export const eventViewParsers = {
  events: parseAsStringLiteral(['newest', 'oldest'] as const).withDefault('newest'),
  event_type: parseAsStringLiteral(EVENT_TYPES),
};
const loadEventViewParams = createLoader(eventViewParsers);

export function eventViewOf(params: {
  events: 'newest' | 'oldest';
  event_type: JobEventDto['type'] | null;
}): EventListView {
  return { newestFirst: params.events !== 'oldest', type: params.event_type };
}

/** The view a job page URL asks for; anything unknown is the default. */
export function eventViewFromSearchParams(raw: Record<string, string | string[] | undefined>): EventListView {
  return eventViewOf(loadEventViewParams(raw));
}

/** A page of the events table, chronological or (`newestFirst`, an API extension) newest first. */
export const jobEventPageQuery = (
  jobId: string,
  cursor: string | undefined,
  view: EventListView = DEFAULT_EVENT_VIEW,
) =>
  queryOptions({
    queryKey: jobEventKeys.page(jobId, cursor, view),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(EVENT_PAGE_SIZE) });
      if (view.newestFirst) params.set('newest_first', 'true');
      if (view.type) params.set('event_type', view.type);
      if (cursor) params.set('after', cursor);
      return apiFetch(`${jobPath(jobId)}/events?${params}`, jobEventListSchema, { signal });
    },
  });

/**
 * Every event of a job so far, for the loss chart and the live tail. Events only ever append, so a
 * refetch continues after the last id it already holds instead of starting over (see useJobEventTail).
 */
export async function fetchEventsAfter(jobId: string, after: string | undefined, signal?: AbortSignal, maxPages = 50) {
  const data: JobEventDto[] = [];
  let cursor = after;
  for (let page = 0; page < maxPages; page++) {
    const params = new URLSearchParams({ limit: '100' });
    if (cursor) params.set('after', cursor);
    const list = await apiFetch(`${jobPath(jobId)}/events?${params}`, jobEventListSchema, { signal });
    data.push(...list.data);
    if (!list.has_more || !list.last_id) break;
    cursor = list.last_id;
  }
  return data;
}
