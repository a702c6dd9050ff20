'use client';

import type { z } from 'zod';
import { afterHydration } from '@/components/ui/after-hydration';
import type { baseModelSchema } from '@/lib/schemas/base-models';
import type { CreateModelBody } from '@/lib/schemas/models';

export type BaseModelDto = z.infer<typeof baseModelSchema>;

export interface CreateModelDialogProps {
  open: boolean;
  entity: string;
  projects: string[];
  baseModels: BaseModelDto[];
  /** Creates the model; a rejection is shown in the dialog, which stays open. */
  onSubmit: (body: CreateModelBody) => Promise<unknown>;
  onClose: () => void;
}

/**
 * The new-model dialog (create-model-dialog-form.tsx). Its code, the form library included, loads after hydration:
 * the dialog is closed on every first paint, so the Models page's first load need not carry it.
 */
export const CreateModelDialog = afterHydration<CreateModelDialogProps>(
  () => import('./create-model-dialog-form'),
  () => null,
);
