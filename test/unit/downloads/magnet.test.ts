import fc from 'fast-check';
import { InvalidInfohashError, InvalidMagnetError } from '../../../lib/downloads/errors';
import { kindOf, parseInfohash, parseInfohashes } from '../../../lib/downloads/infohash';
import { clientMagnet, formatMagnet, MAX_MAGNET_LENGTH, parseMagnet } from '../../../lib/downloads/magnet';

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((a) => Buffer.from(a).toString('hex'));
const V1 = 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a';
const V2 = 'd8dd32ac93357c368556af3ac1d95c9d76bd0dff6fa9833ecdac3d53134efabb';

describe('parseInfohash', () => {
  it('derives the kind from the length and lowercases', () => {
    fc.assert(
      fc.property(fc.oneof(hex(20), hex(32)), (h) => {
        expect(parseInfohash(h.toUpperCase())).toEqual({ infohash: h, kind: h.length === 40 ? 'v1' : 'v2' });
      }),
    );
  });

  it('converts a 32-char base32 v1 hash to hex', () => {
    // base32 of the 20 bytes c12fe1c0... (RFC 4648)
    const b32 = Buffer.from(V1, 'hex');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    let bits = '';
    for (const byte of b32) bits += byte.toString(2).padStart(8, '0');
    const encoded = bits
      .match(/.{5}/g)!
      .map((b) => alphabet[parseInt(b, 2)])
      .join('');
    expect(parseInfohash(encoded)).toEqual({ infohash: V1, kind: 'v1' });
  });

  it('rejects anything that is not 40/64 hex or 32 base32', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        const ok = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/i.test(s) || /^[A-Z2-7]{32}$/i.test(s);
        if (!ok) expect(() => parseInfohash(s)).toThrow(InvalidInfohashError);
      }),
      { numRuns: 3000 },
    );
    expect(kindOf('a'.repeat(48))).toBeUndefined();
    expect(() => parseInfohash(42)).toThrow(InvalidInfohashError);
  });

  it('parses a list: dedups, v1 before v2, bounded', () => {
    expect(parseInfohashes([V2, V1.toUpperCase(), V1])).toEqual([
      { infohash: V1, kind: 'v1' },
      { infohash: V2, kind: 'v2' },
    ]);
    expect(() => parseInfohashes([])).toThrow(InvalidInfohashError);
    expect(() => parseInfohashes(Array(17).fill(V1))).toThrow(/at most 16/);
  });
});

describe('parseMagnet', () => {
  it('reads a hybrid link: v1 first, v2 from the sha2-256 multihash, name and trackers', () => {
    const uri = `magnet:?xt=urn:btmh:1220${V2}&xt=urn:btih:${V1.toUpperCase()}&dn=Big+Buck%20Bunny&tr=udp%3A%2F%2Ft.example%3A80&tr=http://t2.example`;
    expect(parseMagnet(uri)).toEqual({
      infohashes: [
        { infohash: V1, kind: 'v1' },
        { infohash: V2, kind: 'v2' },
      ],
      name: 'Big Buck Bunny',
      trackers: ['udp://t.example:80', 'http://t2.example'],
    });
  });

  it('round-trips through formatMagnet for any v1/v2/hybrid set', () => {
    fc.assert(
      fc.property(
        fc.option(hex(20), { nil: undefined }),
        fc.option(hex(32), { nil: undefined }),
        fc.string({ maxLength: 50 }),
        (a, b, name) => {
          const hashes = [a, b].filter((h): h is string => !!h).map(parseInfohash);
          if (hashes.length === 0) return;
          const parsed = parseMagnet(formatMagnet(hashes, name));
          expect(parsed.infohashes).toEqual(hashes);
          expect(parsed.name).toBe(name.trim() || undefined);
        },
      ),
    );
  });

  it.each([
    ['not a string', 12],
    ['no scheme', `xt=urn:btih:${V1}`],
    ['http URL', `https://example.com/?xt=urn:btih:${V1}`],
    ['no xt', 'magnet:?dn=name'],
    ['only a foreign urn', 'magnet:?xt=urn:ed2k:31D6CFE0D16AE931B73C59D7E0C089C0'],
    ['bad v1 hex', `magnet:?xt=urn:btih:${'z'.repeat(40)}`],
    ['v1 too short', `magnet:?xt=urn:btih:${V1.slice(1)}`],
    ['v2 in btih', `magnet:?xt=urn:btih:${V2}`],
    ['wrong multihash prefix', `magnet:?xt=urn:btmh:1114${V2}`],
    ['truncated multihash', `magnet:?xt=urn:btmh:1220${V2.slice(2)}`],
    ['two v1 hashes', `magnet:?xt=urn:btih:${V1}&xt=urn:btih:${'a'.repeat(40)}`],
    ['bad percent-encoding', `magnet:?xt=urn:btih:${V1}&dn=%E0%A4%A`],
    ['oversize', `magnet:?xt=urn:btih:${V1}&dn=${'a'.repeat(MAX_MAGNET_LENGTH)}`],
    ['too many trackers', `magnet:?xt=urn:btih:${V1}${'&tr=http://t.example'.repeat(65)}`],
    // qBittorrent splits `urls` on line breaks: the rest would be fetched as a second URL (issue 41).
    ['a raw line break', `magnet:?xt=urn:btih:${V1}&x.pe=\nhttp://169.254.169.254/latest/meta-data/`],
    ['a raw carriage return', `magnet:?xt=urn:btih:${V1}&dn=a\rb`],
    ['a raw NUL', `magnet:?xt=urn:btih:${V1}\u0000`],
    ['a raw DEL', `magnet:?xt=urn:btih:${V1}&dn=a\u007f`],
    ['a raw C1 control', `magnet:?xt=urn:btih:${V1}&dn=a\u0085`],
    ['an encoded line break in the name', `magnet:?xt=urn:btih:${V1}&dn=a%0Ahttp://evil/`],
    ['an encoded line break in a tracker', `magnet:?xt=urn:btih:${V1}&tr=http://t/%0A`],
    ['an encoded line break in an unknown key', `magnet:?xt=urn:btih:${V1}&x.pe=%0Ahttp://evil/`],
    ['a file tracker', `magnet:?xt=urn:btih:${V1}&tr=file:///etc/passwd`],
    ['a javascript tracker', `magnet:?xt=urn:btih:${V1}&tr=javascript:alert(1)`],
    ['a tracker that is no URL', `magnet:?xt=urn:btih:${V1}&tr=tracker.example:80`],
    ['a peer that is a URL', `magnet:?xt=urn:btih:${V1}&x.pe=http://10.0.0.1/`],
    ['a peer without a port', `magnet:?xt=urn:btih:${V1}&x.pe=10.0.0.1`],
    ['a peer with a port past 65535', `magnet:?xt=urn:btih:${V1}&x.pe=10.0.0.1:70000`],
    ['a gopher tracker', `magnet:?xt=urn:btih:${V1}&tr=gopher://t.example/`],
  ])('rejects %s with a typed error', (_name, uri) => {
    expect(() => parseMagnet(uri)).toThrow(InvalidMagnetError);
  });

  // Blind SSRF through the user's torrent client: it announces to every tracker and dials every peer named.
  it.each([
    ['a loopback tracker', 'tr=http://127.0.0.1:8080/announce', /127\.0\.0\.1 is a private, loopback/],
    ['the metadata endpoint', 'tr=http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254/],
    ['a private udp tracker', 'tr=udp://10.0.0.5:53', /10\.0\.0\.5/],
    ['a udp tracker in decimal', 'tr=udp://2130706433:80/announce', /127\.0\.0\.1/],
    ['an IPv6 loopback tracker', 'tr=http://[::1]/', /::1/],
    ['an IPv4-mapped tracker', 'tr=http://[::ffff:192.168.1.1]/', /ffff:c0a8:101/],
    ['a single-label tracker', 'tr=http://qbittorrent:8080/', /qbittorrent is a name without a domain/],
    ['a localhost tracker', 'tr=https://LOCALHOST./x', /localhost is a name without a domain/],
    ['a .internal tracker', 'tr=http://nas.corp.internal/', /nas\.corp\.internal is a name of a local network/],
    ['a loopback peer', 'x.pe=127.0.0.1:6881', /peer address \(x\.pe\) names an internal host: 127\.0\.0\.1/],
    ['a peer in hex', 'x.pe=0x7f.1:6881', /127\.0\.0\.1/],
    ['a link-local IPv6 peer', 'x.pe=[fe80::1]:6881', /fe80::1/],
    ['a carrier-grade NAT peer', 'x.pe=100.64.0.1:6881', /100\.64\.0\.1/],
    ['a .local peer', 'x.pe=printer.local:80', /printer\.local/],
  ])('refuses %s unless MAGNET_ALLOW_PRIVATE_ADDRESSES allows it', (_name, pair, reason) => {
    const uri = `magnet:?xt=urn:btih:${V1}&${pair}`;
    expect(() => parseMagnet(uri)).toThrow(InvalidMagnetError);
    expect(() => parseMagnet(uri)).toThrow(reason);
    expect(() => parseMagnet(uri)).toThrow(/MAGNET_ALLOW_PRIVATE_ADDRESSES=true/);
    expect(parseMagnet(uri, { allowPrivateAddresses: true }).infohashes).toHaveLength(1);
  });

  it('keeps public trackers and peers by name or address', () => {
    const uri = `magnet:?xt=urn:btih:${V1}&tr=udp://tracker.opentrackr.org:1337/announce&tr=http://8.8.8.8/a&x.pe=93.184.216.34:6881&x.pe=[2a00:1450::1]:6881`;
    expect(parseMagnet(uri)).toMatchObject({
      trackers: ['udp://tracker.opentrackr.org:1337/announce', 'http://8.8.8.8/a'],
      peers: ['93.184.216.34:6881', '[2a00:1450::1]:6881'],
    });
  });

  it('keeps http, https and udp trackers as written and drops WebTorrent ones', () => {
    const uri = `magnet:?xt=urn:btih:${V1}&tr=wss%3A%2F%2Fwt.example&tr=HTTPS://T.example/a?x=1&tr=udp://u.example:6969`;
    expect(parseMagnet(uri).trackers).toEqual(['HTTPS://T.example/a?x=1', 'udp://u.example:6969']);
  });

  it('rebuilds the magnet from its fields only: unknown keys and their values never reach the client', () => {
    const uri = `magnet:?xt=urn:btih:${V1}&x.pe=1.2.3.4:5&ws=http://seed/&dn=a%26b&tr=http://t.example/a?b=1%26c=2&x.pe=[2001:db8::1]:6881`;
    const rebuilt = clientMagnet(parseMagnet(uri));
    expect(rebuilt).toBe(
      `magnet:?xt=urn:btih:${V1}&dn=a%26b&tr=${encodeURIComponent('http://t.example/a?b=1&c=2')}` +
        `&x.pe=1.2.3.4:5&x.pe=[2001:db8::1]:6881`,
    );
    expect(parseMagnet(rebuilt)).toEqual(parseMagnet(uri));
  });

  it('never lets a line break or a control character through, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (tail) => {
        try {
          const rebuilt = clientMagnet(parseMagnet(`magnet:?xt=urn:btih:${V1}&${tail}`));
          expect(rebuilt).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidMagnetError);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('never throws anything but InvalidMagnetError on arbitrary input', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `magnet:?${s}`),
          fc.string().map((s) => `magnet:?xt=urn:btih:${s}`),
        ),
        (s) => {
          try {
            parseMagnet(s);
          } catch (err) {
            expect(err).toBeInstanceOf(InvalidMagnetError);
          }
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe('fixtures/magnets.json', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fixtures = require('../../../fixtures/magnets.json') as {
    valid: Array<{ what: string; magnet: string; infohashes: unknown[]; name?: string }>;
    invalid: Array<{ what: string; magnet: string }>;
  };

  it.each(fixtures.valid.map((f) => [f.what, f] as const))('parses: %s', (_what, f) => {
    const parsed = parseMagnet(f.magnet);
    expect(parsed.infohashes).toEqual(f.infohashes);
    expect(parsed.name).toBe(f.name);
  });

  it.each(fixtures.invalid.map((f) => [f.what, f.magnet] as const))('refuses: %s', (_what, magnet) => {
    expect(() => parseMagnet(magnet)).toThrow(InvalidMagnetError);
  });
});
