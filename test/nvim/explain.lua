-- Drives a real headless Neovim (0.7.2 from Debian, or newer): starts buckley-lsp, opens a
-- fixture, selects lines, runs the range code action "Buckley: explain this" through Neovim's
-- own code-action UI, waits for the answer and reads it back through hover, as a user would.
-- Writes what it saw as JSON to $BUCKLEY_NVIM_RESULT, then quits.
local result = { steps = {}, notifications = {} }
local function step(name) table.insert(result.steps, name) end
local function finish(ok, err)
  result.ok = ok
  result.error = err
  local file = io.open(os.getenv('BUCKLEY_NVIM_RESULT'), 'w')
  file:write(vim.fn.json_encode(result))
  file:close()
  vim.cmd(ok and 'qall!' or 'cquit!')
end

local ok, err = pcall(function()
  result.nvim = vim.version().major .. '.' .. vim.version().minor .. '.' .. vim.version().patch
  vim.notify = function(msg) table.insert(result.notifications, msg) end

  local fixture = os.getenv('BUCKLEY_FIXTURE')
  vim.cmd('edit ' .. vim.fn.fnameescape(fixture))
  vim.bo.filetype = 'typescript'
  local bufnr = vim.api.nvim_get_current_buf()

  local client_id = vim.lsp.start_client({
    name = 'buckley-lsp',
    cmd = { os.getenv('BUCKLEY_NODE'), os.getenv('BUCKLEY_BIN'), '--stdio' },
    root_dir = vim.fn.fnamemodify(fixture, ':h'),
  })
  assert(client_id, 'start_client failed')
  vim.lsp.buf_attach_client(bufnr, client_id)
  assert(vim.wait(10000, function()
    local client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized
  end, 20), 'the server did not initialize')
  step('initialized')

  -- Select from the line declaring backoff through its return statement (visual line mode).
  local first = vim.fn.search('export function backoff', 'w')
  local last = vim.fn.search('return 2 \\*\\* attempt', 'w')
  assert(first > 0 and last >= first, 'fixture lines not found')
  vim.cmd('normal! ' .. first .. 'GV' .. last .. 'G\27')
  step('selected lines ' .. first .. '-' .. last)

  -- Neovim's code-action menu goes through vim.ui.select: choose as a user would.
  local offered = {}
  vim.ui.select = function(items, opts, on_choice)
    local chosen
    for i, item in ipairs(items) do
      local action = item.action or item[2] or item
      table.insert(offered, action.title)
      if action.title == 'Buckley: explain this' then chosen = i end
    end
    if chosen then step('chose Buckley: explain this') end
    on_choice(items[chosen], chosen)
  end
  if vim.lsp.buf.range_code_action then
    vim.lsp.buf.range_code_action()
  else
    vim.lsp.buf.code_action({ range = { start = { first, 0 }, ['end'] = { last, 0 } } })
  end
  assert(vim.wait(10000, function() return #offered > 0 end, 20), 'no code actions were offered')
  result.offered = offered

  -- Wait for the answer, asking hover inside the selection until it has one.
  local hover_text
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = last - 1, character = 4 } }
  assert(vim.wait(30000, function()
    local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', params, 2000) or {}
    for _, response in pairs(responses) do
      local contents = response.result and response.result.contents
      if contents and contents.value and contents.value:find('You asked:', 1, true) then
        hover_text = contents.value
        return true
      end
    end
    return false
  end, 100), 'no answer on hover')
  result.hover = hover_text
  step('answer on hover')

  -- And the real hover UI: a floating window showing the answer.
  vim.api.nvim_win_set_cursor(0, { last, 4 })
  vim.lsp.buf.hover()
  assert(vim.wait(5000, function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
        result.float = table.concat(lines, '\n')
        return result.float:find('You asked:', 1, true) ~= nil
      end
    end
    return false
  end, 20), 'hover did not open a floating window with the answer')
  step('hover window')

  result.file_unchanged = not vim.bo[bufnr].modified
end)

if ok then finish(true) else finish(false, tostring(err)) end
