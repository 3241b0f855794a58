// @ts-check
'use strict';
/**
 * serverless-offline plugin: Set-Cookie as API Gateway sends it.
 *
 * An HTTP API (payload 2.0) emits each entry of a response's `cookies` (or a
 * `set-cookie` header) VERBATIM, attributes included. serverless-offline 14
 * parses each one into name, value and hapi options, and hapi's cookie jar
 * then writes its own rendering (an added Expires, its own attribute order,
 * a refusal of values hapi thinks unsafe). This writes offline's parsed
 * cookies back as one Set-Cookie line with the attributes the function gave,
 * in the order a cookie is written (Path, Domain, Max-Age, HttpOnly, SameSite,
 * Secure). Only the local stack loads it; nothing here is deployed.
 */
const statehood = require('@hapi/statehood');

const PATCHED = Symbol.for('tss.offline-cookies');

function patch() {
  /** @type {typeof statehood.Definitions.prototype & { [PATCHED]?: boolean }} */
  const proto = statehood.Definitions.prototype;
  if (proto[PATCHED]) return;
  const format = proto.format;
  proto.format = async function (cookies, context) {
    const list = cookies ? (Array.isArray(cookies) ? cookies : [cookies]) : [];
    const verbatim = [];
    const rest = [];
    for (const cookie of list) {
      const options = cookie.options || {};
      const fromOffline = options.encoding === 'none' && options.strictHeader === false;
      // A name, then anything but CR/LF or ';': what a Lambda may legally return for one Set-Cookie.
      if (
        fromOffline &&
        typeof cookie.value === 'string' &&
        /^[^=\s;]+$/.test(cookie.name) &&
        !/[\r\n;]/.test(cookie.value)
      ) {
        verbatim.push(render(cookie.name, cookie.value, options));
      } else {
        rest.push(cookie);
      }
    }
    return [...verbatim, ...(rest.length > 0 ? await format.call(this, rest, context) : [])];
  };
  proto[PATCHED] = true;
}

/**
 * One Set-Cookie line from offline's parsed attributes (ttl is Max-Age in ms; offline turns Expires into it).
 * @param {string} name
 * @param {string} value
 * @param {import('@hapi/statehood').StateOptions<unknown>} options
 */
function render(name, value, options) {
  const parts = [`${name}=${value}`];
  if (options.path) parts.push(`Path=${options.path}`);
  if (options.domain) parts.push(`Domain=${options.domain}`);
  if (typeof options.ttl === 'number') parts.push(`Max-Age=${Math.round(options.ttl / 1000)}`);
  if (options.isHttpOnly) parts.push('HttpOnly');
  if (options.isSameSite) parts.push(`SameSite=${options.isSameSite}`);
  if (options.isSecure) parts.push('Secure');
  return parts.join('; ');
}

class ServerlessOfflineCookies {
  constructor() {
    this.hooks = { 'offline:start:init': patch };
  }
}

module.exports = ServerlessOfflineCookies;
