import { inlineRefs } from '@/lib/client/api/openapi-document';

/** A JSON Schema as indented JSON, with local `$ref`s inlined so the whole shape is in one place. */
export function SchemaJson({ doc, schema, label }: { doc: unknown; schema: unknown; label: string }) {
  const text = JSON.stringify(inlineRefs(doc, schema), null, 2);
  return (
    <pre
      aria-label={label}
      tabIndex={0}
      className="max-h-96 overflow-auto rounded-lg border border-line bg-surface-muted px-3.5 py-3 font-mono text-[12px] leading-relaxed text-fg-muted"
    >
      {text === undefined || text === '{}' ? '{}  (any JSON)' : text}
    </pre>
  );
}
