'use client';

import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardHeader } from '@/components/ui/card';
import { Input, Select } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { Textarea } from '@/components/ui/textarea';
import { AnswerText } from './chat-pane';
import { applyChunk, emptyReply, type AssistantReply } from '@/lib/client/chat/chat-reply';
import { buildChatRequest, type ChatParams, type PlaygroundMessage } from '@/lib/client/chat/chat-request';
import { streamChatCompletion } from '@/lib/client/chat/chat-stream';
import { modelLabel, splitModelName } from '@/lib/client/chat/model-choice';
import {
  parsePrompts,
  PROMPT_SETS_KEY,
  readPromptSets,
  withPromptSet,
  type PromptSet,
} from '@/lib/client/chat/prompt-sets';

interface Cell {
  reply: AssistantReply;
  done: boolean;
  error: string | null;
}

// The saved sets as a store React can read: the raw string is the snapshot (equal strings, no re-render), null on
// the server and wherever storage is refused; other tabs' changes arrive through the storage event.
const SAVED_EVENT = 'tuneboard:prompt-sets';
function subscribe(onChange: () => void) {
  window.addEventListener('storage', onChange);
  window.addEventListener(SAVED_EVENT, onChange);
  return () => {
    window.removeEventListener('storage', onChange);
    window.removeEventListener(SAVED_EVENT, onChange);
  };
}
function snapshot(): string | null {
  try {
    return localStorage.getItem(PROMPT_SETS_KEY);
  } catch {
    return null;
  }
}

/** A pane's column heading: the model's own name and its step, the rest in the title. */
function columnName(model: string): string {
  const { model: base, step } = splitModelName(model);
  return `${modelLabel(base).name}${step !== null ? ` · step ${step}` : ''}`;
}

/**
 * A saved list of prompts that runs on every pane of the comparison, each prompt from a fresh conversation (the
 * shared system prompt and parameters apply), answers in a prompts × models table: the same test questions asked
 * of every checkpoint, without typing them again. Sets are kept in this browser.
 */
export function PromptSetPanel({
  models,
  system,
  params,
  disabled,
}: {
  /** The panes' chat model names, in pane order. */
  models: string[];
  system: string;
  params: ChatParams;
  /** While the panes stream, or in a blind round (a set would show which checkpoint answered what). */
  disabled: boolean;
}) {
  const raw = useSyncExternalStore(subscribe, snapshot, () => null);
  const sets = useMemo<PromptSet[]>(() => readPromptSets(raw), [raw]);
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const [touched, setTouched] = useState(false);
  // Only saving needs a name: a run does not make an empty name an error.
  const [saveTried, setSaveTried] = useState(false);
  const [cells, setCells] = useState<Cell[][] | null>(null);
  const [ran, setRan] = useState<{ prompts: string[]; models: string[] } | null>(null);
  const [running, setRunning] = useState(false);
  const abortRef = useRef<AbortController | null>(null);

  useEffect(() => () => abortRef.current?.abort(), []);

  const parsed = parsePrompts(text);
  const problem = 'error' in parsed ? parsed.error : undefined;

  function save() {
    setTouched(true);
    setSaveTried(true);
    if ('error' in parsed || name.trim() === '') return;
    const next = withPromptSet(sets, { name: name.trim(), prompts: parsed.prompts });
    try {
      localStorage.setItem(PROMPT_SETS_KEY, JSON.stringify(next));
      window.dispatchEvent(new Event(SAVED_EVENT));
    } catch {
      // Private windows may refuse storage: the set still runs, it is just not kept.
    }
  }

  function load(chosen: string) {
    const set = sets.find((s) => s.name === chosen);
    if (!set) return;
    setName(set.name);
    setText(set.prompts.join('\n'));
  }

  async function run() {
    setTouched(true);
    if ('error' in parsed || models.length === 0) return;
    const controller = new AbortController();
    abortRef.current = controller;
    const prompts = parsed.prompts;
    const runModels = [...models];
    setRan({ prompts, models: runModels });
    setCells(prompts.map(() => runModels.map(() => ({ reply: emptyReply(), done: false, error: null }))));
    setRunning(true);
    const update = (p: number, m: number, change: (cell: Cell) => Cell) =>
      setCells((all) => all?.map((row, i) => (i !== p ? row : row.map((c, j) => (j === m ? change(c) : c)))) ?? all);
    try {
      // One prompt at a time, every model at once, as the composer sends: the server's engines are shared.
      for (const [p, prompt] of prompts.entries()) {
        if (controller.signal.aborted) break;
        const messages: PlaygroundMessage[] = [
          ...(system.trim() !== '' ? [{ role: 'system' as const, content: system }] : []),
          { role: 'user', content: prompt },
        ];
        await Promise.all(
          runModels.map(async (model, m) => {
            try {
              await streamChatCompletion(buildChatRequest(model, messages, params), {
                signal: controller.signal,
                onChunk: (chunk) => update(p, m, (c) => ({ ...c, reply: applyChunk(c.reply, chunk) })),
              });
              update(p, m, (c) => ({ ...c, done: true }));
            } catch (error) {
              const aborted = error instanceof DOMException && error.name === 'AbortError';
              update(p, m, (c) => ({
                ...c,
                done: true,
                error: aborted ? 'Stopped' : error instanceof Error ? error.message : 'The request failed',
              }));
            }
          }),
        );
      }
    } finally {
      setRunning(false);
      if (abortRef.current === controller) abortRef.current = null;
    }
  }

  return (
    <Card aria-labelledby="prompt-set-title" data-testid="prompt-set">
      <CardHeader
        id="prompt-set-title"
        title="Prompt set"
        description="The same prompts on every model of the comparison, each from a fresh conversation with the system prompt and parameters above. Saved sets stay in this browser."
        actions={
          sets.length > 0 ? (
            <>
              <label htmlFor="prompt-set-saved" className="sr-only">
                Saved prompt sets
              </label>
              <Select
                id="prompt-set-saved"
                value=""
                onChange={(e) => load(e.target.value)}
                className="w-56"
                data-testid="prompt-set-saved"
              >
                <option value="">Open a saved set…</option>
                {sets.map((s) => (
                  <option key={s.name} value={s.name}>
                    {s.name} ({s.prompts.length})
                  </option>
                ))}
              </Select>
            </>
          ) : null
        }
      />
      <div className="flex flex-col gap-3 px-5 py-4">
        <div>
          <label htmlFor="prompt-set-prompts" className="mb-1 block text-sm font-medium text-fg">
            Prompts
          </label>
          <Textarea
            id="prompt-set-prompts"
            rows={4}
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder={'What is the capital of France?\nWrite a haiku about gradients.'}
            aria-invalid={touched && problem ? true : undefined}
            aria-describedby="prompt-set-hint"
            className="resize-y"
          />
          <p
            id="prompt-set-hint"
            className={touched && problem ? 'mt-1 text-xs text-danger-text' : 'mt-1 text-xs text-fg-subtle'}
          >
            {touched && problem ? problem : 'One prompt per line.'}
          </p>
        </div>
        <div className="flex flex-wrap items-end gap-2">
          <div className="w-56">
            <label htmlFor="prompt-set-name" className="mb-1 block text-sm font-medium text-fg">
              Name
            </label>
            <Input
              id="prompt-set-name"
              value={name}
              onChange={(e) => setName(e.target.value)}
              aria-invalid={saveTried && name.trim() === '' ? true : undefined}
              aria-describedby={saveTried && name.trim() === '' ? 'prompt-set-name-error' : undefined}
              placeholder="e.g. capitals"
              autoComplete="off"
            />
            {saveTried && name.trim() === '' ? (
              <p id="prompt-set-name-error" className="mt-1 text-xs text-danger-text">
                Name the set to save it
              </p>
            ) : null}
          </div>
          <Button variant="secondary" onClick={save}>
            Save set
          </Button>
          <div className="ml-auto flex gap-2">
            {running ? (
              <Button variant="secondary" onClick={() => abortRef.current?.abort()} data-testid="prompt-set-stop">
                Stop
              </Button>
            ) : null}
            <Button
              onClick={() => void run()}
              disabled={disabled || running || models.length === 0}
              data-testid="prompt-set-run"
            >
              {running ? <Spinner className="size-3.5" /> : null}
              Run on {models.length} model{models.length === 1 ? '' : 's'}
            </Button>
          </div>
        </div>
      </div>
      {ran && cells ? (
        <Table data-testid="prompt-set-results">
          <caption className="sr-only">Answers of each model to each prompt</caption>
          <thead>
            <tr>
              <Th>Prompt</Th>
              {ran.models.map((model, m) => (
                <Th key={m} className="normal-case" title={model}>
                  {columnName(model)}
                </Th>
              ))}
            </tr>
          </thead>
          <tbody>
            {ran.prompts.map((prompt, p) => (
              <Tr key={p} data-testid="prompt-set-row">
                <Td className="max-w-48 align-top text-sm font-medium break-words text-fg">{prompt}</Td>
                {cells[p].map((cell, m) => (
                  <Td key={m} className="align-top text-sm" data-testid="prompt-set-answer">
                    {cell.error ? (
                      <span className="text-danger-text">{cell.error}</span>
                    ) : (
                      <span className="break-words whitespace-pre-wrap text-fg">
                        {cell.reply.choices[0] ? <AnswerText choice={cell.reply.choices[0]} /> : null}
                        {!cell.done ? <Spinner className="ml-1 inline size-3" /> : null}
                        {cell.done && !cell.reply.choices[0]?.content ? (
                          <span className="text-fg-subtle italic">(empty answer)</span>
                        ) : null}
                      </span>
                    )}
                  </Td>
                ))}
              </Tr>
            ))}
          </tbody>
        </Table>
      ) : null}
      {ran && !running && cells?.flat().some((c) => c.error && c.error !== 'Stopped') ? (
        <div className="px-4 py-3">
          <Alert tone="warning">Some answers failed; their cells say why.</Alert>
        </div>
      ) : null}
    </Card>
  );
}
