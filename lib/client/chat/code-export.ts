/**
 * "Export code": the playground's request as curl, Python (openai) and TypeScript (openai). Each one
 * sends the same JSON body the playground sent, key for key, so the seed and every sampling parameter
 * reproduce the run. Values are written with each language's own literal syntax and escaping, never by
 * pasting text into a template unescaped.
 */

import { isOpenAiSdkField } from '@/lib/schemas/chat-fields';

export type CodeLanguage = 'curl' | 'python' | 'typescript';

export interface ExportOptions {
  /** The API origin, e.g. https://tuneboard.example.com (without /v1). */
  origin: string;
  /** The environment variable holding the API key. */
  apiKeyEnv?: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isStreaming(body: object): boolean {
  return (body as { stream?: unknown }).stream === true;
}

/** POSIX shell single quotes: nothing inside is special except the quote itself, written as '\''. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function toCurl(body: object, { origin, apiKeyEnv = 'TUNEBOARD_API_KEY' }: ExportOptions): string {
  const streaming = isStreaming(body);
  return [
    // -N: print each streamed event as it arrives instead of buffering the whole answer.
    `curl${streaming ? ' -N' : ''} ${shellQuote(`${origin}/v1/chat/completions`)} \\`,
    `  -H "Authorization: Bearer $${apiKeyEnv}" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuote(JSON.stringify(body, null, 2))}`,
  ].join('\n');
}

/**
 * A Python string literal. JSON's escapes (\" \\ \n \t \uXXXX) mean the same in Python, and
 * JSON.stringify escapes every control character, so a JSON string is a valid, equal Python literal.
 */
export function pythonString(text: string): string {
  return JSON.stringify(text);
}

function isIdentifier(key: string, pattern: RegExp): boolean {
  return pattern.test(key);
}

export function pythonLiteral(value: unknown, indent = 0): string {
  const pad = '    '.repeat(indent + 1);
  const end = '    '.repeat(indent);
  const v = value as Json;
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'None';
  if (typeof v === 'string') return pythonString(v);
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return `[\n${v.map((item) => `${pad}${pythonLiteral(item, indent + 1)},`).join('\n')}\n${end}]`;
  }
  const entries = Object.entries(v);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, item]) => `${pad}${pythonString(k)}: ${pythonLiteral(item, indent + 1)},`).join('\n')}\n${end}}`;
}

export function toPython(body: object, { origin, apiKeyEnv = 'TUNEBOARD_API_KEY' }: ExportOptions): string {
  const named: [string, unknown][] = [];
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    // Keyword arguments need identifier names; anything else (and every vLLM extension) goes in extra_body,
    // which the SDK merges into the JSON body as it is.
    if (isOpenAiSdkField(key) && isIdentifier(key, /^[A-Za-z_][A-Za-z0-9_]*$/)) named.push([key, value]);
    else extra[key] = value;
  }
  const args = named.map(([key, value]) => `    ${key}=${pythonLiteral(value, 1)},`);
  if (Object.keys(extra).length > 0) args.push(`    extra_body=${pythonLiteral(extra, 1)},`);
  const streaming = isStreaming(body);
  return [
    'import os',
    '',
    'from openai import OpenAI',
    '',
    'client = OpenAI(',
    `    base_url=${pythonString(`${origin}/v1`)},`,
    `    api_key=os.environ[${pythonString(apiKeyEnv)}],`,
    ')',
    '',
    `${streaming ? 'stream' : 'completion'} = client.chat.completions.create(`,
    ...args,
    ')',
    ...(streaming
      ? [
          'for chunk in stream:',
          '    if chunk.choices and chunk.choices[0].delta.content:',
          '        print(chunk.choices[0].delta.content, end="", flush=True)',
          'print()',
        ]
      : ['print(completion.choices[0].message.content)']),
  ].join('\n');
}

/** A TypeScript/JavaScript value literal; JSON strings are valid JS strings (U+2028/9 included since ES2019). */
export function typescriptLiteral(value: unknown, indent = 0): string {
  const pad = '  '.repeat(indent + 1);
  const end = '  '.repeat(indent);
  const v = value as Json;
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number')
    return Number.isFinite(v) || typeof v === 'boolean' ? String(v) : 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return `[\n${v.map((item) => `${pad}${typescriptLiteral(item, indent + 1)},`).join('\n')}\n${end}]`;
  }
  const entries = Object.entries(v);
  if (entries.length === 0) return '{}';
  return `{\n${entries
    .map(
      ([k, item]) =>
        `${pad}${isIdentifier(k, /^[A-Za-z_$][A-Za-z0-9_$]*$/) ? k : JSON.stringify(k)}: ${typescriptLiteral(item, indent + 1)},`,
    )
    .join('\n')}\n${end}}`;
}

export function toTypeScript(body: object, { origin, apiKeyEnv = 'TUNEBOARD_API_KEY' }: ExportOptions): string {
  const named: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) (isOpenAiSdkField(key) ? named : extra)[key] = value;
  const params = typescriptLiteral(named, 0).split('\n');
  if (Object.keys(extra).length > 0) {
    // The SDK sends unknown keys as they are; the spread keeps its types from rejecting vLLM's extensions.
    const last = params.pop();
    params.push("  // vLLM extensions: not in the SDK's types, sent unchanged.");
    params.push(`  ...(${typescriptLiteral(extra, 1)} as object),`);
    if (last) params.push(last);
  }
  const streaming = isStreaming(body);
  return [
    "import OpenAI from 'openai';",
    '',
    'const client = new OpenAI({',
    `  baseURL: ${JSON.stringify(`${origin}/v1`)},`,
    `  apiKey: process.env[${JSON.stringify(apiKeyEnv)}],`,
    '});',
    '',
    `const ${streaming ? 'stream' : 'completion'} = await client.chat.completions.create(${params.join('\n')});`,
    ...(streaming
      ? [
          'for await (const chunk of stream) {',
          "  process.stdout.write(chunk.choices[0]?.delta?.content ?? '');",
          '}',
          "process.stdout.write('\\n');",
        ]
      : ['console.log(completion.choices[0].message.content);']),
  ].join('\n');
}

export function exportCode(language: CodeLanguage, body: object, options: ExportOptions): string {
  if (language === 'curl') return toCurl(body, options);
  if (language === 'python') return toPython(body, options);
  return toTypeScript(body, options);
}
