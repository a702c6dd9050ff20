import { CopyButton } from '@/components/ui/copy-button';
import type { InferenceName } from '@/lib/client/chat/inference-names';

/** The names a client can send as `model` to /v1/chat/completions, each with its own copy button. */
export function InferenceNamesList({ names }: { names: InferenceName[] }) {
  return (
    <dl className="divide-y divide-line" data-testid="inference-names">
      {names.map((n) => (
        <div key={n.label} className="flex items-center gap-3 py-2 first:pt-0 last:pb-0">
          <dt className="w-20 shrink-0 text-xs font-medium text-fg-subtle">{n.label}</dt>
          <dd className="min-w-0 flex-1 truncate font-mono text-[12.5px] text-fg" title={n.value}>
            {n.value}
          </dd>
          <dd className="shrink-0">
            <CopyButton
              value={n.value}
              iconOnly
              ariaLabel={`Copy ${n.label.toLowerCase()} name ${n.value}`}
              variant="ghost"
            />
          </dd>
        </div>
      ))}
    </dl>
  );
}
