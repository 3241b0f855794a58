import fs from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const handle = globalThis.__STACK__;
  if (!handle) return;
  await handle.stack.stop();
  // KEEP_TEST_STACK=1 keeps the state dir and the services' logs for a post-mortem.
  if (!process.env.KEEP_TEST_STACK) fs.rmSync(handle.stateDir, { recursive: true, force: true });
}
