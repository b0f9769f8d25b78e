-- A conversation in plain vim.lsp (0.10: window/showDocument): "Buckley: explain this" opens the
-- answer document beside the code; the user writes a question below its last line and picks
-- "Buckley: follow up «…»" there; the answer is appended to that buffer (unsaved, undoable).
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local bufnr, client_id = t.start()
  local first, last = t.select_lines('export function backoff', 'return 2 \\*\\* attempt')
  t.choose_code_action('Buckley: explain this', first, last)

  local doc = t.open_answer(client_id)

  -- Below the answer's last line: the question.
  vim.api.nvim_buf_set_lines(doc, -1, -1, false, { 'RECALL what came before' })
  local line = vim.api.nvim_buf_line_count(doc)
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  t.choose_code_action('Buckley: follow up «RECALL what came before»', line, line)

  local function text() return table.concat(vim.api.nvim_buf_get_lines(doc, 0, -1, false), '\n') end
  assert(vim.wait(30000, function() return text():find('recall:', 1, true) ~= nil end, 50), 'the answer was not appended')
  t.step('answer appended')
  t.result.text = text()
  t.result.modified = vim.bo[doc].modified
  t.result.windows = #vim.api.nvim_list_wins()
  t.result.on_disk = table.concat(vim.fn.readfile(vim.api.nvim_buf_get_name(doc)), '\n')
  t.result.code_unchanged = not vim.bo[bufnr].modified
end)
