import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentChoices, findChoice } from '../../src/coordinator/agents/choices.js';
import { modelsOf, modesOf } from '../../src/coordinator/agents/modes.js';
import { RootLogger } from '../../src/logger.js';
import { tempDir } from '../helpers/temp.js';

const logged: string[] = [];
const logger = new RootLogger('info', (_level, line) => logged.push(line));
const models = { current: 'default', configId: 'model', available: [{ id: 'default', name: 'Default' }, { id: 'opus', name: 'Opus' }, { id: 'haiku', name: 'Haiku' }] };

describe('the models a session offers', () => {
  it('are read from a config option of category model, else from ACP models', () => {
    const option = { configOptions: [{ id: 'mode', category: 'mode', currentValue: 'plan', options: [{ value: 'plan' }] }, { id: 'model', category: 'model', currentValue: 'opus', options: [{ value: 'opus', name: 'Opus' }, { options: [{ value: 'haiku', name: 'Haiku', description: 'fast' }] }] }] };
    expect(modelsOf(option)).toEqual({ configId: 'model', current: 'opus', available: [{ id: 'opus', name: 'Opus', description: undefined }, { id: 'haiku', name: 'Haiku', description: 'fast' }] });
    expect(modelsOf({ models: { currentModelId: 'a', availableModels: [{ modelId: 'a', name: 'A' }] } })).toEqual({ current: 'a', available: [{ id: 'a', name: 'A', description: undefined }] });
    expect(modelsOf({ sessionId: 's' })).toBeUndefined();
  });

  it('are found by id, else by id or name in any case', () => {
    expect(findChoice(models.available, 'opus')?.id).toBe('opus');
    expect(findChoice(models.available, 'HAIKU')?.id).toBe('haiku');
    expect(findChoice(models.available, 'Opus')?.id).toBe('opus');
    expect(findChoice(models.available, 'sonnet')).toBeUndefined();
  });
});

describe('AgentChoices', () => {
  it('uses the model chosen in the editor over the setting, remembered per agent in its file', () => {
    const file = join(tempDir('choices'), 'agent-models.json');
    const choices = new AgentChoices({ agent: 'claude-agent-acp', setting: 'haiku', file, logger });
    choices.offered(models, undefined);
    expect(choices.modelFor(models)?.id).toBe('haiku');
    expect(choices.snapshot('Claude').model_source).toBe('buckley.agent.model');
    expect(choices.choose('Opus')).toEqual({ model: { id: 'opus', name: 'Opus' } });
    expect(choices.modelFor(models)?.id).toBe('opus');
    expect(choices.snapshot('Claude')).toMatchObject({ model: 'opus', model_source: 'chosen in the editor', known: true });
    // Another process of the same agent, after a restart: the choice holds; another agent's does not.
    expect(new AgentChoices({ agent: 'claude-agent-acp', setting: 'haiku', file, logger }).wanted()).toEqual({ model: 'opus', source: 'chosen in the editor' });
    expect(new AgentChoices({ agent: 'codex-acp', file, logger }).wanted()).toBeUndefined();
  });

  it("says once that a wanted model is not offered, and uses the agent's default; refuses to choose one it does not offer", () => {
    logged.length = 0;
    const choices = new AgentChoices({ agent: 'gemini', setting: 'gpt-9', logger });
    expect(choices.choose('opus')).toEqual({ error: 'the agent has not said which models it offers (it has not started, or offers none)' });
    choices.offered(models, undefined);
    expect(choices.modelFor(models)).toBeUndefined();
    expect(choices.modelFor(models)).toBeUndefined();
    expect(logged.filter((line) => line.includes('the model "gpt-9" (buckley.agent.model) is not one the agent offers (it offers default, opus, haiku): it uses default'))).toHaveLength(1);
    expect(choices.snapshot('Gemini CLI')).toMatchObject({ model: 'default', model_source: "the agent's default" });
    expect(choices.choose('sonnet')).toEqual({ error: 'the agent offers no model "sonnet": it offers default, opus, haiku' });
  });

  it("sends a command the agent lists alone, as ACP has commands sent, and anything else as the prompt", async () => {
    const choices = new AgentChoices({ agent: 'x', logger });
    expect(choices.setCommands([{ name: 'review', description: 'Review', hint: '' }])).toBe(true);
    expect(choices.setCommands([{ name: 'review', description: 'Review', hint: '' }])).toBe(false);
    expect(await choices.promptOf({ prompt: 'the question with its context', command: '/review the loop' })).toBe('/review the loop');
    expect(await choices.promptOf({ prompt: 'the question with its context' })).toBe('the question with its context');
  });

  it('chooses the mode tasks run in among those that ask first, remembered per agent beside its model; none where buckley.agent.modes.task fixes it', () => {
    const file = join(tempDir('choices'), 'agent-models.json');
    const modes = modesOf({ modes: { currentModeId: 'default', availableModes: ['default', 'acceptEdits', 'plan', 'bypassPermissions'].map((id) => ({ id, name: id })) } })!;
    const choices = new AgentChoices({ agent: 'claude-agent-acp', file, logger });
    expect(choices.chooseMode('plan')).toEqual({ error: 'the agent has not said which modes it offers (it has not started, or offers none)' });
    choices.offered(models, modes);
    expect(choices.snapshot('Claude')).toMatchObject({ ask_mode: 'plan', task_mode: 'default', task_modes: ['default', 'plan'], mode_source: "Claude Code's mode that asks before changes" });
    expect(choices.chooseMode('bypassPermissions')).toEqual({ error: 'the mode "bypassPermissions" runs tools unasked: tasks run in one that asks first (default, plan); buckley.agent.modes.task sets any' });
    expect(choices.chooseMode('Plan')).toEqual({ mode: { id: 'plan', name: 'plan', description: undefined } });
    expect(choices.choose('opus')).toMatchObject({ model: { id: 'opus' } });
    expect(choices.modeFor(modes, false)).toEqual({ choice: { mode: { id: 'plan', name: 'plan', description: undefined }, why: 'chosen in the editor' }, changed: true });
    expect(choices.modeFor(modes, false).changed).toBe(false);
    const again = new AgentChoices({ agent: 'claude-agent-acp', file, logger });
    expect(again.wantedMode()).toEqual({ mode: 'plan', source: 'chosen in the editor' });
    expect(again.wanted()).toEqual({ model: 'opus', source: 'chosen in the editor' });
    const fixed = new AgentChoices({ agent: 'claude-agent-acp', modeSettings: { task: 'acceptEdits' }, logger });
    fixed.offered(undefined, modes);
    expect(fixed.snapshot('Claude')).toMatchObject({ task_mode: 'acceptEdits', task_modes: [], mode_source: 'buckley.agent.modes.task' });
    expect(fixed.chooseMode('plan')).toEqual({ error: 'buckley.agent.modes.task puts tasks in "acceptEdits": change it there' });
  });

  it("puts one task in the mode its caller chose for it, held to the same rules, and leaves every other task's mode as it was", () => {
    const modes = modesOf({ modes: { currentModeId: 'default', availableModes: ['default', 'acceptEdits', 'plan', 'bypassPermissions'].map((id) => ({ id, name: id })) } })!;
    const choices = new AgentChoices({ agent: 'claude-agent-acp', logger });
    choices.offered(models, modes);
    expect(choices.modeFor(modes, false, 'plan').choice).toEqual({ mode: { id: 'plan', name: 'plan', description: undefined }, why: 'chosen for this task' });
    expect(choices.snapshot('Claude')).toMatchObject({ task_mode: 'default' });
    expect(choices.modeFor(modes, false).choice.mode?.id).toBe('default');
    // One that runs tools unasked is not taken: the task runs in the mode that asks first, and says why.
    expect(choices.modeFor(modes, false, 'bypassPermissions').choice).toEqual({ mode: { id: 'default', name: 'default', description: undefined }, why: '"bypassPermissions" (chosen for this task) runs tools unasked: Claude Code\'s mode that asks before changes' });
    // An ask stays read-only whatever the caller names.
    expect(choices.modeFor(modes, true, 'default').choice.mode?.id).toBe('plan');
  });
});
