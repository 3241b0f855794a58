/**
 * The environment a child program of ours (smbclient, the Python reader of lib/scan/smb-read.ts) is given:
 * only what finds and runs it, never the process's own. Secrets are set into `process.env` (lib/secrets/runtime.ts),
 * and a child holding them would show them to whatever it runs, logs or dumps (decision 396).
 *
 * Kept: where programs and libraries are found, the account's name and home (smbclient's guest login name,
 * decision 264) and the locale (how names outside ASCII are printed). `extra` adds what one child needs.
 */
const PASSED = ['PATH', 'LD_LIBRARY_PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ'];

export function childEnv(extra: Record<string, string> = {}, from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED) if (from[name] !== undefined) env[name] = from[name];
  return { ...env, ...extra };
}
