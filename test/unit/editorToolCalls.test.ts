/**
 * A call of buckley-lsp's own editor tools is a low-risk read, whatever the agent names it; a
 * call that only looks like one (another server's, more in its input, a write) is judged as the
 * agent says it is.
 */
import { describe, expect, it } from 'vitest';
import type { PermissionRequest } from '../../src/coordinator/agents/driver.js';
import { assessCall } from '../../src/coordinator/turnRules.js';

const call = (tool: string, input: unknown, more: Partial<PermissionRequest> = {}): PermissionRequest => ({ tool, title: tool, kind: 'other', parameters: {}, input, locations: [], writes: [], ...more });

describe('calls of the editor tools', () => {
  it.each([
    ['Claude Code', 'mcp__buckley-editor__read_file'],
    ['Codex', 'mcp__buckley_editor.read_file'],
    ['Gemini CLI', 'read_file (buckley-editor MCP Server)'],
    ['Qwen Code', 'mcp__buckley-editor__open_files'],
  ])('are low-risk reads as %s names them', (_, name) => {
    expect(assessCall(call(name, { path: 'src/a.ts', line: 3 }), '/work/project').risk).toBe('low');
  });

  it('are judged as any other call when they only look like ours', () => {
    const judged = (request: PermissionRequest) => assessCall(request, '/work/project').risk;
    expect(judged(call('mcp__buckley-editorial__read_file', { path: 'a.ts' }))).not.toBe('low');
    expect(judged(call('mcp__other__read_file', { path: 'a.ts' }))).not.toBe('low');
    expect(judged(call('mcp__buckley-editor__read_file', { path: 'a.ts', command: 'rm -rf /' }))).not.toBe('low');
    expect(judged(call('mcp__buckley-editor__remove_file', { path: 'a.ts' }))).not.toBe('low');
    expect(judged(call('mcp__buckley-editor__read_file', { path: 'a.ts' }, { writes: ['/work/project/a.ts'] }))).not.toBe('low');
  });
});
