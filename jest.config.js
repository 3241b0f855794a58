/**
 * Five projects: `unit` needs nothing running; `stack` (integration + e2e)
 * shares ONE embedded stack per jest run, started on free ports by
 * test/support/globalSetup so it never collides with `npm start`; `aws`
 * deploys the service into moto's server, which it starts itself, and needs
 * no stack (test/aws/, docs/deploy.md "Proven in moto"); `soak` runs npm run
 * soak's short run on a stack of its own (test/soak/, docs/testing.md "Soak"; npm run test:soak only, which CI
 * runs after npm test: decision 429); `images` runs the images npm run images:build made with podman against
 * that same kind of stack (npm run test:images only).
 */

// @middy/core 6 is ESM-only: Node 24 can require() it, jest's runtime cannot, so swc compiles it too.
const transformIgnorePatterns = ['/node_modules/(?!@middy/)'];
// npm run images:build's work folder holds npm packages of its own (their package.json would collide in jest's map).
const modulePathIgnorePatterns = ['<rootDir>/.images/'];
const transform = {
  '^.+\\.(ts|js)$': [
    '@swc/jest',
    { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
  ],
};

module.exports = {
  testTimeout: 30_000,
  // One worker: the stack tests share one stack, and the abuse suite must see it quiet (test/support/sequencer.js).
  maxWorkers: 1,
  testSequencer: '<rootDir>/test/support/sequencer.js',
  projects: [
    {
      displayName: 'unit',
      transform,
      transformIgnorePatterns,
      modulePathIgnorePatterns,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'stack',
      transform,
      transformIgnorePatterns,
      modulePathIgnorePatterns,
      testEnvironment: 'node',
      testMatch: [
        '<rootDir>/test/security/**/*.test.ts',
        '<rootDir>/test/integration/**/*.test.ts',
        '<rootDir>/test/e2e/**/*.test.ts',
        '<rootDir>/test/browser/**/*.test.ts',
      ],
      globalSetup: '<rootDir>/test/support/globalSetup.ts',
      globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
      setupFiles: ['<rootDir>/test/support/env.ts'],
    },
    // Only when asked (npm run test:soak sets JEST_SOAK; .ci/run runs it after npm test): four minutes of
    // load and faults on a stack of its own, too long for the 20 minutes npm test keeps to (decision 429).
    ...(process.env.JEST_SOAK === '1'
      ? [
          {
            // npm run soak's short run: a stack of its own (npm start's, schedules on), no shared stack (test/soak/).
            displayName: 'soak',
            transform,
            transformIgnorePatterns,
            modulePathIgnorePatterns,
            testEnvironment: 'node',
            testMatch: ['<rootDir>/test/soak/**/*.test.ts'],
          },
        ]
      : []),
    // Only when asked (npm run test:images sets JEST_IMAGES): it needs the images built first, and root with podman.
    ...(process.env.JEST_IMAGES === '1'
      ? [
          {
            // npm run test:images: the images npm run images:build made, run with podman against the run's stack
            // (test/images/, docs/deploy.md "Building and running the images here"); never part of plain `jest`.
            displayName: 'images',
            transform,
            transformIgnorePatterns,
            modulePathIgnorePatterns,
            testEnvironment: 'node',
            testMatch: ['<rootDir>/test/images/**/*.test.ts'],
            globalSetup: '<rootDir>/test/support/globalSetup.ts',
            globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
            setupFiles: ['<rootDir>/test/support/env.ts'],
          },
        ]
      : []),
    {
      displayName: 'aws',
      transform,
      transformIgnorePatterns,
      modulePathIgnorePatterns,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/aws/**/*.test.ts'],
    },
  ],
};
