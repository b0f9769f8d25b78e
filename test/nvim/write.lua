-- An agent's write lands in the open buffer: the user types a line of their own (unsaved), runs a
-- task whose agent replaces text in the file, approves it in Neovim's own prompt; the buffer gets
-- the agent's change next to the user's line, the disk keeps the file as it was, and `u` takes the
-- agent's change back and leaves the user's line.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local bufnr = t.start()
  local path = vim.api.nvim_buf_get_name(bufnr)
  local on_disk = table.concat(vim.fn.readfile(path), '\n')

  -- The user's own unsaved edit, an undo step of its own.
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '// mine, unsaved' })
  vim.cmd('let &undolevels = &undolevels')
  t.step('typed a line')

  -- The approval comes as window/showMessageRequest: inputlist() on 0.7, vim.ui.select on 0.10+.
  vim.fn.inputlist = function(lines)
    t.result.prompt = lines[1]
    for _, line in ipairs(lines) do
      if line:match('^%d+%. Approve$') then return tonumber(line:match('^(%d+)')) end
    end
    return 0
  end
  vim.ui.select = function(items, opts, on_choice)
    t.result.prompt = opts.prompt
    for _, item in ipairs(items) do
      if item.title == 'Approve' then return on_choice(item) end
    end
    on_choice(nil)
  end

  local task = ('REPLACE %s "tries = 3" "tries = 5"'):format(path)
  vim.lsp.buf_request(bufnr, 'workspace/executeCommand', { command = 'buckley.runTask', arguments = { { task = task } } }, function() end)
  local function text() return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') end
  assert(vim.wait(30000, function() return text():find('tries = 5', 1, true) ~= nil end, 50), 'the agent change never reached the buffer')
  t.step('the agent changed the buffer')

  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  t.result.first_line = lines[1]
  t.result.changed_line = vim.fn.matchstr(text(), '[^\n]*tries = 5[^\n]*')
  t.result.same_as_disk_but_the_two_lines = text() == '// mine, unsaved\n' .. on_disk:gsub('tries = 3', 'tries = 5', 1)
  t.result.modified = vim.bo[bufnr].modified
  t.result.disk_unchanged = table.concat(vim.fn.readfile(path), '\n') == on_disk
  -- The diff opened for review (0.10: window/showDocument, written and shown beside the prompt,
  -- so it may come a moment after the approval was answered).
  local function diff_buffer()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):match('%.diff$') and vim.api.nvim_buf_line_count(b) > 1 then return b end
    end
  end
  if vim.fn.has('nvim-0.10') == 1 then vim.wait(10000, function() return diff_buffer() ~= nil end, 20) end
  local diff = diff_buffer()
  if diff then t.result.diff_opened = table.concat(vim.api.nvim_buf_get_lines(diff, 0, -1, false), '\n') end

  -- Undo in the editor takes back the agent's change, and only it.
  vim.api.nvim_buf_call(bufnr, function() vim.cmd('silent undo') end)
  t.result.after_undo_first_line = vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1]
  t.result.after_undo_has_agent_change = text():find('tries = 5', 1, true) ~= nil
  t.result.after_undo_has_original = text():find('tries = 3', 1, true) ~= nil
  t.step('undone')
end)
