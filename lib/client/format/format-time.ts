const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "just now", "5 minutes ago", "in 3 days", "2 years ago". */
export function formatRelativeTime(iso: string, now: number): string {
  const diff = new Date(iso).getTime() - now;
  const abs = Math.abs(diff);
  if (abs < 45_000) return 'just now';
  if (abs < HOUR) return relative.format(Math.round(diff / MINUTE), 'minute');
  if (abs < DAY) return relative.format(Math.round(diff / HOUR), 'hour');
  if (abs < 30 * DAY) return relative.format(Math.round(diff / DAY), 'day');
  if (abs < 365 * DAY) return relative.format(Math.round(diff / (30 * DAY)), 'month');
  return relative.format(Math.round(diff / (365 * DAY)), 'year');
}

/**
 * Formatters by time zone: building an Intl.DateTimeFormat costs a hundred times what formatting with one does, and
 * tables format a date per row on every render (a live job page re-rendered 50 event rows every second: 5 % of its
 * CPU went to constructing formatters).
 */
const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();
const dateFormats = new Map<string, Intl.DateTimeFormat>();
const dateTimeSecondFormats = new Map<string, Intl.DateTimeFormat>();

function cached(
  cache: Map<string, Intl.DateTimeFormat>,
  timeZone: string | undefined,
  make: () => Intl.DateTimeFormat,
) {
  const key = timeZone ?? '';
  let format = cache.get(key);
  if (!format) cache.set(key, (format = make()));
  return format;
}

/** An absolute date-time; with `timeZone: 'UTC'` the same on server and browser, so it is safe to server-render. */
export function formatDateTime(iso: string, timeZone?: string, opts: { seconds?: boolean } = {}): string {
  return cached(
    opts.seconds ? dateTimeSecondFormats : dateTimeFormats,
    timeZone,
    () =>
      new Intl.DateTimeFormat('en', {
        year: 'numeric',
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        // A job's events come seconds apart: without seconds a whole job's rows read the same time.
        second: opts.seconds ? '2-digit' : undefined,
        // Not `hour12: false`: with 'en' Node's ICU reads that as the h24 cycle and prints midnight as 24:10
        // while Chromium prints 00:10, so the server HTML and the hydrated page disagreed for an hour a day.
        hourCycle: 'h23',
        timeZone,
        timeZoneName: timeZone === 'UTC' ? 'short' : undefined,
      }),
  ).format(new Date(iso));
}

export function formatDate(iso: string, timeZone?: string): string {
  return cached(
    dateFormats,
    timeZone,
    () => new Intl.DateTimeFormat('en', { year: 'numeric', month: 'short', day: 'numeric', timeZone }),
  ).format(new Date(iso));
}

/** "0.4 s", "45 s", "3 min 5 s", "2 h 3 min": how long a job ran, or has been running. */
export function formatDuration(ms: number): string {
  // A sub-second job is not "0 s" (issue 41): tenths below a second, "under 0.1 s" below that.
  if (ms < 950) return ms < 50 ? 'under 0.1 s' : `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
