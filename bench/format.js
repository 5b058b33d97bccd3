// How BENCHMARKS.md writes a figure: bench/report.js and the sections that print their own rows share these.
export const ms = (value) =>
  value >= 10_000
    ? `${(value / 1000).toFixed(1)} s`
    : value >= 1000
      ? `${(value / 1000).toFixed(2)} s`
      : `${value.toFixed(0)} ms`;
export const int = (value) => Math.round(value).toLocaleString('en-US');
export const spread = (s, format) => `${format(s.median)} (${format(s.min)}–${format(s.max)}, n=${s.n})`;
export const x = (value) => `${value.toFixed(2)}×`;
export const mb = (value) => `${value.toFixed(0)} MB`;
export const verdict = (ok) => (ok ? '**met**' : '**missed**');
/** All of them, as the row builders of bench/calls.js and bench/ledger.js take them. */
export const FORMAT = { int, spread, x, ms, mb, verdict };
