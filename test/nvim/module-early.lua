-- The Lua module: :BuckleyAsk typed the moment Neovim opens the file, while buckley-lsp is still
-- starting: the ask reaches the server before Neovim has told it the file is open (didOpen follows
-- `initialized`), so the server reads the file from disk.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  vim.opt.runtimepath:append(os.getenv('BUCKLEY_REPO') .. '/editors/neovim')
  local buckley = require('buckley')
  buckley.setup({ cmd = { os.getenv('BUCKLEY_NODE'), os.getenv('BUCKLEY_BIN'), '--stdio' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('BUCKLEY_FIXTURE')))
  local c = vim.lsp.get_client_by_id(buckley.client_id())
  assert(c and not c.initialized, 'the server was up before the ask: nothing of the start is tested')
  t.select_lines('export function backoff', 'return 2 \\*\\* attempt')
  vim.cmd("'<,'>BuckleyAsk What does backoff do?")
  t.step('asked while the server started')
  assert(vim.wait(30000, function() return buckley.last_answer ~= nil end, 50), 'no answer: ' .. vim.inspect(t.result.notifications))
  t.result.answer_lines = vim.api.nvim_buf_get_lines(buckley.last_answer.bufnr, 0, -1, false)
  t.step('answered')
end)
