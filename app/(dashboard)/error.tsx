'use client';

import { RetryAlert } from '@/components/ui/retry-alert';

/** Keeps the shell on screen when a page fails to render; the message says what, the button retries. */
export default function DashboardError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <RetryAlert title="This page could not be shown" onRetry={reset}>
      {/* In production Next replaces server error messages by a digest: never echo internals. */}
      {error.digest ? `Something went wrong on the server (reference ${error.digest}).` : error.message}
    </RetryAlert>
  );
}
