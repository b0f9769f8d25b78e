import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { initializeParamsProblems } from '../../src/bridge/initializeParams.js';
import { CLIENT_PAYLOADS } from '../helpers/paths.js';

describe("initialize's params", () => {
  it.each(readdirSync(CLIENT_PAYLOADS).filter((name) => name.endsWith('.json')))('takes what %s sends', (name) => {
    expect(initializeParamsProblems(JSON.parse(readFileSync(`${CLIENT_PAYLOADS}${name}`, 'utf8')))).toEqual([]);
  });

  it('takes the least LSP allows: capabilities alone, the rest null', () => {
    expect(initializeParamsProblems({ processId: null, rootUri: null, capabilities: {}, workspaceFolders: null, initializationOptions: null })).toEqual([]);
  });

  it.each([
    [null, 'params must be an object, not null'],
    [{ capabilities: null }, 'params.capabilities must be an object, not null'],
    [{}, 'params.capabilities is missing (an object)'],
    [{ capabilities: {}, rootUri: 5 }, 'params.rootUri must be a string, not a number'],
    [{ capabilities: {}, workspaceFolders: [{ uri: 'file:///a', name: 'a' }, { uri: [], name: 'b' }] }, 'params.workspaceFolders[1].uri must be a string, not a list'],
    [{ capabilities: {}, clientInfo: { name: null } }, 'params.clientInfo.name must be a string, not null'],
    [{ capabilities: {}, processId: 1.5 }, 'params.processId must be an integer, not a number'],
    [{ capabilities: {}, initializationOptions: 'x' }, 'params.initializationOptions must be an object, not a string'],
    [{ capabilities: { textDocument: { hover: { contentFormat: 'markdown' } } } }, 'params.capabilities.textDocument.hover.contentFormat must be a list, not a string'],
  ])('names the field of %j that is not as LSP says', (params, problem) => {
    expect(initializeParamsProblems(params)).toEqual([problem]);
  });
});
