import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildChatRequest, DEFAULT_PARAMS } from './chat-request';
import { pythonLiteral, shellQuote, toCurl, toPython, toTypeScript, typescriptLiteral } from './code-export';

const tricky = `It's "quoted" \\ back\nslash $HOME \`tick\` \u2028 é 🌍 \u0001`;
const body = buildChatRequest(
  'tuneboard/tiny-random',
  [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: tricky },
  ],
  { ...DEFAULT_PARAMS, seed: '1234', top_k: '40', stop: 'END\n###' },
);
const options = { origin: 'http://localhost:3000' };

function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('shellQuote', () => {
  it('survives a round trip through sh', () => {
    const out = execFileSync('sh', ['-c', `printf %s ${shellQuote(tricky)}`], { encoding: 'utf8' });
    expect(out).toBe(tricky);
  });
});

describe('toCurl', () => {
  it('sends the exact body, streamed without buffering', () => {
    const code = toCurl(body, options);
    expect(code).toContain("curl -N 'http://localhost:3000/v1/chat/completions'");
    expect(code).toContain('"seed": 1234');
    // Extract the -d argument with the shell itself: what curl would send.
    const script = code.replace(/^curl[\s\S]*?-d /, 'printf %s ');
    const sent = execFileSync('sh', ['-c', script], { encoding: 'utf8' });
    expect(JSON.parse(sent)).toEqual(body);
  });
});

describe('pythonLiteral', () => {
  it('writes Python literals', () => {
    expect(pythonLiteral({ a: true, b: false, c: null, d: [1, 'x'] })).toBe(
      '{\n    "a": True,\n    "b": False,\n    "c": None,\n    "d": [\n        1,\n        "x",\n    ],\n}',
    );
  });

  it.runIf(hasCommand('python3'))('evaluates to the same value in Python', () => {
    const literal = pythonLiteral(body);
    const json = execFileSync(
      'python3',
      ['-c', 'import json,sys; print(json.dumps(eval(sys.stdin.read()), ensure_ascii=False))'],
      {
        input: literal,
        encoding: 'utf8',
      },
    );
    expect(JSON.parse(json)).toEqual(body);
  });
});

describe('toPython', () => {
  it('passes OpenAI parameters by name and vLLM extensions in extra_body', () => {
    const code = toPython(body, options);
    expect(code).toContain('base_url="http://localhost:3000/v1"');
    expect(code).toContain('    seed=1234,');
    expect(code).toContain('    stream=True,');
    expect(code).toMatch(/extra_body=\{\n\s+"top_k": 40,\n\s+"return_tokens_as_token_ids": False,\n\s+\}/);
    expect(code).not.toMatch(/^\s+top_k=/m);
  });
});

describe('toTypeScript', () => {
  it('keeps the body and spreads vLLM extensions', () => {
    const code = toTypeScript(body, options);
    expect(code).toContain('seed: 1234,');
    expect(code).toContain('...({\n    top_k: 40,\n    return_tokens_as_token_ids: false,\n  } as object),');
    expect(code).toContain('for await (const chunk of stream)');
  });

  it('quotes keys that are not identifiers and evaluates to the same value', () => {
    const value = { 'a-b': [tricky], ok: 1 };
    const literal = typescriptLiteral(value);
    expect(literal).toContain('"a-b": [');
    expect(new Function(`return (${literal});`)()).toEqual(value);
  });
});
