import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Lists the real-editor tests skipped for want of their editor, with how to install it.
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Integration tests spawn servers and agents; two at a time suits a 2-core machine.
    maxWorkers: 2,
  },
});
