import type { ModelSummaryDto } from '@/lib/schemas/models';
import type { ChatCompletionChunk } from '@/lib/schemas/chat';
import { applyChunk, emptyReply, markStopped, type AssistantReply } from '../chat/chat-reply';
import {
  buildChatRequest,
  DEFAULT_PARAMS,
  type ChatParams,
  type PlaygroundMessage,
  type PlaygroundRequest,
} from '../chat/chat-request';
import { MAX_COMPARE, splitModelName } from '../chat/model-choice';

/*
 * The playground's state and every change to it, as a pure reducer: the page (app/(dashboard)/playground/client.tsx)
 * dispatches what happened (a chunk arrived, a pane was added, the person voted) and renders what this returns, so
 * that each transition is unit-tested here (state.test.ts) rather than only through the browser.
 */

export type PaneTurn = { role: 'user'; content: string } | { role: 'assistant'; reply: AssistantReply };

export interface PaneState {
  id: string;
  model: string;
  turns: PaneTurn[];
  streaming: boolean;
  error: string | null;
  /** The last request sent from this pane: what "export code" reproduces. */
  lastRequest: PlaygroundRequest | null;
}

export type TextView = 'text' | 'tokens';

export interface PlaygroundState {
  panes: PaneState[];
  /** The number the next added pane's id takes (ids name inputs: never reused). */
  nextPaneId: number;
  system: string;
  draft: string;
  chosenParams: ChatParams;
  /** null until the person sets a temperature: until then it follows what is compared (effectiveParams). */
  chosenTemperature: string | null;
  showParamErrors: boolean;
  view: TextView;
  exportPaneId: string | null;
  /** A pane is being added (its model is being chosen). */
  adding: boolean;
  /** Blind A/B: which pane is shown as A is drawn at random each round; `voted` ends a round. */
  blind: boolean;
  swapped: boolean;
  voted: boolean;
}

export type PlaygroundAction =
  | { type: 'system'; text: string }
  | { type: 'draft'; text: string }
  | { type: 'view'; view: TextView }
  | { type: 'export'; paneId: string | null }
  /** `shownTemperature`: the temperature the panel showed before the change (maybe the automatic one). */
  | { type: 'params'; params: ChatParams; shownTemperature: string }
  | { type: 'resetParams' }
  | { type: 'showParamErrors' }
  | { type: 'addStarted' }
  /** The added pane's model, or null when none was added. */
  | { type: 'addFinished'; model: string | null }
  | { type: 'paneModel'; paneId: string; model: string }
  | { type: 'removePane'; paneId: string }
  | { type: 'clear' }
  /** `swapped`: the new round's draw (Math.random stays out of the reducer). */
  | { type: 'blind'; on: boolean; swapped: boolean }
  | { type: 'voted' }
  /** A prompt went out: one request per pane; a blind round starts afresh with `swapped` drawn again. */
  | { type: 'sent'; text: string; requests: Record<string, PlaygroundRequest>; blind: boolean; swapped: boolean }
  | { type: 'chunk'; paneId: string; chunk: ChatCompletionChunk }
  | { type: 'done'; paneId: string }
  | { type: 'stopped'; paneId: string }
  | { type: 'failed'; paneId: string; message: string };

export const newPane = (id: string, model: string): PaneState => ({
  id,
  model,
  turns: [],
  streaming: false,
  error: null,
  lastRequest: null,
});

/** Ids by position: the server's HTML and the first client render must agree on them (they name inputs). */
export function initialPlaygroundState({
  models,
  prompt = '',
  system = '',
  seed,
}: {
  models: string[];
  prompt?: string;
  system?: string;
  seed: number;
}): PlaygroundState {
  return {
    panes: models.map((model, i) => newPane(`p${i}`, model)),
    nextPaneId: models.length,
    system,
    draft: prompt,
    chosenParams: { ...DEFAULT_PARAMS, seed: String(seed) },
    chosenTemperature: null,
    showParamErrors: false,
    view: 'text',
    exportPaneId: null,
    adding: false,
    blind: false,
    swapped: false,
    voted: false,
  };
}

function updatePane(state: PlaygroundState, id: string, update: (pane: PaneState) => PaneState): PlaygroundState {
  return { ...state, panes: state.panes.map((p) => (p.id === id ? update(p) : p)) };
}

/** The pane's answer in progress (its last turn); a pane whose last turn is not an answer is left as it is. */
function updateReply(pane: PaneState, update: (reply: AssistantReply) => AssistantReply): PaneState {
  const last = pane.turns.at(-1);
  if (last?.role !== 'assistant') return pane;
  const reply = update(last.reply);
  return reply === last.reply ? pane : { ...pane, turns: [...pane.turns.slice(0, -1), { role: 'assistant', reply }] };
}

const clearPanes = (panes: PaneState[]) => panes.map((p) => ({ ...p, turns: [], error: null, lastRequest: null }));

export function playgroundReducer(state: PlaygroundState, action: PlaygroundAction): PlaygroundState {
  switch (action.type) {
    case 'system':
      return { ...state, system: action.text };
    case 'draft':
      return { ...state, draft: action.text };
    case 'view':
      return { ...state, view: action.view };
    case 'export':
      return { ...state, exportPaneId: action.paneId };
    case 'params':
      return {
        ...state,
        chosenParams: action.params,
        chosenTemperature:
          action.params.temperature !== action.shownTemperature ? action.params.temperature : state.chosenTemperature,
      };
    case 'resetParams':
      return { ...state, chosenTemperature: null, chosenParams: { ...DEFAULT_PARAMS, seed: state.chosenParams.seed } };
    case 'showParamErrors':
      return { ...state, showParamErrors: true };
    case 'addStarted':
      return { ...state, adding: true };
    case 'addFinished': {
      if (action.model === null) return { ...state, adding: false };
      const id = `p${state.nextPaneId}`;
      return {
        ...state,
        adding: false,
        nextPaneId: state.nextPaneId + 1,
        panes: state.panes.length >= MAX_COMPARE ? state.panes : [...state.panes, newPane(id, action.model)],
      };
    }
    case 'paneModel':
      return updatePane(state, action.paneId, (p) => ({ ...p, model: action.model }));
    case 'removePane':
      return { ...state, panes: state.panes.filter((p) => p.id !== action.paneId) };
    case 'clear':
      return { ...state, panes: clearPanes(state.panes) };
    case 'blind':
      return { ...state, blind: action.on, swapped: action.swapped, voted: false, panes: clearPanes(state.panes) };
    case 'voted':
      return { ...state, voted: true };
    case 'sent':
      return {
        ...state,
        ...(action.blind ? { swapped: action.swapped, voted: false } : {}),
        draft: '',
        panes: state.panes.map((pane) => {
          const request = action.requests[pane.id];
          if (!request) return pane;
          return {
            ...pane,
            streaming: true,
            error: null,
            lastRequest: request,
            turns: [
              // Blind rounds are one prompt each, from a fresh conversation.
              ...(action.blind ? [] : pane.turns),
              { role: 'user', content: action.text },
              { role: 'assistant', reply: emptyReply() },
            ],
          };
        }),
      };
    case 'chunk':
      return updatePane(state, action.paneId, (p) => updateReply(p, (reply) => applyChunk(reply, action.chunk)));
    case 'done':
      return updatePane(state, action.paneId, (p) => ({ ...p, streaming: false }));
    case 'stopped':
      return updatePane(state, action.paneId, (p) => ({ ...updateReply(p, markStopped), streaming: false }));
    case 'failed':
      return updatePane(state, action.paneId, (p) => {
        const last = p.turns.at(-1);
        // An answer that never started is dropped; a partial one stays visible above the error.
        const turns = last?.role === 'assistant' && last.reply.choices.length === 0 ? p.turns.slice(0, -1) : p.turns;
        return { ...p, turns, streaming: false, error: action.message };
      });
  }
}

/** The conversation a pane sends: the shared system prompt, then its own turns (first choice of each answer). */
export function paneMessages(system: string, turns: PaneTurn[], next: string | null): PlaygroundMessage[] {
  const messages: PlaygroundMessage[] = [];
  if (system.trim() !== '') messages.push({ role: 'system', content: system });
  for (const turn of turns) {
    if (turn.role === 'user') messages.push({ role: 'user', content: turn.content });
    else if (turn.reply.choices[0]) messages.push({ role: 'assistant', content: turn.reply.choices[0].content });
  }
  if (next !== null) messages.push({ role: 'user', content: next });
  return messages;
}

type TrainedModels = ReadonlyMap<string, ModelSummaryDto>;

/** Whether a trained model or a checkpoint is in the comparison. */
export function comparesTrained(panes: readonly PaneState[], trainedModels: TrainedModels): boolean {
  return panes.some((p) => {
    const { model, step } = splitModelName(p.model);
    return step !== null || trainedModels.has(model);
  });
}

/**
 * The parameters sent. Comparing checkpoints asks what training changed, and sampling noise would hide it: greedy
 * (temperature 0) whenever a trained model or checkpoint is in the comparison, until the person picks a temperature.
 */
export function effectiveParams(state: PlaygroundState, trained: boolean): ChatParams {
  return {
    ...state.chosenParams,
    temperature: state.chosenTemperature ?? (trained ? '0' : DEFAULT_PARAMS.temperature),
  };
}

/** A blind comparison needs exactly two checkpoints of one trained model ("latest" resolved to its step). */
export function blindStepsOf(
  panes: readonly PaneState[],
  trainedModels: TrainedModels,
): { modelId: string; steps: readonly [number, number] } | null {
  if (panes.length !== 2) return null;
  const resolved = panes.map((p) => {
    const { model, step } = splitModelName(p.model);
    const record = trainedModels.get(model);
    return record ? { record, step: step ?? record.latest_step } : null;
  });
  const [x, y] = resolved;
  if (!x || !y || x.record.id !== y.record.id || x.step === null || y.step === null || x.step === y.step) return null;
  return { modelId: x.record.id, steps: [x.step, y.step] as const };
}

/** Every pane has a finished, non-empty answer to its last prompt. */
export function allAnswered(panes: readonly PaneState[]): boolean {
  return panes.every((p) => {
    const last = p.turns.at(-1);
    return !p.streaming && !p.error && last?.role === 'assistant' && last.reply.choices.length > 0;
  });
}

/** The last prompt of the first pane (a blind round's prompt). */
export function lastPromptOf(panes: readonly PaneState[]): string | null {
  const turn = [...(panes[0]?.turns ?? [])].reverse().find((t) => t.role === 'user');
  return turn?.role === 'user' ? turn.content : null;
}

/** What "export code" shows for a pane: the request it sent, else the one the draft (or "Hello!") would send. */
export function exportRequestOf(state: PlaygroundState, params: ChatParams): PlaygroundRequest | null {
  const pane = state.panes.find((p) => p.id === state.exportPaneId);
  if (!pane) return null;
  return (
    pane.lastRequest ??
    buildChatRequest(pane.model, paneMessages(state.system, pane.turns, state.draft.trim() || 'Hello!'), params)
  );
}
