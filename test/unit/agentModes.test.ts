/**
 * The mode a session runs in, from what the real agents list in session/new (seen running them):
 * an ask in the agent's read-only mode, a task in the one that asks before changes, never one that
 * lets tools run unasked; the user's setting by id or name; a rule for agents not known by name.
 */
import { describe, expect, it } from 'vitest';
import { choosableModes, chooseMode, modelsOf, modesOf, unaskedSwitchesOf } from '../../src/coordinator/agents/modes.js';

const claude = modesOf({
  modes: { currentModeId: 'default', availableModes: ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'].map((id) => ({ id, name: id })) },
  configOptions: [{ id: 'mode', category: 'mode', type: 'select', currentValue: 'default', options: ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'].map((value) => ({ value, name: value })) }],
})!;
const codex = modesOf({
  modes: { currentModeId: 'read-only', availableModes: [{ id: 'read-only', name: 'Read Only' }, { id: 'auto', name: 'Default' }, { id: 'full-access', name: 'Full Access' }] },
  configOptions: [{ id: 'mode', category: 'mode', currentValue: 'read-only', options: [{ value: 'read-only', name: 'Read Only' }, { value: 'auto', name: 'Default' }, { value: 'full-access', name: 'Full Access' }] }],
})!;
const gemini = modesOf({ modes: { currentModeId: 'default', availableModes: [{ id: 'default', name: 'Default' }, { id: 'autoEdit', name: 'Auto Edit' }, { id: 'yolo', name: 'YOLO' }, { id: 'plan', name: 'Plan' }] } })!;
const qwen = modesOf({
  modes: { currentModeId: 'auto', availableModes: ['plan', 'default', 'auto-edit', 'auto', 'yolo'].map((id) => ({ id, name: id })) },
  configOptions: [{ id: 'mode', category: 'mode', currentValue: 'auto', options: [{ value: 'plan', name: 'Plan' }, { value: 'default', name: 'Default' }, { value: 'auto-edit', name: 'Auto Edit' }, { value: 'auto', name: 'Auto' }, { value: 'yolo', name: 'YOLO' }] }],
})!;

describe('the mode of a session', () => {
  it.each([
    ['Claude Code', claude, '@zed-industries/claude-agent-acp', 'plan', 'default'],
    ['Codex', codex, 'codex-acp', 'read-only', 'read-only'],
    ['Gemini CLI', gemini, 'gemini-cli', 'plan', 'default'],
    ['Qwen Code (which starts in auto)', qwen, 'qwen-code', 'plan', 'default'],
  ])('%s: asks in its read-only mode, tasks in the one that asks first', (_name, modes, acpName, ask, task) => {
    expect(chooseMode(modes, true, { acpName, command: [] }).mode?.id).toBe(ask);
    expect(chooseMode(modes, false, { acpName, command: [] }).mode?.id).toBe(task);
  });

  it('is set as a config option where the agent lists one, else with session/set_mode', () => {
    expect(claude.configId).toBe('mode');
    expect(gemini.configId).toBeUndefined();
    expect(qwen.current).toBe('auto');
  });

  it('for an agent not known by name: by what its modes are called, never one that runs tools unasked', () => {
    const unknown = modesOf({ modes: { availableModes: [{ id: 'yolo' }, { id: 'auto-approve' }, { id: 'ask', name: 'Ask every time', description: 'Prompts before edits' }, { id: 'readonly', name: 'Read only' }] } })!;
    expect(chooseMode(unknown, true, { command: ['my-agent'] }).mode?.id).toBe('readonly');
    expect(chooseMode(unknown, false, { command: ['my-agent'] }).mode?.id).toBe('ask');
    const reckless = modesOf({ modes: { availableModes: [{ id: 'yolo' }, { id: 'full-auto', description: 'prompts never' }] } })!;
    expect(chooseMode(reckless, false, { command: ['my-agent'] })).toEqual({ why: "none of the agent's modes (yolo, full-auto) reads as asking before changes" });
  });

  it("takes the user's setting by id or name, and says when the agent has no such mode", () => {
    expect(chooseMode(codex, false, { acpName: 'codex-acp', command: [] }, 'Default').mode?.id).toBe('auto');
    expect(chooseMode(gemini, true, { acpName: 'gemini-cli', command: [] }, 'yolo').mode?.id).toBe('yolo');
    expect(chooseMode(gemini, true, { acpName: 'gemini-cli', command: [] }, 'careful').why).toBe('buckley.agent.modes.ask is "careful", which the agent does not offer (it offers default, autoEdit, yolo, plan)');
  });

  it('knows an agent by its command before it says its name', () => {
    expect(chooseMode(qwen, true, { command: ['npx', '@qwen-code/qwen-code', '--acp'] }).mode?.id).toBe('plan');
  });

  it.each([
    ['Claude Code', claude, '@zed-industries/claude-agent-acp', ['default', 'plan']],
    ['Codex', codex, 'codex-acp', ['read-only']],
    ['Gemini CLI', gemini, 'gemini-cli', ['default', 'plan']],
    ['Qwen Code', qwen, 'qwen-code', ['plan', 'default']],
  ])('%s: a task may be put only in a mode that asks first', (_name, modes, acpName, choosable) => {
    expect(choosableModes(modes, { acpName, command: [] }).map((mode) => mode.id)).toEqual(choosable);
  });

  it('takes the mode the user wants where the safety rules allow it for the intent, and says why not where they do not', () => {
    const names = { acpName: 'claude-agent-acp', command: [] };
    const wanted = (mode: string) => ({ mode, source: 'chosen in the editor' });
    expect(chooseMode(claude, false, names, undefined, wanted('Plan'))).toEqual({ mode: { id: 'plan', name: 'plan', description: undefined }, why: 'chosen in the editor' });
    expect(chooseMode(claude, false, names, undefined, wanted('acceptEdits'))).toMatchObject({ mode: { id: 'default' }, why: '"acceptEdits" (chosen in the editor) runs tools unasked: Claude Code\'s mode that asks before changes' });
    // An ask stays in the read-only mode: the one wanted for tasks asks first, but writes.
    expect(chooseMode(claude, true, names, undefined, wanted('default'))).toMatchObject({ mode: { id: 'plan' }, why: '"default" (chosen in the editor) is not its read-only mode: Claude Code\'s read-only mode' });
    expect(chooseMode(claude, true, names, undefined, wanted('plan'))).toMatchObject({ mode: { id: 'plan' }, why: 'chosen in the editor' });
    expect(chooseMode(gemini, false, { acpName: 'gemini-cli', command: [] }, undefined, wanted('careful')).why).toBe('"careful" (chosen in the editor) is not one the agent offers: Gemini CLI\'s mode that asks before changes');
    // An agent not known by name: an ask's wanted mode must read as read-only.
    const unknown = modesOf({ modes: { availableModes: [{ id: 'ask' }, { id: 'readonly', name: 'Read only' }, { id: 'edit' }] } })!;
    expect(chooseMode(unknown, true, { command: ['my-agent'] }, undefined, wanted('edit')).mode?.id).toBe('readonly');
    expect(chooseMode(unknown, false, { command: ['my-agent'] }, undefined, wanted('edit')).mode?.id).toBe('edit');
    // The setting for the intent (buckley.agent.modes.task) is the expert's word: it wins over the one wanted.
    expect(chooseMode(claude, false, names, 'acceptEdits', wanted('plan')).mode?.id).toBe('acceptEdits');
  });
});

describe("an agent's switches that let its tools run unasked", () => {
  // Cline 3.0.65's session/new, as it answers it: its modes as a select, its auto-approve a boolean.
  const cline = {
    modes: { currentModeId: 'act', availableModes: [{ id: 'plan', name: 'Plan' }, { id: 'act', name: 'Act' }] },
    configOptions: [
      { type: 'select', id: 'provider', name: 'Provider', category: 'model', currentValue: 'openai-compatible', options: [{ value: 'cline', name: 'Cline Usage-Billing' }, { value: 'openai-codex', name: 'OpenAI ChatGPT Subscription' }] },
      { type: 'select', id: 'model', name: 'Model', category: 'model', currentValue: 'gpt-4o', options: [{ value: 'gpt-4o', name: 'gpt-4o' }] },
      { type: 'select', id: 'mode', name: 'Session Mode', category: 'mode', currentValue: 'act', options: [{ value: 'plan', name: 'Plan' }, { value: 'act', name: 'Act' }] },
      { type: 'boolean', id: 'auto_approve', name: 'Auto-approve tools', currentValue: false },
    ],
  };

  it('are read by what turning them on means, with whether each is on; a neighbour of theirs is not one (and its modes and models are read by their own options)', () => {
    expect(unaskedSwitchesOf(cline)).toEqual(new Map([['auto_approve', false]]));
    expect(unaskedSwitchesOf({ configOptions: [{ type: 'boolean', id: 'yolo', name: 'YOLO', currentValue: true }] })).toEqual(new Map([['yolo', true]]));
    expect(unaskedSwitchesOf({ configOptions: [{ type: 'boolean', id: 'skip_permissions', currentValue: true }] })).toEqual(new Map([['skip_permissions', true]]));
    // Turning these on lets nothing run unasked.
    expect(unaskedSwitchesOf({ configOptions: [{ type: 'boolean', id: 'auto_compact', name: 'Auto compact', currentValue: true }, { type: 'boolean', id: 'thinking', currentValue: true }] })).toBeUndefined();
    // A select is a mode or a model, chosen by the mode rules, not a switch.
    expect(unaskedSwitchesOf({ configOptions: [{ type: 'select', id: 'auto_approve', currentValue: 'edits', options: [{ value: 'edits' }] }] })).toBeUndefined();
    expect(modesOf(cline)).toMatchObject({ configId: 'mode', current: 'act' });
    // Its models are its "model" option's, not those of its "provider", which comes first in the same category.
    expect(modelsOf(cline)).toEqual({ configId: 'model', current: 'gpt-4o', available: [{ id: 'gpt-4o', name: 'gpt-4o', description: undefined }] });
  });
});

describe("a known agent's own modes", () => {
  // Factory Droid 0.215.0's, as it lists them: its mode that asks first is called "Auto (Off)".
  const droid = modesOf({
    modes: {
      currentModeId: 'normal',
      availableModes: [
        { id: 'normal', name: 'Auto (Off)' },
        { id: 'spec', name: 'Spec' },
        { id: 'auto-low', name: 'Auto (Low)' },
        { id: 'auto-medium', name: 'Auto (Medium)' },
        { id: 'auto-high', name: 'Auto (High)' },
      ],
    },
  })!;
  const names = { acpName: '@factory/cli', command: ['droid', 'exec', '--output-format', 'acp'] };

  it('are known by their ids, not read by their names: its mode that asks first is one, its auto modes are not', () => {
    expect(chooseMode(droid, false, names).mode?.id).toBe('normal');
    expect(chooseMode(droid, true, names).mode?.id).toBe('spec');
    expect(choosableModes(droid, names).map((mode) => mode.id)).toEqual(['normal', 'spec']);
  });
});
