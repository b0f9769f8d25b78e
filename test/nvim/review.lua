-- Review per change in plain vim.lsp (0.10): a task (BUCKLEY_WRITE_TASK, the scripted agent's
-- WRITE) changes two lines of the open buffer, approved in Neovim's prompt; each change shows as a
-- diagnostic; "Buckley: undo this change" on one (Neovim's code-action menu) takes it back in the
-- buffer, "Buckley: keep this change" on the other keeps it, and the marks are gone.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local bufnr, client_id = t.start()
  vim.ui.select = function(items, _, on_choice)
    for _, item in ipairs(items) do
      if item.title == 'Approve' then return on_choice(item) end
    end
    on_choice(nil)
  end
  local function marks()
    local found = {}
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.source == 'buckley' then table.insert(found, d.lnum) end
    end
    table.sort(found)
    return found
  end
  local function line(n) return vim.api.nvim_buf_get_lines(bufnr, n, n + 1, false)[1] end

  vim.lsp.get_client_by_id(client_id).request('workspace/executeCommand', { command = 'buckley.runTask', arguments = { { task = os.getenv('BUCKLEY_WRITE_TASK') } } }, function() end, bufnr)
  assert(vim.wait(30000, function() return #marks() == 2 end, 50), 'the changes were not marked')
  local marked = marks()
  t.result.marked = { line(marked[1]), line(marked[2]) }
  t.step('changes marked')

  t.choose_code_action('Buckley: undo this change (+1 −1)', marked[2] + 1, marked[2] + 1)
  assert(vim.wait(15000, function() return #marks() == 1 end, 50), 'the change was not undone')
  t.result.undone_line = line(marked[2])
  t.step('one change undone')

  t.choose_code_action('Buckley: keep this change (+1 −1)', marked[1] + 1, marked[1] + 1)
  assert(vim.wait(15000, function() return #marks() == 0 end, 50), 'the change was not kept')
  t.result.kept_line = line(marked[1])
  t.result.modified = vim.bo[bufnr].modified
  t.step('the other kept')
end)
