/**
 * What the ACP face shows a client (src/acp/updates.ts, turn.ts): a tool call announced once and
 * then updated, a file's change as a finished edit with its diff, an approval as a permission
 * request with our risk in words, and a prompt's attached files as the editor context.
 */
import { describe, expect, it } from 'vitest';
import { permissionOf, ShownTools, statusLineOf, updatesOf } from '../../src/acp/updates.js';
import { requestOf } from '../../src/acp/turn.js';
import { taskEventSchema } from '../../src/wire/contract.js';
import * as z from '../../src/schema.js';
import type { ContentBlock } from '@agentclientprotocol/sdk';
import { imagesOf, MAX_PROMPT_IMAGE_BYTES } from '../../src/wire/images.js';
import { buildPrompt } from '../../src/wire/prompt.js';

const event = (fields: Record<string, unknown>) => z.parse(taskEventSchema, { task_id: 't', status: 'in_progress', ...fields });
const tool = (status: string, output = '') => ({ id: 'c1', tool: 'Read README.md', status, kind: 'read', input: '{"path":"README.md"}', output });

describe("the ACP face's updates", () => {
  it('announces a tool call once — its input as the value it was, not JSON text — then updates it only when it changed', () => {
    const tools = new ShownTools();
    expect(updatesOf(event({ tool_executions: [tool('in_progress')] }), tools)).toEqual([{ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Read README.md', kind: 'read', status: 'in_progress', rawInput: { path: 'README.md' } }]);
    expect(updatesOf(event({ tool_executions: [tool('in_progress')] }), tools)).toEqual([]);
    expect(updatesOf(event({ tool_executions: [tool('completed', '# read me')] }), tools)).toEqual([
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: '# read me' } }] },
    ]);
  });

  it("shows a file's change as a finished edit with its diff, and the thinking and plan as theirs", () => {
    const updates = updatesOf(event({ sequence: 7, thought_delta: 'hm', plan: { entries: [{ content: 'read', status: 'completed', priority: 'high' }] }, file_changed: { path: '/w/a.ts', before: 'a', after: 'b', unasked: true } }), new ShownTools());
    expect(updates).toEqual([
      { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hm' } },
      { sessionUpdate: 'plan', entries: [{ content: 'read', status: 'completed', priority: 'high' }] },
      { sessionUpdate: 'tool_call', toolCallId: 'change-7-/w/a.ts', title: 'Changed without asking /w/a.ts', kind: 'edit', status: 'completed', locations: [{ path: '/w/a.ts' }], content: [{ type: 'diff', path: '/w/a.ts', oldText: 'a', newText: 'b' }] },
    ]);
  });

  it('asks permission with the risk and its reason in words, and the diff where there is one', () => {
    const request = permissionOf('s1', { execution_id: 'e1', tool: 'Bash', title: 'rm -rf build', parameters: { command: 'rm -rf build' }, risk: 'destructive', reason: 'deletes recursively (rm -rf)', agent_id: 'a', kind: 'execute', locations: ['/w/build'], diff: '', lines_added: 0, lines_removed: 0, tool_call_id: '' });
    expect(request).toMatchObject({
      sessionId: 's1',
      toolCall: { toolCallId: 'e1', title: 'rm -rf build (destructive)', kind: 'execute', status: 'pending', content: [{ type: 'content', content: { type: 'text', text: 'destructive — deletes recursively (rm -rf)' } }], locations: [{ path: '/w/build' }] },
      options: [{ optionId: 'allow', kind: 'allow_once' }, { optionId: 'reject', kind: 'reject_once' }],
    });
  });

  it("shows the diff of a file that holds code fences (a README's ```) whole, in a block they cannot close", () => {
    const diff = '--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n ```sh\n-npm test\n+npm run test\n ```\n';
    const request = permissionOf('s1', { execution_id: 'e1', tool: 'Edit', title: 'Edit README.md', parameters: {}, risk: 'medium', reason: 'edits files', agent_id: 'a', kind: 'edit', locations: [], diff, lines_added: 1, lines_removed: 1, tool_call_id: '' });
    const shown = (request.toolCall.content![1] as { content: { text: string } }).content.text;
    expect(shown).toBe(['````diff', diff].join('\n') + '````');
  });

  it('asks permission on the call it is about, where the agent named it', () => {
    const request = permissionOf('s1', { execution_id: 'e1', tool: 'Edit', title: 'Edit a.ts', parameters: {}, risk: 'medium', reason: 'edits files', agent_id: 'a', kind: 'edit', locations: [], diff: '', lines_added: 0, lines_removed: 0, tool_call_id: 'call-7' });
    expect(request.toolCall.toolCallId).toBe('call-7');
  });

  it("makes the prompt's words the question and its attached files the context, in the session's workspace", () => {
    const { query, context } = requestOf(
      [
        { type: 'text', text: 'Why is this slow?' },
        { type: 'resource', resource: { uri: 'file:///w/src/a.ts', text: 'const a = 1;' } },
        { type: 'resource_link', uri: 'file:///w/notes.md', name: 'notes.md' },
      ],
      '/w',
    );
    expect(query).toBe('Why is this slow?\n(attached: file:///w/notes.md)');
    expect(context).toEqual({
      document: { uri: 'file:///w/src/a.ts', language_id: 'typescript', content: 'const a = 1;', version: 0, workspace_root: 'file:///w', metadata: {} },
      related_documents: [],
      symbols: [],
      metadata: { workspace_root: 'file:///w' },
    });
  });

  it("shows the coordinator's lines about the turn (queued, the agent silent) as thinking, once each, and no line an event carries something else for", () => {
    const tools = new ShownTools();
    const thought = (text: string) => [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text } }];
    const shown = (from: Parameters<typeof event>[0]) => {
      const line = statusLineOf(event(from));
      return [...(line ? tools.statusLine(line) : []), ...updatesOf(event(from), tools)];
    };
    expect(shown({ status: 'pending', message: 'Queued: 12 ahead' })).toEqual(thought('Queued: 12 ahead\n'));
    expect(shown({ status: 'pending', message: 'Queued: 12 ahead' })).toEqual([]);
    expect(shown({ message: 'No word from the agent for 30 s' })).toEqual(thought('No word from the agent for 30 s\n'));
    // Its tool call, its question, its final state: said by what they carry.
    expect(shown({ message: 'Reading', tool_executions: [tool('in_progress')] }).map((update) => update.sessionUpdate)).toEqual(['tool_call']);
    expect(shown({ message: 'Question: which?', question: { request_id: 'q', message: 'which?', options: ['a'] } })).toEqual([]);
    expect(shown({ status: 'completed', message: 'Done' })).toEqual([]);
  });

  it("carries a prompt's images to a coordinator that takes them, named in the prompt; says what it leaves out and why", () => {
    const png = Buffer.from('not really a png').toString('base64');
    const prompt: ContentBlock[] = [
      { type: 'text', text: 'What is wrong here?' },
      { type: 'image', mimeType: 'image/png', data: png, uri: 'file:///w/shot.png' },
      { type: 'resource', resource: { uri: 'file:///w/diagram.webp', mimeType: 'image/webp', blob: png } },
      { type: 'resource', resource: { uri: 'file:///w/data.bin', mimeType: 'application/octet-stream', blob: png } },
      { type: 'audio', mimeType: 'audio/wav', data: png },
    ];
    const taken = requestOf(prompt, '/w', true);
    expect(imagesOf(taken.context)).toEqual([
      { mimeType: 'image/png', data: png, uri: 'file:///w/shot.png' },
      { mimeType: 'image/webp', data: png, uri: 'file:///w/diagram.webp' },
    ]);
    expect(taken.leftOut).toEqual(['file:///w/data.bin left out: the agent is given text files and images, not this one\'s bytes', 'the audio left out: the agent is given text and images']);
    const text = buildPrompt(taken.query, taken.context, false);
    expect(text).toContain('Attached: shot.png, diagram.webp (2 images follow).');
    expect(text).not.toContain(png);
    // A coordinator that takes none (Buckley's own): nothing of them sent, the panel told.
    const refused = requestOf(prompt, '/w', false);
    expect(imagesOf(refused.context)).toEqual([]);
    expect(refused.leftOut).toContain('shot.png, diagram.webp left out: the coordinator behind takes no images');
    // Past the prompt's bound: the images that fit, in order; the rest said.
    const big = 'A'.repeat(MAX_PROMPT_IMAGE_BYTES - 10);
    const bounded = requestOf([{ type: 'text', text: 'look' }, { type: 'image', mimeType: 'image/png', data: big }, { type: 'image', mimeType: 'image/png', data: png }, { type: 'image', mimeType: 'image/png', data: big }], '/w', true);
    expect(imagesOf(bounded.context).map((image) => image.data.length)).toEqual([big.length]);
    expect(bounded.leftOut).toEqual(['2 image(s) left out: a prompt carries at most 20 MB of images']);
  });
});
