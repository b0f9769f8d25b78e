-- The agent's question in plain vim.lsp (0.10): the scripted agent asks the user to pick a flavour
-- (ACP elicitation/create) while it answers; Neovim's own prompt (window/showMessageRequest →
-- vim.ui.select) shows the question and its answers, the user picks "Chocolate", and the agent's
-- answer says what it got.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local bufnr, client_id = t.start()
  local client = vim.lsp.get_client_by_id(client_id)
  local previous = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    vim.ui.select = previous
    t.result.prompt = opts.prompt
    t.result.offered = {}
    for i, item in ipairs(items) do
      table.insert(t.result.offered, item.title)
      if item.title == 'Chocolate' then
        t.step('picked Chocolate')
        -- Answered later, as a person would: the server is not held up meanwhile.
        vim.schedule(function() on_choice(item, i) end)
      end
    end
  end
  local reply = client.request_sync('buckley/ask', { question = 'Which flavour suits this? ASK USER pick' }, 30000, bufnr)
  assert(reply and reply.result, 'no answer: ' .. vim.inspect(reply))
  t.result.answer = reply.result.answer
  t.step('answered')
end)
