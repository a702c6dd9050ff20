'use client';

import { useQueryStates } from 'nuqs';
import { playgroundSearchParsers } from './search-params';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useReducer, useRef, type FormEvent } from 'react';
import { ChatPane } from '@/components/playground/chat-pane';
import { BlindVote } from '@/components/playground/blind-vote';
import { Composer } from '@/components/playground/composer';
import { ExportCodeDialog } from '@/components/playground/export-code-dialog';
import { ParametersPanel } from '@/components/playground/parameters-panel';
import { PlaygroundActions } from '@/components/playground/playground-actions';
import { PromptSetPanel } from '@/components/playground/prompt-set';
import { SystemPrompt } from '@/components/playground/system-prompt';
import { TokenLegend } from '@/components/playground/token-view';
import { Alert } from '@/components/ui/alert';
import { Card, CardHeader } from '@/components/ui/card';
import { cx } from '@/components/ui/cx';
import { PageHeader } from '@/components/ui/page-header';
import { SegmentedControl } from '@/components/ui/segmented-control';
import { buildChatRequest, validateParams, type PlaygroundRequest } from '@/lib/client/chat/chat-request';
import { streamChatCompletion } from '@/lib/client/chat/chat-stream';
import { MAX_COMPARE, otherStepOfModel, splitModelName } from '@/lib/client/chat/model-choice';
import {
  allAnswered,
  blindStepsOf,
  comparesTrained as comparesTrainedOf,
  effectiveParams,
  exportRequestOf,
  initialPlaygroundState,
  lastPromptOf,
  paneMessages,
  playgroundReducer,
  type PaneState,
} from '@/lib/client/playground/state';
import { checkpointPickerQuery } from '@/lib/client/queries/checkpoints';
import { usageKeys } from '@/lib/client/queries/usage';
import { useChatModelChoices } from '@/lib/client/hooks/use-chat-model-choices';

interface PlaygroundClientProps {
  initialModels: string[];
  /** `?prompt=` and `?system=`: an eval example opened here (search-params.ts). */
  initialPrompt?: string;
  initialSystem?: string;
  initialSeed: number;
  origin: string;
}

const VIEW_OPTIONS = [
  { value: 'text', label: 'Text' },
  { value: 'tokens', label: 'Tokens' },
] as const;

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

/**
 * The playground: its state and every change to it are lib/client/playground/state.ts (a unit-tested reducer); this
 * component runs the effects (streams, the URL, the checkpoint list an added pane is chosen from) and lays it out.
 */
export function PlaygroundClient({
  initialModels,
  initialPrompt = '',
  initialSystem = '',
  initialSeed,
  origin,
}: PlaygroundClientProps) {
  const queryClient = useQueryClient();
  const { baseModels, trainedModels, error: listError } = useChatModelChoices();
  const [state, dispatch] = useReducer(
    playgroundReducer,
    { models: initialModels, prompt: initialPrompt, system: initialSystem, seed: initialSeed },
    initialPlaygroundState,
  );
  const { panes, system, draft, view, blind, swapped, voted, adding } = state;
  const abortRef = useRef<AbortController | null>(null);
  const draftRef = useRef<HTMLTextAreaElement>(null);

  const streaming = panes.some((p) => p.streaming);
  const comparesTrained = comparesTrainedOf(panes, trainedModels);
  const params = effectiveParams(state, comparesTrained);
  const paramErrors = validateParams(params);
  const hasParamErrors = Object.keys(paramErrors).length > 0;
  const blindSteps = blindStepsOf(panes, trainedModels);
  const blindOn = blind && blindSteps !== null;
  const shownPanes = blindOn && swapped ? [...panes].reverse() : panes;
  const lastPrompt = lastPromptOf(panes);

  // The URL follows the compared models, so that a comparison can be shared or reloaded. The panes own the
  // models (each pane also holds its conversation); the URL is written from them, never read back after the
  // first render.
  const [, setUrlState] = useQueryStates(playgroundSearchParsers, { history: 'replace' });
  const modelKey = panes.map((p) => p.model).join('\n');
  useEffect(() => {
    const models = modelKey.split('\n').filter(Boolean);
    void setUrlState({ model: models.length > 0 ? models : null });
  }, [modelKey, setUrlState]);

  // A stream left running when the page unmounts would keep the server generating for nobody.
  useEffect(() => () => abortRef.current?.abort(), []);

  async function runPane(paneId: string, request: PlaygroundRequest, signal: AbortSignal) {
    try {
      await streamChatCompletion(request, { signal, onChunk: (chunk) => dispatch({ type: 'chunk', paneId, chunk }) });
      dispatch({ type: 'done', paneId });
    } catch (error) {
      if (isAbort(error)) dispatch({ type: 'stopped', paneId });
      else
        dispatch({ type: 'failed', paneId, message: error instanceof Error ? error.message : 'The request failed.' });
    }
  }

  async function send(event?: FormEvent) {
    event?.preventDefault();
    const text = draft.trim();
    if (text === '' || streaming || panes.length === 0) return;
    if (hasParamErrors) {
      dispatch({ type: 'showParamErrors' });
      document.querySelector<HTMLElement>('[data-testid="parameters-panel"] [aria-invalid="true"]')?.focus();
      return;
    }
    const controller = new AbortController();
    abortRef.current = controller;
    const requests: Record<string, PlaygroundRequest> = {};
    for (const pane of panes)
      requests[pane.id] = buildChatRequest(pane.model, paneMessages(system, blindOn ? [] : pane.turns, text), params);
    // Blind rounds are one prompt each, from a fresh conversation, with A and B drawn again.
    dispatch({ type: 'sent', text, requests, blind: blindOn, swapped: Math.random() < 0.5 });
    // A pre-filled prompt has been used: a reload or a shared link now shows the conversation's models only.
    void setUrlState({ prompt: null, system: null });
    await Promise.all(Object.entries(requests).map(([id, request]) => runPane(id, request, controller.signal)));
    if (abortRef.current === controller) abortRef.current = null;
    // The usage page counts these requests.
    void queryClient.invalidateQueries({ queryKey: usageKeys.all() });
    draftRef.current?.focus();
  }

  /**
   * Beside a checkpoint the likelier comparison is the same model at another step (step 0 first, then the
   * previous checkpoint); otherwise another model. The pane the page was opened on decides: the first one
   * that holds a trained model.
   */
  async function comparisonModel(models: string[]): Promise<string> {
    const source = models.find((m) => trainedModels.has(splitModelName(m).model));
    if (source) {
      const record = trainedModels.get(splitModelName(source).model)!;
      try {
        const list = await queryClient.fetchQuery(checkpointPickerQuery(record.id));
        const other = otherStepOfModel(
          source,
          models,
          list.data.map((c) => c.step),
          record.latest_step,
        );
        if (other) return other;
      } catch {
        // The checkpoint list is only a hint here: without it, fall back to another model.
      }
    }
    const used = new Set(models);
    // Another model: comparing a model with itself is rarely what the click meant.
    return [...baseModels, ...trainedModels.keys()].find((m) => !used.has(m)) ?? models.at(-1) ?? '';
  }

  async function addPane() {
    if (panes.length >= MAX_COMPARE || adding) return;
    dispatch({ type: 'addStarted' });
    let model: string | null = null;
    try {
      model = await comparisonModel(panes.map((p) => p.model));
    } finally {
      dispatch({ type: 'addFinished', model });
    }
  }

  const exportPane = panes.find((p) => p.id === state.exportPaneId) ?? null;

  return (
    <>
      <PageHeader
        title="Playground"
        description="Chat with a base model or any checkpoint, compare up to four side by side, and export the exact request as code."
        actions={
          <PlaygroundActions
            canAdd={panes.length < MAX_COMPARE}
            adding={adding}
            onAdd={() => void addPane()}
            blindOn={blindOn}
            canBlind={blindSteps !== null}
            streaming={streaming}
            onToggleBlind={() => dispatch({ type: 'blind', on: !blindOn, swapped: Math.random() < 0.5 })}
            canClear={!panes.every((p) => p.turns.length === 0 && !p.error)}
            onClear={() => dispatch({ type: 'clear' })}
          />
        }
      />
      {listError ? (
        <Alert tone="danger" role="alert" title="Could not load the model list" className="mb-4">
          {listError.message}
        </Alert>
      ) : null}

      <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_17rem]">
        <div className="flex min-w-0 flex-col gap-4">
          <SystemPrompt value={system} onChange={(text) => dispatch({ type: 'system', text })} />

          <div className="flex flex-wrap items-center justify-between gap-3">
            <SegmentedControl
              label="Show answers as"
              size="sm"
              value={view}
              options={VIEW_OPTIONS}
              onChange={(next) => dispatch({ type: 'view', view: next })}
              data-testid="view-toggle"
            />
            {view === 'tokens' ? <TokenLegend /> : null}
          </div>

          <div
            className={cx(
              'grid items-start gap-4',
              panes.length === 2 && 'md:grid-cols-2',
              panes.length >= 3 && 'md:grid-cols-2',
            )}
            data-testid="chat-panes"
          >
            {shownPanes.map((pane: PaneState, index) => (
              <ChatPane
                key={pane.id}
                pane={pane}
                index={index}
                blind={blindOn && !voted ? (index === 0 ? 'A' : 'B') : undefined}
                paneCount={panes.length}
                view={view}
                baseModels={baseModels}
                trainedModels={trainedModels}
                onModelChange={(model) => dispatch({ type: 'paneModel', paneId: pane.id, model })}
                onRemove={() => dispatch({ type: 'removePane', paneId: pane.id })}
                onExport={() => dispatch({ type: 'export', paneId: pane.id })}
              />
            ))}
          </div>

          {blindOn && blindSteps && lastPrompt !== null ? (
            <BlindVote
              // A new round (a new prompt, or A and B drawn again) is a new vote.
              key={`${lastPrompt}|${swapped}|${panes[0].turns.length}`}
              pair={{
                modelId: blindSteps.modelId,
                a: blindSteps.steps[swapped ? 1 : 0],
                b: blindSteps.steps[swapped ? 0 : 1],
              }}
              prompt={lastPrompt}
              ready={allAnswered(panes)}
              onVoted={() => dispatch({ type: 'voted' })}
            />
          ) : null}

          <Composer
            draftRef={draftRef}
            draft={draft}
            onDraft={(text) => dispatch({ type: 'draft', text })}
            onSend={(event) => void send(event)}
            onStop={() => abortRef.current?.abort()}
            streaming={streaming}
            paneCount={panes.length}
            paramError={state.showParamErrors && hasParamErrors}
          />

          <PromptSetPanel
            models={panes.map((p) => p.model)}
            system={system}
            params={params}
            disabled={streaming || blindOn || hasParamErrors}
          />
        </div>

        <aside aria-labelledby="parameters-title" className="lg:sticky lg:top-20 lg:self-start xl:top-6">
          <Card>
            <CardHeader
              id="parameters-title"
              title="Parameters"
              description="Shared by every model in the comparison."
            />
            <ParametersPanel
              params={params}
              errors={state.showParamErrors || hasParamErrors ? paramErrors : {}}
              onChange={(next) => dispatch({ type: 'params', params: next, shownTemperature: params.temperature })}
              onReset={() => dispatch({ type: 'resetParams' })}
              temperatureHint={
                state.chosenTemperature === null && comparesTrained ? 'Greedy while comparing checkpoints' : undefined
              }
            />
          </Card>
        </aside>
      </div>

      <ExportCodeDialog
        open={exportPane !== null}
        request={exportRequestOf(state, params)}
        model={exportPane?.model ?? ''}
        origin={origin}
        sent={exportPane?.lastRequest != null}
        onClose={() => dispatch({ type: 'export', paneId: null })}
      />
    </>
  );
}
