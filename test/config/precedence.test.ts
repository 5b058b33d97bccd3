/**
 * The one order a setting is decided in (src/config/precedence.ts): flag > environment > config file
 * > default, each layer named as messages name it.
 */
import { describe, expect, it } from 'vitest';
import { settingOf } from '../../src/config/precedence.js';

const flag = (value: string | undefined) => ({ name: '--base-url', value });
const env = { PROSPECT_BASE_URL: 'https://env.example.com' };
const config = () => 'https://file.example.com';

describe('settingOf: flag > environment > config file > default', () => {
  it('each layer wins over the ones after it, and says where the value came from', () => {
    expect(settingOf('base-url', { flag: flag(' https://flag.example.com '), env, config })).toEqual({
      value: 'https://flag.example.com',
      source: 'flag',
      where: '--base-url',
    });
    expect(settingOf('base-url', { flag: flag(undefined), env, config })).toEqual({
      value: 'https://env.example.com',
      source: 'environment',
      where: 'PROSPECT_BASE_URL',
    });
    expect(settingOf('base-url', { env: {}, config })).toEqual({
      value: 'https://file.example.com',
      source: 'config file',
      where: 'base-url in the config file',
    });
    expect(settingOf('cursor-param', { env: {}, config: () => undefined, fallback: 'cursor' })).toEqual({
      value: 'cursor',
      source: 'default',
      where: 'default',
    });
    expect(settingOf('base-url', { env: {}, config: () => undefined })).toBeUndefined();
  });

  it('blank text is no value: a blank flag or variable falls through to the next layer', () => {
    expect(settingOf('base-url', { flag: flag('  '), env: { PROSPECT_BASE_URL: ' ' }, config })?.source).toBe(
      'config file',
    );
  });

  it('only the key’s own variable is a layer: max-age has none', () => {
    expect(settingOf('max-age', { env: { PROSPECT_MAX_AGE: '1y' }, config: () => '6m' })?.value).toBe('6m');
  });

  it('the config file is read only when no flag or variable sets the value', () => {
    let reads = 0;
    const counted = () => {
      reads++;
      return 'https://file.example.com';
    };
    settingOf('base-url', { flag: flag('https://flag.example.com'), env, config: counted });
    settingOf('base-url', { env, config: counted });
    expect(reads).toBe(0);
    settingOf('base-url', { env: {}, config: counted });
    expect(reads).toBe(1);
  });

  it('a bad variable is refused even when the flag wins, as a bad config file is', () => {
    const fromEnv = (text: string) => {
      if (!/^\d+$/.test(text)) throw new Error(`PROSPECT_MAX_ANSWER_SIZE: not a number`);
      return Number(text);
    };
    const layers = { flag: { name: '--max-answer-size', value: 8 }, fromEnv, config: () => 16 };
    expect(() => settingOf('max-answer-size', { ...layers, env: { PROSPECT_MAX_ANSWER_SIZE: 'big' } })).toThrow(
      'not a number',
    );
    expect(settingOf('max-answer-size', { ...layers, env: { PROSPECT_MAX_ANSWER_SIZE: '32' } })?.value).toBe(8);
    expect(
      settingOf('max-answer-size', { ...layers, flag: undefined, env: { PROSPECT_MAX_ANSWER_SIZE: '32' } })?.value,
    ).toBe(32);
  });
});
