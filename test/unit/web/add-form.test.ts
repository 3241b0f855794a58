import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { InvalidInfohashError, InvalidMagnetError, InvalidTorrentError } from '../../../lib/downloads/errors';
import { MAX_TORRENT_BYTES } from '../../../lib/downloads/torrent-file';
import { HttpError } from '../../../lib/http/errors';
import { InvalidFileNameError } from '../../../lib/names';
import { ADD_FIELDS, ADD_FILE_FORMS, addErrorOf, addValuesOf, parseAddForm } from '../../../lib/web/add-form';
import { formParts, type FormFile } from '../../../lib/web/forms';
import { uiOf } from '../../../lib/web/locale';

const ui = (lang: 'en' | 'ru') => uiOf(lang, 'UTC');
import { addPage } from '../../../lib/web/add-page';

/** The add form's reading (lib/web/add-form.ts) and its multipart edge (lib/web/forms.ts `formParts`). */

const V1 = 'a'.repeat(40);
const V2 = 'b'.repeat(64);
const file = (data: Buffer | string, filename = 'x.torrent'): FormFile => ({ filename, data: Buffer.from(data) });
const empty: FormFile = { filename: '', data: Buffer.alloc(0) };

describe('parseAddForm', () => {
  it('a magnet, infohashes or a file becomes the request POST /downloads hands to ingest', () => {
    expect(parseAddForm({ magnet: ` magnet:?xt=urn:btih:${V1} `, name: '' }, { torrent: empty })).toEqual({
      request: { magnet: `magnet:?xt=urn:btih:${V1}` },
    });
    expect(parseAddForm({ infohashes: `${V1}\n${V2}, ${V1}`, name: 'Фильм' }, {})).toEqual({
      request: { infohashes: [V1, V2, V1], name: 'Фильм' },
    });
    const bytes = Buffer.from('d4:infod4:name1:xee');
    expect(parseAddForm({ magnet: '', infohashes: '' }, { torrent: file(bytes) })).toEqual({
      request: { torrent: bytes },
    });
  });

  it('the seeding goal: a ratio (a dot or a comma), seconds of 0..365 days and one of the actions', () => {
    expect(
      parseAddForm({ infohashes: V1, share_ratio: '1,5', share_time_s: '259200', share_action: 'remove_files' }, {}),
    ).toEqual({ request: { infohashes: [V1], share_ratio: 1.5, share_time_s: 259200, share_action: 'remove_files' } });
    expect(parseAddForm({ infohashes: V1, share_ratio: '', share_action: '' }, {})).toEqual({
      request: { infohashes: [V1] },
    });
    for (const bad of ['-1', '1001', '1.234', 'NaN', '1e3'])
      expect(parseAddForm({ infohashes: V1, share_ratio: bad }, {})).toEqual({
        errors: { share_ratio: { reason: 'notRatio' } },
      });
    expect(parseAddForm({ infohashes: V1, share_time_s: '31536001' }, {})).toEqual({
      errors: { share_time_s: { reason: 'notShareSeconds' } },
    });
    for (const bad of ['Keep', '__proto__', 'delete'])
      expect(parseAddForm({ infohashes: V1, share_action: bad }, {})).toEqual({
        errors: { share_action: { reason: 'notShareAction' } },
      });
  });

  it('the form shows the seeding fields in the advanced group, in both languages', () => {
    for (const lang of ['en', 'ru'] as const) {
      const page = addPage(ui(lang), { principal: 'p', canWrite: true, scopes: [], csrf: 'c' }, {}).body.text;
      expect(page).toContain('name="share_ratio"');
      expect(page).toContain('<select id="add-share_action" name="share_action"');
      expect(page).toContain(lang === 'en' ? 'Remove the torrent and its files' : 'Удалить торрент вместе с файлами');
    }
  });

  it('the timeouts are whole seconds of 0..30 days, copied under their names', () => {
    expect(parseAddForm({ infohashes: V1, metadata_timeout_s: '0', stall_timeout_s: '2592000' }, {})).toEqual({
      request: { infohashes: [V1], metadata_timeout_s: 0, stall_timeout_s: 2592000 },
    });
    for (const bad of ['-1', '1.5', '2592001', '1e3', 'abc', '99999999999'])
      expect(parseAddForm({ infohashes: V1, stall_timeout_s: bad }, {})).toEqual({
        errors: { stall_timeout_s: { reason: 'notSeconds' } },
      });
  });

  it('none or two sources: the error is the source group’s; a name with a magnet is the name’s', () => {
    expect(parseAddForm({ magnet: ' ', infohashes: '', name: 'x' }, { torrent: empty })).toEqual({
      errors: { source: { reason: 'noSource' } },
    });
    expect(parseAddForm({ magnet: 'magnet:?x', infohashes: V1 }, {})).toEqual({
      errors: { source: { reason: 'twoSources' } },
    });
    expect(parseAddForm({ infohashes: V1 }, { torrent: file('d4:infod4:name1:xee') })).toEqual({
      errors: { source: { reason: 'twoSources' } },
    });
    expect(parseAddForm({ magnet: `magnet:?xt=urn:btih:${V1}`, name: 'mine' }, {})).toEqual({
      errors: { name: { reason: 'nameWithMagnet' } },
    });
  });

  it('too long, too large: beside the field, every error at once', () => {
    const result = parseAddForm(
      { infohashes: 'a'.repeat(2000), name: 'n'.repeat(1025), metadata_timeout_s: 'x' },
      { torrent: file(Buffer.alloc(MAX_TORRENT_BYTES + 1)) },
    );
    expect(result).toEqual({
      errors: {
        infohashes: { reason: 'tooLong' },
        torrent: { reason: 'tooLarge' },
        name: { reason: 'tooLong' },
        metadata_timeout_s: { reason: 'notSeconds' },
        source: { reason: 'twoSources' },
      },
    });
  });

  it('a field the form does not have, or a file in a text field, is a plain 400 (a crafted request)', () => {
    expect(() => parseAddForm({ infohashes: V1, colour: 'x' }, {})).toThrow(/unknown form field "colour"/);
    expect(() => parseAddForm({ torrent: 'text' }, {})).toThrow(HttpError);
    expect(() => parseAddForm({}, { magnet: file('magnet:?') })).toThrow(/unknown form field "magnet"/);
  });

  it('one table: every field has a label in each language, and the form renders each once', () => {
    const page = addPage(ui('ru'), { principal: 'p', canWrite: true, scopes: [], csrf: 'c' }, {}).body.text;
    for (const f of ADD_FIELDS) {
      expect(ui('en').t.addField[f.name].label).toBeTruthy();
      expect(ui('ru').t.addField[f.name].label).toBeTruthy();
      expect(page.match(new RegExp(`name="${f.name}"`, 'g'))).toHaveLength(1);
    }
    expect(page).toContain('enctype="multipart/form-data"');
    expect(page).toContain('name="csrf" value="c"');
  });
});

describe('a refusal shown again', () => {
  it('keeps the text as typed (escaped), names the file to choose again, the reason beside its field', () => {
    const fields = { magnet: 'magnet:?<script>', infohashes: '', name: '' };
    const files = { torrent: file('x', 'my "film".torrent') };
    const values = addValuesOf(fields, files);
    expect(values).toEqual({ fields, torrentName: 'my "film".torrent' });
    const page = addPage(
      ui('ru'),
      { principal: 'p', canWrite: true, scopes: [], csrf: 'c' },
      {
        values,
        errors: { magnet: { reason: 'invalidMagnet', detail: 'magnet must start with "magnet:?"' } },
      },
    ).body.text;
    expect(page).toContain('magnet:?&lt;script&gt;</textarea>');
    expect(page).not.toContain('<script>');
    expect(page).toContain('Эту magnet-ссылку сервис принять не может.');
    expect(page).toMatch(
      /id="add-magnet"[^>]*aria-describedby="add-magnet-hint add-magnet-error"[^>]*aria-invalid="true"/,
    );
    expect(page).toContain('my &quot;film&quot;.torrent');
    expect(page).not.toContain('<details class="advanced" open');
  });

  it('the service’s refusals map to their field; a name error is the name’s only when a name was given', () => {
    const m = { magnet: 'magnet:?xt=x' };
    expect(addErrorOf(new InvalidMagnetError('bad'), m)).toEqual({
      magnet: { reason: 'invalidMagnet', detail: 'bad' },
    });
    expect(addErrorOf(new InvalidInfohashError('bad'), { infohashes: ['x'] })).toMatchObject({
      infohashes: { reason: 'invalidInfohash' },
    });
    const t = { torrent: Buffer.from('x') };
    expect(addErrorOf(new InvalidTorrentError('bad'), t)).toMatchObject({ torrent: { reason: 'invalidTorrent' } });
    expect(addErrorOf(new InvalidFileNameError('dot'), { ...t, name: '.x' })).toMatchObject({
      name: { reason: 'invalidName' },
    });
    expect(addErrorOf(new InvalidFileNameError('dot'), m)).toMatchObject({ magnet: { reason: 'invalidMagnet' } });
    expect(addErrorOf(new Error('storage'), m)).toBeUndefined();
  });
});

describe('formParts: multipart only where a form has a file input', () => {
  const boundary = 'XyZ';
  const multipart = (parts: string[]) =>
    Buffer.from(parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('') + `--${boundary}--\r\n`).toString('base64');
  const ev = (routeKey: string, body: string) =>
    ({
      routeKey,
      body,
      isBase64Encoded: true,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    }) as unknown as APIGatewayProxyEventV2;

  it('on POST /download: text parts as fields, file parts as files', () => {
    const body = multipart([
      'Content-Disposition: form-data; name="csrf"\r\n\r\ntok',
      'Content-Disposition: form-data; name="torrent"; filename="a.torrent"\r\nContent-Type: application/x-bittorrent\r\n\r\nd4:infoe',
      'Content-Disposition: form-data; name="name"\r\n\r\nИмя',
    ]);
    const { fields, files } = formParts(ev('POST /download', body), ADD_FILE_FORMS);
    expect(fields).toEqual({ csrf: 'tok', name: 'Имя' });
    expect(files.torrent).toEqual({
      filename: 'a.torrent',
      contentType: 'application/x-bittorrent',
      data: Buffer.from('d4:infoe'),
    });
  });

  it('a repeated part is refused; elsewhere multipart is 415, as before', () => {
    const twice = multipart([
      'Content-Disposition: form-data; name="magnet"\r\n\r\na',
      'Content-Disposition: form-data; name="magnet"; filename="m"\r\n\r\nb',
    ]);
    expect(() => formParts(ev('POST /download', twice), ADD_FILE_FORMS)).toThrow(/appears twice/);
    expect(() => formParts(ev('POST /download/{id}/retry', twice), ADD_FILE_FORMS)).toThrow(
      expect.objectContaining({ status: 415 }),
    );
  });
});
