'use client';

import Link from 'next/link';
import { Badge } from '@/components/ui/badge';
import { BreakableText } from '@/components/ui/breakable-text';
import { buttonClassName } from '@/components/ui/button';
import { CopyButton } from '@/components/ui/copy-button';
import { ChatIcon } from '@/components/ui/icons';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { Tooltip } from '@/components/ui/tooltip';
import { formatBytes } from '@/lib/client/tinker/tinker-format';
import type { TinkerSavedWeightsDto } from '@/lib/schemas/tinker-clients';

/**
 * A training client's saves (docs/tinker.md §2.6): training states (`save_state`: adapter and AdamW state, loadable
 * into any training client) and sampler weights (`save_weights_for_sampler`: a checkpoint of the model, which the
 * playground and chat completions serve). Each with the tinker:// path the SDK takes, to copy.
 */
export function TinkerSavedWeightsTable({
  saved,
  checkpointHref,
  playgroundHref,
}: {
  saved: TinkerSavedWeightsDto[];
  /** The checkpoint's row in the model page's checkpoint table. */
  checkpointHref: (step: number) => string;
  playgroundHref: (step: number) => string;
}) {
  return (
    <Table stacked data-testid="tinker-saved-table">
      <caption className="sr-only">Saved weights of this training client, sampler weights first</caption>
      <thead>
        <tr>
          <Th>Weights</Th>
          <Th>Checkpoint</Th>
          <Th className="text-right">Size</Th>
          <Th className="text-right">Expires</Th>
          <Th className="text-right">Saved</Th>
        </tr>
      </thead>
      <tbody>
        {saved.map((w) => (
          <Tr key={w.tinker_path} data-testid="tinker-saved-row" data-kind={w.kind}>
            <Td label="Weights">
              <div className="flex flex-wrap items-center gap-1.5">
                <span className="font-medium text-fg" data-testid="tinker-saved-name">
                  <BreakableText text={w.name} />
                </span>
                <span className="text-xs text-fg-muted">
                  {w.kind === 'sampler' ? 'sampler weights' : 'training state'}
                </span>
                {w.ephemeral ? (
                  <Badge tone="neutral" className="text-[11px]">
                    <span
                      data-testid="tinker-saved-ephemeral"
                      title="An unnamed save (save_weights_and_get_sampling_client): only the three latest are kept"
                    >
                      ephemeral
                    </span>
                  </Badge>
                ) : null}
              </div>
              <div className="mt-1 flex max-w-md min-w-48 items-start gap-1">
                <code className="min-w-0 pt-1 font-mono text-xs text-fg-muted" data-testid="tinker-saved-path">
                  <BreakableText text={w.tinker_path} at="slash" />
                </code>
                <CopyButton
                  value={w.tinker_path}
                  iconOnly
                  ariaLabel={`Copy the path of ${w.name}`}
                  variant="ghost"
                  className="h-7 shrink-0"
                  data-testid="tinker-saved-copy"
                />
              </div>
            </Td>
            <Td label="Checkpoint" className="whitespace-nowrap">
              {w.kind === 'sampler' && w.step !== null ? (
                <span className="inline-flex items-center gap-1">
                  <Link
                    href={checkpointHref(w.step)}
                    className="text-accent-text tabular-nums hover:underline"
                    data-testid="tinker-saved-step"
                  >
                    step {w.step.toLocaleString('en')}
                  </Link>
                  <Tooltip content={`Open step ${w.step} in the playground`}>
                    <Link
                      href={playgroundHref(w.step)}
                      className={buttonClassName({ variant: 'ghost', size: 'sm' })}
                      aria-label={`Open step ${w.step} in the playground`}
                    >
                      <ChatIcon className="size-3.5" />
                    </Link>
                  </Tooltip>
                </span>
              ) : (
                <span className="text-fg-subtle">—</span>
              )}
            </Td>
            <Td label="Size" className="text-right whitespace-nowrap text-fg-muted tabular-nums">
              {formatBytes(w.size_bytes)}
            </Td>
            <Td label="Expires" className="text-right whitespace-nowrap text-fg-muted">
              {w.expires_at ? <RelativeTime iso={w.expires_at} /> : 'never'}
            </Td>
            <Td label="Saved" className="text-right whitespace-nowrap text-fg-muted">
              <RelativeTime iso={w.created_at} />
            </Td>
          </Tr>
        ))}
      </tbody>
    </Table>
  );
}
