import type { ReactNode } from 'react';
import { cx } from './cx';
import { AlertCircleIcon, AlertTriangleIcon, CheckIcon, InfoIcon } from './icons';

type AlertTone = 'danger' | 'warning' | 'info' | 'success';

const TONES: Record<AlertTone, { box: string; Icon: typeof InfoIcon }> = {
  danger: { box: 'border-danger-text/25 bg-danger-soft text-danger-text', Icon: AlertCircleIcon },
  warning: { box: 'border-warning-text/25 bg-warning-soft text-warning-text', Icon: AlertTriangleIcon },
  info: { box: 'border-info-text/25 bg-info-soft text-info-text', Icon: InfoIcon },
  success: { box: 'border-success-text/25 bg-success-soft text-success-text', Icon: CheckIcon },
};

interface AlertProps {
  tone?: AlertTone;
  title?: ReactNode;
  children?: ReactNode;
  actions?: ReactNode;
  className?: string;
  /** `alert` interrupts a screen reader: use it for errors that appear after an action. */
  role?: 'alert' | 'status';
  id?: string;
}

export function Alert({ tone = 'info', title, children, actions, className, role, id }: AlertProps) {
  const { box, Icon } = TONES[tone];
  return (
    <div id={id} role={role} className={cx('flex gap-3 rounded-lg border px-3.5 py-3 text-sm', box, className)}>
      <Icon className="mt-0.5 size-4 shrink-0" />
      <div className="min-w-0 flex-1 space-y-1">
        {title ? <p className="font-medium">{title}</p> : null}
        {children ? <div className={cx(title ? 'opacity-90' : null, 'break-words')}>{children}</div> : null}
        {actions ? <div className="pt-1.5">{actions}</div> : null}
      </div>
    </div>
  );
}
