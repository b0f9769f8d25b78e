-- "Buckley: fix problems here" on selected lines; the task's $/progress reaches Neovim's own
-- progress machinery (User LspProgressUpdate on 0.7, LspProgress on 0.10+) until it ends.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

t.run(function()
  local bufnr, client_id = t.start()
  local seen = {}
  local ended
  local function record(value)
    if value and value.title then
      table.insert(seen, { title = value.title, message = value.message, done = value.done == true or value.kind == 'end' })
      if value.done or value.kind == 'end' then ended = value end
    end
  end
  if vim.fn.exists('##LspProgress') == 1 then
    vim.api.nvim_create_autocmd('LspProgress', { callback = function(args) record(args.data and args.data.params and args.data.params.value) end })
  else
    vim.api.nvim_create_autocmd('User', {
      pattern = 'LspProgressUpdate',
      callback = function()
        for _, message in ipairs(vim.lsp.util.get_progress_messages()) do record(message) end
      end,
    })
  end

  -- The agent asks to edit a file: Neovim shows window/showMessageRequest with inputlist() (0.7)
  -- or vim.ui.select (0.10+); answer it as the user would, choosing "Approve".
  vim.fn.inputlist = function(lines)
    t.result.prompt = { message = lines[1], actions = vim.list_slice(lines, 3) }
    for _, line in ipairs(lines) do
      if line:match('^%d+%. Approve$') then
        t.step('approved in the prompt')
        return tonumber(line:match('^(%d+)')) or 0
      end
    end
    return 0
  end
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for i, item in ipairs(items) do titles[i] = i .. '. ' .. item.title end
    t.result.prompt = { message = opts.prompt:gsub(': $', ''), actions = titles }
    for _, item in ipairs(items) do
      if item.title == 'Approve' then
        t.step('approved in the prompt')
        return on_choice(item)
      end
    end
    on_choice(nil)
  end

  local first, last = t.select_lines('export function backoff', 'return 2 \\*\\* attempt')
  t.choose_code_action('Buckley: fix problems here', first, last)
  assert(vim.wait(30000, function() return ended ~= nil end, 50), 'the task progress never ended')
  t.step('progress ended')

  -- The agent's answer (delivered like an ask's) says what it was allowed to do.
  t.result.hover = t.wait_for_hover(bufnr, last - 1, 4, 'permission to edit')
  t.result.progress = seen
  t.result.file_unchanged = not vim.bo[bufnr].modified
  t.result.client_alive = vim.lsp.get_client_by_id(client_id) ~= nil
end)
