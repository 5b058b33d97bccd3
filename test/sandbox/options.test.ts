/**
 * The sandbox's options, checked by one schema (src/sandbox/options.ts) for every caller of
 * startSandbox: the defaults, the ones that follow another option, and one message per refusal.
 * `prospect sandbox`'s flags (src/commands/sandbox-flags.ts) let through only what it takes.
 */
import { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { toOptions } from '../../src/commands/sandbox.js';
import { SANDBOX_FLAGS } from '../../src/commands/sandbox-flags.js';
import { addFlags } from '../../src/options/flag.js';
import { resolveSandboxOptions, type SandboxOptions } from '../../src/sandbox/options.js';

describe('the sandbox options schema', () => {
  it('fills every default; the fault seed follows the seed, the spike rate the spike', () => {
    const resolved = resolveSandboxOptions({ seed: 7, asOf: '2025-06-30' });
    expect(resolved).toMatchObject({
      host: '127.0.0.1',
      port: 4010,
      seed: 7,
      faultSeed: 7,
      asOf: '2025-06-30',
      faults: ['500', '503', 'drop'],
      latencySpikeRate: 0,
      rateLimit: undefined,
      recordTraffic: false,
      ignoreIdempotencyKey: false,
      lieAboutIdempotency: false,
    });
    expect(resolveSandboxOptions({ latencySpikeMs: 5 }).latencySpikeRate).toBe(0.1);
    expect(resolveSandboxOptions({}).asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it.each<[SandboxOptions, string]>([
    [{ port: 65536 }, 'port must be an integer from 0 to 65535'],
    [{ port: 1.5 }, 'port must be an integer from 0 to 65535'],
    [{ companies: 0 }, 'companies must be an integer from 1 to 1000000'],
    [{ seed: 2 ** 32 }, 'seed must be an integer from 0 to 4294967295'],
    [{ asOf: '2025-02-30' }, 'asOf must be a date written YYYY-MM-DD'],
    [{ latencyMs: Number.NaN }, 'latencyMs must be from 0 to 600000'],
    [{ failRate: 1.5 }, 'failRate must be from 0 to 1'],
    [{ faults: [] }, 'faults must name at least one fault kind of: 500, 502,'],
    [{ faultSeed: -1 }, 'faultSeed must be an integer from 0 to 4294967295'],
    [{ faultsAfter: 0.5 }, 'faultsAfter must be a whole number'],
    [{ latencySpikeMs: 600_001 }, 'latencySpikeMs must be from 0 to 600000'],
    [{ latencySpikeRate: -0.1 }, 'latencySpikeRate must be from 0 to 1'],
    [{ latencySpikeRate: 0.5 }, 'latencySpikeRate needs latencySpikeMs'],
    [{ rateLimit: 0 }, 'rateLimit must be a positive integer'],
    [{ crawl: '2026-13' }, 'crawl must be a month written YYYY-MM'],
    [{ crawl: '2026-11-15' }, 'crawl must be a month written YYYY-MM'],
  ])('%j is refused: %s', (options, message) => {
    expect(() => resolveSandboxOptions(options)).toThrow(RangeError);
    expect(() => resolveSandboxOptions(options)).toThrow(`sandbox: ${message}`);
  });
});

describe("prospect sandbox's flags", () => {
  it.each(SANDBOX_FLAGS.map((flag) => [flag.flags, flag] as const))(
    '%s: its name is the key commander gives its value',
    (_, flag) => {
      expect(new Option(flag.flags, flag.help).attributeName()).toBe(flag.name);
    },
  );

  it('--as-of serves the crawl of its month; without it, the reference crawl whatever the day', () => {
    const parsed = (args: string[]) => {
      const command = addFlags(new Command().exitOverride(), SANDBOX_FLAGS).action(() => {});
      command.parse(args, { from: 'user' });
      return resolveSandboxOptions(toOptions(command.opts()));
    };
    expect(parsed(['--as-of', '2026-11-15'])).toMatchObject({ asOf: '2026-11-15', crawl: '2026-11' });
    expect(parsed([]).crawl).toBeUndefined();
  });

  it('the largest value each flag takes is one the schema takes', () => {
    const command = addFlags(new Command().exitOverride(), SANDBOX_FLAGS).action(() => {});
    command.parse(
      [
        ...['--port', '65535', '--companies', '1000000', '--seed', '4294967295', '--latency', '600000'],
        ...['--fail-rate', '1', '--faults', 'all', '--fault-seed', '4294967295', '--faults-after', '9007199254740991'],
        ...['--latency-spike', '600000', '--latency-spike-rate', '1', '--rate-limit', '1000000'],
      ],
      { from: 'user' },
    );
    expect(() => resolveSandboxOptions(toOptions(command.opts()))).not.toThrow();
  });
});
