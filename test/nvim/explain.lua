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
  -- Where window/showDocument is supported (0.10+), the answer document opens in a window beside
  -- the code (written in the background, it may come a moment after hover has the answer).
  local function answer_window()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
      if name:find('buckley%-lsp/answers/') then return win end
    end
  end
  if vim.fn.has('nvim-0.10') == 1 then vim.wait(10000, function() return answer_window() ~= nil end, 20) end
  local shown = answer_window()
  if shown then
    local shown_buf = vim.api.nvim_win_get_buf(shown)
    t.result.shown_buffer = vim.api.nvim_buf_get_name(shown_buf)
    t.result.shown_text = table.concat(vim.api.nvim_buf_get_lines(shown_buf, 0, -1, false), '\n')
  end
  -- The code keeps the cursor: the current window still shows it.
  t.result.current_buffer = vim.api.nvim_buf_get_name(0)
  t.result.windows = #vim.api.nvim_list_wins()
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
