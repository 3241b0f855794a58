// @ts-check
'use strict';
/**
 * serverless-offline plugin: Set-Cookie as API Gateway sends it.
 *
 * An HTTP API (payload 2.0) emits each entry of a response's `cookies` (or a
 * `set-cookie` header) VERBATIM, attributes included. serverless-offline 13
 * instead hands each one to hapi's cookie jar as a bare value, which refuses
 * a value with attributes (`HttpOnly; SameSite=Strict; Max-Age=...`) and
 * answers 500. This restores AWS's behaviour for exactly offline's call
 * shape (encoding "none", loose header): such a cookie is written as given.
 * Only the local stack loads it; nothing here is deployed.
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
      const fromOffline = cookie.options && cookie.options.encoding === 'none' && cookie.options.strictHeader === false;
      // A name, then anything but CR/LF: what a Lambda may legally return for one Set-Cookie.
      if (
        fromOffline &&
        typeof cookie.value === 'string' &&
        /^[^=\s;]+$/.test(cookie.name) &&
        !/[\r\n]/.test(cookie.value)
      ) {
        verbatim.push(`${cookie.name}=${cookie.value}`);
      } else {
        rest.push(cookie);
      }
    }
    return [...verbatim, ...(rest.length > 0 ? await format.call(this, rest, context) : [])];
  };
  proto[PATCHED] = true;
}

class ServerlessOfflineCookies {
  constructor() {
    this.hooks = { 'offline:start:init': patch };
  }
}

module.exports = ServerlessOfflineCookies;
