/**
 * Architecture rules (issue 14; the arrows below are the whole rule set). Run by test/architecture.test.ts in
 * `npm test`, and by hand with `npx depcruise --config .dependency-cruiser.cjs lib functions infra scripts`.
 *
 * Arrows point down: functions -> lib/http -> lib/<domain> -> lib/aws. lib/hl7 and lib/fhir are pure.
 * Domain modules say what went wrong with lib/domain-errors.ts; lib/http/domain-problems.ts is the
 * only mapping to HTTP. There is no list of known violations: every import is held to the rules.
 */
const DOMAIN = '^lib/(results|forms|chart|exports|keys|crypto|audit|notifications|fhir|fhir-intake|hl7|matching|intake|webhooks|schemas)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circles.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-not-to-http',
      severity: 'error',
      comment: 'Domain modules say what happened with lib/domain-errors; only lib/http turns that into HTTP.',
      from: { path: [DOMAIN, '^lib/domain-errors\\.ts$'], pathNot: '\\.test\\.ts$' },
      to: { path: '^lib/http/' },
    },
    {
      name: 'domain-not-to-functions',
      severity: 'error',
      comment: 'Nothing under lib/ imports a Lambda entry.',
      from: { path: '^lib/' },
      to: { path: '^functions/' },
    },
    {
      name: 'deployed-not-to-local',
      severity: 'error',
      comment: 'lib/local is the local stack only; nothing a Lambda bundles may import it.',
      from: { path: '^(functions|lib)/', pathNot: ['^lib/local/', '\\.test\\.ts$', '^lib/[^/]+/testing/', '^lib/chart/demo-data\\.ts$'] },
      to: { path: '^lib/local/' },
    },
    {
      name: 'hl7-is-pure',
      severity: 'error',
      comment: 'lib/hl7 imports only itself and the plain chart model (lib/chart/types.ts, lib/chart/timeline.ts).',
      from: { path: '^lib/hl7/', pathNot: '\\.test\\.ts$' },
      to: { path: '^lib/', pathNot: ['^lib/hl7/', '^lib/chart/(types|timeline)\\.ts$'] },
    },
    {
      name: 'fhir-is-pure',
      severity: 'error',
      comment: 'lib/fhir imports only itself and the plain chart model; it shares no code with lib/hl7.',
      from: { path: '^lib/fhir/', pathNot: '\\.test\\.ts$' },
      to: { path: '^lib/', pathNot: ['^lib/fhir/', '^lib/chart/(types|timeline)\\.ts$'] },
    },
    {
      name: 'infra-not-to-handlers-or-local',
      severity: 'error',
      comment: 'The CDK app reads the endpoint list (lib/config) and shared constants; it never imports a handler or the local stack.',
      from: { path: '^infra/', pathNot: '\\.test\\.ts$' },
      to: { path: '^(functions|lib/local)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '^dist/', '^cdk\\.out/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: require('node:path').join(__dirname, 'tsconfig.json') },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
