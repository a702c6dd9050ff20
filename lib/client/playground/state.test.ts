import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '@/lib/schemas/chat';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import { buildChatRequest, DEFAULT_PARAMS } from '../chat/chat-request';
import {
  allAnswered,
  blindStepsOf,
  comparesTrained,
  effectiveParams,
  exportRequestOf,
  initialPlaygroundState,
  lastPromptOf,
  paneMessages,
  playgroundReducer,
  type PlaygroundAction,
  type PlaygroundState,
} from './state';

const chunk = (text: string, finish: 'stop' | null = null): ChatCompletionChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: finish }],
});

const run = (state: PlaygroundState, ...actions: PlaygroundAction[]) => actions.reduce(playgroundReducer, state);
const start = (models = ['base-a', 'base-b']) => initialPlaygroundState({ models, seed: 7 });
const requestsFor = (state: PlaygroundState, text: string) =>
  Object.fromEntries(
    state.panes.map((p) => [p.id, buildChatRequest(p.model, [{ role: 'user', content: text }], DEFAULT_PARAMS)]),
  );
const send = (state: PlaygroundState, text: string, blind = false, swapped = false): PlaygroundState =>
  playgroundReducer(state, { type: 'sent', text, requests: requestsFor(state, text), blind, swapped });

const record = (id: string, latest: number | null) => ({ id, latest_step: latest }) as ModelSummaryDto;

describe('playground state', () => {
  it('starts with a pane per model, ids by position, the prompt as the draft and the seed in the params', () => {
    const state = initialPlaygroundState({ models: ['a', 'b'], prompt: 'hi', system: 'sys', seed: 42 });
    expect(state.panes.map((p) => [p.id, p.model])).toEqual([
      ['p0', 'a'],
      ['p1', 'b'],
    ]);
    expect(state).toMatchObject({ draft: 'hi', system: 'sys', nextPaneId: 2, chosenTemperature: null });
    expect(state.chosenParams.seed).toBe('42');
  });

  it('a send appends the prompt and an empty answer to every pane, streaming, and empties the draft', () => {
    const state = send(run(start(), { type: 'draft', text: 'Hello' }), 'Hello');
    expect(state.draft).toBe('');
    for (const pane of state.panes) {
      expect(pane.streaming).toBe(true);
      expect(pane.lastRequest?.model).toBe(pane.model);
      expect(pane.turns).toEqual([
        { role: 'user', content: 'Hello' },
        { role: 'assistant', reply: { choices: [], usage: null } },
      ]);
    }
  });

  it('chunks fill one pane only; done ends its stream; a second send keeps the conversation', () => {
    let state = send(start(), 'Hi');
    state = run(
      state,
      { type: 'chunk', paneId: 'p0', chunk: chunk('Hel') },
      { type: 'chunk', paneId: 'p0', chunk: chunk('lo', 'stop') },
    );
    state = run(state, { type: 'done', paneId: 'p0' });
    const [a, b] = state.panes;
    expect(a.streaming).toBe(false);
    expect(a.turns[1]).toMatchObject({
      role: 'assistant',
      reply: { choices: [{ content: 'Hello', finishReason: 'stop' }] },
    });
    expect(b.streaming).toBe(true);
    expect(allAnswered(state.panes)).toBe(false);
    state = run(state, { type: 'chunk', paneId: 'p1', chunk: chunk('Yo') }, { type: 'done', paneId: 'p1' });
    expect(allAnswered(state.panes)).toBe(true);
    expect(paneMessages('Be brief', state.panes[0].turns, 'Again')).toEqual([
      { role: 'system', content: 'Be brief' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
      { role: 'user', content: 'Again' },
    ]);
    expect(send(state, 'Again').panes[0].turns).toHaveLength(4);
  });

  it('a stop keeps the partial answer, marked aborted', () => {
    let state = send(start(['m']), 'Hi');
    state = run(state, { type: 'chunk', paneId: 'p0', chunk: chunk('Par') }, { type: 'stopped', paneId: 'p0' });
    expect(state.panes[0].streaming).toBe(false);
    expect(state.panes[0].turns[1]).toMatchObject({ reply: { choices: [{ content: 'Par', finishReason: 'abort' }] } });
  });

  it('a failure drops an answer that never started, keeps a partial one, and shows the error', () => {
    const failed = run(send(start(['m']), 'Hi'), { type: 'failed', paneId: 'p0', message: 'boom' });
    expect(failed.panes[0]).toMatchObject({
      streaming: false,
      error: 'boom',
      turns: [{ role: 'user', content: 'Hi' }],
    });
    const partial = run(
      send(start(['m']), 'Hi'),
      { type: 'chunk', paneId: 'p0', chunk: chunk('Pa') },
      { type: 'failed', paneId: 'p0', message: 'boom' },
    );
    expect(partial.panes[0].turns).toHaveLength(2);
    // The next send clears the error.
    expect(send(failed, 'Again').panes[0].error).toBeNull();
  });

  it('adding a pane takes the next id, never past four panes; an add that found no model adds nothing', () => {
    let state = run(start(['a']), { type: 'addStarted' });
    expect(state.adding).toBe(true);
    state = run(state, { type: 'addFinished', model: 'b' });
    expect(state).toMatchObject({ adding: false, nextPaneId: 2 });
    expect(state.panes.map((p) => p.id)).toEqual(['p0', 'p1']);
    state = run(state, { type: 'removePane', paneId: 'p0' }, { type: 'addFinished', model: 'c' });
    // A removed pane's id is not reused: ids name inputs.
    expect(state.panes.map((p) => p.id)).toEqual(['p1', 'p2']);
    state = run(state, { type: 'addFinished', model: 'd' }, { type: 'addFinished', model: 'e' });
    expect(state.panes).toHaveLength(4);
    expect(run(state, { type: 'addFinished', model: 'f' }).panes).toHaveLength(4);
    expect(run(state, { type: 'addStarted' }, { type: 'addFinished', model: null })).toMatchObject({
      adding: false,
      panes: state.panes,
    });
  });

  it('a pane changes model; clear empties every conversation and error but keeps the models', () => {
    let state = run(send(start(), 'Hi'), { type: 'failed', paneId: 'p1', message: 'x' });
    state = run(state, { type: 'paneModel', paneId: 'p1', model: 'other' }, { type: 'clear' });
    expect(state.panes.map((p) => [p.model, p.turns.length, p.error, p.lastRequest])).toEqual([
      ['base-a', 0, null, null],
      ['other', 0, null, null],
    ]);
  });

  it('the temperature follows the comparison (greedy for checkpoints) until the person sets one; reset keeps the seed', () => {
    const state = start(['tuned:step2']);
    expect(effectiveParams(state, true).temperature).toBe('0');
    expect(effectiveParams(state, false).temperature).toBe(DEFAULT_PARAMS.temperature);
    // Another field changed while the automatic temperature was shown: the temperature still follows.
    const shown = effectiveParams(state, true);
    let next = run(state, { type: 'params', params: { ...shown, top_p: '0.9' }, shownTemperature: '0' });
    expect(next.chosenTemperature).toBeNull();
    expect(effectiveParams(next, false).temperature).toBe(DEFAULT_PARAMS.temperature);
    next = run(next, { type: 'params', params: { ...shown, temperature: '1.2' }, shownTemperature: '0' });
    expect(effectiveParams(next, true).temperature).toBe('1.2');
    next = run(next, { type: 'resetParams' });
    expect(next.chosenTemperature).toBeNull();
    expect(next.chosenParams).toEqual({ ...DEFAULT_PARAMS, seed: '7' });
  });

  it('a blind round starts each prompt from a fresh conversation and draws A and B again; a vote ends it', () => {
    let state = send(start(), 'First');
    state = run(state, { type: 'blind', on: true, swapped: true });
    expect(state).toMatchObject({ blind: true, swapped: true, voted: false });
    expect(state.panes.every((p) => p.turns.length === 0)).toBe(true);
    state = run(send(state, 'One', true, false), { type: 'voted' });
    expect(state).toMatchObject({ swapped: false, voted: true });
    state = send(state, 'Two', true, true);
    expect(state).toMatchObject({ swapped: true, voted: false });
    expect(state.panes[0].turns.map((t) => t.role)).toEqual(['user', 'assistant']);
    expect(lastPromptOf(state.panes)).toBe('Two');
    // Outside a blind round the draw is not applied.
    expect(send(run(state, { type: 'blind', on: false, swapped: false }), 'x', false, true).swapped).toBe(false);
  });

  it('blind needs two checkpoints of one trained model, "latest" resolved to its step', () => {
    const trained = new Map([
      ['tuned', record('m1', 5)],
      ['other', record('m2', 3)],
    ]);
    const panes = (a: string, b: string) => start([a, b]).panes;
    expect(blindStepsOf(panes('tuned', 'tuned:step2'), trained)).toEqual({ modelId: 'm1', steps: [5, 2] });
    expect(blindStepsOf(panes('tuned', 'tuned:step5'), trained)).toBeNull();
    expect(blindStepsOf(panes('tuned', 'other'), trained)).toBeNull();
    expect(blindStepsOf(panes('base', 'tuned'), trained)).toBeNull();
    expect(blindStepsOf(start(['tuned']).panes, trained)).toBeNull();
    expect(comparesTrained(panes('base', 'tuned'), trained)).toBe(true);
    expect(comparesTrained(panes('base', 'x:step3'), new Map())).toBe(true);
    expect(comparesTrained(panes('base', 'x'), new Map())).toBe(false);
  });

  it('export shows the request a pane sent, else the one its draft (or "Hello!") would send', () => {
    let state = run(start(['m']), { type: 'export', paneId: 'p0' });
    expect(exportRequestOf(state, DEFAULT_PARAMS)?.messages).toEqual([{ role: 'user', content: 'Hello!' }]);
    state = run(state, { type: 'draft', text: ' Draft ' });
    expect(exportRequestOf(state, DEFAULT_PARAMS)?.messages).toEqual([{ role: 'user', content: 'Draft' }]);
    state = send(state, 'Sent');
    expect(exportRequestOf(state, DEFAULT_PARAMS)).toBe(state.panes[0].lastRequest);
    expect(exportRequestOf(run(state, { type: 'export', paneId: null }), DEFAULT_PARAMS)).toBeNull();
  });
});
