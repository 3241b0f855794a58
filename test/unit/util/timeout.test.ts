import { TimeoutError } from '../../../lib/util/errors';
import { withTimeout } from '../../../lib/util/timeout';

describe('withTimeout', () => {
  it('rejects at the bound even when the work ignores its signal', async () => {
    const began = Date.now();
    let aborted = false;
    const never = (signal: AbortSignal) => {
      signal.addEventListener('abort', () => (aborted = true));
      return new Promise<never>(() => undefined);
    };
    await expect(withTimeout(50, 'hang', never)).rejects.toBeInstanceOf(TimeoutError);
    expect(aborted).toBe(true);
    expect(Date.now() - began).toBeLessThan(1000);
  });

  it('passes results and errors of work that finishes in time', async () => {
    await expect(withTimeout(1000, 'ok', async () => 42)).resolves.toBe(42);
    await expect(withTimeout(1000, 'fails', async () => Promise.reject(new RangeError('x')))).rejects.toBeInstanceOf(
      RangeError,
    );
  });
});
