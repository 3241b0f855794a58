import type { MiddlewareObj } from '@middy/core';
import { emitMetric } from '../metrics';
import { refreshSecrets } from '../secrets/runtime';

/**
 * The function's secrets read before its invocation (lib/secrets/runtime.ts),
 * counted when they cannot be: `SecretsReadFailures` by function, then the
 * error goes on to the builder's error handling, which logs it and fails the
 * invocation as before. Every handler builder puts it first inside its error
 * handling (lib/http, lib/web, lib/lambda; the healthcheck too).
 */
export const secretsBeforeInvocation = (): MiddlewareObj => ({ before: () => readSecrets() });

/** The same, for a handler that reads its secrets on one path only (the healthcheck's deep check). */
export async function readSecrets(): Promise<void> {
  try {
    await refreshSecrets();
  } catch (err) {
    emitMetric('SecretsReadFailures', 1, {}, { error: (err as Error)?.name });
    throw err;
  }
}
