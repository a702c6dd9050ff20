'use client';

import { formatDate, formatDateTime, formatRelativeTime } from '@/lib/client/format/format-time';
import { useNow } from '@/lib/client/hooks/use-now';

/**
 * "3 hours ago", with the exact local time as a tooltip. The server's HTML carries the UTC date
 * instead, because it cannot know the reader's clock or time zone.
 */
export function RelativeTime({ iso, className }: { iso: string; className?: string }) {
  const now = useNow();
  return (
    <time dateTime={iso} title={now === null ? formatDateTime(iso, 'UTC') : formatDateTime(iso)} className={className}>
      {now === null ? formatDate(iso, 'UTC') : formatRelativeTime(iso, now)}
    </time>
  );
}
