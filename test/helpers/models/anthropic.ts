/**
 * The Anthropic Messages API (POST /v1/messages), as Claude Code calls it: streamed as
 * message_start, content blocks (text deltas, tool_use with input_json_delta), message_delta
 * with the stop reason, message_stop; or one JSON message when the request does not stream.
 * Errors as Anthropic writes them (`{"type":"error","error":{"type":"authentication_error",…}}`).
 */
import type { ServerResponse } from 'node:http';
import { pieces, sse, startModel, stringsIn, type Dialect, type ModelServer, type Reply, type Script } from './standIn.js';

const ERROR_TYPES: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 429: 'rate_limit_error', 529: 'overloaded_error' };

export const anthropic: Dialect = {
  api: 'anthropic',
  accepts: (method, path) => method === 'POST' && /^\/v1\/messages(\?|$)/.test(path),
  read(body) {
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    const toolResults: string[] = [];
    for (const message of messages) {
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (block?.type === 'tool_result') toolResults.push(stringsIn(block.content).join('\n'));
      }
    }
    const first = messages.find((message) => message.role === 'user');
    return {
      tools: (body.tools ?? []).map((tool: any) => tool.name).filter(Boolean),
      texts: stringsIn([body.system, messages]),
      toolResults,
      firstUserText: first ? stringsIn(first.content).join('\n') : '',
    };
  },
  write(res, reply, call, ids) {
    const id = ids();
    const blocks = [
      ...(reply.thinking !== undefined ? [{ kind: 'thinking' as const, pieces: [reply.thinking] }] : []),
      ...(reply.text !== undefined ? [{ kind: 'text' as const, pieces: pieces(reply.text) }] : []),
      ...(reply.tools ?? []).map((tool) => ({ kind: 'tool' as const, tool, id: `toolu_${id}_${ids()}` })),
    ];
    const stopReason = reply.tools?.length ? 'tool_use' : 'end_turn';
    const usage = { input_tokens: Math.ceil(call.raw.length / 4), output_tokens: 10 };
    const model = call.body.model ?? 'claude-sonnet-4-6';
    if (!call.body.stream) {
      const content = blocks.map((block) =>
        block.kind === 'text' ? { type: 'text', text: block.pieces.join('') } : block.kind === 'thinking' ? { type: 'thinking', thinking: block.pieces.join(''), signature: 'sig' } : { type: 'tool_use', id: block.id, name: block.tool.name, input: block.tool.input },
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `msg_${id}`, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage }));
      return;
    }
    const events: { event: string; data: unknown }[] = [
      { event: 'message_start', data: { type: 'message_start', message: { id: `msg_${id}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } } },
    ];
    blocks.forEach((block, index) => {
      if (block.kind === 'thinking') {
        events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } } });
        for (const thinking of block.pieces) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } } });
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'sig' } } });
      } else if (block.kind === 'text') {
        events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
        for (const text of block.pieces) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } } });
      } else {
        events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.tool.name, input: {} } } });
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.tool.input) } } });
      }
      events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    });
    events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 10 } } });
    events.push({ event: 'message_stop', data: { type: 'message_stop' } });
    sse(res, events);
  },
  writeError(res: ServerResponse, status: number, message: string) {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } }));
  },
  answerOther(req, res) {
    // Token counting: a rough count, as the real one's shape.
    if (req.method === 'POST' && req.url?.startsWith('/v1/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: 100 }));
      return true;
    }
    return false;
  },
};

export const anthropicModel = (script: Script, host?: string): Promise<ModelServer> => startModel(anthropic, script, host);
export type { Reply };
