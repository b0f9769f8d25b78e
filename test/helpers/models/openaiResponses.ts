/**
 * The OpenAI Responses API (POST …/responses), as Codex calls it: streamed as response.created,
 * output items (a message with its output_text deltas; function calls; custom tool calls for
 * freeform tools such as apply_patch, whose input is the patch; tools of a namespace, as Codex
 * offers MCP servers' tools, by their name and namespace), each added and done, then
 * response.completed with usage. Errors as OpenAI writes them.
 */
import type { ServerResponse } from 'node:http';
import { pieces, sse, startModel, stringsIn, type Dialect, type ModelServer, type Script } from './standIn.js';

export const openaiResponses: Dialect = {
  api: 'responses',
  accepts: (method, path) => method === 'POST' && /\/responses(\?|$)/.test(path),
  read(body) {
    const input: any[] = Array.isArray(body.input) ? body.input : [];
    const toolResults = input.filter((item) => item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output').map((item) => stringsIn(item.output).join('\n'));
    const first = input.find((item) => item?.type === 'message' && item.role === 'user');
    return {
      // A namespace (Codex's MCP servers) offers its tools as `<namespace>__<tool>`.
      tools: (body.tools ?? []).flatMap((tool: any) => (tool.type === 'namespace' ? (tool.tools ?? []).map((inner: any) => `${tool.name}__${inner.name}`) : [tool.name ?? tool.type])).filter(Boolean),
      texts: stringsIn([body.instructions, input]),
      toolResults,
      firstUserText: first ? stringsIn(first.content).join('\n') : '',
    };
  },
  write(res, reply, call, ids) {
    const responseId = `resp_${ids()}`;
    const events: { event: string; data: any }[] = [{ event: 'response.created', data: { type: 'response.created', response: { id: responseId, status: 'in_progress' } } }];
    let index = 0;
    if (reply.thinking) {
      const id = `rs_${ids()}`;
      const output_index = index++;
      const summary = [{ type: 'summary_text', text: reply.thinking }];
      events.push({ event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index, item: { type: 'reasoning', id, summary: [] } } });
      events.push({ event: 'response.reasoning_summary_part.added', data: { type: 'response.reasoning_summary_part.added', item_id: id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } } });
      events.push({ event: 'response.reasoning_summary_text.delta', data: { type: 'response.reasoning_summary_text.delta', item_id: id, output_index, summary_index: 0, delta: reply.thinking } });
      events.push({ event: 'response.reasoning_summary_text.done', data: { type: 'response.reasoning_summary_text.done', item_id: id, output_index, summary_index: 0, text: reply.thinking } });
      events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index, item: { type: 'reasoning', id, summary } } });
    }
    const text = pieces(reply.text);
    if (text.length) {
      const id = `msg_${ids()}`;
      const output_index = index++;
      events.push({ event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index, item: { type: 'message', id, role: 'assistant', status: 'in_progress', content: [] } } });
      for (const delta of text) events.push({ event: 'response.output_text.delta', data: { type: 'response.output_text.delta', item_id: id, output_index, content_index: 0, delta } });
      events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index, item: { type: 'message', id, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: text.join(''), annotations: [] }] } } });
    }
    const offered: any[] = call.body.tools ?? [];
    for (const tool of reply.tools ?? []) {
      const output_index = index++;
      const callId = `call_${ids()}`;
      const custom = offered.find((candidate) => (candidate.name ?? candidate.type) === tool.name)?.type === 'custom';
      // A namespaced tool is called by its own name, with the namespace beside it.
      const namespace = offered.find((candidate) => candidate.type === 'namespace' && tool.name.startsWith(`${candidate.name}__`))?.name;
      const named = namespace ? { name: tool.name.slice(namespace.length + 2), namespace } : { name: tool.name };
      const item = custom
        ? { type: 'custom_tool_call', id: `ctc_${callId}`, status: 'completed', call_id: callId, name: tool.name, input: String(tool.input.input ?? '') }
        : { type: 'function_call', id: `fc_${callId}`, status: 'completed', call_id: callId, ...named, arguments: JSON.stringify(tool.input) };
      events.push({ event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress' } } });
      events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index, item } });
    }
    const usage = { input_tokens: Math.ceil(call.raw.length / 4), input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: Math.ceil(call.raw.length / 4) + 10 };
    events.push({ event: 'response.completed', data: { type: 'response.completed', response: { id: responseId, status: 'completed', usage } } });
    sse(res, events);
  },
  writeError(res: ServerResponse, status: number, message: string) {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', code: status === 401 ? 'invalid_api_key' : null, param: null } }));
  },
  answerOther(req, res) {
    if (req.method === 'GET' && /\/models(\?|$)/.test(req.url ?? '')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [], models: [] }));
      return true;
    }
    return false;
  },
};

export const openaiResponsesModel = (script: Script, host?: string): Promise<ModelServer> => startModel(openaiResponses, script, host);
