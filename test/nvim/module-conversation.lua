-- The Lua module's conversations: :BuckleyAsk on a selection opens the answer split; :BuckleyAsk
-- in that split follows the conversation up (the same agent session) and appends the answer
-- there; :BuckleyConversations lists it.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local buckley = t.start_module()

  t.select_lines('export function backoff', 'return 2 \\*\\* attempt')
  vim.cmd("'<,'>BuckleyAsk What does backoff do?")
  assert(vim.wait(30000, function() return buckley.last_answer ~= nil end, 50), 'no answer')
  local answer_buf = buckley.last_answer.bufnr
  assert(vim.api.nvim_get_current_buf() == answer_buf, 'the answer split is not the current window')
  t.step('answered in a split')

  vim.cmd('BuckleyAsk RECALL what came before')
  local function text() return table.concat(vim.api.nvim_buf_get_lines(answer_buf, 0, -1, false), '\n') end
  assert(vim.wait(30000, function() return text():find('recall:', 1, true) ~= nil end, 50), 'the follow-up was not appended')
  t.step('followed up in the split')
  t.result.text = text()
  t.result.same_buffer = buckley.last_answer.bufnr == answer_buf
  t.result.windows = #vim.api.nvim_list_wins()

  vim.cmd('BuckleyConversations')
  assert(vim.wait(10000, function() return buckley.last_conversations ~= nil end, 50), 'no conversations listed')
  t.result.conversations = buckley.last_conversations
  t.result.listing = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
end)
