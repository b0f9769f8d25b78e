-- The README's Neovim snippets as a user's init.lua (loaded with -u, `buckley-lsp` and `gemini`
-- on PATH): open a file, select lines with V, press <leader>a, pick "Buckley: explain this", read
-- the answer with K. With the module (BUCKLEY_README_SNIPPET=neovim-module) also: the statusline
-- it added shows a task's step, and :BuckleyLog opens the log.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')
local module = os.getenv('BUCKLEY_README_SNIPPET') == 'neovim-module'

local function keys(typed)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(typed, true, false, true), 'x', false)
end

local function buckley_client(bufnr)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(clients) do
    if client.name == 'buckley-lsp' then return client end
  end
end

local function floating_text()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
    end
  end
end

t.run(function()
  t.result.statusline_option = vim.o.statusline
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('BUCKLEY_FIXTURE')))
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(10000, function()
    local client = buckley_client(bufnr)
    return client ~= nil and client.initialized
  end, 20), 'the snippet did not start buckley-lsp for the file')
  t.step('started by the snippet')

  -- The code-action menu and (with the module) the approval prompt, answered as a user would.
  local offered, chosen = {}, nil
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == 'codeaction' or type(items[1]) == 'table' then
      local pick
      for i, item in ipairs(items) do
        local action = item.action or item[2] or item
        table.insert(offered, action.title)
        if action.title == chosen then pick = i end
      end
      if pick then t.step('chose ' .. chosen) end
      return on_choice(items[pick], pick)
    end
    t.result.statusline_shown = vim.api.nvim_eval_statusline(vim.o.statusline, { maxwidth = 200 }).str
    t.step('approval asked')
    on_choice('Approve', 1)
  end

  local first = vim.fn.search('export function backoff', 'w')
  local last = vim.fn.search('return 2 \\*\\* attempt', 'w')
  vim.api.nvim_win_set_cursor(0, { first, 0 })
  chosen = 'Buckley: explain this'
  keys('V' .. (last - first) .. 'j<leader>a')
  assert(vim.wait(10000, function() return #offered > 0 end, 20), 'no code actions were offered for the selection')
  t.result.offered = offered

  t.result.hover = t.wait_for_hover(bufnr, last - 1, 4, 'You asked:')
  t.step('answer in')
  -- With the plain init, Neovim 0.10 also opens the answer document beside the code: K comes
  -- after it (a window opening moves the focus, and a hover float closes when its buffer is left).
  if os.getenv('BUCKLEY_README_SNIPPET') == 'neovim-plain' and vim.fn.has('nvim-0.10') == 1 then
    assert(vim.wait(10000, function()
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)):match('%.md$') then return true end
      end
      return false
    end, 20), 'the answer document did not open')
  end
  -- K in normal mode, inside what was selected: the answer in a floating window.
  vim.api.nvim_set_current_win(vim.fn.bufwinid(bufnr))
  vim.api.nvim_win_set_cursor(0, { last, 4 })
  keys('K')
  assert(vim.wait(5000, function()
    local text = floating_text()
    return text ~= nil and text:find('You asked:', 1, true) ~= nil
  end, 20), 'K did not show the answer in a floating window')
  t.result.float = floating_text()
  t.step('K shows the answer')

  if module then
    -- A task, whose step the statusline shows while it waits for the approval.
    keys('<Esc>')
    offered = {}
    vim.api.nvim_win_set_cursor(0, { first, 0 })
    chosen = 'Buckley: fix problems here'
    keys('V' .. (last - first) .. 'j<leader>a')
    local buckley = require('buckley')
    assert(vim.wait(30000, function()
      for _, task in pairs(buckley._tasks) do
        if task.status == 'completed' then return true end
      end
      return false
    end, 50), 'the task did not complete')
    t.step('task completed')

    vim.cmd('BuckleyLog')
    assert(vim.wait(5000, function() return vim.api.nvim_buf_get_name(0):find('buckley%-lsp%.log$') ~= nil end, 20), ':BuckleyLog opened no log')
    t.result.log_lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    t.result.log_windows = #vim.api.nvim_list_wins()
    t.step('log opened')
  end
end)
