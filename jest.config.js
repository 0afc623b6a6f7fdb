/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/lib', '<rootDir>/functions', '<rootDir>/test', '<rootDir>/infra'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(ts|js)$': '<rootDir>/test/esbuild-jest-transform.js' },
  // @middy/core, fauxqs and double-metaphone ship ESM only; let esbuild turn them into CommonJS for jest
  transformIgnorePatterns: ['/node_modules/(?!(@middy|fauxqs|valibot|double-metaphone)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // fauxqs exports only an "import" condition
  moduleNameMapper: { '^fauxqs$': '<rootDir>/node_modules/fauxqs/dist/app.js' },
  // a hang guard, not a performance target (those live in npm run bench): the reliability suites'
  // 2,000-case loops take ~5 s alone but minutes on a machine whose two cores are shared
  testTimeout: 300000,
  // two workers on the two cores of CI: the suites spend much of their time waiting on loopback servers
  maxWorkers: 2,
  setupFiles: ['<rootDir>/test/setup-env.js'],
  // contract coverage: cleared before the run, table printed after it (test/support/contract-report.ts)
  globalSetup: '<rootDir>/test/contract-global-setup.ts',
  globalTeardown: '<rootDir>/test/contract-global-teardown.ts',
};
