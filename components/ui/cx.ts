/** Joins class names, skipping falsy ones: enough for conditional Tailwind classes without a dependency. */
export function cx(...classes: (string | false | null | undefined)[]): string {
  return classes.filter(Boolean).join(' ');
}
