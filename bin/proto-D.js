import module from 'node:module';
module.enableCompileCache?.();
const { main } = await import('../dist/proto/D/cli.js');
process.exitCode = await main(process.argv);
