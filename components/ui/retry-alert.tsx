import type { ReactNode } from 'react';
import { Alert } from './alert';
import { Button } from './button';

interface RetryAlertProps {
  title: ReactNode;
  /** What "Try again" does: usually the failed query's refetch. */
  onRetry: () => unknown;
  /** Shows the button busy while the retry runs. */
  pending?: boolean;
  children?: ReactNode;
}

/** The dashboard's error state for anything that failed to load: what failed, why, and a way to try again. */
export function RetryAlert({ title, onRetry, pending, children }: RetryAlertProps) {
  return (
    <Alert
      tone="danger"
      role="alert"
      title={title}
      actions={
        <Button variant="secondary" size="sm" onClick={() => onRetry()} pending={pending}>
          Try again
        </Button>
      }
    >
      {children}
    </Alert>
  );
}
