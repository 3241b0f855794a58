import { Env, EnvReader } from './env';

/** Inbox prefix tokens (lib/nats/inbox.ts says why): kept here, since lib/config imports nothing outside itself. */
const INBOX_PREFIX = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

/**
 * NATS is a shared client (lib/nats), so its settings are shared too: the
 * scan gateway publishes, the healthcheck pings, the connector and the offline
 * bridge subscribe. Kept beside lib/config/index.ts, not in lib/nats, so that
 * `Config` can carry them without lib/config importing another module.
 */

/** NATS: the servers, and at most one kind of credentials. */
export interface NatsConfig {
  servers: string[];
  auth: NatsAuth;
  /** `NATS_INBOX_PREFIX`: the prefix of our own requests' inboxes, also accepted as a reply subject besides `_INBOX`. */
  inboxPrefix?: string;
}

export type NatsAuth =
  | { kind: 'none' }
  | { kind: 'user'; user: string; password: string }
  | { kind: 'nkey'; seed: string }
  | { kind: 'jwt'; jwt: string; seed: string };

/** The NATS settings alone, for tools and the offline bridge that need nothing else. */
export function loadNatsConfig(env: Env = process.env): NatsConfig {
  const r = new EnvReader(env);
  const nats = natsConfig(r);
  r.done();
  return nats;
}

const NKEY_USER_SEED = /^SU[A-Z2-7]{56}$/;

/**
 * NATS_USER + NATS_PASSWORD, or NATS_NKEY_SEED (+ NATS_JWT for a decentralised
 * account), or nothing. A half pair or two kinds at once is refused by name:
 * connecting without the credentials one meant to give fails much later and less clearly.
 */
export function natsConfig(r: EnvReader): NatsConfig {
  const inboxPrefix = r.has('NATS_INBOX_PREFIX')
    ? r.string('NATS_INBOX_PREFIX', {
        pattern: INBOX_PREFIX,
        hint: 'subject tokens without wildcards, e.g. _INBOX_scan',
      })
    : undefined;
  return { ...natsServersAndAuth(r), ...(inboxPrefix ? { inboxPrefix } : {}) };
}

function natsServersAndAuth(r: EnvReader): NatsConfig {
  const servers = r.urlList('NATS_URL', ['nats', 'tls'], { default: 'nats://127.0.0.1:4222' });
  const userPass = r.has('NATS_USER') || r.has('NATS_PASSWORD');
  const keyed = r.has('NATS_NKEY_SEED') || r.has('NATS_JWT');
  if (userPass && keyed) {
    r.refuse(
      'NATS_USER',
      'and NATS_NKEY_SEED are both set: give user/password OR an nkey seed (with its JWT), not both',
    );
    return { servers, auth: { kind: 'none' } };
  }
  if (userPass) {
    const user = r.string('NATS_USER', { hint: 'set it with NATS_PASSWORD' });
    const password = r.string('NATS_PASSWORD', { hint: 'set it with NATS_USER' });
    return { servers, auth: { kind: 'user', user, password } };
  }
  if (!keyed) return { servers, auth: { kind: 'none' } };
  const seed = r.string('NATS_NKEY_SEED', {
    pattern: NKEY_USER_SEED,
    hint: 'a user nkey seed (SU…, 58 characters)',
    secret: true,
  });
  if (!r.has('NATS_JWT')) return { servers, auth: { kind: 'nkey', seed } };
  const jwt = r.string('NATS_JWT', {
    pattern: /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/,
    hint: 'a user JWT (three base64url parts)',
    secret: true,
  });
  return { servers, auth: { kind: 'jwt', jwt, seed } };
}
