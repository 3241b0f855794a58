import type { Clock } from '../clock';

/**
 * Plaintext data keys of opened values, in the container: a sync's steps that
 * run in one container open the same token several times and make one Decrypt
 * between them. Keyed by the encrypted data key AND the context, so an entry
 * serves only its own row (a value copied onto another user misses and goes
 * to KMS, which refuses it). Bounded in age, so a key disabled in KMS stops
 * opening values within `maxAgeMs`, and in count, so memory stays small.
 */
export interface DataKeyCacheOptions {
  maxAgeMs: number;
  maxEntries: number;
  now: Clock;
}

/** At most 5 minutes (issue 39) and a few hundred tokens: more than one container handles in that time. */
export const DATA_KEY_CACHE_DEFAULTS = { maxAgeMs: 5 * 60_000, maxEntries: 500 } as const;

export class DataKeyCache {
  // Insertion order is age order: the first entry is always the oldest.
  private readonly entries = new Map<string, { key: Promise<Buffer>; expires: number }>();

  constructor(private readonly opts: DataKeyCacheOptions) {}

  /** The data key of (encrypted, context) while fresh; else `load`, once for callers that ask at the same time. */
  get(encrypted: Uint8Array, context: string, load: () => Promise<Buffer>): Promise<Buffer> {
    const id = `${context.length}:${context}:${Buffer.from(encrypted).toString('base64')}`;
    const now = this.opts.now();
    const hit = this.entries.get(id);
    if (hit && hit.expires > now) return hit.key;
    this.entries.delete(id);
    const key = load();
    const entry = { key, expires: now + this.opts.maxAgeMs };
    this.entries.set(id, entry);
    // A refusal is not kept: the next open asks KMS again (the key may be enabled by then).
    key.catch(() => {
      if (this.entries.get(id) === entry) this.entries.delete(id);
    });
    for (const [oldest, { expires }] of this.entries) {
      if (this.entries.size <= this.opts.maxEntries && expires > now) break;
      this.entries.delete(oldest);
    }
    return key;
  }

  get size(): number {
    return this.entries.size;
  }
}
