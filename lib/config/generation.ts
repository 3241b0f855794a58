/**
 * The process environment's generation. Secret values read at run time
 * (lib/secrets/runtime.ts) are written into the process environment, so every
 * configuration loader stays one synchronous reader of it; when a value
 * changes, the generation moves and everything built from the old values is
 * built again on its next use (`perEnvironment`). Locally nothing moves it.
 */

let generation = 0;

export function environmentGeneration(): number {
  return generation;
}

/** Called by the run-time secrets reader when it changed at least one variable. */
export function environmentChanged(): void {
  generation += 1;
}

/**
 * A value built from the environment once per generation: a container's
 * settings, clients and wiring, built again after a secret was rotated or
 * revoked. A build that throws is tried again on the next call.
 */
export function perEnvironment<T>(build: () => T): () => T {
  let value: T | undefined;
  let builtAt = -1;
  return () => {
    if (builtAt !== generation) {
      value = build();
      builtAt = generation;
    }
    return value as T;
  };
}
