/**
 * Every request example in README.md and docs/*.md runs against the local stack and must answer
 * the status its text claims. A request example is a ```http block (request line, headers, blank
 * line, body) or a `curl` command in a ```sh block. The claim is, in this order: a
 * `<!-- example-status: NNN -->` comment right before the block, a `# NNN` comment line after the
 * curl command, or the next fenced block starting `HTTP/1.1 NNN`. An example without a claim fails.
 * The answer an example documents (the JSON after `# NNN` on that comment line, a ```json block right
 * after the curl block, the JSON body of the `HTTP/1.1` block, or a ```json block further down marked
 * `<!-- example-answer -->`, which belongs to the example before it) must have the same fields as the
 * real answer, nested objects included (values are not compared: ids and times differ), so a stale
 * sample (a field renamed or dropped, like the old `patientMatched`) fails.
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
  /** the answer body the text shows, when it shows one as JSON */
  documented?: unknown;
  /** an HL7 answer the text shows: its MSA segment's acknowledgement code and control id (`MSA|AA|LAB-000123`) */
  documentedAck?: string;
}

/** What `printf 'FORMAT'` prints, for the escapes the examples use (\\, \r, \n). */
export function printfOutput(format: string): string {
  return format.replace(/\\([\\rn])/g, (_m, c: string) => (c === 'r' ? '\r' : c === 'n' ? '\n' : '\\'));
}

/** A documented JSON answer: `…` stands for elided values (`[…]`, `"lr_…"`); undefined when not JSON. */
export function documentedJson(text: string | undefined): unknown {
  if (!text) return undefined;
  const start = text.search(/[[{]/);
  if (start < 0) return undefined;
  const json = text.slice(start).replace(/\[…\]/g, '[]').replace(/\{…\}/g, '{}');
  // the JSON value, and nothing after it but a parenthesised remark
  for (let end = json.length; end > 0; end--) {
    if (json[end - 1] !== '}' && json[end - 1] !== ']') continue;
    try {
      return JSON.parse(json.slice(0, end));
    } catch {
      // shorter
    }
  }
  return undefined;
}

/** Fields the two answers do not share (`where.field` paths), objects compared recursively, arrays by their first items. */
export function fieldDifferences(documented: unknown, actual: unknown, where = '$'): string[] {
  if (Array.isArray(documented)) {
    if (!Array.isArray(actual)) return [`${where}: documented an array, answered ${typeof actual}`];
    return documented.length && actual.length ? fieldDifferences(documented[0], actual[0], `${where}[0]`) : [];
  }
  if (documented && typeof documented === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual))
      return [`${where}: documented an object, answered ${JSON.stringify(actual)?.slice(0, 40)}`];
    const d = documented as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    return [
      ...Object.keys(d)
        .filter((k) => !(k in a))
        .map((k) => `${where}.${k}: documented, not in the answer`),
      ...Object.keys(a)
        .filter((k) => !(k in d))
        .map((k) => `${where}.${k}: in the answer, not documented`),
      ...Object.keys(d)
        .filter((k) => k in a)
        .flatMap((k) => fieldDifferences(d[k], a[k], `${where}.${k}`)),
    ];
  }
  return [];
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
    // a JSON answer further down, marked `<!-- example-answer -->`, belongs to the example before it
    if (block.lang === 'json' && /<!--\s*example-answer\s*-->/.test(block.before) && out.length > 0) {
      out[out.length - 1]!.documented ??= documentedJson(block.text);
    }
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
        documented: nextStatus
          ? documentedJson(
              next!.text
                .split(/\n\s*\n/)
                .slice(1)
                .join('\n\n'),
            )
          : undefined,
      });
    }
    if (block.lang === 'sh' || block.lang === 'bash') {
      const lines = block.text.split('\n');
      for (let i = 0; i < lines.length; i++) {
        if (!lines[i]!.startsWith('curl ')) continue;
        // `printf '...' |` on the line before: the body curl reads with --data-binary @-
        const piped = /^printf\s+'.*'\s*\|\s*$/.test(lines[i - 1] ?? '') ? printfOutput(shellWords(lines[i - 1]!)[1]!) : undefined;
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
          } else if (word === '--data-binary' && words[w + 1] === '@-' && piped !== undefined) {
            w++;
            example.body = piped;
            if (example.method === 'GET') example.method = 'POST';
          } else if (word === '-X') example.method = words[++w]!;
          else if (word.startsWith('http')) {
            const u = new URL(word);
            example.url = u.pathname + u.search;
          }
        }
        example.expected = comment ? Number(comment[1]) : (claimed(block) ?? (nextStatus ? Number(nextStatus) : undefined));
        const lastCurl = !lines.slice(i + 1).some((l) => l.startsWith('curl '));
        example.documented =
          (comment ? documentedJson((lines[i + 1] ?? '').slice(comment[0].length)) : undefined) ??
          (lastCurl && next?.lang === 'json' ? documentedJson(next.text) : undefined) ??
          (nextStatus
            ? documentedJson(
                next!.text
                  .split(/\n\s*\n/)
                  .slice(1)
                  .join('\n\n'),
              )
            : undefined);
        const ack = lastCurl && next?.lang === '' ? /^MSA\|[A-Z]{2}\|[^|\s]+/m.exec(next.text) : null;
        if (ack) example.documentedAck = ack[0];
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

  it('every example answers the status its text claims, with the fields of the answer it shows', async () => {
    const wrong: string[] = [];
    for (const e of examples) {
      const res = await call(stack, e.method, e.url, { headers: e.headers, body: e.body });
      if (res.status !== e.expected)
        wrong.push(`${e.where}: ${e.method} ${e.url} answered ${res.status}, the text claims ${e.expected}: ${res.text.slice(0, 300)}`);
      else if (e.documented !== undefined) {
        for (const d of fieldDifferences(e.documented, JSON.parse(res.text))) wrong.push(`${e.where}: ${e.method} ${e.url.split('?')[0]} ${d}`);
      } else if (e.documentedAck !== undefined && !res.text.split('\r').some((segment) => segment.startsWith(e.documentedAck!))) {
        wrong.push(`${e.where}: ${e.method} ${e.url} answered no ${e.documentedAck} segment: ${res.text.replace(/\r/g, '\n').slice(0, 300)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the examples that show a JSON answer are compared field by field', () => {
    const shown = examples.filter((e) => e.documented !== undefined).map((e) => e.where);
    console.log(`doc examples with a documented JSON answer: ${shown.length} (${shown.join(', ')})`);
    expect(shown.length).toBeGreaterThanOrEqual(4);
  });
});

describe('documented answers compared with real ones', () => {
  it('an HL7 example piped from printf is sent as printf would send it, and its ACK is compared', () => {
    expect(printfOutput('MSH|^~\\\\&|LIS\\rPID|1\\r')).toBe('MSH|^~\\&|LIS\rPID|1\r');
    const hl7 = examples.filter((e) => e.documentedAck !== undefined);
    expect(hl7.map((e) => [e.method, e.url, e.documentedAck, e.body?.startsWith('MSH|^~\\&|'), e.body?.includes('\r')])).toEqual([
      ['POST', '/receiveHl7', 'MSA|AA|LAB-000123', true, true],
    ]);
  });

  it('reads elided JSON and a trailing remark', () => {
    expect(documentedJson('{"a":1,"items":[…],"b":"lr_…"}   (a remark)')).toEqual({ a: 1, items: [], b: 'lr_…' });
    expect(documentedJson('not json')).toBeUndefined();
  });

  it('a field documented but no longer answered, or answered but not documented, is a difference', () => {
    expect(fieldDifferences({ status: 's', patientMatched: true }, { status: 's', resultId: 'lr_1' })).toEqual([
      '$.patientMatched: documented, not in the answer',
      '$.resultId: in the answer, not documented',
    ]);
    expect(fieldDifferences({ items: [{ a: 1 }] }, { items: [{ a: 2 }] })).toEqual([]);
    expect(fieldDifferences({ items: [{ a: 1 }] }, { items: [{ b: 2 }] })).toHaveLength(2);
  });
});
