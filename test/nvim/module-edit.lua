-- The Lua module's :BuckleyEdit on selected lines: the agent's change is approved through
-- vim.ui.select and lands in the buffer; :BuckleyUndoEdits takes it back.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local buckley, bufnr = t.start_module()
  local before = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')

  vim.ui.select = function(items, opts, on_choice)
    t.result.approval = { prompt = opts.prompt, items = items }
    on_choice('Approve')
  end
  local first, last = t.select_lines('export function backoff', '^}$')
  vim.cmd(first .. ',' .. last .. 'BuckleyEdit say what it waits')
  local function text() return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') end
  assert(vim.wait(30000, function() return text():find('// say what it waits', 1, true) ~= nil end, 50), 'the edit never reached the buffer')
  t.step('edited')
  t.result.edited = text()
  t.result.before = before
  -- The task ends once the agent has answered: its edits can be undone from then on.
  assert(vim.wait(30000, function()
    for _, task in pairs(buckley._tasks) do
      if task.status == 'completed' then return true end
    end
    return false
  end, 50), 'the edit task did not complete')

  vim.cmd('BuckleyUndoEdits')
  assert(vim.wait(10000, function() return text() == before end, 50), 'the undo never reached the buffer')
  t.step('undone')
end)
