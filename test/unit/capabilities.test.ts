/**
 * Capability negotiation against the real `initialize` payloads of editors in fixtures/clients.
 * Each row notes what the editor does, as gathered by running it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { negotiate, type InitializeInput } from '../../src/bridge/capabilities.js';
import { configSchema, defaultConfig } from '../../src/config.js';
import { CLIENT_PAYLOADS } from '../helpers/paths.js';

function payload(name: string): InitializeInput {
  return JSON.parse(readFileSync(`${CLIENT_PAYLOADS}${name}.json`, 'utf8'));
}

const F = false;
const T = true;
// prettier-ignore
const expected: Record<string, { note: string; showDocument: boolean; showMessageRequest: boolean; markdownMessageRequest: boolean; workDoneProgress: boolean; markdownHover: boolean; configuration: boolean; configurationChangeRegistration: boolean }> = {
  'neovim-0.7.2':          { note: 'advertises showDocument=false; no workspace/configuration', showDocument: F, showMessageRequest: T, markdownMessageRequest: F, workDoneProgress: T, markdownHover: T, configuration: F, configurationChangeRegistration: F },
  'neovim-0.10.4':         { note: 'showDocument works',                                         showDocument: T, showMessageRequest: T, markdownMessageRequest: F, workDoneProgress: T, markdownHover: T, configuration: T, configurationChangeRegistration: F },
  'neovim-0.12.4':         { note: 'as 0.10',                                                    showDocument: T, showMessageRequest: T, markdownMessageRequest: F, workDoneProgress: T, markdownHover: T, configuration: T, configurationChangeRegistration: F },
  'helix-25.01.1':         { note: 'handles showDocument without advertising it (quirk); no showMessageRequest', showDocument: T, showMessageRequest: F, markdownMessageRequest: F, workDoneProgress: T, markdownHover: T, configuration: T, configurationChangeRegistration: F },
  'helix-master-2026-07':  { note: 'reports 25.07.1 but advertises both: trust what it advertises', showDocument: T, showMessageRequest: T, markdownMessageRequest: F, workDoneProgress: T, markdownHover: T, configuration: T, configurationChangeRegistration: F },
  'zed-1.6.0.from-source': { note: 'no showDocument; showMessageRequest is a lasting markdown toast (quirk)', showDocument: F, showMessageRequest: T, markdownMessageRequest: T, workDoneProgress: T, markdownHover: T, configuration: T, configurationChangeRegistration: T },
  'eglot-1.9':             { note: 'no window capabilities at all; plain-text hover',            showDocument: F, showMessageRequest: F, markdownMessageRequest: F, workDoneProgress: F, markdownHover: F, configuration: T, configurationChangeRegistration: F },
  'eglot-1.17':            { note: 'showDocument and progress; plain-text hover',                showDocument: T, showMessageRequest: F, markdownMessageRequest: F, workDoneProgress: T, markdownHover: F, configuration: T, configurationChangeRegistration: F },
};

describe('negotiate', () => {
  it('has an expectation for every captured client payload', () => {
    const payloads = readdirSync(CLIENT_PAYLOADS).filter((file) => file.endsWith('.json')).map((file) => file.replace(/\.json$/, ''));
    expect(Object.keys(expected).sort()).toEqual(payloads.sort());
  });

  for (const [name, { note, ...features }] of Object.entries(expected)) {
    it(`${name}: ${note}`, () => {
      const negotiated = negotiate({ initialize: payload(name), config: defaultConfig });
      expect(negotiated).toMatchObject(features);
      // Nobody in fixtures/clients opted in to the custom layer, and all take code action literals.
      expect(negotiated).toMatchObject({ taskProgress: false, approveTool: false, codeActionLiterals: true });
    });
  }

  it('never lets a quirk override what a client advertised, even as false', () => {
    const helix = payload('helix-25.01.1');
    const saysNo = { ...helix, capabilities: { ...helix.capabilities, window: { ...helix.capabilities.window, showDocument: { support: false } } } };
    expect(negotiate({ initialize: saysNo, config: defaultConfig }).showDocument).toBe(false);
    const oldHelix = { ...helix, clientInfo: { name: 'helix', version: '23.10' } };
    expect(negotiate({ initialize: oldHelix, config: defaultConfig }).showDocument).toBe(false);
  });

  it('takes the opt-in to the custom layer from experimental.buckley or initializationOptions.clientCapabilities', () => {
    const base = payload('neovim-0.10.4');
    const viaExperimental = { ...base, capabilities: { ...base.capabilities, experimental: { buckley: { taskProgress: true, approveTool: true } } } };
    expect(negotiate({ initialize: viaExperimental, config: defaultConfig })).toMatchObject({ taskProgress: true, approveTool: true });
    const viaOptions = { ...base, initializationOptions: { clientCapabilities: { experimental: { buckley: { taskProgress: true } } } } };
    expect(negotiate({ initialize: viaOptions, config: defaultConfig })).toMatchObject({ taskProgress: true, approveTool: false });
    const flat = { ...base, initializationOptions: { clientCapabilities: { buckley: { approveTool: true } } } };
    expect(negotiate({ initialize: flat, config: defaultConfig })).toMatchObject({ taskProgress: false, approveTool: true });
  });

  it('narrows by configuration and adds the coordinator features', () => {
    const config = configSchema.parse({ answers: { showDocument: false, hover: false } });
    const negotiated = negotiate({ initialize: payload('neovim-0.10.4'), config, coordinator: ['chat', 'stream_task', 'answer_stream'] });
    expect(negotiated).toMatchObject({ showDocument: false, answerHover: false, answerMessage: true });
    expect(negotiated.coordinator).toEqual({
      known: true,
      chat: true,
      streamTask: true,
      answerStream: true,
      toolApproval: false,
      approvalEvents: false,
      readsContext: false,
      readOnlyAsks: false,
      askIntent: false,
      editorBuffers: false,
      editSelection: false,
      proposesEdits: false,
      conversations: false,
      inlineCompletion: false,
      usage: false,
      plan: false,
      thoughts: false,
      agentControls: false,
      agentModes: false,
      questions: false,
      taskEvents: false,
      sharedTasks: false,
      promptImages: false,
      clientTerminals: false,
      unused: [],
    });
  });

  it("knows the coordinator's features only once it has answered, and names those the bridge does not use", () => {
    expect(negotiate({ initialize: payload('neovim-0.10.4'), config: defaultConfig }).coordinator).toMatchObject({ known: false, chat: false, unused: [] });
    // What the real Buckley announced (see the wire contract).
    const buckley = ['chat', 'stream_task', 'tool_approval', 'context_handles', 'inline_completion', 'propose_edits', 'apply_edits', 'editor_state'];
    expect(negotiate({ initialize: payload('neovim-0.10.4'), config: defaultConfig, coordinator: buckley }).coordinator).toEqual({
      known: true,
      chat: true,
      streamTask: true,
      answerStream: false,
      toolApproval: true,
      approvalEvents: false,
      readsContext: false,
      readOnlyAsks: false,
      askIntent: false,
      editorBuffers: false,
      editSelection: false,
      proposesEdits: true,
      conversations: false,
      inlineCompletion: true,
      usage: false,
      plan: false,
      thoughts: false,
      agentControls: false,
      agentModes: false,
      questions: false,
      taskEvents: false,
      sharedTasks: false,
      promptImages: false,
      clientTerminals: false,
      unused: ['context_handles', 'apply_edits', 'editor_state'],
    });
  });

  it('copes with a client that sends no capabilities and no clientInfo', () => {
    expect(negotiate({ initialize: { capabilities: {} }, config: defaultConfig })).toMatchObject({
      showDocument: false,
      showMessageRequest: false,
      workDoneProgress: false,
      markdownHover: false,
      codeActionLiterals: false,
    });
  });
});
