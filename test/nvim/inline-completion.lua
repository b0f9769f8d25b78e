-- Inline completions in Neovim 0.12 (vim.lsp.inline_completion, LSP 3.18), set up with the
-- README's snippet: in insert mode at the end of `return `, the model's completion appears as
-- virtual text, and <Tab> (the snippet's mapping) accepts it into the buffer.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

local bufnr, client_id
local ok, err = pcall(function()
  local v = vim.version()
  t.result.nvim = v.major .. '.' .. v.minor .. '.' .. v.patch
  local file = os.getenv('BUCKLEY_FIXTURE')
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  vim.bo.filetype = 'typescript'
  bufnr = vim.api.nvim_get_current_buf()
  client_id = vim.lsp.start({
    name = 'buckley-lsp',
    cmd = { os.getenv('BUCKLEY_NODE'), os.getenv('BUCKLEY_BIN'), '--stdio' },
    root_dir = vim.fn.fnamemodify(file, ':h'),
    init_options = {
      agent = { driver = 'openai', openai = { baseUrl = os.getenv('BUCKLEY_MODEL_URL') .. '/v1', model = 'coder' } },
    },
  }, { bufnr = bufnr })
  assert(vim.wait(10000, function()
    local client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized
  end, 20), 'the server did not initialize')
  t.step('initialized')
  t.result.provider = vim.lsp.get_client_by_id(client_id).server_capabilities.inlineCompletionProvider ~= nil
  dofile(os.getenv('BUCKLEY_README_INIT'))
  t.result.enabled = vim.lsp.inline_completion.is_enabled({ bufnr = bufnr })
  local row = vim.fn.search('return $', 'w')
  assert(row > 0, 'no `return ` line in the fixture')
end)
if not ok then return t.finish(false, tostring(err)) end

-- The rest runs from Neovim's main loop, in insert mode: the completion is shown only there.
local namespace = vim.api.nvim_create_namespace('nvim.lsp.inline_completion')
local deadline = vim.uv.now() + 30000
local function line() return vim.api.nvim_get_current_line() end

local function wait_accepted()
  if line():find(t.result.virtual_text, 1, true) then
    t.result.line = line()
    t.result.mode = vim.api.nvim_get_mode().mode
    t.step('accepted')
    return t.finish(true)
  end
  if vim.uv.now() > deadline then return t.finish(false, 'the completion was not accepted: ' .. line()) end
  vim.defer_fn(wait_accepted, 20)
end

local function wait_shown()
  local ok_poll, poll_err = pcall(function()
    local marks = vim.api.nvim_buf_get_extmarks(bufnr, namespace, 0, -1, { details = true })
    if #marks > 0 then
      t.result.virtual_text = marks[1][4].virt_text[1][1]
      t.result.line_while_shown = line()
      t.step('shown as virtual text')
      -- <Tab>, typed: through the mapping, as a user presses it.
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Tab>', true, false, true), 'm', false)
      return vim.defer_fn(wait_accepted, 20)
    end
    if vim.uv.now() > deadline then return t.finish(false, 'no inline completion was shown (mode ' .. vim.api.nvim_get_mode().mode .. ')') end
    vim.defer_fn(wait_shown, 20)
  end)
  if not ok_poll then t.finish(false, tostring(poll_err)) end
end

vim.api.nvim_feedkeys('A', 'n', false)
vim.defer_fn(wait_shown, 20)
