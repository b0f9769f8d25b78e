-- The Lua module (editors/neovim): the agent's question that needs a typed answer (ACP
-- elicitation, one text field) comes through vim.ui.input; the name typed reaches the agent.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local buckley = t.start_module()
  vim.ui.input = function(opts, on_confirm)
    t.result.prompt = opts.prompt
    t.step('asked through vim.ui.input')
    on_confirm('Ada Lovelace')
  end
  t.select_lines('export function backoff', 'return 2 \\*\\* attempt')
  vim.cmd("'<,'>BuckleyAsk Who wrote this? ASK USER text")
  assert(vim.wait(30000, function() return buckley.last_answer ~= nil end, 50), 'no answer')
  t.result.answer_lines = vim.api.nvim_buf_get_lines(buckley.last_answer.bufnr, 0, -1, false)
  t.step('answered')
end)
