'use client';

import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';

/** Keeps the shell on screen when a page fails to render; the message says what, the button retries. */
export default function DashboardError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <Alert
      tone="danger"
      role="alert"
      title="This page could not be shown"
      actions={
        <Button variant="secondary" size="sm" onClick={reset}>
          Try again
        </Button>
      }
    >
      {/* In production Next replaces server error messages by a digest: never echo internals. */}
      {error.digest ? `Something went wrong on the server (reference ${error.digest}).` : error.message}
    </Alert>
  );
}
