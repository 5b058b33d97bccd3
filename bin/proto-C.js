import module from 'node:module';
module.enableCompileCache?.();
const { main } = await import('../dist/proto/C/cli.js');
process.exitCode = await main(process.argv);
