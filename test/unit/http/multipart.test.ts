import { HttpError } from '../../../lib/http/errors';
import { multipartBody } from '../../../lib/http/multipart';
import { parseIngestMultipart } from '../../../lib/downloads/requests';

/** multipart/form-data of a buffered event: bytes kept exact, bounded, malformed bodies a 400. */

const boundary = '----x7MA4YWxkTrZu0gW';
const form = (parts: string[]) =>
  Buffer.concat([
    ...parts.map((p) => Buffer.from(`--${boundary}\r\n${p}\r\n`, 'latin1')),
    Buffer.from(`--${boundary}--\r\n`),
  ]);
const event = (body: Buffer, base64 = true) => ({
  body: base64 ? body.toString('base64') : body.toString('latin1'),
  isBase64Encoded: base64,
  headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
});
const status = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof HttpError ? `${err.status} ${err.message}` : String(err);
  }
  return 'ok';
};

it('reads a file part byte for byte (CRLF and the boundary-like bytes inside it kept) and a field', () => {
  const binary = Buffer.from([0, 255, 13, 10, 45, 45, 0x64, 13, 10, 13, 10]).toString('latin1');
  const parts = multipartBody(
    event(
      form([
        `Content-Disposition: form-data; name="torrent"; filename="a b.torrent"\r\nContent-Type: application/x-bittorrent\r\n\r\n${binary}`,
        `Content-Disposition: form-data; name="name"\r\n\r\n${Buffer.from('Синтел').toString('latin1')}`,
      ]),
    ),
    1 << 20,
  );
  expect(parts[0]).toMatchObject({ name: 'torrent', filename: 'a b.torrent', contentType: 'application/x-bittorrent' });
  expect(parts[0].data.equals(Buffer.from(binary, 'latin1'))).toBe(true);
  expect(parts[1].data.toString('utf8')).toBe('Синтел');
});

it('refuses what it cannot read, and bodies over the bound', () => {
  const ok = form(['Content-Disposition: form-data; name="torrent"; filename="x"\r\n\r\nabc']);
  expect(status(() => multipartBody(event(ok), 10))).toMatch(/^413/);
  expect(
    status(() => multipartBody({ ...event(ok), headers: { 'content-type': 'multipart/form-data' } }, 1e6)),
  ).toMatch(/^400 .*no boundary/);
  expect(status(() => multipartBody(event(ok.subarray(0, ok.length - 30)), 1e6))).toMatch(/^400 .*ends inside a part/);
  expect(status(() => multipartBody(event(form(['Content-Disposition: form-data\r\n\r\nabc'])), 1e6))).toMatch(
    /^400 .*no name/,
  );
  const many = form(Array.from({ length: 17 }, (_, i) => `Content-Disposition: form-data; name="f${i}"\r\n\r\nx`));
  expect(status(() => multipartBody(event(many), 1e6))).toMatch(/more than 16 parts/);
});

it('POST /downloads’ form: the file in `torrent`, an optional name; any other or repeated part refused', () => {
  const file = { name: 'torrent', filename: 'x.torrent', data: Buffer.from('d4:infodee') };
  expect(parseIngestMultipart([file, { name: 'name', data: Buffer.from('My name') }])).toEqual({
    torrent: file.data,
    name: 'My name',
  });
  expect(status(() => parseIngestMultipart([]))).toMatch(/no "torrent" file part/);
  expect(status(() => parseIngestMultipart([file, file]))).toMatch(/part "torrent" twice/);
  expect(status(() => parseIngestMultipart([file, { name: 'magnet', data: Buffer.from('x') }]))).toMatch(
    /unknown form part "magnet"/,
  );
});

it('POST /downloads’ form takes the timeouts as JSON does: whole seconds within 0..30 days, else 400', () => {
  const file = { name: 'torrent', filename: 'x.torrent', data: Buffer.from('d4:infodee') };
  const field = (name: string, value: string) => ({ name, data: Buffer.from(value) });
  expect(parseIngestMultipart([file, field('metadata_timeout_s', '0'), field('stall_timeout_s', ' 2592000 ')])).toEqual(
    { torrent: file.data, metadata_timeout_s: 0, stall_timeout_s: 2592000 },
  );
  // Empty: the setting's value, as an absent JSON field.
  expect(parseIngestMultipart([file, field('stall_timeout_s', '')])).toEqual({ torrent: file.data });
  for (const bad of ['2592001', '-1', '1.5', '1e3', 'NaN', '0x10', '99999999999'])
    expect(status(() => parseIngestMultipart([file, field('metadata_timeout_s', bad)]))).toMatch(
      /metadata_timeout_s must be an integer of 0\.\.2592000/,
    );
  // A file part under a timeout's name is not a value.
  expect(status(() => parseIngestMultipart([file, { ...field('stall_timeout_s', '5'), filename: 'x' }]))).toMatch(
    /unknown form part "stall_timeout_s"/,
  );
});
