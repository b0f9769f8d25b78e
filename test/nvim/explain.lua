-- "Buckley: explain this" on selected lines, then the answer through hover, as a user would.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local bufnr = t.start()
  local first, last = t.select_lines('export function backoff', 'return 2 \\*\\* attempt')
  t.choose_code_action('Buckley: explain this', first, last)

  -- Wait for the answer, asking hover inside the selection until it has one.
  t.result.hover = t.wait_for_hover(bufnr, last - 1, 4, 'You asked:')
  t.step('answer on hover')
  -- Where window/showDocument is supported (0.10+), the answer document is opened: it is
  -- written in the background, so it may come a moment after hover has the answer.
  if vim.fn.has('nvim-0.10') == 1 then
    vim.wait(10000, function() return vim.api.nvim_buf_get_name(0):find('buckley%-lsp/answers/') ~= nil end, 20)
  end
  t.result.shown_buffer = vim.api.nvim_buf_get_name(0)
  t.result.shown_text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.api.nvim_set_current_buf(bufnr)

  -- And the real hover UI: a floating window showing the answer.
  vim.api.nvim_win_set_cursor(0, { last, 4 })
  vim.lsp.buf.hover()
  assert(vim.wait(5000, function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
        t.result.float = table.concat(lines, '\n')
        return t.result.float:find('You asked:', 1, true) ~= nil
      end
    end
    return false
  end, 20), 'hover did not open a floating window with the answer')
  t.step('hover window')
  t.result.file_unchanged = not vim.bo[bufnr].modified
end)
