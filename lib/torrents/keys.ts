/**
 * Key design of the torrent client's own items (the ONLY place that writes
 * their keys). They live in the downloads table, whose domain drives the client:
 *
 * item         PK               SK           access pattern
 * login gate   TORRENT_CLIENT   LOGIN_GATE   one GetItem per login; a CAS on next_try_at takes a try
 *
 * One gate per deployment: every container logs in to the same client with the same credentials.
 */

export const TORRENT_CLIENT_PK = 'TORRENT_CLIENT';
export const LOGIN_GATE_SK = 'LOGIN_GATE';

export function loginGateKey() {
  return { PK: TORRENT_CLIENT_PK, SK: LOGIN_GATE_SK };
}
