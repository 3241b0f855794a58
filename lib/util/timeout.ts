import { TimeoutError } from './errors';

/**
 * Runs `work` with an AbortSignal that fires after `ms`, and rejects at `ms`
 * even when the work ignores the signal: a wait is always bounded.
 */
export async function withTimeout<T>(ms: number, what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new TimeoutError(ms, what);
      controller.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
