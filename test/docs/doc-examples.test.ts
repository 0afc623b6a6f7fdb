/**
 * Every request example in README.md and docs/*.md runs against the local stack and must answer
 * the status its text claims. A request example is a ```http block (request line, headers, blank
 * line, body) or a `curl` command in a ```sh block. The claim is, in this order: a
 * `<!-- example-status: NNN -->` comment right before the block, a `# NNN` comment line after the
 * curl command, or the next fenced block starting `HTTP/1.1 NNN`. An example without a claim fails.
 * Answers are checked against docs/openapi.json too (call() in test/support/local-stack.ts).
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';

const ROOT = path.resolve(__dirname, '..', '..');
const FILES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

export interface RequestExample {
  where: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  expected?: number;
}

interface Block {
  lang: string;
  text: string;
  line: number;
  before: string;
}

function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    out.push({ lang: open[1]!, text: body.join('\n'), line: start + 1, before: lines.slice(Math.max(0, start - 2), start).join('\n') });
  }
  return out;
}

/** Shell words of one command: single and double quotes, backslash-newline continuations. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  const text = command.replace(/\\\n/g, ' ');
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word += text.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      word += text.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

function claimed(block: Block): number | undefined {
  const marker = /<!--\s*example-status:\s*(\d{3})\s*-->/.exec(block.before);
  return marker ? Number(marker[1]) : undefined;
}

export function requestExamples(file: string, markdown: string): RequestExample[] {
  const all = blocks(markdown);
  const out: RequestExample[] = [];
  all.forEach((block, index) => {
    const next = all[index + 1];
    const nextStatus = next && /^HTTP\/1\.1 (\d{3})/.exec(next.text)?.[1];
    if (block.lang === 'http' && /^(GET|POST|PUT|PATCH|DELETE) \//.test(block.text)) {
      const [head, ...rest] = block.text.split(/\n\s*\n/);
      const [requestLine, ...headerLines] = head!.split('\n');
      const [method, url] = requestLine!.split(' ');
      const headers: Record<string, string> = {};
      for (const h of headerLines) {
        const m = /^([A-Za-z0-9-]+):\s*(.*?)(\s{2,}\(.*\))?\s*$/.exec(h);
        if (m) headers[m[1]!.toLowerCase()] = m[2]!;
      }
      out.push({
        where: `${file}:${block.line}`,
        method: method!,
        url: url!,
        headers,
        body: rest.length ? rest.join('\n\n') : undefined,
        expected: claimed(block) ?? (nextStatus ? Number(nextStatus) : undefined),
      });
    }
    if (block.lang === 'sh') {
      const lines = block.text.split('\n');
      for (let i = 0; i < lines.length; i++) {
        if (!lines[i]!.startsWith('curl ')) continue;
        let command = lines[i]!;
        const open = (text: string) => (text.match(/'/g) ?? []).length % 2 === 1;
        while ((command.endsWith('\\') || open(command)) && i + 1 < lines.length) command = `${command}\n${lines[++i]!}`;
        const comment = /^#\s*(?:→\s*)?(\d{3})\b/.exec(lines[i + 1] ?? '');
        const words = shellWords(command).slice(1);
        const example: RequestExample = { where: `${file}:${block.line + i}`, method: 'GET', url: '', headers: {} };
        for (let w = 0; w < words.length; w++) {
          const word = words[w]!;
          if (word === '-H') {
            const [name, ...value] = words[++w]!.split(':');
            example.headers[name!.trim().toLowerCase()] = value.join(':').trim();
          } else if (word === '-d' || word === '--data') {
            example.body = words[++w]!;
            if (example.method === 'GET') example.method = 'POST';
          } else if (word === '-X') example.method = words[++w]!;
          else if (word.startsWith('http')) {
            const u = new URL(word);
            example.url = u.pathname + u.search;
          }
        }
        example.expected = comment ? Number(comment[1]) : (claimed(block) ?? (nextStatus ? Number(nextStatus) : undefined));
        out.push(example);
      }
    }
  });
  return out;
}

const examples = FILES.flatMap((file) => requestExamples(file, readFileSync(path.join(ROOT, file), 'utf8')));

describe('request examples in README.md and docs/*.md', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('finds the examples (http blocks and curl commands)', () => {
    expect(examples.length).toBeGreaterThanOrEqual(6);

    console.log(`doc examples: ${examples.length} (${examples.map((e) => `${e.where} ${e.method} ${e.url.split('?')[0]} -> ${e.expected}`).join('; ')})`);
  });

  it('every example states the status it answers', () => {
    expect(examples.filter((e) => e.expected === undefined).map((e) => e.where)).toEqual([]);
  });

  it('every example answers the status its text claims', async () => {
    const wrong: string[] = [];
    for (const e of examples) {
      const res = await call(stack, e.method, e.url, { headers: e.headers, body: e.body });
      if (res.status !== e.expected)
        wrong.push(`${e.where}: ${e.method} ${e.url} answered ${res.status}, the text claims ${e.expected}: ${res.text.slice(0, 300)}`);
    }
    expect(wrong).toEqual([]);
  });
});
