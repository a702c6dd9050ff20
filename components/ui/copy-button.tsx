'use client';

import { useEffect, useState } from 'react';
import { Button, type ButtonSize, type ButtonVariant } from './button';
import { Tooltip } from './tooltip';
import { cx } from './cx';
import { CheckIcon, CopyIcon } from './icons';

/** navigator.clipboard only exists in secure contexts; a self-hosted server is often plain http on a LAN address. */
export async function writeClipboard(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  try {
    if (!document.execCommand('copy')) throw new Error('copy command refused');
  } finally {
    area.remove();
  }
}

interface CopyButtonProps {
  value: string;
  /** Visible text; also names the button for assistive technology. */
  label?: string;
  /** Names the button when it shows only an icon. */
  ariaLabel?: string;
  iconOnly?: boolean;
  variant?: ButtonVariant;
  size?: ButtonSize;
  className?: string;
  'data-testid'?: string;
}

export function CopyButton({
  value,
  label = 'Copy',
  ariaLabel,
  iconOnly = false,
  variant = 'secondary',
  size = 'sm',
  className,
  ...rest
}: CopyButtonProps) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');

  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);

  async function copy() {
    try {
      await writeClipboard(value);
      setState('copied');
    } catch {
      setState('failed');
    }
  }

  const text = state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label;
  const button = (
    <Button
      variant={variant}
      size={size}
      onClick={copy}
      aria-label={iconOnly ? (ariaLabel ?? label) : undefined}
      className={cx(iconOnly && 'w-8 px-0', className)}
      data-testid={rest['data-testid']}
    >
      {state === 'copied' ? <CheckIcon className="size-3.5" /> : <CopyIcon className="size-3.5" />}
      {iconOnly ? null : <span>{text}</span>}
    </Button>
  );
  return (
    <>
      {/* An icon alone says little to a sighted reader: the tooltip shows the words the aria-label speaks. */}
      {iconOnly ? <Tooltip content={ariaLabel ?? label}>{button}</Tooltip> : button}
      <span role="status" className="sr-only">
        {state === 'copied'
          ? 'Copied to clipboard'
          : state === 'failed'
            ? 'Could not copy: select the text and copy it by hand'
            : ''}
      </span>
    </>
  );
}
