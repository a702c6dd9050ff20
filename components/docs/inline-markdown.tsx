import type { ReactNode } from 'react';

// The subset route descriptions use: **bold**, `code` and [text](https://…). Anything else stays text,
// and nothing is ever parsed as HTML.
const TOKEN = /(\*\*[^*]+\*\*|`[^`]+`|\[[^\]]+\]\((?:https?:\/\/|\/)[^)\s]+\))/g;

export function InlineMarkdown({ text }: { text: string }) {
  const parts: ReactNode[] = text.split(TOKEN).map((part, i) => {
    if (i % 2 === 0) return part;
    if (part.startsWith('**'))
      return (
        <strong key={i} className="font-semibold text-fg">
          {part.slice(2, -2)}
        </strong>
      );
    if (part.startsWith('`'))
      return (
        <code key={i} className="rounded bg-surface-muted px-1 py-px font-mono text-[0.9em] text-fg">
          {part.slice(1, -1)}
        </code>
      );
    const match = /^\[([^\]]+)\]\(([^)]+)\)$/.exec(part);
    return match ? (
      <a key={i} href={match[2]} className="font-medium text-accent-text hover:underline" rel="noreferrer">
        {match[1]}
      </a>
    ) : (
      part
    );
  });
  return <>{parts}</>;
}
