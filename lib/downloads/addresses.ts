import { BlockList, isIP } from 'node:net';

/**
 * Whether a host a magnet names (a tracker's, an `x.pe` peer's) is inside a
 * network rather than on the internet. The user's torrent client connects to
 * every tracker and peer a magnet names, from inside the user's network: a
 * magnet naming `http://169.254.169.254/…`, `udp://10.0.0.5:53` or
 * `x.pe=127.0.0.1:8080` makes it a blind request forger towards hosts no
 * caller of ours could reach (decision 383). Names are judged as written: a
 * public name that resolves to an internal address is the client's network
 * to guard (qBittorrent resolves it, not us).
 */

const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, the cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  INTERNAL.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64: an IPv4 address inside
] as const)
  INTERNAL.addSubnet(net, prefix, 'ipv6');

/** Names that only mean something inside a network. */
const INTERNAL_NAME = /(^|\.)(localhost|local|internal|lan|localdomain|home\.arpa)$/;

/**
 * Why `host` is internal, or undefined when it is not. `host` as a URL holds
 * it (WHATWG's normal form: `127.1`, `2130706433` and `0x7f.0.0.1` are all
 * 127.0.0.1 there, as the resolver of the client's C library reads them too;
 * IPv6 in brackets).
 */
export function internalHost(host: string): string | undefined {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  const family = isIP(bare);
  if (family === 4 && INTERNAL.check(bare, 'ipv4')) return `${bare} is a private, loopback or reserved address`;
  if (family === 6) {
    if (INTERNAL.check(bare, 'ipv6')) return `${bare} is a private, loopback or reserved address`;
    return undefined;
  }
  if (family === 0) {
    const name = bare.replace(/\.$/, '');
    if (!name.includes('.')) return `${name} is a name without a domain (a host of a local network)`;
    if (INTERNAL_NAME.test(name)) return `${name} is a name of a local network`;
  }
  return undefined;
}

/** The host of a peer address `host:port` or `[v6]:port`, in a URL's normal form. */
export function peerHost(peer: string): string {
  return new URL(`http://${peer}`).hostname;
}
