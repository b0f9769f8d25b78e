-- The agent's editor tools see Neovim's buffer as the user has it: a line typed and not saved is
-- in read_file's text and open_files marks the file; after :write (Neovim sends didSave) the mark
-- is gone. The scripted agent calls buckley-lsp's editor MCP server itself (EDITOR TOOLS).
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local bufnr, client_id = t.start()
  local client = vim.lsp.get_client_by_id(client_id)
  local function ask()
    local reply = client.request_sync('buckley/ask', { question = 'EDITOR TOOLS retry.ts' }, 30000, bufnr)
    assert(reply and reply.result, 'no answer: ' .. vim.inspect(reply))
    return reply.result.answer
  end
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '// typed in Neovim, not saved' })
  t.result.unsaved = ask()
  t.step('asked with an unsaved line')
  vim.cmd('write')
  t.result.saved = ask()
  t.step('asked after :write')
end)
