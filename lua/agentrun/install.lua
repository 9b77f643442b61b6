-- Installs the backend binary: the release binary of the plugin's VERSION
-- for this OS and architecture, downloaded with curl or wget and checked
-- against the release's checksums.txt (sha256); or, when the download
-- fails, built from the plugin's source with Go. Whatever is installed
-- was first written to a temporary file next to the binary, checked (its
-- checksum, and that it runs and says the expected version) and then
-- renamed over it: the binary is never half-written, never unverified.
-- Used by build.lua (lazy.nvim's build step), :AgentBuild and the health
-- check.
-- Why this file is long: installing a binary safely is several steps each
-- with its own failure to explain: download, checksum, build from source,
-- the version check and the rename.
local M = {}

-- default_url is where releases are downloaded from: <url>/v<VERSION>/<asset>.
M.default_url = "https://github.com/agentrun/agentrun.nvim/releases/download"

local binary = require("agentrun.binary")
local uv = require("agentrun.compat").uv

-- release_url is g:agentrun_release_url when set (a mirror, or the
-- tests' local server), else default_url.
function M.release_url()
  local g = vim.g.agentrun_release_url
  if type(g) == "string" and g ~= "" then
    return (g:gsub("/+$", ""))
  end
  return M.default_url
end

-- dest is the binary the plugin runs (binary.bin()) and where it is installed.
function M.dest()
  return binary.bin()
end

-- source_file keeps how the binary got there ("downloaded URL sha256 …").
function M.source_file()
  return M.dest() .. ".source"
end

-- platform returns the release's name for this machine ("linux-amd64"),
-- or nil and why there is none.
function M.platform()
  local u = uv.os_uname()
  local os_name = ({ Linux = "linux", Darwin = "darwin" })[u.sysname]
  local arch = ({ x86_64 = "amd64", amd64 = "amd64", aarch64 = "arm64", arm64 = "arm64" })[u.machine]
  if not os_name or not arch then
    local hint = u.sysname:match("Windows") and " (native Windows is not supported; agentrun runs in WSL)" or ""
    return nil, string.format("there is no release binary for %s on %s (releases: Linux and macOS on amd64 and arm64)%s", u.sysname, u.machine, hint)
  end
  return os_name .. "-" .. arch
end

local function executable(name)
  return vim.fn.executable(name) == 1
end

-- async holds the coroutines of installs that wait for their commands
-- without blocking Neovim (:AgentBuild); others (build.lua) block.
local async = setmetatable({}, { __mode = "k" })

local busy = false

-- resume continues an install's coroutine; one that fails with a Lua
-- error is reported, never left hanging.
local function resume(co, ...)
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    busy = false
    require("agentrun.util").notify("the install failed: " .. tostring(err), vim.log.levels.ERROR)
  end
end

-- job runs argv as a job and yields the coroutine until it ends;
-- on_line (if given) is called with each whole line of its stderr as it
-- comes.
local function job(argv, on_line)
  local co = coroutine.running()
  local streams = { stdout = { "" }, stderr = { "" } }
  -- A chunk's first item continues the previous chunk's last line.
  local function collect(_, data, name)
    local buf = streams[name]
    buf[#buf] = buf[#buf] .. (data[1] or "")
    for i = 2, #data do
      if on_line and name == "stderr" then
        on_line(buf[#buf])
      end
      table.insert(buf, data[i])
    end
  end
  local ran, id = pcall(vim.fn.jobstart, argv, {
    on_stdout = collect,
    on_stderr = collect,
    on_exit = function(_, code)
      vim.schedule(function()
        resume(co, code)
      end)
    end,
  })
  if not ran or id <= 0 then
    return false, string.format("%s cannot run: %s", argv[1], tostring(id)), -1
  end
  local code = coroutine.yield()
  local out = table.concat(streams.stdout, "\n") .. "\n" .. table.concat(streams.stderr, "\n")
  return code == 0, vim.trim(out), code
end

-- system runs argv (no shell) and returns ok, its output trimmed, the
-- exit code. A command that cannot run is not ok (0.7.2's system()
-- raises an error for it). on_line is job's (in an install that waits
-- without blocking Neovim; else never called).
local function system(argv, on_line)
  local co = coroutine.running()
  if co and async[co] then
    return job(argv, on_line)
  end
  local ran, out = pcall(vim.fn.system, argv)
  if not ran then
    return false, string.format("%s cannot run: %s", argv[1], tostring(out)), -1
  end
  return vim.v.shell_error == 0, vim.trim(out or ""), vim.v.shell_error
end

local function remove(path)
  if path and uv.fs_stat(path) then
    os.remove(path)
  end
end

-- fetch downloads url to file with curl or wget; ok, or false and why.
local function fetch(url, file)
  local argv, tool
  if executable("curl") then
    tool = "curl"
    argv = { "curl", "--fail", "--silent", "--show-error", "--location", "--connect-timeout", "20", "--max-time", "600", "--output", file, url }
  elseif executable("wget") then
    tool = "wget"
    argv = { "wget", "--no-verbose", "--timeout=20", "--tries=2", "--output-document=" .. file, url }
  else
    return false, "neither curl nor wget is installed"
  end
  local ok, out, code = system(argv)
  if not ok then
    remove(file)
    out = out:gsub("%s*\n%s*", "; ")
    return false, string.format("%s could not download %s (%s)", tool, url, out ~= "" and out or ("exit code " .. code))
  end
  return true
end

-- sha256 returns the hex sha256 of file (sha256sum, shasum or openssl),
-- or nil and why.
function M.sha256(file)
  for _, h in ipairs({
    { "sha256sum", file },
    { "shasum", "-a", "256", file },
    { "openssl", "dgst", "-sha256", "-r", file },
  }) do
    if executable(h[1]) then
      local ok, out = system(h)
      local hex = ok and out:match("^(%x+)")
      if hex and #hex == 64 then
        return hex:lower()
      end
      return nil, string.format("%s could not hash %s: %s", h[1], file, out)
    end
  end
  return nil, "none of sha256sum, shasum or openssl is installed to check the download"
end

-- checksum_of finds asset's sha256 in checksums.txt's lines.
local function checksum_of(lines, asset)
  for _, line in ipairs(lines) do
    local hex, name = line:match("^(%x+)%s+%*?(%S+)%s*$")
    if name == asset and #hex == 64 then
      return hex:lower()
    end
  end
end

-- version_of runs bin version; its output, or nil and why.
local function version_of(bin)
  local ok, out = system({ bin, "version" })
  if not ok then
    return nil, string.format("%s does not run here (%s)", bin, out)
  end
  return out
end

local function write_atomic(path, text)
  local tmp = path .. ".tmp" .. vim.fn.getpid()
  local f = io.open(tmp, "w")
  if not f then
    return false
  end
  f:write(text)
  f:close()
  return uv.fs_rename(tmp, path)
end

-- place checks the new binary tmp (it runs and says want) and renames it
-- over dest; ok, or false and why (tmp is removed).
local function place(tmp, dest, want, source)
  uv.fs_chmod(tmp, 493) -- 0755
  local have, why = version_of(tmp)
  if not have then
    remove(tmp)
    return false, why
  end
  if have ~= want then
    remove(tmp)
    return false, string.format("it says it is version %s, not the plugin's %s", have, want)
  end
  local ok, err = uv.fs_rename(tmp, dest)
  if not ok then
    remove(tmp)
    return false, string.format("could not move it to %s: %s", dest, tostring(err))
  end
  write_atomic(M.source_file(), source .. "\n")
  return true
end

-- temp_for returns the temporary file an install writes before it is
-- checked and renamed to dest: next to it (a rename within one file
-- system is atomic), named after this Neovim's pid. Those an install
-- left when its Neovim died are removed.
local function temp_for(dest)
  local dir = vim.fn.fnamemodify(dest, ":h")
  vim.fn.mkdir(dir, "p")
  for _, f in ipairs(vim.fn.glob(dir .. "/.agentrun-install-*", true, true)) do
    local pid = tonumber(f:match("%.agentrun%-install%-(%d+)[^/]*$"))
    if pid and pid ~= vim.fn.getpid() and uv.kill(pid, 0) ~= 0 then
      os.remove(f)
    end
  end
  return dir .. "/.agentrun-install-" .. vim.fn.getpid()
end

-- download installs the release binary; it returns ok, and else why
-- and whether it was refused (a checksum or version that does not
-- match: something is wrong with the release, so no fallback) rather
-- than not found or not fetched.
function M.download(want, step)
  local asset, why = M.platform()
  if not asset then
    return false, why
  end
  asset = "agentrun-" .. asset
  local base = string.format("%s/v%s/", M.release_url(), want)
  if step then
    step(string.format("downloading %s %s …", asset, want))
  end
  local dest = M.dest()
  local tmp = temp_for(dest)
  local sums = tmp .. ".sums"
  local ok, err = fetch(base .. "checksums.txt", sums)
  if not ok then
    return false, err
  end
  local expected = checksum_of(vim.fn.readfile(sums), asset)
  remove(sums)
  if not expected then
    return false, string.format("the release v%s has no %s (not in its checksums.txt)", want, asset)
  end
  ok, err = fetch(base .. asset, tmp)
  if not ok then
    return false, err
  end
  local got, herr = M.sha256(tmp)
  if not got then
    remove(tmp)
    return false, herr, true
  end
  if got ~= expected then
    remove(tmp)
    return false, string.format("the download of %s has sha256 %s, but the release's checksums.txt says %s: refused, nothing was installed", base .. asset, got, expected), true
  end
  ok, err = place(tmp, dest, want, string.format("downloaded %s sha256:%s", base .. asset, got))
  if not ok then
    return false, string.format("the downloaded %s was refused: %s", asset, err), true
  end
  return true, string.format("downloaded the release binary %s for %s from %s (sha256 checked) to %s", want, asset:sub(10), base, dest)
end

-- go_version returns Go's version ("1.25.3") and the one go.mod needs, or
-- nil and why it cannot build.
local function go_version()
  if not executable("go") then
    return nil, "Go is not installed"
  end
  local ok, out = system({ "go", "env", "GOVERSION" })
  local have = ok and out:match("^go(%d+%.%d+[%.%d]*)")
  local need
  for _, line in ipairs(vim.fn.readfile(binary.root .. "/go.mod")) do
    need = need or line:match("^go%s+(%d+%.%d+[%.%d]*)")
  end
  if not have then
    return nil, "go env GOVERSION did not say a version (" .. out .. ")"
  end
  local function parts(v)
    local t = {}
    for n in v:gmatch("%d+") do
      table.insert(t, tonumber(n))
    end
    return t
  end
  local a, b = parts(have), parts(need or "0")
  for i = 1, 3 do
    if (a[i] or 0) ~= (b[i] or 0) then
      if (a[i] or 0) < (b[i] or 0) then
        return nil, string.format("Go %s is older than the %s go.mod needs", have, need)
      end
      break
    end
  end
  return have
end

-- build builds the binary from the plugin's source with Go; step (if
-- given) is told it starts, and then, as go build -v names each package
-- it compiles, how many it compiled (step(what, "N packages")); because says
-- why (the download failed).
function M.build(want, step, because)
  local gov, why = go_version()
  if not gov then
    return false, why
  end
  -- (one line at 80 columns beside 'showcmd': 57 after "(agentrun) ";
  -- 3.5 minutes on a loaded 2-core machine with Go's cache cold)
  local what = string.format("%sbuilding with Go %s (1 to 5 minutes) …", because and (because .. ": ") or "", gov)
  if step then
    step(what)
  end
  local dest = M.dest()
  local tmp = temp_for(dest)
  -- go build -v names each package it compiles (none it had in its
  -- cache), one a line on stderr: the build's progress, left out of what
  -- a failed build says
  local compiled, n = {}, 0
  local function on_line(line)
    if line:match("^[%w%._%-/]+$") and not compiled[line] then
      compiled[line], n = true, n + 1
      if step then
        step(what, string.format("%d package%s", n, n == 1 and "" or "s"))
      end
    end
  end
  local ok, out = system({ "go", "-C", binary.root, "build", "-v", "-ldflags", "-X main.version=" .. want .. " -X main.origin=build", "-o", tmp, "." }, on_line)
  if not ok then
    remove(tmp)
    local said = {}
    for _, line in ipairs(vim.split(out, "\n", { plain = true })) do
      if not line:match("^[%w%._%-/]+$") then
        table.insert(said, line)
      end
    end
    return false, "go build failed: " .. vim.trim(table.concat(said, "\n"))
  end
  local placed, err = place(tmp, dest, want, "built with go" .. gov)
  if not placed then
    return false, "the binary Go built was refused: " .. err
  end
  return true, string.format("built the binary %s with Go %s to %s", want, gov, dest)
end

-- run installs the binary by method: "auto" (the default: download, and
-- build with Go when the download fails), "download" or "go". It returns
-- ok and a sentence saying what it did (and why), or what went wrong and
-- what to do. step, when given, is told each step as it starts (what is
-- downloaded from where, or built with which Go, and why), and how a
-- build goes on (step(what, progress)).
function M.run(method, step)
  method = method or "auto"
  local want = binary.expected_version()
  if not want or want == "" then
    return false, "the plugin has no VERSION file at " .. binary.root .. ": reinstall it"
  end
  if method == "go" then
    local ok, msg = M.build(want, step)
    if not ok then
      return false, "could not build the binary: " .. msg .. "; install Go (see go.mod's go line) or run :AgentBuild download"
    end
    return true, msg
  end
  local ok, msg, refused = M.download(want, step)
  if ok then
    return true, msg
  end
  if refused then
    return false, msg
  elseif method == "download" then
    return false, "the download failed: " .. msg
  end
  local built, bmsg = M.build(want, step, "no download")
  if built then
    return true, bmsg .. ", because the download failed: " .. msg
  end
  return false, string.format("nothing was installed: the download failed (%s) and building failed (%s); install curl or wget and try :AgentBuild again, or install Go and run :AgentBuild go", msg, bmsg)
end

-- resay_ms is how often :AgentBuild says again the step under way, with
-- the time it has taken.
M.resay_ms = 1000

-- methods are :AgentBuild's arguments.
M.methods = { "auto", "download", "go" }

-- command is :AgentBuild [method]: the install runs in the background
-- (Neovim stays usable while it downloads or builds) and says how it
-- ended.
function M.command(arg)
  local util = require("agentrun.util")
  arg = vim.trim(arg or "")
  if arg == "" then
    arg = "auto"
  end
  if not vim.tbl_contains(M.methods, arg) then
    util.notify({ string.format(":AgentBuild takes auto, download or go, not %q", arg), ":AgentBuild takes auto/download/go" }, vim.log.levels.ERROR)
    return
  end
  if busy then
    util.notify({ "an install is already under way; its result will be shown when it ends", "an install is already under way" }, vim.log.levels.WARN)
    return
  end
  busy = true
  -- The step under way, said again every second while it lasts with the
  -- time it has taken and its progress ("building with Go 1.24 … 1:30,
  -- 87 packages"): a build can take minutes on a loaded machine,
  -- and what else Neovim says meanwhile (vim.pack's own messages as it
  -- installs the plugin that runs this) would leave the command line
  -- blank or another's for all of it.
  local current, since, progress = nil, nil, nil
  local function show(what, keep)
    local took = ""
    if since then
      local secs = math.floor((uv.now() - since) / 1000)
      took = string.format(" %d:%02d", math.floor(secs / 60), secs % 60) .. (progress and (", " .. progress) or "")
    end
    -- one line: a longer message stops at Neovim's "Press ENTER" right
    -- here, and the install with it; the time and progress in sight, the
    -- step without its estimate (the time shows now), cut before them
    local room = util.room() - #took
    if took ~= "" and util.width(what) > room then
      what = what:gsub(" %b()", "")
    end
    vim.api.nvim_echo({ { "(agentrun) " .. util.fit(what, math.max(room, 20)) .. took } }, keep, {})
  end
  local timer = uv.new_timer()
  local function stop()
    if not timer:is_closing() then
      timer:stop()
      timer:close()
    end
  end
  timer:start(M.resay_ms, M.resay_ms, vim.schedule_wrap(function()
    if not busy then
      return stop() -- ended (or failed with a Lua error: resume said so)
    end
    local mode = vim.api.nvim_get_mode()
    -- not over what you type, a question or a prompt
    if current and busy and not mode.blocking and mode.mode:find("^[nit]") then
      show(current, false)
    end
  end))
  local co = coroutine.create(function()
    local ok, msg = M.run(arg, function(what, step_progress)
      if step_progress then
        progress = step_progress -- said with the time, next second
      elseif util.builtin_notify() then
        -- Neovim's own: kept in :messages, each step in its own tick
        -- (two at once would stop at "Press ENTER", the install too)
        current, since, progress = what, nil, nil
        show(what, true)
        since = uv.now()
      else
        util.notify(what, vim.log.levels.INFO)
      end
    end)
    busy, current = false, nil
    stop()
    -- (with shorter forms, longest first: one line, no "Press ENTER", at
    -- any width; the what without its where, then the what alone)
    local short = msg:gsub(" from %S+", ""):gsub(" to /%S*", "")
    local head = vim.trim(short:match("^[^:;(]+") or short)
    local forms
    if ok and require("agentrun.rpc").running() then
      local later = "; the backend that runs now is the old one until it restarts (restart Neovim)"
      forms = { msg .. later, short .. "; restart Neovim to use it", head .. "; restart Neovim" }
    elseif ok then
      forms = { msg, short, head }
    else
      -- nothing was installed: say whether the binary there still works
      local have = uv.fs_stat(M.dest()) and version_of(M.dest())
      if have then
        forms = {
          string.format("%s; the binary you have (%s, version %s) is kept as it was and still works", msg, M.dest(), have),
          string.format("%s; your binary (version %s) is kept and still works", short, have),
          string.format("%s; your binary (version %s) is kept and still works", head, have),
          head .. "; your binary still works",
        }
      else
        forms = { string.format("%s; there is no working binary at %s yet", msg, M.dest()), head .. "; no working binary yet", head }
      end
    end
    util.notify(forms, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
  end)
  async[co] = true
  resume(co)
end

-- origin says how the installed binary got there, for :checkhealth: its
-- build-info and the installer's note. Returns a sentence, or nil.
function M.origin()
  local ok, out = system({ M.dest(), "build-info" })
  if not ok then
    return nil
  end
  local info = {}
  for k, v in out:gmatch("(%w+)=([^\n]*)") do
    info[k] = v
  end
  local f = io.open(M.source_file())
  local note = f and f:read("*l") or ""
  if f then
    f:close()
  end
  if info.origin == "release" then
    local url = note:match("^downloaded (%S+)")
    if url then
      return string.format("a release binary (%s), downloaded from %s and checked against its sha256", info.platform or "?", url)
    end
    return string.format("a release binary (%s, built with %s)", info.platform or "?", info.go or "?")
  end
  local how = ({ make = "make build", build = ":AgentBuild" })[info.origin] or info.origin or "go build"
  return string.format("built with %s (%s) for %s", info.go or "Go", how, info.platform or "?")
end

return M
