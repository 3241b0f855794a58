import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/**
 * The one argument parser and entry of every command-line tool: `--help` (or
 * `-h`) prints the usage to stdout and exits 0; an unknown flag, a missing
 * value or a stray argument prints what is wrong and the usage to stderr and
 * exits 2; an expected refusal (bad settings, a bad file) prints its message
 * and exits 2; only a failure nobody expected prints its stack (unless the
 * tool says its failures are outside ones: a service, an upstream).
 */

/** Bad usage: the tool prints the message and its usage, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

type ErrorKind = abstract new (...args: never[]) => Error;

export interface CliSpec<O extends ParseArgsOptionsConfig> {
  /** The whole `--help` text; its first line starts with `usage: npm run …`. */
  usage: string;
  options: O;
  /** How many arguments that are not flags it takes (default: none). */
  positionals?: { min: number; max: number };
}

/** Infers a spec's option types (their `type: 'string'` stays a literal). */
export const cliSpec = <O extends ParseArgsOptionsConfig>(spec: CliSpec<O>): CliSpec<O> => spec;

type Parsed<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>
>;
export type CliArgs<O extends ParseArgsOptionsConfig> = { values: Parsed<O>['values']; positionals: string[] };

/** `--help`/`-h` anywhere before a `--` asks for the usage, whatever else is wrong with the line. */
export function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** Parses argv against the spec; a UsageError (without the usage: the entry adds it) names what is wrong. */
export function parseCli<O extends ParseArgsOptionsConfig>(spec: CliSpec<O>, argv: string[]): CliArgs<O> {
  let parsed: Parsed<O>;
  try {
    parsed = parseArgs({ args: argv, options: spec.options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(parseErrorText(err as Error & { code?: string }));
  }
  const { min, max } = spec.positionals ?? { min: 0, max: 0 };
  const n = parsed.positionals.length;
  if (n > max)
    throw new UsageError(
      `unexpected argument ${JSON.stringify(parsed.positionals[max])}${max === 0 ? ': this command takes only flags' : ''}`,
    );
  if (n < min) throw new UsageError(min === 1 ? 'an argument is missing' : `${min - n} arguments are missing`);
  return { values: parsed.values, positionals: parsed.positionals };
}

// node:util's own texts suggest `-- --flag` for positionals, wrong advice under `npm run x --`: say it plainly.
function parseErrorText(err: Error & { code?: string }): string {
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']+)'/.exec(err.message)?.[1];
    return `unknown option ${flag ?? err.message}`;
  }
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /'(--?[A-Za-z0-9-]+)/.exec(err.message)?.[1];
    return flag && /argument missing|ambiguous/.test(err.message) ? `${flag} needs a value` : err.message;
  }
  return err.message;
}

export interface CliFailures {
  /** The error kinds that are the user's to fix: their message, exit 2. */
  expected?: ErrorKind[];
  /** Anything else: its exit code (2) and whether its stack is printed (yes, a bug shows where it is). */
  crash?: { code: number; stack: boolean };
}

/** What a failure prints and its exit code: a UsageError with the usage after it, an expected kind its message. */
export function failureOf(err: unknown, usage: string, failures: CliFailures = {}): { text: string; code: number } {
  if (err instanceof UsageError) return { text: `${err.message}\n\n${usage}`, code: 2 };
  if ((failures.expected ?? []).some((kind) => err instanceof kind)) return { text: (err as Error).message, code: 2 };
  const { code, stack } = failures.crash ?? { code: 2, stack: true };
  const text = err instanceof Error ? (stack ? (err.stack ?? err.message) : err.message) : String(err);
  return { text, code };
}

/** The entry of a CLI whose `main` resolves to its exit code. */
export function runCli<O extends ParseArgsOptionsConfig>(
  spec: CliSpec<O>,
  main: (args: CliArgs<O>) => Promise<number>,
  failures: CliFailures = {},
): void {
  const argv = process.argv.slice(2);
  const usage = spec.usage.trimEnd();
  if (wantsHelp(argv)) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const fail = (err: unknown) => {
    const { text, code } = failureOf(err, usage, failures);
    process.stderr.write(`${text}\n`);
    process.exit(code);
  };
  let args: CliArgs<O>;
  try {
    args = parseCli(spec, argv);
  } catch (err) {
    return fail(err);
  }
  main(args).then((code) => process.exit(code), fail);
}
