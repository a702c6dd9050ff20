import Link from 'next/link';
import { cx } from '@/components/ui/cx';
import {
  exampleMarks,
  messageText,
  playgroundLink,
  promptParts,
  referenceText,
  targetLabel,
  type ResultOutput,
  type ResultRow,
} from '@/lib/client/evals/evals';

interface ResultsTableProps {
  rows: readonly ResultRow[];
  /** Columns in order (A and B first when a pair is chosen). */
  targets: readonly string[];
  scorers: readonly string[];
  /** Scorers whose per-sample verdict can be opened (judges, client scores with comments). */
  verdictScorers: ReadonlySet<string>;
  /** The two targets the playground link opens. */
  pair: readonly string[];
  /** `A`/`B` marks on the pair's column headers. */
  roles: Readonly<Record<string, string>>;
}

/**
 * The per-example table: the prompt and reference, then each target's answer side by side with a mark per scorer
 * (✓ passed, ✗ failed; "2/3" over several samples), the judge's verdict a click away, and the row's playground link.
 */
export function ResultsTable({ rows, targets, scorers, verdictScorers, pair, roles }: ResultsTableProps) {
  return (
    <div className="relative overflow-x-auto" tabIndex={0} role="region" aria-label="Results per example">
      {/* Under 640 px each example is a card: its prompt, then each target's answer under the target's name. */}
      <table
        className="w-full border-collapse text-left text-sm max-sm:block max-sm:[&_thead]:sr-only max-sm:[&>tbody]:block max-sm:[&>tbody>tr]:block max-sm:[&>tbody>tr>*]:block"
        data-testid="eval-results"
      >
        <caption className="sr-only">
          Each example&apos;s prompt and reference, and every target&apos;s answer with its scores
        </caption>
        <thead>
          <tr className="border-b border-line bg-surface-muted/70">
            <th
              scope="col"
              className="px-4 py-2.5 text-xs font-medium tracking-wide text-fg-subtle uppercase sm:min-w-60 sm:pl-5"
            >
              Example
            </th>
            {targets.map((t) => (
              <th key={t} scope="col" className="px-4 py-2.5 sm:min-w-56 text-xs font-medium text-fg-subtle" title={t}>
                {roles[t] ? (
                  <span className="mr-1.5 inline-flex size-5 items-center justify-center rounded bg-accent-soft font-semibold text-accent-text">
                    {roles[t]}
                  </span>
                ) : null}
                <span className="font-semibold text-fg">{targetLabel(t)}</span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const { system, prompt, earlierTurns } = promptParts(row.messages);
            const reference = referenceText(row.reference);
            const marks = exampleMarks(row, targets, scorers);
            return (
              <tr
                key={row.index}
                className="border-b border-line align-top last:border-b-0"
                data-testid="eval-result-row"
                data-index={row.index}
              >
                <th scope="row" className="px-4 py-3 text-left font-normal sm:pl-5">
                  <p className="text-xs font-medium text-fg-subtle">#{row.index + 1}</p>
                  {system ? (
                    <details className="mt-1 text-xs text-fg-muted">
                      <summary className="cursor-pointer">System message</summary>
                      <p className="mt-1 whitespace-pre-wrap wrap-anywhere">{system}</p>
                    </details>
                  ) : null}
                  {earlierTurns > 0 ? (
                    <p className="mt-1 text-xs text-fg-subtle">
                      After {earlierTurns} earlier message{earlierTurns === 1 ? '' : 's'}
                    </p>
                  ) : null}
                  <p className="mt-1 whitespace-pre-wrap wrap-anywhere text-fg" data-testid="eval-result-prompt">
                    {prompt}
                  </p>
                  <p className="mt-2 text-xs text-fg-subtle">Reference</p>
                  <p
                    className="font-mono text-xs whitespace-pre-wrap wrap-anywhere text-fg"
                    data-testid="eval-result-reference"
                  >
                    {reference ?? <span className="text-fg-subtle">none</span>}
                  </p>
                  {pair.length > 0 ? (
                    <Link
                      href={playgroundLink(pair, row.messages)}
                      className="mt-2 inline-block text-xs font-medium text-accent-text hover:underline"
                      data-testid="eval-open-playground"
                    >
                      Open in playground
                    </Link>
                  ) : null}
                </th>
                {marks.map((m) => (
                  <td
                    key={m.target}
                    className="px-4 py-3 max-sm:pt-1 max-sm:before:mb-1 max-sm:before:block max-sm:before:text-xs max-sm:before:font-semibold max-sm:before:text-fg-muted max-sm:before:content-[attr(data-label)]"
                    data-label={`${roles[m.target] ? `${roles[m.target]} · ` : ''}${targetLabel(m.target)}`}
                    data-testid="eval-result-cell"
                    data-target={m.target}
                  >
                    {m.outputs.length === 0 ? (
                      <span className="text-xs text-fg-subtle">Not answered yet</span>
                    ) : (
                      <>
                        <ul className="mb-2 flex flex-wrap gap-1" aria-label="Scores">
                          {m.marks.map((mark) =>
                            mark.scored === 0 ? null : (
                              <li key={mark.scorer}>
                                <Mark {...mark} samples={m.outputs.length} />
                              </li>
                            ),
                          )}
                        </ul>
                        {m.outputs.map((o) => (
                          <Output
                            key={o.sample}
                            output={o}
                            many={m.outputs.length > 1}
                            verdictScorers={verdictScorers}
                          />
                        ))}
                      </>
                    )}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Mark({
  scorer,
  passed,
  scored,
  samples,
}: {
  scorer: string;
  passed: number;
  scored: number;
  samples: number;
}) {
  const all = passed === scored;
  const none = passed === 0;
  const text = samples > 1 ? `${passed}/${scored}` : all ? '✓' : '✗';
  return (
    <span
      className={cx(
        'inline-flex items-center gap-1 rounded-md px-1.5 py-0.5 font-mono text-[11px] ring-1 ring-inset',
        all
          ? 'bg-success-soft text-success-text ring-success-text/20'
          : none
            ? 'bg-danger-soft text-danger-text ring-danger-text/20'
            : 'bg-warning-soft text-warning-text ring-warning-text/20',
      )}
      data-testid="eval-mark"
      data-scorer={scorer}
      data-passed={all ? 'true' : none ? 'false' : 'some'}
    >
      <span aria-hidden="true">{text}</span>
      {scorer}
      <span className="sr-only">
        {samples > 1 ? `: ${passed} of ${scored} samples passed` : all ? ': passed' : ': failed'}
      </span>
    </span>
  );
}

function Output({
  output,
  many,
  verdictScorers,
}: {
  output: ResultOutput;
  many: boolean;
  verdictScorers: ReadonlySet<string>;
}) {
  const verdicts = Object.entries(output.scores).filter(
    ([name, s]) => verdictScorers.has(name) && (s.verdict || s.comment || s.judge_prompt),
  );
  return (
    <div
      className={cx(
        many && 'mt-2 border-t border-line pt-2 first-of-type:mt-0 first-of-type:border-0 first-of-type:pt-0',
      )}
    >
      {many ? <p className="text-[11px] text-fg-subtle">Sample {output.sample + 1}</p> : null}
      {output.error ? (
        <p className="text-xs text-danger-text">{output.error}</p>
      ) : (
        <OutputText text={output.text ?? ''} cut={output.finish_reason === 'length'} />
      )}
      {Object.entries(output.scores).map(([name, s]) =>
        // Why a score is 0 without the answer being wrong: no reference, an unreadable verdict, not JSON.
        s.error ? (
          <p key={name} className="mt-1 text-xs text-warning-text" data-testid="eval-score-error">
            <span className="font-mono">{name}</span>: {s.error}
          </p>
        ) : null,
      )}
      {verdicts.map(([name, s]) => (
        <details key={name} className="mt-1.5 text-xs" data-testid="eval-verdict">
          <summary className="cursor-pointer font-medium text-fg-muted hover:text-fg">
            {name}&apos;s {s.verdict ? 'verdict' : 'comment'}
          </summary>
          <p className="mt-1 whitespace-pre-wrap wrap-anywhere text-fg">{s.verdict ?? s.comment}</p>
          {Array.isArray(s.judge_prompt) ? (
            <details className="mt-1">
              <summary className="cursor-pointer text-fg-subtle">The judge&apos;s prompt</summary>
              <div className="mt-1 flex flex-col gap-1">
                {s.judge_prompt.map((m: unknown, i: number) => (
                  <p key={i} className="font-mono text-[11px] whitespace-pre-wrap wrap-anywhere text-fg-muted">
                    {m && typeof m === 'object' && 'role' in m ? `${String(m.role)}: ` : ''}
                    {m && typeof m === 'object' && 'content' in m ? messageText(m.content) : JSON.stringify(m)}
                  </p>
                ))}
              </div>
            </details>
          ) : null}
        </details>
      ))}
    </div>
  );
}

/** Answers longer than this show their start, the rest a click away: one long answer would make every row tall. */
const SHORT_ANSWER = 400;

function OutputText({ text, cut }: { text: string; cut: boolean }) {
  const note = cut ? <span className="ml-1 text-xs text-warning-text">(cut at max tokens)</span> : null;
  // An answer of only whitespace would read as a blank cell, as if nothing had been answered.
  if (text.trim() === '')
    return (
      <p className="text-xs text-fg-subtle italic" data-testid="eval-output">
        {text === '' ? 'Empty answer' : `Only whitespace (${text.length} characters)`}
        {note}
      </p>
    );
  if (text.length <= SHORT_ANSWER)
    return (
      <p className="whitespace-pre-wrap wrap-anywhere text-fg" data-testid="eval-output">
        {text}
        {note}
      </p>
    );
  return (
    <details data-testid="eval-output">
      <summary className="cursor-pointer list-none whitespace-pre-wrap wrap-anywhere text-fg [&::-webkit-details-marker]:hidden">
        {text.slice(0, SHORT_ANSWER)}… <span className="text-xs font-medium text-accent-text">Show all</span>
      </summary>
      <p className="whitespace-pre-wrap wrap-anywhere text-fg">
        {text.slice(SHORT_ANSWER)}
        {note}
      </p>
    </details>
  );
}
