-- The Lua module (editors/neovim): :BuckleyAsk on a visual selection shows the answer in a
-- scratch split; :BuckleyTask runs a task whose approval is answered through vim.ui.select, with
-- progress in the statusline function and vim.notify, until it completes.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local buckley = t.start_module()

  local first, last = t.select_lines('export function backoff', 'return 2 \\*\\* attempt')
  vim.cmd("'<,'>BuckleyAsk What does backoff do?")
  assert(vim.wait(30000, function() return buckley.last_answer ~= nil end, 50), 'no answer')
  local answer_buf = buckley.last_answer.bufnr
  t.result.answer_lines = vim.api.nvim_buf_get_lines(answer_buf, 0, -1, false)
  t.result.answer_filetype = vim.bo[answer_buf].filetype
  t.step('answer in a scratch split')
  vim.cmd('close')

  -- The task's edit needs approval: answer it through vim.ui.select, as a picker would.
  vim.ui.select = function(items, opts, on_choice)
    t.result.approval = { prompt = opts.prompt, items = items, statusline = buckley.statusline() }
    t.step('approval asked through vim.ui.select')
    on_choice('Approve')
  end
  vim.cmd(first .. ',' .. last .. 'BuckleyTask Tidy this function')
  assert(vim.wait(30000, function()
    for _, task in pairs(buckley._tasks) do
      if task.status == 'completed' then
        t.result.task = task
        return true
      end
    end
    return false
  end, 50), 'the task did not complete')
  t.step('task completed')
  t.result.statusline_after = buckley.statusline()
  t.result.hover = t.wait_for_hover(vim.api.nvim_get_current_buf(), last - 1, 4, 'You asked: Tidy this function')
end)
