import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = `${REPO}dist/buckley-lsp.js`;
export const FIXTURES = `${REPO}fixtures/`;
export const SCRIPTED_AGENT = `${FIXTURES}scripted-agent.mjs`;
export const EXAMPLE_AGENT = `${REPO}node_modules/acp-example-agent/dist/examples/agent.js`;
/** The `initialize` params real editors sent (see fixtures/clients/README.md). */
export const CLIENT_PAYLOADS = `${FIXTURES}clients/`;

export function fileUri(path: string): string {
  return pathToFileURL(path).href;
}
