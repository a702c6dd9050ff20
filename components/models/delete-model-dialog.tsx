'use client';

import { useState } from 'react';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { Input } from '@/components/ui/input';

interface DeleteModelDialogProps {
  open: boolean;
  /** The name to type: the model's own name, which people know without looking it up. */
  name: string;
  checkpointCount: number;
  pending: boolean;
  error: string | null;
  onConfirm: () => void;
  onCancel: () => void;
}

/** Deleting a model removes its checkpoints, run history and trajectories for good: typing the name proves intent. */
export function DeleteModelDialog({
  open,
  name,
  checkpointCount,
  pending,
  error,
  onConfirm,
  onCancel,
}: DeleteModelDialogProps) {
  const [typed, setTyped] = useState('');
  const matches = typed.trim() === name;
  return (
    <ConfirmDialog
      open={open}
      title={`Delete ${name}?`}
      description={
        <>
          This deletes the model, its {checkpointCount.toLocaleString('en')} checkpoint
          {checkpointCount === 1 ? '' : 's'}, its run history and its trajectories. Running jobs fail. This cannot be
          undone.
        </>
      }
      confirmLabel="Delete model"
      pending={pending}
      error={error}
      confirmDisabled={!matches}
      onConfirm={() => {
        if (matches) onConfirm();
      }}
      onCancel={() => {
        setTyped('');
        onCancel();
      }}
    >
      <label htmlFor="delete-model-name" className="mb-1.5 block text-sm text-fg">
        Type <span className="font-mono font-medium select-all">{name}</span> to confirm
      </label>
      <Input
        id="delete-model-name"
        value={typed}
        onChange={(event) => setTyped(event.target.value)}
        autoComplete="off"
        spellCheck={false}
        data-testid="delete-model-confirm-name"
      />
    </ConfirmDialog>
  );
}
