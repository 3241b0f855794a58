/**
 * The entry of a CLI whose `main` resolves to its exit code: an expected
 * refusal (bad usage, bad config, a bad file) prints its message, anything
 * else its stack; both exit 2.
 */
export function runCli(main: () => Promise<number>, expected: Array<abstract new (...args: never[]) => Error>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      const known = expected.some((kind) => err instanceof kind);
      process.stderr.write(`${known ? (err as Error).message : ((err as Error).stack ?? String(err))}\n`);
      process.exit(2);
    },
  );
}
