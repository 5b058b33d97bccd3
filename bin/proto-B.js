import module from 'node:module';
module.enableCompileCache?.();
const { main } = await import('../dist/proto/B/cli.js');
process.exitCode = await main(process.argv);
