'use client';

import type { ModelSummaryDto } from '@/lib/schemas/models';
import { Alert } from '@/components/ui/alert';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { cx } from '@/components/ui/cx';
import { ChatIcon, CloseIcon, CodeIcon } from '@/components/ui/icons';
import { Spinner } from '@/components/ui/spinner';
import type { ChoiceReply } from '@/lib/client/chat/chat-reply';
import { splitInvalidBytes } from '@/lib/client/chat/logprob-color';
import type { PaneState, TextView } from '@/lib/client/playground/state';
import { Tooltip } from '@/components/ui/tooltip';
import { ModelPicker, PaneModelHeading } from './model-picker';
import { TokenView } from './token-view';

interface ChatPaneProps {
  pane: PaneState;
  index: number;
  paneCount: number;
  view: TextView;
  baseModels: string[];
  trainedModels: Map<string, ModelSummaryDto>;
  onModelChange: (model: string) => void;
  onRemove: () => void;
  onExport: () => void;
  /** Blind A/B: the pane is shown only as "Answer A" or "B", without its model, picker or code. */
  blind?: 'A' | 'B';
}

const FINISH_LABEL: Record<string, { text: string; tone: 'neutral' | 'warning' }> = {
  length: { text: 'Max tokens reached', tone: 'warning' },
  abort: { text: 'Stopped', tone: 'warning' },
  tool_calls: { text: 'Tool call', tone: 'neutral' },
};

function ChoiceBody({
  choice,
  streaming,
  view,
  label,
}: {
  choice: ChoiceReply;
  streaming: boolean;
  view: TextView;
  label: string;
}) {
  const finish = choice.finishReason ? FINISH_LABEL[choice.finishReason] : undefined;
  return (
    <div className="flex flex-col gap-2">
      {choice.reasoning !== null ? (
        <ReasoningBlock choice={choice} thinking={streaming && !choice.finishReason && choice.content === ''} />
      ) : null}
      {view === 'tokens' && choice.tokens.length > 0 ? (
        <TokenView tokens={choice.tokens} label={label} />
      ) : (
        <p className="text-sm leading-relaxed break-words whitespace-pre-wrap text-fg" data-testid="assistant-text">
          <AnswerText choice={choice} />
          {streaming && !choice.finishReason ? (
            <span
              aria-hidden="true"
              className="ml-0.5 inline-block h-4 w-1.5 translate-y-0.5 animate-pulse rounded-sm bg-accent"
            />
          ) : null}
          {!streaming && choice.content === '' ? <span className="text-fg-subtle italic">(empty answer)</span> : null}
        </p>
      )}
      {finish ? (
        <div>
          <Badge tone={finish.tone}>{finish.text}</Badge>
        </div>
      ) : null}
    </div>
  );
}

/**
 * The think block of a model with a reasoning parser, folded by default: the answer is what a reader wants first,
 * and a long think block would push it out of view. It fills while it streams; opening it shows the text so far.
 */
function ReasoningBlock({ choice, thinking }: { choice: ChoiceReply; thinking: boolean }) {
  const n = choice.reasoningTokens;
  return (
    <details className="group rounded-md border border-line bg-surface-muted/40 text-sm" data-testid="reasoning">
      <summary className="flex cursor-pointer list-none items-center gap-1.5 px-2.5 py-1.5 text-xs font-medium text-fg-muted select-none hover:text-fg [&::-webkit-details-marker]:hidden">
        <span aria-hidden="true" className="inline-block transition-transform group-open:rotate-90">
          ▸
        </span>
        {thinking ? 'Reasoning…' : 'Reasoning'}
        <span className="font-normal text-fg-subtle">
          ({n} {n === 1 ? 'token' : 'tokens'})
        </span>
        {thinking ? <Spinner className="ml-1 size-3" /> : null}
      </summary>
      <p
        className="border-t border-line px-2.5 py-2 leading-relaxed break-words whitespace-pre-wrap text-fg-muted"
        data-testid="reasoning-text"
      >
        {choice.reasoning}
      </p>
    </details>
  );
}

/** An answer's text, with bytes that are not valid UTF-8 on their own shown as chips, never as tofu. */
export function AnswerText({ choice }: { choice: Pick<ChoiceReply, 'content' | 'tokens'> }) {
  return splitInvalidBytes(choice.content, choice.tokens).map((piece, i) =>
    piece.kind === 'text' ? (
      piece.text
    ) : (
      <span
        key={i}
        title="Bytes that are not valid UTF-8 on their own (the model stopped or switched mid-character)"
        className="mx-px rounded bg-surface-muted px-1 font-mono text-xs text-fg-muted ring-1 ring-line"
        data-testid="invalid-bytes"
      >
        {piece.label}
      </span>
    ),
  );
}

/** One model's side of the conversation: its picker, its answers, its own errors. */
export function ChatPane({
  pane,
  index,
  paneCount,
  view,
  baseModels,
  trainedModels,
  onModelChange,
  onRemove,
  onExport,
  blind,
}: ChatPaneProps) {
  const label = blind ? `Answer ${blind}` : paneCount > 1 ? `Model ${index + 1}` : 'Model';
  const last = pane.turns.at(-1);
  const waiting = pane.streaming && (last?.role !== 'assistant' || last.reply.choices.length === 0);

  return (
    <Card
      className="flex min-w-0 flex-col overflow-visible"
      aria-label={blind ? label : `${label}: ${pane.model}`}
      data-testid="chat-pane"
      data-blind={blind}
    >
      {blind ? (
        <div className="rounded-t-xl border-b border-line bg-surface-muted/50 px-4 py-2.5">
          <p className="text-sm font-semibold text-fg" data-testid="blind-label">
            {label}
          </p>
          <p className="text-xs text-fg-subtle">Which checkpoint this is stays hidden until you vote.</p>
        </div>
      ) : (
        <div className="flex flex-col gap-2.5 rounded-t-xl border-b border-line bg-surface-muted/50 px-3 pt-2 pb-3">
          <div className="flex items-start justify-between gap-2">
            <div className="flex min-w-0 flex-col gap-0.5 pt-0.5 pl-0.5">
              <span className="text-[11px] font-medium tracking-wide text-fg-subtle uppercase" aria-hidden="true">
                {label}
              </span>
              <PaneModelHeading value={pane.model} trainedModels={trainedModels} />
            </div>
            <div className="-mr-1 flex shrink-0 items-center gap-0.5">
              <Button variant="ghost" size="sm" className="h-7" onClick={onExport} data-testid="export-code-button">
                <CodeIcon className="size-3.5" />
                Code
              </Button>
              {paneCount > 1 ? (
                <Tooltip content={`Remove ${label.toLowerCase()} from the comparison`}>
                  <Button
                    variant="ghost"
                    size="sm"
                    className="h-7 w-7 px-0"
                    onClick={onRemove}
                    disabled={pane.streaming}
                    aria-label={`Remove ${label.toLowerCase()} from the comparison`}
                  >
                    <CloseIcon className="size-4" />
                  </Button>
                </Tooltip>
              ) : null}
            </div>
          </div>
          <ModelPicker
            value={pane.model}
            onChange={onModelChange}
            baseModels={baseModels}
            trainedModels={trainedModels}
            label={label}
            idPrefix={`pane-${pane.id}`}
            disabled={pane.streaming}
          />
        </div>
      )}

      <div className="flex flex-1 flex-col gap-4 px-4 py-4" aria-live="polite" aria-busy={pane.streaming || undefined}>
        {pane.turns.length === 0 ? (
          <div className="flex flex-1 flex-col items-center justify-center gap-2 py-10 text-center text-sm text-fg-subtle">
            <ChatIcon className="size-5" />
            <p>Send a message to start.</p>
          </div>
        ) : null}
        {pane.turns.map((turn, t) =>
          turn.role === 'user' ? (
            <div key={t} className="flex justify-end">
              <p
                className="max-w-[85%] rounded-xl rounded-br-sm bg-accent-soft px-3.5 py-2 text-sm break-words whitespace-pre-wrap text-fg ring-1 ring-accent/15"
                data-testid="user-message"
              >
                <span className="sr-only">You: </span>
                {turn.content}
              </p>
            </div>
          ) : (
            <div key={t} className="flex flex-col gap-3" data-testid="assistant-message">
              {turn.reply.choices.map((choice, c) => (
                <div
                  key={c}
                  className={cx(turn.reply.choices.length > 1 && 'rounded-lg border border-line px-3 py-2.5')}
                >
                  {turn.reply.choices.length > 1 ? (
                    <p className="mb-1.5 text-xs font-medium text-fg-subtle">Choice {c + 1}</p>
                  ) : (
                    <span className="sr-only">Assistant: </span>
                  )}
                  <ChoiceBody
                    choice={choice}
                    streaming={pane.streaming && t === pane.turns.length - 1}
                    view={view}
                    label={`${label}, answer ${Math.ceil((t + 1) / 2)}${turn.reply.choices.length > 1 ? `, choice ${c + 1}` : ''}`}
                  />
                </div>
              ))}
              {turn.reply.usage ? (
                <p className="text-xs text-fg-subtle tabular-nums" data-testid="reply-usage">
                  {turn.reply.usage.prompt_tokens} prompt + {turn.reply.usage.completion_tokens} completion tokens
                </p>
              ) : null}
            </div>
          ),
        )}
        {waiting ? (
          <p className="flex items-center gap-2 text-sm text-fg-muted">
            <Spinner className="size-3.5" /> Waiting for the first token…
          </p>
        ) : null}
        {pane.error ? (
          <Alert tone="danger" role="alert" title="The request failed">
            <span data-testid="pane-error">{pane.error}</span>
          </Alert>
        ) : null}
      </div>
    </Card>
  );
}
