/**
 * npm run openapi: writes docs/openapi.json from the endpoint list, schemas/ and
 * lib/openapi/endpoint-docs.ts. Deterministic: the same inputs give the same bytes.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { readSingleCommand, runCli, runMain, type CliIo } from '../lib/admin/cli-runner';
import { UsageError } from '../lib/admin/cli-options';
import { OPENAPI_FILE, REPO_ROOT, renderOpenApiDocument } from '../lib/openapi/document';

export function main(argv: string[], io: CliIo): Promise<number> {
  return runCli('openapi', io, async () => {
    const read = readSingleCommand(
      'openapi',
      {
        name: '',
        summary: 'Writes docs/openapi.json from the endpoint list, schemas/ and lib/openapi/endpoint-docs.ts.',
        options: {},
        examples: ['npm run openapi'],
      },
      argv,
      io,
    );
    if ('exitCode' in read) return read.exitCode;
    if (read.positionals.length > 0) throw new UsageError(`unexpected argument "${read.positionals[0]}"`);
    const text = renderOpenApiDocument();
    writeFileSync(OPENAPI_FILE, text);
    io.out(`wrote ${path.relative(REPO_ROOT, OPENAPI_FILE)} (${Buffer.byteLength(text)} bytes)\n`);
    return 0;
  });
}

if (require.main === module) runMain('openapi', main);
