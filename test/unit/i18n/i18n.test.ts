import {
  catalogue,
  createFormat,
  fromAcceptLanguage,
  hourStart,
  isTimeZone,
  loadLocaleSettings,
  negotiate,
  plural,
  type Catalogs,
} from '../../../lib/i18n';

const AT = Date.UTC(2026, 11, 6, 1, 55, 3); // 2026-12-06T01:55:03Z

describe('i18n: the language of a request', () => {
  it.each([
    ['ru-RU,ru;q=0.9,en-US;q=0.8', 'ru'],
    ['en-US,en;q=0.9,ru;q=0.8', 'en'],
    ['de-DE,de;q=0.9,ru;q=0.5', 'ru'],
    ['de-DE, fr;q=0.8', undefined],
    ['en;q=0.2, ru;q=0.7', 'ru'],
    ['ru;q=0, en;q=0.1', 'en'],
    ['*', undefined],
    ['RU', 'ru'],
    ['en, ru', 'en'],
    ['ru-RU, en-US', 'ru'],
    ['', undefined],
    [undefined, undefined],
  ])('Accept-Language %j chooses %j', (header, lang) => {
    expect(fromAcceptLanguage(header)).toBe(lang);
  });

  it('ignores hostile headers: oversized, garbled weights, script in a tag', () => {
    expect(fromAcceptLanguage('ru,'.repeat(400))).toBeUndefined();
    expect(fromAcceptLanguage('ru;q=2')).toBeUndefined();
    expect(fromAcceptLanguage('ru;q=abc')).toBeUndefined();
    expect(fromAcceptLanguage('<script>ru')).toBeUndefined();
  });

  it('a fixed setting wins over the person’s choice, which wins over the browser; else English', () => {
    expect(negotiate({ fixed: 'ru', chosen: 'en', acceptLanguage: 'en' })).toBe('ru');
    expect(negotiate({ chosen: 'ru', acceptLanguage: 'en' })).toBe('ru');
    expect(negotiate({ chosen: 'de', acceptLanguage: 'ru' })).toBe('ru');
    expect(negotiate({ acceptLanguage: 'ja' })).toBe('en');
    expect(negotiate({})).toBe('en');
  });
});

describe('i18n: settings', () => {
  it('defaults to negotiation and UTC', () => {
    expect(loadLocaleSettings({})).toEqual({ language: undefined, timeZone: 'UTC' });
  });

  it('reads a fixed language and a zone', () => {
    expect(loadLocaleSettings({ UI_LANGUAGE: 'ru', UI_TIME_ZONE: 'Europe/Moscow' })).toEqual({
      language: 'ru',
      timeZone: 'Europe/Moscow',
    });
  });

  it('names every bad setting at once', () => {
    expect(() => loadLocaleSettings({ UI_LANGUAGE: 'de', UI_TIME_ZONE: 'Mars/Olympus' })).toThrow(
      /UI_LANGUAGE[\s\S]*UI_TIME_ZONE|UI_TIME_ZONE[\s\S]*UI_LANGUAGE/,
    );
  });

  it.each(['Europe/Moscow', 'America/New_York', 'UTC', 'Asia/Kolkata'])('%s is a zone', (zone) => {
    expect(isTimeZone(zone)).toBe(true);
  });
  it.each(['Mars/Olympus', '', '../../etc', 'Europe/Moscow;drop', 'x'.repeat(70)])('%j is not', (zone) => {
    expect(isTimeZone(zone)).toBe(false);
  });
});

describe('i18n: formatting in a zone and a language', () => {
  it('formats the same moment in Moscow and New York, Russian and English', () => {
    expect(createFormat('ru', 'Europe/Moscow').dateTime(AT)).toBe('6 дек. 2026 г., 04:55:03');
    expect(createFormat('en', 'Europe/Moscow').dateTime(AT)).toBe('6 Dec 2026, 04:55:03');
    expect(createFormat('en', 'America/New_York').dateTime(new Date(AT).toISOString())).toBe('5 Dec 2026, 20:55:03');
    expect(createFormat('en').dateTime(AT)).toBe('6 Dec 2026, 01:55:03');
  });

  it('does not depend on the process’s own zone', () => {
    const before = process.env.TZ;
    process.env.TZ = 'Pacific/Auckland';
    try {
      expect(createFormat('en', 'Europe/Moscow').hour(AT)).toBe('04:55');
    } finally {
      process.env.TZ = before;
    }
  });

  it('names the zone with its offset at that moment (summer and winter differ)', () => {
    expect(createFormat('en', 'Europe/Moscow').zone(AT)).toBe('Europe/Moscow (GMT+3)');
    expect(createFormat('en', 'America/New_York').zone(AT)).toBe('America/New_York (GMT-5)');
    expect(createFormat('en', 'America/New_York').zone(Date.UTC(2026, 6, 1))).toBe('America/New_York (GMT-4)');
    expect(createFormat('ru').zone(AT)).toBe('UTC');
  });

  it('leaves an unreadable time as it came', () => {
    expect(createFormat('en').dateTime('not a time')).toBe('not a time');
  });

  it('finds the start of the hour in the zone (whole- and half-hour offsets)', () => {
    expect(hourStart(AT, 'Europe/Moscow')).toBe(Date.UTC(2026, 11, 6, 1, 0, 0));
    expect(hourStart(AT, 'Asia/Kolkata')).toBe(Date.UTC(2026, 11, 6, 1, 30, 0));
    expect(hourStart(Date.UTC(2026, 11, 6, 1, 10, 0, 5), 'Asia/Kolkata')).toBe(Date.UTC(2026, 11, 6, 0, 30, 0));
  });
});

describe('i18n: plurals by Intl.PluralRules', () => {
  const ru = { one: '{n} задание', few: '{n} задания', many: '{n} заданий', other: '{n} задания' };
  it.each([
    [1, '1 задание'],
    [2, '2 задания'],
    [5, '5 заданий'],
    [11, '11 заданий'],
    [21, '21 задание'],
    [22, '22 задания'],
    [1.5, '1,5 задания'],
    [1000, '1 000 заданий'],
  ])('ru %d → %s', (n, text) => {
    expect(plural('ru', n, ru).replace(/\u00a0/g, ' ')).toBe(text);
  });
  it('en: one and other', () => {
    const en = { one: '{n} job', other: '{n} jobs' };
    expect(plural('en', 1, en)).toBe('1 job');
    expect(plural('en', 0, en)).toBe('0 jobs');
    expect(plural('en', 1200, en)).toBe('1,200 jobs');
  });
});

describe('i18n: catalogues', () => {
  interface M {
    hello: string;
    jobs: (p: { n: number }) => string;
  }
  const catalogs: Catalogs<M> = {
    en: { hello: 'Hello', jobs: ({ n }) => plural('en', n, { one: '{n} job', other: '{n} jobs' }) },
    ru: {
      hello: 'Здравствуйте',
      jobs: ({ n }) =>
        plural('ru', n, { one: '{n} задание', few: '{n} задания', many: '{n} заданий', other: '{n} задания' }),
    },
  };
  it('chooses the language’s catalogue', () => {
    const t = catalogue(catalogs);
    expect(t('ru').jobs({ n: 3 })).toBe('3 задания');
    expect(t('en').hello).toBe('Hello');
  });
  it('refuses a catalogue missing a key at compile time', () => {
    // @ts-expect-error ru lacks `jobs`: a missing translation does not compile.
    const broken: Catalogs<M> = { en: catalogs.en, ru: { hello: 'Здравствуйте' } };
    expect(broken).toBeDefined();
  });
});
