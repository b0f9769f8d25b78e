/**
 * Capability negotiation: a pure function of what the client advertised, what it is known to
 * do without advertising it (the quirks table), the user's configuration and the coordinator's
 * features. Decide from the advertised capabilities first; a quirk only adds what a client
 * handles without advertising, or removes what it advertises but mishandles. A version number
 * never overrides an advertised capability.
 */
import { featureFlags, KNOWN_FEATURES, type FeatureFlag } from '../wire/features.js';
import { CodeActionKind, TextDocumentSyncKind, type InitializeParams, type ServerCapabilities } from 'vscode-languageserver';
import { Commands, PROTOCOL_VERSION } from './names.js';
import type { NegotiatedSettings } from '../configSources.js';

/** What the bridge may do with this client. */
export interface ClientFeatures {
  /** `window/showDocument` opens an answer document. */
  showDocument: boolean;
  /** `window/showMessageRequest` can ask the user to choose. */
  showMessageRequest: boolean;
  /** `showMessageRequest` renders markdown and stays until dismissed (a home for a full answer). */
  markdownMessageRequest: boolean;
  /** `$/progress` with server-created tokens. */
  workDoneProgress: boolean;
  /** Hover content may be markdown (else plain text). */
  markdownHover: boolean;
  /** Code actions may be `CodeAction` literals (else bare `Command`s). */
  codeActionLiterals: boolean;
  /** `workspace/configuration` pull. */
  configuration: boolean;
  /**
   * The editor takes a registration for `workspace/didChangeConfiguration` (others send it
   * unasked, and eglot warns the user about a registration it does not support).
   */
  configurationChangeRegistration: boolean;
  /** `workspace/applyEdit`. */
  applyEdit: boolean;
  /** Versioned edits (`workspaceEdit.documentChanges`): the editor refuses an edit made for an older buffer. */
  documentChanges: boolean;
  /** Opted in to `$/buckley/taskProgress`. */
  taskProgress: boolean;
  /** Opted in to `buckley/approveTool`. */
  approveTool: boolean;
  /** Opted in to `buckley/askText`: the agent's questions that need a typed answer (the Neovim module: vim.ui.input). */
  askText: boolean;
  /** Asks for inline completions (LSP 3.18 `textDocument/inlineCompletion`: Neovim 0.12). */
  inlineCompletion: boolean;
  /** Takes completions (`textDocument/completion`): the agent's `/commands` are completed in answer documents. */
  commandCompletion: boolean;
}

/**
 * The coordinator's features, as the bridge uses them: known once the coordinator has answered
 * (right after `initialized`; until then `known` is false and so is every flag). What each flag
 * means is said where the names are declared (wire/features.ts).
 */
export type CoordinatorFeatures = Record<FeatureFlag, boolean> & {
  /** The coordinator has answered GetServerCapabilities. */
  known: boolean;
  /** What it announced that the bridge does not use (yet). */
  unused: string[];
};

export interface ClientIdentity {
  name: string;
  version?: string;
}

interface Quirk {
  /** Which clients, by `clientInfo.name` (case-insensitive) and version range. */
  client: string;
  minVersion?: string;
  maxVersion?: string;
  why: string;
  add?: Partial<ClientFeatures>;
  remove?: Partial<Record<keyof ClientFeatures, true>>;
}

/** Facts gathered by running the editors (see fixtures/clients/README.md). */
export const QUIRKS: readonly Quirk[] = [
  {
    client: 'helix',
    minVersion: '24.3.0',
    why: 'Helix opens window/showDocument since 24.03 but advertised it only from the 2025-12 line',
    add: { showDocument: true },
  },
  {
    client: 'zed',
    why: 'Zed applies workspace edits but did not always advertise applyEdit',
    add: { applyEdit: true },
  },
  {
    client: 'zed',
    why: 'Zed shows showMessageRequest as a markdown toast that stays until the user acts',
    add: { markdownMessageRequest: true },
  },
];

export function clientIdentity(params: Pick<InitializeParams, 'clientInfo'>): ClientIdentity {
  const info = params.clientInfo;
  return info ? { name: info.name, ...(info.version ? { version: info.version } : {}) } : { name: 'unknown' };
}

/** The client's opt-in to the custom layer: `experimental.buckley` or the same in initializationOptions. */
function buckleyOptIn(params: Pick<InitializeParams, 'capabilities' | 'initializationOptions'>): Record<string, unknown> {
  const pick = (value: unknown): Record<string, unknown> | undefined =>
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  const experimental = pick(params.capabilities?.experimental);
  const fromInit = pick(pick(params.initializationOptions)?.clientCapabilities);
  return {
    ...pick(fromInit?.buckley),
    ...pick(pick(fromInit?.experimental)?.buckley),
    ...pick(experimental?.buckley),
  };
}

function negotiateClientFeatures(params: InitializeInput): ClientFeatures {
  const caps = params.capabilities ?? {};
  const window = caps.window;
  const optIn = buckleyOptIn(params);
  const advertised: ClientFeatures = {
    showDocument: window?.showDocument?.support === true,
    showMessageRequest: window?.showMessage !== undefined,
    markdownMessageRequest: false,
    workDoneProgress: window?.workDoneProgress === true,
    markdownHover: caps.textDocument?.hover?.contentFormat?.includes('markdown') ?? false,
    codeActionLiterals: caps.textDocument?.codeAction?.codeActionLiteralSupport !== undefined,
    configuration: caps.workspace?.configuration === true,
    configurationChangeRegistration: caps.workspace?.didChangeConfiguration?.dynamicRegistration === true,
    applyEdit: caps.workspace?.applyEdit === true,
    documentChanges: caps.workspace?.workspaceEdit?.documentChanges === true,
    taskProgress: optIn.taskProgress === true,
    approveTool: optIn.approveTool === true,
    askText: optIn.askText === true,
    inlineCompletion: caps.textDocument?.inlineCompletion !== undefined,
    commandCompletion: caps.textDocument?.completion !== undefined,
  };
  const identity = clientIdentity(params);
  const features = { ...advertised };
  for (const quirk of QUIRKS) {
    if (!quirkApplies(quirk, identity)) continue;
    // A quirk only adds what the client did not say about itself.
    for (const [key, value] of Object.entries(quirk.add ?? {}) as [keyof ClientFeatures, boolean][]) {
      if (!advertisedExplicitly(params, key)) features[key] = value;
    }
    for (const key of Object.keys(quirk.remove ?? {}) as (keyof ClientFeatures)[]) features[key] = false;
  }
  // A markdown prompt is only worth anything where prompts exist at all.
  features.markdownMessageRequest &&= features.showMessageRequest;
  return features;
}

/** True when the client stated the capability (even as false), so no quirk may override it. */
function advertisedExplicitly(
  params: Pick<InitializeParams, 'capabilities'>,
  key: keyof ClientFeatures,
): boolean {
  const window = params.capabilities?.window;
  switch (key) {
    case 'showDocument':
      return window?.showDocument !== undefined;
    case 'applyEdit':
      return params.capabilities?.workspace?.applyEdit !== undefined;
    default:
      return false;
  }
}

function quirkApplies(quirk: Quirk, identity: ClientIdentity): boolean {
  if (identity.name.toLowerCase() !== quirk.client) return false;
  if (!quirk.minVersion && !quirk.maxVersion) return true;
  if (!identity.version) return false;
  const version = parseVersion(identity.version);
  if (quirk.minVersion && compareVersions(version, parseVersion(quirk.minVersion)) < 0) return false;
  if (quirk.maxVersion && compareVersions(version, parseVersion(quirk.maxVersion)) > 0) return false;
  return true;
}

/** "25.01.1" → [25, 1, 1]; tolerant of suffixes like "0.10.4-dev". */
export function parseVersion(version: string): number[] {
  return version.split(/[.\-+]/).slice(0, 3).map((part) => Number.parseInt(part, 10) || 0);
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** `undefined`: the coordinator has not answered yet. */
export function coordinatorFeatures(features: readonly string[] | undefined): CoordinatorFeatures {
  const flags = featureFlags(features);
  return {
    known: features !== undefined,
    ...flags,
    // A coordinator that keeps asks read-only honours an ask's intent too.
    askIntent: flags.askIntent || flags.readOnlyAsks,
    unused: (features ?? []).filter((name) => !KNOWN_FEATURES.includes(name)),
  };
}

/** Everything negotiated; reported in `experimental.buckley.features` and `buckley/status`. */
export interface Features extends ClientFeatures {
  /** The editor opens documents with `window/showDocument` (`showDocument`: answers are opened so). */
  opensDocuments: boolean;
  /** Answers are kept for hover over the asked range. */
  answerHover: boolean;
  /** A one-line showMessage summary of each answer. */
  answerMessage: boolean;
  /** Coordinator features; all false until the coordinator answered. */
  coordinator: CoordinatorFeatures;
}

export type InitializeInput = Pick<InitializeParams, 'capabilities' | 'clientInfo' | 'initializationOptions'>;

/**
 * The feature set: what the client can do (advertised, corrected by quirks), narrowed by the
 * user's configuration, with the coordinator's features once they are known.
 */
export function negotiate(input: {
  initialize: InitializeInput;
  /** The settings in force (`Config`), or at `initialize` those it depends on, read early. */
  config: NegotiatedSettings;
  coordinator?: readonly string[];
}): Features {
  const client = negotiateClientFeatures(input.initialize);
  const { answers } = input.config;
  return {
    ...client,
    opensDocuments: client.showDocument,
    showDocument: client.showDocument && answers.showDocument,
    answerHover: answers.hover,
    answerMessage: answers.showMessage,
    inlineCompletion: client.inlineCompletion && input.config.completions.enabled,
    coordinator: coordinatorFeatures(input.coordinator),
  };
}

/**
 * What the server offers the editor in `initialize`'s result: a pure function of the negotiated
 * features. Inline completions only for editors that ask (LSP 3.18); whether the coordinator can
 * is known later (buckley/status says).
 */
export function capabilities(features: Features): ServerCapabilities {
  return {
    positionEncoding: 'utf-16',
    // Saves are told so the agent's editor tools can say which buffers have unsaved edits.
    textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
    hoverProvider: true,
    codeActionProvider: { codeActionKinds: [CodeActionKind.Empty], resolveProvider: false },
    executeCommandProvider: { commands: Object.values(Commands) },
    ...(features.inlineCompletion ? { inlineCompletionProvider: {} } : {}),
    // Only `/` asks: the agent's commands, in answer documents (elsewhere the answer is empty at once).
    ...(features.commandCompletion ? { completionProvider: { triggerCharacters: ['/'] } } : {}),
    experimental: { buckley: { protocolVersion: PROTOCOL_VERSION, features } },
  };
}
