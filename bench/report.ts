/** bench/RESULTS.md from the results object (everything in it is computed; nothing hand-edited). */
import { renderAuthorizerCalls } from './authorizer-calls';
import { renderPartitions } from './partitions';
import type { BenchResults, LabKms } from './run';
import type { PathCalls } from './aws-calls';
import type { LoadResult } from './load';

const f = (v: number | null | undefined, digits = 2): string => (v === null || v === undefined || !Number.isFinite(v) ? 'n/a' : v.toFixed(digits));
const kb = (bytes: number): string => (bytes / 1024).toFixed(1);
const yes = (ok: boolean): string => (ok ? 'met' : '**missed**');
const int = (v: number): string => Math.round(v).toLocaleString('en-US');

function table(headers: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

function handlerSequence(p: PathCalls): string {
  const calls = p.calls.filter((c) => c.phase === 'handler');
  const groups = new Map<number, string[]>();
  for (const c of calls)
    groups.set(c.group, [
      ...(groups.get(c.group) ?? []),
      `${c.call.replace(/^dynamodb\./, '')}${c.table ? `(${c.table})` : ''}${c.error ? ` ✗${c.error}` : ''}`,
    ]);
  const text = [...groups.values()].map((g) => (g.length > 1 ? `[${g.join(' ‖ ')}]` : g[0])).join(' → ');
  return text || '—';
}

function authorizerSequence(p: PathCalls): string {
  return p.calls
    .filter((c) => c.phase === 'authorizer')
    .map((c) => `${c.call.replace(/^dynamodb\./, '')}(${c.table ?? ''})`)
    .join(' → ');
}

function labCostSentence(r: BenchResults): string {
  const lab = r.cost.lines.find((c) => c.endpoint === 'receiveTestData');
  const before = r.issue31.costBefore;
  return lab
    ? `Lab submission (receiveTestData, ${lab.path}) **$${f(lab.perMillion.total)}** per million beside **$${f(before.perMillion)} before issue 31** (${before.source})`
    : `Lab submission not measured (was $${f(before.perMillion)} before issue 31)`;
}

/** Rows 31.1-31.6 of the targets table: the issue's wording, the figure measured in this run, met or missed. */
function issue31Rows(r: BenchResults): Array<Array<string | number>> {
  const T = r.targets;
  const i31 = r.issue31;
  const rows: Array<Array<string | number>> = [];

  // 31.1
  const a = i31.authorizer;
  const steadyMax = r.calls.steady.length ? Math.max(...r.calls.steady.map((p) => p.byPhase.authorizer.dynamodb)) : NaN;
  const atZero = a.rows.filter((x) => x.boundSeconds === 0).flatMap((x) => x.warm);
  const firstOps = a.rows.find((x) => x.boundSeconds === a.defaultBoundSeconds)?.firstOfContainer.map((c) => c.replace(/^dynamodb\./, '')) ?? [];
  const rt = i31.revocationTest;
  const testOk = rt.title !== null && rt.assertsUnauthenticated && rt.injectedClock;
  rows.push([
    '31.1',
    `Authorizer: at most ${T.authorizerDynamoCalls} DynamoDB call per request in steady state; key and partner records cached for a bounded time, revocation within the stated bound (at most 10 s), tested; the rate limiter in a single conditional UpdateItem`,
    `at most **${a.warmMax}** authorizer DynamoDB call(s) (mean ${f(a.warmMean)}) over ${a.tracedWarm} traced warm requests (${a.rows.find((x) => x.boundSeconds === a.defaultBoundSeconds)?.warmRequests ?? 0} warm-up each on ${[...new Set(a.rows.map((x) => x.endpoint))].join(', ')}; record bound ${a.defaultBoundSeconds} s); ` +
      `the same in the ${r.calls.steady.length} steady-state traces of section 3: at most ${f(steadyMax, 0)}; first request of a container: ${firstOps.join(', ')}; record bound 0 (as before issue 31): ${atZero.length ? Math.max(...atZero) : 'n/a'}. ` +
      (rt.title
        ? `Revocation bound test: ${rt.file} "${rt.title}" (${rt.assertsUnauthenticated ? 'asserts unauthenticated = 401' : '**does not assert 401**'}; ${rt.injectedClock ? 'injected clock' : '**not on an injected clock**'})`
        : `**revocation bound test not found in ${rt.file}**`),
    yes(a.warmMax <= T.authorizerDynamoCalls && a.tracedWarm > 0 && steadyMax <= T.authorizerDynamoCalls && testOk),
  ]);

  // 31.2
  const w = i31.labWriteUnits;
  rows.push(
    'notMeasured' in w
      ? ['31.2', `Lab intake: at most ${T.labWriteUnits} write units per single-result submission`, w.notMeasured, '**missed**']
      : [
          '31.2',
          `Lab intake: at most ${T.labWriteUnits} write units per single-result submission, measured and reported per item written`,
          `**${f(w.intakeUnits)}** write units per single-result submission (mean of ${w.submissions}; ` +
            w.perItem
              .filter((p) => !p.item.includes('(authorizer)'))
              .map((p) => `${p.item} ${f(p.units)}`)
              .join(', ') +
            `); the authorizer's rate counter adds ${f(w.authorizerUnits)}; section 31.2`,
          yes(w.intakeUnits <= T.labWriteUnits),
        ],
  );

  // 31.3
  const p = r.partitions;
  if (p) {
    rows.push([
      '31.3',
      `No single partition key takes more than ${f(T.largestPartitionShare * 100, 0)} % of the writes at 1,000 lab results/s, 500 form packets/s and 1,000 audited failures/s; the per-key rate limit holds at 1,000 requests/s for one partner`,
      `largest service-wide key \`${p.largestServiceWide.key}\` (${p.largestServiceWide.table}${p.largestServiceWide.index ? ` ${p.largestServiceWide.index}` : ''}) **${f(p.largestServiceWide.share * 100)} %** of ${int(p.totalWrites)} writes; ` +
        p.hotKeys
          .filter((h) => h.largest)
          .map((h) => `${h.family}: ${h.partitions} partitions, largest ${f(h.largest!.share * 100)} %`)
          .join('; ') +
        `. Counter writes from ${p.containers.count} simulated containers (one per concurrency slot, clock at the issue's rates); the one local container's counters apart (${f(p.containers.localOneContainer.shareIfCounted * 100)} % if counted)${p.containers.sensitivity.map((x) => `; the same counter hits from ${x.containers} containers: largest ${f(x.largestShare * 100)} %`).join('')}. ` +
        `Limit: a 1,000/s key offered 1,250/s by ${p.limitCheck.containers} containers admitted at most **${int(p.limitCheck.maxInAnyWindowMs1000)} in any 1,000 ms** (${p.limitCheck.held ? 'held' : '**not held**'}; also lib/keys/rate-limiter.test.ts). Section 7`,
      yes(p.largestServiceWide.share <= T.largestPartitionShare && p.limitCheck.held),
    ]);
  } else rows.push(['31.3', 'No single partition key takes more than 1 % of the writes', 'not measured', '**missed**']);

  // 31.4
  rows.push([
    '31.4',
    'Scale with the chart: the summary export and `$everything` of a patient with 10,000 records, and the inbox with 100,000 waiting packets: time, read units and memory growing no worse than linearly; paging where a response would pass the size caps',
    i31.scale.row.result,
    yes(i31.scale.row.met),
  ]);

  // 31.5
  const cs = r.coldStart;
  const within = cs.functions.filter(
    (x) =>
      x.ratios.size <= T.bundleRatio &&
      x.ratios.initMs !== null &&
      x.ratios.initMs <= T.bundleRatio &&
      x.extraClients.length === 0 &&
      x.uncalledClients.length === 0,
  );
  const initUnmeasured = cs.functions.filter((x) => x.ratios.initMs === null);
  const toResponse = cs.functions.filter((x) => x.timing.initEnd === 'response');
  const uncalled = cs.functions.filter((x) => x.uncalledClients.length > 0);
  const worst = (pick: (x: (typeof cs.functions)[number]) => number | null) =>
    cs.functions.reduce<{ name: string; v: number } | undefined>((best, x) => {
      const v = pick(x);
      return v !== null && (!best || v > best.v) ? { name: x.name, v } : best;
    }, undefined);
  const worstSize = worst((x) => x.ratios.size);
  const worstInit = worst((x) => x.ratios.initMs);
  const withinClientFloor = cs.functions.filter(
    (x) =>
      x.clientFloorRatios.size <= T.bundleRatio &&
      x.clientFloorRatios.initMs !== null &&
      x.clientFloorRatios.initMs <= T.bundleRatio &&
      x.extraClients.length === 0 &&
      x.uncalledClients.length === 0,
  );
  const worstClientInit = worst((x) => x.clientFloorRatios.initMs);
  const sm = i31.sourceMaps;
  const mapsOk = sm.bundles > 0 && sm.beside === sm.bundles;
  rows.push([
    '31.5',
    `Bundles: every function within ${T.bundleRatio}x of its SDK floor in size and init (only what a function uses of the endpoint list in its bundle); source maps shipped beside, not inside`,
    `**${within.length} of ${cs.functions.length}** functions within ${T.bundleRatio}x in size and init of their own SDK floor (method changed in issue 31: each function's floor is the SDK doing what its measured invocation does: its clients, the Command classes of its bundle it sends, the same first burst of calls; the one-GetItem client floor of before counts ${withinClientFloor.length} of ${cs.functions.length} within, worst init ${worstClientInit ? `${f(worstClientInit.v, 3)}x (${worstClientInit.name})` : 'n/a'}, column "client floor ×" of section 1)${cs.notMeasured.length ? ` (${cs.notMeasured.length} not measured: ${cs.notMeasured.map((x) => x.name).join(', ')})` : ''}; worst size ${worstSize ? `${f(worstSize.v, 3)}x (${worstSize.name})` : 'n/a'}, worst init ${worstInit ? `${f(worstInit.v, 3)}x (${worstInit.name})` : 'n/a'} of the ${cs.functions.length - initUnmeasured.length} whose init was measured` +
      (toResponse.length
        ? `; init to response (no SDK call on their path) for ${toResponse.length}: ${toResponse.map((x) => `${x.name} ${f(x.ratios.initMs, 2)}x (status ${x.timing.responseStatus ?? '?'})`).join(', ')}`
        : '') +
      (initUnmeasured.length
        ? `; **init not measured for ${initUnmeasured.length}** (${initUnmeasured.map((x) => `${x.name} (${x.timing.firstCallTarget ?? '?'})`).join(', ')}), counted as not within`
        : '') +
      (uncalled.length
        ? `; **bundling a client they never call** (no table in needs): ${uncalled.map((x) => `${x.name} (${x.uncalledClients.join(', ')})`).join(', ')}`
        : '') +
      ownCodeText(cs.functions) +
      (within.length < cs.functions.length
        ? `; outside: ${cs.functions
            .filter((x) => !within.includes(x))
            .filter((x) => x.ratios.initMs !== null)
            .map((x) => `${x.name} ${f(x.ratios.size, 2)}/${f(x.ratios.initMs, 2)}${x.uncalledClients.length ? '/uncalled client' : ''}`)
            .join(', ')} (size/init)`
        : '') +
      `. Source maps: ${sm.beside} of ${sm.bundles} bundles link a .map file beside them${sm.inline.length ? `; **inline in ${sm.inline.join(', ')}**` : ''}${sm.missing.length ? `; **no map beside ${sm.missing.join(', ')}**` : ''}. Same measurement as row 1 (issue 7), section 1`,
    yes(within.length === cs.functions.length && cs.notMeasured.length === 0 && mapsOk),
  ]);

  // 31.6
  const vsMedplum = r.hl7.messages.map((m) => {
    const ours = m.candidates[0]!.messagesPerSecond;
    const medplum = m.candidates.find((c) => c.name.startsWith('@medplum/core'));
    return { message: m.message, ratio: medplum ? ours / medplum.messagesPerSecond : NaN };
  });
  rows.push([
    '31.6',
    `The encoder: at least ${T.hl7VsMedplum}x @medplum/core on both the note and the 200-record summary, measured as today, escaping and validation kept (${T.hl7VsMedplumGoal}x stays the goal)`,
    vsMedplum.map((v) => `${v.message}: **${f(v.ratio)}x** @medplum/core`).join('; ') +
      `; target ${T.hl7VsMedplum}x: ${vsMedplum.filter((v) => v.ratio >= T.hl7VsMedplum).length} of ${vsMedplum.length}; goal ${T.hl7VsMedplumGoal}x: ${vsMedplum.filter((v) => v.ratio >= T.hl7VsMedplumGoal).length} of ${vsMedplum.length}. Same measurement as row 4 (issue 7, against the fastest peer), section 4`,
    yes(vsMedplum.length > 0 && vsMedplum.every((v) => v.ratio >= T.hl7VsMedplum)),
  ]);

  // cost
  rows.push([
    '31 cost',
    `Lab submission cost per million (no target; issue 31 measured $${f(r.issue31.costBefore.perMillion)} before)`,
    labCostSentence(r),
    '—',
  ]);
  return rows;
}

function isLabKms(x: BenchResults['calls']['labKms']): x is LabKms {
  return 'timedRun' in x;
}

export function renderMarkdown(r: BenchResults): string {
  const out: string[] = [];
  const m = r.machine;
  const T = r.targets;
  out.push('# Benchmark results (issues 7 and 31)');
  out.push('');
  out.push(
    `Generated by \`npm run bench\` (bench/run.ts); every figure below was measured in one run on the machine listed here; \`bench/results.json\` has all of them (and every sample summary).${r.quick ? ' **This was a --quick run: the counts are too small to be representative.**' : ''}`,
  );
  out.push('');
  out.push(
    table(
      ['Machine', ''],
      [
        ['CPU', `${m.cpuModel} (${m.cores} cores)`],
        ['Memory', `${m.memoryGiB} GiB`],
        ['OS / arch', `${m.os} / ${m.arch}`],
        ['Node', m.node],
        ['Date', m.date],
        ['Commit', `${m.gitCommit}${m.gitDirty ? ' + uncommitted changes' : ''}`],
        ['Total run time', `${r.totalRunSeconds} s`],
        [
          'Versions',
          Object.entries(m.packages)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        ],
      ],
    ),
  );
  out.push('');
  out.push(
    `Lab intake (functions/receiveTestData.ts): ${r.labIntake.measured ? 'present and measured' : (r.labIntake.reason ?? 'not measured')}${r.labIntake.presentAtEnd !== r.labIntake.presentAtStart ? ' (NOTE: its presence changed during the run)' : ''}.`,
  );
  out.push('');

  // ------------------------------------------------------------ targets
  const cs = r.coldStart;
  const coldMet = cs.functions.filter((x) => x.meetsTarget);
  const warm = r.warmLatency;
  const warmMissed = warm.filter((w) => w.endToEnd.p50Ratio > T.warmP50Ratio);
  const exportsSteady = r.calls.steady.filter((p) => p.endpoint.startsWith('exportHl7'));
  const exportsOver = exportsSteady.filter((p) => p.byPhase.handler.dynamodb > T.exportHandlerDynamoCalls);
  const allPaths = [...r.calls.steady, ...r.calls.paths];
  const repeated = allPaths.filter((p) => p.repeated.length > 0);
  const labKms = r.calls.labKms;
  const hl7Ratios = r.hl7.messages.map((x) => x.oursVsFastestPeer);
  out.push('## Targets at a glance');
  out.push('');
  out.push(
    table(
      ['#', 'Target', 'Result', 'Status'],
      [
        [
          '1',
          `every function within ${T.coldStartRatio}x of its own SDK floor (its clients, the Command classes it sends, its first burst of calls) in size and init time; no client it does not call`,
          `${coldMet.length} of ${cs.functions.length} functions meet all three (${coldMet.map((x) => x.name).join(', ')}). Size ratios ${f(Math.min(...cs.functions.map((x) => x.ratios.size)), 3)}–${f(Math.max(...cs.functions.map((x) => x.ratios.size)), 3)}x, init ratios ${f(Math.min(...cs.functions.map((x) => x.ratios.initMs ?? Infinity)), 3)}–${f(Math.max(...cs.functions.map((x) => x.ratios.initMs ?? 0)), 3)}x; functions bundling a client outside their needs: ${
            cs.functions
              .filter((x) => x.extraClients.length)
              .map((x) => `${x.name} (+${x.extraClients.join(', +')})`)
              .join('; ') || 'none'
          }; bundling a client they never call: ${
            cs.functions
              .filter((x) => x.uncalledClients.length)
              .map((x) => `${x.name} (${x.uncalledClients.join(', ')})`)
              .join('; ') || 'none'
          }${cs.notMeasured.length ? `; not measured: ${cs.notMeasured.map((x) => x.name).join(', ')}` : ''}`,
          yes(coldMet.length === cs.functions.length && cs.notMeasured.length === 0),
        ],
        [
          '2',
          `handler p50 within ${T.warmP50Ratio}x of its I/O floor (authorizer + endpoint vs all their AWS calls)`,
          warm.map((w) => `${w.endpoint} ${f(w.endToEnd.p50Ratio, 3)}x`).join(', ') +
            (r.notTimed.length ? `; not timed: ${r.notTimed.map((n) => n.endpoint).join(', ')}` : ''),
          yes(warmMissed.length === 0),
        ],
        [
          '3a',
          `exports: at most ${T.exportHandlerDynamoCalls} DynamoDB calls in the handler`,
          exportsSteady.map((p) => `${p.endpoint} ${p.byPhase.handler.dynamodb}`).join(', ') +
            `; the authorizer adds ${exportsSteady[0]?.byPhase.authorizer.dynamodb ?? 'n/a'} DynamoDB call(s) per request in steady state (issue 31 row 31.1)`,
          yes(exportsOver.length === 0 && exportsSteady.length > 0),
        ],
        [
          '3b',
          `lab intake: at most ${T.labKmsCallsPer100Results} KMS call per 100 results under steady load`,
          isLabKms(labKms)
            ? `${f(labKms.timedRun.per1000)} KMS calls per 1,000 submissions in the timed run${labKms.loadRun ? `, ${f(labKms.loadRun.per1000)} per 1,000 under load` : ''} (= ${f(labKms.timedRun.per1000 / 10)} per 100)`
            : labKms.notMeasured,
          isLabKms(labKms)
            ? yes(labKms.timedRun.per1000 <= T.labKmsCallsPer100Results * 10 && (labKms.loadRun?.per1000 ?? 0) <= T.labKmsCallsPer100Results * 10)
            : 'not measured',
        ],
        [
          '3c',
          'no call repeated within a request',
          repeated.length
            ? repeated.map((p) => `${p.endpoint} (${p.path}): ${p.repeated.join(', ')}`).join('; ')
            : `none in ${allPaths.length} traced requests`,
          yes(repeated.length === 0),
        ],
        [
          '4',
          `HL7 encoder at least ${T.hl7VsFastestPeer}x the fastest peer`,
          r.hl7.messages.map((x) => `${x.message}: ${f(x.oursVsFastestPeer)}x ${x.fastestPeer}`).join('; '),
          yes(hl7Ratios.every((v) => v >= T.hl7VsFastestPeer)),
        ],
        [
          '5',
          'local API throughput, concurrency 16 (no target)',
          r.load
            .map((l) =>
              'requests' in l ? `${l.endpoint} ${f(l.requestsPerSecond, 0)} req/s, p99 ${f(l.latencyMs.p99, 1)} ms` : `${l.endpoint}: ${l.notMeasured}`,
            )
            .join('; '),
          '—',
        ],
        [
          '6',
          'cost per 1M requests (no target; DynamoDB priced by metered capacity units)',
          r.cost.lines.map((c) => `${c.endpoint} $${f(c.perMillion.total)}`).join(', ') + '; the lab submission beside its cost before issue 31: row 31 cost',
          '—',
        ],
        ...issue31Rows(r),
      ],
    ),
  );
  out.push('');

  // ------------------------------------------------------------ 1
  out.push('## 1. Cold start: bundle size and init time vs the SDK floor of each function');
  out.push('');
  out.push(`Method: ${cs.method}. ${cs.runsPerBundle} processes per bundle (plus one discarded warm-up round), medians.`);
  out.push('');
  out.push(
    `"init" = import() of the bundle + the first invocation up to its first AWS SDK request (clients built, credentials and endpoint resolved, request serialised and signed: every request the invocation starts before that one leaves, e.g. a listing's concurrent shard Queries, is serialised and signed inside it); "import" = module evaluation only. A function whose invocation makes no SDK call at all (a static page, the FHIR capability statement, route not found) is measured "init to response": import() + the whole invocation up to the response its handler returns, a later end point than a first SDK request (it includes all of the handler), compared with the same floor init; this counts only for a function whose \`needs\` grant it no client it could call, answering with its route's status (200, or 404 for the unknown FHIR route): any other response without an SDK call (a 5xx, or a refused bench request) is no measurement. A function that needs no client is still compared with the smallest (DynamoDB) client floor; against an empty handler its ratio would be far above 1, which says nothing about its SDK use. The column "init measured to" says which end point each row has. The cold-start environment is the deployed one, including the staff sign-in settings infra gives the authorizer and the inbox page (without them the page answers 503). "No client it does not call": an SDK client in the bundle that \`needs\` does not list, or DynamoDB when \`needs\` grants no table (the function's role could not call it: column "SDK clients bundled", **never called**), fails the target. **Floor (method changed in issue 31, item 5)** = the SDK doing what the function's measured invocation does, and no more: the clients of its \`needs\` (DynamoDB always; KMS / SQS / S3 / API Gateway when listed) built like lib/aws/clients.ts, importing the Command classes it sends (the \`@aws-sdk/client-*\` command modules of those clients in the function's own bundle, from its esbuild metafile, that its \`needs\` let it send: \`needs\` list exactly the operations its code sends, infra/least-privilege.test.ts; a command module it bundles but never sends, e.g. GetItem of a reader class bundled whole by a function that only queries, stays its excess), and sending the same first burst of calls: the SDK calls the function's cold invocation (the same event and environment) starts before any of them answers, recorded in a fresh process by bench/cold-start-record.ts with the CallRecorder the warm I/O floor of section 2 replays, sent with the same commands and inputs, the same count, all at once (Promise.all), and stopped the same way at the first outgoing request (column "floor: first burst"). Functions with identical clients, commands and burst share a floor. Its size (column "floor KB") is its bundle without its own entry module, i.e. SDK code only: the entry writes the recorded inputs out as literals (33 Query inputs are kilobytes) where the function computes them in code it is charged for; the whole floor bundle is shown in brackets, and the gzip column (not gated) is of the whole bundle. So a listing that signs 33 shard Queries before its first request leaves is compared with a floor that signs the same 33, and a function bundling PutObject (with the S3 checksums it pulls in) with a floor that bundles it too; its floor's calls are a subset of the function's (those it issued before any answer), its command modules a subset of those the function bundles and sends, so it never does more than the function. A function whose invocation makes no SDK call keeps the client floor. **Before issue 31** the floor of every function was its client set's "client floor": the same clients plus ONE DynamoDB GetItem and no other command code, so a burst of N calls and the command code of what a function sends counted as the function's excess; that figure stays in the table (column "client floor ×", size / init) beside the gated ratios. Same esbuild options, same run, interleaved. A function that builds a client only after its first SDK call (the forms functions build KMS/SQS lazily) does not pay that construction inside its init figure, while its floor builds all its clients first; the import column has no such asymmetry.`,
  );
  out.push('');
  out.push(
    table(
      [
        'Function',
        'needs',
        'floor: first burst',
        'SDK clients bundled',
        'KB',
        'gzip KB',
        'floor KB / gzip',
        'size ×',
        'gzip ×',
        'import ms (floor)',
        'init ms (floor)',
        'init ×',
        'client floor × (size / init)',
        'init measured to',
        'target',
      ],
      cs.functions.map((x) => {
        const floor = cs.floors.find((fl) => fl.id === x.floor)!;
        return [
          x.name,
          x.needs.join('+'),
          x.floorKind === 'calls'
            ? `${x.firstBurst}${x.firstRequestDiffers ? ` (**first request differs**: ${x.firstRequestDiffers})` : ''}`
            : `client floor (${x.firstBurst})`,
          x.bundle.sdkClients.join('+') +
            (x.extraClients.length ? ` (**+${x.extraClients.join(', +')}** not in needs)` : '') +
            (x.uncalledClients.length ? ` (**${x.uncalledClients.join(', ')} never called**: no table in needs)` : ''),
          kb(x.bundle.bytes),
          kb(x.bundle.gzipBytes),
          `${kb(floor.sizeBytes)}${floor.sizeBytes !== floor.bundle.bytes ? ` (${kb(floor.bundle.bytes)} with its inputs)` : ''} / ${kb(floor.bundle.gzipBytes)}`,
          f(x.ratios.size, 3),
          f(x.ratios.gzip, 3),
          `${f(x.timing.importMs, 1)} (${f(floor.timing.importMs, 1)})`,
          `${f(x.timing.initMs, 1)} (${f(floor.timing.initMs, 1)})`,
          f(x.ratios.initMs, 3),
          `${f(x.clientFloorRatios.size, 3)} / ${f(x.clientFloorRatios.initMs, 3)}`,
          x.timing.initEnd === 'response'
            ? `response (status ${x.timing.responseStatus ?? '?'}; no SDK call)`
            : x.timing.initEnd === 'first-sdk-call'
              ? `first SDK call ${x.timing.firstCallTarget ?? ''}`
              : `not measured: ${x.timing.firstCallTarget ?? '?'}`,
          yes(x.meetsTarget),
        ];
      }),
    ),
  );
  for (const nm of cs.notMeasured) out.push(`\n- ${nm.name}: ${nm.reason}`);
  out.push('');
  out.push('Where each function exceeds its floor (bundle bytes above the floor, by package; and who imports an extra client):');
  out.push('');
  for (const x of cs.functions) {
    const parts = x.excessByPackage.slice(0, 5).map((e) => `${e.pkg} +${e.kb} KB`);
    const extra = [...x.extraClients, ...x.uncalledClients].map((c) => `${c} client imported by ${(x.bundle.clientImporters[c] ?? ['?']).join(', ')}`);
    const app = x.bundle.topAppFiles.map((a) => `${a.file} ${a.kb}`).join(', ');
    out.push(
      `- **${x.name}** (${f(x.ratios.size, 3)}x size, ${f(x.ratios.initMs, 3)}x init${x.timing.initEnd === 'response' ? ' to response' : ''}): ${parts.join(', ') || 'nothing above 1 KB'}${extra.length ? `. Extra: ${extra.join('; ')}` : ''}. Largest app files (KB): ${app}.`,
    );
  }
  const sm = r.issue31.sourceMaps;
  out.push('');
  out.push(
    `Source maps (issue 31 item 5): every bundle built above (LAMBDA_BUNDLE_OPTIONS, as deployed) read back: ${sm.beside} of ${sm.bundles} end in a linked \`//# sourceMappingURL=<file>.map\` with that file beside them; inline (\`sourceMappingURL=data:\`, fails): ${sm.inline.join(', ') || 'none'}; no map beside: ${sm.missing.join(', ') || 'none'}.`,
  );
  const needsUnused = cs.functions.filter((x) => x.needs.some((c) => !x.bundle.sdkClients.includes(c)));
  if (needsUnused.length) {
    out.push('');
    out.push(
      `Listed in \`needs\` but not in the bundle (the floor is then larger than the function needs, which flatters its ratio): ${needsUnused.map((x) => `${x.name} (${x.needs.filter((c) => !x.bundle.sdkClients.includes(c)).join(', ')})`).join('; ')}.`,
    );
  }
  out.push('');

  // ------------------------------------------------------------ 2
  out.push('## 2. Warm latency per endpoint vs its I/O floor (local stack, in process)');
  out.push('');
  out.push(
    `Each request = the real authorizer, then the real endpoint handler, in process (the two Lambda invocations of API Gateway with a TTL-0 authorizer; bench/invoke.ts does what lib/local/api-gateway.ts dispatch() does, timing the two separately; the last column is the real dispatch() over ${r.counts.dispatchRuns} requests as a cross-check). Floor = the AWS calls of one traced steady-state request of that endpoint, issued alone with raw SDK clients against the same local stack, in the same order (concurrent where the handler was). ${r.counts.requests} requests and ${r.counts.floorRuns} floor replays per endpoint, interleaved in ${r.counts.blocks} blocks after ${r.counts.warmup} warm-up requests. Milliseconds.`,
  );
  out.push('');
  out.push(
    table(
      [
        'Endpoint',
        'path',
        'p50',
        'p99',
        'floor p50',
        'floor p99',
        'p50 ×',
        'p99 ×',
        'authorizer p50 (floor)',
        'handler p50 (floor)',
        'handler ×',
        'dispatch() p50',
        'target',
        'floor calls',
      ],
      warm.map((w) => [
        w.endpoint,
        w.path,
        f(w.endToEnd.handler.p50),
        f(w.endToEnd.handler.p99),
        f(w.endToEnd.floor.p50),
        f(w.endToEnd.floor.p99),
        f(w.endToEnd.p50Ratio, 3),
        f(w.endToEnd.p99Ratio, 3),
        `${f(w.authorizer.handler.p50)} (${f(w.authorizer.floor.p50)})`,
        `${f(w.handler.handler.p50)} (${f(w.handler.floor.p50)})`,
        f(w.handler.p50Ratio, 3),
        f(w.dispatch.p50),
        yes(w.endToEnd.p50Ratio <= T.warmP50Ratio),
        `${w.floorCallCount}: ${w.floorCalls}`,
      ]),
    ),
  );
  const anomalies = warm.filter((w) => Object.keys(w.nonOkResponses).length || w.floorErrors.length);
  for (const a of anomalies)
    out.push(`\n- ${a.endpoint}: non-OK responses ${JSON.stringify(a.nonOkResponses)}; floor replay errors ${a.floorErrors.join(', ') || 'none'}`);
  for (const n of r.notTimed) out.push(`\n- ${n.endpoint}: ${n.reason}`);
  out.push('');

  // ------------------------------------------------------------ 3
  out.push('## 3. AWS calls per request (SDK middleware on the shared clients)');
  out.push('');
  out.push(
    'Counted by a middleware added in the bench process to the clients of lib/aws/clients.ts (`middlewareStack.add`, step initialize: one per logical call; `$metadata.attempts` was 1 for every traced call unless marked). RRU/WRU = DynamoDB capacity as DynamoDB bills it (ReturnConsumedCapacity from the emulator: reads per 4 KB, eventually consistent = 0.5; writes per 1 KB of the larger of old and new item), WRU including an estimate for secondary-index writes (projection ALL).',
  );
  out.push('');
  const callRows = (list: PathCalls[]) =>
    list.map((p) => [
      p.endpoint,
      p.path,
      p.status,
      `${p.byPhase.authorizer.dynamodb}: ${authorizerSequence(p)}`,
      p.byPhase.handler.dynamodb,
      p.byPhase.handler.kms,
      p.byPhase.handler.sqs,
      p.byPhase.handler.s3,
      f(p.byPhase.authorizer.rru + p.byPhase.handler.rru, 1),
      f(p.byPhase.authorizer.wru + p.byPhase.handler.wru, 1),
      p.repeated.length ? `**${p.repeated.join(', ')}**` : 'none',
      handlerSequence(p),
    ]);
  const callHeaders = [
    'Endpoint',
    'path',
    'status',
    'authorizer DynamoDB calls',
    'handler DynamoDB',
    'KMS',
    'SQS',
    'S3',
    'RRU',
    'WRU',
    'repeated',
    'handler calls in order (‖ = concurrent)',
  ];
  out.push('Steady state (the traced request behind each floor in section 2):');
  out.push('');
  out.push(table(callHeaders, callRows(r.calls.steady)));
  out.push('');
  out.push('Where the write units go (steady state; WRU per call, + estimated index writes):');
  out.push('');
  for (const p of r.calls.steady) {
    const writes = p.calls.filter((c) => c.phase !== 'other' && c.call.startsWith('dynamodb.') && /Put|Update|Delete|Write/.test(c.call));
    out.push(
      `- ${p.endpoint}: ${writes.map((c) => `${c.call.replace('dynamodb.', '')}(${c.table}) ${f(c.units ?? 0, 0)}${c.indexWrites ? ` + ${c.indexWrites} index` : ''}${c.bytes ? ` [item ${int(c.bytes)} B]` : ''}`).join(', ')} = ${f(p.byPhase.authorizer.wru + p.byPhase.handler.wru, 0)} WRU`,
    );
  }
  out.push('');
  out.push('Other paths (one traced request each):');
  out.push('');
  out.push(table(callHeaders, callRows(r.calls.paths)));
  out.push('');
  if (isLabKms(labKms)) {
    out.push(
      `Lab intake KMS: ${
        Object.entries(labKms.timedRun.kmsCalls)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ') || 'no KMS call'
      } in ${int(labKms.timedRun.submissions)} sequential submissions = **${f(labKms.timedRun.per1000)} per 1,000 submissions**${labKms.loadRun ? `; under the 16-way load ${f(labKms.loadRun.per1000)} per 1,000` : ''}. One submission here carries ${labKms.resultsPerSubmission} test results; the data key is spent per encryption, not per test result, so per 1,000 individual results it is ${labKms.resultsPerSubmission}x lower. Cold paths: ${Object.entries(
        labKms.coldPaths,
      )
        .map(([k, v]) => `${k} ${v} KMS call(s)`)
        .join('; ')}. Bound: ${labKms.dataKeyBound}.`,
    );
  } else {
    out.push(`Lab intake KMS: ${labKms.notMeasured}.`);
  }
  out.push('');

  // ------------------------------------------------------------ 4
  out.push('## 4. HL7 encoder throughput (build + serialise, escaping included; the bundled code under plain node)');
  out.push('');
  out.push(
    `Method: ${r.hl7.method}. What is timed is what the Lambda runs: the esbuild bundle under plain node, not the TypeScript sources under tsx. Peers build the same message from a prepared layout of unescaped values taken from our output (they skip the domain mapping ours does: favourable to them). ${r.hl7.notMeasured.join('; ')}.`,
  );
  out.push('');
  for (const msg of r.hl7.messages) {
    const ours = msg.candidates[0]!.messagesPerSecond;
    out.push(`**${msg.message}** — ${msg.description}; ${msg.segments} segments, ${int(msg.bytes)} bytes.`);
    out.push('');
    out.push(
      table(
        ['Encoder', 'messages/s', 'ours ÷ this', 'bytes', 'same bytes as ours'],
        msg.candidates.map((c) => [
          c.name,
          int(c.messagesPerSecond),
          f(ours / c.messagesPerSecond),
          int(c.bytes),
          c.identicalToOurs === null ? '—' : c.identicalToOurs ? 'yes' : `no: ${c.differences ?? ''}`,
        ]),
      ),
    );
    out.push('');
  }
  if (r.hl7.profile?.length) {
    out.push(
      `Where lib/hl7 spends its time on the 200-record summary (CPU profile, self time): ${r.hl7.profile.map((p) => `${p.fn} ${p.selfPercent}%`).join(', ')}.`,
    );
    out.push('');
  }

  // ------------------------------------------------------------ 5
  out.push('## 5. Local API under load');
  out.push('');
  out.push(
    `HTTP on loopback to the local API (lib/local/api-gateway.ts server: real authorizer and handler per request), closed loop of 16 concurrent keep-alive connections from a separate Node process (bench/load-client.mjs), ${r.counts.loadWarmupMs / 1000} s warm-up then ${r.counts.loadMs / 1000} s measured. The gateway, dynalite, fauxqs and the KMS emulation share one Node process (one core at most), so this is the local stack's capacity on this machine, not AWS's.`,
  );
  out.push('');
  const loads = r.load.filter((l): l is LoadResult => 'requests' in l);
  out.push(
    table(
      ['Endpoint', 'path', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'statuses', 'SDK calls per request'],
      loads.map((l) => [
        l.endpoint,
        l.path,
        int(l.requests),
        f(l.requestsPerSecond, 1),
        f(l.latencyMs.p50),
        f(l.latencyMs.p99),
        f(l.latencyMs.max),
        JSON.stringify(l.statuses),
        Object.entries(l.callsPerRequest)
          .map(([k, v]) => `${k} ${f(v, 3)}`)
          .join(', '),
      ]),
    ),
  );
  for (const l of r.load) if (!('requests' in l)) out.push(`\n- ${l.endpoint}: ${l.notMeasured}`);
  out.push('');

  // ------------------------------------------------------------ 6
  const P = r.cost.prices;
  out.push('## 6. Cost per million requests (AWS list prices)');
  out.push('');
  out.push(
    table(
      ['Price', `${P.region}, as of ${P.asOf}`],
      [
        ['Lambda arm64 compute', `$${P.lambdaArm64PerGbSecond} per GB-s (billed duration rounded up to 1 ms)`],
        ['Lambda requests', `$${P.lambdaPerMillionRequests} per 1M (endpoint + authorizer = 2 per API request)`],
        ['API Gateway REST', `$${P.apiGatewayRestPerMillion} per 1M`],
        ['DynamoDB on-demand', `$${P.dynamoDbPerMillionWru} per 1M WRU, $${P.dynamoDbPerMillionRru} per 1M RRU`],
        ['KMS', `$${P.kmsPer10kRequests} per 10,000 requests`],
        ['SQS', `$${P.sqsPerMillionRequests} per 1M requests (per 64 KB chunk)`],
        ['S3 (not in the issue list; only if called)', `$${P.s3PutPer1k} per 1,000 PUT, $${P.s3GetPer1k} per 1,000 GET`],
        ['CloudWatch Logs ingestion (shown apart, not in the total)', `$${P.cloudWatchLogsIngestPerGb} per GB`],
      ],
    ),
  );
  out.push('');
  out.push(`Prices: ${P.asOfNote}.`);
  out.push('');
  out.push(
    table(
      [
        'Endpoint',
        'memory MB',
        'billed ms endpoint / authorizer',
        'RRU',
        'WRU (of it index)',
        'KMS',
        'SQS',
        'API GW $',
        'Lambda req $',
        'Lambda compute $ (endpoint + authorizer)',
        'DynamoDB $ (read + write)',
        'KMS $',
        'SQS $',
        'S3 $',
        '**total $ / 1M**',
        `total if each AWS call took ${r.cost.awsCallMsAssumed} ms`,
        'logs $ (apart)',
      ],
      r.cost.lines.map((c) => [
        c.endpoint,
        c.memoryMb,
        `${f(c.billedMs.handler)} / ${f(c.billedMs.authorizer)}`,
        f(c.perRequest.rru, 1),
        `${f(c.perRequest.wru, 1)} (${f(c.perRequest.wruIndex, 1)})`,
        f(c.perRequest.kms, 4),
        f(c.perRequest.sqs, 2),
        f(c.perMillion.apiGateway),
        f(c.perMillion.lambdaRequests),
        `${f(c.perMillion.lambdaCompute + c.perMillion.authorizerCompute)} (${f(c.perMillion.lambdaCompute)} + ${f(c.perMillion.authorizerCompute)})`,
        `${f(c.perMillion.dynamoDbReads + c.perMillion.dynamoDbWrites)} (${f(c.perMillion.dynamoDbReads)} + ${f(c.perMillion.dynamoDbWrites)})`,
        f(c.perMillion.kms, 3),
        f(c.perMillion.sqs),
        f(c.perMillion.s3),
        `**${f(c.perMillion.total)}**`,
        f(c.totalWithAwsLatency),
        f(c.logsPerMillion, 3),
      ]),
    ),
  );
  out.push('');
  out.push(
    `DynamoDB is priced by capacity units, not by calls: RRU and WRU per request (authorizer + endpoint) are the mean of ${r.cost.lines[0]?.meteredRequests ?? 0} metered requests per endpoint (bench/capacity-units.ts: every written item read before and after, the table priced at ceil KB of the larger, every index entry put, moved, rewritten or removed priced at ceil KB of the index item, projection ALL; reads as the emulator reports them). ${labCostSentence(r)}.`,
  );
  out.push('');
  out.push(
    `Billed durations are the local means (per-request time rounded up to 1 ms); local DynamoDB calls take ~1 ms, in AWS a few ms, hence the sensitivity column (every AWS call on the path at ${r.cost.awsCallMsAssumed} ms, an assumption). Not included: data transfer, CloudWatch metrics/alarms, X-Ray (tracing is on in infra/), KMS key-month, storage.`,
  );
  out.push('');

  // ------------------------------------------------------------ caveats
  // ------------------------------------------------------------ 7
  if (r.partitions) {
    out.push('## 7. Writes per partition key (issue 31)');
    out.push('');
    out.push(
      "Method: bench/partitions.ts on a local stack of its own with the background workers (the matcher moves packets on): every DynamoDB write counted by the partition key it lands on, the table key and each global index key it writes or leaves. Shares of the service's own keys do not depend on the rate (shards are chosen by a hash or at random), so the mix runs at whatever rate the machine manages (concurrency 8). The rate-limit counters do depend on the containers: in Lambda a container serves one request at a time, so a key at 1,000 requests/s is served by many containers at once, each counting in a shard for a visit of at most 16 admissions, then in the less written of two shards picked at random; the local stack is one container. Model used here: as many simulated authorizer containers as the load's concurrency (one SlidingWindowRateLimiter each, the container state that decides where a counter write lands), each counting every request of its slot, with the clock of the issue's rates (2,500 requests a second, so 1,000 lab results span one second), under a subject of their own (`containers:key#...`); the local authorizer's own counter writes are reported apart.",
    );
    out.push('');
    out.push(...renderPartitions(r.partitions));
    out.push('');
  }

  // ------------------------------------------------------------ issue 31
  const i31 = r.issue31;
  out.push('## 31.1 Authorizer: DynamoDB calls per request');
  out.push('');
  out.push(
    `bench/authorizer-calls.ts (measureAuthorizerCalls) on a local stack of its own: per endpoint, a new container (new SDK clients, so new record cache and limiter), its first request traced, then warm-up requests, then traced warm requests; with the container record bound at its default (${i31.authorizer.defaultBoundSeconds} s) and at 0 (records read on every request, as before issue 31). Revocation bound: ${i31.revocationTest.title ? `${i31.revocationTest.file}, "${i31.revocationTest.title}"` : 'test not found'}.`,
  );
  out.push('');
  out.push(...renderAuthorizerCalls(i31.authorizer));
  out.push('');
  out.push('## 31.2 Lab intake: write units per single-result submission');
  out.push('');
  out.push(
    'bench/lab-write-units.ts (measureLabWriteUnits) on a local stack of its own: single-result `POST /receiveTestData` submissions one at a time (x-request-id set), every write priced as DynamoDB does (ceil KB of the larger of the item before and after; each global index entry written or removed priced at ceil KB of the index item), mean per submission by item written.',
  );
  out.push('');
  out.push(...('notMeasured' in i31.labWriteUnits ? [i31.labWriteUnits.notMeasured + '.'] : i31.labWriteUnitsTable));
  out.push('');
  out.push('## 31.4 Scale with the chart and the inbox');
  out.push('');
  out.push(...(i31.scale.section.length ? i31.scale.section : [`bench/scale.ts: ${i31.scale.row.result}.`]));
  out.push('');

  out.push('## Method notes and caveats');
  out.push('');
  out.push(
    [
      '- Local figures: the latencies are against in-process emulators (dynalite, fauxqs, a KMS emulation) sharing the Node process with the handlers on a 2-core machine; ratios to the floor are the meaningful part, absolute milliseconds are not AWS latencies.',
      '- Cold start runs Node ' +
        m.node +
        ' locally; Lambda runs the bundles on its nodejs22.x arm64 runtime (target node22), whose absolute init times differ. Function and floor are measured under identical conditions, so the ratios carry over.',
      '- Percentiles use linear interpolation between closest ranks (bench/stats.ts). p99 of 2,000 samples rests on ~20 samples and moves with machine noise; the p50 ratios are the stable figures.',
      '- Nothing here is a test: no timing is asserted anywhere, and `npm test` does not run the bench.',
    ].join('\n'),
  );
  out.push('');
  return out.join('\n');
}

/** The own-code budgets (lib/config/bundle-budgets.ts) as the bench weighed them: a clause of row 31.5. */
function ownCodeText(
  functions: ReadonlyArray<{ name: string; ownCode?: { ownBytes: number; sdkBytes: number; allowedBytes: number; namedBudget: boolean; within: boolean } }>,
): string {
  const weighed = functions.filter((x) => x.ownCode);
  if (weighed.length === 0) return '';
  const within = weighed.filter((x) => x.ownCode!.within);
  const named = weighed.filter((x) => x.ownCode!.namedBudget);
  const over = weighed.filter((x) => !x.ownCode!.within);
  const kb = (bytes: number) => (bytes / 1024).toFixed(1);
  return (
    `; own-code budgets (lib/config/bundle-budgets.ts, proposed in place of 1.15x for parse and map functions; held by test/bundle-budgets.test.ts): **${within.length} of ${weighed.length}** within, ${weighed.length - named.length} by the default 15 % of their SDK code, ${named.length} by a named budget (${named.map((x) => `${x.name} ${kb(x.ownCode!.ownBytes)}/${kb(x.ownCode!.allowedBytes)} KB`).join(', ')})` +
    (over.length
      ? `; **over their budget**: ${over.map((x) => `${x.name} ${kb(x.ownCode!.ownBytes)} KB, allowed ${kb(x.ownCode!.allowedBytes)} KB`).join(', ')}`
      : '')
  );
}
