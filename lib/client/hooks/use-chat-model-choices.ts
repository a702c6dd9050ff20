'use client';

import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import { modelBaseName } from '../chat/inference-names';
import { chatModelsQuery, modelPickerQuery } from '../queries/models';

/**
 * What a model picker offers (the playground's panes, an eval run's targets and judge): the servable names of
 * GET /v1/models, split into trained models that match a record (those get a checkpoint picker) and everything else
 * (base and upstream models; one whose engine is down is left out, as chat would answer 503).
 */
export function useChatModelChoices() {
  const chatModels = useQuery(chatModelsQuery());
  const records = useQuery(modelPickerQuery(null));
  const choices = useMemo(() => {
    const byName = new Map<string, ModelSummaryDto>();
    for (const record of records.data?.data ?? []) byName.set(modelBaseName(record), record);
    const trained = new Map<string, ModelSummaryDto>();
    const base: string[] = [];
    for (const { id, available } of chatModels.data?.data ?? []) {
      const record = byName.get(id);
      if (record) trained.set(id, record);
      else if (available !== false) base.push(id);
    }
    return { baseModels: base, trainedModels: trained };
  }, [chatModels.data, records.data]);
  return { ...choices, error: chatModels.error ?? records.error, pending: chatModels.isPending || records.isPending };
}
