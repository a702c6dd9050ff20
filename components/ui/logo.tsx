import { cx } from './cx';

/**
 * The Tuneboard mark: three faders of an equaliser, the "tuning" in the name. Flat fills only: an SVG
 * gradient is looked up by document-wide id, and breaks when the copy defining it is display:none.
 */
export function LogoMark({ className }: { className?: string }) {
  return (
    <svg viewBox="0 0 32 32" aria-hidden="true" focusable="false" className={cx('size-8 shrink-0', className)}>
      <rect width="32" height="32" rx="8" fill="#5b55f0" />
      <path d="M8 0h16a8 8 0 0 1 8 8v6C20 17 10 12 0 16V8a8 8 0 0 1 8-8Z" fill="#fff" opacity="0.09" />
      <g stroke="#fff" strokeWidth="2.2" strokeLinecap="round" opacity="0.45">
        <path d="M10 8v16M16 8v16M22 8v16" />
      </g>
      <g fill="#fff">
        <rect x="7" y="17" width="6" height="3.6" rx="1.8" />
        <rect x="13" y="10" width="6" height="3.6" rx="1.8" />
        <rect x="19" y="14" width="6" height="3.6" rx="1.8" />
      </g>
    </svg>
  );
}

export function Logo({ className }: { className?: string }) {
  return (
    <span className={cx('inline-flex items-center gap-2.5', className)}>
      <LogoMark />
      <span className="text-[15px] font-semibold tracking-tight text-fg">Tuneboard</span>
    </span>
  );
}
