import { SecretUnreadableError } from './errors';

/**
 * Sealing a secret at rest, bound to a context (the brokerage token of a sync
 * connection, bound to its user): a sealed value copied under another context
 * does not open. Async because the sealer on AWS asks KMS for its data keys;
 * the keyring sealer (lib/secrets/sealer.ts) answers at once.
 */
export interface TokenSealer {
  seal(plaintext: string, context: string): Promise<string>;
  open(sealed: string, context: string): Promise<string>;
  /** Whether `sealed` is in a form this sealer opens (its version prefix; a keyring's key). */
  opens(sealed: string): boolean;
  /** Whether this sealer would write `sealed` as it is now: the reseal (lib/sync/reseal.ts) leaves it alone. */
  isCurrent(sealed: string): boolean;
}

/** The version of a sealed value, for messages: its first dot-separated part, never more of it. */
export function sealedVersion(sealed: string): string {
  const version = sealed.split('.', 1)[0];
  return /^[a-z]\d{1,3}$/.test(version) ? version : 'unknown';
}

/**
 * Seals with `current`; opens with whichever sealer reads the value's form: a
 * migration in progress (KMS sealing, the legacy keyring still opening "v1."
 * values) or a rotation.
 */
export function sealerChain(current: TokenSealer, ...legacy: TokenSealer[]): TokenSealer {
  const all = [current, ...legacy];
  const opener = (sealed: string) => all.find((s) => s.opens(sealed));
  return {
    seal: (plaintext, context) => current.seal(plaintext, context),
    async open(sealed, context) {
      const sealer = opener(sealed);
      if (!sealer)
        throw new SecretUnreadableError(`no configured sealer opens this value (form: ${sealedVersion(sealed)})`);
      return sealer.open(sealed, context);
    },
    opens: (sealed) => opener(sealed) !== undefined,
    isCurrent: (sealed) => current.isCurrent(sealed),
  };
}
