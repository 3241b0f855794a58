import { ConfigError } from './errors';
/**
 * Typed readers over an environment map. Each read records its problem instead
 * of throwing, so one ConfigError lists every bad variable at once, by name.
 */

export type Env = Record<string, string | undefined>;

export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  /** `secret`: a mismatch is reported without the value, which must never reach a log. */
  string(name: string, opts: { default?: string; pattern?: RegExp; hint?: string; secret?: boolean } = {}): string {
    const value = this.raw(name) ?? opts.default;
    if (value === undefined) return this.fail(name, `is required${opts.hint ? ` (${opts.hint})` : ''}`, '');
    if (opts.pattern && !opts.pattern.test(value)) {
      return this.fail(
        name,
        `must match ${opts.hint ?? opts.pattern}${opts.secret ? '' : `, got ${JSON.stringify(value)}`}`,
        '',
      );
    }
    return value;
  }

  /** Whether a variable is set (empty counts as unset), for settings given in groups. */
  has(name: string): boolean {
    return this.raw(name) !== undefined;
  }

  /** Records a problem no single reader can see (variables that conflict). */
  refuse(name: string, message: string): void {
    this.fail(name, message, undefined);
  }

  int(name: string, opts: { default: number; min: number; max: number }): number {
    const text = this.raw(name);
    if (text === undefined) return opts.default;
    if (!/^-?\d{1,15}$/.test(text))
      return this.fail(name, `must be an integer, got ${JSON.stringify(text)}`, opts.default);
    const value = Number(text);
    if (value < opts.min || value > opts.max) {
      return this.fail(name, `must be between ${opts.min} and ${opts.max}, got ${value}`, opts.default);
    }
    return value;
  }

  /** A duration given in seconds, fractions allowed (`0.25`), returned in whole milliseconds. */
  seconds(name: string, opts: { default: number; min: number; max: number }): number {
    const text = this.raw(name);
    if (text === undefined) return Math.round(opts.default * 1000);
    if (!/^\d{1,9}(\.\d{1,3})?$/.test(text))
      return this.fail(
        name,
        `must be a number of seconds (up to 3 decimals), got ${JSON.stringify(text)}`,
        Math.round(opts.default * 1000),
      );
    const value = Number(text);
    if (value < opts.min || value > opts.max) {
      return this.fail(
        name,
        `must be between ${opts.min} and ${opts.max} seconds, got ${value}`,
        Math.round(opts.default * 1000),
      );
    }
    return Math.round(value * 1000);
  }

  /** A URL whose protocol is one of `protocols`; undefined when unset and optional. */
  url(name: string, protocols: string[], opts: { optional: true }): string | undefined;
  url(name: string, protocols: string[], opts?: { optional?: false; default?: string }): string;
  url(name: string, protocols: string[], opts: { optional?: boolean; default?: string } = {}): string | undefined {
    const text = this.raw(name) ?? opts.default;
    if (text === undefined) return opts.optional ? undefined : this.fail(name, 'is required', '');
    return this.checkUrl(name, text, protocols);
  }

  /** A comma-separated list of URLs (e.g. a NATS cluster's seed servers). */
  urlList(name: string, protocols: string[], opts: { default?: string } = {}): string[] {
    const text = this.raw(name) ?? opts.default;
    if (text === undefined) return this.fail(name, 'is required', []);
    const items = text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (items.length === 0) return this.fail(name, 'must name at least one URL', []);
    return items.map((item) => this.checkUrl(name, item, protocols));
  }

  /** Throws one ConfigError naming every variable that was missing or malformed. */
  done(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }

  private checkUrl(name: string, text: string, protocols: string[]): string {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return this.fail(name, `must be a URL, got ${JSON.stringify(text)}`, text);
    }
    if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
      return this.fail(name, `must use ${protocols.join(' or ')}, got ${JSON.stringify(text)}`, text);
    }
    return text;
  }

  // Empty counts as unset: `FOO=` in a .env file means "no value", not "".
  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  private fail<T>(name: string, message: string, fallback: T): T {
    this.problems.push(`${name} ${message}`);
    return fallback;
  }
}
