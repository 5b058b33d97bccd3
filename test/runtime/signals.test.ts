/**
 * What a repeated signal means (src/runtime/context.ts). In process, so that the second signal surely
 * comes while the run is still stopping; the CLI tests (test/core/shared/runner.partial.cli.test.ts)
 * send real signals to a real run.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { installSignalHandlers } from '../../src/runtime/context.js';

class ExitCalled extends Error {
  constructor(readonly code: number | undefined) {
    super(`process.exit(${code})`);
  }
}

let remove: (() => void) | undefined;
afterEach(() => {
  remove?.();
  vi.restoreAllMocks();
});

function install() {
  const controller = new AbortController();
  remove = installSignalHandlers(controller);
  const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
    throw new ExitCalled(code as number | undefined);
  });
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  return { controller, exit, stderr };
}

describe('installSignalHandlers', () => {
  it('a first SIGTERM or SIGINT aborts the run, named by the signal, and does not exit', () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const { controller, exit } = install();
      process.emit(signal, signal);
      expect(controller.signal.reason).toBe(signal);
      expect(exit).not.toHaveBeenCalled();
      remove!();
      vi.restoreAllMocks();
    }
  });

  it('a repeated SIGTERM, or a SIGTERM after a SIGINT, lets the run stop in its own time', () => {
    const { controller, exit } = install();
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGTERM', 'SIGTERM');
    expect(controller.signal.reason).toBe('SIGINT');
    expect(exit).not.toHaveBeenCalled();
  });

  it('a second SIGINT exits at once with 130, and says so in one line', () => {
    const { exit, stderr } = install();
    process.emit('SIGTERM', 'SIGTERM');
    expect(() => process.emit('SIGINT', 'SIGINT')).toThrow(ExitCalled);
    expect(exit).toHaveBeenCalledWith(130);
    expect(stderr).toHaveBeenCalledWith(
      'prospect: interrupted by SIGINT again; stopped at once, before the run could finish.\n',
    );
  });
});
