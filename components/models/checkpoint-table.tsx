'use client';

import Link from 'next/link';
import { useEffect, useState } from 'react';
import { Badge } from '@/components/ui/badge';
import { BreakableText } from '@/components/ui/breakable-text';
import { Button, buttonClassName } from '@/components/ui/button';
import { writeClipboard } from '@/components/ui/copy-button';
import { ChatIcon, CheckIcon, ChevronDownIcon, CopyIcon, SparklesIcon, TrashIcon } from '@/components/ui/icons';
import { MenuButton } from '@/components/ui/menu';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { Tooltip } from '@/components/ui/tooltip';
import type { InferenceName } from '@/lib/client/chat/inference-names';
import { formatNumber } from '@/lib/client/format/trajectory-view';
import type { CheckpointDto } from '@/lib/schemas/checkpoints';

interface CheckpointTableProps {
  checkpoints: CheckpointDto[];
  metricColumns: string[];
  bestId: string | null;
  bestMetric: string | null;
  /** Every checkpoint scored the same on bestMetric: each is marked tied and none best. */
  allTied?: boolean;
  /** Every name a client can send as `model` to reach this step (see checkpointNames). */
  namesFor: (step: number) => InferenceName[];
  playgroundHrefFor: (step: number) => string;
  /** The SFT form, starting from this checkpoint. */
  fineTuneHrefFor: (step: number) => string;
  onDelete: (checkpoint: CheckpointDto) => void;
}

/** The row's copy action: a menu of the step's names, each copied exactly as a client sends it. */
function CopyNameMenu({ step, names }: { step: number; names: InferenceName[] }) {
  const [state, setState] = useState<{ kind: 'idle' | 'copied' | 'failed'; label?: string }>({ kind: 'idle' });
  const [menuOpen, setMenuOpen] = useState(false);

  useEffect(() => {
    if (state.kind === 'idle') return;
    const timer = setTimeout(() => setState({ kind: 'idle' }), 2000);
    return () => clearTimeout(timer);
  }, [state]);

  async function copy(name: InferenceName) {
    try {
      await writeClipboard(name.value);
      setState({ kind: 'copied', label: name.label });
    } catch {
      setState({ kind: 'failed' });
    }
  }

  const label = `Copy model name of step ${step}`;
  return (
    <>
      <Tooltip
        content={state.kind === 'copied' ? `Copied ${state.label?.toLowerCase()} name` : label}
        disabled={menuOpen}
      >
        <MenuButton
          label={label}
          className="gap-0.5 px-1.5"
          onOpenChange={setMenuOpen}
          data-testid="copy-name-menu"
          items={names.map((n) => ({
            key: n.label,
            onSelect: () => void copy(n),
            'data-testid': 'copy-name-item',
            content: (
              <>
                <span className="text-xs font-medium text-fg-muted">{n.label}</span>
                <span className="font-mono text-[12.5px] break-all text-fg">{n.value}</span>
              </>
            ),
          }))}
        >
          {state.kind === 'copied' ? <CheckIcon className="size-3.5" /> : <CopyIcon className="size-3.5" />}
          <ChevronDownIcon className="size-3 opacity-70" />
        </MenuButton>
      </Tooltip>
      <span role="status" className="sr-only">
        {state.kind === 'copied'
          ? `Copied the ${state.label?.toLowerCase()} name to the clipboard`
          : state.kind === 'failed'
            ? 'Could not copy: select the text and copy it by hand'
            : ''}
      </span>
    </>
  );
}

export function CheckpointTable({
  checkpoints,
  metricColumns,
  bestId,
  bestMetric,
  allTied = false,
  namesFor,
  playgroundHrefFor,
  fineTuneHrefFor,
  onDelete,
}: CheckpointTableProps) {
  return (
    <Table stacked data-testid="checkpoints-table">
      <caption className="sr-only">Checkpoints</caption>
      <thead>
        <tr>
          <Th className="text-right">Step</Th>
          {metricColumns.map((m) => (
            <Th key={m} className="text-right normal-case">
              <BreakableText text={m} />
            </Th>
          ))}
          <Th className="text-right">Created</Th>
          <Th className="text-right">
            <span className="sr-only">Actions</span>
          </Th>
        </tr>
      </thead>
      <tbody>
        {checkpoints.map((c) => (
          // The id is a link target (a Tinker sampler save links to its checkpoint): scrolled to clear of the sticky
          // header, and tinted while it is the target.
          <Tr
            key={c.id}
            id={`checkpoint-${c.step}`}
            data-testid="checkpoint-row"
            data-step={c.step}
            className="scroll-mt-24 target:bg-accent-soft/60"
          >
            <Td label="Step" className="text-right whitespace-nowrap tabular-nums">
              <span className="inline-flex items-center gap-2">
                {c.id === bestId ? (
                  <Badge tone="success" className="text-[11px]">
                    <span data-testid="best-badge">Best</span>
                    <span className="sr-only"> by {bestMetric}</span>
                  </Badge>
                ) : allTied && bestMetric && Number.isFinite(c.metrics[bestMetric]) ? (
                  <Badge className="text-[11px]">
                    <span data-testid="tied-badge">Tied</span>
                    <span className="sr-only"> on {bestMetric}</span>
                  </Badge>
                ) : null}
                <span className="font-medium text-fg">{c.step.toLocaleString('en')}</span>
              </span>
            </Td>
            {metricColumns.map((m) => {
              const v = c.metrics[m];
              return (
                <Td label={m} key={m} className="text-right tabular-nums">
                  {typeof v === 'number' ? formatNumber(v) : <span className="text-fg-subtle">—</span>}
                </Td>
              );
            })}
            <Td label="Created" className="text-right whitespace-nowrap text-fg-muted">
              {c.created_at ? <RelativeTime iso={c.created_at} /> : '—'}
            </Td>
            <Td className="text-right">
              <div className="inline-flex items-center gap-1">
                <CopyNameMenu step={c.step} names={namesFor(c.step)} />
                <Tooltip content={`Open step ${c.step} in the playground`}>
                  <Link
                    href={playgroundHrefFor(c.step)}
                    className={buttonClassName({ variant: 'ghost', size: 'sm' })}
                    aria-label={`Open step ${c.step} in the playground`}
                  >
                    <ChatIcon className="size-3.5" />
                  </Link>
                </Tooltip>
                <Tooltip content={`Fine-tune from step ${c.step}`}>
                  <Link
                    href={fineTuneHrefFor(c.step)}
                    className={buttonClassName({ variant: 'ghost', size: 'sm' })}
                    aria-label={`Fine-tune from step ${c.step}`}
                  >
                    <SparklesIcon className="size-3.5" />
                  </Link>
                </Tooltip>
                <Tooltip content={`Delete step ${c.step}`}>
                  <Button
                    variant="danger-ghost"
                    size="sm"
                    className="w-8 px-0"
                    aria-label={`Delete step ${c.step}`}
                    onClick={() => onDelete(c)}
                  >
                    <TrashIcon className="size-3.5" />
                  </Button>
                </Tooltip>
              </div>
            </Td>
          </Tr>
        ))}
      </tbody>
    </Table>
  );
}
