/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/lib', '<rootDir>/functions', '<rootDir>/test', '<rootDir>/infra'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/esbuild-jest-transform.js' },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 60000,
};
