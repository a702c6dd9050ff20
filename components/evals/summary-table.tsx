import { Table, Td, Th, Tr } from '@/components/ui/table';
import { cx } from '@/components/ui/cx';
import { formatScore, summaryGrid, targetLabel, type EvalRun } from '@/lib/client/evals/evals';

/** One row per target, a column per scorer: the mean as a pass rate, with passed of total; the best of each marked. */
export function SummaryTable({ run }: { run: EvalRun }) {
  const { scorers, rows } = summaryGrid(run);
  const best = scorers.map((_, i) => {
    const means = rows.flatMap((r) => (r.cells[i]?.mean != null ? [r.cells[i]!.mean!] : []));
    return means.length > 1 && new Set(means).size > 1 ? Math.max(...means) : null;
  });
  return (
    <Table stacked data-testid="eval-summary">
      <caption className="sr-only">Mean score of each target per scorer, with the samples that passed</caption>
      <thead>
        <tr>
          <Th>Target</Th>
          {scorers.map((s) => (
            <Th key={s} className="text-right font-mono normal-case">
              {s}
            </Th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <Tr key={row.target} data-testid="eval-summary-row" data-target={row.target}>
            <Td className="py-2" title={row.target}>
              <span className="font-medium wrap-anywhere text-fg">{targetLabel(row.target)}</span>
              {/* The full name only where there is room for it; the title holds it everywhere. */}
              <span className="block font-mono text-xs wrap-anywhere text-fg-subtle max-sm:hidden">{row.target}</span>
            </Td>
            {row.cells.map((cell, i) => (
              <Td
                key={scorers[i]}
                label={scorers[i]}
                className={cx(
                  'py-2 text-right tabular-nums',
                  cell?.mean === best[i] && best[i] !== null && 'font-semibold',
                )}
                data-testid="eval-summary-cell"
                data-scorer={scorers[i]}
              >
                {cell ? (
                  <>
                    <span className="text-fg">{formatScore(cell.mean)}</span>
                    {cell.mean === best[i] && best[i] !== null ? (
                      <span className="ml-1 text-accent-text" aria-label="best of these targets">
                        ★
                      </span>
                    ) : null}
                    <span className="block text-xs font-normal text-fg-subtle">
                      {cell.passed} / {cell.total} passed
                    </span>
                  </>
                ) : (
                  <span className="text-fg-subtle">—</span>
                )}
              </Td>
            ))}
          </Tr>
        ))}
      </tbody>
    </Table>
  );
}
