/**
 * The `prospect` command of inProcessCommand (test/helpers/cli.ts): a shell runs it as it would run
 * prospect, and it hands the run to the test process over the Unix socket argv[2] names: its argv,
 * environment, working directory and stdin (read to its end first). It writes the run's stdout and
 * stderr and exits with its code. Node alone starts in ~0.05 s of CPU, prospect's modules are loaded
 * once by the test process's worker.
 */
import { connect } from 'node:net';

const [socketPath, ...args] = process.argv.slice(2);
const input = [];
for await (const chunk of process.stdin) input.push(chunk);

const socket = connect(socketPath);
socket.end(
  JSON.stringify({ args, env: process.env, cwd: process.cwd(), input: Buffer.concat(input).toString('base64') }),
);
const answer = [];
for await (const chunk of socket) answer.push(chunk);
const { code, stdout, stderr, error } = JSON.parse(Buffer.concat(answer).toString('utf8'));
// A reader that stops early (`| head`) is the run's business, not this relay's: its rows were all written.
process.stdout.on('error', () => {});
if (error !== undefined) {
  process.stderr.write(`prospect (relayed to the test process) failed: ${error}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write(Buffer.from(stdout, 'base64'));
  process.stderr.write(Buffer.from(stderr, 'base64'));
  process.exitCode = code;
}
