/**
 * `buckley-lsp doctor`: checks the configuration, the coordinator connection and the agent,
 * and says in plain words what is wrong and how to fix it. Exit code 0 when all is well.
 */
import { configFromEnv, describeProblems, resolveConfig, type ConfigInput } from '../config.js';
import { RootLogger } from '../logger.js';
import { detectAgent } from '../agents/detect.js';
import { CoordinatorClient } from '../coordinator/client.js';
import { channelFor } from '../coordinator/credentials.js';
import { serverCapabilitiesSchema } from '../coordinator/wire.js';
import { CoordinatorError } from '../coordinator/errors.js';

export async function runDoctor(options: {
  cliConfig: ConfigInput;
  env: NodeJS.ProcessEnv;
  version: string;
  out: (line: string) => void;
}): Promise<number> {
  const { out } = options;
  let failures = 0;
  const ok = (line: string) => out(`  ok    ${line}`);
  const bad = (line: string) => {
    failures++;
    out(`  FAIL  ${line}`);
  };
  out(`buckley-lsp ${options.version} doctor`);

  const resolved = resolveConfig([
    { name: 'environment', values: configFromEnv(options.env) },
    { name: 'command line', values: options.cliConfig },
  ]);
  if (!resolved.ok) {
    bad(`settings: ${describeProblems(resolved.problems)}`);
    return 1;
  }
  const config = resolved.config;
  ok('settings from the environment and command line are valid (editor settings are checked when the editor sends them)');

  const address = config.coordinator.address;
  if (address) {
    let client: CoordinatorClient;
    try {
      const channel = channelFor(address, config.coordinator.tls);
      client = new CoordinatorClient({ address, agentId: config.coordinator.agentId, credentials: channel.credentials, channelOptions: channel.options });
    } catch (error) {
      bad((error as Error).message);
      return 1;
    }
    try {
      const caps = await client.unary('GetServerCapabilities', {}, serverCapabilitiesSchema, { timeoutMs: 5_000 });
      ok(`coordinator at ${address} answers (protocol ${caps.protocol_version || '?'}; features: ${caps.features.join(', ') || 'none'})`);
    } catch (error) {
      const detail = error instanceof CoordinatorError ? error.details : String(error);
      bad(`coordinator at ${address} does not answer: ${detail}. Start it (\`buckley serve\`, or \`buckley-lsp coordinator --listen ${address}\`) or unset BUCKLEY_COORDINATOR / buckley.coordinator.address to use the embedded coordinator.`);
    } finally {
      client.close();
    }
    return failures ? 1 : 0;
  }

  ok('no coordinator address: the embedded coordinator will be used');
  const logger = new RootLogger('error');
  const detection = await detectAgent({ config, env: options.env, logger, clientVersion: options.version });
  if (!detection.driver) {
    bad(detection.problem);
    return 1;
  }
  try {
    ok(await detection.driver.check(AbortSignal.timeout(30_000)));
  } catch (error) {
    bad((error as Error).message);
  } finally {
    await detection.driver.close();
  }
  return failures ? 1 : 0;
}
