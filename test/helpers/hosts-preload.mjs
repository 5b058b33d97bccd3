// Loaded with `node --import` into a prospect process: answers lookups of the names listed in
// PROSPECT_TEST_HOSTS ("name=address,..." or "name=address+address,...", in the order given) from that
// list, as a line in /etc/hosts would, which a test cannot add. Only so a test can reach a name that is
// not this machine's as written (so that proxies apply to it) directly, without a DNS query leaving this
// machine, or give a name several addresses (a dual-stack name). PROSPECT_TEST_DNS_DELAY
// ("name=ms,...") makes a listed name's answer come that late, as a slow resolver's would; the pending
// answer keeps the process alive as a pending getaddrinfo does. Both dns.lookup (what net and undici
// use) and dns.promises.lookup (what `doctor` uses) answer.
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';

function table(variable) {
  return new Map(
    (process.env[variable] ?? '')
      .split(',')
      .filter((entry) => entry.includes('='))
      .map((entry) => {
        const [name, value] = entry.split('=', 2);
        return [name.toLowerCase(), value];
      }),
  );
}
const hosts = table('PROSPECT_TEST_HOSTS');
const delays = table('PROSPECT_TEST_DNS_DELAY');
const systemLookup = dns.lookup;
const systemPromisesLookup = dns.promises.lookup;

/** The listed answers of a name for these options, or undefined for a name not listed. */
function answer(hostname, settings) {
  const name = String(hostname).toLowerCase();
  const listed = hosts.get(name);
  if (listed === undefined) return undefined;
  const family = Number(settings.family ?? 0);
  const entries = listed
    .split('+')
    .map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    .filter((entry) => family === 0 || entry.family === family);
  return { entries, delayMs: Number(delays.get(name) ?? 0) };
}

function notFound(hostname) {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
    code: 'ENOTFOUND',
    syscall: 'getaddrinfo',
    hostname,
  });
}

dns.lookup = function lookup(hostname, options, callback) {
  const done = typeof options === 'function' ? options : callback;
  const settings = typeof options === 'object' && options !== null ? options : { family: options };
  const found = answer(hostname, settings);
  if (found === undefined) return systemLookup.call(this, hostname, options, callback);
  const reply = () => {
    const [first] = found.entries;
    if (first === undefined) done(notFound(hostname));
    else if (settings.all) done(null, found.entries);
    else done(null, first.address, first.family);
  };
  if (found.delayMs > 0) setTimeout(reply, found.delayMs);
  else process.nextTick(reply);
  return {};
};

dns.promises.lookup = function lookup(hostname, options) {
  const settings = typeof options === 'object' && options !== null ? options : { family: options };
  const found = answer(hostname, settings);
  if (found === undefined) return systemPromisesLookup.call(this, hostname, options);
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      const [first] = found.entries;
      if (first === undefined) reject(notFound(hostname));
      else resolve(settings.all ? found.entries : first);
    }, found.delayMs);
  });
};
// `import { lookup } from 'node:dns/promises'` binds the export as it is when first imported: make
// sure that is this one.
syncBuiltinESMExports();
