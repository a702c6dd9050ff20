'use client';

import { useQueryStates } from 'nuqs';
import { playgroundSearchParsers } from './search-params';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { ChatPane, type PaneState, type PaneTurn, type TextView } from '@/components/playground/chat-pane';
import { BlindVote } from '@/components/playground/blind-vote';
import { ExportCodeDialog } from '@/components/playground/export-code-dialog';
import { ParametersPanel } from '@/components/playground/parameters-panel';
import { PromptSetPanel } from '@/components/playground/prompt-set';
import { TokenLegend } from '@/components/playground/token-view';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardHeader } from '@/components/ui/card';
import { cx } from '@/components/ui/cx';
import { ColumnsIcon, EyeOffIcon, SendIcon, StopIcon, TrashIcon } from '@/components/ui/icons';
import { Tooltip } from '@/components/ui/tooltip';
import { PageHeader } from '@/components/ui/page-header';
import { SegmentedControl } from '@/components/ui/segmented-control';
import { Textarea } from '@/components/ui/textarea';
import { applyChunk, emptyReply, markStopped, type AssistantReply } from '@/lib/client/chat-reply';
import {
  buildChatRequest,
  DEFAULT_PARAMS,
  validateParams,
  type ChatParams,
  type PlaygroundMessage,
  type PlaygroundRequest,
} from '@/lib/client/chat-request';
import { streamChatCompletion } from '@/lib/client/chat-stream';
import { MAX_COMPARE, otherStepOfModel, splitModelName } from '@/lib/client/model-choice';
import { checkpointPickerQuery } from '@/lib/client/queries/checkpoints';
import { usageKeys } from '@/lib/client/queries/usage';
import { useChatModelChoices } from '@/lib/client/use-chat-model-choices';

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

const newPane = (id: string, model: string): PaneState => ({
  id,
  model,
  turns: [],
  streaming: false,
  error: null,
  lastRequest: null,
});

/** The conversation a pane sends: the shared system prompt, then its own turns (first choice of each answer). */
function paneMessages(system: string, turns: PaneTurn[], next: string | null): PlaygroundMessage[] {
  const messages: PlaygroundMessage[] = [];
  if (system.trim() !== '') messages.push({ role: 'system', content: system });
  for (const turn of turns) {
    if (turn.role === 'user') messages.push({ role: 'user', content: turn.content });
    else if (turn.reply.choices[0]) messages.push({ role: 'assistant', content: turn.reply.choices[0].content });
  }
  if (next !== null) messages.push({ role: 'user', content: next });
  return messages;
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

export function PlaygroundClient({
  initialModels,
  initialPrompt = '',
  initialSystem = '',
  initialSeed,
  origin,
}: PlaygroundClientProps) {
  const queryClient = useQueryClient();
  const { baseModels, trainedModels, error: listError } = useChatModelChoices();

  // Ids by position: the server's HTML and the first client render must agree on them (they name inputs).
  const [panes, setPanes] = useState<PaneState[]>(() => initialModels.map((model, i) => newPane(`p${i}`, model)));
  const nextPaneId = useRef(initialModels.length);
  const [system, setSystem] = useState(initialSystem);
  const [draft, setDraft] = useState(initialPrompt);
  const [chosenParams, setParams] = useState<ChatParams>({ ...DEFAULT_PARAMS, seed: String(initialSeed) });
  // null until the person sets a temperature: until then it follows what is compared (see `params` below).
  const [chosenTemperature, setChosenTemperature] = useState<string | null>(null);
  const [showParamErrors, setShowParamErrors] = useState(false);
  const [view, setView] = useState<TextView>('text');
  const [exportPaneId, setExportPaneId] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  // Blind A/B: which pane is shown as A is drawn at random each round; `voted` ends a round.
  const [blind, setBlind] = useState(false);
  const [swapped, setSwapped] = useState(false);
  const [voted, setVoted] = useState(false);
  const abortRef = useRef<AbortController | null>(null);
  const draftRef = useRef<HTMLTextAreaElement>(null);

  const streaming = panes.some((p) => p.streaming);

  // Comparing checkpoints asks what training changed, and sampling noise would hide it: greedy (temperature 0)
  // whenever a trained model or checkpoint is in the comparison, until the person picks a temperature.
  const comparesTrained = panes.some((p) => {
    const { model, step } = splitModelName(p.model);
    return step !== null || trainedModels.has(model);
  });
  const params = useMemo<ChatParams>(
    () => ({
      ...chosenParams,
      temperature: chosenTemperature ?? (comparesTrained ? '0' : DEFAULT_PARAMS.temperature),
    }),
    [chosenParams, chosenTemperature, comparesTrained],
  );
  const paramErrors = useMemo(() => validateParams(params), [params]);

  // A blind comparison needs exactly two checkpoints of one trained model ("latest" resolved to its step).
  const blindSteps = useMemo(() => {
    if (panes.length !== 2) return null;
    const resolved = panes.map((p) => {
      const { model, step } = splitModelName(p.model);
      const record = trainedModels.get(model);
      return record ? { record, step: step ?? record.latest_step } : null;
    });
    const [x, y] = resolved;
    if (!x || !y || x.record.id !== y.record.id || x.step === null || y.step === null || x.step === y.step) return null;
    return { modelId: x.record.id, steps: [x.step, y.step] as const };
  }, [panes, trainedModels]);
  const blindOn = blind && blindSteps !== null;
  const shownPanes = blindOn && swapped ? [...panes].reverse() : panes;
  const lastPrompt = [...(panes[0]?.turns ?? [])].reverse().find((t) => t.role === 'user');
  const answered = panes.every((p) => {
    const last = p.turns.at(-1);
    return !p.streaming && !p.error && last?.role === 'assistant' && last.reply.choices.length > 0;
  });
  const hasParamErrors = Object.keys(paramErrors).length > 0;

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

  function updatePane(id: string, update: (pane: PaneState) => PaneState) {
    setPanes((all) => all.map((p) => (p.id === id ? update(p) : p)));
  }

  function updateReply(id: string, update: (reply: AssistantReply) => AssistantReply) {
    updatePane(id, (pane) => {
      const last = pane.turns.at(-1);
      if (last?.role !== 'assistant') return pane;
      const reply = update(last.reply);
      return reply === last.reply
        ? pane
        : { ...pane, turns: [...pane.turns.slice(0, -1), { role: 'assistant', reply }] };
    });
  }

  async function runPane(pane: PaneState, request: PlaygroundRequest, signal: AbortSignal) {
    try {
      await streamChatCompletion(request, {
        signal,
        onChunk: (chunk) => updateReply(pane.id, (reply) => applyChunk(reply, chunk)),
      });
      updatePane(pane.id, (p) => ({ ...p, streaming: false }));
    } catch (error) {
      if (isAbort(error)) {
        updateReply(pane.id, markStopped);
        updatePane(pane.id, (p) => ({ ...p, streaming: false }));
        return;
      }
      const message = error instanceof Error ? error.message : 'The request failed.';
      updatePane(pane.id, (p) => {
        const last = p.turns.at(-1);
        // An answer that never started is dropped; a partial one stays visible above the error.
        const turns = last?.role === 'assistant' && last.reply.choices.length === 0 ? p.turns.slice(0, -1) : p.turns;
        return { ...p, turns, streaming: false, error: message };
      });
    }
  }

  async function send(event?: FormEvent) {
    event?.preventDefault();
    const text = draft.trim();
    if (text === '' || streaming || panes.length === 0) return;
    if (hasParamErrors) {
      setShowParamErrors(true);
      document.querySelector<HTMLElement>('[data-testid="parameters-panel"] [aria-invalid="true"]')?.focus();
      return;
    }
    const controller = new AbortController();
    abortRef.current = controller;
    // Blind rounds are one prompt each, from a fresh conversation, with A and B drawn again.
    if (blindOn) {
      setSwapped(Math.random() < 0.5);
      setVoted(false);
    }
    const jobs = panes.map((pane) => ({
      pane,
      request: buildChatRequest(pane.model, paneMessages(system, blindOn ? [] : pane.turns, text), params),
    }));
    setPanes((all) =>
      all.map((pane) => {
        const job = jobs.find((j) => j.pane.id === pane.id);
        if (!job) return pane;
        return {
          ...pane,
          streaming: true,
          error: null,
          lastRequest: job.request,
          turns: [
            ...(blindOn ? [] : pane.turns),
            { role: 'user', content: text },
            { role: 'assistant', reply: emptyReply() },
          ],
        };
      }),
    );
    setDraft('');
    // A pre-filled prompt has been used: a reload or a shared link now shows the conversation's models only.
    void setUrlState({ prompt: null, system: null });
    await Promise.all(jobs.map(({ pane, request }) => runPane(pane, request, controller.signal)));
    if (abortRef.current === controller) abortRef.current = null;
    // The usage page counts these requests.
    void queryClient.invalidateQueries({ queryKey: usageKeys.all() });
    draftRef.current?.focus();
  }

  function stop() {
    abortRef.current?.abort();
  }

  function clear() {
    setPanes((all) => all.map((p) => ({ ...p, turns: [], error: null, lastRequest: null })));
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
    setAdding(true);
    try {
      const model = await comparisonModel(panes.map((p) => p.model));
      const id = `p${nextPaneId.current++}`;
      setPanes((all) => (all.length >= MAX_COMPARE ? all : [...all, newPane(id, model)]));
    } finally {
      setAdding(false);
    }
  }

  const exportPane = panes.find((p) => p.id === exportPaneId) ?? null;
  const exportRequest = exportPane
    ? (exportPane.lastRequest ??
      buildChatRequest(exportPane.model, paneMessages(system, exportPane.turns, draft.trim() || 'Hello!'), params))
    : null;

  return (
    <>
      <PageHeader
        title="Playground"
        description="Chat with a base model or any checkpoint, compare up to four side by side, and export the exact request as code."
        actions={
          <>
            <Button
              variant="secondary"
              onClick={() => void addPane()}
              disabled={panes.length >= MAX_COMPARE || streaming}
              aria-busy={adding || undefined}
              data-testid="add-model"
            >
              <ColumnsIcon className="size-4" />
              Compare
            </Button>
            <Tooltip
              content={
                blindSteps
                  ? 'Hide which checkpoint wrote which answer, then vote; the votes are kept with the model'
                  : 'Compare two checkpoints of one model to vote blind'
              }
            >
              <Button
                variant={blindOn ? 'primary' : 'secondary'}
                aria-pressed={blindOn}
                disabled={!blindSteps || streaming}
                onClick={() => {
                  setBlind(!blindOn);
                  setSwapped(Math.random() < 0.5);
                  setVoted(false);
                  clear();
                }}
                data-testid="blind-toggle"
              >
                <EyeOffIcon className="size-4" />
                Blind A/B
              </Button>
            </Tooltip>
            <Button
              variant="ghost"
              onClick={clear}
              disabled={streaming || panes.every((p) => p.turns.length === 0 && !p.error)}
            >
              <TrashIcon className="size-4" />
              Clear
            </Button>
          </>
        }
      />
      {listError ? (
        <Alert tone="danger" role="alert" title="Could not load the model list" className="mb-4">
          {listError.message}
        </Alert>
      ) : null}

      <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_17rem]">
        <div className="flex min-w-0 flex-col gap-4">
          <Card>
            <div className="flex flex-col gap-1.5 px-4 py-3">
              <label htmlFor="system-prompt" className="text-sm font-medium text-fg">
                System prompt
              </label>
              <Textarea
                id="system-prompt"
                rows={2}
                value={system}
                onChange={(event) => setSystem(event.target.value)}
                placeholder="You are a helpful assistant."
                className="resize-y"
              />
            </div>
          </Card>

          <div className="flex flex-wrap items-center justify-between gap-3">
            <SegmentedControl
              label="Show answers as"
              size="sm"
              value={view}
              options={VIEW_OPTIONS}
              onChange={setView}
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
            {shownPanes.map((pane, index) => (
              <ChatPane
                key={pane.id}
                pane={pane}
                index={index}
                blind={blindOn && !voted ? (index === 0 ? 'A' : 'B') : undefined}
                paneCount={panes.length}
                view={view}
                baseModels={baseModels}
                trainedModels={trainedModels}
                onModelChange={(model) => updatePane(pane.id, (p) => ({ ...p, model }))}
                onRemove={() => setPanes((all) => all.filter((p) => p.id !== pane.id))}
                onExport={() => setExportPaneId(pane.id)}
              />
            ))}
          </div>

          {blindOn && blindSteps && lastPrompt ? (
            <BlindVote
              // A new round (a new prompt, or A and B drawn again) is a new vote.
              key={`${lastPrompt.content}|${swapped}|${panes[0].turns.length}`}
              pair={{
                modelId: blindSteps.modelId,
                a: blindSteps.steps[swapped ? 1 : 0],
                b: blindSteps.steps[swapped ? 0 : 1],
              }}
              prompt={lastPrompt.role === 'user' ? lastPrompt.content : ''}
              ready={answered}
              onVoted={() => setVoted(true)}
            />
          ) : null}

          <form onSubmit={send} aria-label="Message composer">
            <Card className="shadow-md dark:shadow-none">
              <label htmlFor="composer" className="sr-only">
                Message
              </label>
              <Textarea
                id="composer"
                ref={draftRef}
                rows={3}
                value={draft}
                onChange={(event) => setDraft(event.target.value)}
                onKeyDown={(event) => {
                  // Enter alone adds a line (messages are often multi-line); Ctrl/⌘+Enter sends.
                  if (event.key === 'Enter' && (event.metaKey || event.ctrlKey)) {
                    event.preventDefault();
                    void send();
                  }
                }}
                placeholder={panes.length > 1 ? `Message all ${panes.length} models…` : 'Message the model…'}
                aria-describedby="composer-hint"
                className="resize-none rounded-none border-0 px-4 py-3 shadow-none focus:ring-0"
                data-testid="composer"
              />
              <div className="flex flex-wrap items-center justify-between gap-2 border-t border-line px-3 py-2">
                <p id="composer-hint" className="text-xs text-fg-subtle">
                  {showParamErrors && hasParamErrors ? (
                    <span className="font-medium text-danger-text" role="alert">
                      Fix the highlighted parameters first.
                    </span>
                  ) : (
                    'Ctrl+Enter or ⌘+Enter to send'
                  )}
                </p>
                {streaming ? (
                  <Button variant="secondary" onClick={stop} data-testid="stop">
                    <StopIcon className="size-4" />
                    Stop
                  </Button>
                ) : (
                  <Button type="submit" disabled={draft.trim() === '' || panes.length === 0} data-testid="send">
                    <SendIcon className="size-4" />
                    Send
                  </Button>
                )}
              </div>
            </Card>
          </form>

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
              errors={showParamErrors || hasParamErrors ? paramErrors : {}}
              onChange={(next) => {
                if (next.temperature !== params.temperature) setChosenTemperature(next.temperature);
                setParams(next);
              }}
              onReset={() => {
                setChosenTemperature(null);
                setParams({ ...DEFAULT_PARAMS, seed: params.seed });
              }}
              temperatureHint={
                chosenTemperature === null && comparesTrained ? 'Greedy while comparing checkpoints' : undefined
              }
            />
          </Card>
        </aside>
      </div>

      <ExportCodeDialog
        open={exportPane !== null}
        request={exportRequest}
        model={exportPane?.model ?? ''}
        origin={origin}
        sent={exportPane?.lastRequest != null}
        onClose={() => setExportPaneId(null)}
      />
    </>
  );
}
