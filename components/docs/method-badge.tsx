import { cx } from '@/components/ui/cx';
import type { HttpMethod } from '@/lib/client/api/openapi-document';

const TONE: Partial<Record<HttpMethod, string>> = {
  get: 'bg-info-soft text-info-text',
  post: 'bg-success-soft text-success-text',
  put: 'bg-warning-soft text-warning-text',
  patch: 'bg-warning-soft text-warning-text',
  delete: 'bg-danger-soft text-danger-text',
};

export function MethodBadge({ method, className }: { method: HttpMethod; className?: string }) {
  return (
    <span
      className={cx(
        'inline-flex w-16 shrink-0 justify-center rounded-md py-0.5 font-mono text-[11px] font-semibold tracking-wide uppercase',
        TONE[method] ?? 'bg-surface-muted text-fg-muted',
        className,
      )}
    >
      {method}
    </span>
  );
}

export function StatusBadge({ status }: { status: string }) {
  const tone = status.startsWith('2')
    ? 'bg-success-soft text-success-text'
    : status.startsWith('4')
      ? 'bg-warning-soft text-warning-text'
      : status.startsWith('5')
        ? 'bg-danger-soft text-danger-text'
        : 'bg-surface-muted text-fg-muted';
  return (
    <span className={cx('inline-flex rounded-md px-1.5 py-0.5 font-mono text-xs font-semibold', tone)}>{status}</span>
  );
}
