/**
 * RFC 4180 CSV: fields with a comma, quote or line break are quoted, quotes doubled. Metric names come
 * from API clients, so a name a spreadsheet would run as a formula (=, +, -, @, tab, CR) gets a leading
 * apostrophe (the OWASP "CSV injection" advice). Numbers are written as JavaScript prints them, which
 * round-trips exactly.
 */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function toCsv(
  header: readonly string[],
  rows: readonly (readonly (string | number | null | undefined)[])[],
): string {
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/** One column per series, one row per step of any series; a step a series did not log is an empty cell. */
export function seriesToCsv(
  series: readonly { name: string; points: readonly (readonly [number, number | null])[] }[],
): string {
  const steps = new Set<number>();
  const byName = series.map((s) => {
    const m = new Map<number, number | null>();
    for (const [step, value] of s.points) {
      steps.add(step);
      m.set(step, value);
    }
    return m;
  });
  const sorted = [...steps].sort((a, b) => a - b);
  return toCsv(
    ['step', ...series.map((s) => s.name)],
    sorted.map((step) => [step, ...byName.map((m) => m.get(step) ?? null)]),
  );
}

/** A file name from a metric name: anything outside [a-z0-9._-] becomes `-`. */
export function csvFileName(base: string): string {
  const slug = base
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${slug || 'series'}.csv`;
}
