-- buckley-lsp for Neovim (0.7.2 and later), no plugin manager required:
--
--   vim.opt.runtimepath:append('/path/to/buckley-lsp/editors/neovim')
--   require('buckley').setup({ settings = { agent = { command = { 'gemini', '--acp' } } } })
--
-- It starts buckley-lsp for every file buffer and opts in to the rich layer: `:BuckleyAsk` on a
-- visual selection (answer in a scratch markdown split; `:BuckleyAsk` in that split follows the
-- conversation up, the answer appended), `:BuckleyConversations`, `:BuckleyTask`, `:BuckleyEdit` (the
-- selected lines changed as told, after the diff is approved), `:BuckleyUndoEdits`, task progress through
-- vim.notify and `require('buckley').statusline()`, tool approvals through vim.ui.select,
-- `:BuckleyTasks`, `:BuckleyCancel`, `:BuckleyStatus`, `:BuckleyLog`; `K` for hover on Neovim
-- before 0.10 (which does not map it), and on request a visual-mode key for the code actions on
-- the selection and the task's step in your statusline. Without this module, plain vim.lsp still
-- gets everything through standard LSP (code actions, hover, progress, prompts).
local M = {}

local config = {
  cmd = { 'buckley-lsp', '--stdio' },
  -- buckley-lsp settings (see its README); sent as init_options and as workspace/configuration.
  settings = {},
  -- Filetypes to attach to; nil = every buffer with a file.
  filetypes = nil,
  -- How long :BuckleyAsk waits for an answer (the server has its own limit too).
  ask_timeout_ms = 180000,
  -- A visual-mode key for the code actions on the selected lines (e.g. '<leader>a'); nil: none.
  code_action_key = nil,
  -- Hover on this key in buffers buckley-lsp serves, on Neovim before 0.10 (0.10+ maps K itself),
  -- unless the key is mapped already; false: none.
  hover_key = 'K',
  -- Add the running task's step to your statusline (keeping what it shows); false: leave it.
  statusline = false,
}

local client_id
local tasks = {} -- taskId -> last $/buckley/taskProgress
local FINAL = { completed = true, failed = true, cancelled = true }

local function notify(message, level)
  vim.notify('Buckley: ' .. message, level or vim.log.levels.INFO)
end

local function client()
  return client_id and vim.lsp.get_client_by_id(client_id) or nil
end

-- Requests in the Neovim 0.7 style: client.request(method, params, handler, bufnr).
local function request(method, params, on_result, bufnr)
  local c = client()
  if not c then
    notify('buckley-lsp is not running', vim.log.levels.ERROR)
    return
  end
  c.request(method, params, function(err, result)
    if err then
      notify(method .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end, bufnr)
end

-- The selection of a command's range (:'<,'>) as an LSP range: whole lines.
local function range_of(opts)
  if not opts or opts.range == 0 then return nil end
  return { start = { line = opts.line1 - 1, character = 0 }, ['end'] = { line = opts.line2, character = 0 } }
end

-- A scratch markdown split holding `text`: a conversation (`:BuckleyAsk` in it follows it up).
local function show_answer(title, text, conversation)
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  local lines = vim.split('# ' .. title .. '\n\n' .. text, '\n', { plain = true })
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, 'buckley://answer/' .. buf)
  vim.b[buf].buckley_conversation = conversation
  M.last_answer = { title = title, text = text, bufnr = buf, conversation = conversation }
  return buf
end

-- A follow-up's answer, added to the end of its conversation's split.
local function append_answer(buf, question, text)
  if not vim.api.nvim_buf_is_valid(buf) then return show_answer(question, text) end
  local lines = vim.split('\n---\n\n## ' .. question .. '\n\n' .. text, '\n', { plain = true })
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, lines)
  vim.bo[buf].modifiable = false
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 }) end
  end
  M.last_answer = { title = question, text = text, bufnr = buf, conversation = vim.b[buf].buckley_conversation }
  return buf
end

--- Asks about the selection; in an answer split, follows up its conversation (the agent keeps
--- the history) and appends the answer there.
function M.ask(question, opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local conversation = vim.b[bufnr].buckley_conversation
  if conversation then
    notify('following up: ' .. question)
    request('buckley/ask', { question = question, conversation = conversation }, function(result)
      append_answer(bufnr, question, result.answer)
    end)
    return
  end
  local context = { activeFile = vim.uri_from_bufnr(bufnr), selection = range_of(opts) }
  notify('asking: ' .. question)
  request('buckley/ask', { question = question, context = context }, function(result)
    show_answer(question, result.answer, result.conversation)
  end, bufnr)
end

--- The conversations kept (newest first), in a scratch split: `:BuckleyAsk` there needs an answer split.
function M.conversations()
  request('workspace/executeCommand', { command = 'buckley.conversations', arguments = {} }, function(result)
    local lines = { '# Buckley conversations', '' }
    for _, c in ipairs(result.conversations or {}) do
      table.insert(lines, ('- %s — %d turn(s), %s%s'):format(c.title, c.turns, c.updated, c.document and ('\n  ' .. vim.uri_to_fname(c.document)) or ''))
    end
    vim.cmd('botright new')
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'wipe'
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(table.concat(lines, '\n'), '\n', { plain = true }))
    vim.bo[buf].modifiable = false
    M.last_conversations = result.conversations
  end)
end

function M.task(text, opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local context = { activeFile = vim.uri_from_bufnr(bufnr), selection = range_of(opts) }
  request('buckley/executeTask', { task = text, context = context }, function(result)
    tasks[result.taskId] = tasks[result.taskId] or { taskId = result.taskId, status = 'pending', title = text }
    tasks[result.taskId].title = text
  end, bufnr)
end

--- Edits the selected lines as told: the agent's change is shown as a diff and made when approved.
function M.edit(instruction, opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local range = range_of(opts)
  if not range then return notify(':BuckleyEdit needs lines: select them, or give a range') end
  request('workspace/executeCommand', { command = 'buckley.edit', arguments = { { instruction = instruction, uri = vim.uri_from_bufnr(bufnr), range = range } } }, function(result)
    if result and result.taskId then
      tasks[result.taskId] = tasks[result.taskId] or { taskId = result.taskId, status = 'pending', title = 'Edit: ' .. instruction }
    end
  end, bufnr)
end

--- Undoes the edits of the newest task that changed files (or of `task_id`).
function M.undo_edits(task_id)
  local args = (task_id and task_id ~= '') and { { taskId = task_id } } or {}
  request('workspace/executeCommand', { command = 'buckley.undoTaskEdits', arguments = args })
end

function M.cancel(task_id)
  if not task_id or task_id == '' then
    for id, task in pairs(tasks) do
      if not FINAL[task.status] then task_id = id end
    end
  end
  if not task_id then return notify('no running task') end
  request('buckley/cancelTask', { taskId = task_id }, function(result)
    notify(result.cancelled and 'cancelling the task' or 'that task had already ended')
  end)
end

--- Running tasks, one line each.
function M.tasks()
  local lines = {}
  for id, task in pairs(tasks) do
    if not FINAL[task.status] then
      table.insert(lines, string.format('%s  %s  %s%s', id:sub(1, 8), task.status, task.message or '', task.progress and (' (' .. task.progress .. '%)') or ''))
    end
  end
  return lines
end

--- For the statusline: the newest running task's step, e.g. "Buckley: Reading files (33%)".
function M.statusline()
  local running, last = 0, nil
  for _, task in pairs(tasks) do
    if not FINAL[task.status] then
      running = running + 1
      last = task
    end
  end
  if running == 0 then return '' end
  local text = 'Buckley: ' .. (last.message or last.status)
  if last.progress then text = text .. ' (' .. last.progress .. '%)' end
  if running > 1 then text = text .. ' +' .. (running - 1) end
  return text
end

--- The code actions for the selected lines, from visual mode (a mapping keeps the selection that
--- typing `:lua vim.lsp.buf.code_action()` would drop).
function M.code_action()
  local first, last = vim.fn.line('v'), vim.fn.line('.')
  if first > last then first, last = last, first end
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Esc>', true, false, true), 'nx', false)
  local last_line = vim.api.nvim_buf_get_lines(0, last - 1, last, false)[1] or ''
  if vim.fn.has('nvim-0.10') == 0 and vim.lsp.buf.range_code_action then
    vim.lsp.buf.range_code_action(nil, { first, 0 }, { last, #last_line })
  else
    vim.lsp.buf.code_action({ range = { start = { first, 0 }, ['end'] = { last, #last_line } } })
  end
end

-- Neovim's own statusline ('statusline' empty), as `:help 'statusline'` spells it out.
local DEFAULT_STATUSLINE = '%<%f %h%m%r%=%-14.(%l,%c%V%) %P'

--- Adds the running task's step to the statusline, keeping what it shows: before its right-aligned
--- part (after the first `%=`), or at its end.
function M.add_to_statusline()
  local current = vim.o.statusline ~= '' and vim.o.statusline or DEFAULT_STATUSLINE
  local part = "%{v:lua.require'buckley'.statusline()} "
  if current:find(part, 1, true) then return end
  local at = current:find('%=', 1, true)
  vim.o.statusline = at and (current:sub(1, at + 1) .. part .. current:sub(at + 2)) or (current .. ' ' .. part)
end

local handlers = {}

handlers['$/buckley/taskProgress'] = function(_, params)
  local previous = tasks[params.taskId]
  params.title = previous and previous.title or params.title
  tasks[params.taskId] = params
  if FINAL[params.status] and not (previous and FINAL[previous.status]) then
    local level = params.status == 'failed' and vim.log.levels.ERROR or vim.log.levels.INFO
    notify(string.format('task %s%s', params.status, params.message and (': ' .. params.message) or ''), level)
  elseif params.status == 'awaiting_approval' and not (previous and previous.status == 'awaiting_approval') then
    notify(params.message or 'a task waits for your approval', vim.log.levels.WARN)
  end
  vim.cmd('redrawstatus')
end

local APPROVE, TRUST, DENY = 'Approve', 'Approve & trust', 'Deny'

-- buckley/approveTool: exactly what will run, its risk and the agent, through vim.ui.select.
handlers['buckley/approveTool'] = function(_, params)
  local shown = params.parameters.command and ('run `' .. params.parameters.command .. '`') or ('use ' .. params.tool)
  local why = params.reason and params.reason ~= '' and (' — ' .. params.reason) or ''
  -- A task's approvals come one at a time; with more waiting, the prompt says so and can decide them together.
  local many = type(params.waiting) == 'number' and params.waiting > 1
  local position = many and string.format(' (1 of %d)', params.waiting) or ''
  local prompt = string.format('Buckley%s: %s wants to %s (risk: %s%s). %s', position, params.agent.id, shown, params.risk, why, vim.inspect(params.parameters, { newline = ' ', indent = '' }))
  local choices = params.risk == 'destructive' and { APPROVE, DENY } or { APPROVE, TRUST, DENY }
  local approve_all = many and type(params.batch) == 'string' and ('Approve all ' .. params.batch .. ' of this task') or nil
  local deny_all = many and string.format('Deny all %d waiting', params.waiting) or nil
  if approve_all then table.insert(choices, approve_all) end
  if deny_all then table.insert(choices, deny_all) end
  local answer
  local co = coroutine.running()
  vim.ui.select(choices, { prompt = prompt }, function(choice)
    local for_task = choice ~= nil and (choice == approve_all or choice == deny_all)
    answer = { approved = choice == APPROVE or choice == TRUST or (for_task and choice == approve_all), remember = choice == TRUST, forTask = for_task or nil }
    if co and coroutine.status(co) == 'suspended' then coroutine.resume(co) end
  end)
  if not answer and co and coroutine.isyieldable() then coroutine.yield() end
  if not answer then
    -- An asynchronous vim.ui.select outside a coroutine (Neovim < 0.10): decide in the editor's
    -- code actions instead; this prompt counts as no approval.
    notify('approve with the code action instead (this vim.ui.select is asynchronous)', vim.log.levels.WARN)
    return { approved = false }
  end
  return answer
end

-- buckley/askText: the agent's question that needs a typed answer, through vim.ui.input. Nothing
-- typed (dismissed, <Esc>) declines it.
handlers['buckley/askText'] = function(_, params)
  local answer, done = nil, false
  local co = coroutine.running()
  vim.ui.input({ prompt = string.format('Buckley: %s (%s): ', params.message, params.input) }, function(text)
    answer, done = text, true
    if co and coroutine.status(co) == 'suspended' then coroutine.resume(co) end
  end)
  if not done and co and coroutine.isyieldable() then coroutine.yield() end
  if answer == nil then return vim.NIL end
  return { text = answer }
end

-- Answers workspace/configuration with the settings given to setup().
handlers['workspace/configuration'] = function(_, params)
  local result = {}
  for i, item in ipairs(params.items or {}) do
    result[i] = (item.section == 'buckley' and config.settings) or vim.NIL
  end
  return result
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = vim.tbl_extend('force', caps.experimental or {}, { buckley = { taskProgress = true, approveTool = true, askText = true } })
  return caps
end

local function attach(bufnr)
  if vim.bo[bufnr].buftype ~= '' or vim.api.nvim_buf_get_name(bufnr) == '' then return end
  if config.filetypes and not vim.tbl_contains(config.filetypes, vim.bo[bufnr].filetype) then return end
  if not client() then
    -- Answers go to the scratch split; don't also open them as documents.
    local init_options = vim.tbl_deep_extend('keep', vim.deepcopy(config.settings), { answers = { showDocument = false } })
    local client_config = {
      name = 'buckley-lsp',
      cmd = config.cmd,
      root_dir = vim.fn.getcwd(),
      capabilities = capabilities(),
      init_options = init_options,
      handlers = handlers,
    }
    -- vim.lsp.start_client is deprecated from 0.11 on; vim.lsp.start (0.10's signature) replaces it.
    if vim.fn.has('nvim-0.10') == 1 then
      client_id = vim.lsp.start(client_config, { bufnr = bufnr })
    else
      client_id = vim.lsp.start_client(client_config)
    end
  end
  if client_id then
    vim.lsp.buf_attach_client(bufnr, client_id)
    if config.hover_key and vim.fn.has('nvim-0.10') == 0 and vim.fn.maparg(config.hover_key, 'n') == '' then
      vim.keymap.set('n', config.hover_key, vim.lsp.buf.hover, { buffer = bufnr, desc = 'LSP hover (buckley-lsp)' })
    end
  end
end

function M.setup(opts)
  config = vim.tbl_deep_extend('force', config, opts or {})
  if config.code_action_key then
    vim.keymap.set('x', config.code_action_key, M.code_action, { desc = 'Code actions on the selection (buckley-lsp)' })
  end
  if config.statusline then M.add_to_statusline() end
  local group = vim.api.nvim_create_augroup('buckley', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, { group = group, callback = function(args) attach(args.buf) end })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then attach(bufnr) end
  end

  vim.api.nvim_create_user_command('BuckleyAsk', function(o) M.ask(o.args, o) end, { nargs = '+', range = true, desc = 'Ask Buckley about the selection (in an answer split: follow it up)' })
  vim.api.nvim_create_user_command('BuckleyConversations', function() M.conversations() end, { nargs = 0, desc = "List Buckley's conversations" })
  vim.api.nvim_create_user_command('BuckleyTask', function(o) M.task(o.args, o) end, { nargs = '+', range = true, desc = 'Run a Buckley task on the selection' })
  vim.api.nvim_create_user_command('BuckleyEdit', function(o) M.edit(o.args, o) end, { nargs = '+', range = true, desc = 'Have Buckley edit the selected lines as told' })
  vim.api.nvim_create_user_command('BuckleyUndoEdits', function(o) M.undo_edits(o.args) end, { nargs = '?', desc = "Undo the newest Buckley task's edits" })
  vim.api.nvim_create_user_command('BuckleyCancel', function(o) M.cancel(o.args) end, { nargs = '?', desc = 'Cancel a Buckley task (default: the newest)' })
  vim.api.nvim_create_user_command('BuckleyTasks', function()
    local lines = M.tasks()
    notify(#lines == 0 and 'no running tasks' or table.concat(lines, '\n'))
  end, { desc = 'List running Buckley tasks' })
  vim.api.nvim_create_user_command('BuckleyStatus', function()
    request('buckley/status', {}, function(status)
      notify(string.format('coordinator %s at %s: %s%s', status.coordinator.mode, status.coordinator.address or '?', status.coordinator.state, status.coordinator.error and (' (' .. status.coordinator.error .. ')') or ''))
    end)
  end, { desc = 'Show the Buckley coordinator status' })
  vim.api.nvim_create_user_command('BuckleyLog', function()
    request('buckley/status', {}, function(status)
      if not status.server.log then return notify('no log file: BUCKLEY_LOG_FILE or --log-file is off') end
      vim.cmd('botright split ' .. vim.fn.fnameescape(status.server.log))
    end)
  end, { desc = "Open buckley-lsp's log file" })
end

M._tasks = tasks
function M.client_id() return client_id end

return M
