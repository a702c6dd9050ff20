import Link from 'next/link';
import { Fragment, type ReactNode } from 'react';
import { ChevronRightIcon } from './icons';

export interface Crumb {
  label: ReactNode;
  /** A link back up; the last crumb (the page itself) usually has none. */
  href?: string;
  className?: string;
  testId?: string;
}

/** The trail above a detail page's title (Models › a model, Evals › Run): one markup for every page that has one. */
export function Breadcrumb({ items }: { items: Crumb[] }) {
  return (
    <nav aria-label="Breadcrumb" className="mb-3 text-sm text-fg-muted">
      <ol className="flex items-center gap-1.5">
        {items.map((item, i) => (
          <Fragment key={i}>
            {i > 0 ? (
              <li aria-hidden="true">
                <ChevronRightIcon className="size-3.5" />
              </li>
            ) : null}
            <li className={item.className}>
              {item.href ? (
                <Link href={item.href} className="hover:text-fg hover:underline" data-testid={item.testId}>
                  {item.label}
                </Link>
              ) : (
                item.label
              )}
            </li>
          </Fragment>
        ))}
      </ol>
    </nav>
  );
}
