/**
 * Virtual time for tests and benches: `sleep` resolves only when the clock reaches it, and the clock
 * jumps to the earliest sleeper only once nothing else can run: every promise settled, and no HTTP
 * request in flight (`track` counts them), so a request reaches its server at the instant it was sent.
 */
export class VirtualClock {
  private timers: { at: number; resolve: () => void }[] = [];
  private inFlight = 0;

  constructor(public now: number) {}

  readonly read = () => this.now;
  readonly sleep = (ms: number) => this.until(this.now + ms);
  readonly until = (at: number) =>
    new Promise<void>((resolve) => this.timers.push({ at: Math.max(Math.ceil(at), this.now), resolve }));

  /** Wraps a request so the clock waits for it. */
  track<T>(request: Promise<T>): Promise<T> {
    this.inFlight++;
    return request.finally(() => this.inFlight--);
  }

  /** Runs virtual time until `work` settles; throws when every task sleeps and none can wake. */
  async run<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const finished = work.finally(() => (done = true));
    finished.catch(() => {});
    for (;;) {
      await this.settle(() => done);
      if (done) break;
      if (!this.timers.length) throw new Error('every task waits and no timer is set');
      this.timers.sort((a, b) => a.at - b.at);
      this.now = Math.max(this.now, this.timers[0].at);
      // Every sleeper due at this instant wakes together.
      while (this.timers.length && this.timers[0].at <= this.now) this.timers.shift()!.resolve();
    }
    return finished;
  }

  private async settle(done: () => boolean): Promise<void> {
    for (let quiet = 0; quiet < 20 && !done();) {
      await new Promise((r) => setImmediate(r));
      if (this.inFlight > 0) {
        quiet = 0;
        await new Promise((r) => setTimeout(r, 0));
      } else quiet++;
    }
  }
}
