/**
 * Gemini's API (POST /v1beta/models/{model}:streamGenerateContent?alt=sse, :generateContent,
 * :countTokens), as Gemini CLI calls it through GOOGLE_GEMINI_BASE_URL: streamed as
 * GenerateContentResponse chunks, one part each (text, or a functionCall), the last with
 * finishReason STOP and usage. Gemini CLI's own JSON side queries (is the model or the user to
 * speak next, which model to route to) get the answer that lets the turn end: the user speaks.
 * Errors as Google writes them (`{"error":{"code":401,"status":"UNAUTHENTICATED",…}}`).
 */
import type { ServerResponse } from 'node:http';
import { pieces, sse, startModel, stringsIn, type Dialect, type ModelServer, type Script } from './standIn.js';

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

/** A JSON side query: an answer of the schema's shape. */
function jsonAnswer(schema: any): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  for (const [name, property] of Object.entries<any>(schema?.properties ?? {})) {
    if (name === 'next_speaker') answer[name] = 'user';
    else if (name === 'model_choice') answer[name] = property.enum?.[0] ?? 'flash';
    else if (property.enum) answer[name] = property.enum[0];
    else answer[name] = property.type === 'boolean' ? false : property.type === 'number' || property.type === 'integer' ? 0 : property.type === 'array' ? [] : 'ok';
  }
  return answer;
}

const usage = (call: { raw: string }) => ({ promptTokenCount: Math.ceil(call.raw.length / 4), candidatesTokenCount: 10, totalTokenCount: Math.ceil(call.raw.length / 4) + 10 });

export const gemini: Dialect = {
  api: 'gemini',
  accepts: (method, path) => method === 'POST' && /\/models\/[^/:]+:(streamGenerateContent|generateContent)(\?|$)/.test(path),
  read(body) {
    const contents: any[] = Array.isArray(body.contents) ? body.contents : [];
    const toolResults: string[] = [];
    for (const content of contents) {
      for (const part of content?.parts ?? []) if (part?.functionResponse) toolResults.push(stringsIn(part.functionResponse.response).join('\n'));
    }
    const first = contents.find((content) => content?.role === 'user');
    const schema = body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema;
    return {
      // A JSON side query offers no tools, whatever the request carries.
      tools: schema ? [] : (body.tools ?? []).flatMap((tool: any) => (tool.functionDeclarations ?? []).map((declaration: any) => declaration.name)),
      texts: stringsIn([body.systemInstruction, contents]),
      toolResults,
      firstUserText: first ? stringsIn(first.parts).join('\n') : '',
    };
  },
  write(res, reply, call) {
    const schema = call.body.generationConfig?.responseJsonSchema ?? call.body.generationConfig?.responseSchema;
    const parts: any[] = schema ? [{ text: JSON.stringify(jsonAnswer(schema)) }] : [...(reply.thinking ? [{ text: reply.thinking, thought: true }] : []), ...pieces(reply.text).map((text) => ({ text })), ...(reply.tools ?? []).map((tool) => ({ functionCall: { name: tool.name, args: tool.input } }))];
    if (parts.length === 0) parts.push({ text: '' });
    const modelVersion = /models\/([^/:]+)/.exec(call.path)?.[1] ?? 'gemini-2.5-pro';
    if (!call.path.includes(':streamGenerateContent')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: usage(call), modelVersion }));
      return;
    }
    sse(
      res,
      parts.map((part, index) => ({
        data: { candidates: [{ content: { role: 'model', parts: [part] }, index: 0, ...(index === parts.length - 1 ? { finishReason: 'STOP' } : {}) }], ...(index === parts.length - 1 ? { usageMetadata: usage(call) } : {}), modelVersion },
      })),
    );
  },
  writeError(res: ServerResponse, status: number, message: string) {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: status, message, status: STATUS[status] ?? 'UNKNOWN' } }));
  },
  answerOther(req, res) {
    if (req.method === 'POST' && /:countTokens(\?|$)/.test(req.url ?? '')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ totalTokens: 100 }));
      return true;
    }
    return false;
  },
};

export const geminiModel = (script: Script, host?: string): Promise<ModelServer> => startModel(gemini, script, host);
