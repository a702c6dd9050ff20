'use client';

import { Button } from '@/components/ui/button';
import { ColumnsIcon, EyeOffIcon, TrashIcon } from '@/components/ui/icons';
import { Tooltip } from '@/components/ui/tooltip';

/** The playground header's buttons: add a pane to compare, blind A/B on or off, clear every conversation. */
export function PlaygroundActions({
  canAdd,
  adding,
  onAdd,
  blindOn,
  canBlind,
  streaming,
  onToggleBlind,
  canClear,
  onClear,
}: {
  canAdd: boolean;
  adding: boolean;
  onAdd: () => void;
  blindOn: boolean;
  /** Two checkpoints of one trained model are compared (a blind vote is possible). */
  canBlind: boolean;
  streaming: boolean;
  onToggleBlind: () => void;
  canClear: boolean;
  onClear: () => void;
}) {
  return (
    <>
      <Button
        variant="secondary"
        onClick={onAdd}
        disabled={!canAdd || streaming}
        aria-busy={adding || undefined}
        data-testid="add-model"
      >
        <ColumnsIcon className="size-4" />
        Compare
      </Button>
      <Tooltip
        content={
          canBlind
            ? 'Hide which checkpoint wrote which answer, then vote; the votes are kept with the model'
            : 'Compare two checkpoints of one model to vote blind'
        }
      >
        <Button
          variant={blindOn ? 'primary' : 'secondary'}
          aria-pressed={blindOn}
          disabled={!canBlind || streaming}
          onClick={onToggleBlind}
          data-testid="blind-toggle"
        >
          <EyeOffIcon className="size-4" />
          Blind A/B
        </Button>
      </Tooltip>
      <Button variant="ghost" onClick={onClear} disabled={streaming || !canClear}>
        <TrashIcon className="size-4" />
        Clear
      </Button>
    </>
  );
}
