-- The agent's own controls in plain vim.lsp (0.10), with the scripted agent offering two models
-- and two commands: "Buckley: explain this" opens the answer document; in it, "/re" completed
-- with the omnifunc (<C-x><C-o>) becomes "/review "; the code action "Buckley: choose model"
-- asks with Neovim's own prompt (vim.ui.select), the user picks "Deep Thought", and the next
-- answer comes from that model.
package.path = os.getenv('BUCKLEY_NVIM_DIR') .. '/?.lua;' .. package.path
local t = require('common')

-- Typed keys are read from Neovim's main loop, not inside vim.wait: the script runs in phases.
local state = {}
local deadline = vim.uv.now() + 60000

local function phase(body)
  local ok, err = pcall(body)
  if not ok then t.finish(false, tostring(err)) end
end

local v = vim.version()
t.result.nvim = v.major .. '.' .. v.minor .. '.' .. v.patch
vim.notify = function(msg) table.insert(t.result.notifications, msg) end
-- The server's messages, as Neovim shows them (0.10 writes them out, not through vim.notify).
state.shown = {}
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, result, ctx, config)
  table.insert(state.shown, result.message)
  return show_message(err, result, ctx, config)
end

local function choose_model()
  phase(function()
    local doc, bufnr, line = state.doc, state.bufnr, state.line
    -- The model, chosen in Neovim's own prompt (window/showMessageRequest → vim.ui.select).
    local prompted = {}
    local chose_code_action = false
    local previous = vim.ui.select
    vim.ui.select = function(items, opts, on_choice)
      if not chose_code_action then
        -- the code-action menu
        chose_code_action = true
        for i, item in ipairs(items) do
          local action = item.action or item[2] or item
          if action.title:find('^Buckley: choose model') then
            t.result.choose_title = action.title
            return on_choice(item, i)
          end
        end
        return on_choice(nil, nil)
      end
      vim.ui.select = previous
      t.result.prompt = opts.prompt
      for i, item in ipairs(items) do
        table.insert(prompted, item.title)
        if item.title == 'Deep Thought' then return on_choice(item, i) end
      end
      on_choice(nil, nil)
    end
    vim.lsp.buf.code_action({ range = { start = { line, 0 }, ['end'] = { line, 0 } } })
    assert(vim.wait(15000, function()
      for _, message in ipairs(state.shown) do
        if message:find('model: Deep Thought', 1, true) then return true end
      end
      return false
    end, 50), 'the choice was not confirmed: ' .. vim.inspect({ t.result.choose_title, t.result.prompt, prompted, state.shown }))
    t.result.confirmed = state.shown[#state.shown]
    t.result.prompted = prompted
    t.step('model chosen')

    -- The next answer: back in the code, "Buckley: find problems".
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_buf(win) == bufnr then vim.api.nvim_set_current_win(win) end
    end
    local first, last = t.select_lines('export function backoff', 'return 2 \\*\\* attempt')
    t.choose_code_action('Buckley: find problems', first, last)
    local function second() return t.answer_buffer(doc, 'buckley%-lsp/answers/.*find%-problems.*%.md$') end
    assert(vim.wait(30000, function() return second() ~= nil end, 50), 'the second answer was not opened')
    t.result.second_model = table.concat(vim.api.nvim_buf_get_lines(second(), 0, -1, false), '\n'):match('%[model (%w+)%]')
    t.step('answered by the chosen model')
    t.finish(true)
  end)
end

local function wait_normal()
  if vim.fn.mode() == 'n' then
    phase(function()
      t.result.completed_line = vim.api.nvim_buf_get_lines(state.doc, state.line - 1, state.line, false)[1]
      t.step('command completed')
    end)
    return vim.schedule(choose_model)
  end
  if vim.uv.now() > deadline then return t.finish(false, 'still in insert mode') end
  vim.defer_fn(wait_normal, 20)
end

local function wait_menu()
  if vim.fn.pumvisible() == 1 then
    t.result.completion_items = vim.tbl_map(function(item) return item.word end, vim.fn.complete_info({ 'items' }).items)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-y><Esc>', true, false, true), 'n', false)
    return vim.defer_fn(wait_normal, 20)
  end
  if vim.uv.now() > deadline then return t.finish(false, 'no completion menu (mode ' .. vim.fn.mode() .. ')') end
  vim.defer_fn(wait_menu, 20)
end

phase(function()
  local bufnr, client_id = t.start()
  local first, last = t.select_lines('export function backoff', 'return 2 \\*\\* attempt')
  t.choose_code_action('Buckley: explain this', first, last)

  local doc = t.open_answer(client_id)
  t.result.answer_model = table.concat(vim.api.nvim_buf_get_lines(doc, 0, -1, false), '\n'):match('%[model (%w+)%]')

  -- "/re" below the last line, completed as a user would: the omnifunc, then accept.
  vim.bo[doc].omnifunc = 'v:lua.vim.lsp.omnifunc'
  vim.opt.completeopt = { 'menuone', 'noinsert' }
  vim.api.nvim_buf_set_lines(doc, -1, -1, false, { '/re' })
  local line = vim.api.nvim_buf_line_count(doc)
  vim.api.nvim_win_set_cursor(0, { line, 3 })
  state.doc, state.bufnr, state.line = doc, bufnr, line
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('a<C-x><C-o>', true, false, true), 'n', false)
  vim.defer_fn(wait_menu, 20)
end)
