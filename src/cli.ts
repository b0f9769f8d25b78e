/** The `buckley-lsp` command: parses arguments (args.ts) and hands off to the command. */
import { doctorUsage, needsSettings, parseArgs, usage, VERSION } from './args.js';
import { isLogLevel, RootLogger, stderrSink } from './logger.js';

/** Every setting, from the schema: loaded only when needed, so a server started plainly answers `initialize` without it. */
const allSettings = async () => (await import('./config.js')).settings();

/** A process whose stdout is not the LSP channel logs to stderr, and to the log file (if asked for one). */
async function logToStderrAndFile(asked: string | undefined, logger: RootLogger): Promise<void> {
  const { chooseLogFile } = await import('./logFile.js');
  const { logFile, problem } = chooseLogFile(asked, process.env, false);
  if (problem) stderrSink('warn', problem);
  if (logFile) logger.setSink((level, line) => (logFile.sink(level, line), stderrSink(level, line)));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const known = needsSettings(argv) ? await allSettings() : [];
  const parsed = parseArgs(argv, () => known);
  if (parsed.error) {
    const settings = await allSettings();
    process.stderr.write(`buckley-lsp: ${parsed.error}\n\n${parsed.mode === 'doctor' ? doctorUsage(settings) : usage(settings)}\n`);
    process.exit(2);
  }
  const envLevel = process.env.BUCKLEY_LOG;
  const logger = new RootLogger(isLogLevel(envLevel) ? envLevel : 'info');
  const askedLogFile = parsed.logFile ?? process.env.BUCKLEY_LOG_FILE;
  switch (parsed.mode) {
    case 'help':
      process.stdout.write(`${parsed.helpFor === 'doctor' ? doctorUsage(known) : usage(known)}\n`);
      return;
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return;
    case 'server': {
      // Loaded side by side: the server answers `initialize` the sooner.
      const [{ serveStdio }, { chooseLogFile }] = await Promise.all([import('./commands/server.js'), import('./logFile.js')]);
      const { logFile, problem } = chooseLogFile(askedLogFile, process.env, true);
      serveStdio({ version: VERSION, cliConfig: parsed.config, logger, logFile, logFileProblem: problem });
      return;
    }
    case 'coordinator': {
      await logToStderrAndFile(askedLogFile, logger);
      const { runCoordinator } = await import('./commands/coordinator.js');
      const tls = parsed.tls?.cert && parsed.tls.key ? { cert: parsed.tls.cert, key: parsed.tls.key, clientCa: parsed.tls.clientCa } : undefined;
      await runCoordinator({ listen: parsed.listen ?? '127.0.0.1:50051', tls, team: parsed.team, cliConfig: parsed.config, env: process.env, logger, version: VERSION });
      return;
    }
    case 'acp': {
      // stdout is the ACP channel: the log goes to stderr (the client's log) and the log file.
      await logToStderrAndFile(askedLogFile, logger);
      const { runAcp } = await import('./commands/acp.js');
      await runAcp({ cliConfig: parsed.config, settingsFile: parsed.settingsFile, env: process.env, logger, version: VERSION });
      return;
    }
    case 'doctor': {
      const { runDoctor } = await import('./commands/doctor.js');
      process.exitCode = await runDoctor({
        cliConfig: parsed.config,
        settingsFile: parsed.settingsFile,
        prompt: parsed.prompt,
        acp: parsed.acp,
        env: process.env,
        version: VERSION,
        out: (line) => process.stdout.write(`${line}\n`),
      });
      return;
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`buckley-lsp: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
