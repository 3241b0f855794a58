/**
 * The one base of every typed refusal. A domain error carries its `code`
 * (what callers and clients branch on), the HTTP status it maps to, and
 * details safe to show (an owner's id, a limit). `lib/http/errors.ts` maps by
 * these fields, so the HTTP edge never imports a domain.
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  readonly #details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    // Logs and callers see the class name. Every bundle keeps names (esbuild keepNames), so a
    // class renamed to dodge a collision inside one bundle still reports the name it was written with.
    this.name = new.target.name;
    this.#details = details;
  }
  /** Safe to return to the caller; never a secret. */
  get details(): Record<string, unknown> {
    return this.#details;
  }
  /** Seconds the caller should wait before a retry (an HTTP `Retry-After`); none unless a retry can succeed. */
  get retryAfterS(): number | undefined {
    return undefined;
  }
  /** What the caller sees; defaults to the message. 404s say only "not found". */
  get publicMessage(): string {
    return this.message;
  }
}

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}
