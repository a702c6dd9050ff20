'use client';

import type { FormEvent, Ref } from 'react';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { SendIcon, StopIcon } from '@/components/ui/icons';
import { Textarea } from '@/components/ui/textarea';

/** The message box under the panes: send to every pane (Ctrl/⌘+Enter), or stop the answers streaming. */
export function Composer({
  draftRef,
  draft,
  onDraft,
  onSend,
  onStop,
  streaming,
  paneCount,
  paramError,
}: {
  draftRef: Ref<HTMLTextAreaElement>;
  draft: string;
  onDraft: (text: string) => void;
  onSend: (event?: FormEvent) => void;
  onStop: () => void;
  streaming: boolean;
  paneCount: number;
  /** A parameter is invalid and the person tried to send: the hint says so. */
  paramError: boolean;
}) {
  return (
    <form onSubmit={onSend} aria-label="Message composer">
      <Card className="shadow-md dark:shadow-none">
        <label htmlFor="composer" className="sr-only">
          Message
        </label>
        <Textarea
          id="composer"
          ref={draftRef}
          rows={3}
          value={draft}
          onChange={(event) => onDraft(event.target.value)}
          onKeyDown={(event) => {
            // Enter alone adds a line (messages are often multi-line); Ctrl/⌘+Enter sends.
            if (event.key === 'Enter' && (event.metaKey || event.ctrlKey)) {
              event.preventDefault();
              onSend();
            }
          }}
          placeholder={paneCount > 1 ? `Message all ${paneCount} models…` : 'Message the model…'}
          aria-describedby="composer-hint"
          className="resize-none rounded-none border-0 px-4 py-3 shadow-none focus:ring-0"
          data-testid="composer"
        />
        <div className="flex flex-wrap items-center justify-between gap-2 border-t border-line px-3 py-2">
          <p id="composer-hint" className="text-xs text-fg-subtle">
            {paramError ? (
              <span className="font-medium text-danger-text" role="alert">
                Fix the highlighted parameters first.
              </span>
            ) : (
              'Ctrl+Enter or ⌘+Enter to send'
            )}
          </p>
          {streaming ? (
            <Button variant="secondary" onClick={onStop} data-testid="stop">
              <StopIcon className="size-4" />
              Stop
            </Button>
          ) : (
            <Button type="submit" disabled={draft.trim() === '' || paneCount === 0} data-testid="send">
              <SendIcon className="size-4" />
              Send
            </Button>
          )}
        </div>
      </Card>
    </form>
  );
}
