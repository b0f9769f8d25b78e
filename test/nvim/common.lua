-- Shared by the headless Neovim scripts: result recording, starting buckley-lsp on the fixture,
-- selecting lines and choosing a code action through Neovim's own code-action UI.
local M = { result = { steps = {}, notifications = {} } }

function M.step(name)
  table.insert(M.result.steps, name)
  io.stderr:write('step: ' .. name .. '\n')
end

function M.finish(ok, err)
  M.result.ok = ok
  M.result.error = err
  local file = io.open(os.getenv('BUCKLEY_NVIM_RESULT'), 'w')
  file:write(vim.fn.json_encode(M.result))
  file:close()
  vim.cmd(ok and 'qall!' or 'cquit!')
end

-- Runs `body` and always writes the result and quits, whatever happens.
function M.run(body)
  local ok, err = pcall(function()
    local v = vim.version()
    M.result.nvim = v.major .. '.' .. v.minor .. '.' .. v.patch
    vim.notify = function(msg) table.insert(M.result.notifications, msg) end
    body()
  end)
  if ok then M.finish(true) else M.finish(false, tostring(err)) end
end

-- Opens the fixture and attaches a freshly started buckley-lsp; returns bufnr, client_id.
function M.start()
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
  M.step('initialized')
  return bufnr, client_id
end

-- Starts the Lua module of editors/neovim on the fixture; returns the module and the fixture's bufnr.
function M.start_module()
  vim.opt.runtimepath:append(os.getenv('BUCKLEY_REPO') .. '/editors/neovim')
  local buckley = require('buckley')
  buckley.setup({ cmd = { os.getenv('BUCKLEY_NODE'), os.getenv('BUCKLEY_BIN'), '--stdio' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('BUCKLEY_FIXTURE')))
  assert(vim.wait(10000, function()
    local c = buckley.client_id() and vim.lsp.get_client_by_id(buckley.client_id())
    return c ~= nil and c.initialized
  end, 20), 'the module did not start the server')
  M.step('started by the module')
  return buckley, vim.api.nvim_get_current_buf()
end

-- Selects whole lines (visual line mode) from the one matching `first` to the one matching `last`.
function M.select_lines(first_pattern, last_pattern)
  local first = vim.fn.search(first_pattern, 'w')
  local last = vim.fn.search(last_pattern, 'w')
  assert(first > 0 and last >= first, 'fixture lines not found')
  vim.cmd('normal! ' .. first .. 'GV' .. last .. 'G\27')
  M.step('selected lines ' .. first .. '-' .. last)
  return first, last
end

-- Asks for code actions on the selection and picks the one titled `title`, as a user would.
function M.choose_code_action(title, first, last)
  local offered = {}
  local previous = vim.ui.select
  vim.ui.select = function(items, _, on_choice)
    vim.ui.select = previous -- only the code-action menu is answered here
    local chosen
    for i, item in ipairs(items) do
      local action = item.action or item[2] or item
      table.insert(offered, action.title)
      if action.title == title then chosen = i end
    end
    if chosen then M.step('chose ' .. title) end
    on_choice(items[chosen], chosen)
  end
  if vim.lsp.buf.range_code_action then
    vim.lsp.buf.range_code_action()
  else
    -- (row, col) with 1-based rows: to the end of the last selected line.
    local last_line = vim.api.nvim_buf_get_lines(0, last - 1, last, false)[1] or ''
    vim.lsp.buf.code_action({ range = { start = { first, 0 }, ['end'] = { last, #last_line } } })
  end
  assert(vim.wait(10000, function() return #offered > 0 end, 20), 'no code actions were offered')
  M.result.offered = offered
end

-- The answer document Neovim opened (window/showDocument) once it holds the answer; `except`:
-- a buffer not to take (an earlier one); `pattern`: its file name (default: any answer).
function M.answer_buffer(except, pattern)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if b ~= except and name:find(pattern or 'buckley%-lsp/answers/.*%.md$') and vim.api.nvim_buf_line_count(b) > 1 then return b end
  end
end

-- Waits for the answer document to open, attaches buckley-lsp to it (as a config that starts it
-- for markdown buffers too would) and moves into its window; returns its bufnr.
function M.open_answer(client_id)
  assert(vim.wait(30000, function() return M.answer_buffer() ~= nil end, 50), 'the answer document was not opened')
  local doc = M.answer_buffer()
  M.step('answer document opened')
  vim.lsp.buf_attach_client(doc, client_id)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == doc then vim.api.nvim_set_current_win(win) end
  end
  return doc
end

-- Asks hover at (line, character) until its text contains `needle`; returns that text. (Not
-- nested in vim.wait: buf_request_sync waits itself, and 0.10 does not run a wait inside a wait.)
function M.wait_for_hover(bufnr, line, character, needle)
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = line, character = character } }
  local deadline = vim.loop.now() + 30000
  while vim.loop.now() < deadline do
    local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', params, 2000) or {}
    for _, response in pairs(responses) do
      local contents = response.result and response.result.contents
      if contents and contents.value and contents.value:find(needle, 1, true) then return contents.value end
    end
    vim.wait(50)
  end
  error('no hover containing ' .. needle)
end

return M
