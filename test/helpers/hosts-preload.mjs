// Loaded with `node --import` into a prospect process: answers lookups of the names listed in
// PROSPECT_TEST_HOSTS ("name=address,...") from that list, as a line in /etc/hosts would, which a
// test cannot add. Only so a test can reach a name that is not this machine's as written (so that
// proxies apply to it) directly, without a DNS query leaving this machine.
import dns from 'node:dns';

const hosts = new Map(
  (process.env.PROSPECT_TEST_HOSTS ?? '')
    .split(',')
    .filter((entry) => entry.includes('='))
    .map((entry) => entry.split('=', 2)),
);
const systemLookup = dns.lookup;

dns.lookup = function lookup(hostname, options, callback) {
  const done = typeof options === 'function' ? options : callback;
  const settings = typeof options === 'object' && options !== null ? options : {};
  const address = hosts.get(String(hostname).toLowerCase());
  if (address === undefined) return systemLookup.call(this, hostname, options, callback);
  const family = address.includes(':') ? 6 : 4;
  process.nextTick(() => (settings.all ? done(null, [{ address, family }]) : done(null, address, family)));
  return {};
};
