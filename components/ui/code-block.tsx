import { CopyButton } from './copy-button';
import { cx } from './cx';

interface CodeBlockProps {
  code: string;
  /** Shown in the block's title bar, e.g. "Terminal" or "Response". */
  label?: string;
  copyLabel?: string;
  className?: string;
  'data-testid'?: string;
}

/** Always dark, in both themes: code reads best on one stable background. */
export function CodeBlock({ code, label, copyLabel = 'Copy', className, ...rest }: CodeBlockProps) {
  return (
    <div className={cx('overflow-hidden rounded-lg border border-line bg-code dark:border-line-strong', className)}>
      <div className="flex items-center justify-between gap-2 border-b border-white/10 py-1.5 pr-1.5 pl-3.5">
        <span className="text-xs font-medium text-white/55">{label ?? ''}</span>
        <CopyButton
          value={code}
          label={copyLabel}
          variant="ghost"
          size="sm"
          className="h-7 text-white/70 hover:bg-white/10 hover:text-white"
        />
      </div>
      <pre
        className="overflow-x-auto px-4 py-3.5 font-mono text-[12.5px] leading-relaxed text-code-fg"
        data-testid={rest['data-testid']}
      >
        <code>{code}</code>
      </pre>
    </div>
  );
}
