// Prints the Debian packages of the programs in test/helpers/programs.json whose probe fails here,
// one per line. The probe is the one the tests run, so a stand-in of the same name is not mistaken
// for the program (`command -v` would be).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const { programs } = JSON.parse(readFileSync(new URL('../test/helpers/programs.json', import.meta.url), 'utf8'));
const works = (command, probe) => spawnSync(command, probe, { stdio: 'ignore', timeout: 60_000 }).status === 0;
const missing = programs.filter(({ commands, probe }) => !commands.some((command) => works(command, probe)));
for (const pkg of new Set(missing.map((program) => program.package))) console.log(pkg);
