import { cx } from '@/components/ui/cx';

function initials(name: string): string {
  const parts = name
    .trim()
    .split(/[\s._-]+/)
    .filter(Boolean);
  const letters = parts.length > 1 ? parts[0][0] + parts[1][0] : (parts[0] ?? '?').slice(0, 2);
  return letters.toUpperCase();
}

// A stable hue per name, so the same entity always wears the same colour. OKLCH keeps the lightness,
// and so the contrast with the white initials, the same for every hue.
function hue(name: string): number {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return h;
}

export function Avatar({ name, square = false, className }: { name: string; square?: boolean; className?: string }) {
  return (
    <span
      aria-hidden="true"
      style={{ backgroundColor: `oklch(52% 0.13 ${hue(name)})` }}
      className={cx(
        'inline-flex size-8 shrink-0 items-center justify-center text-[11px] font-semibold tracking-wide text-white',
        square ? 'rounded-lg' : 'rounded-full',
        className,
      )}
    >
      {initials(name)}
    </span>
  );
}
