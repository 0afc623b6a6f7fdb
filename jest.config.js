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
  testTimeout: 60000,
  setupFiles: ['<rootDir>/test/setup-env.js'],
};
