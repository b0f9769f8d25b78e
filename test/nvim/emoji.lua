-- A question in a comment whose code-action title must be shortened right where an emoji
-- sits: Neovim 0.7.2 rejects a whole response holding half a surrogate pair, so the menu only
-- appears if the title was cut between characters.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local bufnr = t.start()
  local question = '// ' .. string.rep('x', 48) .. '😀 and the 👨‍👩‍👧‍👦 family, why?'
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { question, 'const family = 4;' })
  local first, last = t.select_lines('^// x', '^const family')
  t.choose_code_action('Buckley: explain this', first, last)
  t.step('code actions offered')
  t.result.file_modified = vim.bo[bufnr].modified
end)
