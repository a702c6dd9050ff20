import { Badge, type BadgeTone } from '@/components/ui/badge';
import { cx } from '@/components/ui/cx';
import type { DisplayMessage } from '@/lib/client/format/trajectory-view';

const ROLE_TONES: Record<string, BadgeTone> = { system: 'neutral', user: 'info', assistant: 'accent', tool: 'warning' };

/**
 * One message. Content is untrusted (whatever a client logged), so it is only ever a React text node,
 * never HTML or markdown; `whitespace-pre-wrap` keeps indentation and line breaks as sent.
 */
export function MessageView({ message }: { message: DisplayMessage }) {
  return (
    <li
      className={cx(
        'rounded-lg border px-3 py-2',
        message.isChoice ? 'border-accent/30 bg-accent-soft/40' : 'border-line bg-surface',
      )}
      data-testid="trajectory-message"
      data-role={message.role}
    >
      <div className="mb-1 flex flex-wrap items-center gap-1.5">
        <Badge tone={ROLE_TONES[message.role] ?? 'neutral'}>{message.role}</Badge>
        {message.isChoice ? (
          <span className="text-[11px] text-fg-subtle">sampled{message.hasLogprobs ? ', with logprobs' : ''}</span>
        ) : null}
        {message.toolCallId ? (
          <span className="font-mono text-[11px] text-fg-subtle">reply to {message.toolCallId}</span>
        ) : null}
      </div>
      {message.content ? (
        <pre
          className="font-sans text-[13px] leading-relaxed break-words whitespace-pre-wrap text-fg"
          data-testid="message-content"
        >
          {message.content}
        </pre>
      ) : null}
      {message.toolCalls.length > 0 ? (
        <ul className="mt-1.5 space-y-1">
          {message.toolCalls.map((call, i) => (
            <li
              key={call.id ?? i}
              className="rounded-md bg-surface-muted px-2 py-1 font-mono text-xs break-words whitespace-pre-wrap text-fg-muted"
            >
              {call.name}({call.arguments})
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}
