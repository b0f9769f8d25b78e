/**
 * OpenAI chat completions (POST …/chat/completions), as Qwen Code calls it through
 * OPENAI_BASE_URL: streamed as chat.completion.chunk deltas — the content in pieces, tool calls
 * as `tool_calls` deltas (their arguments in one piece), then the finish reason and usage, then
 * `[DONE]`; or one JSON completion when the request does not stream.
 */
import type { ServerResponse } from 'node:http';
import { pieces, sse, startModel, stringsIn, type Dialect, type ModelServer, type Script } from './standIn.js';

export const openaiChat: Dialect = {
  api: 'chat',
  accepts: (method, path) => method === 'POST' && /\/chat\/completions(\?|$)/.test(path),
  read(body) {
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    const first = messages.find((message) => message?.role === 'user');
    return {
      tools: (body.tools ?? []).map((tool: any) => tool.function?.name).filter(Boolean),
      texts: stringsIn(messages),
      toolResults: messages.filter((message) => message?.role === 'tool').map((message) => stringsIn(message.content).join('\n')),
      firstUserText: first ? stringsIn(first.content).join('\n') : '',
    };
  },
  write(res, reply, call, ids) {
    const id = `chatcmpl-${ids()}`;
    const model = call.body.model ?? 'qwen3-coder';
    const created = Math.floor(Date.now() / 1000);
    const toolCalls = (reply.tools ?? []).map((tool, index) => ({ index, id: `call_${ids()}`, type: 'function', function: { name: tool.name, arguments: JSON.stringify(tool.input) } }));
    const finish = toolCalls.length ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: Math.ceil(call.raw.length / 4), completion_tokens: 10, total_tokens: Math.ceil(call.raw.length / 4) + 10 };
    if (!call.body.stream) {
      const message = { role: 'assistant', content: pieces(reply.text).join('') || null, ...(toolCalls.length ? { tool_calls: toolCalls.map(({ index: _index, ...rest }) => rest) } : {}) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
      return;
    }
    const chunk = (delta: object, finish_reason: string | null = null, extra: object = {}) => ({ data: { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }], ...extra } });
    sse(
      res,
      [chunk({ role: 'assistant', content: '' }), ...(reply.thinking ? [chunk({ reasoning_content: reply.thinking })] : []), ...pieces(reply.text).map((content) => chunk({ content })), ...toolCalls.map((toolCall) => chunk({ tool_calls: [toolCall] })), chunk({}, finish, { usage })],
      'data: [DONE]\n\n',
    );
  },
  writeError(res: ServerResponse, status: number, message: string) {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', code: status === 401 ? 'invalid_api_key' : null, param: null } }));
  },
  answerOther(req, res) {
    if (req.method === 'GET' && /\/models(\?|$)/.test(req.url ?? '')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'qwen3-coder', object: 'model' }] }));
      return true;
    }
    return false;
  },
};

export const openaiChatModel = (script: Script, host?: string): Promise<ModelServer> => startModel(openaiChat, script, host);
