import { dirname, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configDirectory, configFilePath } from '../../src/config/paths.js';
import { scratchDir } from '../helpers/scratch.js';

describe('where the config file is', () => {
  const savedXdg = process.env.XDG_CONFIG_HOME;
  afterEach(() => {
    if (savedXdg === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = savedXdg;
  });

  it('is PROSPECT_CONFIG_DIR when set, made absolute', () => {
    expect(configDirectory({ PROSPECT_CONFIG_DIR: 'rel/dir' })).toBe(resolve('rel/dir'));
    expect(configFilePath({ PROSPECT_CONFIG_DIR: '/x/y' })).toBe('/x/y/config.json');
    expect(configDirectory({ PROSPECT_CONFIG_DIR: '  ', XDG_CONFIG_HOME: '/xdg' }, 'linux', '/home/u')).toBe(
      '/xdg/prospect-nodejs',
    );
  });

  it.each([
    ['linux', {}, '/home/u/.config/prospect-nodejs'],
    ['linux', { XDG_CONFIG_HOME: '/xdg' }, '/xdg/prospect-nodejs'],
    ['darwin', {}, '/home/u/Library/Preferences/prospect-nodejs'],
    ['win32', { APPDATA: '/appdata' }, '/appdata/prospect-nodejs/Config'],
  ] as const)('follows conf (env-paths) on %s %j', (platform, env, expected) => {
    expect(configDirectory(env, platform, '/home/u')).toBe(expected);
  });

  it.runIf(process.platform === 'linux')(
    "is exactly conf's own default location for projectName 'prospect'",
    async () => {
      process.env.XDG_CONFIG_HOME = await scratchDir('prospect-xdg-');
      const { default: Conf } = await import('conf');
      const conf = new Conf({ projectName: 'prospect' });
      expect(dirname(conf.path)).toBe(configDirectory({ XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME }));
      expect(conf.path).toBe(configFilePath({ XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME }));
    },
  );
});
